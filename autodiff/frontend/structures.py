"""Structures while compiling: dicts, lists, tuples, namedtuples and dataclasses of
arrays, taken apart and put together by the frontend, never at run time.

A derivative is compiled for the *structure* of its arguments (:func:`argument_spec`:
the keys, the nesting, the kinds of the leaves), as JAX traces per pytree
structure. Inside the code, ``params["W1"]`` is the leaf itself, ``for W, b in
layers`` is unrolled, ``params.items()`` and ``len(layers)`` are constants; the
generated code reads each leaf once at the top (``params_W1 = params['W1']``).

A spec is a hashable tuple:

- ``ARRAY``: an array or a number, known at run time (a differentiable leaf; in a
  structure, a float or complex one);
- ``("static", value)``: a setting fixed while compiling: ``None``, a string, a
  flag, an int inside a structure, a function (a new value compiles again);
- ``OPAQUE``: another object, or in a structure an array of ints or flags, passed
  through at run time, without gradient;
- ``("dict", type, keys, children)``, ``("list", children)``, ``("tuple", children)``,
  ``("namedtuple", type, children)``, ``("fields", type, names, children)`` (a
  dataclass).

>>> import numpy as np
>>> argument_spec({"W": np.ones(2), "act": "tanh"})
('dict', <class 'dict'>, ('W', 'act'), (('array',), ('static', 'tanh')))
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import types
from collections.abc import Iterator

import numpy as np

from autodiff.errors import ArgumentKindError, UnsupportedSyntaxError
from autodiff.graph.ir import Const, Node, Operand, Value
from autodiff.ops import structures as structure_ops
from autodiff.user_code import is_user_class

ARRAY = ("array",)
OPAQUE = ("opaque",)

# The classes whose values are never structures: the general derivative takes them
# (None too: an optional seed left out; code that tests an argument against None is
# compiled per structure).
ARRAY_KINDS = frozenset({np.ndarray, float, int, bool, complex, type(None),
                         *(t for t in np.sctypeDict.values() if issubclass(t, np.generic))})

_STATIC = (str, bytes, enum.Enum, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.ModuleType, type, range, slice, type(Ellipsis))


def argument_spec(value, top: bool = True) -> tuple:
    """The structure of one argument, what a derivative compiled for it assumes. (Its
    type decides, never its attributes: a lazy proxy is not loaded.)"""
    kind = type(value)
    if kind is float or kind is np.ndarray and (top or value.dtype.kind in "fc"):
        return ARRAY
    if kind is dict:
        return ("dict", dict, tuple(value), tuple(argument_spec(v, False)
                                                  for v in value.values()))
    if kind is list:
        return ("list", tuple(argument_spec(v, False) for v in value))
    if kind is tuple:
        return ("tuple", tuple(argument_spec(v, False) for v in value))
    return _other_spec(value, kind, top)


def _other_spec(value, kind: type, top: bool) -> tuple:
    if value is None or issubclass(kind, _STATIC):
        return ("static", value)
    if issubclass(kind, int):  # (and bool) an argument's own: a number; in a structure: a setting
        return ARRAY if top else ("static", value)
    if issubclass(kind, (np.ndarray, np.generic, float, complex)):
        # in a structure, an array of ints or flags (labels, a mask) is a value without
        # a gradient, read when the derivative runs
        return ARRAY if top or np.result_type(value).kind in "fc" else OPAQUE
    if issubclass(kind, dict):
        return ("dict", kind, tuple(value), tuple(argument_spec(v, False)
                                                  for v in value.values()))
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return ("namedtuple", kind, tuple(argument_spec(v, False) for v in value))
    if issubclass(kind, (list, tuple)):
        return ("list" if issubclass(kind, list) else "tuple",
                tuple(argument_spec(v, False) for v in value))
    if dataclasses.is_dataclass(kind):
        names = tuple(f.name for f in dataclasses.fields(kind))
        return ("fields", kind, names,
                tuple(argument_spec(getattr(value, n), False) for n in names))
    if is_user_class(kind) and getattr(kind, "__dictoffset__", 0):
        # an object of the user's class: a structure of its own attributes
        described = _describing.__dict__.setdefault("ids", set())
        if id(value) in described:
            raise ArgumentKindError(
                f"a {kind.__name__} object refers back to itself through its attributes, "
                "so it is no structure of arrays autodiff can take apart",
                hint="pass the arrays it holds (a dict of them), or keep the reference "
                "back out of the object")
        described.add(id(value))
        try:
            attributes = object.__getattribute__(value, "__dict__")
            names = tuple(attributes)
            return ("fields", kind, names,
                    tuple(argument_spec(attributes[n], False) for n in names))
        finally:
            described.discard(id(value))
    if callable(value):
        return ("static", value)
    return OPAQUE


# The objects being described in this thread (an object referring back to itself
# has no spec).
_describing = threading.local()


def is_structured(spec: tuple) -> bool:
    """Whether an argument of this spec needs a derivative of its own (not an array)."""
    return spec is not ARRAY and spec != ARRAY


def has_gradient(leaf) -> bool:
    """Whether a leaf of a structure has a gradient: a float or complex array or number
    (in a structure, ints, flags, strings and other objects have none)."""
    return argument_spec(leaf, top=False) == ARRAY


def is_container(spec: tuple) -> bool:
    """Whether the spec is of a dict, list, tuple, namedtuple or dataclass."""
    return spec[0] in ("dict", "list", "tuple", "namedtuple", "fields")


def children(spec: tuple) -> tuple[tuple, ...]:
    """The keys (dict keys, positions or field names) of a structure spec."""
    kind = spec[0]
    if kind == "dict":
        return spec[2]
    if kind in ("list", "tuple"):
        return tuple(range(len(spec[1])))
    if kind == "namedtuple":
        return spec[1]._fields
    if kind == "fields":
        return spec[2]
    return ()


def child_specs(spec: tuple) -> tuple:
    return spec[-1] if spec[0] in ("dict", "list", "tuple", "namedtuple", "fields") else ()


def leaves(spec: tuple, bound: Operand, flat: list | None = None
           ) -> Iterator[tuple[tuple, Operand]]:
    """``(leaf spec, operand)`` for each leaf of an argument bound by :class:`Binder`
    (or, given ``flat``, the leaves' operands in order, beside their specs)."""
    if flat is not None:
        yield from zip(_leaf_specs(spec), flat)
        return
    kind = spec[0]
    if kind in ("array", "opaque", "static"):
        yield spec, bound
        return
    for key, child in zip(children(spec), child_specs(spec)):
        yield from leaves(child, _part(bound, key))


def part_at(spec: tuple, path: tuple, root: str) -> tuple[tuple, int, int]:
    """The spec of the part of a structure at ``path`` (its keys; a field, read as
    ``.name``, is a ``str`` subclass the caller tells apart with ``is_field``) and the
    range ``[start, stop)`` of its leaves among the structure's leaves. Raises
    ``KeyError`` with a message saying what the structure (named ``root``) holds
    instead."""
    start = 0
    for depth, key in enumerate(path):
        if not is_container(spec):
            raise KeyError(f"{path_text(root, path[:depth])} is a leaf (an array, a number or "
                           f"a setting), with no part {_written((key,))}")
        keys, specs = children(spec), child_specs(spec)
        position = _position(spec, key, keys)
        if position is None:
            what = (f"the keys {', '.join(map(repr, keys))}" if spec[0] == "dict"
                    else f"{len(keys)} items" if spec[0] in ("list", "tuple")
                    else f"the fields {', '.join(keys)}")
            raise KeyError(f"{path_text(root, path[:depth])} is a {_kind_name(spec)} with "
                           f"{what}, and no {_written((key,))}")
        start += sum(_leaf_count(child) for child in specs[:position])
        spec = specs[position]
    return spec, start, start + _leaf_count(spec)


def _position(spec: tuple, key, keys: tuple) -> int | None:
    field = getattr(key, "is_field", False)
    if spec[0] == "dict":
        return keys.index(key) if not field and key in keys else None
    if isinstance(key, int) and spec[0] in ("list", "tuple", "namedtuple"):
        return key % len(keys) if -len(keys) <= key < len(keys) else None
    if field and spec[0] in ("namedtuple", "fields"):
        return keys.index(key) if key in keys else None
    return None


def _written(path: tuple) -> str:
    return "".join(f".{key}" if getattr(key, "is_field", False) else f"[{key!r}]"
                   for key in path)


def _kind_name(spec: tuple) -> str:
    return spec[0] if spec[0] in ("dict", "list", "tuple") else spec[1].__name__


def _leaf_count(spec: tuple) -> int:
    return sum(1 for _ in _leaf_specs(spec))


def path_text(root: str, path: tuple) -> str:
    """The code reading the part at ``path`` of ``root``: ``like['W1']``, ``like.layers[0]``."""
    return root + _written(path)


def _leaf_specs(spec: tuple) -> Iterator[tuple]:
    if spec[0] in ("array", "opaque", "static"):
        yield spec
        return
    for child in child_specs(spec):
        yield from _leaf_specs(child)


def _part(bound: Operand, key) -> Operand:
    return bound.items[key] if isinstance(bound, Record) else bound[key]


class Record:
    """A dict, namedtuple or dataclass known while compiling: its keys and the operand
    each holds. ``caller`` marks one the caller passed; ``whole``, the value it is when
    the code runs, which a write into it writes through (``frontend/state.py``)."""

    __slots__ = ("caller", "items", "kind", "origin", "type", "whole")

    def __init__(self, kind: str, type_: type, items: dict, caller: bool = False,
                 whole: Value | None = None, origin: object | None = None) -> None:
        self.kind, self.type, self.items, self.caller = kind, type_, items, caller
        self.whole = whole
        # The object it is in the user's program: the same for the Records a change
        # makes of it (``d["k"] = v``, ``self.n = n``), a new one for a copy.
        self.origin = origin if origin is not None else object()

    def describe(self) -> str:
        return "dict" if self.kind == "dict" else f"{self.type.__name__} object"

    def changed(self, items: dict) -> Record:
        """The same object, holding ``items`` now."""
        return Record(self.kind, self.type, items, self.caller, self.whole, self.origin)


class CallerList(tuple):
    """The items of a list the caller passed, as the frontend holds them (a tuple);
    ``whole``, the list when the code runs, which an append writes through to
    (``frontend/state.py``). A list made from it (a slice, ``list(log)``) is a tuple."""

    def __new__(cls, items, whole: Value) -> CallerList:
        made = super().__new__(cls, items)
        made.whole = whole
        return made


def contains_record(operand) -> bool:
    if isinstance(operand, Record):
        return True
    return isinstance(operand, tuple) and any(contains_record(o) for o in operand)


class NeedsStructure(UnsupportedSyntaxError):
    """The code reads an argument as a structure (``params["W1"]``, ``b is None``): its
    derivative is compiled for the structure each call passes, not once for arrays."""


class Binder:
    """Binds each argument of a structure spec to operands: leaves read once, at the top
    of the function, from the argument (``params_W1 = params['W1']``)."""

    def __init__(self, emit, existing: dict | None = None) -> None:
        self.emit = emit  # (op, args, hint) -> Value
        self.existing = existing or {}  # (whole, key) -> a value that reads it already
        self.containers: dict[Value, tuple] = {}  # the values bound to structures: specs
        self.reused: list[Value] = []  # the values of ``existing`` bound, in binding order

    def bind(self, spec: tuple, whole: Value, hint: str, top: bool = True) -> Operand:
        kind = spec[0]
        if kind in ("array", "opaque"):
            return whole
        if kind == "static":
            return Const(spec[1])
        self.containers[whole] = spec
        keys, specs = children(spec), child_specs(spec)
        parts = {key: self.bind(child, self.read(spec, whole, key, f"{hint}_{word(key)}"),
                                f"{hint}_{word(key)}", top=False)
                 if child[0] != "static" else Const(child[1])
                 for key, child in zip(keys, specs)}
        if kind in ("list", "tuple"):
            return CallerList(parts.values(), whole) if kind == "list" else tuple(
                parts.values())
        return Record(kind, spec[1], parts, caller=True, whole=whole)

    def read(self, spec: tuple, whole: Value, key, hint: str) -> Value:
        found = self.existing.get((whole, key))
        if found is not None:
            self.reused.append(found)
            return found
        if spec[0] in ("namedtuple", "fields"):
            return self.emit(structure_ops.field(key), (whole,), hint)
        return self.emit(structure_ops.item, (whole, Const(key)), hint)


def leaf_reads(spec: tuple, whole: Value, outs: Iterator[Value], phase: str) -> list[Node]:
    """Nodes reading the array leaves of a structure ``whole`` of spec ``spec`` into the
    values ``outs`` gives, in leaf order (a tangent in an argument's structure)."""
    nodes: list[Node] = []

    def visit(spec: tuple, value: Value, hint: str) -> None:
        for key, child in zip(children(spec), child_specs(spec)):
            if not any(kind == ARRAY for kind in _leaf_specs(child)):
                continue
            op = (structure_ops.field(key) if spec[0] in ("namedtuple", "fields")
                  else structure_ops.item)
            args = (value,) if spec[0] in ("namedtuple", "fields") else (value, Const(key))
            out = next(outs) if child == ARRAY else Value(f"{hint}_{word(key)}")
            nodes.append(Node(op, args, out, None, phase))
            if child != ARRAY:
                visit(child, out, out.hint)

    visit(spec, whole, whole.hint)
    return nodes


def word(key) -> str:
    """A key as part of a name: ``W1``, ``0``, ``layer_norm``."""
    text = "".join(c if c.isalnum() else "_" for c in str(key)).strip("_")
    return text or "item"


# ----- structures as values: what the generated code builds -----


def structure_template(spec: tuple, path: str, names: Iterator[str], with_like: bool) -> str:
    """The text of a structure of spec ``spec`` whose leaves are the names ``names``
    gives, in order; ``path`` reads the matching part of the argument it copies
    (a namedtuple's ``_replace``, a dataclass's copy) when ``with_like``."""
    kind = spec[0]
    if kind in ("array", "opaque", "static"):
        return next(names)
    keys, specs = children(spec), child_specs(spec)

    def part(key, child) -> str:
        sub = f"{path}.{key}" if kind in ("namedtuple", "fields") else f"{path}[{key!r}]"
        return structure_template(child, sub, names, with_like)

    parts = [(key, part(key, child)) for key, child in zip(keys, specs)]
    if kind == "dict":
        text = "{" + ", ".join(f"{key!r}: {value}" for key, value in parts) + "}"
        return text if spec[1] is dict or not with_like else f"dict_like({path}, {text})"
    if kind == "list":
        return "[" + ", ".join(value for _, value in parts) + "]"
    if kind == "tuple":
        return "(" + ", ".join(value for _, value in parts) + ("," if len(parts) == 1 else "") + ")"
    fields = ", ".join(f"{key}={value}" for key, value in parts)
    if kind == "namedtuple":
        return f"{path}._replace({fields})"
    return f"with_fields({path}, {fields})"


def kept_from_like(built: tuple, held: tuple, path: str) -> list[str]:
    """The array leaves (as code reading them from ``path``) of ``held``, the spec of
    the part ``path`` of an argument that a structure of spec ``built`` copies
    (:func:`structure_template` with ``with_like``), which the copy keeps as they are:
    the fields of a namedtuple, a dataclass or an object that ``built`` has no operand
    for. Each leaf of ``built`` is an operand; a dict, list or tuple is written whole."""
    copies = built[0] in ("namedtuple", "fields")  # ``_replace``, ``with_fields``
    if not is_container(held):
        return [path] if copies and held == ARRAY else []
    if not is_container(built):
        return []
    named = dict(zip(children(built), child_specs(built)))
    kept = []
    for key, child in zip(children(held), child_specs(held)):
        sub = f"{path}.{key}" if held[0] in ("namedtuple", "fields") else f"{path}[{key!r}]"
        if key in named:
            kept += kept_from_like(named[key], child, sub)
        elif copies:
            kept += [sub + rest for rest in _array_paths(child)]
    return kept


def _array_paths(spec: tuple) -> list[str]:
    """The array leaves of a structure of spec ``spec``, as code reading them from it."""
    if not is_container(spec):
        return [""] if spec == ARRAY else []
    fields = spec[0] in ("namedtuple", "fields")
    return [(f".{key}" if fields else f"[{key!r}]") + rest
            for key, child in zip(children(spec), child_specs(spec))
            for rest in _array_paths(child)]


def needs_like(spec: tuple) -> bool:
    """Whether building this structure reads the argument it copies (not a literal)."""
    kind = spec[0]
    if kind in ("namedtuple", "fields") or (kind == "dict" and spec[1] is not dict):
        return True
    return any(needs_like(child) for child in child_specs(spec))


def spec_of_operand(operand) -> tuple:
    """The spec of a structure the code built (``{"loss": l, "acc": a}``)."""
    if isinstance(operand, Record):
        return (operand.kind, operand.type, tuple(operand.items),
                tuple(spec_of_operand(v) for v in operand.items.values())) if (
            operand.kind != "namedtuple") else ("namedtuple", operand.type, tuple(
                spec_of_operand(v) for v in operand.items.values()))
    if isinstance(operand, tuple):  # (the caller's list: a list)
        return ("list" if isinstance(operand, CallerList) else "tuple",
                tuple(spec_of_operand(o) for o in operand))
    if isinstance(operand, Const):
        return ("static", operand.value)
    return ARRAY


def same_nesting(given: tuple, expected: tuple) -> bool:
    """Whether a structure of spec ``given`` has the kinds, keys and nesting of one of
    spec ``expected``, whatever its leaves hold (a vjp's seed and the output it weighs;
    a rule's gradient, ``None`` for a leaf without one, and the structure it is of).
    A list and a tuple are alike: code building a list builds a tuple here."""
    if not (is_container(given) or is_container(expected)):
        return True
    sequences = ("list", "tuple")
    if given[0] in sequences and expected[0] in sequences:
        pass
    elif given[0] != expected[0] or given[1] is not expected[1]:
        return False
    return children(given) == children(expected) and all(
        same_nesting(a, b) for a, b in zip(child_specs(given), child_specs(expected)))


def describe(spec: tuple) -> str:
    """A spec written as :mod:`autodiff.tree` writes a structure: ``{'W': *, 'b': *}``."""
    if not is_container(spec):
        return "None" if spec == ("static", None) else "*"
    inner = [describe(child) for child in child_specs(spec)]
    kind = spec[0]
    if kind == "dict":
        text = "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(children(spec), inner)) + "}"
        return text if spec[1] is dict else f"{spec[1].__name__}({text})"
    if kind == "list":
        return "[" + ", ".join(inner) + "]"
    if kind == "tuple":
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    fields = ", ".join(f"{k}={v}" for k, v in zip(children(spec), inner))
    return f"{spec[1].__name__}({fields})"


def is_structure_operand(operand) -> bool:
    """Whether an operand is a structure known while compiling (or a setting: a
    constant other than a number), which a derivative compiled per structure takes
    apart."""
    if isinstance(operand, Const):
        return not isinstance(operand.value, (int, float, complex, np.ndarray, np.generic))
    return isinstance(operand, (Record, tuple))


def record_of(spec: tuple, like: Operand, leaves_: list) -> Operand:
    """The structure of spec ``spec`` whose leaves are ``leaves_`` (in order), as the
    frontend holds one: a derivative's gradient, built by a structure op, taken apart
    again where the code calling the derivative reads it."""
    items = iter(leaves_)

    def build(spec: tuple, like: Operand) -> Operand:
        kind = spec[0]
        if kind in ("array", "opaque", "static"):
            return next(items)
        keys, specs = children(spec), child_specs(spec)
        parts = {key: build(child, _part(like, key) if isinstance(like, (Record, tuple))
                            else None) for key, child in zip(keys, specs)}
        if kind in ("list", "tuple"):
            return tuple(parts.values())
        kind_of = like.type if isinstance(like, Record) else spec[1]
        return Record(kind, kind_of, parts)

    return build(spec, like)


def taken_apart(operand: Operand, structure_of=None) -> Operand:
    """A structure generated code builds (the result of a ``structure`` op: a gradient's
    dict, a dict passed to a function with a rule of its own), as the frontend holds
    one: a :class:`Record` or tuple of its operands, each taken apart in turn; any other
    operand as it is. ``structure_of`` gives what the frontend holds for the argument
    a namedtuple or an object copies its kind from."""
    if isinstance(operand, tuple):
        return tuple(taken_apart(o, structure_of) for o in operand)
    maker = operand.node if isinstance(operand, Value) else None
    spec = getattr(getattr(maker, "op", None), "spec", None)
    if spec is None:
        return operand
    named = maker.named_args
    like = named.get("like")
    parts = [taken_apart(named[p], structure_of) for p in maker.op.params if p != "like"]
    return record_of(spec, structure_of(like) if structure_of else like, parts)


def operand_leaves(operand) -> list:
    if isinstance(operand, Record):
        return [leaf for v in operand.items.values() for leaf in operand_leaves(v)]
    if isinstance(operand, tuple):
        return [leaf for o in operand for leaf in operand_leaves(o)]
    return [operand]


__all__ = [
    "ARRAY",
    "ARRAY_KINDS",
    "OPAQUE",
    "Binder",
    "CallerList",
    "NeedsStructure",
    "Record",
    "argument_spec",
    "children",
    "contains_record",
    "describe",
    "has_gradient",
    "is_container",
    "is_structured",
    "kept_from_like",
    "leaves",
    "needs_like",
    "operand_leaves",
    "part_at",
    "path_text",
    "same_nesting",
    "spec_of_operand",
    "structure_template",
    "taken_apart",
    "word",
]
