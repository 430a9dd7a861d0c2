"""The rewrites :func:`~autodiff.transforms.optimize.simplify.simplify` applies, one
method per op: ``rewrite_<op>(node, *args)`` returns the operand standing for the
node's result, or None to keep the node.

A rewrite is made only when it cannot change the result's value, shape, dtype
or kind. Dropping ``* 1.0`` from an integer array would turn a float result into
an integer one, so float identities are dropped only from floating values.

Broadcast scalars are the exception, on purpose: ``np.broadcast_to(1.0, s) * y``
becomes ``1.0 * y``, whose dtype is ``y``'s (a float32 ``y`` stays float32)
where the broadcast float64 array would have promoted it; and in derivative
code the sum of ``np.broadcast_to(1.0, s)`` is ``1.0 * n``, a Python float
where NumPy's sum gives a float64 scalar (the same number).
"""

from __future__ import annotations

import math

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Const, Graph, Node, Operand, Value
from autodiff.graph.shapes import SCALAR, token_of
from autodiff.ops import OPS


def is_number(operand: Operand, number: float | None = None) -> bool:
    """A literal Python int or float (equal to ``number`` when given)."""
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) in (int, float)
            and (number is None or operand.value == number))


def is_scalar(operand: Operand) -> bool:
    return is_number(operand) or isinstance(operand, Value) and operand.shape is SCALAR


def keeps_dtype(kept: Operand, dropped: Const) -> bool:
    """Whether ``kept op dropped`` has ``kept``'s dtype (Python ints are weak)."""
    if isinstance(kept, Value) and kept.floating:
        return True
    return type(dropped.value) is int


def produced_by(operand: Operand, name: str) -> Node | None:
    if isinstance(operand, Value) and isinstance(operand.node, Node) and (
            operand.node.op.name == name):
        return operand.node
    return None


def broadcast_scalar(operand: Operand) -> tuple | None:
    """``(scalar, shape)`` when ``operand`` is ``np.broadcast_to(scalar, shape)``."""
    node = produced_by(operand, "broadcast_to")
    if node is not None and is_scalar(node.args[0]):
        return node.args
    return None


def broadcast_array(operand: Operand) -> tuple | None:
    """``(array, shape)`` when ``operand`` is ``np.broadcast_to(array, shape)`` in
    derivative code (where a broadcast adjoint is never written into)."""
    node = produced_by(operand, "broadcast_to")
    if node is not None and node.phase != "forward" and isinstance(node.args[0], Value):
        return node.args
    return None


class Rewriter:
    """Emits replacement nodes through a builder placed by the caller."""

    def __init__(self, graph: Graph, uses: dict[Value, int]) -> None:
        self.builder = GraphBuilder(graph)
        self.uses = uses

    def emit(self, name: str, *args: Operand) -> Operand:
        return self.builder.emit(OPS[name], args)

    def single_use(self, value: Operand) -> bool:
        return isinstance(value, Value) and self.uses.get(value, 0) == 1

    def rewrite(self, node: Node) -> Operand | None:
        method = getattr(self, "rewrite_" + node.op.name, None)
        replacement = method(node, *node.args) if method is not None else None
        if replacement is None and node.op.simplify is not None:
            # The op's own build-time rewrite, on operands earlier rewrites changed.
            replacement = node.op.simplify(node.named_args, self.builder)
        return replacement

    # ----- broadcasts stay small -----

    def spread_scalar(self, node: Node, name: str | None = None) -> Operand | None:
        """``op(np.broadcast_to(s, shape), y)``: ``op(s, y)`` when ``y`` has that shape,
        ``np.broadcast_to(op(s, y), shape)`` when ``y`` is a scalar (either side).

        ``s`` may be an array too (the adjoint of a sum over an axis): an elementwise
        op commutes with broadcasting, so the op runs on the small array, or the
        broadcast is left to the op against an array of the full shape.

        ``name`` is the op to emit instead of the node's own, for the cases where
        the node's in-place kernel would no longer fit (see ``rewrite_accumulate``).
        """
        for side in (0, 1):
            spread = broadcast_scalar(node.args[side]) or broadcast_array(node.args[side])
            if spread is None:
                continue
            other = node.args[1 - side]
            args = list(node.args)
            args[side] = spread[0]
            if is_scalar(other):
                return self.emit("broadcast_to", self.emit(name or node.op.name, *args),
                                 spread[1])
            if token_of(other) is node.args[side].shape:
                return self.emit(name or node.op.name, *args)
        return None

    # ----- arithmetic identities -----

    def rewrite_multiply(self, node, a, b):
        for x, y in ((a, b), (b, a)):
            if is_number(y, 1) and keeps_dtype(x, y):
                return x
            negated = produced_by(x, "negative")
            if negated is not None and is_number(y) and self.single_use(x):
                return self.emit("multiply", negated.args[0], Const(-y.value))
        return self.spread_scalar(node)

    def rewrite_divide(self, node, a, b):
        if is_number(b, 1) and isinstance(a, Value) and a.floating:
            return a
        return self.spread_scalar(node)

    def rewrite_add(self, node, a, b, name=None):
        if is_number(b, 0) and keeps_dtype(a, b):
            return a
        if is_number(a, 0) and keeps_dtype(b, a):
            return b
        if node.op.name == "add" and node.phase != "forward" and is_number(b) and b.value < 0:
            return self.emit("subtract", a, Const(-b.value))  # dx - 5.0, not dx + -5.0
        return self.spread_scalar(node, name)

    def rewrite_accumulate(self, node, a, b):
        """As ``add``: ``total += s`` stays in place, while a broadcast total, which
        cannot be written into, becomes a plain sum."""
        spread = broadcast_scalar(a) or broadcast_array(a)
        return self.rewrite_add(node, a, b, "add" if spread else None)

    def rewrite_subtract(self, node, a, b):
        if is_number(b, 0) and keeps_dtype(a, b):
            return a
        return self.spread_scalar(node)

    def rewrite_power(self, node, a, b):
        if is_number(b, 1) and (type(b.value) is int or isinstance(a, Value) and a.floating):
            return a
        if node.phase != "forward" and is_number(b, 2) and type(b.value) is int:
            return self.emit("multiply", a, a)  # x * x: cheaper than x ** 2 on Python floats
        return None

    def rewrite_negative(self, node, a):
        inner = produced_by(a, "negative")
        if inner is not None:
            return inner.args[0]
        spread = broadcast_scalar(a)
        if spread is not None:
            return self.emit("broadcast_to", self.emit("negative", spread[0]), spread[1])
        product = produced_by(a, "multiply")
        if product is not None and self.single_use(a):
            for x, y in (product.args, product.args[::-1]):
                if is_number(y):
                    return self.emit("multiply", x, Const(-y.value))
        return None

    # ----- shapes -----

    # What a shape query of a value known to be 0-d gives, without reading the value.
    def rewrite_shape(self, node, a):
        return Const(()) if token_of(a) is SCALAR else None

    def rewrite_size(self, node, a):
        return Const(1) if token_of(a) is SCALAR else None

    def rewrite_ndim(self, node, a):
        return Const(0) if token_of(a) is SCALAR else None

    def rewrite_unbroadcast(self, node, g, x):
        if token_of(x) is SCALAR and token_of(g) is not SCALAR:
            return self.emit("unbroadcast_to", g, Const(()))
        return None

    def rewrite_transpose(self, node, a, axes):
        """``np.transpose(np.transpose(x, p), q)`` is one transpose, or ``x`` itself."""
        inner = produced_by(a, "transpose")
        if inner is None:
            return None
        source, first = inner.args
        order = _composed(_permutation(first), _permutation(axes))
        if order is None:
            return None
        # ``x.T`` needs an ndarray (or a NumPy scalar): after it, ``x.T.T`` is x, and
        # x.T is x's reversed order. np.transpose(x, axes) also takes a list, and
        # gives an array: that x is only known to be np.asarray(x).
        known_array = _is_none(first)
        if order == tuple(range(len(order))) or order == ():
            return source if known_array else self.emit("asarray", source)
        reverse = known_array and order == tuple(range(len(order) - 1, -1, -1))
        return self.emit("transpose", source, Const(None if reverse else order))

    def rewrite_sum(self, node, a, axis, keepdims):
        if _is_none(axis) and _is_false(keepdims):
            return self.sum_of_broadcast(node, a)
        return None

    def rewrite_unbroadcast_to(self, node, g, shape):
        if isinstance(shape, Const) and shape.value == ():
            return self.sum_of_broadcast(node, g)
        return None

    def sum_of_broadcast(self, node, a):
        """The sum of a scalar broadcast to ``n`` elements is ``scalar * n``.

        Only where that is provably the value: the scalar is a finite number, or
        ``n`` is a known positive count (``inf * 0`` is nan, an empty sum 0.0). And
        only in derivative code, where every value ends in arithmetic or in the
        gradient's own kind: a Python float there stands for NumPy's float64 scalar,
        while the user's own values keep the kind NumPy gives them.
        """
        spread = broadcast_scalar(a)
        if spread is None or node.phase == "forward":
            return None
        scalar, shape = spread
        dims, query = _constant_tuple(shape), produced_by(shape, "shape")
        if dims is not None and (math.prod(dims) > 0 or _finite(scalar)):
            return self.emit("multiply", scalar, Const(math.prod(dims)))
        if query is not None and _finite(scalar):
            return self.emit("multiply", scalar, self.emit("size", query.args[0]))
        return None


def _finite(operand: Operand) -> bool:
    return is_number(operand) and math.isfinite(operand.value)


def _is_none(operand: Operand) -> bool:
    return isinstance(operand, Const) and operand.value is None


def _is_false(operand: Operand) -> bool:
    return isinstance(operand, Const) and operand.value is False


def _constant_tuple(operand: Operand) -> tuple | None:
    """The value of a tuple of int constants (one constant, or a tuple of them)."""
    if isinstance(operand, Const) and operand.path is None:
        items = operand.value
    elif isinstance(operand, tuple) and all(isinstance(item, Const) for item in operand):
        items = tuple(item.value for item in operand)
    else:
        return None
    if isinstance(items, tuple) and all(type(item) is int for item in items):
        return items
    return None


_REVERSED = "reversed"  # np.transpose's default order, whatever the number of axes


def _permutation(axes: Operand):
    """``_REVERSED`` for the default order, the axes as a tuple, or None if unknown."""
    return _REVERSED if _is_none(axes) else _constant_tuple(axes)


def _composed(first, second) -> tuple | None:
    """The axes of ``np.transpose(np.transpose(x, first), second)`` as one transpose.

    The result's axis ``i`` is the first transpose's axis ``second[i]``, which is
    ``x``'s axis ``first[second[i]]``. None when the rank is unknown or an order
    is not a permutation (then the error is NumPy's, at run time).
    """
    if first is None or second is None:
        return None
    if first is _REVERSED and second is _REVERSED:
        return ()  # the identity, of any rank
    rank = len(second if first is _REVERSED else first)
    first, second = (tuple(range(rank - 1, -1, -1)) if p is _REVERSED else p
                     for p in (first, second))
    if len(first) != rank or len(second) != rank:
        return None
    first, second = (tuple(k + rank if -rank <= k < 0 else k for k in p)
                     for p in (first, second))
    if sorted(first) != list(range(rank)) or sorted(second) != list(range(rank)):
        return None
    return tuple(first[k] for k in second)


__all__ = ["Rewriter", "broadcast_scalar", "is_number", "is_scalar", "produced_by"]
