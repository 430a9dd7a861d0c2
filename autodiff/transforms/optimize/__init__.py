"""Optimisation passes over a graph; ``optimize`` runs them to a fixed point.

Each pass is a function ``pass(graph) -> graph`` that rewrites the graph in place
and can be run (and tested) on its own:

- :func:`fold_constants` (fold.py): ops on constants become constants;
- :func:`simplify` (simplify.py): algebraic identities and broadcast scalars;
- :func:`propagate_copies` (copies.py): values that rename another disappear;
- :func:`eliminate_common_subexpressions` (cse.py): one node per computation;
- :func:`eliminate_dead_code` (dce.py): nodes, loop values and tape pushes nobody reads.
"""

from __future__ import annotations

from autodiff.graph.ir import Graph, Region, walk
from autodiff.transforms.optimize.copies import propagate_copies
from autodiff.transforms.optimize.cse import eliminate_common_subexpressions
from autodiff.transforms.optimize.dce import eliminate_dead_code
from autodiff.transforms.optimize.fold import fold_constants
from autodiff.transforms.optimize.simplify import simplify

PASSES = (fold_constants, simplify, propagate_copies, eliminate_common_subexpressions,
          eliminate_dead_code)


_MOST_ROUNDS = 50


def optimize(graph: Graph) -> Graph:
    """Run every pass, again and again, until a round changes nothing.

    One pass opens work for another (a folded constant makes ``x * 1.0``, whose
    removal leaves a dead node), so the round repeats. Every pass only removes
    nodes or replaces one by a cheaper one, so real graphs settle in two or three
    rounds; the graph is complete after any round, so the bound costs nothing.

    >>> from autodiff.graph.ir import Const, Graph, Node, Value
    >>> from autodiff.ops import OPS
    >>> x, half, y = Value("x"), Value("half"), Value("y")
    >>> x.floating = True
    >>> g = Graph("f", [x], [Node(OPS["divide"], (Const(1), Const(2)), half, None, "backward"),
    ...                      Node(OPS["multiply"], (x, half), y, None, "backward")], [y])
    >>> print(optimize(g))
    graph f(x):
        y = multiply(x, 0.5)
        return y
    """
    for _ in range(_MOST_ROUNDS):
        before = _fingerprint(graph)
        for run in PASSES:
            run(graph)
        if _fingerprint(graph) == before:
            break
    return graph


def _fingerprint(graph: Graph) -> tuple:
    """Every node with its operands and every block's results, nested ones included:
    equal fingerprints mean no pass changed anything."""
    parts = []
    for node in walk(graph.nodes):
        parts.append((node, node.args))
        if isinstance(node, Region):
            parts.extend(tuple(block.results) for block in node.blocks)
    return tuple(parts), tuple(graph.outputs)


__all__ = ["PASSES", "eliminate_common_subexpressions", "eliminate_dead_code",
           "fold_constants", "optimize", "propagate_copies", "simplify"]
