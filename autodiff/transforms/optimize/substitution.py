"""What every pass does after removing a node: make its readers read the replacement.

A pass walks the graph in order, records ``replaced[value] = operand`` for each
result it removes, and rewrites the operands of every later node through
:meth:`Substitution.read`. :meth:`Substitution.finish` then rewrites the
graph's outputs and keeps each adjoint pointing at a surviving primal (codegen
names an adjoint ``d<name of its primal>``).

>>> from autodiff.graph.ir import Const, Value
>>> replaced = Substitution()
>>> x = Value("x")
>>> replaced[x] = Const(2.0)
>>> replaced.read((x, Const(1)))
(Const(value=2.0, path=None, scope=None), Const(value=1, path=None, scope=None))
"""

from __future__ import annotations

from collections.abc import Callable

from autodiff.graph.ir import (
    Block,
    Graph,
    Operand,
    Region,
    Value,
    map_operand,
    operand_values,
    walk,
)


class Substitution:
    """Values a pass removed, each with the operand that now stands for it."""

    def __init__(self) -> None:
        self.replaced: dict[Value, Operand] = {}

    def __setitem__(self, value: Value, operand: Operand) -> None:
        self.replaced[value] = operand

    def __contains__(self, value: Value) -> bool:
        return value in self.replaced

    def __bool__(self) -> bool:
        return bool(self.replaced)

    def value(self, value: Value) -> Operand:
        """The operand standing for ``value``, following chains of replacements."""
        while isinstance(value, Value) and value in self.replaced:
            value = self.replaced[value]
        return value

    def read(self, operand: Operand) -> Operand:
        if not self.replaced:
            return operand  # nothing removed (yet): every operand reads as it is
        return map_operand(operand, self.value)

    def args(self, node) -> None:
        """Rewrite ``node``'s operands (a region's own arguments, not its blocks)."""
        replaced = self.replaced
        if replaced and any(value in replaced for arg in node.args
                            for value in operand_values(arg)):
            node.args = tuple(map_operand(arg, self.value) for arg in node.args)

    def block(self, block: Block) -> None:
        """Rewrite every read inside ``block``, nested regions included."""
        for node in block.nodes:
            self.args(node)
            if isinstance(node, Region):
                for inner in node.blocks:
                    self.block(inner)
        block.results = [self.read(result) for result in block.results]

    def finish(self, graph: Graph) -> Graph:
        """Rewrite the outputs; point adjoints of removed primals at their replacements."""
        graph.outputs = [self.read(output) for output in graph.outputs]
        if not self.replaced:
            return graph
        for node in walk(graph.nodes):
            for out in node.outs:
                primal = out.adjoint_of
                if primal in self.replaced and isinstance(self.value(primal), Value):
                    out.adjoint_of = self.value(primal)
        return graph


def rewrite_nodes(graph: Graph, replaced: Substitution, on_node: Callable, *,
                  scope: dict | None = None, on_block: Callable | None = None,
                  on_region: Callable | None = None) -> Graph:
    """The walk every rewriting pass makes: each node in order, nested blocks included,
    its operands first read through ``replaced``.

    ``on_node(node, kept, scope)`` returns the operand that now stands for the node's
    result (the node is dropped, and ``replaced`` records it), or None to keep the
    node; nodes it appends to ``kept`` come before. ``scope`` is what is visible
    where the node is: each nested block gets a copy (``on_block(block, scope)`` may
    add to it), so what a block learns stays inside it. ``on_region(region, scope)``
    runs once a region's blocks are walked.
    """
    def visit(nodes: list, scope: dict | None) -> list:
        kept: list = []
        for node in nodes:
            replaced.args(node)
            if isinstance(node, Region):
                for block in node.blocks:
                    inner = dict(scope) if scope is not None else None
                    if on_block is not None:
                        on_block(block, inner)
                    block.nodes = visit(block.nodes, inner)
                    block.results = [replaced.read(r) for r in block.results]
                if on_region is not None:
                    on_region(node, scope)
                kept.append(node)
                continue
            replacement = on_node(node, kept, scope)
            if replacement is not None and replacement is not node.out:
                replaced[node.out] = replacement
                continue
            kept.append(node)
        return kept

    graph.nodes = visit(graph.nodes, scope)
    return replaced.finish(graph)


def inherit(replacement: Value, old: Value, new: bool) -> None:
    """Give the replacement the user's name (or the adjoint) of the value it stands for.

    A value the rewrite just made is equal to the old one, so it also takes what
    was known of it: floating, and its shape token when the new op has no shape
    rule of its own (``unbroadcast_to(g, ())`` stays known to be a scalar).
    """
    if not replacement.hint and replacement.adjoint_of is None:
        replacement.hint, replacement.adjoint_of = old.hint, old.adjoint_of
    if new:
        replacement.floating = replacement.floating or old.floating
        if replacement.node.op.shape is None:
            replacement.shape = old.shape


__all__ = ["Substitution", "inherit", "rewrite_nodes"]
