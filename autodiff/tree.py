"""Structures of arrays ("trees"): dicts, lists, tuples, namedtuples, dataclasses and
objects of the user's own classes (their attributes), nested to any depth, whose
leaves are arrays, numbers or any other object.

An optimiser step over a dict of parameters and its gradient, in one line:

>>> import numpy as np, autodiff as ad
>>> params = {"W": np.ones((2, 2)), "b": np.zeros(2)}
>>> grads = {"W": np.full((2, 2), 0.5), "b": np.ones(2)}
>>> ad.tree.map(lambda p, g: p - 0.1 * g, params, grads)["b"]
array([-0.1, -0.1])

Leaves come in a fixed order: a dict's in the order of its keys, a list's or a
tuple's by position, a dataclass's by field. ``None`` is a structure with no
leaf (as in JAX), so an absent bias is kept as it is. Structures compare equal
when their kinds, keys and nesting are equal:

>>> leaves, structure = ad.tree.flatten({"W": np.ones(2), "layers": [(1.0, None)]})
>>> len(leaves), structure
(2, {'W': *, 'layers': [(*, None)]})
>>> ad.tree.unflatten(structure, [0, 1])
{'W': 0, 'layers': [(1, None)]}
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from autodiff.errors import AutodiffError
from autodiff.user_code import is_user_class


class StructureError(AutodiffError, ValueError):
    """Structures that should match do not (``tree.map`` of a dict and a list), leaves
    that do not fill a structure, or code reading a key or field a structure lacks."""


def _kind_of(tree: Any) -> str:
    # type(), not isinstance: isinstance reads __class__, which loads a lazy proxy.
    kind = type(tree)
    if tree is None:
        return "none"
    if issubclass(kind, dict):
        return "dict"
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return "namedtuple"
    if issubclass(kind, (list, tuple)):
        return "sequence"
    if dataclasses.is_dataclass(kind) and not issubclass(kind, type):
        return "dataclass"
    if getattr(kind, "__dictoffset__", 0) and is_user_class(kind):
        return "object"
    return "leaf"


def _children(tree: Any, kind: str) -> tuple[tuple, tuple]:
    """The keys (dict keys, field names or positions) and the children of a node."""
    if kind == "dict":
        return tuple(tree), tuple(tree.values())
    if kind == "dataclass":
        names = tuple(f.name for f in dataclasses.fields(tree))
        return names, tuple(getattr(tree, name) for name in names)
    if kind == "namedtuple":
        return tuple(type(tree)._fields), tuple(tree)
    if kind == "object":
        attributes = object.__getattribute__(tree, "__dict__")
        return tuple(attributes), tuple(attributes.values())
    return tuple(range(len(tree))), tuple(tree)


class Structure:
    """A tree without its leaves: what :func:`unflatten` fills, what two trees must
    share for :func:`map`."""

    __slots__ = ("children", "extra", "keys", "kind", "leaf_count", "type")

    def __init__(self, type_: type | None, kind: str, keys: tuple = (),
                 children: tuple[Structure, ...] = (), extra: Any = None) -> None:
        self.type, self.kind, self.keys, self.children, self.extra = (
            type_, kind, keys, children, extra)
        self.leaf_count = 1 if kind == "leaf" else sum(c.leaf_count for c in children)

    def _identity(self) -> tuple:
        return (self.type, self.kind, self.keys, self.extra, self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Structure) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((self.type, self.kind, self.keys, self.children))

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = [repr(c) for c in self.children]
        if self.kind == "dict":
            text = "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.keys, inner)) + "}"
            return text if self.type is dict else f"{self.type.__name__}({text})"
        if self.kind == "sequence":
            if self.type is list:
                return "[" + ", ".join(inner) + "]"
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        fields = ", ".join(f"{k}={v}" for k, v in zip(self.keys, inner))
        return f"{self.type.__name__}({fields})"

    def build(self, children: list) -> Any:
        """This node made of ``children`` (already built)."""
        if self.kind == "dict":
            pairs = list(zip(self.keys, children))
            if self.type is collections.defaultdict:
                return collections.defaultdict(self.extra, pairs)
            return self.type(pairs)
        if self.kind == "namedtuple":
            return self.type(*children)
        if self.kind == "sequence":
            return self.type(children)
        if self.kind == "object":  # a copy, its __init__ not run
            made = object.__new__(self.type)
            made.__dict__.update(zip(self.keys, children))
            return made
        if self.kind == "dataclass":
            made = object.__new__(self.type)
            for name, child in zip(self.keys, children):
                object.__setattr__(made, name, child)  # (frozen dataclasses too)
            return made
        return None


LEAF = Structure(None, "leaf")


def structure(tree: Any) -> Structure:
    """The :class:`Structure` of ``tree``."""
    kind = _kind_of(tree)
    if kind == "leaf":
        return LEAF
    if kind == "none":
        return Structure(None, "none")
    keys, children = _children(tree, kind)
    return _shell(tree, kind, keys, tuple(structure(c) for c in children))


def _shell(tree: Any, kind: str, keys: tuple, children: tuple = ()) -> Structure:
    """The node of ``tree``, with the given children's structures."""
    extra = tree.default_factory if isinstance(tree, collections.defaultdict) else None
    return Structure(type(tree), kind, keys, children, extra)


def items(tree: Any) -> list[tuple[Any, Any]] | None:
    """``(key, child)`` for each child of a structure (dict keys, positions, field
    names); None for a leaf, ``[]`` for None."""
    kind = _kind_of(tree)
    if kind == "leaf":
        return None
    if kind == "none":
        return []
    return list(zip(*_children(tree, kind)))


def leaves(tree: Any) -> list:
    """The leaves of ``tree``, in order."""
    return [leaf for _, leaf in _walk(tree, "")]


def flatten(tree: Any) -> tuple[list, Structure]:
    """``(leaves, structure)``: :func:`unflatten` of them is a tree equal to ``tree``."""
    return leaves(tree), structure(tree)


def unflatten(structure: Structure, leaves: list) -> Any:
    """The tree of ``structure`` whose leaves, in order, are ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != structure.leaf_count:
        raise StructureError(f"{len(leaves)} leaves cannot fill a structure of "
                             f"{structure.leaf_count}: {structure!r}")
    items = iter(leaves)

    def build(node: Structure) -> Any:
        if node.kind == "leaf":
            return next(items)
        return node.build([build(child) for child in node.children])

    return build(structure)


def paths(tree: Any, name: str = "") -> list[tuple[str, Any]]:
    """``(path, leaf)`` for each leaf, the path written as code that reads it from
    ``name``: ``params['W1']``, ``layers[0][1]``, ``model.W``.

    >>> paths({"W1": 1.0, "layers": [(2.0, 3.0)]}, "params")
    [("params['W1']", 1.0), ("params['layers'][0][0]", 2.0), ("params['layers'][0][1]", 3.0)]
    """
    return list(_walk(tree, name))


def _walk(tree: Any, path: str) -> Iterator[tuple[str, Any]]:
    kind = _kind_of(tree)
    if kind == "leaf":
        yield path, tree
        return
    if kind == "none":
        return
    keys, children = _children(tree, kind)
    for key, child in zip(keys, children):
        step = f".{key}" if kind in ("dataclass", "namedtuple", "object") else f"[{key!r}]"
        yield from _walk(child, path + step)


def part(tree: Any, path: tuple) -> Any:
    """The part of ``tree`` at ``path``, a tuple of keys (dict keys, positions, field
    names): ``part(params, ("enc", "W"))`` is ``params["enc"]["W"]``.

    >>> part({"layers": [(1.0, 2.0)]}, ("layers", 0, 1))
    2.0
    """
    for key in path:
        tree = _child(tree, key, path)[1]
    return tree


def with_part(tree: Any, path: tuple, value: Any) -> Any:
    """A copy of ``tree`` (of each structure on the way, not of the leaves) with the
    part at ``path`` replaced by ``value``.

    >>> with_part({"W": 1.0, "b": [2.0, 3.0]}, ("b", 1), 0.0)
    {'W': 1.0, 'b': [2.0, 0.0]}
    """
    if not path:
        return value
    position, child = _child(tree, path[0], path)
    kind = _kind_of(tree)
    keys, children = _children(tree, kind)
    children = list(children)
    children[position] = with_part(child, path[1:], value)
    return _shell(tree, kind, keys).build(children)


def _child(tree: Any, key, path: tuple) -> tuple[int, Any]:
    kind = _kind_of(tree)
    keys, children = _children(tree, kind) if kind not in ("leaf", "none") else ((), ())
    if isinstance(key, int) and not isinstance(key, bool) and kind in ("sequence", "namedtuple"):
        if -len(keys) <= key < len(keys):
            return key % len(keys), children[key]
    elif key in keys and (kind != "sequence"):
        position = keys.index(key)
        return position, children[position]
    raise StructureError(f"{type(tree).__name__} has no part {key!r} (at {path!r})")


def map(fn: Callable, tree: Any, *rest: Any) -> Any:
    """``fn`` applied leaf by leaf: ``fn(leaf, *leaves at the same place in rest)``,
    in a tree of ``tree``'s structure. Each of ``rest`` has that structure too (a
    dict's keys may come in another order: they are matched by key), except that
    ``None`` may stand for a leaf: a gradient holds None where its argument holds
    a leaf with no gradient (a string, an int setting), and ``fn`` receives it.

    >>> import numpy as np, autodiff as ad
    >>> params = {"W": np.ones(2), "activation": "tanh"}
    >>> grads = {"W": np.full(2, 0.5), "activation": None}
    >>> ad.tree.map(lambda p, g: p if g is None else p - g, params, grads)["activation"]
    'tanh'
    """
    return _map(fn, tree, rest, "")


def _map(fn: Callable, tree: Any, rest: tuple, path: str) -> Any:
    kind = _kind_of(tree)
    for position, other in enumerate(rest, start=2):
        if kind == "leaf" and other is None:
            continue  # a leaf with no gradient: fn receives None for it
        if _kind_of(other) != kind or (kind != "leaf" and type(other) is not type(tree)):
            _mismatch(path, position, f"{type(other).__name__}, not {type(tree).__name__}")
    if kind == "leaf":
        return fn(tree, *rest)
    if kind == "none":
        return None
    keys, children = _children(tree, kind)
    columns = []
    for position, other in enumerate(rest, start=2):
        other_keys, other_children = _children(other, kind)
        if kind == "dict" and set(other_keys) == set(keys):
            columns.append(tuple(other[key] for key in keys))
        elif other_keys == keys:
            columns.append(other_children)
        else:
            _mismatch(path, position, f"keys {list(other_keys)}, not {list(keys)}")
    step = "." if kind in ("dataclass", "namedtuple", "object") else ""
    mapped = [_map(fn, child, tuple(column[i] for column in columns),
                   path + (f"{step}{key}" if step else f"[{key!r}]"))
              for i, (key, child) in enumerate(zip(keys, children))]
    return _shell(tree, kind, keys).build(mapped)


def _mismatch(path: str, position: int, what: str):
    raise StructureError(
        f"tree.map: at {path or 'the top'}, argument {position} has {what}",
        hint="map over trees of the same kinds, keys and nesting (a dict of gradients "
        "has its parameters' keys)")


__all__ = ["LEAF", "Structure", "StructureError", "flatten", "items", "leaves", "map", "part",
           "paths", "structure", "unflatten", "with_part"]
