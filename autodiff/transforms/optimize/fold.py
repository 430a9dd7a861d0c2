"""Constant folding: an operation on constants becomes the constant it computes.

The frontend already folds while it builds (``GraphBuilder._fold``: ``2 * 3`` is
never a node). What this pass folds is what became constant afterwards: once
shape specialisation has replaced ``np.size(t4)`` by ``5120``, the chain
``1.0 / 5120 * 2`` is one number, ``0.000390625``.

Folding uses the same machinery as the builder, so a computation folds the same
way whether it was constant from the start or became so. It only ever produces
Python numbers, booleans and tuples of them: an op computed by NumPy at run time
from Python numbers gives the same value, and a Python ``int`` stays an ``int``
(``3 * 2`` folds to ``6``, not ``6.0``). Arrays are never folded into the code,
and ops with an effect (pops, pushes, anything that may raise for the user)
always run.

>>> from autodiff.graph.ir import Const, Graph, Node, Value
>>> from autodiff.ops import OPS
>>> g = Graph("f", [])
>>> third = Value("third")
>>> g.nodes.append(Node(OPS["divide"], (Const(1.0), Const(4)), third, None, "forward"))
>>> g.outputs = [third]
>>> fold_constants(g).outputs
[Const(value=0.25, path=None, scope=None)]
"""

from __future__ import annotations

from autodiff.frontend.builder import GraphBuilder, literal
from autodiff.graph.ir import Const, Graph, Node, Operand
from autodiff.transforms.optimize.substitution import Substitution, rewrite_nodes

_NUMBER_TYPES = (bool, int, float)


def fold_constants(graph: Graph) -> Graph:
    """Replace, in place, every op on constants by its value, in every block."""
    return rewrite_nodes(graph, Substitution(), lambda node, kept, scope: _folded(node))


def _folded(node: Node) -> Const | None:
    """The constant ``node`` computes, or None when it must run."""
    op = node.op
    if op.effect or op.impl is None:
        return None
    args = [_plain(arg) for arg in node.args]
    if any(arg is None for arg in args):
        return None
    folded = GraphBuilder._fold(op, tuple(args))
    return folded if folded is not None and _number_or_tuple(folded.value) else None


def _plain(operand: Operand) -> Const | None:
    """``operand`` as a constant the builder folds: a plain Python value, no name.

    A named constant (``np.pi``) folds through its value; a tuple of constants
    (``(2, 3)`` written as two operands) folds as the tuple it is.
    """
    if isinstance(operand, tuple):
        items = [_plain(item) for item in operand]
        if any(item is None for item in items):
            return None
        return Const(tuple(item.value for item in items))
    if not isinstance(operand, Const) or not literal(operand.value):
        return None
    return operand if operand.path is None else Const(operand.value)


def _number_or_tuple(value: object) -> bool:
    if isinstance(value, tuple):
        return all(_number_or_tuple(item) for item in value)
    return type(value) in _NUMBER_TYPES


__all__ = ["fold_constants"]
