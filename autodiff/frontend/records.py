"""Structures in the code being converted: ``params["W1"]``, ``layer.W``, a dict's
``.items()``, ``self.predict(x)``, ``{"loss": loss}``, dict comprehensions, and
the structure a function returns, all resolved while compiling (what a
structure is, and how an argument's leaves are bound, is :mod:`.structures`).
"""

from __future__ import annotations

import ast
import inspect
import types

from autodiff.errors import UnsupportedSyntaxError
from autodiff.frontend.objects import Constructed, GlobalObject, method_of, protocol_method
from autodiff.frontend.structures import (
    Record,
    needs_like,
    operand_leaves,
    spec_of_operand,
    structure_template,
)
from autodiff.graph.ir import Const, Operand, Value
from autodiff.graph.shapes import DICT, LIST
from autodiff.ops import structures as structure_ops
from autodiff.tree import StructureError


class StructuresMixin:
    """Reading, building and returning structures, for
    :class:`autodiff.frontend.convert.Converter`: every key is known while compiling."""

    def item_of(self, node: ast.AST, base: Record, key: Operand) -> Operand:
        """``params["W1"]``, ``point[0]`` of a namedtuple; ``model[0]`` of an object whose
        class defines ``__getitem__`` (compiled)."""
        getitem = protocol_method(base, "__getitem__")
        if getitem is not None:
            return self.call_function(node, getitem, (base, key), {})
        if not isinstance(key, Const) or key.path is not None:
            self.read_as_structure(node, key, "a key")  # a setting the call passes: name="sin"
            raise self.error(node, f"the key of '{ast.unparse(node)}' is known only when the "
                             f"code runs, but the keys of a {base.describe()} are fixed while "
                             "compiling", hint="index it with a constant key (params['W1']), or "
                             "loop over it: for name, value in params.items()")
        items = base.items
        if base.kind == "namedtuple" and isinstance(key.value, int):
            values = tuple(items.values())
            if -len(values) <= key.value < len(values):
                return values[key.value]
        elif base.kind == "dict":
            try:
                if key.value in items:
                    return items[key.value]
            except TypeError:
                pass
        known = ", ".join(repr(k) for k in items)
        raise self.error(node, f"'{ast.unparse(node)}': the {base.describe()} has no key "
                         f"{key.value!r} (its keys: {known})", kind=StructureError)

    def field_of(self, node: ast.Attribute, base: Record) -> Operand:
        """``layer.W`` of a namedtuple, a dataclass or an object; ``self.scale`` of a
        ``@property`` (its getter, compiled) or of a class attribute."""
        if base.kind != "dict" and node.attr in base.items:
            return base.items[node.attr]
        if base.kind != "dict":
            found = _class_attribute(base.type, node.attr)
            if isinstance(found, property) and found.fget is not None:
                return self.call_function(node, found.fget, (base,), {})
            method = method_of(base, node.attr)  # self.forward, not called here
            if method is not None:
                return method
            if found is not _ABSENT and _writable(found):  # a class constant: eps = 1e-8
                return Const(found)
        raise self.error(node, f"'{ast.unparse(node)}': the {base.describe()} has no "
                         f"field '{node.attr}' that autodiff can read", kind=StructureError,
                         hint=f"its fields: {', '.join(map(str, base.items))}" if (
                             base.kind != "dict") else "read a dict's items with d['key']")

    def record_method(self, node: ast.Call, base: Record, name: str, args: tuple,
                      kwargs: dict) -> Operand:
        """``d.items()``, ``d.keys()``, ``d.values()``, ``d.get(k, default)``,
        ``p._replace(W=...)``: results known while compiling."""
        items = base.items
        if base.kind == "dict" and not kwargs:
            if name == "items" and not args:
                return tuple((Const(k), v) for k, v in items.items())
            if name == "keys" and not args:
                return Const(tuple(items))
            if name == "values" and not args:
                return tuple(items.values())
            if name == "get" and 1 <= len(args) <= 2:
                key = args[0]
                if isinstance(key, Const) and key.path is None:
                    default = args[1] if len(args) == 2 else Const(None)
                    return items.get(key.value, default)
                return self.item_of(node, base, key)  # (words the error)
            if name == "copy" and not args:
                return Record(base.kind, base.type, dict(items))
        if base.kind == "fields":  # a method of a dataclass or an object: compiled
            found = _class_attribute(base.type, name)
            if isinstance(found, staticmethod):
                return self.call_function(node, found.__func__, args, kwargs)
            if isinstance(found, types.FunctionType):
                return self.call_function(node, found, (base, *args), kwargs)
        if base.kind == "namedtuple" and name == "_replace" and not args:
            unknown = set(kwargs) - set(items)
            if unknown:
                raise self.error(node, f"{base.type.__name__} has no field "
                                 f"{min(unknown)!r}", kind=StructureError)
            return Record(base.kind, base.type, {**items, **kwargs})
        raise self.error(node, f"'{ast.unparse(node.func)}()' on a {base.describe()} is not "
                         "supported in differentiated code", kind=UnsupportedSyntaxError,
                         hint="read items with d['key'], d.get('key', default), d.items(), "
                         "d.keys() or d.values()")

    def expr_Dict(self, node: ast.Dict) -> Record:
        """``{"loss": loss, **metrics}``: a dict known while compiling."""
        items: dict = {}
        for key_node, value_node in zip(node.keys, node.values):
            value = self.expr(value_node)
            if key_node is None:  # {**other}
                if not isinstance(value, Record) or value.kind != "dict":
                    raise self.error(value_node, f"'**{ast.unparse(value_node)}' unpacks "
                                     "something other than a dict known while compiling")
                items.update(value.items)
                continue
            key = self.expr(key_node)
            if not isinstance(key, Const) or key.path is not None:
                raise self.error(key_node, f"the key '{ast.unparse(key_node)}' is known only "
                                 "when the code runs, but a dict's keys are fixed while compiling",
                                 hint="use constant keys (strings, numbers, tuples of them)")
            try:
                hash(key.value)
            except TypeError:
                raise self.error(key_node, f"the key {key.value!r} cannot be a dict key") from None
            items[key.value] = value
        return Record("dict", dict, items)

    def expr_DictComp(self, node: ast.DictComp) -> Record:
        """``{name: value * 2 for name, value in params.items()}``: unrolled while
        compiling, over lists, tuples and dicts known then."""
        items: dict = {}
        saved = self.env
        self.env = dict(saved)

        def run(generators: list) -> None:
            if not generators:
                key = self.expr(node.key)
                if not isinstance(key, Const) or key.path is not None:
                    raise self.error(node.key, "the keys of a dict comprehension must be "
                                     "known while compiling", hint="use constant keys, or "
                                     "keys of a dict: {k: ... for k in params}")
                items[key.value] = self.expr(node.value)
                return
            generator = generators[0]
            iteration = self.iteration(generator.iter)
            if iteration[0] == "guarded":  # zip(keys, x): x's rows must cover the keys
                _, makers, length = iteration
                self.emit(generator.iter, "covers_unrolled", (
                    length, Const(len(makers)), Const(ast.unparse(generator.iter))))
                iteration = ("unroll", [make() for make in makers])
            bounds = iteration[1:4] if iteration[0] == "range" else ()
            if bounds and all(isinstance(b, Const) and type(b.value) is int for b in bounds):
                numbers = range(*(b.value for b in bounds))
                element = iteration[5]
                iteration = ("unroll", [element(Const(i)) for i in (
                    reversed(numbers) if iteration[4] else numbers)])
            if iteration[0] != "unroll":
                raise self.error(generator.iter, "a dict comprehension loops over lists, "
                                 "tuples and dicts known while compiling, and "
                                 f"'{ast.unparse(generator.iter)}' is known only when the "
                                 "code runs", hint="loop over the items of a dict or a list")
            for item in iteration[1]:
                self.assign(generator.target, item)
                tests = [self.expr(test) for test in generator.ifs]
                if not all(isinstance(t, Const) for t in tests):
                    raise self.error(node, "the conditions of a dict comprehension must be "
                                     "known while compiling")
                if all(t.value for t in tests):
                    run(generators[1:])

        try:
            run(list(node.generators))
        finally:
            self.env = saved
        return Record("dict", dict, items)

    def dict_call(self, node: ast.Call, args: tuple, kwargs: dict) -> Record:
        """``dict(a=1, **d)``, ``dict(other)``, ``dict(zip(keys, values))``."""
        items: dict = {}
        if len(args) > 1:
            raise self.error(node, "dict() takes at most one positional argument")
        if args:
            source = args[0]
            if isinstance(source, Record) and source.kind == "dict":
                items.update(source.items)
            else:
                self.read_as_structure(node, source, "a dict")
                for pair in self.static_items(node, source):
                    pair = self.static_items(node, pair)
                    if len(pair) != 2 or not isinstance(pair[0], Const):
                        raise self.error(node, "dict() of pairs needs (constant key, value) pairs")
                    items[pair[0].value] = pair[1]
        items.update(kwargs)
        return Record("dict", dict, items)

    def static_items(self, node: ast.AST, operand: Operand) -> tuple:
        """The items of a sequence known while compiling."""
        if isinstance(operand, Const) and isinstance(operand.value, (tuple, list)):
            return tuple(Const(v) for v in operand.value)
        if isinstance(operand, tuple):
            return operand
        if isinstance(operand, Record):
            if operand.kind == "fields":  # (its __iter__, if any, is not compiled)
                raise self.error(node, f"'{ast.unparse(node)}' iterates a "
                                 f"{operand.describe()}, which differentiated code does not "
                                 "iterate", hint="iterate the list it holds: for layer in "
                                 f"{ast.unparse(node)}.layers; or index it: "
                                 f"{ast.unparse(node)}[i] (its __getitem__ is compiled)")
            return self.record_items(operand)
        self.read_as_structure(node, operand, "a list")  # an argument: compiled per structure
        raise self.error(node, f"'{ast.unparse(node)}' needs a list, tuple or dict known "
                         "while compiling")

    @staticmethod
    def record_items(record: Record) -> tuple:
        """What iterating a record gives: a dict's keys, a namedtuple's values."""
        if record.kind == "dict":
            return tuple(Const(k) for k in record.items)
        if record.kind == "namedtuple":
            return tuple(record.items.values())
        raise TypeError(f"a {record.describe()} cannot be iterated")

    def set_item(self, target: ast.Subscript, value: Operand) -> bool:
        """``d["k"] = v`` on a dict the function built: the name now holds a new dict.
        Returns False when the target is not such a dict."""
        if not isinstance(target.value, ast.Name):  # state["bn"]["mean"] = m: the caller's
            base = self.expr(target.value)
            if not (isinstance(base, Record) and base.whole is not None and base.kind == "dict"):
                return False
            self.write_key_into_callers(target, base, value)
            return True
        name = target.value.id
        current = self.env.get(name)
        if isinstance(current, Value) and current.shape is DICT:  # its keys known at run time
            self.env[name] = self.emit(target, "dict_setitem",
                                       (current, self.index(target.slice), value), hint=name)
            return True
        if not isinstance(current, Record):
            key = self.index(target.slice)
            if isinstance(key, Const) and isinstance(key.value, str) and isinstance(
                    current, Value):  # state["h"] = v on an argument: a dict, per structure
                self.read_as_structure(target, current, "a dict")
            return False
        if current.caller and current.whole is not None and current.kind == "dict":
            self.write_key_into_callers(target, current, value)
            return True
        if current.caller:
            raise self.error(target, f"'{ast.unparse(target)} = ...' would change the "
                             f"{current.describe()} '{name}' the caller passed",
                             hint=f"build a new one: {name} = {{**{name}, 'key': value}} or "
                             f"{name} = dict({name}); then update that")
        if current.kind != "dict":
            raise self.error(target, f"a {current.describe()} cannot be assigned to by key")
        key = self.index(target.slice)
        if isinstance(key, Value) and key.shape not in (LIST, DICT):
            # grads[f"W{i}"] = g: a dict whose keys are known when the code runs
            self.refuse_shared(target, f"'{ast.unparse(target)} = ...'", name, current,
                               f"{name} = dict({name})")
            self.env[name] = self.as_runtime_dict(target, name, current)
            return self.set_item(target, value)
        key = self.constant_key(target)
        self.share_change(target, f"'{ast.unparse(target)} = ...'", name, current,
                          {**current.items, key: value}, f"{name} = dict({name})")
        return True

    def as_runtime_dict(self, node: ast.AST, name: str, record: Record) -> Value:
        """A dict the code built (``grads = {}``), from here on built when the code runs:
        its keys are known only then (``grads[f"W{i}"] = g``, in a loop of run-time
        length). Its items are values (arrays, numbers, lists), not structures."""
        result = self.emit(node, "dict_new", (), hint=name)
        for key, item in record.items.items():
            if not isinstance(item, (Value, Const)):
                raise self.error(node, f"the dict '{name}' gets keys known only when the code "
                                 "runs, and holds a structure: autodiff follows such a dict's "
                                 "items when they are arrays or numbers",
                                 hint="keep the structures in a dict of their own")
            result = self.emit(node, "dict_setitem", (result, Const(key), item), hint=name)
        return result

    def constant_key(self, target: ast.Subscript):
        """The key of ``d[key] = v``, which must be known while compiling: a dict's keys
        are."""
        key = self.index(target.slice)
        if not isinstance(key, Const) or key.path is not None:
            raise self.error(target, f"the key of '{ast.unparse(target)}' is known only when "
                             "the code runs, but a dict's keys are fixed while compiling",
                             hint="use a constant key")
        return key.value

    def share_change(self, node: ast.AST, what: str, name: str, current: Record,
                     items: dict, copy: str) -> None:
        """A change through ``name`` to a dict or object the code built (``current``,
        holding ``items`` from now on): every name holding it sees it, here and, when
        their calls return, in the functions whose calls are being inlined around this
        one (``state.follow_changes``), as in Python. Refused where a function this one
        is defined in holds it (the change would not reach it)."""
        callers = set(map(id, _calling_converters(self)))
        for converter, own in _visible_converters(self):
            if own or id(converter) in callers:
                continue
            for other, value in converter.env.items():
                if not other.startswith("<") and _holds(value, current):
                    raise self.error(node, f"{what} changes a {_kind(current)} also held "
                                     f"by '{other}' where this function is defined, which "
                                     "differentiated code does not follow", hint=f"copy it "
                                     f"first: {copy}; or return the new one from the "
                                     "function that builds it")
        new = current.changed(items)
        self.builder.versions[current.origin] = new
        self.rebind_everywhere(current, new)

    def refuse_shared(self, node: ast.AST, what: str, name: str, container,
                      copy: str) -> None:
        """A change through ``name`` to a dict or list the code built, which another name
        also holds (itself, or inside a structure), here or in a function whose call is
        being inlined (the caller of a function changing a dict it was passed): Python
        would show the change there too, which the graph, holding values, does not."""
        for converter, own in _visible_converters(self):
            for other, value in converter.env.items():
                if own and other == name or other.startswith("<"):
                    continue
                if _holds(value, container):
                    where = "" if own else " where this function is called"
                    raise self.error(node, f"{what} changes a {_kind(container)} also held "
                                     f"by '{other}'{where}, which differentiated code does "
                                     "not follow", hint=f"copy it first: {copy}; or return "
                                     "the new one from the function that builds it")

    def dict_update(self, call: ast.expr) -> bool:
        """``d.update(other)``, ``d.update(k=v, **more)`` as a statement, on a dict the
        function built: the name now holds a new dict, as ``d["k"] = v`` makes one. Returns
        False when the call is no such update."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "update" and isinstance(call.func.value, ast.Name)):
            return False
        name = call.func.value.id
        current = self.env.get(name)
        if not isinstance(current, Record) or current.kind != "dict":
            return False
        text = f"'{ast.unparse(call)}'"
        if current.caller and current.whole is None:
            raise self.error(call, f"{text} would change the dict '{name}' the caller passed",
                             hint=f"build a new one: {name} = {{**{name}, 'key': value}} or "
                             f"{name} = dict({name}); then update that")
        args, kwargs = self.call_arguments(call)
        if len(args) > 1:
            raise self.error(call, f"update expected at most 1 argument, got {len(args)}")
        items = dict(current.items)
        for source in args:
            if isinstance(source, Record) and source.kind == "dict":
                items.update(source.items)
                continue
            for pair in self.static_items(call.args[0], source):
                pair = self.static_items(call.args[0], pair)
                if len(pair) != 2 or not isinstance(pair[0], Const) or pair[0].path is not None:
                    raise self.error(call, f"{text} needs a dict, or (key, value) pairs with "
                                     "keys known while compiling")
                items[pair[0].value] = pair[1]
        items.update(kwargs)
        if current.caller:  # the caller's dict: each key written when the code runs
            for key, value in items.items():
                if key not in current.items or current.items[key] is not value:
                    self.write_into_callers(call, self.env[name], key, value)
            return True
        self.share_change(call, text, name, current, items, f"{name} = dict({name})")
        return True

    def set_list_item(self, target: ast.Subscript, value: Operand | None, op=None) -> bool:
        """``parts[0] = v`` (or ``parts[0] += v``, given the operator) on a list written out
        in the code (``parts = [a, b]``), whose items are known while compiling: the name
        now holds a new list. Returns False when the target is no such list."""
        if not self.is_built_list(target):
            return False
        name = target.value.id
        current = self.env[name]
        items = list(self.static_items(target, current))
        index = self.index(target.slice)
        if isinstance(index, Value) and index.shape is not LIST and not index.floating:
            # an index known when the code runs (hs[t] = ..., t a loop's): a list built then
            self.refuse_shared(target, f"'{ast.unparse(target)} = ...'", name, current,
                               f"{name} = list({name})")
            self.env[name] = self.as_runtime_list(target, current)
            if op is not None:
                self.refuse_augmented_item(target, op)
            return self.set_runtime_item(target, value)
        if not (isinstance(index, Const) and index.path is None and type(index.value) is int):
            raise self.error(target, f"'{ast.unparse(target)} = ...' sets an item of the list "
                             f"'{name}' by an index other than an integer known while "
                             "compiling", hint=f"use a constant index, or make '{name}' an "
                             f"array (np.array({name})) and update its elements")
        if not -len(items) <= index.value < len(items):
            raise self.error(target, f"list assignment index {index.value} out of range for "
                             f"the list '{name}' of {len(items)} items")
        self.refuse_shared(target, f"'{ast.unparse(target)} = ...'", name, current,
                           f"{name} = list({name})")
        if op is not None:
            value = self.binary(target, op, items[index.value], value)
        items[index.value] = value
        self.env[name] = self.built_list(tuple(items))
        return True

    def is_built_list(self, target: ast.Subscript) -> bool:
        """Whether ``target`` is an item of a list written out in the code."""
        if not isinstance(target.value, ast.Name):
            return False
        current = self.env.get(target.value.id)
        return isinstance(current, (tuple, Const)) and self.built_lists.get(id(current)) is current

    def built_list(self, items: tuple | Const) -> Operand:
        """A list the code builds with items known while compiling (``[a, b]``): its
        items may be set later (``parts[0] = v``)."""
        if isinstance(items, tuple) and all(isinstance(i, Const) and i.path is None
                                            for i in items):
            items = Const(tuple(i.value for i in items))
        self.built_lists[id(items)] = items
        return items

    def refuse_setting_a_field(self, target: ast.Attribute) -> None:
        """``self.W = ...`` or ``self.W += ...`` on an object or a dataclass the caller
        passed: the derivative never changes its arguments."""
        base = self.expr(target.value)
        self.read_as_structure(target, base, "an object")
        if isinstance(base, Record):
            whole = ast.unparse(target.value)
            raise self.error(target, f"'{ast.unparse(target)} = ...' would change the "
                             f"{base.describe()} '{whole}' the caller passed",
                             hint=f"compute the new value in a name of its own "
                             f"({target.attr} = ...) and return it, or update "
                             f"'{whole}' outside the differentiated function")

    def built_structure(self, node: ast.AST, operand: Operand,
                        use: str = "returning") -> Operand:
        """A structure the function returns (or, with ``use``, passes whole to a function
        with a rule of its own), as one value built by generated code."""
        if isinstance(operand, tuple):
            return tuple(self.built_structure(node, item, use) for item in operand)
        if not isinstance(operand, Record):
            return operand
        if isinstance(operand, GlobalObject):  # a global model: the object itself
            return operand.whole
        if isinstance(operand, Constructed):  # made again by its call, when the code runs
            return self.call_as_it_is(*operand.made_by)
        if operand.kind == "fields" or operand.caller and operand.kind != "dict":
            raise self.error(node, f"{use} the {operand.describe()} the caller passed "
                             "is not supported", hint="pass the arrays it holds, or a dict")
        parts = {k: self.built_structure(node, v, use) for k, v in operand.items.items()}
        spec = spec_of_operand(Record(operand.kind, operand.type, parts))
        leaves_ = operand_leaves(Record(operand.kind, operand.type, parts))
        names = iter(f"a{i}" for i in range(len(leaves_)))
        template = structure_template(spec, "", names, with_like=False)
        if needs_like(spec):
            raise self.error(node, f"{use} a {operand.describe()} built in the function "
                             "is not supported", hint="use a dict, a list or a tuple")
        return self.builder.emit(structure_ops.structure(template, len(leaves_), False, spec),
                                 tuple(leaves_), "")


def _class_attribute(kind: type, name: str):
    """What ``name`` is on the class ``kind`` (a function, a property, a constant), read
    without running any code of the class; ``_ABSENT`` when it has none."""
    return inspect.getattr_static(kind, name, _ABSENT)


_ABSENT = object()


def _writable(value) -> bool:
    """Whether a class attribute is a constant generated code can write (``eps = 1e-8``)."""
    if isinstance(value, tuple):
        return all(_writable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str))


__all__ = ["StructuresMixin"]


def _calling_converters(converter):
    """The converters of the functions whose calls are being inlined around
    ``converter``, innermost first."""
    other = converter.calling
    while other is not None:
        yield other
        other = other.calling


def _visible_converters(converter):
    """``(converter, True)``, then the converters of the functions whose calls are being
    inlined around it and of the functions it is defined in, each ``(c, False)``."""
    yield converter, True
    seen, todo = {id(converter)}, [converter.calling, converter.enclosing]
    while todo:
        other = todo.pop()
        if other is None or id(other) in seen:
            continue
        seen.add(id(other))
        yield other, False
        todo.extend((other.calling, other.enclosing))


def _holds(value, container) -> bool:
    if value is container:
        return True
    if isinstance(value, tuple):
        return any(_holds(item, container) for item in value)
    if isinstance(value, Record):
        return any(_holds(item, container) for item in value.items.values())
    return False


def _kind(container) -> str:
    return container.describe() if isinstance(container, Record) else "list"
