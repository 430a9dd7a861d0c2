"""Algebraic simplification of a graph.

- identities: multiply by one, add zero, divide by one, power of one, ``-(-a)``;
- constants gathered: ``-(a * 2)`` is ``a * -2``, ``(-a) * 2`` is ``a * -2``;
- broadcast scalars stay scalars: the adjoint of ``np.sum(v)`` is
  ``np.broadcast_to(g, np.shape(v))``; multiplying it by a scalar scales the
  scalar, and multiplying it by an array of ``v``'s shape needs no broadcast;
- in the backward sweep, ``a ** 2`` is ``a * a`` (cheaper on Python floats);
- shape queries read the earliest value of the same shape, so that a forward
  value computed only for its shape can be dropped.

A rewrite is made only when it cannot change the result's value, shape or
dtype: dropping ``* 1.0`` from an integer array would turn a float result into
an integer one, so float identities are dropped only from floating values.
"""

from __future__ import annotations

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import Block, Const, Graph, Operand, Region, Value, map_operand, walk
from autodiff.graph.shapes import LIST, SCALAR, token_of
from autodiff.ops import OPS

_SHAPE_QUERIES = ("shape", "size", "ndim", "len", "reduced_size", "unbroadcast")


def _is(operand: Operand, number: float) -> bool:
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) in (int, float) and operand.value == number)


def _number(operand: Operand) -> bool:
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) in (int, float))


def _scalar(operand: Operand) -> bool:
    return _number(operand) or isinstance(operand, Value) and operand.shape is SCALAR


def _keeps_dtype(kept: Operand, dropped: Operand) -> bool:
    """Whether ``kept op dropped`` has ``kept``'s dtype (Python ints are weak)."""
    if isinstance(kept, Value) and kept.floating:
        return True
    return type(dropped.value) is int


def _produced_by(operand: Operand, name: str):
    if isinstance(operand, Value) and operand.node is not None and operand.node.op.name == name:
        return operand.node
    return None


def _broadcast_scalar(operand: Operand):
    """``(scalar, shape)`` when ``operand`` is ``np.broadcast_to(scalar, shape)``."""
    node = _produced_by(operand, "broadcast_to")
    if node is not None and _scalar(node.args[0]):
        return node.args
    return None


class _Rewriter:
    def __init__(self, graph: Graph, uses: dict[Value, int]) -> None:
        self.builder = GraphBuilder(graph)
        self.uses = uses

    def emit(self, name: str, *args: Operand) -> Operand:
        return self.builder.emit(OPS[name], args)

    def single_use(self, value: Operand) -> bool:
        return isinstance(value, Value) and self.uses.get(value, 0) == 1

    def rewrite(self, node) -> Operand | None:
        method = getattr(self, "rewrite_" + node.op.name, None)
        return method(node, *node.args) if method is not None else None

    def rewrite_multiply(self, node, a, b):
        for x, y in ((a, b), (b, a)):
            if _is(y, 1) and _keeps_dtype(x, y):
                return x
            spread = _broadcast_scalar(x)
            if spread is not None and _scalar(y):
                return self.emit("broadcast_to", self.emit("multiply", spread[0], y), spread[1])
            if spread is not None and token_of(y) is x.shape:
                return self.emit("multiply", spread[0], y)
            negated = _produced_by(x, "negative")
            if negated is not None and _number(y) and self.single_use(x):
                return self.emit("multiply", negated.args[0], Const(-y.value))
        return None

    def rewrite_divide(self, node, a, b):
        if _is(b, 1) and isinstance(a, Value) and a.floating:
            return a
        spread = _broadcast_scalar(a)
        if spread is not None and _scalar(b):
            return self.emit("broadcast_to", self.emit("divide", spread[0], b), spread[1])
        return None

    def rewrite_add(self, node, a, b):
        if _is(b, 0) and _keeps_dtype(a, b):
            return a
        if _is(a, 0) and _keeps_dtype(b, a):
            return b
        return None

    rewrite_accumulate = rewrite_add

    def rewrite_subtract(self, node, a, b):
        if _is(b, 0) and _keeps_dtype(a, b):
            return a
        return None

    def rewrite_power(self, node, a, b):
        if _is(b, 1) and (type(b.value) is int or isinstance(a, Value) and a.floating):
            return a
        if node.phase != "forward" and _is(b, 2) and type(b.value) is int:
            return self.emit("multiply", a, a)  # x * x: cheaper than x ** 2 on Python floats
        return None

    def rewrite_negative(self, node, a):
        inner = _produced_by(a, "negative")
        if inner is not None:
            return inner.args[0]
        spread = _broadcast_scalar(a)
        if spread is not None:
            return self.emit("broadcast_to", self.emit("negative", spread[0]), spread[1])
        product = _produced_by(a, "multiply")
        if product is not None and self.single_use(a):
            for x, y in (product.args, product.args[::-1]):
                if _number(y):
                    return self.emit("multiply", x, Const(-y.value))
        return None


def simplify(graph: Graph) -> Graph:
    """Apply the rewrites in place, forwarding each removed result to its replacement."""
    replace: dict[Value, Operand] = {}

    def substitute(value: Value) -> Operand:
        return replace.get(value, value)

    rewriter = _Rewriter(graph, graph.uses())

    def visit(nodes: list, earliest: dict[int, Value], block: Block | None) -> list:
        """The rewritten nodes; ``earliest`` holds the first value of each shape token
        visible here (a value inside a branch or loop is not visible after it)."""
        kept: list = []
        target = Block(nodes=kept)
        for node in nodes:
            node.args = tuple(map_operand(arg, substitute) for arg in node.args)
            if isinstance(node, Region):
                for inner in node.blocks:
                    scope = dict(earliest)
                    for param in inner.params:
                        scope.setdefault(id(param.shape), param)
                    inner.nodes = visit(inner.nodes, scope, inner)
                    inner.results = [map_operand(r, substitute) for r in inner.results]
                kept.append(node)
                for out in node.outs:
                    earliest.setdefault(id(out.shape), out)
                continue
            if node.op.name in _SHAPE_QUERIES:
                query = -1 if node.op.name == "unbroadcast" else 0  # unbroadcast reads x's shape
                shaped = node.args[query]
                if isinstance(shaped, Value) and shaped.shape is not LIST:
                    args = list(node.args)
                    args[query] = earliest.get(id(shaped.shape), shaped)
                    node.args = tuple(args)
            rewriter.builder.loc, rewriter.builder.phase = node.loc, node.phase
            with rewriter.builder.inside(target):
                replacement = rewriter.rewrite(node)
            if replacement is not None and replacement is not node.out:
                if (isinstance(replacement, Value) and not replacement.hint
                        and replacement.adjoint_of is None):
                    replacement.hint = node.out.hint
                    replacement.adjoint_of = node.out.adjoint_of
                replace[node.out] = replacement
                continue
            kept.append(node)
            earliest.setdefault(id(node.out.shape), node.out)
        return kept

    top = {}
    for param in graph.params:
        top.setdefault(id(param.shape), param)
    graph.nodes = visit(graph.nodes, top, None)
    for node in walk(graph.nodes):  # adjoints keep pointing at their (surviving) primal
        for out in node.outs:
            primal = out.adjoint_of
            if primal in replace and isinstance(replace[primal], Value):
                out.adjoint_of = replace[primal]
    graph.outputs = [map_operand(o, substitute) for o in graph.outputs]
    return graph
