"""Common-subexpression elimination: one node per distinct computation."""

from __future__ import annotations

from autodiff.frontend.builder import node_key
from autodiff.graph.ir import Graph, Region, Value
from autodiff.transforms.optimize.substitution import Substitution


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Replace, in place, each repeated computation by its first occurrence.

    All ops are pure, so two nodes with the same op and operands are the same
    value; ops with effects are left alone. A value computed inside a branch or
    loop body is only reused inside it.
    """
    replaced = Substitution()

    def visit(nodes: list, seen: dict[tuple, Value]) -> list:
        kept = []
        for node in nodes:
            replaced.args(node)
            if isinstance(node, Region):
                for block in node.blocks:
                    block.nodes = visit(block.nodes, dict(seen))
                    block.results = [replaced.read(r) for r in block.results]
                kept.append(node)
                continue
            key = None if node.op.effect else node_key(node.op, node.args)
            if key is not None and key in seen:
                first = seen[key]
                replaced[node.out] = first
                if not first.hint and node.out.hint:
                    first.hint = node.out.hint  # keep the user's name on the survivor
                continue
            if key is not None:
                seen[key] = node.out
            kept.append(node)
        return kept

    graph.nodes = visit(graph.nodes, {})
    return replaced.finish(graph)
