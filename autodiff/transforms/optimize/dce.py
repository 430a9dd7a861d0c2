"""Dead-code elimination: drop nodes, loop-carried values and regions nothing reads.

A tape (see :mod:`autodiff.transforms.reverse`) is live only while something
reads what is popped off it: pushes onto a tape nobody pops are dead too, and so
are the cuts a handler makes to it.

The part of a ``try``'s body its handlers guard stays whole while the ``try`` does:
a node there that nothing reads may still raise, and so decide which path runs.
"""

from __future__ import annotations

from autodiff.graph.ir import Graph, Node, Region, operand_values, walk
from autodiff.ops.control import tape_pop, tape_push
from autodiff.ops.exceptions import TAPE_TRUNCATE


def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove, in place, every node no output depends on (ops with effects stay)."""
    live = {v for output in graph.outputs for v in operand_values(output)}
    nodes = list(walk(graph.nodes))
    needed: set = set()
    changed = True
    while changed:
        changed = False
        popped = {n.args[0] for n in nodes if isinstance(n, Node) and n.op is tape_pop
                  and n.out in live}
        for node in reversed(nodes):
            if isinstance(node, Region):
                # A needed region passes liveness on at once, to the values it starts
                # from among them: the loop before it is met next in this sweep, not
                # in the next one (a sweep per loop of a chain of loops was quadratic).
                if node not in needed and _region_reads(node, live, needed):
                    needed.add(node)
                    changed = True
                if node in needed:
                    changed |= _carry_region(node, live, needed)
                continue
            if node in needed:
                continue
            if node.op is tape_push or node.op is TAPE_TRUNCATE:
                wanted = node.args[0] in popped
            elif node.op is tape_pop:
                wanted = node.out in live
            else:
                wanted = node.out in live or node.op.effect
            if wanted:
                needed.add(node)
                live.update(node.inputs())
                changed = True
        changed |= _carry_liveness(nodes, live, needed)
    graph.nodes = _prune(graph.nodes, live, needed)
    return graph


def _region_reads(region: Region, live: set, needed: set) -> bool:
    """Whether the region must run: a value it defines is live, or it holds a needed effect."""
    if any(out in live for out in region.outs):
        return True
    return any(n in needed for block in region.blocks for n in walk(block.nodes))


def _slots(region: Region):
    """``(j, out, params, results)`` for each value the region defines."""
    for j, out in enumerate(region.outs):
        if region.branches:
            yield j, out, [], [b.results[j] for b in region.blocks]
        else:
            params = [b.params[j + 1] if region.kind == "for" and b is region.body
                      else b.params[j] for b in region.blocks]
            yield j, out, params, [region.body.results[j]]


def _carry_liveness(nodes: list, live: set, needed: set) -> bool:
    """Make live what feeds a live slot of a needed region; True when anything changed."""
    changed = False
    for region in nodes:
        if isinstance(region, Region) and region in needed:
            changed |= _carry_region(region, live, needed)
    return changed


def _carry_region(region: Region, live: set, needed: set) -> bool:
    """Make live what feeds a live slot of the needed ``region``; True when anything
    changed."""
    changed = False
    before = len(live)
    if region.branches:  # (a condition, a selector, or the classes a try catches)
        live.update(v for arg in region.args for v in operand_values(arg))
    if region.kind == "try":  # (a push onto a tape never raises: it goes as usual)
        for node in walk(region.guarded()):
            if node not in needed and not (isinstance(node, Node) and node.op is tape_push):
                needed.add(node)
                live.update(node.inputs())
                changed = True
    if region.kind == "for":
        for arg in region.args[:4]:
            live.update(operand_values(arg))
    if region.kind == "while":
        live.update(operand_values(region.blocks[0].results[0]))
    for j, out, params, results in _slots(region):
        if out in live or any(p in live for p in params) or j == region.until:
            live.add(out)
            live.update(params)
            for result in results:
                live.update(operand_values(result))
            if not region.branches:
                live.update(operand_values(region.init[j]))
    return changed or len(live) != before


def _prune(nodes: list, live: set, needed: set) -> list:
    kept = []
    for node in nodes:
        if node not in needed:
            continue
        if isinstance(node, Region):
            for block in node.blocks:
                block.nodes = _prune(block.nodes, live, needed)
            _drop_dead_slots(node, live)
        kept.append(node)
    return kept


def _drop_dead_slots(region: Region, live: set) -> None:
    dead = [j for j, out, params, _ in _slots(region)
            if out not in live and not any(p in live for p in params) and j != region.until]
    drop_slots(region, dead)


def drop_slots(region: Region, dead: list[int]) -> None:
    """Remove the values ``dead`` (indices into ``region.outs``) from ``region``: the
    outs, and for a loop the initial values, block params and results that carry them."""
    if not dead:
        return
    keep = [j for j in range(len(region.outs)) if j not in dead]
    region.outs = [region.outs[j] for j in keep]
    if region.branches:
        for block in region.blocks:
            block.results = [block.results[j] for j in keep]
        return
    head = region.args[:4] if region.kind == "for" else ()
    region.args = (*head, *(region.init[j] for j in keep))
    for block in region.blocks:
        offset = 1 if region.kind == "for" and block is region.body else 0
        block.params = block.params[:offset] + [block.params[offset + j] for j in keep]
    region.body.results = [region.body.results[j] for j in keep]
    if region.until is not None:
        region.until = keep.index(region.until)


__all__ = ["drop_slots", "eliminate_dead_code"]
