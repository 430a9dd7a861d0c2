"""Gradients handed back as arrays of their own.

A derivative returns fresh arrays: never one of the caller's arrays (the
gradient of ``x * W`` by ``x`` is ``W``), nor the same array twice (``x + y``
gives one array for both gradients, and common subexpressions merge two
equal gradients into one). :func:`copy_aliased_gradients` copies such a
gradient where it is handed back (its ``as_gradient_of`` node).
"""

from __future__ import annotations

from collections.abc import Callable

from autodiff.graph.ir import Const, Graph, Node, Operand, Region, Value
from autodiff.ops import OPS
from autodiff.ops.control import variable as variable_op
from autodiff.ops.helpers import as_gradient_of as as_gradient_of_op


def copy_node(value: Value, phase: str) -> Node:
    """A node copying ``value``: a result the caller may write into without changing
    an argument."""
    copy = Value(adjoint_of=value.adjoint_of)
    copy.shape, copy.floating = value.shape, value.floating
    return Node(OPS["array"], (value, Const(None)), copy, None, phase)


def copy_aliased_gradients(graph: Graph, may_alias: Callable[[Value], bool] = lambda v: False,
                           phase: str = "backward") -> None:
    """Copy each gradient ``graph`` hands back that ``may_alias`` (an array the caller
    holds) or that is the same value as a gradient handed back before it."""
    seen: set[Value] = set()
    nodes = []
    for node in graph.nodes:
        if (not isinstance(node, Region) and node.op is as_gradient_of_op
                and isinstance(node.args[0], Value)):
            gradient = node.args[0]
            if gradient in seen or may_alias(gradient):
                copy = copy_node(gradient, phase)
                nodes.append(copy)
                node.args = (copy.out, *node.args[1:])
            seen.add(gradient)
        nodes.append(node)
    graph.nodes = nodes


def may_be_borrowed(value: Operand, params: set[Value]) -> bool:
    """Whether ``value`` may be one of the caller's arrays (or a global's)."""
    seen, todo = set(), [value]
    while todo:
        source = todo.pop()
        if not isinstance(source, Value) or source in seen:
            continue
        seen.add(source)
        node = source.node
        if source in params or (node is not None and node.op is variable_op):
            return True
        if isinstance(node, Region):
            j = node.outs.index(source)
            if not node.branches:
                todo.append(node.init[j])
            todo.extend(b.results[j] for b in node.blocks if node.kind != "while" or b is node.body)
        elif node is not None and not node.op.fresh:
            todo.append(node.args[0])
    return False
