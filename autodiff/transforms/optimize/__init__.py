"""Optimisation passes over a graph; ``optimize`` runs them to a fixed point."""

from __future__ import annotations

from autodiff.graph.ir import Graph
from autodiff.transforms.optimize.cse import eliminate_common_subexpressions
from autodiff.transforms.optimize.dce import eliminate_dead_code
from autodiff.transforms.optimize.simplify import simplify


def optimize(graph: Graph) -> Graph:
    """Simplify, merge repeated computations and drop dead code, until nothing changes."""
    while True:
        before = len(graph.nodes)
        simplify(graph)
        eliminate_common_subexpressions(graph)
        eliminate_dead_code(graph)
        if len(graph.nodes) == before:
            return graph


__all__ = ["eliminate_common_subexpressions", "eliminate_dead_code", "optimize", "simplify"]
