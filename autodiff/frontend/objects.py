"""Objects in differentiated code: PyTorch-style models and the callables Python
builds, all resolved while compiling.

- An object of the user's class read from a global or a closure variable (a module-level
  model) is a structure, as the same object passed as an argument is
  (:class:`GlobalObject`): its arrays are read when the derivative runs (``lin_W =
  lin.W``: the arrays it holds at each call, after an optimiser's step too), its
  settings (strings, ints, functions, the classes of its parts) while compiling, and
  checked at each call (``settings_unchanged``). Passed whole or returned, it is the
  object itself. An object that behaves as a value (``_VALUE_PROTOCOL``) is read as
  one.
- Calling an object of the user's class (``model(x)``, ``layer(x)`` in a loop over a
  list of layers, a loss object) inlines its class's ``__call__`` with ``self`` bound
  to the object; ``len(model)``, ``model[i]`` and ``if model:`` its ``__len__``,
  ``__getitem__`` and ``__bool__``.
- Constructing one (``Helper(2.0)``) inlines its ``__init__`` on a new structure, whose
  fields ``self.s = s`` sets; a dataclass's fields are bound as its ``__init__`` binds
  them (:class:`Constructed`: passed whole or returned, made by its call when the
  derivative runs).
- ``self.forward`` read without a call and ``functools.partial(f, a)`` are a
  :class:`Bound`: a callable known while compiling with its first arguments given,
  called as ``f(a, ...)`` would be.
- ``getattr(obj, name)`` and ``hasattr(obj, name)`` with a name known while compiling
  read the attribute as ``obj.name`` does.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import inspect
import types

from autodiff.errors import ArgumentKindError, UnsupportedSyntaxError
from autodiff.frontend.builder import literal
from autodiff.frontend.structures import Binder, Record, argument_spec
from autodiff.graph.ir import Const, Operand, Value
from autodiff.graph.scopes import Scope
from autodiff.ops import registry
from autodiff.ops.runtime import settings_digest
from autodiff.user_code import is_user_class


class Bound:
    """``callee`` with its first arguments ``args`` and keywords ``kwargs`` given: a
    method read from an object (``self.forward``: the class's function, the object
    first) or a ``functools.partial`` made in the code. Calling it calls ``callee``
    with these before the call's own."""

    __slots__ = ("args", "callee", "kwargs")

    def __init__(self, callee: Operand, args: tuple, kwargs: dict) -> None:
        self.callee, self.args, self.kwargs = callee, args, kwargs


class Constructed(Record):
    """An object the code constructs (``Helper(2.0)``), as the structure its inlined
    ``__init__`` left, with ``made_by``, the call that made it: passed whole (to
    ``print``, to a function called as it is) or returned, it is made by that call when
    the derivative runs. (Changed after, it is a plain :class:`Record`.)"""

    __slots__ = ("made_by",)

    def __init__(self, made: Record, made_by: tuple) -> None:
        super().__init__(made.kind, made.type, made.items)
        self.made_by = made_by


class GlobalObject(Record):
    """An object of the user's class a global or closure variable holds, as a structure
    (a :class:`Record` the caller gave), with ``whole``, the value reading the object
    itself: what passing it whole (to ``print``, to a function called as it is) or
    returning it passes, a global carrying no gradient."""

    __slots__ = ("whole",)

    def __init__(self, bound: Record, whole: Value) -> None:
        super().__init__(bound.kind, bound.type, bound.items, caller=True)
        self.whole = whole


# What makes an object behave as a value of its own (its attributes computed by its
# code, converted to an array or a number, computed with), rather than as a holder of
# attributes: a class defining any of these is read as a value when the derivative
# runs, as before models were structures. (A container's __len__ and __getitem__ are
# compiled: len(model), model[0].)
_VALUE_PROTOCOL = ("__getattribute__", "__getattr__", "__array__", "__array_ufunc__",
                   "__array_function__", "__float__", "__int__", "__index__", "__add__",
                   "__radd__", "__sub__", "__mul__", "__rmul__", "__matmul__", "__truediv__",
                   "__pow__", "__neg__")


def user_object(obj: object) -> bool:
    """Whether ``obj`` is an object of the user's class holding its attributes in a
    ``__dict__`` (a structure of them, see :func:`argument_spec`), rather than a
    function, a class, a module, an object autodiff calls as it is (one given a rule,
    a distribution) or one that behaves as a value (``_VALUE_PROTOCOL``). (Its type
    decides, never its attributes: no code of the object runs.)"""
    kind = type(obj)
    if not is_user_class(kind) or not getattr(kind, "__dictoffset__", 0) or issubclass(
            kind, (type, types.FunctionType, types.MethodType, types.ModuleType,
                   functools.partial, BaseException)):
        return False
    if any(inspect.getattr_static(kind, name, None) is not getattr(object, name, None)
           for name in _VALUE_PROTOCOL):
        return False
    return registry.callable_binding(obj) is None and not registry.has_bound_ops(obj)


def holds_user_objects(obj: object, depth: int = 0) -> bool:
    """Whether ``obj`` is a list, tuple or dict holding objects of the user's classes (a
    ``Sequential`` held in a global: ``layers = [Dense(3, 4), Dense(4, 1)]``). (Types
    decide, as in :func:`user_object`.)"""
    kind = type(obj)
    if depth > 8 or kind not in (list, tuple, dict):
        return False
    items = obj.values() if kind is dict else obj
    return any(user_object(item) or holds_user_objects(item, depth + 1) for item in items)


def constructible(kind: object) -> bool:
    """Whether calling ``kind`` makes an object of the user's class whose ``__init__``
    (or none) is all that runs: no ``__new__``, metaclass or slots of its own."""
    return (isinstance(kind, type) and type(kind) is type and is_user_class(kind)
            and kind.__new__ is object.__new__ and bool(getattr(kind, "__dictoffset__", 0))
            and not issubclass(kind, BaseException) and not dataclasses.is_dataclass(kind)
            and isinstance(inspect.getattr_static(kind, "__init__"),
                           (types.FunctionType, types.WrapperDescriptorType)))


class ObjectsMixin:
    """Objects called, constructed and read for
    :class:`autodiff.frontend.convert.Converter`."""

    def global_object(self, node: ast.expr, name: str, scope: Scope,
                      obj: object) -> Operand | None:
        """The object of the user's class the global or closure variable ``name`` of
        ``scope`` holds, as a structure whose arrays are read when the derivative runs;
        None if it has no structure (it refers back to itself)."""
        try:
            spec = argument_spec(obj)
        except ArgumentKindError:
            return None
        if spec[0] != "fields" and not holds_user_objects(obj):
            return None
        whole = self.emit(node, "variable", (Const(name), Const(scope)), hint="")
        # its settings are fixed here: each call checks they still hold (once, where the
        # graph's own node list checks them)
        if (name, scope) not in self.builder.settings_checked:
            self.emit(node, "settings_unchanged", (whole, Const(settings_digest(obj)),
                                                   Const(name)))
            if self.builder.nodes is self.builder.graph.nodes:
                self.builder.settings_checked.add((name, scope))
        binder = Binder(lambda op, args, hint: self.builder.emit(op, args, hint))
        bound = binder.bind(spec, whole, name)
        # (a list or a tuple of layers: its items, the list itself when passed whole)
        return GlobalObject(bound, whole) if isinstance(bound, Record) else bound

    def object_call(self, node: ast.Call, callee: Operand, args: tuple, kwargs: dict,
                    text: str) -> Operand | None:
        """The result of a call this module resolves (see the module doc); None for any
        other call."""
        if isinstance(callee, Bound):
            return self.call_value(node, callee.callee, (*callee.args, *args),
                                   {**callee.kwargs, **kwargs}, text)
        if isinstance(callee, Const) and callee.value is builtins.len and len(args) == 1 and (
                not kwargs) and protocol_method(args[0], "__len__") is not None:
            return self.call_function(node, protocol_method(args[0], "__len__"), args, {})
        if isinstance(callee, Record) and callee.kind == "fields":
            call = inspect.getattr_static(callee.type, "__call__", None)
            if isinstance(call, staticmethod):
                return self.call_value(node, Const(call.__func__), args, kwargs, text)
            if not isinstance(call, types.FunctionType):
                raise self.error(node, f"'{text}' is a {callee.describe()}, which is not "
                                 "callable: its class defines no __call__ of Python code",
                                 kind=UnsupportedSyntaxError,
                                 hint=f"call one of its methods: {text}.forward(...)")
            return self.call_function(node, call, (callee, *args), kwargs)
        if not isinstance(callee, Const):
            return None
        value = callee.value
        if value is functools.partial:
            if not args:
                raise self.error(node, "functools.partial() needs a function to call")
            return Bound(args[0], args[1:], kwargs)
        if isinstance(value, functools.partial):
            return self.partial_held(node, value, args, kwargs, text)
        if value is builtins.getattr or value is builtins.hasattr:
            return self.attribute_by_name(node, value, args, kwargs)
        if constructible(value):
            return Constructed(self.constructed(node, value, args, kwargs),
                               (node, callee, args, kwargs))
        if isinstance(value, type) and dataclasses.is_dataclass(value) and is_user_class(value):
            return self.dataclass_made(node, callee, args, kwargs)
        return None

    def dataclass_made(self, node: ast.Call, callee: Const, args: tuple,
                       kwargs: dict) -> Operand | None:
        """``Layer(W, b)`` of the user's dataclass: its fields bound as its ``__init__``
        binds them (defaults that are constants); None for one whose ``__init__`` does
        more (``__post_init__``, a field made by a factory or left out of it)."""
        kind = callee.value
        names = [field.name for field in dataclasses.fields(kind)]
        signature = inspect.signature(kind)
        if hasattr(kind, "__post_init__") or list(signature.parameters) != names:
            return None
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise self.error(node, f"bad call to '{kind.__name__}': {error}",
                             kind=UnsupportedSyntaxError) from None
        bound.apply_defaults()
        items = {}
        for name, value in bound.arguments.items():
            if not isinstance(value, (Value, Const, Record, tuple, Bound)):
                if not literal(value):  # a default made by a factory, or an object
                    return None
                value = Const(value)
            items[name] = value
        return Constructed(Record("fields", kind, items), (node, callee, args, kwargs))

    def known_truth(self, node: ast.AST, cond: Operand) -> Operand:
        """``if model:``, ``if layers:``: the truth of a structure known while compiling,
        as Python decides it (an object's ``__bool__``, else its ``__len__``, compiled;
        else true); any other operand as it is."""
        if isinstance(cond, tuple):
            return Const(bool(cond))
        if not isinstance(cond, Record):
            return cond
        if cond.kind != "fields":
            return Const(bool(cond.items))
        for name in ("__bool__", "__len__"):
            method = protocol_method(cond, name)
            if method is not None:
                result = self.call_function(node, method, (cond,), {})
                if not isinstance(result, Const):
                    raise self.error(node, f"the truth of the {cond.describe()} is its "
                                     f"{name}, known only when the code runs, but which "
                                     "branch a structure takes is decided while compiling",
                                     kind=UnsupportedSyntaxError)
                return Const(bool(result.value))
        return Const(True)

    def partial_held(self, node: ast.Call, partial: functools.partial, args: tuple,
                     kwargs: dict, text: str) -> Operand | None:
        """A ``functools.partial`` a global holds or an argument passes, called: its
        function with its arguments first, when those are constants written as code
        (numbers, strings, tuples of them); None otherwise (it is called as it is)."""
        given = (*partial.args, *partial.keywords.values())
        if not all(literal(value) for value in given):
            return None
        inner = partial.func
        callee = Const(inner) if not isinstance(inner, functools.partial) else Bound(
            Const(inner.func), tuple(map(Const, inner.args)),
            {k: Const(v) for k, v in inner.keywords.items()})
        if isinstance(inner, functools.partial) and not all(
                literal(v) for v in (*inner.args, *inner.keywords.values())):
            return None
        return self.call_value(node, callee, (*map(Const, partial.args), *args),
                               {**{k: Const(v) for k, v in partial.keywords.items()},
                                **kwargs}, text)

    def attribute_by_name(self, node: ast.Call, fn, args: tuple, kwargs: dict) -> Operand:
        """``getattr(obj, name[, default])`` and ``hasattr(obj, name)``, ``name`` known
        while compiling: the attribute as ``obj.name`` reads it."""
        word = fn.__name__
        if kwargs or len(args) not in ((2, 3) if fn is builtins.getattr else (2,)):
            raise self.error(node, f"unsupported arguments in the call to {word}")
        base, name = args[0], args[1]
        if not (isinstance(name, Const) and name.path is None and isinstance(name.value, str)):
            self.read_as_structure(node.args[1], name, "the name of an attribute")
            raise self.error(node, f"'{ast.unparse(node)}' names an attribute known only when "
                             "the code runs, but the attributes code reads are fixed while "
                             "compiling", hint="pass the name as a string argument or a "
                             "setting of the object (a derivative is compiled for each)")
        attribute = ast.copy_location(
            ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Load()), node)
        if not self.has_attribute(base, name.value):
            if fn is builtins.hasattr:
                return Const(False)
            if len(args) == 3:
                return args[2]
        found = self.attribute_of(attribute, base)
        return Const(True) if fn is builtins.hasattr else found

    def has_attribute(self, base: Operand, name: str) -> bool:
        """Whether ``base.name`` exists, decided while compiling (an array's attribute
        is tried as ``base.name`` would be: an error if autodiff has none)."""
        if isinstance(base, Const):
            return hasattr(base.value, name)
        if isinstance(base, Record):
            if base.kind != "dict" and name in base.items:
                return True
            return base.kind != "dict" and inspect.getattr_static(
                base.type, name, _ABSENT) is not _ABSENT
        return isinstance(base, Value)

    def constructed(self, node: ast.Call, kind: type, args: tuple, kwargs: dict) -> Record:
        """``Helper(2.0)``: a new object of the user's class, its ``__init__`` inlined on
        an empty structure whose fields its ``self.x = ...`` sets."""
        made = Record("fields", kind, {})
        init = inspect.getattr_static(kind, "__init__")
        if not isinstance(init, types.FunctionType):  # object's own: takes no arguments
            if args or kwargs:
                raise self.error(node, f"{kind.__name__}() takes no arguments",
                                 kind=UnsupportedSyntaxError)
            return made
        result = self.call_function(node, init, (made, *args), kwargs, returning=True)
        if not isinstance(result, Record) or result.type is not kind:
            raise self.error(node, f"the __init__ of {kind.__name__} returns before its end, "
                             "which differentiated code does not follow",
                             kind=UnsupportedSyntaxError,
                             hint="set the fields on every path to the end of __init__")
        return result

    def set_constructed_field(self, target: ast.Attribute, value: Operand) -> bool:
        """``self.s = s`` on an object the code constructs (in its ``__init__``, or where
        it was made): the name now holds a new structure with that field. False when
        the target is no such object's field."""
        if not isinstance(target.value, ast.Name):
            return False
        name = target.value.id
        current = self.env.get(name)
        if not (isinstance(current, Record) and current.kind == "fields"
                and not current.caller):
            return False
        self.share_change(target, f"'{ast.unparse(target)} = ...'", name, current,
                          {**current.items, target.attr: value},
                          f"a new {current.type.__name__}(...) holding the new value")
        return True


_ABSENT = object()


def protocol_method(operand: Operand, name: str) -> types.FunctionType | None:
    """The function of the user's class ``name`` (``__len__``, ``__getitem__``) when
    ``operand`` is an object of that class (a structure) defining it; else None."""
    if not (isinstance(operand, Record) and operand.kind == "fields"):
        return None
    found = inspect.getattr_static(operand.type, name, None)
    return found if isinstance(found, types.FunctionType) else None


def method_of(record: Record, name: str) -> Operand | None:
    """``self.forward`` read without a call: the class's function bound to ``record``
    (a static method as it is); None if ``name`` names no function of the class."""
    found = inspect.getattr_static(record.type, name, _ABSENT)
    if isinstance(found, staticmethod):
        return Const(found.__func__)
    if isinstance(found, types.FunctionType):
        return Bound(Const(found), (record,), {})
    return None


__all__ = ["Bound", "Constructed", "GlobalObject", "ObjectsMixin", "constructible",
           "holds_user_objects", "method_of", "protocol_method", "user_object"]
