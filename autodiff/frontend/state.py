"""Writes into what the caller passed: ``params["running_mean"] = m`` on a dict,
``self.n_in = x.shape[1]`` on an object, ``log.append(v)`` on a list.

The user's Python runs as written: each write is a statement of the forward sweep
(``ops/state.py``), where the user wrote it, once per call, and writes the forward
value. No gradient flows back out of the call through the caller's container (as
PyTorch's running statistics: a value written out carries no gradient to what the
caller does with it later). What the same call reads back is an ordinary data
dependency: the frontend's :class:`~autodiff.frontend.structures.Record` (or tuple,
for a list) is rebound with the written value, so ``params["h"]`` after
``params["h"] = np.tanh(x)`` is that value, with its gradient.

The structure is the one the caller passed: every name holding it sees the write
(``p = params``), and so does the caller of a function the call inlines (a layer's
``self.cache = ...`` in its ``forward``), once that function returns.
"""

from __future__ import annotations

import ast

from autodiff.frontend.structures import CallerList, Record
from autodiff.graph.ir import Const, Graph, Node, Operand, Region, Value, operand_values, walk
from autodiff.graph.shapes import LIST
from autodiff.ops.state import APPEND_ITEM, STORE_ITEM, STORE_NEW_ITEM, store_field_op


def replaced(operand, old, new):
    """``operand`` with the structure ``old`` (a Record or a tuple, by identity) replaced
    by ``new`` wherever it holds it; ``operand`` itself when it holds none."""
    if operand is old:
        return new
    if isinstance(operand, tuple):
        items = tuple(replaced(item, old, new) for item in operand)
        if all(a is b for a, b in zip(items, operand)):
            return operand
        return CallerList(items, operand.whole) if isinstance(operand, CallerList) else items
    if isinstance(operand, Record):
        items = {key: replaced(item, old, new) for key, item in operand.items.items()}
        if all(items[key] is item for key, item in operand.items.items()):
            return operand
        return operand.changed(items)
    return operand


def _held_with(operands, whole: Value):
    """The Record or CallerList among ``operands`` (or inside them) that is ``whole``
    when the code runs; None if none is."""
    for operand in operands:
        if isinstance(operand, (Record, CallerList)) and operand.whole is whole:
            return operand
        inner = (operand.items.values() if isinstance(operand, Record) else
                 operand if isinstance(operand, tuple) else ())
        found = _held_with(inner, whole)
        if found is not None:
            return found
    return None


def _appended_to(after, before: Value) -> bool:
    """Whether the run-time list ``after`` is ``before`` with items appended."""
    while isinstance(after, Value) and after is not before and isinstance(
            after.node, Node) and after.node.op.name == "list_append":
        after = after.node.args[0]
    return after is before and after is not None


def _plain_read(node: ast.expr) -> bool:
    """Whether ``node`` reads a name's fields and items by constant keys alone."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def keys_read_as_passed(graph: Graph, records: dict) -> None:
    """Narrow the keys each write of a key known only when the code runs into the
    caller's dict (``store_new_item``) checks against to those the code may read as the
    call passed them: every key but those whose array leaf, read at the top (``records``:
    the dict's Record by its run-time value), nothing reads. A setting (a string, an
    int) is a constant of the code, and a key written by name is read back: both kept."""
    read = {v for node in walk(graph.nodes) for v in node.inputs()}
    read.update(v for node in walk(graph.nodes) if isinstance(node, Region)
                for block in node.blocks for v in operand_values(tuple(block.results)))
    read.update(operand_values(tuple(graph.outputs)))
    for node in walk(graph.nodes):
        if isinstance(node, Region) or node.op is not STORE_NEW_ITEM:
            continue
        record = records.get(node.args[0])
        if record is None:
            continue
        unread = {key for key, item in record.items.items() if isinstance(item, Value)
                  and item not in read and isinstance(item.node, Node) and item.node.op.name
                  == "item" and item.node.args[0] is node.args[0]}
        known = node.args[3].value
        node.args = (*node.args[:3], Const(tuple(k for k in known if k not in unread)))


class StateMixin:
    """Writes into the caller's dicts, objects and lists, for
    :class:`autodiff.frontend.convert.Converter`."""

    def rebind_everywhere(self, old, new) -> None:
        """Every name of this function holding ``old`` (or a structure holding it) now
        holds ``new``: the same dict, object or list, written into."""
        for name, value in list(self.env.items()):
            changed = replaced(value, old, new)
            if changed is not value:
                self.env[name] = changed

    def write_into_callers(self, target: ast.Subscript | ast.Attribute, current: Record,
                           key, value: Operand) -> None:
        """``name[key] = value`` on a dict, or ``name.key = value`` on an object, the
        caller passed (``current``, whose run-time value is ``current.whole``): written
        when the code runs, and read back from here on."""
        if isinstance(target, ast.Attribute):
            if current.kind != "fields":
                raise self.error(target, f"'{ast.unparse(target)} = ...' sets a field of a "
                                 f"{current.describe()}, which cannot be changed")
            self.emit(target, store_field_op(key), (current.whole, value))
        else:
            if current.kind != "dict":
                raise self.error(target, f"a {current.describe()} cannot be assigned to by key")
            self.emit(target, STORE_ITEM, (current.whole, Const(key), value))
        self.rebind_everywhere(current, current.changed({**current.items, key: value}))

    def write_key_into_callers(self, target: ast.Subscript, current: Record,
                               value: Operand) -> None:
        """``params[key] = value`` on the dict the caller passed. A key known while
        compiling is read back from here on; one known only when the code runs
        (``params[f"h{t}"] = h``) is written as the code runs, and checked then not to be
        a key the code reads as the call passed it (``params["W"]``), which would be
        stale. In a loop of run-time length, only such keys are written."""
        key = self.index(target.slice)
        if isinstance(key, Value) and key.shape is not LIST:
            # (every key for now: keys_read_as_passed keeps those the code reads)
            self.emit(target, STORE_NEW_ITEM, (current.whole, key, value,
                                                Const(tuple(current.items))))
            self.builder.new_keys_written[current.whole] = current
            return
        if current.whole in self.builder.callers_written_in_loops:
            raise self.error(target, f"the loop writes the key {ast.unparse(target.slice)} "
                             f"into the dict '{ast.unparse(target.value)}' the caller passed, "
                             "a number of times known only when the code runs",
                             hint="compute the value in a name of its own in the loop, and "
                             "write it after the loop, or write keys the loop computes "
                             "(params[f'h{t}'] = h)")
        self.write_into_callers(target, current, self.constant_key(target), value)

    def set_field(self, target: ast.Attribute, value: Operand) -> bool:
        """``self.n_in = value`` on an object the caller passed (or one it holds:
        ``self.layer.cache = value``); False when the target is no such object's."""
        base = self.expr(target.value)
        if not (isinstance(base, Record) and base.whole is not None):
            return False
        self.write_into_callers(target, base, target.attr, value)
        return True

    def append_to_callers_part(self, call: ast.AST) -> bool:
        """``obj.norms.append(v)`` or ``state["history"].append(v)``: an append to a list
        held by a dict or object the caller passed (read by names, fields and constant
        keys alone). False for any other statement."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append" and _plain_read(call.func.value)
                and not isinstance(call.func.value, ast.Name)):
            return False
        items = self.expr(call.func.value)
        if not isinstance(items, CallerList):
            root = call.func.value
            while not isinstance(root, ast.Name):
                root = root.value
            self.read_as_structure(call, self.env.get(root.id), "a structure")  # (an argument)
            return False
        if len(call.args) != 1 or call.keywords:
            raise self.error(call, "append() takes exactly one argument")
        self.append_to_callers(call, items, self.expr(call.args[0]))
        return True

    def append_to_callers(self, call: ast.Call, items: CallerList, item: Operand) -> None:
        """``log.append(item)`` on a list the caller passed, bound to ``items``."""
        self.emit(call, APPEND_ITEM, (items.whole, item))
        self.rebind_everywhere(items, CallerList((*items, item), items.whole))

    def callers_runtime_list(self, call: ast.Call, name: str, value: Value) -> Value | None:
        """The list the caller passed that the run-time list ``value`` holds the items of
        (``as_runtime_list`` made it for a loop appending to it), or None; a list that
        is the caller's on some paths only is refused."""
        roots, seen, todo = set(), set(), [value]
        while todo:
            item = todo.pop()
            if not isinstance(item, Value) or item in seen:
                continue
            seen.add(item)
            if item in self.builder.caller_runtime_lists:
                roots.add(self.builder.caller_runtime_lists[item])
                continue
            if item in self.builder.sources:
                todo.extend(self.builder.sources[item])
                continue
            node = item.node
            if isinstance(node, Node) and node.op.name in ("list_append", "list_setitem"):
                todo.append(node.args[0])
                continue
            roots.add(None)
        if roots == {None} or not roots:
            return None
        if len(roots) > 1:
            raise self.error(call, f"'{name}' is the list the caller passed on some paths "
                             "through the code and not on others: the append would reach the "
                             "caller's list on some of them", hint=f"append to a list of your "
                             f"own ({name} = list({name})), or to the caller's on every path")
        return next(iter(roots))

    def written_by(self, nodes: list) -> None:
        """After a derivative's graph is inlined (``nodes``): what it writes into the
        caller's structures is read back from here on, as what the code writes."""
        for node in nodes:
            if isinstance(node, Node) and node.op in (STORE_ITEM, APPEND_ITEM) or (
                    isinstance(node, Node) and node.op.name == "store_field"):
                whole = node.args[0]
                held = _held_with(self.env.values(), whole)
                if held is None:
                    continue
                if isinstance(held, CallerList):
                    new = CallerList((*held, node.args[1]), whole)
                else:
                    key = node.args[1].value if node.op is STORE_ITEM else node.op.field
                    new = held.changed({**held.items, key: node.args[-1]})
                self.rebind_everywhere(held, new)

    def returned_from(self, callee, params: dict, node: ast.AST) -> None:
        """After a call of the user's function is inlined: a dict, object or list the
        caller passed that the function wrote into is the written one here too."""
        for name, before in params.items():
            after = callee.env.get(name)
            if after is before:
                continue
            if isinstance(before, Record) and before.whole is not None and isinstance(
                    after, Record) and after.whole is before.whole:
                self.rebind_everywhere(before, after)
            elif isinstance(before, CallerList) and isinstance(after, CallerList) and (
                    after.whole is before.whole):
                self.rebind_everywhere(before, after)
            elif isinstance(before, Record) and before.whole is None:
                self.follow_changes(node, callee, name, before, after)
            elif isinstance(before, Value) and _appended_to(after, before):
                # the caller's list, at run time: what the function appended is in it
                self.rebind_everywhere(before, after)

    def follow_changes(self, node: ast.AST, callee, name: str, before: Record,
                       after) -> None:
        """A dict or object the code built, passed to an inlined function as ``name``
        (``before``; ``after``: what the name holds when it returns): what the function
        changed in it (``stats.update(h)``, ``d["k"] = v``), here too, as in Python."""
        latest = self.builder.versions.get(before.origin)
        if latest is None or latest is before:
            return
        if not (isinstance(after, Record) and after.origin is before.origin):
            raise self.error(node, f"'{name}' "
                             f"is changed in '{callee.function_name}' and then bound to "
                             "another value there: differentiated code does not follow the "
                             f"{before.describe()} the caller holds through that",
                             hint="return the changed object, or change it on every path "
                             "to the end of the function")
        self.rebind_everywhere(before, after)
        for key, item in before.items.items():  # an object it holds, changed through it
            inner = after.items.get(key)
            if isinstance(item, Record) and isinstance(inner, Record) and (
                    inner.origin is item.origin and inner is not item):
                self.rebind_everywhere(item, inner)


__all__ = ["StateMixin", "replaced"]
