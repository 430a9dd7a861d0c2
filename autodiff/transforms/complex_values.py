"""How a derivative treats complex values.

Gradients follow the convention of JAX and autograd: the gradient of a real
function of z = x + iy is df/dx - i df/dy, so that holomorphic and linear ops keep
their rules (``g * f'(z)``; transposes without conjugation) and only the others (an
op with ``real_rules``: ``np.abs``, ``np.real``, ``np.var``, ...) need rules of their
own for complex values.

A graph that computes with complex values (``graph.complex``: a complex argument,
a complex number written in it, an op making them) is differentiated with those
rules; an op with ``real_rules`` and no complex rule gets a check, where its rule
runs, that its operands are real. A graph for real values uses the real rules, and
its derivative is correct for complex values as long as it holds no op with
``real_rules``; one that holds some hands calls with complex arguments to the
derivative compiled for them (its first line, see ``codegen.python``).
"""

from __future__ import annotations

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Const, Graph, Node, Region, Value, walk
from autodiff.ops import OPS


def holds_real_rules(graph: Graph) -> bool:
    """Whether an op of ``graph`` has rules for real values alone."""
    return any(not isinstance(node, Region) and node.op.real_rules for node in walk(graph.nodes))


def assumes_real_values(graph: Graph) -> bool:
    """Whether ``graph`` is right for real values alone: it holds an op with rules for
    real values alone, or is a derivative made with such rules (and does not compute
    with complex values, whose rules it would use)."""
    return not graph.complex and (graph.real_values_assumed or holds_real_rules(graph))


def hands_over_complex(graph: Graph) -> bool:
    """Whether a derivative of ``graph`` (the function's) hands calls with complex
    arguments to the one compiled for complex values: its rules for real ones would
    be wrong for them."""
    return assumes_real_values(graph)


def accepts_complex_gradients(graph: Graph, seeded: bool) -> bool:
    """Whether the reverse mode of ``graph`` returns complex gradients (and the real part
    of a complex one for a real argument), rather than refusing them: it computes with
    complex values, or it is a vjp (whose output may be complex) of a graph whose real
    rules hold for complex values too. grad of a graph for real values refuses them:
    without an op with ``real_rules``, a complex value makes a complex output."""
    return graph.complex or (seeded and not assumes_real_values(graph))


def check_real_operands(builder: GraphBuilder, node: Node, params: list[str]) -> None:
    """Before the real rule of ``node``'s op runs in a derivative that computes with
    complex values: a check that its operands ``params`` are real."""
    named = node.named_args
    values = tuple(named[p] for p in params)
    builder.emit(OPS["real_operands"], (values, Const(op_title(node.op))))


def check_steps_of_complex_values(graph: Graph, varied: set) -> None:
    """In a graph that computes with complex values: after each op whose result is
    piecewise constant in real values alone (``np.sign``: ``nondiff_output`` and
    ``real_rules``; z / |z| varies with a complex z) and reads a varied value, a check
    that what it reads is real. A gradient is never dropped there silently."""
    if graph.complex:
        _check_steps(graph.nodes, varied)


def _check_steps(nodes: list, varied: set) -> None:
    for index in range(len(nodes) - 1, -1, -1):
        node = nodes[index]
        if isinstance(node, Region):
            for block in node.blocks:
                _check_steps(block.nodes, varied)
            continue
        if not (node.op.nondiff_output and node.op.real_rules):
            continue
        values = tuple(v for v in node.inputs() if v in varied)
        if values:
            check = Node(OPS["real_operands"], (values, Const(op_title(node.op))),
                         Value("checked"), node.loc, node.phase)
            nodes.insert(index + 1, check)


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


__all__ = ["accepts_complex_gradients", "assumes_real_values", "check_real_operands",
           "check_steps_of_complex_values", "hands_over_complex", "holds_real_rules",
           "op_title"]
