"""Updates in place: ``out[i] = v`` on arrays the function made, ``acc.append(v)``.

Both become new values in the graph (``setitem``, ``list_append``); codegen
writes them back in place when nothing else reads the old value. They are
only allowed where NumPy's in-place semantics cannot surprise: the array must
be the function's own (not an argument, not a view), and no other name may
refer to it. An argument of the differentiated function that the code updates
is copied at the top (``x = np.copy(x)``), so it is the function's own: the
derivative never changes the caller's array.
"""

from __future__ import annotations

import ast

import numpy as np

from autodiff.errors import UnsupportedSyntaxError
from autodiff.frontend.scan import readable_name
from autodiff.frontend.structures import CallerList
from autodiff.graph.ir import (
    UNDEFINED,
    Const,
    Node,
    Operand,
    Region,
    SliceSpec,
    Value,
    operand_values,
)
from autodiff.graph.shapes import LIST, SCALAR
from autodiff.ops.shape import getitem as getitem_op
from autodiff.ops.shape import transpose as transpose_op
from autodiff.ops.state import APPEND_ITEM

_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
              ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%"}
_OWN_HINT = ("update an array the function created (out = np.zeros(n) or x.copy()), "
             "or build a new array")


def list_items(operand: Operand) -> tuple | None:
    """The items of a list written out (``[a, b]``, or a constant one); None otherwise."""
    if isinstance(operand, tuple):
        return operand
    if isinstance(operand, Const) and isinstance(operand.value, (tuple, list)):
        return tuple(Const(item) for item in operand.value)
    return None


def makes_new_array(node: Node) -> bool:
    """Whether ``node``'s result is an array no other value shares: the result of an op
    that makes one, or of indexing by a list of ints (``x[[0, 2]]`` is a copy; ``x[0]``
    and ``x[1:]`` are views)."""
    if node.op.fresh:
        return True
    if node.op is not getitem_op:
        return False
    index = node.args[1]
    return any(isinstance(part, Value) and isinstance(part.node, Node)
               and part.node.op.ndarray
               for part in (index if isinstance(index, tuple) else (index,)))


def updated_names(body: list[ast.stmt]) -> dict[str, ast.Subscript]:
    """The names whose elements ``body`` updates in place (``x[0] = v``, ``x[i] += v``),
    each with its first such target, in the order of the source (the bodies of
    functions defined inside are their own)."""
    found: dict[str, ast.Subscript] = {}
    todo = list(body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        targets = (list(node.targets) if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AugAssign) else [])
        while targets:
            target = targets.pop(0)
            if isinstance(target, (ast.Tuple, ast.List)):
                targets[:0] = list(target.elts)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                found.setdefault(target.value.id, target)
        todo[:0] = list(ast.iter_child_nodes(node))
    return found


def _stale_view_words(name: str, array: str, line: int) -> tuple[str, str]:
    """The message and hint refusing a view of an array updated since it was made."""
    message = (f"'{name}' may be a view of '{array}', which line {line} updates in place: "
               f"NumPy would show the update through '{name}', which differentiated code "
               "does not follow")
    hint = f"copy it before the update ({name} = {name}.copy()), or read '{array}' itself after it"
    return message, hint


def _basic(index) -> bool:
    """Whether ``index`` is a basic index, whose result is a view: slices, constant
    integers, ``None`` and ``...``, and integers the code computes (a loop's index and
    arithmetic on it: a scalar no comparison made, which could be a boolean mask)."""
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, SliceSpec) or isinstance(part, Const) and (
                part.value is None or part.value is Ellipsis or type(part.value) is int):
            continue
        if not (isinstance(part, Value) and part.shape is SCALAR and _integer(part)):
            return False
    return True


def _integer(value: Value) -> bool:
    """Whether the scalar ``value`` is a loop's index, or integer arithmetic on one."""
    node = value.node
    if node is None:
        return True  # a block's parameter: a for loop's index
    if isinstance(node, Region) or node.op.name not in _INTEGER_OPS:
        return False
    return all(isinstance(a, Const) and type(a.value) is int or isinstance(a, Value)
               and a.shape is SCALAR and _integer(a) for a in node.args)


_INTEGER_OPS = frozenset({"add", "subtract", "multiply", "floor_divide", "remainder",
                          "negative"})


class UpdatesMixin:
    """Element updates and list appends for :class:`autodiff.frontend.convert.Converter`."""

    # The names the loop whose body is converted now carries (None outside loops).
    loop_carried: frozenset[str] | None = None

    def copy_updated_arguments(self, body: list[ast.stmt]) -> None:
        """An argument whose elements the differentiated function updates
        (``x[0] = a * b``) is copied at the top: the code computes on its own copy,
        as if it had written ``x = x.copy()``, and the derivative never changes the
        caller's array. (A function it calls gets no copy: the update would have to
        reach its caller's array, which differentiated code does not do.)"""
        for name, target in updated_names(body).items():
            value = self.env.get(name)
            if isinstance(value, Value) and value in self.arguments and value.shape is not LIST:
                self.at(target)  # generated code names the line of the first update
                self.env[name] = self.emit(target, "copy", (value,), hint=name)

    def assign_element(self, target: ast.Subscript, value: Operand) -> None:
        """``out[i] = value`` on an array the function created."""
        if self.set_runtime_item(target, value):
            return
        name, current = self.updatable(target, "element update")
        index = self.index(target.slice)
        self.env[name] = self.emit(target, "setitem", (current, index, value), hint=name)
        self.written_through(target, name, current)

    def update_element(self, stmt: ast.AugAssign) -> None:
        """``out[i] += value``: read, combine, write back."""
        target = stmt.target
        if self.is_runtime_list_item(target):
            self.refuse_augmented_item(target, stmt.op)
        name, current = self.updatable(target, "element update")
        index = self.index(target.slice)
        old = self.emit(target, "getitem", (current, index))
        new = self.binary(stmt, stmt.op, old, self.expr(stmt.value))
        self.env[name] = self.emit(target, "setitem", (current, index, new), hint=name)
        self.written_through(target, name, current)

    def unbuffered_add(self, call: ast.Call, subtract: bool) -> None:
        """``np.add.at(out, index, value)`` (``np.subtract.at``): ``value`` added at
        ``index`` of an array the function created, every occurrence of a repeated
        index counted (unlike ``out[index] += value``)."""
        name = "np.subtract.at" if subtract else "np.add.at"
        if call.keywords or len(call.args) != 3 or any(
                isinstance(arg, ast.Starred) for arg in call.args):
            raise self.error(call, f"{name} is differentiated in its form {name}(a, indices, b)",
                             hint="pass the array, the indices and the values, in this order")
        target = ast.copy_location(ast.Subscript(value=call.args[0], slice=call.args[1],
                                                 ctx=ast.Store()), call)
        name, current = self.updatable(target, f"{name}")
        index = self.index(call.args[1])
        value = self.expr(call.args[2])
        if subtract:
            value = self.emit(call, "negative", (value,))
        self.env[name] = self.emit(call, "index_add", (current, index, value), hint=name)
        self.written_through(target, name, current)

    # ----- views of an updated array -----
    # The graph holds values: a view taken before an update (v = out[:2]) keeps the old
    # elements there, where NumPy shows the update through it. So a name that may hold
    # such a view is stale after the update: reading it is refused (at the read, so
    # that prev = out[i - 1]; out[i] = 2 * prev stays allowed). In a loop, a view a
    # later trip may read (made before the loop, or carried by it) is refused at once.

    def mark_stale_views(self, target: ast.Subscript, name: str, current: Value,
                         rebound: frozenset = frozenset()) -> None:
        family = self.same_array(current)
        for other, value in list(self.env.items()):
            if other == name or other in rebound or other.startswith("<") or not isinstance(
                    value, Value) or (value in family or not self.may_view(value, family)):
                continue
            if self.loop_fresh_names is not None and other not in self.loop_fresh_names:
                raise self.error(target, *_stale_view_words(other, name, target.lineno))
            self.stale_views[value] = (other, name, target.lineno)

    def may_view(self, value: Value, family: set) -> bool:
        """Whether ``value`` may be a view of an array of ``family``: made from one by
        ops whose results are not new arrays (indexing, reshaping, ...)."""
        seen, todo = set(), [value]
        while todo:
            item = todo.pop()
            if not isinstance(item, Value) or item in seen:
                continue
            seen.add(item)
            if item in family:
                return True
            if item in self.builder.sources:
                todo.extend(self.builder.sources[item])
                continue
            node = item.node
            if isinstance(node, Node) and not makes_new_array(node):
                todo.extend(operand_values(node.args))
        return False

    def refuse_stale_view(self, node: ast.Name, value: Operand) -> None:
        """Reading a name that may be a view of an array updated since it was made."""
        if not self.stale_views or not isinstance(value, Value):
            return
        seen, todo = set(), [value]
        while todo:
            item = todo.pop()
            if not isinstance(item, Value) or item in seen:
                continue
            seen.add(item)
            if item in self.stale_views:
                _, array, line = self.stale_views[item]
                raise self.error(node, *_stale_view_words(node.id, array, line))
            todo.extend(self.builder.sources.get(item, ()))

    def updatable(self, target: ast.Subscript, what: str) -> tuple[str, Value]:
        if not isinstance(target.value, ast.Name):
            raise self.error(target, f"{what} of '{ast.unparse(target.value)}' is not supported",
                             hint="update a named array: out[i, j] = ... rather than out[i][j]")
        name = target.value.id
        current = self.env.get(name)
        if not isinstance(current, Value):
            raise self.error(target, f"in-place update of '{name}', which is not an array "
                             "created in this function", hint=_OWN_HINT)
        if current.shape is LIST or not self.builder.repeated_lists.isdisjoint(
                self.same_array(current)):
            raise self.error(target, f"assigning to an element of the list '{name}' is not "
                             "supported", hint="build the list with append (a loop of run-time "
                             "length may append to it, and return it beside the output), or "
                             "use an array")
        if not self.owns(current) and not self.view_of_own(target, name, current):
            raise self.error(target, f"in-place update of '{name}', which is an argument or "
                             "may share memory with one: the caller's array would change",
                             hint=_OWN_HINT, kind=UnsupportedSyntaxError)
        self.check_not_iterated(target, name)
        self.check_unshared(target, name, current)
        return name, current

    # ----- updates through a view of an array the function owns -----
    # v = x.copy(); s = v[1:]; s[0] *= 3 changes v. The graph holds values: the update
    # makes a new s, and each array the view was taken from gets the new s written back
    # where the view reads it (v = setitem(v, 1:, s), v.T's array = s.T), its names
    # rebound, down to the array the function owns. Views made by basic indexing and
    # transposes are followed; any other (a reshape may be a copy) is refused.

    def view_path(self, value: Value) -> tuple[list[Node], str | None]:
        """The nodes that make ``value`` a view of an array the function owns, from
        ``value`` down (empty when it is no view), and, when it is a view the update
        cannot follow, the op that made it (else None)."""
        path, item = [], value
        while isinstance(item, Value) and item not in self.arguments:
            if item in self.builder.sources:  # a loop carries it, or paths merged it
                return (path, None) if path and self.owns(item) else ([], None)
            node = item.node
            if node is None or isinstance(node, Region):
                break
            if makes_new_array(node):
                return (path, None) if self.owns(item) else ([], None)
            if node.op is getitem_op and not _basic(node.args[1]):
                return [], ("indexing by a value known only when the code runs (a mask "
                            "or an array of indices gives a copy, an integer a view)")
            if node.op not in (getitem_op, transpose_op):
                return [], node.op.name
            path.append(node)
            item = node.args[0]
        return [], None

    def view_of_own(self, target: ast.AST, name: str, current: Value) -> bool:
        """Whether ``current`` is a view, followed by :meth:`written_through`, of an array
        the function owns; a view made by an op that may copy is refused."""
        path, refused = self.view_path(current)
        if refused is not None:
            raise self.error(target, f"in-place update of '{name}', a view made by {refused}: "
                             "autodiff follows updates through views made by indexing and "
                             "transposes (v[1:], v[:, 0], v.T) only, as NumPy may copy here",
                             hint=f"index the array itself, or copy the view ({name} = "
                             f"{name}.copy()) if the array must not change")
        return bool(path)

    def written_through(self, target: ast.AST, name: str, current: Value) -> None:
        """After ``name``, which held ``current``, was updated: when ``current`` is a view
        of an array the function owns, that array gets the update (written back through
        each view it was taken from), each name holding it is rebound, and each name
        holding a view of it (``name`` too) is rebound to the view taken again from the
        updated array, so that it stays a view a later update writes through. Views that
        cannot be taken again are stale."""
        path, _ = self.view_path(current)
        if not path:
            self.mark_stale_views(target, name, current)
            return
        root = path[-1].args[0]
        held = [n for n, v in self.env.items() if v is root and not n.startswith("<")]
        if not held:  # (updated or rebound since the view was taken, or never named)
            raise self.error(target, f"in-place update of '{name}', a view of an array no "
                             "name holds now (it was updated or rebound since the view was "
                             "taken): NumPy would change that array, which differentiated "
                             "code does not follow", hint=f"take the view again after the "
                             f"array's last update, or copy it ({name} = {name}.copy())")
        if self.loop_carried is not None and any(n not in self.loop_carried for n in held):
            # a name the update rebinds must be carried by the loop, or the next trip
            # (and the code after the loop) would read its old value
            outside = next(n for n in held if n not in self.loop_carried)
            raise self.error(target, f"in-place update of '{name}', a view of '{outside}', "
                             f"inside a loop that does not assign '{outside}': the update "
                             "would not reach the next trip", hint=f"update '{outside}' itself "
                             f"at that index, or assign '{outside}' in the loop")
        new = self.env[name]
        for node in path:  # from the view down to the array the function owns
            if node.op is getitem_op:
                new = self.emit(target, "setitem", (node.args[0], node.args[1], new))
            else:
                axes = node.args[1]
                inverse = Const(None) if axes == Const(None) else Const(
                    tuple(int(i) for i in np.argsort(axes.value)))
                new = self.emit(target, "transpose", (new, inverse))
        root_name = held[0] if held else name
        if isinstance(new, Value) and not new.hint:
            new.hint = root_name
        rebound = set(held)
        for other in held:
            self.env[other] = new
        views = {name: path}
        for other, value in self.env.items():
            if other not in rebound and other != name and not other.startswith("<") and (
                    isinstance(value, Value)):
                again, _ = self.view_path(value)
                if again and again[-1].args[0] is root:
                    views[other] = again
        for other, again in views.items():
            if self.loop_carried is not None and other not in self.loop_carried:
                continue  # (stale: a later trip could not see it taken again)
            view = new
            for node in reversed(again):
                view = self.emit(target, node.op, (view, *node.args[1:]), hint=other)
            self.env[other] = view
            rebound.add(other)
        self.mark_stale_views(target, root_name, root, frozenset(rebound))

    def augmented_view(self, stmt: ast.AugAssign) -> bool:
        """``s += v`` where ``s`` is a view of an array the function owns: NumPy adds in
        place, through the view, as ``s[...] += v``. False when ``s`` is no such view."""
        name = stmt.target.id
        current = self.env.get(name)
        if not isinstance(current, Value) or current.shape is LIST:
            return False
        path, _ = self.view_path(current)
        if not path:
            return False
        index = path[0].args[1] if path[0].op is getitem_op else SliceSpec(
            Const(None), Const(None), Const(None))
        parts = index if isinstance(index, tuple) else (index,)
        if not any(isinstance(p, SliceSpec) or p == Const(Ellipsis) or p == Const(None)
                   for p in parts):
            raise self.error(stmt, f"'{ast.unparse(stmt)}' on '{name}', read from an array by "
                             "integers alone: a row (a view, updated in place) or an element "
                             "(a number, rebound) by the array's number of dimensions",
                             hint="update the array itself at that index, or write "
                             f"{name}[...] {_OPERATORS.get(type(stmt.op), '?')}= ... for a row")
        target = ast.copy_location(ast.Subscript(ast.copy_location(
            ast.Name(name, ast.Load()), stmt), ast.copy_location(ast.Constant(Ellipsis), stmt),
            ast.Store()), stmt)
        self.update_element(ast.copy_location(ast.AugAssign(target, stmt.op, stmt.value), stmt))
        return True

    def check_not_iterated(self, node: ast.AST, name: str) -> None:
        """A ``for`` loop over an array reads its rows as it goes: updating the array in
        place would change the rows later trips read."""
        if name in self.iterated:
            raise self.error(node, f"in-place update of '{name}', which an enclosing 'for' "
                             "loop runs over: NumPy would change the rows the loop reads next, "
                             "which differentiated code does not support",
                             hint=f"loop over a copy ({name}.copy()), or write "
                             f"'{name} = {name} + ...' to make a new array")

    def check_unshared(self, node: ast.AST, name: str, current: Value) -> None:
        family = self.same_array(current)
        others = [n for n, v in self.env.items() if v in family and n != name
                  and not n.startswith("<")]
        if others:
            for value in family:  # an argument, copied at the top, may be a dict: compiled
                node_of = value.node  # per structure
                if isinstance(node_of, Node) and node_of.op.name == "copy":
                    self.read_as_structure(node, node_of.args[0], "a dict")
            raise self.error(node, f"in-place update of '{name}', which is also named "
                             f"'{others[0]}': NumPy would change both, which differentiated "
                             "code does not support",
                             hint=f"make a copy first: {others[0]} = {name}.copy()")

    def same_array(self, value: Value) -> set:
        """Values that are the same array as ``value`` at run time (before updates)."""
        family, todo = set(), [value]
        while todo:
            item = todo.pop()
            if not isinstance(item, Value) or item in family:
                continue
            family.add(item)
            todo.extend(self.builder.sources.get(item, ()))
            node = item.node
            if node is not None and not isinstance(node, Region) and node.op.updates:
                todo.append(node.named_args[node.op.updates])
        return family

    def owns(self, value: Value) -> bool:
        """Whether ``value`` is an array this function created and may update in place."""
        seen, todo = set(), [value]
        while todo:
            item = todo.pop()
            if item is UNDEFINED or isinstance(item, Const):
                continue
            if not isinstance(item, Value) or item in seen:
                continue
            seen.add(item)
            if item in self.arguments:
                return False
            if item in self.builder.sources:
                todo.extend(self.builder.sources[item])
                continue
            node = item.node
            if node is None or isinstance(node, Region) or not makes_new_array(node):
                return False
        return True

    def append_to_list(self, call: ast.Call, name: str) -> None:
        """``acc.append(v)``: a new list value with ``v`` at its end."""
        if len(call.args) != 1 or call.keywords:
            raise self.error(call, "append() takes exactly one argument")
        current = self.env.get(name)
        if isinstance(current, CallerList):  # the caller's list: appended to as the code runs
            self.append_to_callers(call, current, self.expr(call.args[0]))
            return
        self.read_as_structure(call, current, "a list")  # an argument: compiled per structure
        runtime_callers = isinstance(current, Value) and current.shape is LIST and (
            self.callers_runtime_list(call, name, current) is not None)
        if not runtime_callers and (self.env.get(name) in self.arguments
                                    or id(self.env.get(name)) in self.caller_sequences):
            raise self.error(call, f"in-place update of '{name}', an argument: append() would "
                             "change the caller's list",
                             hint=f"append to a list of your own: {name} = list({name})")
        current = self.as_runtime_list(call, self.env.get(name, UNDEFINED))
        self.env[name] = current
        self.check_unshared(call, name, current)
        item = self.expr(call.args[0])
        callers = self.callers_runtime_list(call, name, current) if isinstance(
            current, Value) else None
        if callers is not None:  # the caller's list, appended to in a loop
            self.emit(call, APPEND_ITEM, (callers, item))
        self.env[name] = self.emit(call, "list_append", (current, item), hint=readable_name(name))

    def is_runtime_list_item(self, target: ast.Subscript) -> bool:
        """Whether ``target`` is an item of a list built when the code runs (``[None] *
        T``, ``[h0] + [None] * T``, appended to)."""
        current = self.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
        return isinstance(current, Value) and current.shape is LIST

    def refuse_augmented_item(self, target: ast.Subscript, op: ast.operator) -> None:
        """``hs[t] += v`` on a list built when the code runs: NumPy updates the array at
        ``hs[t]`` in place, which other items (``[x] * T``) or names may hold."""
        raise self.error(target, "augmented assignment to an item of the list "
                         f"'{ast.unparse(target.value)}', built when the code runs: NumPy "
                         "would change the array there in place, which other items or names "
                         "may hold too", hint=f"write '{ast.unparse(target)} = "
                         f"{ast.unparse(ast.BinOp(target, op, ast.Name('...')))}' to make a "
                         "new array")

    def set_runtime_item(self, target: ast.Subscript, value: Operand) -> bool:
        """``caches[t] = v`` on a list built when the code runs: the name now holds a new
        list, ``v`` at ``t``. False when ``target`` is no item of such a list."""
        if not self.is_runtime_list_item(target):
            return False
        name = target.value.id
        current = self.env[name]
        index = self.index(target.slice)
        if not (isinstance(index, Const) and type(index.value) is int or isinstance(
                index, Value) and index.shape is not LIST and not index.floating):
            raise self.error(target, f"'{ast.unparse(target)} = ...' sets the items of the "
                             f"list '{name}' by a slice or an index that is not an integer",
                             hint=f"set one item at a time: {name}[i] = v")
        if self.callers_runtime_list(target, name, current) is not None:
            raise self.error(target, f"'{ast.unparse(target)} = ...' would change an item "
                             f"of the list '{name}' the caller passed",
                             hint="fill a list of your own (filled = [None] * n) and "
                             "return it")
        self.check_not_iterated(target, name)
        self.check_unshared(target, name, current)
        self.env[name] = self.emit(target, "list_setitem", (current, index, value),
                                   hint=readable_name(name))
        return True

    def as_runtime_list(self, node: ast.AST, value: Operand) -> Operand:
        """A list built at run time from a list display (``acc = []``) or an existing list."""
        if isinstance(value, Value) and value.shape is LIST:
            return value
        items = list_items(value)
        if items is not None:
            result = self.emit(node, "list_new", ())
            for item in items:
                result = self.emit(node, "list_append", (result, item))
            if isinstance(value, CallerList):  # a loop appends to the caller's list
                self.builder.caller_runtime_lists[result] = value.whole
            return result
        if value is UNDEFINED:
            return value
        self.read_as_structure(node, value, "a list")  # an argument: compiled per structure
        raise self.error(node, "append() is supported on lists the function builds")
