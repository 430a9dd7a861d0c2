"""How a derivative treats complex values.

Gradients follow the convention of JAX and autograd: the gradient of a real
function of z = x + iy is df/dx - i df/dy, so that holomorphic and linear ops keep
their rules (``g * f'(z)``; transposes without conjugation) and only the others (an
op with ``real_rules``: ``np.abs``, ``np.real``, ``np.var``, ...) need rules of their
own for complex values.

A graph that computes with complex values (``graph.complex``: a complex argument,
a complex number written in it, an op making them) is differentiated with those
rules; an op with ``real_rules`` and no complex rule gets a check, where its rule
runs, that its operands are real. A graph for real values is differentiated with the
real rules: its derivative is right for complex values too unless it inlines a rule
for real values alone, which marks it (``graph.real_values_assumed``); such a
derivative hands calls with complex arguments to the one compiled for them (its
first line, see ``codegen.python``).
"""

from __future__ import annotations

from collections.abc import Callable

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Const, Graph, Node, Region, Value
from autodiff.ops import OPS


def vjp_rule(builder: GraphBuilder, node: Node, targets: list[str]) -> Callable:
    """The VJP of ``node``'s op that the derivative ``builder`` builds inlines, for the
    parameters ``targets``: its rule for complex values where the graph computes with
    them (after a check, when it runs, that the operands are real where the op has
    none). A graph for real values that inlines a rule for real values alone assumes
    real values from then on."""
    graph, op = builder.graph, node.op
    if op.real_rules and not graph.complex:
        graph.real_values_assumed = True
    elif op.checks_real_operands(graph.complex):
        check_real_operands(builder, node, targets)
    return op.rules_for(graph.complex)[0]


def jvp_rules(builder: GraphBuilder, node: Node, active: list[str]) -> dict[str, Callable]:
    """The JVPs of ``node``'s op that forward mode inlines for its ``active`` parameters,
    chosen and checked as :func:`vjp_rule` does. An op linear in a parameter without a
    JVP of its own computes that tangent itself, right for complex values too."""
    graph, op = builder.graph, node.op
    if op.real_rules and not graph.complex and any(p in op.jvps for p in active):
        graph.real_values_assumed = True
    checked = [p for p in active if op.checks_real_operands(graph.complex, p)]
    if checked:
        check_real_operands(builder, node, checked)
    return op.rules_for(graph.complex)[1]


def hands_over_complex(derivative: Graph) -> bool:
    """Whether ``derivative`` hands calls with complex arguments to the one compiled for
    complex values: it inlined rules for real values alone (whether or not those rules,
    or others, compute with complex values inside)."""
    return derivative.real_values_assumed


def accepts_complex_gradients(derivative: Graph, seeded: bool) -> bool:
    """Whether reverse mode's ``derivative`` returns complex gradients (and the real part
    of a complex one for a real argument), rather than refusing them: it computes with
    complex values, or it is a vjp (whose output may be complex) whose rules hold for
    complex values too. grad with rules for real values refuses them: without a rule for
    real values alone, a complex value makes a complex output."""
    return derivative.complex or (seeded and not derivative.real_values_assumed)


def check_steps(graph: Graph, varied: set) -> None:
    """Ops whose result is piecewise constant in real values alone (``np.sign``:
    ``nondiff_output`` and ``real_rules``; z / |z| varies with a complex z) reading a
    varied value: in a graph that computes with complex values, a check after each that
    what it reads is real; a graph for real values assumes real values. A gradient is
    never dropped there silently."""
    _check_steps(graph, graph.nodes, varied)


def _check_steps(graph: Graph, nodes: list, varied: set) -> None:
    for index in range(len(nodes) - 1, -1, -1):
        node = nodes[index]
        if isinstance(node, Region):
            for block in node.blocks:
                _check_steps(graph, block.nodes, varied)
            continue
        if not (node.op.nondiff_output and node.op.real_rules):
            continue
        values = tuple(v for v in node.inputs() if v in varied)
        if values and not graph.complex:
            graph.real_values_assumed = True
        elif values:
            check = Node(OPS["real_operands"], (values, Const(op_title(node.op))),
                         Value("checked"), node.loc, node.phase)
            nodes.insert(index + 1, check)


def check_real_operands(builder: GraphBuilder, node: Node, params: list[str]) -> None:
    """Before the real rule of ``node``'s op runs in a derivative that computes with
    complex values: a check that its operands ``params`` are real."""
    named = node.named_args
    values = tuple(named[p] for p in params)
    builder.emit(OPS["real_operands"], (values, Const(op_title(node.op))))


def op_title(op) -> str:
    """The name users call ``op`` by, from its kernel (``np.linalg.eigh``); for one result
    of a routine returning several (``eigh_values``, whose kernel reads ``computed[0]``),
    the routine's."""
    kernel = op.kernel if isinstance(op.kernel, str) else ""
    name = kernel.partition("(")[0]
    if name and name.replace(".", "").replace("_", "").isalnum():
        return name
    routine = OPS.get(op.name.partition("_")[0])
    return op_title(routine) if routine is not None and routine is not op else op.name


__all__ = ["accepts_complex_gradients", "check_real_operands", "check_steps",
           "hands_over_complex", "jvp_rules", "op_title", "vjp_rule"]
