"""Algebraic simplification of a graph: each op's own rewrites (``@op.defrewrite``
in its block, with what rewrites.py offers them), among which:

- identities: multiply by one, add zero, divide by one, power of one, ``-(-a)``;
- constants gathered: ``-(a * 2)`` is ``a * -2``, ``(-a) * 2`` is ``a * -2``;
- broadcast scalars stay scalars: the adjoint of ``np.sum(v)`` is
  ``np.broadcast_to(g, np.shape(v))``; arithmetic between it and a scalar works
  on the scalar, and with an array of ``v``'s shape needs no broadcast (a seed
  ``np.broadcast_to(1.0, s) * y`` is ``y``); the sum of a broadcast scalar is
  the scalar times the number of elements;
- shapes: ``x.T.T`` is ``x``, and two transposes with explicit axes are one;
- in the backward sweep, ``a ** 2`` is ``a * a`` (cheaper on Python floats), and
  ``dx + -5.0`` is ``dx - 5.0``;
- each op's own build-time rewrite (``unbroadcast`` between equal shapes is a
  no-op) is tried again on the operands the other rewrites changed;
- shape queries read the earliest value of the same shape, so that a forward
  value computed only for its shape can be dropped; those of a value known to be
  0-d read nothing (``np.shape`` is ``()``, ``unbroadcast(g, s)`` sums ``g`` to
  ``()``).

A rewrite never changes a result's value or shape, nor its dtype or kind but for
the deliberate exceptions rewrites.py names (broadcast scalars).
"""

from __future__ import annotations

from autodiff.graph.ir import Block, Graph, Node, Region, Value
from autodiff.graph.shapes import DICT, LIST
from autodiff.ops.helpers import zero_adjoint
from autodiff.ops.shape import zeros_like
from autodiff.transforms.optimize.rewrites import Rewriter
from autodiff.transforms.optimize.substitution import Substitution, inherit, rewrite_nodes


def simplify(graph: Graph) -> Graph:
    """Apply the rewrites in place, forwarding each removed result to its replacement."""
    rewriter = Rewriter(graph, graph.uses())

    # ``earliest``: the first value of each shape token visible where a node is (a
    # value inside a branch or loop is not visible after it).
    def rewrite(node, kept: list, earliest: dict[int, Value]):
        _read_earliest_shape(node, earliest)
        rewriter.builder.loc, rewriter.builder.phase = node.loc, node.phase
        start = len(kept)
        with rewriter.builder.inside(Block(nodes=kept)):
            replacement = rewriter.rewrite(node)
        if replacement is not None and replacement is not node.out:
            if isinstance(replacement, Value):
                inherit(replacement, node.out,
                        new=any(replacement in n.outs for n in kept[start:]))
            return replacement
        _first_of_shape(earliest, [node.out])
        return None

    never_none = _NeverNone()
    return rewrite_nodes(graph, Substitution(), rewrite,
                         scope=_first_of_shape({}, graph.params),
                         on_block=lambda block, earliest: _first_of_shape(earliest, block.params),
                         on_region=lambda region, earliest: _first_of_shape(
                             earliest, [out for out in region.outs
                                        if out in never_none(region)]))


def _first_of_shape(earliest: dict[int, Value], values: list[Value]) -> dict[int, Value]:
    for value in values:
        earliest.setdefault(id(value.shape), value)
    return earliest


class _NeverNone:
    """The outs of each region that hold an array on every path: an adjoint a branch
    does not reach is None there (``dt = None``), and a shape read from it is wrong.
    (A path that raised yields nothing anyone reads.)"""

    def __init__(self) -> None:
        self.known: dict[Region, set[Value]] = {}

    def __call__(self, region: Region) -> set[Value]:
        if region not in self.known:
            sources = [block.results for block in region.blocks
                       if (region.kind != "while" or block is region.body)
                       and not block.raises()]
            if not region.branches:
                sources.append(list(region.init))
            self.known[region] = {out for j, out in enumerate(region.outs) if all(
                j < len(results) and self.array(results[j]) for results in sources)}
        return self.known[region]

    def array(self, result) -> bool:
        """Whether a region's result is an array on its path: a value, but not the out
        of a region that may be None, nor a zero made like one (``np.zeros_like(y)`` on
        the path of a ``return`` that left ``y`` unassigned, whose shape is ``()``)."""
        if not isinstance(result, Value):
            return False
        node = result.node
        if isinstance(node, Region):
            return result in self(node)
        if isinstance(node, Node) and node.op in (zeros_like, zero_adjoint):
            return not isinstance(node.args[0], Value) or self.array(node.args[0])
        return True


def _read_earliest_shape(node, earliest: dict[int, Value]) -> None:
    """Make a shape query read the first value of its operand's shape."""
    for param in node.op.shape_params:
        if param in node.op.kind_params:
            continue  # read for its dtype too: no other value of its shape stands in
        position = node.op.params.index(param)
        shaped = node.args[position]
        if isinstance(shaped, Value) and shaped.shape not in (LIST, DICT):  # (not arrays)
            args = list(node.args)
            args[position] = earliest.get(id(shaped.shape), shaped)
            node.args = tuple(args)


__all__ = ["simplify"]
