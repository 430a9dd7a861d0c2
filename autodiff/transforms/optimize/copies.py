"""Copy propagation: a value that only renames another is replaced by the other.

Straight-line renames (``y = x`` in the user's code) never reach the graph: the
frontend binds the name to the same value. What does reach it:

- a loop-carried value the body hands back unchanged (a list of adjoints the
  backward loop pops from, a variable the loop never assigns): the loop's
  result, and its value inside every iteration, is the initial value;
- a value after an ``if`` that every branch gives the same (a value from
  before the branch, or one constant);
- a value popped off a tape that every iteration pushed the same value onto
  (once the loop above turned out to pass it through unchanged): the pop is
  that value, and the push, read by nobody, is left to dead-code elimination;
- a value popped off a tape that holds what another holds (each pushed once, the
  same value at the same place, and popped once in the same block: a shape a loop
  tapes for two uses that turned out to be one): the pop is the other tape's,
  and the tape, popped by nobody, goes with its push;
- ``np.asarray`` of an array that is already an ndarray (``np.asarray`` or
  ``np.array`` of something), and ``+x`` of a floating value.

Nothing here copies an array, so nothing changes which arrays are updated in
place: codegen decides that from the reads of each value, and a replaced value's
readers become readers of its source, which then stays alive as long as they need
it. ``stop_gradient`` is not a copy: it must stay for derivatives of derivatives.

>>> from autodiff.graph.ir import Graph, Node, Value
>>> from autodiff.ops import OPS
>>> x, y, z = Value("x"), Value("y"), Value("z")
>>> g = Graph("f", [x], [Node(OPS["asarray"], (x,), y, None, "forward"),
...                      Node(OPS["asarray"], (y,), z, None, "forward")], [z])
>>> propagate_copies(g).outputs == [y]
True
"""

from __future__ import annotations

from autodiff.graph.ir import Const, Graph, Node, Operand, Region, Value, walk
from autodiff.ops.control import tape_pop, tape_push
from autodiff.transforms.optimize.dce import drop_slots
from autodiff.transforms.optimize.substitution import Substitution, rewrite_nodes


def propagate_copies(graph: Graph) -> Graph:
    """Remove, in place, nodes and region values that rename another value."""
    replaced = Substitution()
    tapes = _Tapes(graph)
    return rewrite_nodes(graph, replaced, lambda node, kept, scope: _renamed(node, tapes),
                         on_region=lambda region, scope: _forward_unchanged_slots(region,
                                                                                   replaced))


class _Tapes:
    """The one push onto each tape, and the values visible wherever a tape is popped."""

    def __init__(self, graph: Graph) -> None:
        self.pushes: dict[Value, list[Node]] = {}
        self.pops: dict[Value, list[Node]] = {}  # (in the order they come)
        self.where: dict[Node, int] = {}  # each push and pop: the block it is in
        self._locate(graph.nodes, 0)
        self.first_pop: dict[tuple, Node] = {}  # (push's block, value, pop's block) -> pop
        for tape, pops in self.pops.items():
            key = self._key(tape, pops)
            if key is not None:
                self.first_pop.setdefault(key, pops[0])
        # Values of the function's top level: defined before any loop that pushes them.
        self.top = set(graph.params) | {out for node in graph.nodes for out in node.outs}

    def _locate(self, nodes: list, block: int) -> None:
        for node in nodes:
            if isinstance(node, Region):
                for inner in node.blocks:
                    self._locate(inner.nodes, id(inner))
            elif node.op is tape_push or node.op is tape_pop:
                found = self.pushes if node.op is tape_push else self.pops
                found.setdefault(node.args[0], []).append(node)
                self.where[node] = block

    def _key(self, tape: Value, pops: list[Node]) -> tuple | None:
        """Where ``tape``'s one push is, what it pushes, and where its one pop is."""
        pushes = self.pushes.get(tape, [])
        if len(pushes) != 1 or len(pops) != 1 or not isinstance(pushes[0].args[1], Value):
            return None
        return (self.where[pushes[0]], pushes[0].args[1], self.where[pops[0]])

    def invariant(self, tape: Operand) -> Operand | None:
        """What every pop of ``tape`` gives, when every push pushes the same value
        from outside the loop (a loop-carried value the loop turned out not to change)."""
        pushes = self.pushes.get(tape, [])
        if len(pushes) != 1 or len(self.pops.get(tape, [])) != 1:
            return None
        pushed = pushes[0].args[1]
        if isinstance(pushed, Const) or isinstance(pushed, Value) and pushed in self.top:
            return pushed
        return None

    def twin(self, pop: Node) -> Value | None:
        """What an earlier pop in the same block gives, when its tape holds the same
        values as ``pop``'s (each pushed once, the same value in the same block)."""
        key = self._key(pop.args[0], self.pops.get(pop.args[0], []))
        first = self.first_pop.get(key) if key is not None else None
        return None if first is None or first is pop else first.out


def _renamed(node: Node, tapes: _Tapes) -> Operand | None:
    """The value ``node``'s result is another name for, if any."""
    name, args = node.op.name, node.args
    if name == "tape_pop":
        same = tapes.invariant(args[0])
        return same if same is not None else tapes.twin(node)
    if name == "asarray" and _always_ndarray(args[0]):  # np.asarray of one is itself
        return args[0]
    if name == "positive" and isinstance(args[0], Value) and args[0].floating:
        return args[0]
    return None


def _always_ndarray(operand: Operand) -> bool:
    node = operand.node if isinstance(operand, Value) else None
    return isinstance(node, Node) and node.op.ndarray


def _forward_unchanged_slots(region: Region, replaced: Substitution) -> None:
    """Drop the values ``region`` passes through unchanged; their readers read the source."""
    sources = _unchanged_slots(region)
    if not sources:
        return
    for j, source in sources.items():
        replaced[region.outs[j]] = source
        if not region.branches:
            for block in region.blocks:
                replaced[_carried_params(region, block)[j]] = source
    for block in region.blocks:
        replaced.block(block)
    drop_slots(region, sorted(sources))


def _unchanged_slots(region: Region) -> dict[int, Operand]:
    """``{j: source}`` for each value of ``region`` that is ``source`` whatever runs."""
    if region.branches:
        found = {}
        for j in range(len(region.outs)):
            results = [block.results[j] for block in region.blocks]
            if _same_everywhere(results):
                found[j] = results[0]
        return found
    carried = _carried_params(region, region.body)
    return {j: region.init[j] for j, param in enumerate(carried)
            if region.body.results[j] is param and j != region.until}


def _carried_params(region: Region, block) -> list[Value]:
    return block.params[1:] if region.kind == "for" and block is region.body else block.params


def _same_everywhere(results: list[Operand]) -> bool:
    first = results[0]
    if isinstance(first, Value):
        return all(result is first for result in results)
    return isinstance(first, Const) and all(
        isinstance(result, Const) and result == first for result in results)


__all__ = ["propagate_copies"]
