"""A loop's reverse sweep under a memory budget: checkpoints instead of a whole tape.

``ad.grad(f, checkpoint=budget)`` (a number of states, or a size of memory such as
``"200MB"``) rewrites each outermost loop the reverse sweep reverses, once
:mod:`autodiff.transforms.control` has built its taped forward and backward loops:

- the forward loop runs its body without pushing anything, and keeps the states the
  schedule of ``ops/checkpoints.py`` asks for (``checkpoints.keep(i, state)``, the
  state being the carried values the body reads);
- each backward iteration, for step ``j``, restores the nearest state kept at or
  before ``j``, runs the body again from it up to step ``j`` (keeping states on the
  way), then runs step ``j`` once more with its pushes: the tapes hold one step, which
  the backward body pops as before.

The schedule is Revolve's binomial one when the trip count is known at the loop's
entry (a ``for`` over a range, without ``break``) and the online one otherwise (a
``while`` loop, a ``for`` that may stop early). A step run again must compute what it
computed the first time: a loop whose body reads a random draw or a library's function
run as it is, or changes a list or a dict from step to step, is left taped whole, with
a ``CheckpointWarning`` naming the line. Statements there for their
effects (a print, a write into the caller's dict) run once, in the forward loop. A
loop inside the checkpointed one is recomputed with it (its tapes hold one step of
the outer loop).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

from autodiff.errors import CheckpointWarning, NonDifferentiableError
from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    Region,
    Value,
    defined_values,
    operand_values,
    walk,
)
from autodiff.graph.shapes import DICT, LIST, SCALAR, Token
from autodiff.ops import OPS
from autodiff.ops.control import (
    checkpoint_keep,
    checkpoint_part,
    checkpoint_restore,
    checkpoints_ended,
    checkpoints_new,
    tape_push,
)
from autodiff.ops.exceptions import TAPE_LENGTH, TAPE_TRUNCATE

_TAPE_OPS = (tape_push, TAPE_LENGTH, TAPE_TRUNCATE)
RECOMPUTE = "recompute"  # the phase of the steps run again (graph/printing.PHASE_PREFIX)
_NOTE = "  [checkpointed "  # what the comments of a checkpointed loop add to its line


def checkpoint_loop(graph: Graph, region: Region, sweep: Region, sweep_parent: list,
                    budget) -> None:
    """Rewrite, in place, the taped forward loop ``region`` and its backward loop
    ``sweep`` (the last of ``sweep_parent``) to keep states within ``budget`` and
    recompute the steps from them."""
    if not any(isinstance(node, Node) and node.op is tape_push
               for node in walk(region.body.nodes)):
        return  # nothing taped: nothing to bound
    refused = _not_run_again(region)
    if refused is not None:
        why, where = refused
        loop = region.loc
        warnings.warn_explicit(
            f"checkpoint= leaves the loop of line {loop.lineno if loop else '?'} taped "
            f"whole: {why} (line {where.lineno if where else '?'}: "
            f"{where.text.strip() if where else ''}); compute that before the loop to "
            "bound its memory", CheckpointWarning,
            where.filename if where else "<unknown>", where.lineno if where else 0)
        return
    known_length = region.kind == "for" and region.until is None and (
        isinstance(region.args[3], Const) and region.args[3].value is None)
    schedule = "binomial schedule (Revolve)" if known_length else "online schedule"
    loc = region.loc and replace(region.loc, text=f"{region.loc.text}{_NOTE}"
                                 f"within {budget!r}: {schedule}]")
    _count_steps(region)
    taped = region.body  # the body as control.py left it: its params, nodes and results
    params = taped.params
    counter, index = params[-1], params[0] if region.kind == "for" else None
    read = {v for node in walk(taped.nodes) for v in node.inputs()}
    read.update(v for r in taped.results for v in operand_values(r))
    state = [p for p in region.carried()[:-1] if p in read]

    # The forward loop: the body without its pushes, keeping states.
    untaped = _copy(taped, {}, None, keep_tapes=False, effects=True)
    region.blocks[-1] = untaped
    parent = _holding(graph.nodes, region)
    at = parent.index(region)
    before: list[Node] = []
    steps: Operand = Const(None)
    length = None
    if region.kind == "for":
        length = _emit(before, "range_length", region.args[:3], loc, "forward", "steps")
        if known_length:
            steps = length
    positions = [params.index(p) for p in state]
    init = region.init
    first = tuple(init[position - (1 if index is not None else 0)] for position in positions)
    checkpoints = _emit(before, checkpoints_new, (steps, Const(budget), first), loc, "forward",
                        "checkpoints", Token())
    kept = untaped.params
    untaped.nodes.insert(0, Node(checkpoint_keep, (checkpoints, kept[-1], tuple(
        kept[p] for p in positions)), Value(), loc, "forward"))
    parent[at:at] = before
    ran = region.outs[-1]
    parent.insert(parent.index(region) + 1,
                  Node(checkpoints_ended, (checkpoints, ran), Value(), loc, "forward"))

    # Each backward step: restore, recompute up to the step, run the step taped.
    backward = sweep.body
    step_number = Value("step")
    step_number.shape = SCALAR
    backward.params.append(step_number)
    before_sweep: list[Node] = []
    last = _emit(before_sweep, "subtract", (ran, Const(1)), loc, "backward", "step")
    at = sweep_parent.index(sweep)
    sweep_parent[at:at] = before_sweep
    sweep.args = (*sweep.args, last)
    sweep.outs.append(Value("step"))
    sweep.outs[-1].node = sweep
    prologue: list[Node] = []
    restored = _emit(prologue, checkpoint_restore, (checkpoints, step_number), loc, "backward",
                     "restored", Token())
    start_at = _emit(prologue, checkpoint_part, (restored, Const(0)), loc, "backward", "i")
    held = _emit(prologue, checkpoint_part, (restored, Const(1)), loc, "backward", "state",
                 Token())
    # (a shape of its own: the state of another step than the one the body's tokens say)
    values = [_emit(prologue, checkpoint_part, (held, Const(k)), loc, "backward", p.hint,
                    Token()) for k, p in enumerate(state)]
    advance = _advance(region, taped, state, positions, checkpoints, start_at, step_number,
                       values, length, loc)
    prologue.append(advance)
    bindings: dict = dict(zip(state, advance.outs))
    bindings[counter] = step_number
    if index is not None:
        bindings[index] = backward.params[0]
    again, mapping = _copy(taped, bindings, RECOMPUTE, keep_tapes=True, effects=False,
                           with_mapping=True)
    prologue += again.nodes
    backward.nodes[:0] = prologue
    for value in defined_values([backward]):  # adjoints named after the values run again
        if value.adjoint_of in mapping:
            value.adjoint_of = mapping[value.adjoint_of]
    backward.results.append(_emit(backward.nodes, "subtract", (step_number, Const(1)), loc,
                                  "backward", "step"))


def refuse_through_checkpoints(graph: Graph, varied: set[Value]) -> None:
    """Refuse to differentiate a checkpointed derivative where what varies reaches the
    states it keeps: they come back from the checkpoints, a channel neither mode follows,
    and the derivative would miss their part."""
    for node in walk(graph.nodes):
        if (isinstance(node, Node) and node.op is checkpoint_keep
                and any(v in varied for v in operand_values(node.args[2]))):
            raise NonDifferentiableError(
                "this derivative keeps its loop's states in checkpoints (checkpoint=), "
                "and a derivative of it cannot follow them", **Location.error_fields(
                    node.loc and replace(node.loc, text=node.loc.text.split(_NOTE)[0])),
                hint="differentiate the function itself twice (ad.hessian, ad.hvp, "
                     "ad.grad of ad.grad) without checkpoint=")


def _not_run_again(region: Region) -> tuple[str, Location | None] | None:
    """Why the loop's steps, run again, would not compute what they did, and where."""
    for param, result in zip(region.carried(), region.body.results):
        if param.shape in (LIST, DICT) and result is not param:
            kind = "list" if param.shape is LIST else "dict"
            return (f"it changes a {kind} from one step to the next"
                    f"{f' ({param.hint!r})' if param.hint else ''}, which a step run again "
                    "would change a second time", region.loc)
    body = region.body
    read = {v for node in walk(body.nodes) for v in node.inputs()}
    read.update(v for r in body.results for v in operand_values(r))
    for node in walk(body.nodes):
        if (isinstance(node, Node) and getattr(node.op, "opaque", False)
                and not node.op.statement and node.out in read):
            return ("it reads a call that, run again, may give another result (a random "
                    "draw, a library's function run as it is)", node.loc or region.loc)
    return None


def _count_steps(region: Region) -> None:
    """Give the loop a carried count of its steps, from 0, its last param and out."""
    for block in region.blocks:
        param = Value("i")
        param.shape = SCALAR
        block.params.append(param)
    body = region.body
    count = Node(OPS["add"], (body.params[-1], Const(1)), Value("i"), region.loc, "forward")
    count.out.shape = SCALAR
    body.nodes.append(count)
    body.results.append(count.out)
    region.args = (*region.args, Const(0))
    ran = Value("ran")
    ran.shape = SCALAR
    ran.node = region
    region.outs.append(ran)


def _advance(region: Region, taped: Block, state: list[Value], positions: list[int],
             checkpoints: Value, start: Value, stop: Value, values: list[Value],
             length: Value | None, loc) -> Region:
    """``for i in range(start, stop)``: the body run again, untaped, from a state
    restored, keeping the states the schedule asks for. Step ``i`` of a ``for`` over
    ``range(first, _, step)`` has the index ``first + i * step``, and of one over its
    reverse, ``first + (length - 1 - i) * step``."""
    index = Value("i")
    index.shape = SCALAR
    params = []
    for p in state:
        param = Value(p.hint)
        param.shape, param.floating = p.shape, p.floating
        params.append(param)
    nodes: list = []
    bindings: dict = dict(zip(state, params))
    bindings[taped.params[-1]] = index
    if region.kind == "for":
        first, _, step = region.args[:3]
        steps_on = index
        if region.reverse:
            steps_on = _emit(nodes, "subtract", (_emit(nodes, "subtract", (
                length, Const(1)), loc, RECOMPUTE), index), loc, RECOMPUTE)
        bindings[taped.params[0]] = _emit(
            nodes, "add", (first, _emit(nodes, "multiply", (steps_on, step), loc, RECOMPUTE)),
            loc, RECOMPUTE, taped.params[0].hint)
    copy = _copy(taped, bindings, RECOMPUTE, keep_tapes=False, effects=False)
    nodes.append(Node(checkpoint_keep, (checkpoints, index, tuple(params)), Value(), loc,
                      RECOMPUTE))
    nodes += copy.nodes
    outs = []
    for p in state:
        out = Value(p.hint)
        out.shape, out.floating = p.shape, p.floating
        outs.append(out)
    results = [copy.results[position - (1 if region.kind == "for" else 0)]
               for position in positions]
    return Region("for", (start, stop, Const(1), Const(None), *values), outs,
                  [Block([index, *params], nodes, results)], loc, RECOMPUTE)


def _copy(block: Block, bindings: dict, phase: str | None, keep_tapes: bool,
          effects: bool, with_mapping: bool = False):
    """``block`` with fresh values (``bindings`` for its params) in ``phase``: with its
    pushes or without, with its statements there for their effects or without (and,
    ``with_mapping``, the map from its values to the copy's)."""
    copy, mapping = Graph("body", block.params, block.nodes, list(block.results)).copy(
        bindings, phase)
    nodes = [node for node in copy.nodes if _kept(node, keep_tapes, effects)]
    result = Block([mapping.get(p, p) for p in block.params], nodes, copy.outputs)
    return (result, mapping) if with_mapping else result


def _kept(node, keep_tapes: bool, effects: bool) -> bool:
    if isinstance(node, Region):
        for block in node.blocks:
            block.nodes = [n for n in block.nodes if _kept(n, keep_tapes, effects)]
        return True
    if node.op in _TAPE_OPS:
        return keep_tapes
    if node.op is checkpoint_keep:
        return False
    return effects or not node.op.statement


def _holding(nodes: list, target) -> list | None:
    """The list of nodes (the graph's, or a block's) holding ``target``."""
    if any(node is target for node in nodes):
        return nodes
    for node in nodes:
        if isinstance(node, Region):
            for block in node.blocks:
                found = _holding(block.nodes, target)
                if found is not None:
                    return found
    return None


def _emit(nodes: list, op, args: tuple, loc, phase: str, hint: str = "",
          shape=SCALAR) -> Value:
    out = Value(hint)
    out.shape = shape
    nodes.append(Node(OPS[op] if isinstance(op, str) else op, args, out, loc, phase))
    return out


__all__ = ["RECOMPUTE", "checkpoint_loop", "refuse_through_checkpoints"]
