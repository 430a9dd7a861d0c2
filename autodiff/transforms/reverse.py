"""Reverse mode: the vector-Jacobian product of a graph, as a new graph.

The derivative graph is the primal's nodes (the forward sweep) followed by one
block per primal node, in reverse order, that inlines the node's gradient rule
with ``g`` bound to the node's adjoint and ``ans`` to its result. Adjoints of
values read several times are summed. Only active values get adjoints.
Downstream of a ``where``, whose adjoint is zero for the branch it did not
select (and of every op whose gradients are zero where it did not select an
operand: ``maximum``, ``clip``, a mask, the NaN-skipping reductions), products
and quotients keep zeros exact (``0 * inf`` is 0 there: see
:mod:`autodiff.transforms.zeros`), so the overflow of an unselected branch, or the
NaN ``np.nansum`` skips, never makes the gradient NaN.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.sin(x))
>>> print(ad.grad(f).graph)  # doctest: +SKIP
"""

from __future__ import annotations

from autodiff.errors import AutodiffError, NonDifferentiableError
from autodiff.frontend import inline_rule, structures
from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import (
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
from autodiff.graph.shapes import LIST, SCALAR
from autodiff.line_names import line_name
from autodiff.ops import OPS, registry
from autodiff.ops.helpers import as_gradient_of as as_gradient_of_op
from autodiff.ops.shape import index_add as index_add_op
from autodiff.ops.shape import zeros_like as zeros_like_op
from autodiff.transforms.activity import (
    refuse_gradients_into_settings,
    useful_values,
    varied_values,
)
from autodiff.transforms.aliases import copy_aliased_gradients, may_be_borrowed
from autodiff.transforms.checkpoint import refuse_through_checkpoints
from autodiff.transforms.complex_values import accepts_complex_gradients, check_steps, vjp_rule
from autodiff.transforms.control import ControlFlowReverser, cut_back_tapes
from autodiff.transforms.optimize import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    optimize,
)
from autodiff.transforms.paths import gradient_path
from autodiff.transforms.zeros import keep_zeros


class _Adjoints:
    """Contributions to each value's adjoint, summed when the adjoint is read.

    ``keep_zeros`` (shared by every table of one transform) holds the adjoints
    that are zero where a ``where`` did not select: the chain rule downstream of
    them keeps those zeros exact (see :func:`autodiff.transforms.zeros.keep_zeros`).
    """

    def __init__(self, builder: GraphBuilder, keep_zeros: set[Value] | None = None) -> None:
        self.builder = builder
        self.parts: dict[Value, list[Operand]] = {}
        self.keep_zeros = keep_zeros if keep_zeros is not None else set()

    def add(self, target: Value, contribution: Operand, created: set[Value],
            first: bool = False) -> None:
        if isinstance(contribution, Value) and contribution in created and (
            contribution.adjoint_of is None
        ):
            contribution.adjoint_of, contribution.hint = target, ""
            contribution.shape, contribution.floating = target.shape, True
        parts = self.parts.setdefault(target, [])
        parts.insert(0, contribution) if first else parts.append(contribution)

    def __contains__(self, value: Value) -> bool:
        return value in self.parts

    def total(self, value: Value) -> Operand:
        parts = self.parts[value]
        keeps_zeros = any(part in self.keep_zeros for part in parts if isinstance(part, Value))
        parts = [self._times(part, parts.count(part)) for part in dict.fromkeys(parts)]
        # Constants last: the running total is then an array that can take the rest
        # in place (``dx += 2.0``, not ``dx = 2.0 + dx``).
        parts.sort(key=lambda part: isinstance(part, Const))
        total = parts[0]
        for part in parts[1:]:
            scattered = _scatter_into_zeros(part)
            if scattered is not None:  # add into the running total, not into new zeros
                total = self.builder.emit(OPS["index_add"], (total, *scattered))
            elif value.shape is LIST:
                total = self.builder.emit(OPS["add_lists"], (total, part))
            elif isinstance(value.node, Node) and value.node.op.name == "list_getitem":
                total = self.builder.emit(OPS["add_adjoints"], (total, part))  # (a tuple's)
            else:  # in place, unless a scalar may stand for a one-element array
                in_place = value.shape not in self.builder.size_one
                total = self.builder.emit(OPS["accumulate" if in_place else "add"], (total, part))
            if isinstance(total, Value):
                total.adjoint_of, total.shape, total.floating = value, value.shape, True
        if isinstance(total, Value) and total.adjoint_of is None and not total.hint:
            total.adjoint_of = value  # named d<value> in generated code
        if keeps_zeros and isinstance(total, Value):
            self.keep_zeros.add(total)
        self.parts[value] = [total]
        return total

    def settle(self, value: Value) -> None:
        """Sum what ``value`` has received so far, where the last part arrived.

        Summing each node's contributions as soon as they are made, rather than all
        at once where the adjoint is read, keeps one running total alive instead of
        every contribution: ``dx += t`` right after ``t`` is computed.
        """
        if len(self.parts.get(value, ())) > 1:
            self.total(value)

    def _times(self, part: Operand, count: int) -> Operand:
        """``count`` equal contributions (``s * s`` gives ``s`` twice) as one product."""
        if count == 1:
            return part
        return self.builder.emit(OPS["multiply"], (part, Const(count)))


def _scatter_into_zeros(part: Operand) -> tuple | None:
    """``(index, values)`` when ``part`` is ``values`` scattered into a fresh zero array."""
    node = part.node if isinstance(part, Value) else None
    if node is None or node.op is not index_add_op:
        return None
    base = node.args[0]
    if isinstance(base, Value) and base.node is not None and base.node.op is zeros_like_op:
        return node.args[1], node.args[2]
    return None


def reverse_mode(primal: Graph, wrt: list[int | Value], *, with_value: bool = False,
                 optimized: bool = True, seed: Value | None = None,
                 checkpoint: int | str | None = None) -> Graph:
    """Graph computing the gradients of ``primal``'s first output w.r.t. params ``wrt``
    (by index, or values of ``primal``: the leaves of a structured argument).

    Its outputs are the gradients in ``wrt`` order, preceded by the primal
    output when ``with_value`` is true, and followed by the primal's other
    outputs (auxiliary values, not differentiated). Without ``seed`` the first
    output must be a scalar; with it (a new param of the primal, see
    :func:`add_param`), the gradients are those of ``sum(seed * output)``, and a
    tuple output takes a tuple seed. With ``checkpoint`` (a number of states, or a size
    of memory), each outermost loop keeps states within it and recomputes its steps
    from them instead of taping them all (see :mod:`autodiff.transforms.checkpoint`).
    """
    graph, mapping = primal.copy()
    graph.name = primal.name + "_grad"
    if optimized:
        eliminate_common_subexpressions(graph)  # one adjoint per distinct forward value
    output, extra = graph.outputs[0], graph.outputs[1:]
    targets = [graph.params[i] if isinstance(i, int) else mapping[i] for i in wrt]
    # (the auxiliary outputs get no adjoint: what only they read is off the gradient path)
    varied, useful = varied_values(graph, targets), useful_values(graph, [output])
    active = varied & useful
    refuse_through_checkpoints(graph, varied)
    _refuse_taped(graph, varied)
    refuse_gradients_into_settings(graph, varied, useful)
    check_steps(graph, varied)
    builder = GraphBuilder(graph, phase="backward")
    reverser = _Reverser(builder, active, checkpoint)
    adjoints = reverser.new_adjoints()
    forward = list(graph.nodes)

    witness = None
    where = _where(graph.return_location)
    builder.loc = graph.return_location
    if seed is not None:
        given = mapping[seed]
        if isinstance(output, tuple):  # parts given as None: zeros
            given = builder.emit(OPS["filled_seed"], (given, output, Const(where)), "seed")
        _seed_outputs(builder, adjoints, given, output, active, where)
    elif isinstance(output, Value) and output in active:
        if graph.complex:  # grad differentiates a real output
            builder.emit(OPS["real_output"], (output, Const(where)))
        seed_value, witness = _seed(builder, output, targets, where)
        adjoints.add(output, seed_value, set())
    reverser.reverse_nodes(forward, adjoints)
    cut_back_tapes(graph)

    builder.loc = None
    gradients = []
    complex_gradients = Const(accepts_complex_gradients(graph, seed is not None))
    graph.complex |= builder.made_complex  # (for the rules of its own derivative)
    for param in targets:
        total = adjoints.total(param) if param in adjoints else Const(0.0)
        check = Const(where) if param is witness else Const(None)
        gradient = builder.emit(OPS["as_gradient_of"], (total, param, check, complex_gradients))
        gradient.adjoint_of = param
        gradients.append(gradient)
    graph.outputs = ([output] if with_value else []) + gradients + extra
    if optimized:
        optimize(graph)
    else:  # the rules exactly as written, minus what nothing reads
        eliminate_dead_code(graph)
    copy_aliased_gradients(graph, lambda g: may_be_borrowed(g, set(graph.params)))
    _mark_float_arithmetic(graph)
    return graph


class TapedDerivativeError(NonDifferentiableError):
    """Reverse mode over a derivative that reads values a loop stored on a tape."""


def _refuse_taped(graph: Graph, varied: set[Value]) -> None:
    """Values that travel through a tape (or a list of adjoints popped from its end)
    would lose their gradient there: refuse, rather than return a wrong one."""
    for node in walk(graph.nodes):
        if isinstance(node, Region) or node.op.taped is None:
            continue
        if any(v in varied for v in operand_values(node.named_args[node.op.taped])):
            raise TapedDerivativeError(
                "reverse mode cannot differentiate a derivative whose backward sweep reads "
                "values stored by a loop", **Location.error_fields(node.loc),
                hint="use forward mode over it: ad.hessian, ad.hvp, or "
                     "ad.jacobian(..., mode='fwd')")


def _seed(builder: GraphBuilder, output: Value, targets: list[Value], where: str):
    """The adjoint of the output, 1.0, and the argument whose shape vouches it is scalar.

    A statically scalar output needs no check. An output of the same shape as
    a differentiated argument (``3 * x ** 2``) is checked through that argument
    in the epilogue, at no cost for Python floats. Otherwise the output itself
    is checked, and its seed takes its shape.
    """
    if output.shape is SCALAR:
        return Const(1.0), None
    for param in targets:
        if param.shape is output.shape:
            builder.size_one.add(output.shape)
            return Const(1.0), param
    return builder.emit(OPS["scalar_output_seed"], (output, Const(where))), None


def _seed_outputs(builder: GraphBuilder, adjoints: _Adjoints, seed: Operand, output: Operand,
                  active: set[Value], where: str) -> None:
    """Seed each active item of ``output`` with its part of ``seed``: a tuple output
    (nested, for a derivative returning a tuple inside one) takes a tuple seed of
    the same structure."""
    if isinstance(output, tuple):
        for index, item in enumerate(output):
            if any(v in active for v in operand_values(item)):
                part = builder.emit(OPS["getitem"], (seed, Const(index)))
                _seed_outputs(builder, adjoints, part, item, active, where)
    elif isinstance(output, Value) and output.node is not None and (
            output.node.op.name == "structure"):
        _seed_structure(builder, adjoints, seed, output, active, where)
    elif isinstance(output, Value) and output in active:
        part = builder.emit(OPS["vjp_seed"], (seed, output, Const(where)))
        adjoints.add(output, part, {part})


def _seed_structure(builder: GraphBuilder, adjoints: _Adjoints, seed: Operand, output: Value,
                    active: set[Value], where: str) -> None:
    """Seed each active leaf of a structure the function returns (``{"a": a, "b": b}``)
    with the seed's leaf at the same place: ``seed_a = seed['a']``."""
    node = output.node
    leaves = [arg for name, arg in node.named_args.items() if name != "like"]
    if not any(v in active for leaf in leaves for v in operand_values(leaf)):
        return
    checked = builder.emit(OPS["vjp_structured_seed"], (seed, output, Const(where)), "seed")
    bound = structures.Binder(builder.emit).bind(node.op.spec, checked, "seed")
    for (kind, part), leaf in zip(structures.leaves(node.op.spec, bound), leaves):
        if kind == structures.ARRAY:
            _seed_outputs(builder, adjoints, part, leaf, active, where)


def _where(loc: Location | None) -> str:
    """``file.py:LINE`` of the return statement, for errors raised at run time."""
    return line_name(loc.filename, loc.lineno) if loc else "the return statement"


class _Reverser:
    """Walks nodes backwards, inlining each one's rule; regions go to ControlFlowReverser."""

    def __init__(self, builder: GraphBuilder, active: set[Value],
                 checkpoint: int | str | None = None) -> None:
        self.builder = builder
        self.active = active
        self.checkpoint = checkpoint  # the budget of each outermost loop's states
        self.control = ControlFlowReverser(self)
        self.keep_zeros: set[Value] = set()

    def new_adjoints(self) -> _Adjoints:
        return _Adjoints(self.builder, self.keep_zeros)

    def reverse_nodes(self, nodes: list, adjoints: _Adjoints) -> None:
        for node in reversed(list(nodes)):
            self.builder.loc = node.loc
            if isinstance(node, Region):
                if node.branches:
                    self.control.reverse_branches(node, adjoints)
                else:
                    self.control.reverse_loop(node, adjoints)
            elif node.out in adjoints:
                _backpropagate(node, adjoints.total(node.out), self.builder, adjoints,
                               self.active)


def _backpropagate(node: Node, g: Operand, builder: GraphBuilder, adjoints: _Adjoints,
                   active: set[Value]) -> None:
    op, named = node.op, node.named_args
    targets = [p for p in op.diff if any(v in active for v in operand_values(named[p]))]
    if not targets:
        return
    where = Location.error_fields(node.loc)
    if op.rules_for(builder.graph.complex)[0] is None:
        if op.missing_rule is not None:
            raise op.missing_rule(named, where).on_path(
                gradient_path(builder.graph, node, active))
        raise NonDifferentiableError(
            f"'{op.name}' has no gradient rule, and the result depends on it"
            + (f" ({op.no_gradient})" if op.no_gradient else ""), **where,
            hint="compute this part from non-differentiated values, or register a gradient"
        ).on_path(gradient_path(builder.graph, node, active))
    problem = op.vjp_check(named) if op.vjp_check is not None else None
    if problem:
        raise NonDifferentiableError(problem, **where).on_path(
            gradient_path(builder.graph, node, active))
    vjp = vjp_rule(builder, node, targets)
    start = len(builder.nodes)
    result = inline_rule(vjp, builder, named, node.loc, leading=(g, node.out))
    registry.in_python_math(op, builder.nodes[start:])
    result = _one_per_parameter(op, result, named, builder, node.loc)
    created = {out for n in builder.nodes[start:] for out in n.outs}
    results = dict(zip(op.diff, result))
    keeps_zeros = op.keeps_zeros(named)
    if keeps_zeros:  # zero where the argument was not selected
        adjoints.keep_zeros.update(r for r in result if isinstance(r, Value) and r in created)
    elif isinstance(g, Value) and g in adjoints.keep_zeros:
        adjoints.keep_zeros.update(keep_zeros(builder.nodes[start:], g))
    received = []
    for param in targets:
        operand, contribution = named[param], results[param]
        if isinstance(contribution, Const) and contribution.value is None:
            continue  # a custom rule's "no gradient for this one"
        _distribute(operand, contribution, builder, adjoints, active, created, received,
                    op.list_adjoints, lambda: _rule_description(op))
    if keeps_zeros:  # and the items read off a sequence of them (np.select's)
        adjoints.keep_zeros.update(
            out for n in builder.nodes[start:] if n.op.name in ("getitem", "list_getitem")
            and n.args[0] in adjoints.keep_zeros for out in n.outs)
    for value in dict.fromkeys(received):
        adjoints.settle(value)


def _one_per_parameter(op, result: Operand, named: dict, builder: GraphBuilder,
                       loc: Location | None) -> tuple:
    """The gradients a VJP rule returned, one per differentiable parameter of ``op``.

    A rule of several parameters returns a tuple. A count that is wrong when the
    rule is compiled (a tuple of another length, an array) is an error now; a
    single value that may be a tuple (a helper returning them together) is
    unpacked, and for a rule not built in, checked when it runs: indexing an
    array by mistake would hand row 0 of one gradient to every parameter.
    """
    count = len(op.diff)
    if isinstance(result, Const) and isinstance(result.value, tuple):
        result = tuple(Const(item) for item in result.value)  # every gradient folded
    if count == 1:
        if isinstance(result, tuple) and isinstance(named[op.diff[0]], Value):
            if len(result) != 1:  # (a tuple is the gradient of a sequence, np.stack([a, b]))
                _wrong_count(op, f"{len(result)} gradients", loc)
            return result  # (g,): one gradient, as a tuple
        return (result,)
    if isinstance(result, tuple):
        if len(result) != count:
            _wrong_count(op, f"{len(result)} gradients", loc)
        return result
    if isinstance(result, Const) or _is_array(result):
        _wrong_count(op, "one array", loc)
    returned = result
    if not _built_in(op):
        result = builder.emit(OPS["rule_gradients"], (result, Const(count), Const(
            _rule_description(op))))
        result.shape = returned.shape
    return tuple(_item(builder, result, i) for i in range(count))


def _is_array(value: Operand) -> bool:
    node = value.node if isinstance(value, Value) else None
    rule = getattr(getattr(node, "op", None), "shape", None)
    return rule is not None and rule.array


def _built_in(op) -> bool:
    """Whether ``op``'s VJP rule is one of autodiff's own (not a user's)."""
    return getattr(op.vjp, "__module__", "").startswith("autodiff.ops")


def _function_name(op) -> str:
    """The name the user knows ``op`` by (a function with a registered rule is called
    by a runtime name that may carry a suffix)."""
    functions = list(op.runtime.values())
    return getattr(functions[0], "__name__", op.name) if len(functions) == 1 else op.name


def _rule_description(op) -> str:
    rule = op.vjp
    code = getattr(rule, "__code__", None)
    name = getattr(rule, "__name__", "")
    name = f"'{name}' " if name and name != "<lambda>" else ""
    if code is None:
        return f"{name}of '{_function_name(op)}'"
    where = line_name(code.co_filename, code.co_firstlineno)
    return f"{name}of '{_function_name(op)}' ({where})"


def _wrong_count(op, got: str, loc: Location | None):
    params = ", ".join(op.diff)
    raise AutodiffError(
        f"the gradient rule {_rule_description(op)} returns {got}, but '{_function_name(op)}' has "
        f"{len(op.diff)} differentiable parameter{'s' if len(op.diff) > 1 else ''} ({params}): "
        "it must return one gradient per parameter", **Location.error_fields(loc),
        hint="return a tuple with one gradient per parameter, None for a parameter "
             "without one (an axis, a flag)")


def _item(builder: GraphBuilder, sequence: Operand, index: int) -> Operand:
    """``sequence[index]``; a list of adjoints (of items of any shapes, or None) is read
    with list_getitem, whose own adjoint is a list, not an array of the list's shape."""
    op = "list_getitem" if getattr(sequence, "shape", None) is LIST else "getitem"
    if isinstance(sequence, Value) and isinstance(sequence.node, Node) and (
            sequence.node.op.name in ("list_getitem", "list_pop")):
        op = "listed_item"  # an item of a list at run time: a tuple's adjoint is a tuple
    return builder.emit(OPS[op], (sequence, Const(index)))


def _distribute(operand: Operand, contribution: Operand, builder: GraphBuilder,
                adjoints: _Adjoints, active: set[Value], created: set[Value],
                received: list[Value], lists_native: bool, rule=None) -> None:
    """Give ``operand`` the adjoint ``contribution``; a sequence (``np.stack([a, b])``,
    ``np.array([[a, b], [c, d]])``) gives each item its part, at any depth, and so does
    a dict built to be passed whole (to a function with a rule of its own, whose rule
    returns a dict of gradients; ``rule()`` names that rule).

    A list the function built gets its adjoint as a list of its items' adjoints (the
    backward sweep pops them off the end), whatever array the op's rule returned.
    """
    if isinstance(operand, Value) and isinstance(operand.node, Node) and (
            operand.node.op.name == "structure"):
        _distribute_to_parts(operand, contribution, builder, adjoints, active, created,
                             received, rule)
        return
    if isinstance(operand, Value) and structures.contains_record(contribution):
        _refuse_structure_for_value(operand, contribution, builder, rule)
    if isinstance(operand, Value):
        if operand.shape is LIST and not lists_native:
            contribution = builder.emit(OPS["list_adjoint"], (contribution, operand))
            created = created | {contribution}
        adjoints.add(operand, contribution, created)
        received.append(operand)
        return
    if not isinstance(operand, tuple):
        return
    for index, item in enumerate(operand):
        if not any(v in active for v in operand_values(item)):
            continue
        part = (contribution[index] if isinstance(contribution, tuple)
                else _item(builder, contribution, index))
        _distribute(item, part, builder, adjoints, active, created | {part}, received, False,
                    rule)


def _refuse_structure_for_value(operand: Value, contribution: Operand, builder: GraphBuilder,
                                rule) -> None:
    """A rule returned a dict of gradients for a value the derivative holds as an array:
    an argument compiled for arrays (then it is compiled per structure instead), or an
    array the rule takes for a structure."""
    where = Location.error_fields(builder.loc)
    given = structures.describe(structures.spec_of_operand(contribution))
    if operand in builder.graph.params:
        raise structures.NeedsStructure(
            f"the gradient rule {rule() if rule else ''} returns {given} for the argument "
            f"'{operand.hint}', which autodiff compiles for the structure a call passes",
            **where, hint="call the derivative with the structure")
    raise AutodiffError(
        f"the gradient rule {rule() if rule else ''} returns {given} for an array",
        **where, hint="return an array for an array, a dict for a dict passed to it")


def _distribute_to_parts(operand: Value, contribution: Operand, builder: GraphBuilder,
                         adjoints: _Adjoints, active: set[Value], created: set[Value],
                         received: list[Value], rule) -> None:
    """The adjoint of a structure built from operands, given as a structure of the same
    keys and nesting (``None`` for a part without one), handed to each operand."""
    whole = structures.taken_apart(operand)  # nested dicts too: built one by one
    spec = structures.spec_of_operand(whole)
    if isinstance(contribution, Value):  # a structure known only at run time: read its parts
        contribution = structures.Binder(builder.emit).bind(spec, contribution, "")
    given = structures.spec_of_operand(contribution)
    if not structures.same_nesting(given, spec):
        raise AutodiffError(
            f"the gradient rule {rule() if rule else ''} returns "
            f"{structures.describe(given)} for the structure {structures.describe(spec)}",
            **Location.error_fields(operand.node.loc),
            hint="return the gradient of a dict as a dict with its keys (None for a key "
                 "without one), of a list as a list")
    parts = [part for _, part in structures.leaves(spec, contribution)]
    leaves = [leaf for _, leaf in structures.leaves(spec, whole)]
    for leaf, part in zip(leaves, parts):
        if isinstance(part, Const) and part.value is None:
            continue
        if any(v in active for v in operand_values(leaf)):
            _distribute(leaf, part, builder, adjoints, active, created | {part}, received,
                        False, rule)


def _mark_float_arithmetic(graph: Graph) -> None:
    """Tell each final conversion whether its gradient is operator arithmetic on its
    argument and numbers only: then it is a Python float whenever the argument is."""

    def closed(operand, param: Value) -> bool:
        if isinstance(operand, Const):
            return operand.path is None and type(operand.value) in (int, float)
        if operand is param:
            return True
        node = operand.node if isinstance(operand, Value) else None
        return (isinstance(node, Node) and node.op.python_arithmetic
                and all(closed(arg, param) for arg in node.args))

    for node in graph.nodes:
        if node.op is as_gradient_of_op:
            gradient, param = node.args[0], node.args[1]
            node.args = (*node.args[:4], Const(closed(gradient, param)))
