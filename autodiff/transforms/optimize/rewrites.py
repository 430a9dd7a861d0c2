"""What an op's algebraic rewrite (``@op.defrewrite``, in the op's block) can ask
and do: :class:`Rewriter`, which :func:`~autodiff.transforms.optimize.simplify.simplify`
runs over a graph.

A rewrite is made only when it cannot change the result's value, shape, dtype
or kind. Dropping ``* 1.0`` from an integer array would turn a float result into
an integer one, so float identities are dropped only from floating values.

Broadcast scalars are the exception, on purpose: ``np.broadcast_to(1.0, s) * y``
becomes ``1.0 * y``, whose dtype is ``y``'s (a float32 ``y`` stays float32)
where the broadcast float64 array would have promoted it; and in derivative
code the sum of ``np.broadcast_to(1.0, s)`` is ``1.0 * n``, a Python float
where NumPy's sum gives a float64 scalar (the same number). The rules spread a
scalar adjoint over an array with ``broadcast_like(g, a)``, which gives a
Python number ``a``'s floating dtype; both are broadcasts to these rewrites.
"""

from __future__ import annotations

import math

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Const, Graph, Node, Operand, Value
from autodiff.graph.patterns import constant_tuple, is_finite_number, is_scalar, produced_by
from autodiff.graph.shapes import token_of
from autodiff.ops import OPS, Op
from autodiff.ops.elementwise import multiply
from autodiff.ops.shape import broadcast_to, shape_query, size_query


class Rewriter:
    """Emits replacement nodes through a builder placed by the caller, and answers
    the questions rewrites share: is an operand a broadcast scalar, is it read once."""

    def __init__(self, graph: Graph, uses: dict[Value, int]) -> None:
        self.builder = GraphBuilder(graph)
        self.uses = uses

    def emit(self, op: Op | str, *args: Operand) -> Operand:
        return self.builder.emit(OPS[op] if isinstance(op, str) else op, args)

    def single_use(self, value: Operand) -> bool:
        return isinstance(value, Value) and self.uses.get(value, 0) == 1

    def rewrite(self, node: Node) -> Operand | None:
        rule = node.op.rewrite
        replacement = rule(self, node, *node.args) if rule is not None else None
        if replacement is None and node.op.simplify is not None:
            # The op's own build-time rewrite, on operands earlier rewrites changed.
            replacement = node.op.simplify(node.named_args, self.builder)
        return replacement

    # ----- broadcasts stay small -----

    @staticmethod
    def broadcast_scalar(operand: Operand) -> Node | None:
        """The node when ``operand`` is ``np.broadcast_to(scalar, shape)`` or
        ``broadcast_like(scalar, a)``: its ``args`` are the scalar and the target."""
        node = produced_by(operand, broadcast_to) or produced_by(operand, OPS["broadcast_like"])
        if node is not None and is_scalar(node.args[0]):
            return node
        return None

    @staticmethod
    def broadcast_array(operand: Operand) -> Node | None:
        """The node when ``operand`` is ``np.broadcast_to(array, shape)`` in derivative
        code (where a broadcast adjoint is never written into)."""
        node = produced_by(operand, broadcast_to)
        if node is not None and node.phase != "forward" and isinstance(node.args[0], Value):
            return node
        return None

    def broadcast(self, value: Operand, spread: Node) -> Operand:
        """``value`` broadcast as ``spread`` broadcast its operand: to the same shape,
        and by ``broadcast_like`` to the same array's dtype."""
        return self.emit(spread.op, value, spread.args[1])

    def spread_scalar(self, node: Node, op: Op | None = None) -> Operand | None:
        """``op(np.broadcast_to(s, shape), y)``: ``op(s, y)`` when ``y`` has that shape,
        ``np.broadcast_to(op(s, y), shape)`` when ``y`` is a scalar (either side).

        ``s`` may be an array too (the adjoint of a sum over an axis): an elementwise
        op commutes with broadcasting, so the op runs on the small array, or the
        broadcast is left to the op against an array of the full shape.

        ``op`` is the op to emit instead of the node's own, for the cases where
        the node's in-place kernel would no longer fit (see ``accumulate``).
        """
        for side in (0, 1):
            spread = self.broadcast_scalar(node.args[side]) or self.broadcast_array(
                node.args[side])
            if spread is None:
                continue
            other = node.args[1 - side]
            if spread.op is not broadcast_to and _not_floating(other):
                continue  # 0.5 * (x == y) is float64: broadcast_like's dtype stays
            args = list(node.args)
            args[side] = spread.args[0]
            if is_scalar(other):
                return self.broadcast(self.emit(op or node.op, *args), spread)
            if token_of(other) is node.args[side].shape:
                return self.emit(op or node.op, *args)
        return None

    def sum_of_broadcast(self, node: Node, a: Operand) -> Operand | None:
        """The sum of a scalar broadcast to ``n`` elements is ``scalar * n``.

        Only where that is provably the value: the scalar is a finite number, or
        ``n`` is a known positive count (``inf * 0`` is nan, an empty sum 0.0). And
        only in derivative code, where every value ends in arithmetic or in the
        gradient's own kind: a Python float there stands for NumPy's float64 scalar,
        while the user's own values keep the kind NumPy gives them.
        """
        spread = self.broadcast_scalar(a)
        if spread is None or node.phase == "forward":
            return None
        scalar, target = spread.args
        if spread.op is not broadcast_to:  # broadcast_like(scalar, array)
            if not is_finite_number(scalar):
                return None
            return self.emit(multiply, scalar, self.emit(size_query, target))
        dims, query = constant_tuple(target), produced_by(target, shape_query)
        if dims is not None and (math.prod(dims) > 0 or is_finite_number(scalar)):
            return self.emit(multiply, scalar, Const(math.prod(dims)))
        if query is not None and is_finite_number(scalar):
            return self.emit(multiply, scalar, self.emit(size_query, query.args[0]))
        return None


def _not_floating(operand: Operand) -> bool:
    """Made by an op whose results are never floating (a comparison, a mask): a Python
    float times it is float64."""
    node = operand.node if isinstance(operand, Value) else None
    return isinstance(node, Node) and node.op.floating is None


__all__ = ["Rewriter"]
