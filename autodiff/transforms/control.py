"""Reverse mode through branches and loops.

- ``if``: the backward sweep takes the same branch (the condition is a forward
  value) and runs that branch's adjoint code; the adjoints of values from
  outside the branch come out of the backward ``if`` as its results. A ``switch``
  likewise; a ``try`` records which of its blocks ran (:func:`path_taken`), and its
  backward sweep is a ``switch`` on that path: the body's adjoint code when the body
  completed, a handler's when it ran.
- loops: the backward sweep is a loop running the iterations in reverse
  (``reversed(range(...))``, or ``range(count)`` for a ``while`` loop, whose
  forward sweep counts its iterations). It carries the adjoints of the loop's
  carried values and accumulates those of values from outside the loop.

A backward loop body cannot read what the forward body computed: each
iteration overwrote it. Each such value is, in order of preference,

- the loop index, recomputed by the reversed range;
- recomputed from what is available (``x[t]``, shapes, index arithmetic);
- a carried value, restored from the *tape*: a plain list the forward body
  pushes the old value onto before overwriting it, and the backward body pops;
  when both the value before and after an iteration are needed, the one after
  is the one restored by the previous backward iteration, so an RNN stores one
  hidden state per step, not two;
- any other value, pushed where the forward sweep computes it and popped at
  the start of the matching backward block.
"""

from __future__ import annotations

from autodiff.graph.ir import (
    UNDEFINED,
    Block,
    Const,
    Graph,
    Node,
    Operand,
    Region,
    Value,
    defined_values,
    map_operand,
    operand_values,
    reads,
    walk,
)
from autodiff.graph.shapes import LIST, SCALAR, Token
from autodiff.ops import OPS
from autodiff.ops.control import tape_push
from autodiff.ops.exceptions import TAPE_LENGTH, TAPE_TRUNCATE
from autodiff.transforms.accumulations import gather_products
from autodiff.transforms.checkpoint import checkpoint_loop
from autodiff.transforms.optimize.dce import eliminate_dead_code


def _zeros_like(builder, value: Operand, adjoint_of: Value | None = None) -> Value:
    """A zero adjoint shaped like ``value`` (named as the adjoint of ``adjoint_of``)."""
    if getattr(value, "shape", None) is LIST:
        return builder.emit(OPS["zero_adjoints"], (value,))
    zeros = builder.emit(OPS["zero_adjoint"], (value,))
    zeros.shape, zeros.floating = getattr(value, "shape", zeros.shape), True
    if adjoint_of is not None and zeros.adjoint_of is None and not zeros.hint:
        zeros.adjoint_of = adjoint_of
    return zeros


def _as_adjoint(value: Operand, primal: Value) -> Operand:
    if isinstance(value, Value) and value.adjoint_of is None and not value.hint:
        value.adjoint_of, value.shape, value.floating = primal, primal.shape, True
    return value


def _nested_values(block: Block) -> list[Value]:
    """Values defined by the nodes of ``block`` and of the branches inside it, in order
    (a loop's values inside it are not read from outside the loop)."""
    values = []
    for node in block.nodes:
        values.extend(node.outs)
        if isinstance(node, Region) and node.branches:
            for inner in node.blocks:
                values.extend(_nested_values(inner))
    return values


def _path_out(region: Region) -> Value | None:
    """The out of a ``try`` that is ``k`` when its block ``k`` ran, if it has one."""
    for j, out in enumerate(region.outs):
        if all(j < len(block.results) and isinstance(block.results[j], Const)
               and type(block.results[j].value) is int and block.results[j].value == k
               for k, block in enumerate(region.blocks)):
            return out
    return None


def path_taken(region: Region) -> Value:
    """The out of the ``try`` region that says which of its blocks ran (0: the body
    completed; ``k``: handler ``k`` ran), added when it has none."""
    found = _path_out(region)
    if found is not None:
        return found
    path = Value("caught")
    path.shape = SCALAR
    for k, block in enumerate(region.blocks):
        block.results.append(Const(k))
    region.outs.append(path)
    path.node = region
    return path


def selector(region: Region) -> Value | None:
    """The value deciding which block of a branching region runs: an ``if``'s condition,
    a ``switch``'s selector, the path a ``try`` records (None while it records none)."""
    if region.kind == "try":
        return _path_out(region)
    return region.args[0] if isinstance(region.args[0], Value) else None


class ControlFlowReverser:
    """Builds the backward sweep of regions; ``reverse_nodes`` handles a block."""

    def __init__(self, reverser) -> None:
        self.reverser = reverser  # autodiff.transforms.reverse._Reverser
        self.builder = reverser.builder
        self.rev_block_of: dict[int, Block] = {}  # id(forward block) -> its backward block
        self._branches: dict[Value, list[tuple[Value, int]]] | None = None

    def _branch_of(self, value: Value, region: Region) -> int | None:
        """Which branch of ``region`` alone defines ``value``: the value comes from a
        branch of another region deciding by the same value (a derivative's forward
        branch, or the ``try`` whose path a ``switch`` follows), or from a branch nested
        in that branch."""
        if self._branches is None:
            self._branches = {}
            for node in walk(self.builder.graph.nodes):
                if isinstance(node, Region) and node.branches:
                    for index, block in enumerate(node.blocks):
                        for value_ in _nested_values(block):
                            self._branches.setdefault(value_, []).append((node, index))
        decided_by = selector(region)
        return next((index for other, index in self._branches.get(value, ())
                     if decided_by is not None and selector(other) is decided_by), None)

    # ----- if, switch, try -----

    def reverse_branches(self, region: Region, adjoints) -> None:
        """The backward sweep of a region running one of its blocks: the adjoint code of
        the block that ran, chosen as the forward sweep chose it."""
        incoming = {j: adjoints.total(out) for j, out in enumerate(region.outs)
                    if out in adjoints}
        # A backward branch reads the values of its forward branch directly (the same
        # branch runs): differentiating such a derivative again gives those values
        # adjoints from outside the region, which must flow back through it too; also
        # those of values an 'if' nested in the branch defines.
        read_across = [[v for v in _nested_values(block) if v in adjoints]
                       for block in region.blocks]
        if not incoming and not any(read_across):
            return
        builder = self.builder
        sweeps = []
        for block, across in zip(region.blocks, read_across):
            backward = Block()
            self.rev_block_of[id(block)] = backward
            local = self.reverser.new_adjoints()
            with builder.inside(backward):
                for j, g in incoming.items():
                    result = block.results[j]
                    if isinstance(result, Value) and result in self.reverser.active:
                        local.add(result, g, set())
                for value in across:
                    local.add(value, adjoints.total(value), set())
                if not block.raises():  # (a path that raised never reaches the backward sweep)
                    self.reverser.reverse_nodes(block.nodes, local)
            inside = defined_values([block])
            sweeps.append((backward, local, inside))
        targets = list(dict.fromkeys(
            v for _, local, inside in sweeps for v in local.parts if v not in inside))
        if not targets:
            return
        priors = {x: adjoints.total(x) for x in targets if x in adjoints}
        for branch, (backward, local, _) in enumerate(sweeps):
            with builder.inside(backward):
                for x in targets:
                    if region.blocks[branch].raises():
                        backward.results.append(UNDEFINED)
                    elif x in local:
                        if x in priors:
                            local.add(x, priors[x], set(), first=True)
                        backward.results.append(local.total(x))
                    elif x in priors:
                        backward.results.append(priors[x])
                    elif self._branch_of(x, region) not in (None, branch):
                        backward.results.append(UNDEFINED)  # x is only defined in the other
                    else:
                        backward.results.append(_zeros_like(builder, x))
        outs = []
        for x in targets:
            out = Value(adjoint_of=x)
            out.shape, out.floating = x.shape, True
            outs.append(out)
            adjoints.parts[x] = [out]
        kind, args = ("switch", (path_taken(region),)) if region.kind == "try" else (
            region.kind, region.args[:1])
        builder.nodes.append(Region(kind, args, outs, [b for b, _, _ in sweeps], region.loc,
                                    "backward"))

    # ----- loops -----

    def reverse_loop(self, region: Region, adjoints) -> None:
        builder, active = self.builder, self.reverser.active
        carried = region.carried()
        slots = [j for j, (out, param) in enumerate(zip(region.outs, carried))
                 if out in active or param in active]
        if not any(region.outs[j] in adjoints for j in slots):
            return
        incoming = {j: (adjoints.total(region.outs[j]) if region.outs[j] in adjoints
                        else _zeros_like(builder, region.outs[j])) for j in slots}
        count = self.iteration_count(region)
        body = region.body
        index = body.params[0] if region.kind == "for" else None
        rev_index = Value(index.hint if index is not None else "")
        rev_index.shape = SCALAR
        d_carried = {}
        for j in slots:
            d = Value(adjoint_of=region.outs[j])
            d.shape, d.floating = region.outs[j].shape, True
            d_carried[j] = d
        backward = Block([rev_index, *d_carried.values()])
        self.rev_block_of[id(body)] = backward
        local = self.reverser.new_adjoints()
        with builder.inside(backward):
            for j, d in d_carried.items():
                result = body.results[j]
                if isinstance(result, (Value,)) and result in active:
                    local.add(result, d, set())
            self.reverser.reverse_nodes(body.nodes, local)
            for j, d in d_carried.items():
                param = carried[j]
                backward.results.append(local.total(param) if param in local
                                        else _zeros_like(builder, d))
        inside = defined_values(region.blocks)
        targets = [v for v in local.parts if v not in inside]
        init = [incoming[j] for j in slots]
        outs = [Value(adjoint_of=carried[j]) for j in slots]
        for x in targets:
            accumulator = Value(adjoint_of=x)
            accumulator.shape, accumulator.floating = x.shape, True
            backward.params.append(accumulator)
            init.append(adjoints.total(x) if x in adjoints else _zeros_like(builder, x, x))
            with builder.inside(backward):
                local.add(x, accumulator, set(), first=True)
                backward.results.append(local.total(x))
            outs.append(Value(adjoint_of=x))
        for out in outs:
            out.shape, out.floating = out.adjoint_of.shape, True
        restored = _Tape(self, region, backward, rev_index).localize()
        for param, start, result in restored:
            backward.params.append(param)
            init.append(start)
            backward.results.append(result)
            outs.append(Value(param.hint))
        if region.kind == "for":
            start, stop, step = region.args[:3]
            if region.reverse and count is not None:  # it ran the last `count` indices, down
                saved, builder.loc = builder.loc, region.loc
                start = self.tail_start(start, stop, step, count)
                builder.loc = saved
            if count is None:  # (a range cut to its first ``count`` indices, as given)
                count = region.args[3]
            head = (start, stop, step, count)
        else:
            head = (Const(0), count, Const(1), Const(None))
        sweep = Region("for", (*head, *init), outs, [backward], region.loc, "backward")
        sweep.reverse = region.kind == "for" and not region.reverse
        builder.nodes.append(sweep)
        budget = self.reverser.checkpoint
        replaced = {}
        if budget is not None and not _inside_loop(builder.graph.nodes, region):
            checkpoint_loop(builder.graph, region, sweep, builder.nodes, budget)
        else:
            replaced = gather_products(builder.nodes, sweep,
                                       range(len(slots), len(slots) + len(targets)))
        for x, out in zip(targets, outs[len(slots):]):
            adjoints.parts[x] = [replaced.get(out, out)]
        for j, out in zip(slots, outs):
            start = region.init[j]
            if isinstance(start, Value) and start in active:
                adjoints.add(start, out, set())

    def tail_start(self, start: Operand, stop: Operand, step: Operand, count: Value) -> Value:
        """The first of the last ``count`` indices of ``range(start, stop, step)`` (when
        ``count`` is 0 the loop runs nothing, whatever it starts from)."""
        def emit(name: str, *args: Operand) -> Value:
            return self.builder.emit(OPS[name], args)

        length = emit("negative", emit("floor_divide", emit("subtract", start, stop), step))
        return emit("add", start, emit("multiply", emit("subtract", length, count), step))

    def iteration_count(self, region: Region) -> Value | None:
        """How many iterations ran: counted by the forward loop when it can stop early."""
        if region.kind == "for" and region.until is None:
            return None
        counter = Value("count")
        counter.shape = SCALAR
        start = Const(0)
        body = region.body
        params = []
        for block in region.blocks:
            param = Value("count")
            param.shape = SCALAR
            block.params.append(param)
            params.append(param)
        builder = self.builder
        saved = builder.phase, builder.loc
        builder.phase, builder.loc = "forward", region.loc
        with builder.inside(body):
            step = builder.emit(OPS["add"], (params[-1], Const(1)), hint="count")
        builder.phase, builder.loc = saved
        body.results.append(step)
        region.args = (*region.args, start)
        region.outs.append(counter)
        counter.node = region
        return counter


def cut_back_tapes(graph: Graph) -> None:
    """A ``try`` whose guarded part pushes onto tapes (a loop inside it) reads their
    lengths before it runs, and each handler cuts them back to those: the pushes of
    a body an exception ended are then never popped in place of another's."""
    for block in list(_blocks(Block(nodes=graph.nodes))):  # (graph.nodes itself first)
        for region in [node for node in block.nodes
                       if isinstance(node, Region) and node.kind == "try"]:
            at = next(i for i, node in enumerate(block.nodes) if node is region)
            block.nodes[at:at] = _tape_lengths(region)


def _tape_lengths(region: Region) -> list[Node]:
    """The lengths read before ``region`` of the tapes its guarded part pushes onto (and
    its handlers' cuts to them, put at their starts)."""
    pushed = dict.fromkeys(node.args[0] for node in walk(region.guarded())
                           if isinstance(node, Node) and node.op is tape_push)
    cut = {node.args[0] for handler in region.blocks[1:] for node in handler.nodes
           if isinstance(node, Node) and node.op is TAPE_TRUNCATE}
    lengths = []
    for tape in pushed:
        if tape in cut:
            continue
        length = Value("pushed")
        length.shape = SCALAR
        lengths.append(Node(TAPE_LENGTH, (tape,), length, region.loc, "forward"))
        for handler in region.blocks[1:]:
            handler.nodes.insert(0, Node(TAPE_TRUNCATE, (tape, length), Value(), region.loc,
                                         "forward"))
    return lengths


class _Tape:
    """Makes a backward loop body read only what it can: see the module docstring."""

    def __init__(self, control: ControlFlowReverser, region: Region, backward: Block,
                 rev_index: Value) -> None:
        self.control = control
        self.builder = control.builder
        self.region = region
        self.backward = backward
        self.rev_index = rev_index
        self.inside = defined_values(region.blocks)
        self.replacement: dict[Value, Operand] = {}
        self.prologues: dict[int, list[Node]] = {}
        self.where: dict[Value, tuple[Block, int]] = {}
        self.enclosing: dict[int, tuple[Region, Block]] = {}  # id(branch) -> its if, block
        self.invariants: dict[Value, bool] = {}
        self.witnessed: set[Value] = set()  # values the backward body reads the shape of
        self._locate(region.blocks)

    def _locate(self, blocks: list[Block]) -> None:
        """The forward block defining each value, and its position there."""
        for block in blocks:
            for param in block.params:
                self.where[param] = (block, -1)
            for position, node in enumerate(block.nodes):
                for out in node.outs:
                    self.where[out] = (block, position)
                if isinstance(node, Region) and node.branches:
                    for branch in node.blocks:
                        self.enclosing[id(branch)] = (node, block)
                    self._locate(node.blocks)

    def localize(self) -> list[tuple[Value, Operand, Operand]]:
        """Rewrite the backward body; return the restored-state slots it needs."""
        region, body = self.region, self.region.body
        _drop_dead_code(self.backward)  # (a rule's partials for inactive operands)
        needed = [v for v in dict.fromkeys(reads([self.backward])) if v in self.inside]
        if not needed:
            return []
        carried = region.carried()
        slots = []
        if region.kind == "for":
            self.replacement[body.params[0]] = self.rev_index
        witnesses = self.shape_witnesses(needed)
        for j, param in enumerate(carried):
            result = body.results[j]
            after = isinstance(result, Value) and result in self.inside and result in needed
            if (param in needed and after and result is not param
                    and param not in witnesses and result not in witnesses):
                popped = self.push_pop(param)
                state = Value(param.hint)
                state.shape, state.floating = result.shape, result.floating
                self.replacement[result] = state
                slots.append((state, region.outs[j], popped))
        for value in needed:
            if value not in witnesses:
                self.available(value, push=True)
        for value, shape in witnesses.items():
            # What still reads the value is a shape query, dead once it reads the shape.
            self.replacement[value] = self.available(shape, push=True)
            self.witnessed.add(value)
        self.substitute()
        for block_id, prologue in self.prologues.items():
            target = self.backward if block_id == id(body) else self.control.rev_block_of[
                block_id]
            target.nodes[:0] = prologue
        return slots

    def shape_witnesses(self, needed: list[Value]) -> dict[Value, Value]:
        """Values the backward body reads only for their shape (``unbroadcast(g, x)``,
        ``np.shape(x)``): the forward body keeps their shape, not the array."""
        readers: dict[Value, list] = {}
        for node in _nodes(self.backward):
            for position, arg in enumerate(node.args):
                for value in operand_values(arg):
                    readers.setdefault(value, []).append((node, position))
        for value in _result_reads(self.backward):
            readers.setdefault(value, []).append((None, -1))
        witnesses = {}
        for value in needed:
            if value in self.replacement:
                continue
            if not isinstance(value.node, Node) and value not in self.region.carried():
                continue
            uses = readers.get(value, [])
            if not uses or not all(_reads_shape(node, position) for node, position in uses):
                continue
            shape = Value(f"{value.hint}_shape" if value.hint else "shape")
            shape.shape = Token()
            loc = value.node.loc if isinstance(value.node, Node) else self.region.loc
            self.insert_after(value, Node(OPS["shape_of"], (value,), shape, loc, "forward"))
            for node, position in uses:
                if node.op.from_shape is not None:
                    args = list(node.args)
                    args[position] = shape
                    node.op, node.args = node.op.from_shape, tuple(args)
                else:
                    self.replacement[node.out] = shape  # a shape query: the shape itself
            witnesses[value] = shape
        return witnesses

    def insert_after(self, value: Value, node: Node) -> None:
        """Insert a forward node right after the definition of ``value``."""
        block, position = self.where[value]
        block.nodes.insert(position + 1, node)
        for other, (where_block, where_position) in self.where.items():
            if where_block is block and where_position > position:
                self.where[other] = (where_block, where_position + 1)
        for out in node.outs:
            self.where[out] = (block, position + 1)
            self.inside.add(out)

    def available(self, value: Value, push: bool) -> Operand | None:
        """The backward body's stand-in for ``value``; None when it would need a push
        and ``push`` is false."""
        if value not in self.inside:
            return value
        if value in self.witnessed:  # (its stand-in is its shape: a value read from it
            return None              # is pushed, not recomputed from the shape)
        if value in self.replacement:
            return self.replacement[value]
        node = value.node
        block, _ = self.where[value]
        across = id(block) in self.enclosing and self.read_elsewhere(value, block)
        if isinstance(node, Node) and self.recomputable(node) and not across:
            args = []
            for arg in node.args:
                mapped = self.map_operand(arg)
                if mapped is None:
                    break
                args.append(mapped)
            else:
                return self.recompute(value, node, tuple(args))
        if not push:
            return None
        if self.invariant(value):
            return self.last_value(value)
        return self.push_pop(value)

    def invariant(self, value: Value) -> bool:
        """Whether every iteration computes the same ``value``: the loop body computes it
        (outside any branch of it) by an op without effects from values defined before
        the loop, or from such values."""
        if value not in self.inside:
            return True
        known = self.invariants.get(value)
        if known is None:
            node = value.node
            self.invariants[value] = False  # (while deciding)
            known = (isinstance(node, Node) and self.where[value][0] is self.region.body
                     and not (node.op.effect or node.op.statement or node.op.per_call
                              or getattr(node.op, "opaque", False))
                     and all(self.invariant(v) for v in node.inputs()))
            self.invariants[value] = known
        return known

    def last_value(self, value: Value) -> Value:
        """A value every iteration computes alike, carried out of the loop once (its last
        iteration's) rather than taped at each: the backward body reads it there."""
        region = self.region
        hint = value.hint or "invariant"
        for block in region.blocks:  # (None before the first iteration: a shape of its own)
            param = Value(hint)
            param.shape, param.floating = Token(), value.floating
            block.params.append(param)
        region.body.results.append(value)
        region.args = (*region.args, UNDEFINED)  # (read only after an iteration ran)
        out = Value(hint)  # (None when no iteration ran: a shape of its own too)
        out.shape, out.floating = Token(), value.floating
        out.node = region
        region.outs.append(out)
        if not value.hint:
            value.hint = hint
        self.replacement[value] = out
        return out

    def map_operand(self, operand: Operand) -> Operand | None:
        missing = []

        def stand_in(value: Value) -> Value:
            found = self.available(value, push=False)
            if found is None:
                missing.append(value)
                return value
            return found

        mapped = map_operand(operand, stand_in)
        return None if missing else mapped

    @staticmethod
    def recomputable(node: Node) -> bool:
        if node.op.effect or node.op.statement:
            return False
        return node.op.recompute == "always" or (
            node.op.recompute == "scalar" and node.out.shape is SCALAR)

    def recompute(self, value: Value, node: Node, args: tuple) -> Value:
        copy = Value(value.hint)
        copy.shape, copy.floating = value.shape, value.floating
        block, _ = self.where[value]
        self.prologues.setdefault(id(block), []).append(
            Node(node.op, args, copy, node.loc, "backward"))
        self.replacement[value] = copy
        return copy

    def push_pop(self, value: Value) -> Value:
        """Push ``value`` where the forward sweep defines it; pop it in the matching
        backward block.

        A value of a branch that the backward sweep also reads outside that branch's
        backward block (a derivative's backward ``if`` reads its forward branch's values,
        and differentiating it again reads them in the backward of that backward ``if``,
        which runs first) leaves its ``if`` as a result (None from the other branches):
        it is pushed after the ``if`` and popped where the backward body starts. So is a
        value of a ``try``: pushed inside it, it would stay on the tape when an exception
        ended the block, and the pops of the iterations before would be off by one."""
        block, _ = self.where[value]
        if id(block) in self.enclosing and (self.read_elsewhere(value, block)
                                            or self.inside_try(block)):
            exported = self.export(value)
            popped = self.push_pop(exported)
            self.replacement[value] = popped
            return popped
        tape = Value(f"{value.hint}_stack" if value.hint else "tape")
        self.builder.graph.nodes.insert(0, Node(OPS["tape_new"], (), tape, None, "forward"))
        loc = value.node.loc if isinstance(value.node, Node) else self.region.loc
        push = Node(OPS["tape_push"], (tape, value), Value(), loc, "forward")
        self.insert_after(value, push)
        popped = Value(value.hint)
        popped.shape, popped.floating = value.shape, value.floating
        self.prologues.setdefault(id(block), []).append(
            Node(OPS["tape_pop"], (tape,), popped, loc, "backward"))
        self.replacement[value] = popped
        return popped

    def inside_try(self, block: Block) -> bool:
        """Whether ``block`` is one of a ``try``'s, or inside one, within the loop body."""
        while id(block) in self.enclosing:
            region, block = self.enclosing[id(block)]
            if region.kind == "try":
                return True
        return False

    def read_elsewhere(self, value: Value, block: Block) -> bool:
        """Whether the backward body reads ``value`` outside the backward of ``block``."""
        matching = self.control.rev_block_of.get(id(block))
        allowed = {id(b) for b in _blocks(matching)} if matching is not None else set()

        def reads_in(inner: Block) -> bool:
            for node in inner.nodes:
                if id(inner) not in allowed and any(
                        value in operand_values(arg) for arg in node.args):
                    return True
                if isinstance(node, Region) and any(reads_in(b) for b in node.blocks):
                    return True
            return id(inner) not in allowed and any(
                value in operand_values(result) for result in inner.results)

        return reads_in(self.backward)

    def export(self, value: Value) -> Value:
        """``value`` made a result of the branching regions around it, up to the loop
        body: the loop body's value that holds it (None when another branch ran)."""
        block, _ = self.where[value]
        current = value
        while id(block) in self.enclosing:
            region, outer = self.enclosing[id(block)]
            out = Value(value.hint)
            out.shape, out.floating = value.shape, value.floating
            for branch in region.blocks:
                branch.results.append(current if branch is block else Const(None))
            region.outs.append(out)
            out.node = region
            self.where[out] = (outer, next(i for i, node in enumerate(outer.nodes)
                                           if node is region))
            self.inside.add(out)
            current, block = out, outer
        return current

    def substitute(self) -> None:
        def stand_in(value: Value) -> Operand:
            while isinstance(value, Value) and value in self.replacement:
                value = self.replacement[value]
            return value

        def visit(block: Block) -> None:
            for node in block.nodes:
                node.args = tuple(map_operand(a, stand_in) for a in node.args)
                if isinstance(node, Region):
                    for inner in node.blocks:
                        visit(inner)
            block.results = [map_operand(r, stand_in) for r in block.results]

        visit(self.backward)
        for prologue in self.prologues.values():
            for node in prologue:
                node.args = tuple(map_operand(a, stand_in) for a in node.args)


def _inside_loop(nodes: list, region: Region, within: bool = False) -> bool | None:
    """Whether ``region`` is inside a loop's body (None when not found in ``nodes``)."""
    for node in nodes:
        if node is region:
            return within
        if isinstance(node, Region):
            for block in node.blocks:
                found = _inside_loop(block.nodes, region, within or not node.branches)
                if found is not None:
                    return found
    return None


def _drop_dead_code(block: Block) -> None:
    """Remove from ``block`` what none of its results reads."""
    scratch = Graph("block", [], block.nodes, list(block.results))
    eliminate_dead_code(scratch)
    block.nodes = scratch.nodes


def _blocks(block: Block):
    yield block
    for node in block.nodes:
        if isinstance(node, Region):
            for inner in node.blocks:
                yield from _blocks(inner)


def _nodes(block: Block):
    for node in block.nodes:
        yield node
        if isinstance(node, Region):
            for inner in node.blocks:
                yield from _nodes(inner)


def _result_reads(block: Block):
    for result in block.results:
        yield from operand_values(result)
    for node in block.nodes:
        if isinstance(node, Region):
            for inner in node.blocks:
                yield from _result_reads(inner)


def _reads_shape(node, position: int) -> bool:
    """Whether argument ``position`` of ``node`` is read for its shape alone."""
    if node is None or isinstance(node, Region):
        return False
    if node.op.params[position] not in node.op.shape_params:
        return False
    return node.op.from_shape is not None or node.op is OPS["shape"]


__all__ = ["ControlFlowReverser", "cut_back_tapes", "path_taken", "selector"]
