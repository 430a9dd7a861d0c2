"""An adjoint a backward loop accumulates from per-step products, summed in one product
after the loop.

The gradient of ``W`` in ``h = np.tanh(W @ h + U @ x[t])`` is, at each step, the outer
product of the step's adjoint and its ``h``; the backward loop adds them one by one
(``dW += matmul_grad_lhs(dt, W, h)``), 500 rank-one updates for 500 steps. A
hand-written backpropagation through time keeps the steps' adjoints and does one
matrix product over them after the loop. So does this: where a backward loop's only
use of an accumulated adjoint is adding a ``matmul_grad_lhs`` (or ``_rhs``) of the
step whose fixed operand comes from outside the loop, the loop appends the step's two
other operands to lists instead, and after it the sum is one product over them
(``matmul_grad_lhs_of_steps``, in ``ops/runtime.py``). The lists hold what the tape
held: the ``h`` each step popped, and an adjoint a step.
"""

from __future__ import annotations

from autodiff.graph.ir import (
    Block,
    Graph,
    Node,
    Region,
    Value,
    defined_values,
    operand_values,
    walk,
)
from autodiff.graph.shapes import LIST
from autodiff.ops import OPS
from autodiff.transforms.optimize.dce import drop_slots
from autodiff.transforms.optimize.substitution import Substitution



def _positions(single) -> tuple[int, int]:
    """Where a product's adjoint (``op.over_steps``) reads its fixed operand, and the one
    that changes from step to step (its first is the adjoint ``g``)."""
    _, fixed, step = single.over_steps
    return single.params.index(fixed), single.params.index(step)


def gather_products(nodes: list, sweep: Region, accumulated: range) -> dict[Value, Value]:
    """Rewrite the backward loop ``sweep`` (one of ``nodes``) so that each adjoint
    it accumulates (its carried values at ``accumulated``) from products sums them after
    it; return, for each out of the loop so rewritten, the value standing for it after
    the sum."""
    body = sweep.body
    inside = defined_values(sweep.blocks)
    reads: dict[Value, int] = {}
    for node in walk(body.nodes):
        for value in node.inputs():
            reads[value] = reads.get(value, 0) + 1
    for result in body.results:
        for value in operand_values(result):
            reads[value] = reads.get(value, 0) + 1
    replaced: dict[Value, Value] = {}
    carried = body.params[1:]
    for j in accumulated:
        param, result = carried[j], body.results[j]
        found = _accumulated_product(body, param, result, reads, inside)
        if found is None:
            continue
        total, product = found
        over = product.op.over_steps[0]
        fixed_at, step_at = _positions(product.op)
        g, fixed, item = product.args[0], product.args[fixed_at], product.args[step_at]
        lists, appends = [], []
        of = param.adjoint_of.hint if param.adjoint_of is not None else ""
        for hint, value in (("adjoints", g), ("operands", item)):
            start = Value(f"{of}_{hint}" if of else hint)
            start.shape = LIST
            at = next(i for i, node in enumerate(nodes) if node is sweep)
            nodes.insert(at, Node(OPS["list_new"], (), start, sweep.loc, "backward"))
            held, grown, out = Value(start.hint), Value(start.hint), Value(start.hint)
            held.shape = grown.shape = out.shape = LIST
            appends.append(Node(OPS["list_append"], (held, value), grown, product.loc,
                                "backward"))
            body.params.append(held)
            body.results.append(grown)
            sweep.args = (*sweep.args, start)
            sweep.outs.append(out)
            out.node = sweep
            lists.append(out)
        at = next(i for i, node in enumerate(body.nodes) if node is product)
        body.nodes[at:at + 1] = appends
        body.nodes = [node for node in body.nodes if node is not total]
        body.results[j] = param
        args = [lists[0], None, None]
        args[fixed_at], args[step_at] = fixed, lists[1]
        summed = Value(f"d{of}_steps" if of else "")
        summed.shape = param.shape
        nodes.append(Node(over, tuple(args), summed, product.loc, "backward"))
        out = sweep.outs[j]
        after = Value(out.hint)
        after.shape, after.floating = out.shape, out.floating
        after.adjoint_of = out.adjoint_of
        nodes.append(Node(OPS["accumulate"], (out, summed), after, sweep.loc, "backward"))
        replaced[out] = after
    return replaced


def _accumulated_product(body, param: Value, result, reads: dict, inside: set):
    """``(total, product)`` where the loop's result ``total`` is ``param`` plus an
    adjoint of a product whose fixed operand comes from outside the loop, and nothing
    else reads ``param`` or the product; None otherwise."""
    if not isinstance(result, Value) or not isinstance(result.node, Node):
        return None
    total = result.node
    if total.op is not OPS["accumulate"] or total not in body.nodes or reads.get(param) != 1:
        return None
    others = [a for a in total.args if a is not param]
    if len(others) != 1 or len(total.args) != 2 or not isinstance(others[0], Value):
        return None
    product = others[0].node
    if not isinstance(product, Node) or product.op.over_steps is None:
        return None
    if product not in body.nodes or reads.get(product.out) != 1 or reads.get(result) != 1:
        return None
    fixed = product.args[_positions(product.op)[0]]
    if any(v in inside for v in operand_values(fixed)):
        return None
    return total, product


def products_step_by_step(graph: Graph) -> None:
    """Undo :func:`gather_products` in ``graph`` (in place), for ``jit="numba"``, which
    compiles a loop of products but not lists of arrays: each sum over steps goes back
    into the loop as one product added a step."""
    replaced = Substitution()
    for nodes in _node_lists(graph.nodes):
        for summed in [n for n in nodes if isinstance(n, Node) and n.op.per_step]:
            _scatter(nodes, summed, replaced)
    replaced.block(Block([], graph.nodes, []))
    replaced.finish(graph)


def _scatter(nodes: list, summed: Node, replaced: Substitution) -> None:
    single = summed.op.per_step
    fixed_at, step_at = _positions(single)
    adjoints, steps = summed.args[0], summed.args[step_at]
    sweep = adjoints.node
    after = next(n for n in nodes if isinstance(n, Node) and n.op is OPS["accumulate"]
                 and summed.out in n.args)
    start = next(a for a in after.args if a is not summed.out)
    body = sweep.body
    appends = [body.results[sweep.outs.index(lst)].node for lst in (adjoints, steps)]
    param, out = Value(after.out.hint), Value(after.out.hint)
    for value in (param, out):  # the accumulated adjoint carried again, from its start
        value.shape, value.floating = after.out.shape, after.out.floating
        value.adjoint_of = after.out.adjoint_of
    args = [appends[0].args[1], None, None]
    args[fixed_at], args[step_at] = summed.args[fixed_at], appends[1].args[1]
    product = Node(single, tuple(args), Value(), summed.loc, "backward")
    product.out.shape = param.shape
    total = Node(OPS["accumulate"], (param, product.out), Value(param.hint), summed.loc,
                 "backward")
    total.out.shape, total.out.adjoint_of = param.shape, param.adjoint_of
    at = next(i for i, node in enumerate(body.nodes) if node is appends[1])
    body.nodes[at + 1:at + 1] = [product, total]
    body.nodes = [node for node in body.nodes if node not in appends]
    body.params.append(param)
    body.results.append(total.out)
    sweep.args = (*sweep.args, start)
    sweep.outs.append(out)
    out.node = sweep
    drop_slots(sweep, sorted(sweep.outs.index(lst) for lst in (adjoints, steps)))
    nodes[:] = [node for node in nodes if node is not summed and node is not after]
    replaced[after.out] = out


def _node_lists(nodes: list):
    yield nodes
    for node in nodes:
        if isinstance(node, Region):
            for block in node.blocks:
                yield from _node_lists(block.nodes)


__all__ = ["gather_products", "products_step_by_step"]
