"""Activity analysis: which values need an adjoint.

A value is *varied* when it depends on a differentiated argument through ops
that carry gradients, and *useful* when the output depends on it. Only values
that are both (active) get adjoints; everything else is a constant of the
backward sweep, computed once in the forward part. Through a loop, a carried
value is varied (useful) when it is so in any iteration: the analysis repeats
the body until nothing changes.

>>> import autodiff as ad  # doctest: +SKIP
"""

from __future__ import annotations

from autodiff.errors import NonDifferentiableError
from autodiff.graph.ir import Graph, Location, Region, Value, operand_values, walk
from autodiff.transforms.paths import gradient_path


def _slot_params(region: Region, j: int) -> list[Value]:
    if region.branches:
        return []
    return [b.params[j + 1] if region.kind == "for" and b is region.body else b.params[j]
            for b in region.blocks]


def varied_values(graph: Graph, wrt: list[Value]) -> set[Value]:
    """Values that depend on ``wrt`` through differentiable parameters."""
    varied = set(wrt)

    def is_varied(operand) -> bool:
        return any(v in varied for v in operand_values(operand))

    def visit(nodes: list) -> None:
        for node in nodes:
            if isinstance(node, Region):
                region(node)
            elif not node.op.nondiff_output:
                named = node.named_args
                if any(is_varied(named[p]) for p in node.op.diff):
                    varied.add(node.out)

    def region(node: Region) -> None:
        while True:
            before = len(varied)
            for j, out in enumerate(node.outs):
                params = _slot_params(node, j)
                sources = [node.init[j]] if not node.branches else []
                sources += [b.results[j] for b in node.blocks
                            if node.kind != "while" or b is node.body]
                if any(is_varied(s) for s in sources):
                    varied.add(out)
                    varied.update(params)
            for block in node.blocks:
                visit(block.nodes)
            if len(varied) == before:
                return

    visit(graph.nodes)
    return varied


def useful_values(graph: Graph, outputs: list | None = None) -> set[Value]:
    """Values the outputs depend on (``outputs``, some of them: those differentiated)."""
    outputs = graph.outputs if outputs is None else outputs
    useful = {v for output in outputs for v in operand_values(output)}

    def visit(nodes: list) -> None:
        for node in reversed(nodes):
            if isinstance(node, Region):
                region(node)
            elif node.out in useful:
                useful.update(node.inputs())

    def region(node: Region) -> None:
        while True:
            before = len(useful)
            for j, out in enumerate(node.outs):
                params = _slot_params(node, j)
                if out in useful or any(p in useful for p in params):
                    useful.add(out)
                    useful.update(params)
                    for block in node.blocks:
                        if node.kind != "while" or block is node.body:
                            useful.update(operand_values(block.results[j]))
                    if not node.branches:
                        useful.update(operand_values(node.init[j]))
            for block in reversed(node.blocks):
                visit(block.nodes)
            if len(useful) == before:
                return

    visit(graph.nodes)
    return useful


def active_values(graph: Graph, wrt: list[Value]) -> set[Value]:
    """Values that get an adjoint when differentiating the outputs with respect to ``wrt``."""
    return varied_values(graph, wrt) & useful_values(graph)


def refuse_gradients_into_settings(graph: Graph, varied: set[Value],
                                   useful: set[Value]) -> None:
    """A value carrying a gradient that reaches a parameter an op has no rule for (not
    in its ``diff``, not read for its shape alone) while the op's result reaches the
    output would have its gradient dropped there: refuse it, naming the op's line.
    (``np.clip(x, lo, hi)`` with ``lo`` differentiated, say, if clip had no rule for
    ``lo``.) An op whose result never carries a gradient (a comparison) is exempt, and
    so are the nodes a derivative adds (their helpers read operands for their shapes),
    when a derivative is differentiated again."""
    for node in walk(graph.nodes):
        if not isinstance(node, Region) and getattr(node.op, "changes_arguments", False):
            refuse_gradients_into_effects(node, varied, graph)
        if isinstance(node, Region) or node.op.helps_derivatives or (
                node.op.nondiff_output or node.out not in useful):
            continue  # (a derivative's own helpers read their other operands' shapes)
        op, named = node.op, node.named_args
        for param in op.params:
            if param in (*op.diff, *op.shape_params, *op.kind_params, *op.piecewise_params):
                continue
            if any(v in varied for v in operand_values(named[param])):
                reason = op.no_gradient_to.get(param, op.no_gradient)
                raise NonDifferentiableError(
                    f"'{op.name}' passes no gradient to its argument '{param}'"
                    + (f" ({reason})" if reason else "")
                    + ", and a value carrying a gradient reaches it",
                    **Location.error_fields(node.loc),
                    hint=op.no_gradient_hint or "wrap that argument in ad.stop_gradient if "
                    "no gradient should flow into it, or give the function a rule "
                    "(ad.register_gradient)"
                ).on_path(gradient_path(graph, node, varied, useful, named[param]))


def refuse_gradients_into_effects(node, varied: set[Value], graph: Graph) -> None:
    """A call made for its effect (``np.random.seed(s)``) runs as written, in the forward
    sweep; it may change what it is passed in place, which the derivative would not
    follow: a value carrying a gradient reaching it is refused, on the path or not."""
    named = node.named_args
    for param in node.op.params[1:]:
        if any(v in varied for v in operand_values(named[param])):
            raise NonDifferentiableError(
                "a call made for its effect is passed a value that carries a gradient: "
                "the call may change it in place, which the derivative would not follow",
                **Location.error_fields(node.loc),
                hint="if the call only reads the value, pass ad.stop_gradient(value); "
                "otherwise move the call out of the differentiated function"
            ).on_path(gradient_path(graph, node, varied, entering=named[param],
                                    to_output=False))
