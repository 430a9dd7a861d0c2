"""Appending nodes to a graph, one op at a time.

``GraphBuilder.emit`` is the single door through which nodes enter a graph,
for the user's code and for inlined gradient rules alike. On the way in it
tries the op's own simplification, folds ops whose inputs are all constant,
and records what is statically known about the result (shape token, floating).
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    SliceSpec,
    Value,
    operand_values,
)
from autodiff.graph.shapes import LIST, SCALAR, Token, combine, token_of
from autodiff.ops.registry import Op


def literal(value) -> bool:
    """Constants that codegen can write as Python literals."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, tuple):
        return all(literal(item) for item in value)
    return False


class GraphBuilder:
    """Emits nodes into ``graph`` with a current location and phase."""

    def __init__(self, graph: Graph, phase: str = "forward") -> None:
        self.graph = graph
        self.phase = phase
        self.loc: Location | None = None
        # Shape tokens of values known to hold one element (checked at run time).
        self.size_one: set[object] = set()
        # Identical nodes emitted through this builder are shared (hash-consing),
        # so that equal gradient contributions are recognisably the same value.
        self._emitted: dict[tuple, Value] = {}
        self._block: Block | None = None  # None: the graph's own node list
        # Where each loop-carried or branch-merged value may come from (for in-place checks).
        self.sources: dict[Value, list[Operand]] = {}

    @property
    def nodes(self) -> list:
        """The node list new nodes are appended to."""
        return self.graph.nodes if self._block is None else self._block.nodes

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Emit into ``block`` for the duration of the ``with``; values shared by
        hash-consing inside it stay inside it."""
        saved = self._block, self._emitted
        self._block, self._emitted = block, dict(self._emitted)
        try:
            yield block
        finally:
            self._block, self._emitted = saved

    def emit(self, op: Op, args: tuple, hint: str = "") -> Operand:
        """Append ``op(*args)`` (canonical argument order) and return its result."""
        named = dict(zip(op.params, args))
        if op.simplify is not None:
            replacement = op.simplify(named, self)
            if replacement is not None:
                return replacement
        folded = self._fold(op, args)
        if folded is not None:
            return folded
        # Only derivative code is hash-consed: in the user's code two equal
        # expressions are two arrays (an in-place update of one must not see the other).
        key = None if op.effect or self.phase == "forward" else node_key(op, args)
        if key is not None and key in self._emitted:
            return self._emitted[key]
        out = Value(hint)
        if key is not None:
            self._emitted[key] = out
        out.shape = _shape_token(op, named)
        out.floating = _floating(op, args)
        self.nodes.append(Node(op, args, out, self.loc, self.phase))
        return out

    @staticmethod
    def _fold(op: Op, args: tuple) -> Const | None:
        if op.impl is None or not all(isinstance(a, Const) and a.path is None for a in args):
            return None
        try:
            with np.errstate(all="ignore"):
                value = op.impl(*(a.value for a in args))
        except Exception:  # noqa: BLE001 - leave it to run time, where the user sees it
            return None
        if isinstance(value, np.generic) and value.ndim == 0:
            value = value.item()
        if isinstance(value, float) and not np.isfinite(value):
            return None
        return Const(value) if literal(value) else None


def node_key(op: Op, args: tuple) -> tuple | None:
    """A hashable identity of ``op(*args)``, or None when an argument is unhashable."""
    if op.distinct:
        return None
    try:
        key = (op.name, tuple(_hashable(arg) for arg in args))
        hash(key)
    except TypeError:
        return None
    return key


def _hashable(operand):
    if isinstance(operand, Value):
        return ("value", operand.id)
    if isinstance(operand, tuple):
        return tuple(_hashable(item) for item in operand)
    return operand


def _shape_token(op: Op, named: dict) -> object:
    spec = op.shape
    if spec is None:
        return Token()
    kind, _, params = spec.partition(":")
    if kind == "scalar":
        return SCALAR
    if kind == "list":
        return LIST
    if kind == "like":
        return token_of(named[params]) or Token()
    if kind == "elementwise":
        return combine([token_of(named[p]) for p in params.split(",")])
    if kind == "reduce":
        axis, keepdims = named.get("axis"), named.get("keepdims")
        if (isinstance(axis, Const) and axis.value is None
                and isinstance(keepdims, Const) and not keepdims.value):
            return SCALAR
        return Token()
    if kind == "einsum":  # 'ij,ij->' sums everything away
        spec = named["subscripts"]
        if isinstance(spec, Const) and isinstance(spec.value, str):
            text = spec.value.replace(" ", "")
            if text.endswith("->") or ("->" not in text and "." not in text and all(
                    text.count(c) > 1 for c in text if c != ",")):
                return SCALAR
        return Token()
    if kind == "index":
        return _index_token(named["a"], named["index"])
    if kind == "of":
        shape = named[params]
        if isinstance(shape, Value) and shape.node is not None and shape.node.op.name == "shape":
            return token_of(shape.node.args[0]) or Token()
        if isinstance(shape, Const) and shape.value == ():
            return SCALAR
        return Token()
    raise ValueError(f"unknown shape rule {spec!r} of op {op.name}")


# The token of x[1:] for each token of x, as long as that token lives.
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _index_token(base: Operand, index: Operand) -> object:
    """Equal tokens for equal static indices of same-shaped arrays.

    ``x[1:]`` and ``x[:-1]`` get the same token: both drop one element of the
    first axis, whatever its length. A slice is described by the lengths it
    gives for a range of axis lengths, which covers every breakpoint of its
    constants.
    """
    token = token_of(base)
    if token is None:  # a constant array: its shape is no other value's
        return Token()
    if isinstance(index, Const) and isinstance(index.value, tuple):
        index = tuple(Const(item) for item in index.value)
    items = index if isinstance(index, tuple) else (index,)
    signature = []
    for item in items:
        if isinstance(item, SliceSpec) and all(
            isinstance(p, Const) and (p.value is None or type(p.value) is int)
            for p in (item.start, item.stop, item.step)
        ):
            parts = slice(item.start.value, item.stop.value, item.step.value)
            if parts.step == 0:
                return Token()
            reach = max(abs(v) for v in (parts.start or 0, parts.stop or 0, parts.step or 1))
            lengths = tuple(len(range(*parts.indices(n))) for n in range(2 * reach + 4))
            signature.append(("slice", lengths, parts.step is None or parts.step > 0))
        elif isinstance(item, Const) and type(item.value) is int:
            signature.append(("int",))
        elif isinstance(item, Const) and item.value is None:
            signature.append(("new",))
        else:
            return Token()
    try:
        derived = _derived.setdefault(token, {})
    except TypeError:  # a token that takes no weak reference: known to equal nothing
        return Token()
    return derived.setdefault(tuple(signature), Token())


def _floating(op: Op, args: tuple) -> bool:
    if op.floating == "always":
        return True
    if op.floating == "inputs":
        for arg in args:
            if isinstance(arg, Const) and isinstance(arg.value, numbers.Real) and isinstance(
                arg.value, float
            ):
                return True
            if any(v.floating for v in operand_values(arg)):
                return True
    return False
