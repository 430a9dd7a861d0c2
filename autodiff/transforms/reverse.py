"""Reverse mode: the vector-Jacobian product of a graph, as a new graph.

The derivative graph is the primal's nodes (the forward sweep) followed by one
block per primal node, in reverse order, that inlines the node's gradient rule
with ``g`` bound to the node's adjoint and ``ans`` to its result. Adjoints of
values read several times are summed. Only active values get adjoints.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.sin(x))
>>> print(ad.grad(f).graph)  # doctest: +SKIP
"""

from __future__ import annotations

import os

from autodiff.errors import NonDifferentiableError
from autodiff.frontend import inline_rule
from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Const, Graph, Location, Node, Operand, Region, Value, operand_values
from autodiff.graph.shapes import LIST, SCALAR
from autodiff.ops import OPS
from autodiff.transforms.activity import active_values, varied_values
from autodiff.transforms.control import ControlFlowReverser
from autodiff.transforms.optimize import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    optimize,
)


class _Adjoints:
    """Contributions to each value's adjoint, summed when the adjoint is read."""

    def __init__(self, builder: GraphBuilder) -> None:
        self.builder = builder
        self.parts: dict[Value, list[Operand]] = {}

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
            else:  # in place, unless a scalar may stand for a one-element array
                in_place = value.shape not in self.builder.size_one
                total = self.builder.emit(OPS["accumulate" if in_place else "add"], (total, part))
            if isinstance(total, Value):
                total.adjoint_of, total.shape, total.floating = value, value.shape, True
        if isinstance(total, Value) and total.adjoint_of is None and not total.hint:
            total.adjoint_of = value  # named d<value> in generated code
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
    if node is None or node.op.name != "index_add":
        return None
    base = node.args[0]
    if isinstance(base, Value) and base.node is not None and base.node.op.name == "zeros_like":
        return node.args[1], node.args[2]
    return None


def reverse_mode(primal: Graph, wrt: list[int], *, with_value: bool = False,
                 optimized: bool = True, seed: Value | None = None) -> Graph:
    """Graph computing the gradients of ``primal``'s first output w.r.t. params ``wrt``.

    Its outputs are the gradients in ``wrt`` order, preceded by the primal
    output when ``with_value`` is true, and followed by the primal's other
    outputs (auxiliary values, not differentiated). Without ``seed`` the first
    output must be a scalar; with it (a new param of the primal, see
    :func:`add_param`), the gradients are those of ``sum(seed * output)``, and a
    tuple output takes a tuple seed.
    """
    graph, mapping = primal.copy()
    graph.name = primal.name + "_grad"
    if optimized:
        eliminate_common_subexpressions(graph)  # one adjoint per distinct forward value
    output, extra = graph.outputs[0], graph.outputs[1:]
    targets = [graph.params[i] for i in wrt]
    active = active_values(graph, targets)
    _refuse_taped(graph, varied_values(graph, targets))
    builder = GraphBuilder(graph, phase="backward")
    adjoints = _Adjoints(builder)
    forward = list(graph.nodes)

    witness = None
    where = _where(graph.return_location)
    builder.loc = graph.return_location
    if seed is not None:
        seed = mapping[seed]
        items = output if isinstance(output, tuple) else (output,)
        for index, item in enumerate(items):
            if isinstance(item, Value) and item in active:
                part = (builder.emit(OPS["getitem"], (seed, Const(index)))
                        if isinstance(output, tuple) else seed)
                part = builder.emit(OPS["vjp_seed"], (part, item, Const(where)))
                adjoints.add(item, part, {part})
    elif isinstance(output, Value) and output in active:
        seed_value, witness = _seed(builder, output, targets, where)
        adjoints.add(output, seed_value, set())
    _Reverser(builder, active).reverse_nodes(forward, adjoints)

    builder.loc = None
    gradients = []
    for param in targets:
        total = adjoints.total(param) if param in adjoints else Const(0.0)
        check = Const(where) if param is witness else Const(None)
        gradient = builder.emit(OPS["as_gradient_of"], (total, param, check))
        gradient.adjoint_of = param
        gradients.append(gradient)
    graph.outputs = ([output] if with_value else []) + gradients + extra
    if optimized:
        optimize(graph)
    else:  # the rules exactly as written, minus what nothing reads
        eliminate_dead_code(graph)
    _copy_aliased_gradients(graph)
    _mark_float_arithmetic(graph)
    return graph


class TapedDerivativeError(NonDifferentiableError):
    """Reverse mode over a derivative that reads values a loop stored on a tape."""


def _refuse_taped(graph: Graph, varied: set[Value]) -> None:
    """Values that travel through a tape (or a list of adjoints popped from its end)
    would lose their gradient there: refuse, rather than return a wrong one."""
    from autodiff.graph.ir import walk

    for node in walk(graph.nodes):
        if isinstance(node, Region) or node.op.name not in ("tape_push", "list_pop"):
            continue
        carried = node.args[1] if node.op.name == "tape_push" else node.args[0]
        if any(v in varied for v in operand_values(carried)):
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


def _where(loc: Location | None) -> str:
    """``file.py:LINE`` of the return statement, for errors raised at run time."""
    return f"{os.path.basename(loc.filename)}:{loc.lineno}" if loc else "the return statement"


class _Reverser:
    """Walks nodes backwards, inlining each one's rule; regions go to ControlFlowReverser."""

    def __init__(self, builder: GraphBuilder, active: set[Value]) -> None:
        self.builder = builder
        self.active = active
        self.control = ControlFlowReverser(self)

    def new_adjoints(self) -> _Adjoints:
        return _Adjoints(self.builder)

    def reverse_nodes(self, nodes: list, adjoints: _Adjoints) -> None:
        for node in reversed(list(nodes)):
            self.builder.loc = node.loc
            if isinstance(node, Region):
                if node.kind == "if":
                    self.control.reverse_if(node, adjoints)
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
    if op.vjp is None:
        raise NonDifferentiableError(
            f"'{op.name}' has no gradient rule, and the result depends on it", **where,
            hint="compute this part from non-differentiated values, or register a gradient")
    problem = op.vjp_check(named) if op.vjp_check is not None else None
    if problem:
        raise NonDifferentiableError(problem, **where)
    start = len(builder.nodes)
    result = inline_rule(op.vjp, builder, named, node.loc, leading=(g, node.out))
    created = {out for n in builder.nodes[start:] for out in n.outs}
    if isinstance(result, Const) and isinstance(result.value, tuple):
        result = tuple(Const(item) for item in result.value)  # every gradient folded
    elif isinstance(result, Value) and len(op.diff) > 1:  # a helper returned them together
        result = tuple(_item(builder, result, i) for i in range(len(op.diff)))
        created.update(part for part in result if isinstance(part, Value))
    results = dict(zip(op.diff, result if len(op.diff) > 1 else (result,)))
    received = []
    for param in targets:
        operand, contribution = named[param], results[param]
        if isinstance(contribution, Const) and contribution.value is None:
            continue  # a custom rule's "no gradient for this one"
        _distribute(operand, contribution, builder, adjoints, active, created, received,
                    op.name in _LIST_ADJOINT_OPS)
    for value in dict.fromkeys(received):
        adjoints.settle(value)


def _item(builder: GraphBuilder, sequence: Operand, index: int) -> Operand:
    """``sequence[index]``; a list of adjoints (of items of any shapes, or None) is read
    with list_getitem, whose own adjoint is a list, not an array of the list's shape."""
    op = "list_getitem" if getattr(sequence, "shape", None) is LIST else "getitem"
    return builder.emit(OPS[op], (sequence, Const(index)))


# Ops whose rules give a list-shaped operand's adjoint as a list already.
_LIST_ADJOINT_OPS = {"list_append", "add_lists", "list_getitem", "list_sum"}


def _distribute(operand: Operand, contribution: Operand, builder: GraphBuilder,
                adjoints: _Adjoints, active: set[Value], created: set[Value],
                received: list[Value], lists_native: bool) -> None:
    """Give ``operand`` the adjoint ``contribution``; a sequence (``np.stack([a, b])``,
    ``np.array([[a, b], [c, d]])``) gives each item its part, at any depth.

    A list the function built gets its adjoint as a list of its items' adjoints (the
    backward sweep pops them off the end), whatever array the op's rule returned.
    """
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
        _distribute(item, part, builder, adjoints, active, created | {part}, received, False)


_PYTHON_ARITHMETIC = {"add", "subtract", "multiply", "divide", "power", "negative", "positive"}


def _mark_float_arithmetic(graph: Graph) -> None:
    """Tell each final conversion whether its gradient is operator arithmetic on its
    argument and numbers only: then it is a Python float whenever the argument is."""

    def closed(operand, param: Value) -> bool:
        if isinstance(operand, Const):
            return operand.path is None and type(operand.value) in (int, float)
        if operand is param:
            return True
        node = operand.node if isinstance(operand, Value) else None
        return (node is not None and node.op.name in _PYTHON_ARITHMETIC
                and all(closed(arg, param) for arg in node.args))

    for node in graph.nodes:
        if node.op.name == "as_gradient_of":
            gradient, param = node.args[0], node.args[1]
            node.args = (*node.args[:3], Const(closed(gradient, param)))


def _may_be_borrowed(value: Operand, params: set[Value]) -> bool:
    """Whether ``value`` may be one of the caller's arrays (or a global's)."""
    seen, todo = set(), [value]
    while todo:
        source = todo.pop()
        if not isinstance(source, Value) or source in seen:
            continue
        seen.add(source)
        node = source.node
        if source in params or (node is not None and node.op.name == "variable"):
            return True
        if isinstance(node, Region):
            j = node.outs.index(source)
            if node.kind != "if":
                todo.append(node.init[j])
            todo.extend(b.results[j] for b in node.blocks if node.kind != "while" or b is node.body)
        elif node is not None and not node.op.fresh:
            todo.append(node.args[0])
    return False


def _copy_aliased_gradients(graph: Graph) -> None:
    """Copy a gradient that could be one of the caller's arrays (``d(x*W)/dx = W``) or
    the same array as another gradient (``d(x+y)``), so every gradient is its own."""
    seen: set[Value] = set()
    for node in list(graph.nodes):
        if node.op.name != "as_gradient_of" or not isinstance(node.args[0], Value):
            continue
        gradient = node.args[0]
        borrowed = _may_be_borrowed(gradient, set(graph.params))
        if borrowed or gradient in seen:
            copy = Value(adjoint_of=gradient.adjoint_of)
            copy.shape, copy.floating = gradient.shape, gradient.floating
            graph.nodes.insert(graph.nodes.index(node), Node(
                OPS["array"], (gradient, Const(None)), copy, None, "backward"))
            node.args = (copy, *node.args[1:])
        seen.add(gradient)
