"""Common-subexpression elimination: one node per distinct computation."""

from __future__ import annotations

from autodiff.frontend.builder import node_key
from autodiff.graph.ir import Graph, Value
from autodiff.transforms.optimize.substitution import Substitution, rewrite_nodes


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Replace, in place, each repeated computation by its first occurrence.

    All ops are pure, so two nodes with the same op and operands are the same
    value; ops with effects are left alone. A value computed inside a branch or
    loop body is only reused inside it.
    """
    def first_of_its_kind(node, kept: list, seen: dict[tuple, Value]) -> Value | None:
        key = None if node.op.effect else node_key(node.op, node.args)
        if key is None:
            return None
        first = seen.setdefault(key, node.out)
        if first is not node.out and not first.hint and node.out.hint:
            first.hint = node.out.hint  # keep the user's name on the survivor
        return first

    return rewrite_nodes(graph, Substitution(), first_of_its_kind, scope={})
