"""Batched tangents: a forward-mode derivative rewritten to push many tangents through
one sweep, each tangent an example along a leading batch axis (JAX's ``vmap`` of a
``jvp`` over a basis). A Jacobian (and so a Hessian, forward over a gradient) is then
one call, not one call per column.

The tangents the derivative takes (its ``tangent_params``, the leaves of a structured
tangent) are batched; a value is batched when an operand it is computed from is; a
node with a batched operand is rewritten to its batched form, the op's fact
(``Op.batch_family``, ``Op.batch_rule``). Primal values are never batched, so every
branch's condition, every loop's bounds and test, every index read from the code
stays as it is: a branch yielding a batched value on one path and not on the other
yields a batched one on both; a loop carrying a tangent carries it batched (its
first value broadcast over the batch); a list or a tape holds batched items once
any item put on it is batched. An op with no batched form runs once per example, in
a loop stacking the results (right for any op without effects); one with effects,
or a batched value where an op needs it unbatched (a loop's bounds, a branch's
condition, a list's index), makes :func:`batch` raise :class:`Unbatchable`, and the
Jacobian computes its columns one call each.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.sin(x) * x[0])
>>> H = ad.hessian(f)(np.array([0.5, 1.0, 2.0]))
>>> bool(np.allclose(H, H.T))
True
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Node,
    Operand,
    Region,
    SliceSpec,
    Token,
    Value,
    map_operand,
    operand_values,
    reads,
    walk,
)
from autodiff.graph.shapes import DICT, LIST, SCALAR
from autodiff.ops import OPS
from autodiff.ops.batching import batch_example_axes
from autodiff.ops.shape_rules import broadcast, scalar_result, shape_like


class Unbatchable(Exception):
    """The derivative has a node no batched form can run (an effect, a batched value
    where an unbatched one is needed): its Jacobian is computed column by column."""


def batch(graph: Graph, tangents: list[Value]) -> None:
    """Rewrite the forward-mode derivative ``graph`` in place so that ``tangents`` (its
    tangent leaves, each defined by a parameter or a node at its top) carry a leading
    batch axis, and so every value computed from them; :class:`Unbatchable` when some
    node cannot be."""
    read = set(reads([Block(graph.params, graph.nodes, graph.outputs)])) | set(graph.params)
    tangents = [t for t in tangents if t in read]  # (a tangent nothing reads is dropped)
    batched = _batched_values(graph, tangents)
    Batching(graph, tangents, batched, SameRanks(graph.nodes)).run()


# ----- which values have the same rank in each example -----


class SameRanks:
    """Classes of values known to have one rank (whatever the arguments' shapes): values
    of one shape token, a result of the shape of an operand (``shape_like``), an
    elementwise result of operands of one class, a value sliced on its axes alone.
    An elementwise op of batched operands of one class needs no alignment."""

    def __init__(self, nodes: list) -> None:
        self.parent: dict = {}
        for node in walk(nodes):
            if isinstance(node, Region):
                continue
            self.follow(node)

    def find(self, token):
        while self.parent.get(token, token) is not token:
            token = self.parent[token]
        return token

    def same(self, a: Operand, b: Operand) -> bool:
        return (isinstance(a, Value) and isinstance(b, Value)
                and self.find(a.shape) is self.find(b.shape))

    def join(self, a, b) -> None:
        a, b = self.find(a), self.find(b)
        if a is not b:
            self.parent[a] = b

    def follow(self, node: Node) -> None:
        rule, named = node.op.shape, dict(zip(node.op.params, node.args))
        if rule is None:
            return
        if isinstance(rule, shape_like) and isinstance(named.get(rule.param), Value):
            self.join(node.out.shape, named[rule.param].shape)
        elif isinstance(rule, broadcast):
            ranked = [named[p] for p in rule.params if not _rank_zero(named[p])]
            if ranked and all(self.same(ranked[0], v) for v in ranked):
                self.join(node.out.shape, ranked[0].shape)
        elif node.op.name == "getitem" and isinstance(named["a"], Value) and all(
                isinstance(e, SliceSpec) for e in (
                    named["index"] if isinstance(named["index"], tuple) else (named["index"],))):
            self.join(node.out.shape, named["a"].shape)


def _rank_zero(operand: Operand) -> bool:
    if isinstance(operand, Const):
        return np.ndim(operand.value) == 0
    return isinstance(operand, Value) and operand.shape is SCALAR


# ----- which values are batched -----


def _data_values(node: Node) -> list[Value]:
    """The values of a node's operands its result depends on (not those read for their
    shape, dtype or kind alone; none of a query's)."""
    op = node.op
    if op.query:
        return []
    skipped = set(op.shape_params) | set(op.kind_params)
    return [v for p, a in zip(op.params, node.args) if p not in skipped
            for v in operand_values(a)]


def _kept(op) -> set[str]:
    """A container op's parameters passed as they are: an index, a count, ``like``."""
    return set(op.lockstep_kept) | set(op.kind_params) | ({"like"} & set(op.params)) | (
        {"index", "count", "length", "key"} & set(op.params))


def _group(node: Node) -> list[Value]:
    """A container op's values that are all batched or all not: its result, the lists
    and tapes it reads and the items it puts on them."""
    kept = _kept(node.op)
    counted = node.op.shape is scalar_result  # a tape's length, not an item
    return [v for p, a in zip(node.op.params, node.args) if p not in kept
            for v in operand_values(a)] + ([] if counted else [node.out])


def _carried(region: Region) -> list[tuple[list[Value], list[Value]]]:
    """For each value a loop carries: its first value and the value the body yields for
    it (either batched makes it batched), and its params in each block and the
    region's out (batched then; the first and next values are made batched where they
    are not)."""
    offset = 1 if region.kind == "for" else 0
    groups = []
    for j, first in enumerate(region.init):
        given = [*operand_values(first), *operand_values(region.body.results[j])]
        carried = [block.params[j + offset] for block in region.blocks
                   if len(block.params) > j + offset]
        if j < len(region.outs):
            carried.append(region.outs[j])
        groups.append((given, carried))
    return groups


def _batched_values(graph: Graph, tangents: list[Value]) -> set[Value]:
    batched = set(tangents)
    while True:  # to a fixed point: a tape is batched by a push after its creation
        before = len(batched)
        _visit(graph.nodes, batched)
        if len(batched) == before:
            return batched


def _visit(nodes: list, batched: set[Value]) -> None:
    for node in nodes:
        if isinstance(node, Region):
            for block in node.blocks:
                _visit(block.nodes, batched)
            if node.branches:
                for i, out in enumerate(node.outs):
                    if any(v in batched for block in node.blocks if not block.raises()
                           for v in operand_values(block.results[i])):
                        batched.add(out)
            else:
                for given, carried in _carried(node):
                    if any(v in batched for v in given + carried):
                        batched.update(carried)
            continue
        if node.op.batch_family == "container":
            group = _group(node)
            if any(v in batched for v in group):
                batched.update(group)
        elif any(v in batched for v in _data_values(node)):
            batched.add(node.out)


# ----- the rewrite -----


FULL = SliceSpec(Const(None), Const(None), Const(None))


class Batching:
    """The rewrite of one graph; what an op's batched form (``Op.defbatch``) is given:
    ``batched(operand)``, ``emit(op, *operands)`` (a node before the one rewritten,
    its result batched unless ``batched=False``), ``broadcast(operand)`` (the same for
    every example, as a batched value) and ``one_example(operand)``."""

    def __init__(self, graph: Graph, tangents: list[Value], batched: set[Value],
                 ranks: SameRanks) -> None:
        self.graph, self.tangents, self.values, self.ranks = graph, tangents, batched, ranks
        self.renamed: dict[Value, Operand] = {}
        self.emitted: list = []
        self.current: Node | Region | None = None
        self.like: Value | None = None

    def batched(self, operand: Operand) -> bool:
        return any(v in self.values for v in operand_values(operand))

    def emit(self, op, *operands: Operand, batched: bool = True) -> Value:
        op = OPS[op] if isinstance(op, str) else op
        out = Value()
        node = Node(op, op.bind(operands, {}), out, self.current.loc if self.current else None,
                    self.current.phase if self.current else "tangent")
        out.floating = op.floating == "always" or (
            op.floating == "inputs" and any(v.floating for v in node.inputs()))
        self.emitted.append(node)
        if batched:
            self.values.add(out)
        return out

    def broadcast(self, operand: Operand) -> Operand:
        """``operand``, the same for every example, as a batched value."""
        if isinstance(operand, Const) and operand.value is None:
            return operand
        made = operand.node if isinstance(operand, Value) else None
        if isinstance(made, Node) and made.op.name == "zeros_like":  # zeros of the batch
            return self.emit("batch_zeros_like", *made.args, self.like)
        return self.emit("batch_broadcast", operand, self.like)

    def one_example(self, operand: Operand) -> Operand:
        """The first example of a batched value (for its shape, dtype or kind)."""
        return self.emit("getitem", operand, Const(0), batched=False)

    def elementwise(self, node: Node, op=None) -> Value | None:
        """``node`` as an elementwise op (``op`` in its place, when given)."""
        return _elementwise(self, node, *node.args, op=op)

    def as_it_is(self, node: Node) -> Value:
        """``node`` run on the batched values as it is (a check that holds of the batch
        as of each example): its result is no batched value."""
        self.emitted.append(node)
        self.values.discard(node.out)
        return node.out

    @staticmethod
    def index_of_examples(index: Operand) -> tuple | None:
        return batched_index(index)

    def run(self) -> None:
        graph = self.graph
        tangents = set(self.tangents)
        top = graph.nodes
        start = 0
        for i, node in enumerate(top):
            if isinstance(node, Node) and node.out in tangents:
                start = i + 1
        defined = {n.out for n in top[:start] if isinstance(n, Node)} | set(graph.params)
        if not tangents <= defined:
            raise Unbatchable("a tangent is not read at the top of the derivative")
        if any(self.batched(a) for n in top[:start] if n.out not in tangents for a in n.args):
            raise Unbatchable("a tangent is read before the last one is")
        if not self.tangents:
            return  # nothing reads a tangent: no value is batched
        self.like = Value("batch")
        like = Node(OPS["batch_like"], (tuple(self.tangents),), self.like, None, "tangent")
        graph.nodes = [*top[:start], like, *self.block(top[start:])]
        graph.outputs = [self.operand(o) for o in graph.outputs]
        for value in self.values:  # a batched value has a shape of its own
            value.shape = Token()

    def operand(self, operand: Operand) -> Operand:
        return map_operand(operand, lambda v: self.renamed.get(v, v))

    def block(self, nodes: list) -> list:
        outer, self.emitted = self.emitted, []
        try:
            for node in nodes:
                node.args = tuple(self.operand(a) for a in node.args)
                self.current = node
                if isinstance(node, Region):
                    self.region(node)
                else:
                    self.node(node)
            return self.emitted
        finally:
            self.emitted = outer

    def node(self, node: Node) -> None:
        op = node.op
        if not any(self.batched(a) for a in node.args):
            self.emitted.append(node)
            return
        if op.batch_family == "container":
            self.container(node)
            return
        data = set(_data_values(node))
        node.args = tuple(map_operand(a, lambda v: self.one_example(v)
                                      if v in self.values and v not in data else v)
                          for a in node.args)
        if node.out not in self.values:  # batched operands read for their shapes alone
            if any(self.batched(a) for a in node.args):
                raise Unbatchable(f"{op.name}: a batched operand of an unbatched result")
            self.emitted.append(node)
            return
        result = None
        if op.batch_rule is not None:  # (an op with effects runs on batched values by its own)
            result = op.batch_rule(self, node, *node.args)
            if result is node.out:
                return
        elif op.effect or op.statement or op.opaque:
            raise Unbatchable(f"{op.name} has effects")
        elif op.batch_family in _FAMILIES:
            result = _FAMILIES[op.batch_family](self, node, *node.args)
        if result is None:
            if op.effect or op.statement or op.opaque:
                raise Unbatchable(f"{op.name} has effects")
            result = self.per_example(node)
        if isinstance(result, Value) and not result.hint:
            result.hint = node.out.hint
        self.renamed[node.out] = result
        if isinstance(result, Value):
            self.values.add(result)
            self.ranks.join(result.shape, node.out.shape)  # (in each example)

    def container(self, node: Node) -> None:
        """A list or tape op: its items batched with the list (an unbatched item put on
        a batched list broadcast over the batch); its index or count as it is."""
        kept = _kept(node.op)
        if any(self.batched(a) for p, a in zip(node.op.params, node.args) if p in kept):
            raise Unbatchable(f"{node.op.name}: a batched index or count")
        if node.out in self.values:
            node.args = tuple(
                a if p in kept or self.batched(a) or _is_container(a) else self.broadcast(a)
                for p, a in zip(node.op.params, node.args))
        self.emitted.append(node)

    def per_example(self, node: Node) -> Value:
        """The op run once per example, the results stacked."""
        op = node.op
        if op.effect or op.statement or op.opaque or op.raises:
            raise Unbatchable(f"{op.name} has effects")
        if any(_is_container(v) for a in node.args for v in operand_values(a)
               if v in self.values):
            raise Unbatchable(f"{op.name}: a batched list or structure")
        if op.shape is not None and not op.shape.array:
            raise Unbatchable(f"{op.name} gives a list or a structure")
        count = self.emit("batch_size", self.like, batched=False)
        first = self.emit("list_new", batched=False)
        index, items = Value("i"), Value("items")
        index.shape = SCALAR
        outer, self.emitted = self.emitted, []
        operands = tuple(map_operand(a, lambda v: self.emit("getitem", v, index, batched=False)
                                     if v in self.values else v) for a in node.args)
        result = Value(node.out.hint)
        result.floating = node.out.floating
        self.emitted.append(Node(op, operands, result, node.loc, node.phase))
        grown = self.emit("list_append", items, result, batched=False)
        body, self.emitted = self.emitted, outer
        done = Value("items")
        self.emitted.append(Region("for", (Const(0), count, Const(1), Const(None), first),
                                   [done], [Block([index, items], body, [grown])],
                                   node.loc, node.phase))
        return self.emit("batch_stacked", done)

    def region(self, region: Region) -> None:
        if region.kind in ("if", "switch", "for") and any(
                self.batched(a) for a in region.args[:1 if region.kind != "for" else 4]):
            raise Unbatchable(f"a {region.kind} decided by a tangent")
        if region.kind == "for":  # carried values batched: their first value too
            region.args = tuple(
                a if i < 4 or not self._carries_batched(region, i - 4) or self.batched(a)
                else self.broadcast(a) for i, a in enumerate(region.args))
        elif region.kind == "while":
            region.args = tuple(a if not self._carries_batched(region, i) or self.batched(a)
                                else self.broadcast(a) for i, a in enumerate(region.args))
        if region.until is not None and self._carries_batched(region, region.until):
            raise Unbatchable("a loop ended by a tangent")
        outer = self.emitted
        for k, block in enumerate(region.blocks):
            block.nodes = self.block(block.nodes)
            self.emitted, saved = block.nodes, self.emitted
            try:
                block.results = [self.operand(r) for r in block.results]
                if region.kind == "while" and k == 0:
                    if any(self.batched(r) for r in block.results):
                        raise Unbatchable("a while loop tested on a tangent")
                    continue
                for i, result in enumerate(block.results):
                    wanted = (self._carries_batched(region, i) if not region.branches
                              else i < len(region.outs) and region.outs[i] in self.values)
                    if wanted and not self.batched(result) and not (
                            region.branches and block.raises()):
                        block.results[i] = self.broadcast(result)
            finally:
                self.emitted = saved
        self.emitted = outer
        self.emitted.append(region)

    def _carries_batched(self, region: Region, j: int) -> bool:
        offset = 1 if region.kind == "for" else 0
        return region.body.params[j + offset] in self.values


def _is_container(operand: Operand) -> bool:
    """A list, a tape, a dict or a structure (batched by its items, never indexed)."""
    if not isinstance(operand, Value):
        return False
    if operand.shape in (LIST, DICT):
        return True
    node = operand.node
    return isinstance(node, Node) and node.op.batch_family == "container"


# ----- the families -----


def _elementwise(b: Batching, node: Node, *args: Operand, op=None) -> Value | None:
    """An elementwise op (``op`` in its place, when given): each batched operand given
    axes of length 1 after its batch axis up to the result's rank, so that NumPy
    broadcasts each example alone."""
    op = op or node.op
    named = dict(zip(op.params, args))
    spread = node.op.shape.params
    if any(b.batched(a) and (p not in spread or not isinstance(a, Value))
           for p, a in named.items()):
        return None
    new = dict(named)
    for p in spread:
        if not b.batched(named[p]):
            continue
        others = tuple(named[q] for q in spread if q != p and not _rank_zero(named[q]))
        if others and not all(b.ranks.same(named[p], o) for o in others):
            new[p] = b.emit("batch_aligned", named[p], others,
                            Const(tuple(b.batched(o) for o in others)))
    return b.emit(op, *(new[p] for p in op.params))


def _reduce(b: Batching, node: Node, *args: Operand) -> Value | None:
    """A reduction over ``axis`` of each example: the axis counted past the batch axis."""
    op = node.op
    named = dict(zip(op.params, args))
    if any(b.batched(a) for p, a in named.items() if p != "a") or "axis" not in named:
        return None
    axis = named["axis"]
    if isinstance(axis, Const) and axis.value is not None:
        try:
            named["axis"] = Const(batch_example_axes(axis.value))
        except TypeError:
            return None
    else:
        named["axis"] = b.emit("batch_axes", axis, named["a"], batched=False)
    return b.emit(op, *(named[p] for p in op.params))


_FAMILIES = {"elementwise": _elementwise, "reduce": _reduce}


def batched_index(index: Operand) -> tuple | None:
    """The index of a batched array that selects in each example what ``index``
    selects: a full slice before it, when ``index`` is basic or holds one array (whose
    axes then stay in place); None otherwise."""
    if isinstance(index, Const) and isinstance(index.value, tuple):
        entries = tuple(Const(e) for e in index.value)
    else:
        entries = index if isinstance(index, tuple) else (index,)
    arrays = 0
    for entry in entries:
        if isinstance(entry, SliceSpec):
            continue
        if isinstance(entry, Const):
            value = entry.value
            if value is None or value is Ellipsis or isinstance(value, slice) or (
                    isinstance(value, (int, np.integer)) and not isinstance(value, bool)):
                continue
            if isinstance(value, (np.ndarray, list)) and np.asarray(value).dtype.kind in "iub":
                arrays += 1
                continue
            return None
        if not isinstance(entry, Value):
            return None
        if entry.shape is SCALAR and not entry.floating:
            continue  # an int known when the code runs
        made = entry.node
        if isinstance(made, Node) and made.op.shape is not None and made.op.shape.array:
            arrays += 1  # an array (never a tuple) known when the code runs
            continue
        return None
    return (FULL, *entries) if arrays <= 1 else None


__all__ = ["Batching", "Unbatchable", "batch", "batched_index"]
