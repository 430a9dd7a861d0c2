"""Memory in generated code: which updates run in place, and when arrays are freed.

An update (``dx += t``, ``out[i] = v``) writes into its input's storage when
nothing reads the old value any more and the array is one the function owns.
A temporary is ``del``'d after its last read, so that the next array can reuse
its memory instead of landing in fresh pages.
"""

from __future__ import annotations

import bisect
import math

from autodiff.graph.ir import UNDEFINED, Graph, Node, Region, Value, operand_values, walk
from autodiff.graph.names import Layout
from autodiff.graph.shapes import SCALAR


class InPlace:
    """Which nodes may write their result into their first input's storage.

    An update runs in place when its input is read by nothing afterwards (in a
    graph computing with real values alone), is an array this function owns (created by it, never one of the caller's, never
    pushed onto a tape or appended to a list, never the same object as a variable
    still in use), and
    no view of it is still alive.
    """

    def __init__(self, graph: Graph, layout: Layout) -> None:
        self.layout = layout
        self.views: dict[Value, list[Value]] = {}
        pushed: set[Value] = set()
        for node in walk(graph.nodes):
            if isinstance(node, Region) or node.op.inline:
                continue
            if node.op.holds:  # a list or tape now holds it: an update would show there
                pushed.update(operand_values(node.named_args[node.op.holds]))
            elif not node.op.fresh:
                for value in node.inputs():
                    self.views.setdefault(value, []).append(node.out)
        self.pushed = pushed
        self.owned = _owned_values(graph, layout, pushed)
        self.decided: dict[Node, Value | None] = {}
        # Real and complex arrays meet in a graph that computes with complex values (the
        # adjoint of a real value may be complex): no update writes into its input there.
        self.mixed_dtypes = graph.complex

    def __call__(self, node: Node) -> Value | None:
        if node not in self.decided:
            self.decided[node] = self._base(node)
        return self.decided[node]

    def _base(self, node: Node) -> Value | None:
        if isinstance(node, Region) or node.op.inplace is None:
            return None
        base = node.args[0]
        position = self.layout.position[node]
        if not isinstance(base, Value) or not self.layout.dead_after(base, position):
            return None
        if base.node is not None and base.node.op.inline:
            return None  # written as an expression (a global, stop_gradient): no variable to take
        if sum(1 for v in node.inputs() if v is base) != 1:
            return None
        if node.op.inplace_mutates:
            if base not in self.owned or self.mixed_dtypes:
                return None  # never write into the caller's arrays or into a view
            # A view on a tape or in a list lives on after its last read: the backward
            # sweep (or the list) would see the update.
            if any(view in self.pushed or not self.layout.dead_after(view, position)
                   for view in self.aliases(base)):
                return None
        return base

    def aliases(self, value: Value) -> set[Value]:
        found, todo = set(), list(self.views.get(value, ()))
        while todo:
            item = todo.pop()
            if item not in found:
                found.add(item)
                todo.extend(self.views.get(item, ()))
        return found


def _owned_values(graph: Graph, layout: Layout, pushed: set[Value]) -> set[Value]:
    """Values that are arrays of the function's own, safe to update in place.

    A fresh op's result is owned (an in-place update of an owned input is, and
    anything else is a new array). A region's variable is owned when every value
    flowing into it is owned and dies there: the greatest such set.
    """
    owned: set[Value] = set()
    regions = []
    views: dict[Value, list[Value]] = {}
    for node in walk(graph.nodes):
        if isinstance(node, Region):
            regions.append(node)
            owned.update(node.outs)
            for block in node.blocks:
                owned.update(block.params[1:] if node.kind == "for" else block.params)
        elif node.op.fresh and not node.op.inline:
            owned.add(node.out)
        elif not node.op.inline and not node.op.holds:
            for value in node.inputs():
                views.setdefault(value, []).append(node.out)
    owned -= pushed

    def aliases(value: Value) -> set[Value]:
        found, todo = set(), list(views.get(value, ()))
        while todo:
            item = todo.pop()
            if item not in found:
                found.add(item)
                todo.extend(views.get(item, ()))
        return found

    # A value flowing into a region without dying there is read under two names
    # (``h_1 = h``): an update through one would change the other.
    for region in regions:
        position = layout.position[region]
        sources = [(v, position) for v in region.init] + [
            (r, layout.block_end[id(b)]) for b in region.blocks
            if region.kind != "while" or b is region.body for r in b.results]
        for value, where in sources:
            if isinstance(value, Value) and not layout.dead_after(value, where):
                owned.discard(value)

    def flows_in(value, position) -> bool:
        return isinstance(value, Value) and value in owned and layout.dead_after(value, position)

    changed = True
    while changed:
        changed = False
        for region in regions:
            position = layout.position[region]
            for j, out in enumerate(region.outs):
                carried = (region.body.params[1:] if region.kind == "for"
                           else region.body.params) if not region.branches else []
                inside = [(block.params[1:] if region.kind == "for" else block.params)[j]
                          for block in region.blocks] if carried else []
                # The variable inside the loop may be owned when the value after it is not
                # (read under another name after the loop): each is checked on its own.
                if out not in owned and not any(p in owned for p in inside):
                    continue
                sources = []
                if not region.branches:
                    start = region.init[j]
                    sources.append((start, position))
                    if sum(1 for s in region.init if s is start) > 1:
                        sources.append((None, position))
                    # a view of it still alive, or carried in beside it (ans = score[::-1]):
                    # an update of the variable would change the view
                    if isinstance(start, Value) and any(
                            view in region.init or not layout.dead_after(view, position)
                            for view in aliases(start)):
                        sources.append((None, position))
                for block in region.blocks[1:] if region.kind == "while" else region.blocks:
                    sources.append((block.results[j], layout.block_end[id(block)]))
                ok = all(value is UNDEFINED or (carried and value is carried[j])
                         or flows_in(value, where) for value, where in sources)
                if not ok:
                    owned.discard(out)
                    owned.difference_update(inside)
                    changed = True
    return owned


def releases(graph: Graph, names: dict[Value, str], in_place, layout: Layout) -> dict:
    """Variables to ``del`` after a statement: the last one of its block reading them.

    Without this every temporary lives until the function returns (or, in a
    loop, until the next iteration replaces it), and each new array lands in
    fresh memory; large inputs then spend more time in page faults than in
    arithmetic. A value is released in the block that defines it, once no other
    value of the same variable is still needed.
    """
    by_name: dict[str, list[Value]] = {}
    for node in walk(graph.nodes):
        values = list(node.outs)
        if isinstance(node, Region):
            values += [p for block in node.blocks for p in block.params]
        for value in values:
            if names.get(value):
                by_name.setdefault(names[value], []).append(value)
    lives: dict[str, _Lives] = {}  # (built for the names asked about)
    params = {names[p] for p in graph.params}
    releases: dict[object, list[str]] = {}

    def visit(nodes: list) -> None:
        # The nodes of a block follow one another: their spans are disjoint and in order.
        spans = [(layout.position[n], layout.end.get(n, layout.position[n]), n) for n in nodes]
        starts = [first for first, _, _ in spans]
        for node in nodes:
            if isinstance(node, Region):
                for block in node.blocks:
                    visit(block.nodes)
            elif node.op.nondiff_output or node.op.inline or node.op.statement:
                continue  # numbers and shape tuples: nothing worth freeing
            for value in node.outs:
                name, last = names.get(value), layout.last.get(value, -1)
                if not name or name in params or value.shape is SCALAR or last in (math.inf, -1):
                    continue
                if name not in lives:
                    lives[name] = _Lives(by_name[name], layout)
                if lives[name].read_across(last):
                    continue  # the variable still holds a value someone reads
                index = bisect.bisect_right(starts, last) - 1
                found = spans[index] if index >= 0 and last <= spans[index][1] else None
                if found is None or found[2] is node:
                    continue
                holder = found[2]
                if lives[name].defined_within(layout.defined.get(value, -1), found[1]):
                    continue  # rebound (and perhaps released) before this point
                if any(names.get(out) == name for out in holder.outs):
                    continue  # the name lives on in the next value
                if isinstance(holder, Node) and in_place(holder) is not None and names.get(
                        in_place(holder)) == name:
                    continue
                releases.setdefault(holder, []).append(name)

    visit(graph.nodes)
    return {holder: sorted(set(items)) for holder, items in releases.items()}


class _Lives:
    """The values one variable holds, by where each is defined: queries in log time.

    A long function reuses a few names for many values; asking of each value
    whether another one of its name is alive at a point would otherwise read
    them all.
    """

    def __init__(self, values: list[Value], layout: Layout) -> None:
        spans = sorted((layout.defined.get(v, -1), layout.last.get(v, -1)) for v in values)
        self.starts = [start for start, _ in spans]
        self.reach: list[float] = []  # the furthest last read among the values defined so far
        for _, last in spans:
            self.reach.append(max(last, self.reach[-1]) if self.reach else last)

    def read_across(self, point: float) -> bool:
        """Whether a value defined before ``point`` is read after it."""
        count = bisect.bisect_left(self.starts, point)
        return count > 0 and self.reach[count - 1] > point

    def defined_within(self, after: float, until: float) -> bool:
        """Whether a value is defined after ``after`` and no later than ``until``."""
        index = bisect.bisect_right(self.starts, after)
        return index < len(self.starts) and self.starts[index] <= until
