"""Algebraic simplification: multiply by one, add zero, power of one, double negation.

A rewrite is made only when it cannot change the result's value or dtype:
dropping ``* 1.0`` from an integer array would turn a float result into an
integer one, so float identities are dropped only from values known to be
floating point.
"""

from __future__ import annotations

from autodiff.graph.ir import Const, Graph, Operand, Value, map_operand
from autodiff.ops import OPS


def _is(operand: Operand, number: float) -> bool:
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) in (int, float) and operand.value == number)


def _keeps_dtype(kept: Operand, dropped: Operand) -> bool:
    """Whether ``kept op dropped`` has ``kept``'s dtype (Python ints are weak)."""
    if isinstance(kept, Value) and kept.floating:
        return True
    return type(dropped.value) is int


def _rewrite(node) -> Operand | None:
    name, args = node.op.name, node.args
    if name == "multiply":
        a, b = args
        if _is(b, 1) and _keeps_dtype(a, b):
            return a
        if _is(a, 1) and _keeps_dtype(b, a):
            return b
    elif name in ("add", "subtract"):
        a, b = args
        if _is(b, 0) and _keeps_dtype(a, b):
            return a
        if name == "add" and _is(a, 0) and _keeps_dtype(b, a):
            return b
    elif name in ("divide", "power"):
        a, b = args
        if _is(b, 1) and (isinstance(a, Value) and a.floating or name == "power"
                          and type(b.value) is int):
            return a
        if (name == "power" and node.phase == "backward" and _is(b, 2)
                and type(b.value) is int and isinstance(a, Value)):
            return ("multiply", (a, a))  # x * x: cheaper than x ** 2 on Python floats
    elif name == "negative":
        (a,) = args
        if isinstance(a, Value) and a.node is not None and a.node.op.name == "negative":
            return a.node.args[0]
    return None


_SHAPE_QUERIES = ("shape", "size", "ndim", "len", "reduced_size")


def simplify(graph: Graph) -> Graph:
    """Apply the rewrites in place, forwarding each removed result to its replacement.

    Shape queries are also redirected to the earliest value of the same shape,
    so that ``np.shape(t4 ** 2)`` becomes ``np.shape(t4)`` and ``t4 ** 2`` may die.
    """
    replace: dict[Value, Operand] = {}
    earliest: dict[object, Value] = {}
    for value in [*graph.params, *(node.out for node in graph.nodes)]:
        earliest.setdefault(id(value.shape), value)

    def substitute(value: Value) -> Operand:
        return replace.get(value, value)

    kept = []
    for node in graph.nodes:
        node.args = tuple(map_operand(arg, substitute) for arg in node.args)
        if node.op.name in _SHAPE_QUERIES and isinstance(node.args[0], Value):
            node.args = (earliest.get(id(node.args[0].shape), node.args[0]), *node.args[1:])
        replacement = _rewrite(node)
        if isinstance(replacement, tuple):  # same value, computed by another op
            node.op, node.args = OPS[replacement[0]], replacement[1]
            replacement = None
        if replacement is not None:
            replace[node.out] = replacement
            continue
        kept.append(node)
    graph.nodes = kept
    for node in kept:  # adjoints keep pointing at their (surviving) primal, for naming
        primal = node.out.adjoint_of
        if primal in replace and isinstance(replace[primal], Value):
            node.out.adjoint_of = replace[primal]
    graph.outputs = [map_operand(o, substitute) for o in graph.outputs]
    return graph
