"""Linear algebra: matmul (``@``), dot, inner, outer, trace, the vector/Frobenius norm."""

from __future__ import annotations

import operator

import numpy as np

from autodiff.graph.ir import Const
from autodiff.ops import runtime
from autodiff.ops.registry import defop
from autodiff.ops.runtime import expand_reduced


@defop("matmul", "x1 @ x2", aliases=(np.matmul, operator.matmul), diff=("x1", "x2"))
def matmul(x1, x2): ...


@matmul.defvjp
def _(g, ans, x1, x2):
    return runtime.matmul_grad_lhs(g, x1, x2), runtime.matmul_grad_rhs(g, x1, x2)


@defop("dot", "np.dot(a, b)", aliases=(np.dot,), methods=("dot",), diff=("a", "b"))
def dot(a, b): ...


@dot.defvjp
def _(g, ans, a, b):
    return runtime.dot_grad_lhs(g, a, b), runtime.dot_grad_rhs(g, a, b)


@defop("inner", "np.inner(a, b)", aliases=(np.inner,), diff=("a", "b"))
def inner(a, b): ...


@inner.defvjp
def _(g, ans, a, b):
    return runtime.inner_grad_lhs(g, a, b), runtime.inner_grad_rhs(g, a, b)


@defop("outer", "np.outer(a, b)", aliases=(np.outer,), diff=("a", "b"))
def outer(a, b): ...


@outer.defvjp
def _(g, ans, a, b):
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


@defop("trace", "np.trace(a, offset=offset)", aliases=(np.trace,), methods=("trace",),
       diff=("a",))
def trace(a, offset=0): ...


@trace.defvjp
def _(g, ans, a, offset):
    return g * np.eye(np.shape(a)[0], np.shape(a)[1], offset)


def _norm_check(named) -> str | None:
    ord_ = named["ord"]
    if not isinstance(ord_, Const):
        return "the 'ord' of np.linalg.norm must be a constant to be differentiated"
    if ord_.value not in (None, 2, "fro"):
        return (f"np.linalg.norm with ord={ord_.value!r} has no gradient rule yet "
                "(the 2-norm of vectors and the Frobenius norm are supported)")
    if ord_.value == 2 and not (isinstance(named["axis"], Const)
                                and isinstance(named["axis"].value, int)):
        return "np.linalg.norm with ord=2 is differentiated for vectors only (give an int axis)"
    return None


@defop("norm", "np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)",
       aliases=(np.linalg.norm,), diff=("x",), shape="reduce:x", floating="always")
def norm(x, ord=None, axis=None, keepdims=False): ...


norm.vjp_check = _norm_check


@norm.defvjp
def _(g, ans, x, ord, axis, keepdims):
    return x * (expand_reduced(g, axis, keepdims) / expand_reduced(ans, axis, keepdims))


@defop("einsum", "np.einsum(subscripts, *operands)", aliases=(np.einsum,), diff=("operands",),
       shape="einsum")
def einsum(subscripts, *operands): ...


@einsum.defvjp
def _(g, ans, subscripts, operands):
    return runtime.einsum_grads(g, subscripts, operands)


# ----- np.linalg: inverse, determinant, solve (square matrices, stacks of them) -----


@defop("inv", "np.linalg.inv(a)", aliases=(np.linalg.inv,), diff=("a",))
def inv(a): ...


@inv.defvjp
def _(g, ans, a):
    return -(np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2))


@defop("det", "np.linalg.det(a)", aliases=(np.linalg.det,), diff=("a",))
def det(a): ...


@det.defvjp
def _(g, ans, a):
    return np.expand_dims(np.expand_dims(g * ans, -1), -1) * np.swapaxes(np.linalg.inv(a), -1, -2)


@defop("solve", "np.linalg.solve(a, b)", aliases=(np.linalg.solve,), diff=("a", "b"))
def solve(a, b): ...


@solve.defvjp
def _(g, ans, a, b):
    return runtime.solve_grads(g, ans, a, b)
