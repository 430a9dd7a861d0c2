"""Dead-code elimination: drop nodes whose results nothing reads."""

from __future__ import annotations

from autodiff.graph.ir import Graph, operand_values


def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove, in place, every node no output depends on (ops with effects stay)."""
    live = {v for output in graph.outputs for v in operand_values(output)}
    kept = []
    for node in reversed(graph.nodes):
        if node.out in live or node.op.effect:
            kept.append(node)
            live.update(node.inputs())
    kept.reverse()
    graph.nodes = kept
    return graph
