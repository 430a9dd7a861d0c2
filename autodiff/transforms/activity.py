"""Activity analysis: which values need an adjoint.

A value is *varied* when it depends on a differentiated argument through ops
that carry gradients, and *useful* when the output depends on it. Only values
that are both (active) get adjoints; everything else is a constant of the
backward sweep, computed once in the forward part.

>>> import autodiff as ad  # doctest: +SKIP
"""

from __future__ import annotations

from autodiff.graph.ir import Graph, Value, operand_values


def varied_values(graph: Graph, wrt: list[Value]) -> set[Value]:
    """Values that depend on ``wrt`` through differentiable parameters."""
    varied = set(wrt)
    for node in graph.nodes:
        if node.op.nondiff_output:
            continue
        named = node.named_args
        if any(v in varied for p in node.op.diff for v in operand_values(named[p])):
            varied.add(node.out)
    return varied


def useful_values(graph: Graph) -> set[Value]:
    """Values the outputs depend on."""
    useful = {v for output in graph.outputs for v in operand_values(output)}
    for node in reversed(graph.nodes):
        if node.out in useful:
            useful.update(node.inputs())
    return useful


def active_values(graph: Graph, wrt: list[Value]) -> set[Value]:
    """Values that get an adjoint when differentiating the outputs with respect to ``wrt``."""
    return varied_values(graph, wrt) & useful_values(graph)
