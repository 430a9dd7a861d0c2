"""Forward mode: the Jacobian-vector product of a graph, as a new graph.

Each value that depends on a differentiated argument gets a *tangent*, its
directional derivative along the argument's tangent. The tangent of a node's
result is computed right after the node, by inlining one JVP rule per varied
parameter and summing the parts. Branches yield tangents beside their values;
loops carry them beside the values they carry. A ``try`` runs as it is, and the
tangents of its values are computed after it, by a ``switch`` on the path it took:
an error the tangents' code raises is then never taken for one the user's handlers
catch. (A ``try`` holding a loop, whose values each iteration overwrites, has its
tangents computed inside it, as a branch has.) The tape of a reverse sweep
(when differentiating a derivative) gets a twin tape of tangents, pushed and
popped in step with it.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sin(x) * x
>>> print(ad.jvp(f).source)  # doctest: +SKIP
"""

from __future__ import annotations

import functools

import numpy as np

from autodiff.errors import NonDifferentiableError
from autodiff.frontend import inline_rule
from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import (
    UNDEFINED,
    Block,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    Region,
    Value,
    operand_values,
    walk,
)
from autodiff.graph.shapes import LIST
from autodiff.ops import OPS, registry
from autodiff.ops.control import tape_pop, tape_push
from autodiff.transforms.activity import (
    refuse_gradients_into_settings,
    useful_values,
    varied_values,
)
from autodiff.transforms.checkpoint import refuse_through_checkpoints
from autodiff.transforms.complex_values import check_steps, jvp_rules
from autodiff.transforms.control import path_taken
from autodiff.transforms.optimize import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    optimize,
)
from autodiff.transforms.paths import gradient_path
from autodiff.transforms.zeros import keep_zeros


def forward_mode(primal: Graph, wrt: list[int | Value], *, optimized: bool = True) -> Graph:
    """Graph of ``primal`` followed by its outputs' tangents.

    Its params are the primal's followed by one tangent per param in ``wrt`` (by
    index; a value of ``primal`` there, a leaf of a structured argument, gets a
    tangent the caller defines); ``tangent_params`` lists every tangent, in
    ``wrt`` order. Its outputs are the primal outputs, then their tangents (a zero
    tangent for an output that does not depend on the arguments).
    """
    graph, mapping = primal.copy()
    graph.name = primal.name + "_jvp"
    if optimized:
        eliminate_common_subexpressions(graph)
    targets = [graph.params[i] if isinstance(i, int) else mapping[i] for i in wrt]
    varied, tapes = _varied(graph, targets)
    useful = useful_values(graph)
    refuse_gradients_into_settings(graph, varied, useful)
    check_steps(graph, varied)
    builder = GraphBuilder(graph, phase="tangent")
    transform = _Tangents(builder, varied, tapes)
    transform.primal = (primal, mapping)  # (for the path a refusal shows)
    transform.useful = useful
    tangent_params = []
    for target, param in zip(wrt, targets):
        tangent = Value(param.hint + "_dot")
        tangent.shape, tangent.floating = param.shape, True
        transform.tangents[param] = tangent
        tangent_params.append(tangent)
    # the tangents of params are params too; those of other values (the leaves of a
    # structured argument) are for the caller to define
    graph.params = graph.params + [t for i, t in zip(wrt, tangent_params) if isinstance(i, int)]
    top = Block(nodes=graph.nodes)
    builder.loc = graph.return_location
    outputs = list(graph.outputs)
    results = transform.block(top, lambda: [_map(transform.tangent, o) for o in outputs])
    graph.nodes = top.nodes
    graph.outputs = outputs + results
    graph.tangent_params = tangent_params
    graph.complex |= builder.made_complex  # (for the rules of its own derivative)
    if optimized:
        optimize(graph)
    else:
        eliminate_dead_code(graph)
    return graph


def _map(fn, operand: Operand):
    return tuple(_map(fn, item) for item in operand) if isinstance(operand, tuple) else fn(operand)


def _varied(graph: Graph, targets: list[Value]) -> tuple[set[Value], set[Value]]:
    """Values with a tangent, and the tapes that hold some (a value popped from a tape
    is varied when a varied value was pushed onto it)."""
    seeds = list(targets)
    while True:
        varied = varied_values(graph, seeds)
        refuse_through_checkpoints(graph, varied)
        nodes = [n for n in walk(graph.nodes) if not isinstance(n, Region)]
        tapes = {n.args[0] for n in nodes if n.op is tape_push
                 and any(v in varied for v in operand_values(n.args[1]))}
        popped = [n.out for n in nodes if n.op is tape_pop and n.args[0] in tapes
                  and n.out not in varied]
        if not popped:
            return varied, tapes
        seeds += popped


class _Tangents:
    def __init__(self, builder: GraphBuilder, varied: set[Value], tapes: set[Value]) -> None:
        self.builder = builder
        self.varied = varied
        self.tapes = tapes
        self.tangents: dict[Value, Operand] = {}
        self.named: set[Value] = set()
        self.useful: set[Value] = set()  # the values that reach an output

    # ----- tangents of operands -----

    def tangent(self, operand: Operand) -> Operand:
        """The tangent of ``operand``: its own, or a zero of its kind."""
        if isinstance(operand, tuple):
            return tuple(self.tangent(item) for item in operand)
        if isinstance(operand, Value) and operand in self.tangents:
            return self.tangents[operand]
        return self.emit("zero_tangent", operand)

    def emit(self, name: str, *args: Operand) -> Operand:
        return self.builder.emit(OPS[name], args)

    def name(self, value: Value, tangent: Operand) -> None:
        if isinstance(tangent, Value) and tangent.node is not None and tangent not in self.named:
            tangent.hint = value.hint + "_dot" if value.hint else ""
            tangent.shape, tangent.floating = value.shape, True
            self.named.add(tangent)
        self.tangents[value] = tangent

    # ----- blocks and nodes -----

    def block(self, block: Block, results=None) -> list[Operand]:
        """Rewrite ``block.nodes`` with tangents after each varied node; ``results()``
        gives the tangents the block yields, computed at its end."""
        nodes, block.nodes = block.nodes, []
        with self.builder.inside(block):
            for node in nodes:
                if isinstance(node, Region):
                    self.region(node)
                    continue
                block.nodes.append(node)
                self.builder.loc = node.loc
                self.node(node)
            return results() if results is not None else []

    def node(self, node: Node) -> None:
        op = node.op
        if op.jvp == "lockstep":
            self.lockstep(node)
            return
        if op.jvp == "structure":
            self.structure(node)
            return
        if node.out not in self.varied:
            return
        named = node.named_args
        active = [p for p in op.diff
                  if any(v in self.tangents for v in operand_values(named[p]))]
        if not active:
            return
        jvps = op.rules_for(self.builder.graph.complex)[1]
        missing = [p for p in active if p not in jvps and op.jvp != "linear"]
        where = Location.error_fields(node.loc)
        problem = op.vjp_check(named) if op.vjp_check is not None else None
        path = functools.partial(self.path_through, node)
        if (problem or missing) and node.out not in self.useful:
            return  # off the path (its result reaches no output): no tangent, as in reverse
        if problem:  # arguments the rules do not cover (np.linalg.norm with ord=1)
            raise NonDifferentiableError(problem, **where).on_path(path())
        if missing and op.missing_rule is not None:
            raise op.missing_rule(named, where).on_path(path())
        if missing:
            raise NonDifferentiableError(
                f"'{op.name}' has no forward-mode (JVP) rule for its argument '{missing[0]}'"
                + (f" ({op.no_gradient})" if op.no_gradient else ""), **where,
                hint="use reverse mode (mode='rev'), or ad.register_gradient a rule"
            ).on_path(path())
        jvps = jvp_rules(self.builder, node, active)
        parts = [self.part(node, p, jvps) for p in active]
        total = parts[0]
        for part in parts[1:]:
            total = self.emit("add_lists" if node.out.shape is LIST else "add_adjoints" if (
                op.name == "add_adjoints") else "add", total, part)  # (tuples item by item)
        self.name(node.out, total)

    def path_through(self, node: Node) -> str | None:
        """The gradient's path through ``node``, read in the function's own graph (this
        one is being rewritten)."""
        primal, mapping = self.primal
        back = {new: old for old, new in mapping.items() if isinstance(new, Value)}
        original = next((n for n in walk(primal.nodes) if not isinstance(n, Region)
                         and n.out is back.get(node.out)), None)
        if original is None:
            return None
        return gradient_path(primal, original, {back[v] for v in self.varied if v in back},
                             useful_values(primal))

    def part(self, node: Node, param: str, jvps: dict) -> Operand:
        """The result's tangent due to the tangent of ``param`` alone: its JVP rule (of
        ``jvps``), or for an op linear in ``param``, the op itself applied to that
        tangent."""
        op, named, tangent = node.op, node.named_args, self.tangent(node.named_args[param])
        if op.jvp == "linear" and param not in jvps:
            self.builder.loc = node.loc
            return self.builder.emit(op, tuple(tangent if p == param else named[p]
                                               for p in op.params))
        start = len(self.builder.nodes)
        part = inline_rule(jvps[param], self.builder, named, node.loc,
                           leading=(tangent, node.out))
        registry.in_python_math(op, self.builder.nodes[start:])
        if op.keeps_zeros(named) and isinstance(tangent, Value):
            # the tangent may be NaN where the op does not select it (a NaN np.nansum
            # skips, the -inf np.maximum(np.log(x), -5.0) does not take): zero there
            keep_zeros(self.builder.nodes[start:], tangent)
        return part

    def lockstep(self, node: Node) -> None:
        """An op on a list or a tape (``jvp="lockstep"``): the same op on the tangents,
        when a list or tape it works on carries tangents (a tangent tape beside each
        tape that holds varied values, a tangent list beside each varied list). The
        parameters ``op.lockstep_kept`` names (an index, a count) are passed as they are."""
        kept = node.op.lockstep_kept
        if not (node.out in self.varied or node.out in self.tapes or any(
                v in self.tangents for name, arg in node.named_args.items()
                if name not in kept for v in operand_values(arg))):
            return
        tangent = self.builder.emit(node.op, tuple(
            arg if name in kept else self.tangent(arg)
            for name, arg in node.named_args.items()))
        if node.out in self.varied:
            self.name(node.out, tangent)
        else:  # a tape, or a push's effect
            self.tangents[node.out] = tangent

    def structure(self, node: Node) -> None:
        """A dict, list or object built of operands: the same of their tangents."""
        if node.out not in self.varied:
            return
        like = node.op.params[0] == "like"
        # a number written in the code has a zero tangent; a string or None is kept, so
        # the tangent has the structure of the value
        tangents = tuple(arg if (like and i == 0) or isinstance(arg, Const) and not isinstance(
            arg.value, (np.ndarray, np.generic, int, float, complex)) else self.tangent(arg)
            for i, arg in enumerate(node.args))
        self.name(node.out, self.builder.emit(node.op, tangents))

    # ----- regions -----

    def region(self, region: Region) -> None:
        if region.kind == "try" and not _holds_loops(region):
            self.builder.nodes.append(region)
            self.tangents_after(region)
            return
        slots = [j for j, out in enumerate(region.outs) if out in self.varied]
        if region.branches:
            for block in region.blocks:
                results = list(block.results)
                block.results += self.block(block, lambda r=results: [
                    self.yielded(r[j]) for j in slots])
        else:
            init = region.init
            region.args += tuple(self.tangent(init[j]) for j in slots)
            for block in region.blocks:
                offset = 1 if region.kind == "for" else 0
                for j in slots:
                    primal = block.params[offset + j]
                    tangent = Value(primal.hint + "_dot" if primal.hint else "")
                    tangent.shape, tangent.floating = primal.shape, True
                    block.params.append(tangent)
                    self.tangents[primal] = tangent
                    self.named.add(tangent)
            for block in region.blocks:
                if block is not region.body:  # a while loop's condition yields no tangent
                    self.block(block)
                    continue
                results = list(block.results)
                block.results += self.block(block, lambda r=results: [
                    self.yielded(r[j]) for j in slots])
        self.builder.nodes.append(region)
        self.tangent_outs(region, region, slots)

    def yielded(self, result: Operand) -> Operand:
        """The tangent a block yields beside ``result``: none where the result is none (a
        name a ``return`` left unassigned), which no zero of a made-up shape stands for."""
        return UNDEFINED if result is UNDEFINED else self.tangent(result)

    def tangent_outs(self, region: Region, primal: Region, slots: list[int]) -> None:
        """Outs of ``region``, appended, for the tangents of ``primal``'s outs ``slots``."""
        for j in slots:
            out = primal.outs[j]
            tangent = Value(out.hint + "_dot" if out.hint else "")
            tangent.shape, tangent.floating = out.shape, True
            tangent.node = region
            region.outs.append(tangent)
            self.tangents[out] = tangent
            self.named.add(tangent)

    def tangents_after(self, region: Region) -> None:
        """The tangents of a branching region that ran (a ``try``, and the branches
        inside it), computed by a region after it that takes the same path: the
        block that ran, its nodes' tangents after one another."""
        slots = [j for j, out in enumerate(region.outs) if out in self.varied]
        blocks = []
        for block in region.blocks:
            deferred = Block()
            if block.raises():  # (a path that raised has no tangents to give)
                deferred.results = [UNDEFINED] * len(slots)
                blocks.append(deferred)
                continue
            with self.builder.inside(deferred):
                for node in block.nodes:
                    if isinstance(node, Region):
                        self.tangents_after(node)
                        continue
                    self.builder.loc = node.loc
                    self.node(node)
                deferred.results = [self.yielded(block.results[j]) for j in slots]
            blocks.append(deferred)
        if not slots and not any(block.nodes for block in blocks):
            return
        kind, decided = (("switch", (path_taken(region),)) if region.kind == "try"
                         else (region.kind, region.args[:1]))
        after = Region(kind, decided, [], blocks, region.loc, "tangent")
        self.builder.nodes.append(after)
        self.tangent_outs(after, region, slots)


def _holds_loops(region: Region) -> bool:
    return any(isinstance(node, Region) and not node.branches
               for block in region.blocks for node in walk(block.nodes))
