"""Stable, readable names for the values of a graph.

Parameters keep their names, user variables keep theirs (``h``, then ``h_1`` when
an earlier ``h`` is still needed), adjoints are ``d`` + the primal's name and
temporaries are ``t1``, ``t2``, ... in order of definition. With
``reuse_dead=True`` a name is reused once the value it held is dead, the way a
person reassigns ``dx = dx + t`` when accumulating.

The values a region defines share one variable: a loop's carried value has
one name before, inside and after the loop (``h`` in ``for t in ...: h = ...``),
and the value of a name after an ``if`` has the name it gets in each branch.
Liveness is measured on the text as it will be written, with a value read
inside a loop kept alive to the loop's end (the next iteration reads it again).

>>> from autodiff.graph.ir import Graph, Value
>>> x = Value("x")
>>> assign_names(Graph("f", [x]))[0][x]
'x'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from autodiff.graph.nodes import CAUGHT, Node, Region, Value, operand_values

if TYPE_CHECKING:  # the graph module names its values with this one
    from autodiff.graph.ir import Graph


class Layout:
    """Positions of nodes in the order codegen writes them, and live ranges.

    A node sits at one position; a region spans from its own position (where it
    reads its arguments) to ``end[region]`` (where its outs are defined), with
    each block's results read at ``block_end[id(block)]``.
    """

    def __init__(self, graph: Graph) -> None:
        self.position: dict[object, int] = {}
        self.end: dict[Region, int] = {}
        self.block_end: dict[int, int] = {}
        self.defined: dict[Value, int] = {p: -1 for p in graph.params}
        self.last: dict[Value, float] = {}
        self.parent: dict[object, Region | None] = {}
        # each read: the value, where, and the innermost loop holding that place
        self._reads: list[tuple[Value, float, Region | None]] = []
        self._outer_loop: dict[Region, Region | None] = {}  # each loop's innermost loop
        self._count = 0
        self._visit(graph.nodes, None, None)
        end = self._next()
        for output in graph.outputs:
            for value in operand_values(output):
                self._reads.append((value, end, None))
        for value, position, _ in self._reads:
            self.last[value] = max(self.last.get(value, -1), position)
        for output in graph.outputs:
            for value in operand_values(output):
                self.last[value] = math.inf
        self._extend_through_loops()
        self._join_while_params()

    def _next(self) -> int:
        self._count += 1
        return self._count

    def _visit(self, nodes: list, parent: Region | None, loop: Region | None) -> None:
        """Number ``nodes`` (inside ``parent``, and the innermost ``loop`` around them)."""
        for node in nodes:
            position = self._next()
            self.position[node] = position
            self.parent[node] = parent
            for k, arg in enumerate(node.args):
                # A for loop's variables are set from its initial values before the
                # 'for ... in range(start, stop, step)' line reads its bounds: a bound
                # is read just after the loop takes over the variables it starts from.
                late = isinstance(node, Region) and node.kind == "for" and k < 4
                for value in operand_values(arg):
                    self._reads.append((value, position + 0.5, node) if late
                                       else (value, position, loop))
            if not isinstance(node, Region):
                self.defined[node.out] = position
                continue
            inner = loop
            if not node.branches:
                self._outer_loop[node] = loop
                inner = node
            for block in node.blocks:
                for param in block.params:
                    self.defined[param] = position
                self._visit(block.nodes, node, inner)
                close = self._next()
                self.block_end[id(block)] = close
                for result in block.results:
                    for value in operand_values(result):
                        self._reads.append((value, close, inner))
            self.end[node] = self._next()
            for out in node.outs:
                self.defined[out] = self.end[node]

    def _extend_through_loops(self) -> None:
        """A value read inside a loop it was defined before lives to the end of that loop
        (the outermost such loop around the read): the next iteration reads it again.
        The loops around a read are the innermost one and those around it, so each read
        asks only those (a read asking every loop was quadratic in the loops)."""
        position, end, outer = self.position, self.end, self._outer_loop
        for value, _, loop in self._reads:
            born = self.defined.get(value, -1)
            reach = None
            while loop is not None and position[loop] > born:
                reach = end[loop]
                loop = outer[loop]
            if reach is not None and self.last[value] < reach:
                self.last[value] = reach

    def _join_while_params(self) -> None:
        """A ``while`` loop's test and body take the carried values as params of their
        own, in one variable each: a param of the test lives as long as the body's
        (an update of the test's in place would change what the body reads)."""
        for region in self.end:
            if region.kind != "while":
                continue
            test, body = region.blocks
            for pair in zip(test.params, body.params):
                last = max(self.last.get(param, -1) for param in pair)
                for param in pair:
                    self.last[param] = last

    def dead_after(self, value: Value, position: float) -> bool:
        """Whether nothing reads ``value`` after ``position``."""
        return self.last.get(value, -1) <= position


class _Namer:
    def __init__(self, graph: Graph, layout: Layout, reserved: frozenset[str], reuse_dead: bool,
                 shares_name_with: Callable[[Node], Value | None]) -> None:
        self.layout = layout
        self.reuse_dead = reuse_dead
        self.shares = shares_name_with
        self.names: dict[Value, str] = {}
        self.holder: dict[str, Value] = {}
        self.busy: dict[str, float] = {}  # a region's variable, claimed until this position
        self.taken: set[str] = set(reserved)
        self.prefer: dict[Value, str] = {}
        self.temps = 0
        for param in graph.params:
            self.claim(param, param.hint)
        self.best: dict[Value, Value] = {}
        self.root: dict[Value, Value] = {}

    def claim(self, value: Value, name: str) -> None:
        self.names[value] = name
        self.holder[name] = value
        self.taken.add(name)

    def free(self, name: str, position: int) -> bool:
        if name not in self.taken:
            return True
        if self.busy.get(name, -1) > position:
            return False
        owner = self.holder.get(name)
        return self.reuse_dead and owner is not None and self.layout.dead_after(owner, position)

    def fresh(self, base: str, position: int) -> str:
        name, suffix = base, 0
        while not self.free(name, position):
            suffix += 1
            name = f"{base}_{suffix}"
        return name

    def base_name(self, value: Value) -> str | None:
        """The name a value asks for: the user's variable, ``d<primal>``, or None."""
        named_after = self.best.get(value, value)
        primal = named_after.adjoint_of
        if primal is not None:
            return "d" + self.names[primal] if primal in self.names else None
        return named_after.hint or None

    def temporary(self) -> str:
        while True:
            self.temps += 1
            name = f"t{self.temps}"
            if name not in self.taken:
                return name

    def block(self, nodes: list) -> None:
        for node in nodes:
            if isinstance(node, Region):
                self.region(node)
            else:
                self.node(node)

    def node(self, node: Node) -> None:
        position = self.layout.position[node]
        value = node.out
        if node.op.inline or node.op.statement:
            self.names[value] = ""
            return
        inherited = self.shares(node)
        wanted = self.prefer.get(value)
        if inherited is not None:
            name = self.names[inherited]
        elif wanted is not None and self.busy.get(wanted, -1) >= position and (
                self.holder.get(wanted) is None
                or self.layout.dead_after(self.holder[wanted], position)):
            name = wanted  # the value a region yields, written straight into its variable
        else:
            base = self.base_name(value)
            name = self.fresh(base, position) if base else self.temporary()
            if self.renamed(node):  # written ``name = base`` first: not a name it reads
                reads = {self.names.get(v) for v in node.inputs()}
                while name in reads:
                    name = self.fresh(name + "_", position)
        self.claim(value, name)
        if node.op.name == CAUGHT:  # (Python unbinds it when its handler ends)
            self.busy[name] = math.inf

    def region(self, region: Region) -> None:
        position, end = self.layout.position[region], self.layout.end[region]
        loop = not region.branches
        carried = [block.params[1:] if region.kind == "for" else block.params
                   for block in region.blocks] if loop else []
        group_names: list[str] = []
        for j, out in enumerate(region.outs):
            group_names.append(self.group_name(region, j, out, group_names))
        for j, (out, name) in enumerate(zip(region.outs, group_names)):
            previous = self.holder.get(name)
            self.claim(out, name)
            # A value a block yields is written straight into the variable, and the
            # backward sweep may read it after the region (in a branch taken the same way).
            inner = [block.results[j] for block in region.blocks if j < len(block.results)
                     and position < self.layout.defined.get(block.results[j], -1) < end]
            self.busy[name] = max([end, self.layout.last.get(out, end)]
                                  + [self.layout.last.get(value, end) for value in inner])
            for params in carried:
                self.names[params[j]] = name
            if loop:
                self.holder[name] = carried[-1][j]
            elif previous is not None and previous is not out:
                self.holder[name] = previous  # still readable until a branch overwrites it
            else:
                del self.holder[name]
            for block in region.blocks[1:] if region.kind == "while" else region.blocks:
                result = block.results[j]
                if isinstance(result, Value) and result not in self.prefer:
                    self.prefer[result] = name
        if region.kind == "for":
            index = region.body.params[0]
            self.claim(index, self.fresh(index.hint or "i", position))
            self.busy[self.names[index]] = end
        for block in region.blocks:
            self.block(block.nodes)
        for out, name in zip(region.outs, group_names):
            self.holder[name] = out

    def group_name(self, region: Region, j: int, out: Value, others: list[str]) -> str:
        """The variable of a region's ``j``-th out (and of its loop params)."""
        position, end = self.layout.position[region], self.layout.end[region]
        horizon = end if region.branches else position
        wanted = self.prefer.get(out)
        if wanted is not None and wanted not in others and self.busy.get(wanted, -1) >= end:
            holder = self.holder.get(wanted)
            if holder is None or self.layout.dead_after(holder, horizon):
                return wanted  # the variable of an enclosing region it is the result of
        init = region.init
        start = init[j] if j < len(init) else None
        if (isinstance(start, Value) and self.names.get(start)
                and self.layout.dead_after(start, position)
                and sum(1 for s in init if s is start) == 1
                and self.names[start] not in others
                and self.busy.get(self.names[start], -1) <= position):
            return self.names[start]  # the loop takes over the variable it starts from
        base = self.base_name(out) or self.base_name(self.first_named(region, j)) or "t"
        name = self.fresh(base, horizon)
        while name in others:
            name = self.fresh(name + "_", horizon)
        return name

    def first_named(self, region: Region, j: int) -> Value:
        for block in region.blocks:
            if j < len(block.results) and isinstance(block.results[j], Value):
                return block.results[j]
        return region.outs[j]


def assign_names(
    graph: Graph,
    reserved: frozenset[str] = frozenset(),
    reuse_dead: bool = False,
    shares_name_with: Callable[[Node], Value | None] = lambda node: None,
    layout: Layout | None = None,
) -> tuple[dict[Value, str], dict[Value, str]]:
    """Return ``(names, param_names)``: a name for every value the graph defines.

    ``shares_name_with(node)`` may return an input of ``node`` whose name the
    node's result must take over (for updates emitted in place).
    """
    layout = layout or Layout(graph)
    namer = _Namer(graph, layout, reserved, reuse_dead,
                   lambda node: _shared(shares_name_with, node))
    namer.renamed = lambda node: (shares_name_with(node) is not None
                                  and _shared(shares_name_with, node) is None)
    # A chain of in-place updates is one variable: name it after its most
    # meaningful member (``dx`` for the final gradient rather than ``t13``).
    for node in _all_nodes(graph.nodes):
        base = _shared(shares_name_with, node)
        if base is not None:
            root = namer.root.get(base, base)
            namer.root[node.out] = root
            if node.out.adjoint_of is not None or node.out.hint:
                namer.best[root] = node.out
    namer.block(graph.nodes)
    param_names = {p: namer.names[p] for p in graph.params}
    return namer.names, param_names


def _shared(shares_name_with: Callable[[Node], Value | None], node: Node) -> Value | None:
    """The input whose name ``node``'s result takes over: not across the start of the
    backward sweep, where a user's ``z`` updated in place becomes ``dz = z``."""
    base = shares_name_with(node)
    if base is None or base.node is None:
        return base
    return base if base.node.phase == node.phase or not base.hint else None


def _all_nodes(nodes: list):
    for node in nodes:
        if isinstance(node, Region):
            for block in node.blocks:
                yield from _all_nodes(block.nodes)
        else:
            yield node


__all__ = ["Layout", "assign_names"]
