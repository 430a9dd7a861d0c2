"""Linear algebra: matmul (``@``), dot, inner, outer, trace, norms, einsum, and np.linalg's
inverse, determinant, solve, factorizations (cholesky, slogdet, eigh, svd, qr),
pseudo-inverse, least squares, matrix powers and multi_dot."""

from __future__ import annotations

import operator

import numpy as np

from autodiff.graph.ir import Const, Value
from autodiff.graph.shapes import SCALAR
from autodiff.graph.patterns import constant_tuple, is_none, produced_by
from autodiff.ops import runtime
from autodiff.ops.registry import OPS, NamedResults, alias, defop, helper_op
from autodiff.ops.runtime import expand_reduced
from autodiff.ops.shape_rules import einsum_result, list_result, reduced, scalar_result, shape_like
from autodiff.ops.sympy_forms import Unsupported, elementwise, matrix, objects


@defop("matmul", "x1 @ x2", aliases=(np.matmul, operator.matmul), diff=("x1", "x2"), sympy=lambda x1, x2: np.matmul(objects(x1), objects(x2)), jvp="linear")
def matmul(x1, x2): ...


@matmul.defvjp
def _(g, ans, x1, x2):
    return runtime.matmul_grad_lhs(g, x1, x2), runtime.matmul_grad_rhs(g, x1, x2)


# Bilinear products apply themselves to the tangent of one factor at a time.
@defop("dot", "np.dot(a, b)", aliases=(np.dot,), methods=("dot",), diff=("a", "b"), sympy=lambda a, b: np.dot(objects(a), objects(b)), jvp="linear")
def dot(a, b): ...


@dot.defvjp
def _(g, ans, a, b):
    return runtime.dot_grad_lhs(g, a, b), runtime.dot_grad_rhs(g, a, b)


@defop("inner", "np.inner(a, b)", aliases=(np.inner,), diff=("a", "b"), sympy=lambda a, b: np.inner(objects(a), objects(b)), jvp="linear")
def inner(a, b): ...


@inner.defvjp
def _(g, ans, a, b):
    return runtime.inner_grad_lhs(g, a, b), runtime.inner_grad_rhs(g, a, b)


@defop("outer", "np.outer(a, b)", aliases=(np.outer,), diff=("a", "b"), sympy=lambda a, b: np.outer(objects(a), objects(b)), jvp="linear")
def outer(a, b): ...


@outer.defvjp
def _(g, ans, a, b):
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


@defop("trace", "np.trace(a, offset=offset, axis1=axis1, axis2=axis2)", aliases=(np.trace,),
       methods=("trace",), diff=("a",), sympy=lambda a, offset, axis1, axis2: np.trace(objects(a), offset, axis1, axis2), jvp="linear")
def trace(a, offset=0, axis1=0, axis2=1): ...


@trace.defvjp
def _(g, ans, a, offset, axis1, axis2):
    return runtime.trace_grad(g, a, offset, axis1, axis2)


def _order(operand) -> Const | None:
    """The constant order of a norm: a constant, or minus one (``-np.inf``, which is
    not folded while compiling as np.inf is a module's name)."""
    if isinstance(operand, Const):
        return operand
    negated = produced_by(operand, OPS["negative"])
    if negated is not None and isinstance(negated.args[0], Const) and isinstance(
            negated.args[0].value, (int, float)):
        return Const(-negated.args[0].value)
    return None


def _norm_check(named) -> str | None:
    ord_, axis = _order(named["ord"]), named["axis"]
    if ord_ is None:
        return "the 'ord' of np.linalg.norm must be a constant to be differentiated"
    if not isinstance(axis, Const):
        return "the 'axis' of np.linalg.norm must be a constant to be differentiated"
    if ord_.value == 0:
        return ("np.linalg.norm with ord=0 counts the nonzero entries: a step function, with "
                "no derivative where an entry is zero and zero elsewhere")
    if ord_.value in (-1, -2) and axis.value is None:
        return (f"np.linalg.norm with ord={ord_.value!r} is differentiated with its axis given "
                "(axis=-1 for vectors, axis=(-2, -1) for matrices): whether it is a vector or "
                "a matrix norm is not known while compiling, and the two differ")
    if ord_.value not in (None, 2, "fro"):  # the forms _norm_forms writes are valid
        return f"np.linalg.norm has no order {ord_.value!r} for these axes"
    return None


def _norm_forms(named, builder):
    """np.linalg.norm of an order other than the 2-norm of vectors and the Frobenius
    norm, as NumPy computes it from ops with rules of their own (abs, sum, max, min,
    power, the singular values), so each has their rules: the max norm's gradient
    at a tie is max's convention, a matrix 2-norm's where the largest singular value
    repeats the singular values' (the one LAPACK lists first among equals)."""
    ord_, axis, keepdims, x = _order(named["ord"]), named["axis"], named["keepdims"], named["x"]
    if not all(isinstance(v, Const) for v in (ord_, axis, keepdims)):
        return None
    order, axes = ord_.value, axis.value
    if isinstance(axes, tuple) and len(axes) == 1:
        axes = axes[0]
    if axes is None:
        return _whole_norm(x, order, keepdims.value, builder)
    if order is None or order == "fro" or isinstance(order, str) and not isinstance(axes, tuple):
        return None

    def emit(name, *args):
        return builder.emit(OPS[name], tuple(a if not _is_plain(a) else Const(a) for a in args))

    if isinstance(axes, int):
        if order == 2 or order == 0:
            return None
        magnitude = emit("abs", x)
        if order == np.inf:
            return emit("max", magnitude, axes, keepdims.value)
        if order == -np.inf:
            return emit("min", magnitude, axes, keepdims.value)
        if order == 1:
            return emit("sum", magnitude, axes, keepdims.value)
        total = emit("sum", emit("power", magnitude, float(order)), axes, keepdims.value)
        return emit("power", total, 1.0 / order)
    if not (isinstance(axes, tuple) and len(axes) == 2):
        return None
    rows, cols = axes
    if order in (2, -2, "nuc"):
        moved = emit("moveaxis", x, (rows, cols), (-2, -1))
        values = emit("svd_values", moved, False, False, False)
        reduce = {2: "max", -2: "min", "nuc": "sum"}[order]
        result = emit(reduce, values, -1, False)
    elif order in (1, -1, np.inf, -np.inf):
        # 1: the largest sum of |x| down a column; inf: along a row (-1, -inf: smallest).
        inner, outer = (rows, cols) if order in (1, -1) else (cols, rows)
        sums = emit("sum", emit("abs", x), inner, True)
        result = emit("max" if order > 0 else "min", sums, outer, True)
        if keepdims.value:
            return result
        return emit("squeeze", result, (rows, cols))
    else:
        return None
    if keepdims.value:
        return emit("expand_dims", result, (rows, cols))
    return result


def _whole_norm(x, order, keepdims: bool, builder):
    """np.linalg.norm(x, ord) with axis None, of a vector or a matrix (NumPy's choice by
    x's rank, known when it runs), as a norm with its axes given: a vector is taken as a
    column, whose matrix norm of order 1, 2, inf or -inf is the vector's of the same
    order; an order of vectors alone (3, 0.5) or of matrices alone ('nuc') checks the
    rank when it runs, as NumPy does. Orders -1 and -2 differ between the two and are
    refused while compiling (_norm_check)."""
    if order in (None, "fro", 0, -1, -2):
        return None
    if order in (1, 2, np.inf, -np.inf):
        operand, axes = builder.emit(OPS["as_column"], (x,)), (0, 1)
    elif order == "nuc":
        operand, axes = builder.emit(OPS["of_rank"], (x, Const(2), Const(order))), (0, 1)
    elif isinstance(order, (int, float)):
        operand, axes = builder.emit(OPS["of_rank"], (x, Const(1), Const(order))), 0
    else:
        return None
    result = builder.emit(OPS["norm"], (operand, Const(order), Const(axes), Const(False)))
    if isinstance(result, Value) and result.shape is not SCALAR:
        # A number, whatever x's rank: said so, its adjoint (the seed 1.0, a Python float)
        # is spread back over the column in x's dtype, as a scalar's is.
        result.shape = SCALAR
    if not keepdims:
        return result
    kept = builder.emit(OPS["sum"], (x, Const(None), Const(True)))
    return builder.emit(OPS["multiply"], (result, builder.emit(OPS["ones_like"], (kept, Const(None)))))


def as_column(x):
    """A vector as a column, a matrix as it is (np.linalg.norm with axis None).

    >>> as_column(np.array([1.0, 2.0])).shape
    (2, 1)
    """
    if np.ndim(x) == 1:
        return np.reshape(x, (-1, 1))
    if np.ndim(x) != 2:
        raise ValueError("np.linalg.norm with an order and axis None takes a vector or a "
                         f"matrix, not an array of {np.ndim(x)} dimensions")
    return x


as_column_op = helper_op(as_column, diff=("x",), jvp="linear", fresh=False,
                         no_sympy="a reshape")  # (a view of x)


@as_column_op.defvjp
def _(g, ans, x):
    return np.reshape(g, np.shape(x))


def of_rank(x, rank, order):
    """``x``, after checking it has ``rank`` dimensions: np.linalg.norm of order ``order``
    and axis None, which is of vectors alone (rank 1) or matrices alone (rank 2)."""
    if np.ndim(x) != rank:
        raise ValueError(f"np.linalg.norm with ord={order!r} and axis None takes "
                         f"{'a vector' if rank == 1 else 'a matrix'}, not an array of "
                         f"{np.ndim(x)} dimensions")
    return x  # (itself: ``fresh=False``, never updated in place)


of_rank_op = helper_op(of_rank, diff=("x",), shape=shape_like("x"), jvp="linear", fresh=False,
                       no_sympy="a check of a shape")
of_rank_op.kind_params = ("rank", "order")


@of_rank_op.defvjp
def _(g, ans, x, rank, order):
    return g


def _is_plain(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, tuple))


def _sympy_norm(x, ord, axis, keepdims):
    x = objects(x)
    if not (ord in (None, "fro") or (ord == 2 and (x.ndim == 1 or isinstance(axis, int)))):
        raise Unsupported(f"np.linalg.norm with ord={ord!r} (the 2-norm of vectors and the "
                          "Frobenius norm are supported)")
    return elementwise("sqrt")(np.sum(x * x, axis=axis, keepdims=keepdims))


@defop("norm", "np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)",
       aliases=(np.linalg.norm,), diff=("x",), shape=reduced, floating="always", sympy=_sympy_norm,
       simplify=_norm_forms, real_rules=True)
def norm(x, ord=None, axis=None, keepdims=False): ...


norm.vjp_check = _norm_check


@norm.defvjp
def _(g, ans, x, ord, axis, keepdims):
    return x * (expand_reduced(g, axis, keepdims) / expand_reduced(ans, axis, keepdims))


# The vector 2-norm and the Frobenius norm, the forms _norm_check accepts: like the
# VJP, this rule is wrong for any other ord.
@norm.defjvp
def _(t, ans, x, ord, axis, keepdims):
    return np.sum(x * t, axis=axis, keepdims=keepdims) / ans


# Of complex values, sqrt(sum |x|^2): conj(x) / norm, and Re(conj(x) t) / norm.
@norm.defvjp_complex
def _(g, ans, x, ord, axis, keepdims):
    return np.conj(x) * (expand_reduced(np.real(g), axis, keepdims)
                         / expand_reduced(ans, axis, keepdims))


@norm.defjvp_complex
def _(t, ans, x, ord, axis, keepdims):
    return np.sum(np.real(np.conj(x) * t), axis=axis, keepdims=keepdims) / ans


def _einsum_call(*args, **kwargs):
    """``np.einsum(x, [0, 1], y, [1, 2], [0, 2])``, the sublist form, as the subscripts
    string ``"ab,bc->ac"``, written at compile time; the string form as it is.
    ``optimize=`` only chooses the order of the products (the result is the same): ignored."""
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError("np.einsum takes no keyword arguments here but optimize=")
    first = args[0] if args else None
    if isinstance(first, Const) and isinstance(first.value, str):
        return list(args)
    operands, inputs = args[0:-1:2], args[1::2]
    output = args[-1] if len(args) % 2 else None
    labels = [_sublist_labels(sub) for sub in inputs]
    spec = ",".join(labels) + ("" if output is None else "->" + _sublist_labels(output))
    return [Const(spec), *operands]


def _sublist_labels(sublist) -> str:
    if isinstance(sublist, tuple) and all(isinstance(item, Const) for item in sublist):
        axes = [item.value for item in sublist]  # a list holding a name (Ellipsis)
    elif isinstance(sublist, Const) and isinstance(sublist.value, (tuple, list)):
        axes = sublist.value
    else:
        raise TypeError("the sublists of np.einsum must be constant lists of axis numbers")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    for axis in axes:
        if axis is Ellipsis:
            text += "..."
        elif isinstance(axis, int) and 0 <= axis < len(letters):
            text += letters[axis]
        else:
            raise TypeError(f"np.einsum sublists take axis numbers 0 to 51 and Ellipsis, not "
                            f"{axis!r}")
    return text


@defop("einsum", "np.einsum(subscripts, *operands)", aliases=((np.einsum, _einsum_call),),
       diff=("operands",), shape=einsum_result, sympy=lambda subscripts, operands: np.einsum(subscripts, *map(objects, operands)))
def einsum(subscripts, *operands): ...


@einsum.defvjp
def _(g, ans, subscripts, operands):
    return runtime.einsum_grads(g, subscripts, operands)


def einsum_tangent(t, ans, subscripts, operands):
    """Tangent of ``ans = np.einsum(subscripts, *operands)`` given one tangent per operand.

    Einsum is linear in each operand: the sum over k of the einsum with operand
    k replaced by its tangent. Operands whose tangent is zero (those that do not
    vary) add nothing and are skipped; ``ans`` gives the shape if all are.

    >>> a, b = 2.0 * np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> einsum_tangent((np.eye(2), np.zeros((2, 2))), a @ b, "ij,jk->ik", (a, b)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    total = None
    for k, tangent in enumerate(t):
        if np.any(tangent):
            part = np.einsum(subscripts, *operands[:k], tangent, *operands[k + 1:])
            total = part if total is None else total + part
    return np.zeros(np.shape(ans)) if total is None else total


einsum_tangent_op = helper_op(einsum_tangent, diff=("t", "operands"), shape=shape_like("ans"))


@einsum.defjvp
def _(t, ans, subscripts, operands):
    return einsum_tangent(t, ans, subscripts, operands)


def einsum_tangent_jvp(t, d, ans, subscripts, operands):
    """Tangent of ``einsum_tangent(t, ans, subscripts, operands)`` along tangents ``d`` of
    the operands: the sum over pairs ``k != j`` of the einsum with operand ``k`` replaced
    by ``t[k]`` and operand ``j`` by ``d[j]`` (a second derivative of einsum).

    >>> a, b = np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> einsum_tangent_jvp((a, np.zeros((2, 2))), (np.zeros((2, 2)), b), a @ b, "ij,jk->ik",
    ...                    (a, b)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    total = None
    for k, tangent in enumerate(t):
        for j, direction in enumerate(d):
            if j != k and np.any(tangent) and np.any(direction):
                swapped = list(operands)
                swapped[k], swapped[j] = tangent, direction
                part = np.einsum(subscripts, *swapped)
                total = part if total is None else total + part
    return np.zeros(np.shape(ans)) if total is None else total


helper_op(einsum_tangent_jvp, diff=("t", "d", "operands"), shape=shape_like("ans"),
           no_gradient="a third derivative of np.einsum: no rule")


# Forward over forward: einsum_tangent is linear in t, and in each operand but the one
# whose tangent replaces it.
@einsum_tangent_op.defjvp("t")
def _(dt, result, t, ans, subscripts, operands):
    return einsum_tangent(dt, ans, subscripts, operands)


@einsum_tangent_op.defjvp("operands")
def _(doperands, result, t, ans, subscripts, operands):
    return einsum_tangent_jvp(t, doperands, ans, subscripts, operands)


# Reverse over forward: the adjoint of t[k] is einsum's adjoint of operand k; that of
# operand j sums, over the k != j, einsum's adjoint of j with operand k replaced by t[k].
@einsum_tangent_op.defvjp
def _(gg, result, t, ans, subscripts, operands):
    return (runtime.einsum_grads(gg, subscripts, operands),
            runtime.einsum_grads_jvp(t, gg, subscripts, operands))


# ----- np.linalg: inverse, determinant, solve (square matrices, stacks of them) -----


@defop("inv", "np.linalg.inv(a)", aliases=(np.linalg.inv,), diff=("a",), sympy=lambda a: objects(matrix(a).inv().tolist()))
def inv(a): ...


@inv.defvjp
def _(g, ans, a):
    return -(np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2))


@inv.defjvp
def _(t, ans, a):
    return -(ans @ t @ ans)


@defop("det", "np.linalg.det(a)", aliases=(np.linalg.det,), diff=("a",), sympy=lambda a: matrix(a).det())
def det(a): ...


@det.defvjp
def _(g, ans, a):
    return np.expand_dims(np.expand_dims(g * ans, -1), -1) * np.swapaxes(np.linalg.inv(a), -1, -2)


# Jacobi's formula, d det(A) = det(A) trace(A^-1 dA), for one matrix or a stack.
@det.defjvp
def _(t, ans, a):
    return ans * np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * t, axis=(-2, -1))


def _sympy_solve(a, b):
    b = objects(b)
    solution = matrix(a).LUsolve(matrix(b.reshape(len(b), -1)))
    return objects(solution.tolist()).reshape(b.shape)


@defop("solve", "np.linalg.solve(a, b)", aliases=(np.linalg.solve,), diff=("a", "b"), sympy=_sympy_solve)
def solve(a, b): ...


@solve.defvjp
def _(g, ans, a, b):
    return runtime.solve_grads(g, ans, a, b)


def solve_tangent(t, x, a, b):
    """Part of the tangent of ``x = np.linalg.solve(a, b)`` due to the tangent ``t`` of ``a``:
    ``solve(a, -t @ x)``, with ``x`` as a column when ``b`` is a vector (1-D in NumPy 2).

    >>> solve_tangent(np.eye(2), np.array([1.0, 2.0]), 2 * np.eye(2), np.array([2.0, 4.0])).tolist()
    [-0.5, -1.0]
    """
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, t @ x[..., None])[..., 0]
    return -np.linalg.solve(a, t @ x)


solve_tangent_op = helper_op(solve_tangent, diff=("t", "x", "a"), shape=shape_like("x"))


# Its own tangents (forward over forward): linear in t and in x; for a, the
# derivative of A^-1 is -A^-1 dA A^-1, applied to -t @ x.
@solve_tangent_op.defjvp("t")
def _(dt, ans, t, x, a, b):
    return solve_tangent(dt, x, a, b)


@solve_tangent_op.defjvp("x")
def _(dx, ans, t, x, a, b):
    return solve_tangent(t, dx, a, b)


@solve_tangent_op.defjvp("a")
def _(da, ans, t, x, a, b):
    return solve_tangent(da, ans, a, b)


def solve_tangent_grads(gg, result, t, x, a, b):
    """Adjoints of ``t``, ``x`` and ``a`` in ``result = solve_tangent(t, x, a, b)``, which is
    ``-solve(a, t @ x)``, given the adjoint ``gg`` of ``result``: with ``u = solve(a.T, gg)``,
    ``-u @ x.T``, ``-t.T @ u`` and ``-u @ result.T`` (the last from d(A^-1) = -A^-1 dA A^-1).

    >>> grads = solve_tangent_grads(np.array([1.0, 0.0]), np.array([-1.0, 0.0]), np.eye(2),
    ...                             np.array([2.0, 0.0]), 2 * np.eye(2), np.array([4.0, 0.0]))
    >>> [float(np.ravel(g)[0]) for g in grads]  # the only nonzero entries
    [-1.0, -0.5, 0.5]
    """
    if np.ndim(b) == 1:
        gg, result, x = gg[..., None], result[..., None], x[..., None]
    u = np.linalg.solve(np.swapaxes(a, -1, -2), gg)
    dt = -(u @ np.swapaxes(x, -1, -2))
    dx = -(np.swapaxes(t, -1, -2) @ u)
    da = -(u @ np.swapaxes(result, -1, -2))
    return [dt, dx[..., 0] if np.ndim(b) == 1 else dx, da]


helper_op(solve_tangent_grads, diff=("gg", "result", "t", "x", "a"), shape=list_result,
           fresh=False, no_gradient="a third derivative of np.linalg.solve: no rule")


# Reverse over forward (ad.grad of an ad.jvp).
@solve_tangent_op.defvjp
def _(gg, result, t, x, a, b):
    return solve_tangent_grads(gg, result, t, x, a, b)


@solve.defjvp("a")
def _(t, ans, a, b):
    return solve_tangent(t, ans, a, b)


@solve.defjvp("b")
def _(t, ans, a, b):
    return np.linalg.solve(a, t)


# ----- np.linalg factorizations: cholesky, slogdet, eigh, svd -----
#
# NumPy's Cholesky and eigh read one triangle of their operand (the lower one): the
# other does not change the result, so its adjoint is zero, and an entry below the
# diagonal stands for both entries of the symmetric matrix the routine sees. The
# rules below are the derivatives of that function of every entry, so they hold for a
# matrix that is not symmetric too (the tables check them on such matrices).


def _symmetric_from(t, UPLO="L"):
    """The symmetric matrix a routine reading the ``UPLO`` triangle of ``t`` sees."""
    n = np.shape(t)[-1]
    outside = t * np.tri(n, k=-1)  # strictly below the diagonal
    if UPLO == "U":
        outside = t * np.transpose(np.tri(n, k=-1))
    return t * np.eye(n) + outside + np.swapaxes(outside, -1, -2)


def _triangle_adjoint(s, UPLO="L"):
    """The adjoint of ``t`` given the adjoint ``s`` of ``_symmetric_from(t, UPLO)``."""
    n = np.shape(s)[-1]
    if UPLO == "U":
        return s * np.transpose(np.tri(n)) + np.swapaxes(s, -1, -2) * np.transpose(np.tri(n, k=-1))
    return s * np.tri(n) + np.swapaxes(s, -1, -2) * np.tri(n, k=-1)


def _sympy_cholesky(a):
    a = matrix(a)
    n = a.shape[0]
    s = a.copy()
    for i in range(n):
        for j in range(i + 1, n):
            s[i, j] = a[j, i]
    return objects(s.cholesky(hermitian=False).tolist())


@defop("cholesky", "np.linalg.cholesky(a)", aliases=(np.linalg.cholesky,), diff=("a",),
       shape=shape_like("a"), floating="always", sympy=_sympy_cholesky, real_rules=True)
def cholesky(a): ...


# With a = L L^T, dL = L Phi(L^-1 dA L^-T), where Phi keeps the lower triangle and
# halves the diagonal (Murray, "Differentiation of the Cholesky decomposition", 2016);
# Phi is its own adjoint, so dA's adjoint is L^-T Phi(L^T g) L^-1, read through the
# lower triangle.
@cholesky.defvjp
def _(g, ans, a):
    n = np.shape(a)[-1]
    inverse = np.linalg.inv(ans)
    inner = (np.swapaxes(ans, -1, -2) @ g) * (np.tri(n) - 0.5 * np.eye(n))
    return _triangle_adjoint(np.swapaxes(inverse, -1, -2) @ inner @ inverse)


@cholesky.defjvp
def _(t, ans, a):
    n = np.shape(a)[-1]
    inverse = np.linalg.inv(ans)
    inner = inverse @ _symmetric_from(t) @ np.swapaxes(inverse, -1, -2)
    return ans @ (inner * (np.tri(n) - 0.5 * np.eye(n)))


def _results(routine: str, parts: tuple[str, ...], named_tuple: type | None = None):
    """The ``simplify`` of an op whose NumPy function returns a tuple (slogdet, eigh,
    svd, qr, lstsq): the call becomes one node running the routine (``routine``, which
    passes no gradient) and one node per result reading its part of the routine's tuple,
    which carries the gradient to the operand by a rule of its own. The call's value is
    those results, known while compiling: as NumPy's ``named_tuple`` (``EighResult``)
    when it returns one, else a tuple, so ``s, l = np.linalg.slogdet(a)``,
    ``np.linalg.slogdet(a)[1]`` and ``np.linalg.slogdet(a).logabsdet`` read them."""

    def simplify(named, builder):
        args = tuple(named.values())
        computed = builder.emit(OPS[routine], args)
        results = tuple(builder.emit(OPS[part], (*args, computed)) for part in parts)
        return results if named_tuple is None else NamedResults(results, named_tuple)

    return simplify


def _unused(*args):
    """The SymPy form of a routine node: nothing, as its results' forms compute from the
    operand itself."""


_TUPLE = ("{} returns a tuple: it is built as a node running the routine and one op per "
          "result, which carry the gradient")
_ROUTINE = "runs {} for the ops reading its results, which carry the gradient by their own rules"


@defop("slogdet", "np.linalg.slogdet(a)", aliases=(np.linalg.slogdet,),
       diff=("a",), simplify=_results("slogdet_routine", ("slogdet_sign", "slogdet_logabsdet"),
                         type(np.linalg.slogdet(np.eye(1)))),
       no_gradient=_TUPLE.format("np.linalg.slogdet"),
       no_sympy=_TUPLE.format("np.linalg.slogdet"), real_rules=True)
def slogdet(a): ...


@defop("slogdet_routine", "np.linalg.slogdet(a)", nondiff_output=True, floating=None,
       no_gradient=_ROUTINE.format("np.linalg.slogdet"), sympy=_unused)
def slogdet_routine(a): ...


@defop("slogdet_sign", "computed[0]", nondiff_output=True, floating="always",
       no_gradient="the sign of the determinant is piecewise constant: its derivative is zero "
       "where it is defined", sympy=lambda a, computed: elementwise("sign")(matrix(a).det()),
       real_rules=True)
def slogdet_sign(a, computed): ...


@defop("slogdet_logabsdet", "computed[1]", diff=("a",), floating="always",
       sympy=lambda a, computed: elementwise("log")(elementwise("Abs")(matrix(a).det())),
       real_rules=True)
def slogdet_logabsdet(a, computed): ...


# d log|det A| = trace(A^-1 dA), for one matrix or a stack (the sign does not vary
# where the determinant is not zero).
@slogdet_logabsdet.defvjp
def _(g, ans, a, computed):
    return np.expand_dims(np.expand_dims(g, -1), -1) * np.swapaxes(np.linalg.inv(a), -1, -2)


@slogdet_logabsdet.defjvp
def _(t, ans, a, computed):
    return np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * t, axis=(-2, -1))


# Of a complex matrix, log|det A| = Re log det A: the gradient of log det A, A^-T, times
# the real adjoint; the tangent, the real part of trace(A^-1 dA).
@slogdet_logabsdet.defvjp_complex
def _(g, ans, a, computed):
    return (np.expand_dims(np.expand_dims(np.real(g), -1), -1)
            * np.swapaxes(np.linalg.inv(a), -1, -2))


@slogdet_logabsdet.defjvp_complex
def _(t, ans, a, computed):
    return np.real(np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * t, axis=(-2, -1)))


# np.linalg.eigh: w ascending and V with A = V diag(w) V^T, A the symmetric matrix of
# the triangle UPLO names. dw = diag(V^T dA V) and dV = V (F * (V^T dA V)) with
# F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it. The eigenvalues' rule needs
# no F and holds with repeated eigenvalues too (their gradient is the one of the order
# LAPACK returns them in). For eigenvectors the derivative is undefined where two
# eigenvalues are equal: as in JAX and autograd, F is then infinite and so is the
# gradient (NaN where it meets a zero), never a silently finite value. Each
# eigenvector's sign is LAPACK's choice: functions invariant to it (v * v, V diag(e) V^T)
# are differentiable, the vector itself only as long as that choice does not flip.


def eigh_values(a, UPLO, computed):
    """The eigenvalues in ``computed``, ``np.linalg.eigh(a, UPLO)``."""
    return computed[0]


def eigh_vectors(a, UPLO, computed):
    """The eigenvectors (columns) in ``computed``, ``np.linalg.eigh(a, UPLO)``."""
    return computed[1]


def _eigh_check(named) -> str | None:
    uplo = named["UPLO"]
    if not (isinstance(uplo, Const) and uplo.value in ("L", "U")):
        return "the UPLO of np.linalg.eigh must be the constant 'L' or 'U' to be differentiated"
    return None


_NO_SYMBOLIC_EIGH = ("the eigenvalues of a symbolic matrix have no closed form beyond 4 by 4 "
                     "(SymPy's would be roots of the characteristic polynomial, unordered)")


@defop("eigh", "np.linalg.eigh(a, UPLO=UPLO)", aliases=(np.linalg.eigh,),
       diff=("a",), simplify=_results("eigh_routine", ("eigh_values", "eigh_vectors"),
                         type(np.linalg.eigh(np.eye(1)))),
       no_gradient=_TUPLE.format("np.linalg.eigh"), no_sympy=_NO_SYMBOLIC_EIGH, real_rules=True)
def eigh(a, UPLO="L"): ...


@defop("eigh_routine", "np.linalg.eigh(a, UPLO=UPLO)", nondiff_output=True, floating=None,
       no_gradient=_ROUTINE.format("np.linalg.eigh"), sympy=_unused)
def eigh_routine(a, UPLO="L"): ...


@defop("eigh_values", "computed[0]", aliases=(eigh_values,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_EIGH, real_rules=True)
def _eigh_values(a, UPLO, computed): ...


@defop("eigh_vectors", "computed[1]", aliases=(eigh_vectors,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_EIGH, real_rules=True)
def _eigh_vectors(a, UPLO, computed): ...


OPS["eigh_values"].vjp_check = _eigh_check
OPS["eigh_vectors"].vjp_check = _eigh_check


@OPS["eigh_values"].defvjp
def _(g, ans, a, UPLO, computed):
    v = eigh_vectors(a, UPLO, computed)
    return _triangle_adjoint((v * np.expand_dims(g, -2)) @ np.swapaxes(v, -1, -2), UPLO)


@OPS["eigh_values"].defjvp
def _(t, ans, a, UPLO, computed):
    v = eigh_vectors(a, UPLO, computed)
    return np.sum(v * (_symmetric_from(t, UPLO) @ v), axis=-2)


def _gaps(w):
    """F[..., i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = np.shape(w)[-1]
    return 1.0 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + np.eye(n)) - np.eye(n)


@OPS["eigh_vectors"].defvjp
def _(g, ans, a, UPLO, computed):
    inner = _gaps(eigh_values(a, UPLO, computed)) * (np.swapaxes(ans, -1, -2) @ g)
    return _triangle_adjoint(ans @ inner @ np.swapaxes(ans, -1, -2), UPLO)


@OPS["eigh_vectors"].defjvp
def _(t, ans, a, UPLO, computed):
    inner = np.swapaxes(ans, -1, -2) @ _symmetric_from(t, UPLO) @ ans
    return ans @ (_gaps(eigh_values(a, UPLO, computed)) * inner)


# np.linalg.svd: A = U diag(s) Vh with k = min(m, n) singular values, descending. With
# dS = U^T dA V and F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal (0 on it):
# ds = diag(dS), dU = U (F * (dS S + S dS^T)) + (I - U U^T) dA V S^-1 and
# dV = V (F * (S dS + dS^T S)) + (I - V V^T) dA^T U S^-1 (Townsend, "Differentiating
# the singular value decomposition", 2016; the forms of JAX's rule). The singular
# values' rule needs neither F nor S^-1 and holds for repeated singular values. For the
# singular vectors the derivative is undefined where two singular values are equal, or
# one is zero: as in JAX and autograd, F or S^-1 is then infinite, and so is the
# gradient (NaN where it meets a zero). Each pair u_i, v_i has its sign chosen by
# LAPACK together: U diag(f(s)) Vh, u * u and v * v are differentiable regardless.
# Singular vectors are differentiated for full_matrices=False, and for
# full_matrices=True on square matrices (where the full factors are the reduced ones):
# the extra columns of a full U (or rows of Vh) of a matrix that is not square are not
# unique, and such a matrix is refused when the rule runs (square_only), as JAX does.


def svd_u(a, full_matrices, compute_uv, hermitian, computed):
    """U in ``computed``, ``np.linalg.svd(a, ...)``."""
    return computed[0]


def svd_s(a, full_matrices, compute_uv, hermitian, computed):
    """The singular values in ``computed``, ``np.linalg.svd(a, ...)``."""
    return computed[1]


def svd_vh(a, full_matrices, compute_uv, hermitian, computed):
    """Vh in ``computed``, ``np.linalg.svd(a, ...)``."""
    return computed[2]


def _svd_parts(named, builder):
    compute_uv = named["compute_uv"]
    if not isinstance(compute_uv, Const):
        return None  # the call as it is: a gradient reaching it is refused (svd's no_gradient)
    if not compute_uv.value:
        return builder.emit(OPS["svd_values"], tuple(named.values()))
    return _results("svd_routine", ("svd_u", "svd_s", "svd_vh"),
                    type(np.linalg.svd(np.eye(1))))(named, builder)


def _svd_check(vectors: bool):
    def check(named) -> str | None:
        if not (isinstance(named["hermitian"], Const) and named["hermitian"].value is False):
            return "np.linalg.svd is differentiated with hermitian=False (the default) alone"
        if vectors and not (isinstance(named["full_matrices"], Const)
                            and isinstance(named["full_matrices"].value, bool)):
            return ("the singular vectors of np.linalg.svd are differentiated with a constant "
                    "full_matrices")
        return None
    return check


_NO_SYMBOLIC_SVD = ("singular values of a symbolic matrix are square roots of the roots of a "
                    "polynomial, with no closed form beyond 4 by 4")


@defop("svd", "np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, "
       "hermitian=hermitian)", aliases=(np.linalg.svd,), diff=("a",), simplify=_svd_parts,
       no_gradient="np.linalg.svd is differentiated with a constant compute_uv alone (a tuple "
       "or an array, decided while compiling)", no_sympy=_NO_SYMBOLIC_SVD, real_rules=True)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False): ...


@defop("svd_routine", "np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)",
       nondiff_output=True, floating=None, no_gradient=_ROUTINE.format("np.linalg.svd"),
       sympy=_unused)
def svd_routine(a, full_matrices=True, compute_uv=True, hermitian=False): ...


@defop("svd_values", "np.linalg.svd(a, compute_uv=False, hermitian=hermitian)", diff=("a",),
       floating="always", no_sympy=_NO_SYMBOLIC_SVD, real_rules=True)
def svd_values(a, full_matrices=True, compute_uv=False, hermitian=False): ...


@defop("svd_u", "computed[0]", aliases=(svd_u,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_SVD, real_rules=True)
def _svd_u(a, full_matrices, compute_uv, hermitian, computed): ...


@defop("svd_s", "computed[1]", aliases=(svd_s,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_SVD, real_rules=True)
def _svd_s(a, full_matrices, compute_uv, hermitian, computed): ...


@defop("svd_vh", "computed[2]", aliases=(svd_vh,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_SVD, real_rules=True)
def _svd_vh(a, full_matrices, compute_uv, hermitian, computed): ...


OPS["svd_values"].vjp_check = _svd_check(False)
OPS["svd_s"].vjp_check = _svd_check(False)
OPS["svd_u"].vjp_check = _svd_check(True)
OPS["svd_vh"].vjp_check = _svd_check(True)


@OPS["svd_values"].defvjp
def _(g, ans, a, full_matrices, compute_uv, hermitian):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return u @ (np.expand_dims(g, -1) * vh)


@OPS["svd_values"].defjvp
def _(t, ans, a, full_matrices, compute_uv, hermitian):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * (t @ np.swapaxes(vh, -1, -2)), axis=-2)


def _reduced_factors(a, full_matrices, compute_uv, hermitian, computed):
    """U and Vh of the reduced SVD of ``a``: those in ``computed``, unless it holds full
    ones (then an SVD of its own)."""
    if full_matrices:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return u, vh
    return (svd_u(a, full_matrices, compute_uv, hermitian, computed),
            svd_vh(a, full_matrices, compute_uv, hermitian, computed))


@OPS["svd_s"].defvjp
def _(g, ans, a, full_matrices, compute_uv, hermitian, computed):
    u, vh = _reduced_factors(a, full_matrices, compute_uv, hermitian, computed)
    return u @ (np.expand_dims(g, -1) * vh)


@OPS["svd_s"].defjvp
def _(t, ans, a, full_matrices, compute_uv, hermitian, computed):
    u, vh = _reduced_factors(a, full_matrices, compute_uv, hermitian, computed)
    return np.sum(u * (t @ np.swapaxes(vh, -1, -2)), axis=-2)


def square_only(x, a, what):
    """``x``, after checking that ``a`` is a square matrix (or a stack of them): ``what``
    (a factorization's full factors) is differentiated for square matrices alone."""
    if np.shape(a)[-2] != np.shape(a)[-1]:
        raise ValueError(f"{what} is differentiated for square matrices alone (the extra "
                         "columns it gives a matrix that is not square are not unique; JAX "
                         f"refuses them too), not a {np.shape(a)[-2]} by {np.shape(a)[-1]} one")
    return x


square_only_op = helper_op(square_only, diff=("x",), shape=shape_like("x"), jvp="linear",
                           no_sympy="a check of a shape")
square_only_op.kind_params = ("a", "what")


@square_only_op.defvjp
def _(g, ans, x, a, what):
    return g


@OPS["svd_u"].defvjp
def _(g, ans, a, full_matrices, compute_uv, hermitian, computed):
    if full_matrices:
        ans = square_only(ans, a, "the singular vectors of np.linalg.svd(a, full_matrices=True)")
    s = svd_s(a, full_matrices, compute_uv, hermitian, computed)
    vh = svd_vh(a, full_matrices, compute_uv, hermitian, computed)
    j = _gaps(s * s) * (np.swapaxes(ans, -1, -2) @ g)
    core = (j + np.swapaxes(j, -1, -2)) * np.expand_dims(s, -2)
    rest = (g - ans @ (np.swapaxes(ans, -1, -2) @ g)) / np.expand_dims(s, -2)
    return (ans @ core + rest) @ vh


@OPS["svd_u"].defjvp
def _(t, ans, a, full_matrices, compute_uv, hermitian, computed):
    if full_matrices:
        ans = square_only(ans, a, "the singular vectors of np.linalg.svd(a, full_matrices=True)")
    s = svd_s(a, full_matrices, compute_uv, hermitian, computed)
    v = np.swapaxes(svd_vh(a, full_matrices, compute_uv, hermitian, computed), -1, -2)
    tv = t @ v
    ds = np.swapaxes(ans, -1, -2) @ tv
    mixed = ds * np.expand_dims(s, -2) + np.swapaxes(ds, -1, -2) * np.expand_dims(s, -1)
    return ans @ (_gaps(s * s) * mixed) + (tv - ans @ ds) / np.expand_dims(s, -2)


@OPS["svd_vh"].defvjp
def _(g, ans, a, full_matrices, compute_uv, hermitian, computed):
    if full_matrices:
        ans = square_only(ans, a, "the singular vectors of np.linalg.svd(a, full_matrices=True)")
    u = svd_u(a, full_matrices, compute_uv, hermitian, computed)
    s = svd_s(a, full_matrices, compute_uv, hermitian, computed)
    k = _gaps(s * s) * (ans @ np.swapaxes(g, -1, -2))
    core = np.expand_dims(s, -1) * (k + np.swapaxes(k, -1, -2))
    rest = (g - (g @ np.swapaxes(ans, -1, -2)) @ ans) / np.expand_dims(s, -1)
    return u @ (core @ ans + rest)


@OPS["svd_vh"].defjvp
def _(t, ans, a, full_matrices, compute_uv, hermitian, computed):
    if full_matrices:
        ans = square_only(ans, a, "the singular vectors of np.linalg.svd(a, full_matrices=True)")
    u = svd_u(a, full_matrices, compute_uv, hermitian, computed)
    s = svd_s(a, full_matrices, compute_uv, hermitian, computed)
    v = np.swapaxes(ans, -1, -2)
    tu = np.swapaxes(t, -1, -2) @ u
    ds = np.swapaxes(u, -1, -2) @ t @ v
    mixed = np.expand_dims(s, -1) * ds + np.swapaxes(ds, -1, -2) * np.expand_dims(s, -2)
    dv = v @ (_gaps(s * s) * mixed) + (tu - v @ (ans @ tu)) / np.expand_dims(s, -2)
    return np.swapaxes(dv, -1, -2)


# np.linalg.qr (mode 'reduced', a matrix with at least as many rows as columns): with
# X = dA R^-1, Y = Q^T X and Omega = L - L^T for L the part of Y below the diagonal,
# dQ = Q (Omega - Y) + X and dR = (Y - Omega) R (the forms of JAX's rule). The adjoint:
# with B = Q^T gQ - gR R^T and C = tril(B - B^T, -1) - B, gA = (gQ + Q C) R^-T. The
# rules hold while the signs LAPACK gives R's diagonal stay (they do near a matrix of
# full rank). A wide matrix (R not square) is not differentiated: R^-1 fails at run
# time, as JAX refuses it; so is mode 'complete' of a matrix that is not square (the
# extra columns of Q of a tall matrix are not unique), as JAX does: on a square matrix
# it is mode 'reduced'.


def qr_q(a, mode, computed):
    """Q in ``computed``, ``np.linalg.qr(a, mode)``."""
    return computed[0]


def qr_r(a, mode, computed):
    """R in ``computed``, ``np.linalg.qr(a, mode)``."""
    return computed[1]


def _qr_parts(named, builder):
    mode = named["mode"]
    if not (isinstance(mode, Const) and mode.value in ("reduced", "complete")):
        return None  # the call as it is: a gradient reaching it is refused (qr's no_gradient)
    return _results("qr_routine", ("qr_q", "qr_r"), type(np.linalg.qr(np.eye(1))))(named, builder)


def _qr_check(named) -> str | None:
    if named["mode"].value not in ("reduced", "complete"):
        return ("np.linalg.qr is differentiated in modes 'reduced' (the default) and "
                "'complete' (of a square matrix) alone")
    return None


@defop("qr", "np.linalg.qr(a, mode=mode)", aliases=(np.linalg.qr,), diff=("a",), simplify=_qr_parts,
       no_gradient="np.linalg.qr is differentiated in modes 'reduced' and 'complete' alone "
       "(its tuple is built as one op per result)", no_sympy="SymPy's QR is Gram-Schmidt's, with R's "
       "diagonal positive: not NumPy's signs", real_rules=True)
def qr(a, mode="reduced"): ...


@defop("qr_routine", "np.linalg.qr(a, mode=mode)", nondiff_output=True, floating=None,
       no_gradient=_ROUTINE.format("np.linalg.qr"), sympy=_unused)
def qr_routine(a, mode="reduced"): ...


@defop("qr_q", "computed[0]", aliases=(qr_q,), diff=("a",), floating="always",
       no_sympy="SymPy's QR has R's diagonal positive: not NumPy's signs", real_rules=True)
def _qr_q(a, mode, computed): ...


@defop("qr_r", "computed[1]", aliases=(qr_r,), diff=("a",), floating="always",
       no_sympy="SymPy's QR has R's diagonal positive: not NumPy's signs", real_rules=True)
def _qr_r(a, mode, computed): ...


OPS["qr_q"].vjp_check = _qr_check
OPS["qr_r"].vjp_check = _qr_check


def square_r(r):
    """``r``, after checking it is square: the QR of a matrix with fewer rows than columns
    is not differentiated (its R is wide)."""
    if np.shape(r)[-2] != np.shape(r)[-1]:
        raise ValueError("np.linalg.qr is differentiated for matrices with at least as many "
                         f"rows as columns, not a {np.shape(r)[-2]} by {np.shape(r)[-1]} R")
    return r


square_r_op = helper_op(square_r, diff=("r",), shape=shape_like("r"), jvp="linear",
                        no_sympy="a check of a shape")


@square_r_op.defvjp
def _(g, ans, r):
    return g


def _qr_adjoint(q, r, b, gq):
    """gA = (gQ + Q C) R^-T with C = tril(B - B^T, -1) - B."""
    r = square_r(r)
    n = np.shape(r)[-1]
    c = (b - np.swapaxes(b, -1, -2)) * np.tri(n, k=-1) - b
    return (gq + q @ c) @ np.swapaxes(np.linalg.inv(r), -1, -2)


def _qr_tangents(t, q, r):
    """(Y - Omega, X) of the tangent ``t`` of ``a``: dQ = X - Q (Y - Omega), dR = (Y - Omega) R."""
    r = square_r(r)
    n = np.shape(r)[-1]
    x = t @ np.linalg.inv(r)
    y = np.swapaxes(q, -1, -2) @ x
    below = y * np.tri(n, k=-1)
    return y - below + np.swapaxes(below, -1, -2), x


@OPS["qr_q"].defvjp
def _(g, ans, a, mode, computed):
    if mode == "complete":
        ans = square_only(ans, a, "np.linalg.qr(a, mode='complete')")
    return _qr_adjoint(ans, qr_r(a, mode, computed), np.swapaxes(ans, -1, -2) @ g, g)


@OPS["qr_r"].defvjp
def _(g, ans, a, mode, computed):
    if mode == "complete":
        ans = square_only(ans, a, "np.linalg.qr(a, mode='complete')")
    q = qr_q(a, mode, computed)
    return _qr_adjoint(q, ans, -(g @ np.swapaxes(ans, -1, -2)), 0.0)


@OPS["qr_q"].defjvp
def _(t, ans, a, mode, computed):
    if mode == "complete":
        ans = square_only(ans, a, "np.linalg.qr(a, mode='complete')")
    z, x = _qr_tangents(t, ans, qr_r(a, mode, computed))
    return x - ans @ z


@OPS["qr_r"].defjvp
def _(t, ans, a, mode, computed):
    if mode == "complete":
        ans = square_only(ans, a, "np.linalg.qr(a, mode='complete')")
    z, _ = _qr_tangents(t, qr_q(a, mode, computed), ans)
    return z @ ans


# ----- np.linalg: pseudo-inverse, least squares, matrix powers, chains of products -----
#
# The pseudo-inverse P of A is differentiable where A's rank does not change nearby
# (a matrix of full rank, the case the rules are for): dP = -P dA P
# + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (Golub and Pereyra, 1973). Where the
# rank changes (a singular value crossing the cutoff rcond) P is not continuous and
# has no derivative; there the rules give the derivative of the pseudo-inverse of the
# same rank, as JAX's.


def _pinv_adjoint(g, p, a):
    """The adjoint of ``a`` given the adjoint ``g`` of its pseudo-inverse ``p``."""
    pt, gt = np.swapaxes(p, -1, -2), np.swapaxes(g, -1, -2)
    return (-(pt @ g @ pt) + (gt - a @ (p @ gt)) @ p @ pt
            + pt @ p @ (gt - (gt @ p) @ a))


def _pinv_tangent(t, p, a):
    pt, tt = np.swapaxes(p, -1, -2), np.swapaxes(t, -1, -2)
    return -(p @ t @ p) + p @ pt @ (tt - (tt @ a) @ p) + (tt - p @ (a @ tt)) @ pt @ p


def _pinv_check(named) -> str | None:
    if not (isinstance(named["hermitian"], Const) and named["hermitian"].value is False):
        return "np.linalg.pinv is differentiated with hermitian=False (the default) alone"
    return None


@defop("pinv", "np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)", aliases=(np.linalg.pinv,),
       diff=("a",), floating="always",
       no_sympy="SymPy's pseudo-inverse has no cutoff rcond: not NumPy's for a matrix near "
       "a lower rank", real_rules=True)
def pinv(a, rcond=None, hermitian=False): ...


pinv.vjp_check = _pinv_check


@pinv.defvjp
def _(g, ans, a, rcond, hermitian):
    return _pinv_adjoint(g, ans, a)


@pinv.defjvp
def _(t, ans, a, rcond, hermitian):
    return _pinv_tangent(t, ans, a)


# np.linalg.lstsq(a, b) returns (x, residuals, rank, s). The solution x = P b, with P
# the pseudo-inverse of a, is differentiated as that (a of full rank); the residuals,
# the rank and the singular values are results of their own that take no gradient:
# one reaching them is an error (compute them from x, or use np.linalg.svd).


def lstsq_solution(a, b, rcond, computed):
    """The solution in ``computed``, ``np.linalg.lstsq(a, b, rcond)``."""
    return computed[0]


_LSTSQ_REST = ("the residuals, rank and singular values of np.linalg.lstsq have no gradient "
               "rule: compute them from its solution (or np.linalg.svd)")


@defop("lstsq", "np.linalg.lstsq(a, b, rcond=rcond)", aliases=(np.linalg.lstsq,), diff=("a", "b"),
       simplify=_results("lstsq_routine", ("lstsq_solution", "lstsq_residuals", "lstsq_rank",
                                           "lstsq_singular_values")),
       no_gradient=_TUPLE.format("np.linalg.lstsq"), no_sympy=_TUPLE.format("np.linalg.lstsq"),
       real_rules=True)
def lstsq(a, b, rcond=None): ...


@defop("lstsq_routine", "np.linalg.lstsq(a, b, rcond=rcond)", nondiff_output=True, floating=None,
       no_gradient=_ROUTINE.format("np.linalg.lstsq"), sympy=_unused)
def lstsq_routine(a, b, rcond=None): ...


@defop("lstsq_solution", "computed[0]", aliases=(lstsq_solution,), diff=("a", "b"),
       floating="always", no_sympy="SymPy's least squares have no cutoff rcond", real_rules=True)
def _lstsq_solution(a, b, rcond, computed): ...


@defop("lstsq_residuals", "computed[1]", diff=("a", "b"), floating="always",
       no_gradient=_LSTSQ_REST, no_sympy=_LSTSQ_REST)
def lstsq_residuals(a, b, rcond, computed): ...


@defop("lstsq_rank", "computed[2]", nondiff_output=True, floating=None,
       no_gradient="the rank of a matrix is an integer", no_sympy="the rank is an integer")
def lstsq_rank(a, b, rcond, computed): ...


@defop("lstsq_singular_values", "computed[3]", diff=("a", "b"), floating="always",
       no_gradient=_LSTSQ_REST, no_sympy=_LSTSQ_REST)
def lstsq_singular_values(a, b, rcond, computed): ...


def _as_columns(v, b):
    """``v`` (shaped like b or x) as a matrix of columns, when ``b`` is a vector."""
    if np.ndim(b) == 1:
        return np.expand_dims(v, -1)
    return v


def _from_columns(v, b):
    if np.ndim(b) == 1:
        return v[..., 0]
    return v


@OPS["lstsq_solution"].defvjp
def _(g, ans, a, b, rcond, computed):
    p = np.linalg.pinv(a)
    gp = _as_columns(g, b) @ np.swapaxes(_as_columns(b, b), -1, -2)
    return _pinv_adjoint(gp, p, a), _from_columns(np.swapaxes(p, -1, -2) @ _as_columns(g, b), b)


@OPS["lstsq_solution"].defjvp("a")
def _(t, ans, a, b, rcond, computed):
    p = np.linalg.pinv(a)
    return _from_columns(_pinv_tangent(t, p, a) @ _as_columns(b, b), b)


@OPS["lstsq_solution"].defjvp("b")
def _(t, ans, a, b, rcond, computed):
    return np.linalg.pinv(a) @ t


def _matrix_power_check(named) -> str | None:
    n = named["n"]
    if not (isinstance(n, Const) and isinstance(n.value, int) and not isinstance(n.value, bool)):
        return "the power n of np.linalg.matrix_power must be a constant integer to be differentiated"
    return None


@defop("matrix_power", "np.linalg.matrix_power(a, n)", aliases=(np.linalg.matrix_power,),
       diff=("a",), shape=shape_like("a"),
       sympy=lambda a, n: objects((matrix(a) ** n).tolist()))
def matrix_power(a, n): ...


matrix_power.vjp_check = _matrix_power_check


# A^n for n >= 0 is a product of n factors A: d(A^n) = sum over k of A^k dA A^(n-1-k).
# For n < 0 it is B^-n with B = A^-1, and dB = -B dA B. (n = 0: the identity, zero.)


def _power_sum(p, g, count):
    """The sum over k < count of p^k g p^(count-1-k), by T <- p T + g p^j."""
    if count == 0:
        return 0.0 * g
    total = g
    right = g
    for _ in range(count - 1):
        right = right @ p
        total = p @ total + right
    return total


@matrix_power.defvjp
def _(g, ans, a, n):
    if n >= 0:
        return _power_sum(np.swapaxes(a, -1, -2), g, n)
    transposed = np.swapaxes(np.linalg.inv(a), -1, -2)
    return -(transposed @ _power_sum(transposed, g, -n) @ transposed)


@matrix_power.defjvp
def _(t, ans, a, n):
    if n >= 0:
        return _power_sum(a, t, n)
    base = np.linalg.inv(a)
    return _power_sum(base, -(base @ t @ base), -n)


def _multi_dot_call(arrays, *, out=None):
    """``np.linalg.multi_dot([a, b, c])`` of a list written out: its chain of np.dot,
    which is the same product (a first 1-D array a row, a last one a column); NumPy only
    chooses the order of the products, which changes rounding alone."""
    if out is not None and not (isinstance(out, Const) and out.value is None):
        raise TypeError("out= is not supported")
    return [arrays]


def _multi_dot_chain(named, builder):
    arrays = named["arrays"]
    if not isinstance(arrays, tuple) or len(arrays) < 2:
        return None  # a list built at run time: the call as it is, with no gradient
    total = arrays[0]
    for item in arrays[1:]:
        total = builder.emit(OPS["dot"], (total, item))
    return total


@defop("multi_dot", "np.linalg.multi_dot(arrays)", aliases=((np.linalg.multi_dot, _multi_dot_call),),
       diff=("arrays",), simplify=_multi_dot_chain,
       no_gradient="np.linalg.multi_dot is differentiated on a list written out in the call "
       "([a, b, c], a chain of np.dot), not on one built at run time",
       no_sympy="built as a chain of np.dot")
def multi_dot(arrays): ...


def _eigvalsh_values(named, builder):
    """np.linalg.eigvalsh is the eigenvalues of np.linalg.eigh: its routine runs eigh,
    whose eigenvectors the eigenvalues' rule needs anyway."""
    return _results("eigh_routine", ("eigh_values",))(named, builder)[0]


@defop("eigvalsh", "np.linalg.eigvalsh(a, UPLO=UPLO)", aliases=(np.linalg.eigvalsh,),
       diff=("a",), simplify=_eigvalsh_values,
       no_gradient="np.linalg.eigvalsh is built as the eigenvalues of np.linalg.eigh",
       no_sympy=_NO_SYMBOLIC_EIGH, real_rules=True)
def eigvalsh(a, UPLO="L"): ...


# np.linalg.eig of a real matrix whose eigenvalues are real: w and V with A V = V diag(w),
# each column of V of unit length (NumPy's normalisation), in LAPACK's order. With
# M = V^-1 dA V: dw = diag(M) and dV = V (F * M) - V diag(V^T V (F * M)) (the second
# term keeps the columns of unit length), F[i, j] = 1 / (w[j] - w[i]) off the diagonal,
# 0 on it (the forms of autograd's and JAX's rules). The eigenvalues' rule needs no F
# and holds for repeated eigenvalues that keep their eigenvectors apart; for
# eigenvectors the derivative is undefined where two eigenvalues are equal: as in JAX
# and autograd, F is then infinite and so is the gradient (NaN where it meets a zero).
# Each eigenvector's sign is LAPACK's choice, as for eigh. A matrix with complex
# eigenvalues is refused when it runs: autodiff differentiates real values.


def real_eig(a):
    """``np.linalg.eig(a)``, refusing complex eigenvalues.

    >>> real_eig(np.diag([2.0, 1.0])).eigenvalues.tolist()
    [2.0, 1.0]
    """
    result = np.linalg.eig(a)
    if np.iscomplexobj(result.eigenvalues):
        raise ValueError("np.linalg.eig of this matrix has complex eigenvalues: autodiff "
                         "differentiates real values, and so eig of matrices whose "
                         "eigenvalues are real (np.linalg.eigh for symmetric ones)")
    return result


def eig_values(a, computed):
    """The eigenvalues in ``computed``, ``np.linalg.eig(a)``."""
    return computed[0]


def eig_vectors(a, computed):
    """The eigenvectors (columns) in ``computed``, ``np.linalg.eig(a)``."""
    return computed[1]


_NO_SYMBOLIC_EIG = ("the eigenvalues of a symbolic matrix have no closed form beyond 4 by 4 "
                    "(SymPy's would be roots of the characteristic polynomial, unordered)")


@defop("eig", "np.linalg.eig(a)", aliases=(np.linalg.eig,), diff=("a",),
       simplify=_results("eig_routine", ("eig_values", "eig_vectors"),
                         type(np.linalg.eig(np.eye(1)))),
       no_gradient=_TUPLE.format("np.linalg.eig"), no_sympy=_NO_SYMBOLIC_EIG, real_rules=True)
def eig(a): ...


@defop("eig_routine", "real_eig(a)", nondiff_output=True, floating=None,
       no_gradient=_ROUTINE.format("np.linalg.eig"), sympy=_unused)
def eig_routine(a): ...


OPS["eig_routine"].runtime = {"real_eig": real_eig}


@defop("eig_values", "computed[0]", aliases=(eig_values,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_EIG, real_rules=True)
def _eig_values(a, computed): ...


@defop("eig_vectors", "computed[1]", aliases=(eig_vectors,), diff=("a",), floating="always",
       no_sympy=_NO_SYMBOLIC_EIG, real_rules=True)
def _eig_vectors(a, computed): ...


def _eigvals_values(named, builder):
    """np.linalg.eigvals is the eigenvalues of np.linalg.eig."""
    return _results("eig_routine", ("eig_values",))(named, builder)[0]


@defop("eigvals", "np.linalg.eigvals(a)", aliases=(np.linalg.eigvals,), diff=("a",),
       simplify=_eigvals_values,
       no_gradient="np.linalg.eigvals is built as the eigenvalues of np.linalg.eig",
       no_sympy=_NO_SYMBOLIC_EIG, real_rules=True)
def eigvals(a): ...


@OPS["eig_values"].defvjp
def _(g, ans, a, computed):
    v = eig_vectors(a, computed)
    return np.swapaxes(np.linalg.inv(v), -1, -2) @ (np.expand_dims(g, -1) * np.swapaxes(v, -1, -2))


@OPS["eig_values"].defjvp
def _(t, ans, a, computed):
    v = eig_vectors(a, computed)
    return np.sum(np.linalg.inv(v) * np.swapaxes(t @ v, -1, -2), axis=-1)


@OPS["eig_vectors"].defvjp
def _(g, ans, a, computed):
    vt = np.swapaxes(ans, -1, -2)
    vtg = vt @ g
    n = np.shape(ans)[-1]
    kept = vtg - (vt @ ans) * np.expand_dims(np.sum(vtg * np.eye(n), axis=-1), -2)
    inner = _gaps(eig_values(a, computed)) * kept
    return np.swapaxes(np.linalg.inv(ans), -1, -2) @ inner @ vt


@OPS["eig_vectors"].defjvp
def _(t, ans, a, computed):
    moved = ans @ (_gaps(eig_values(a, computed)) * (np.linalg.inv(ans) @ t @ ans))
    return moved - ans * np.sum(ans * moved, axis=-2, keepdims=True)


# np.vdot flattens both operands: the sum of their elementwise product. Its rules are for
# real operands (NumPy conjugates the first, which they do not), as np.correlate's.
@defop("vdot", "np.vdot(a, b)", aliases=(np.vdot,), diff=("a", "b"), shape=scalar_result,
       sympy=lambda a, b: np.dot(np.ravel(objects(a)), np.ravel(objects(b))), jvp="linear",
       real_rules=True)
def vdot(a, b): ...


@vdot.defvjp
def _(g, ans, a, b):
    return np.reshape(g * np.ravel(b), np.shape(a)), np.reshape(g * np.ravel(a), np.shape(b))


# np.vdot(a, b) = sum(conj(a) b) of complex values: holomorphic in b (conj(a)), and in a
# the conjugate's transpose (conj(g b)).
@vdot.defvjp_complex
def _(g, ans, a, b):
    return (np.reshape(np.conj(g * np.ravel(b)), np.shape(a)),
            np.reshape(g * np.conj(np.ravel(a)), np.shape(b)))


# numba's np.vdot takes contiguous vectors: the dot of the two flattened.
@vdot.defnumba
def _(rewrite, a, b):
    return rewrite.emit(dot, rewrite.emit(OPS["ravel"], a, Const("C")),
                        rewrite.emit(OPS["ravel"], b, Const("C")))


# ----- np.linalg: condition numbers, tensor inverses and solves, rank -----
#
# Each built from the ops above at build time, so it has their rules: a form they do not
# build (a setting not constant) stays NumPy's call, which passes no gradient.


def _emit(builder, name: str, *args):
    return builder.emit(OPS[name], tuple(Const(a) if _is_plain(a) or isinstance(a, str) else a
                                         for a in args))


def _settings(named, *names) -> tuple | None:
    """The values of constant settings, or None when one is computed."""
    values = []
    for name in names:
        operand = _order(named[name]) if name in ("ord", "p") else named[name]
        if not isinstance(operand, Const):
            return None
        values.append(operand.value)
    return tuple(values)


def _cond_forms(named, builder):
    """np.linalg.cond as NumPy computes it: the ratio of the largest and smallest
    singular values (p None, 2, -2), else the norm of x times that of its inverse. Where
    a singular value repeats, the gradient is the singular values' (svd's convention)."""
    settings = _settings(named, "p")
    if settings is None:
        return None
    (p,), x = settings, named["x"]
    if p in (None, 2, -2):
        values = _emit(builder, "svd_values", x, False, False, False)
        largest, smallest = _emit(builder, "max", values, -1, False), _emit(
            builder, "min", values, -1, False)
        if p == -2:
            return _emit(builder, "divide", smallest, largest)
        return _emit(builder, "divide", largest, smallest)
    if p not in ("fro", "nuc", 1, -1, np.inf, -np.inf):
        return None
    inverse = _emit(builder, "inv", x)
    return _emit(builder, "multiply", _emit(builder, "norm", x, p, (-2, -1), False),
                 _emit(builder, "norm", inverse, p, (-2, -1), False))


@defop("cond", "np.linalg.cond(x, p=p)", aliases=(np.linalg.cond,), diff=("x",),
       simplify=_cond_forms, real_rules=True,
       no_gradient="np.linalg.cond is differentiated with a constant p (None, 2, -2, 'fro', "
       "'nuc', 1, -1, np.inf or -np.inf), built from the singular values or norms",
       no_sympy="built from the singular values, or from norms and the inverse")
def cond(x, p=None): ...


def tensor_as_matrix(a, ind):
    """``a`` as the matrix np.linalg.tensorinv inverts: its first ``ind`` axes the rows.

    >>> tensor_as_matrix(np.ones((2, 3, 6)), 2).shape
    (6, 6)
    """
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    shape = np.shape(a)
    return np.reshape(a, (int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))))


def matrix_as_tensor(m, a, ind):
    """The inverse ``m`` of ``tensor_as_matrix(a, ind)`` in np.linalg.tensorinv's shape."""
    shape = np.shape(a)
    return np.reshape(m, shape[ind:] + shape[:ind])


tensor_as_matrix_op = helper_op(tensor_as_matrix, diff=("a",), jvp="linear",
                                no_sympy="a reshape")
tensor_as_matrix_op.kind_params = ("ind",)
matrix_as_tensor_op = helper_op(matrix_as_tensor, diff=("m",), jvp="linear",
                                no_sympy="a reshape")
matrix_as_tensor_op.kind_params = ("a", "ind")


@tensor_as_matrix_op.defvjp
def _(g, ans, a, ind):
    return np.reshape(g, np.shape(a))


@matrix_as_tensor_op.defvjp
def _(g, ans, m, a, ind):
    return np.reshape(g, np.shape(m))


def _tensorinv_forms(named, builder):
    """np.linalg.tensorinv: the inverse of a reshaped as a matrix, reshaped back."""
    a, ind = named["a"], named["ind"]
    if not isinstance(ind, Const):
        return None
    inverse = _emit(builder, "inv", _emit(builder, "tensor_as_matrix", a, ind))
    return _emit(builder, "matrix_as_tensor", inverse, a, ind)


@defop("tensorinv", "np.linalg.tensorinv(a, ind=ind)", aliases=(np.linalg.tensorinv,),
       diff=("a",), simplify=_tensorinv_forms,
       no_gradient="np.linalg.tensorinv is differentiated with a constant ind, built from "
       "np.linalg.inv", no_sympy="built from np.linalg.inv")
def tensorinv(a, ind=2): ...


def tensorsolve_matrix(a, b):
    """``a`` (its axes to sum over last) as the square matrix np.linalg.tensorsolve solves
    with: one row per element of ``b``.

    >>> tensorsolve_matrix(np.ones((2, 3, 6)), np.ones((2, 3))).shape
    (6, 6)
    """
    rows = np.size(b)
    if np.size(a) != rows * rows:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
            "prod(a.shape[:b.ndim])")
    return np.reshape(a, (rows, rows))


def tensor_solution(x, a, b):
    """The solution ``x`` of np.linalg.tensorsolve in its shape: ``a``'s last axes."""
    return np.reshape(x, np.shape(a)[np.ndim(b):])


tensorsolve_matrix_op = helper_op(tensorsolve_matrix, diff=("a",), jvp="linear",
                                  no_sympy="a reshape")
tensorsolve_matrix_op.kind_params = ("b",)
tensor_solution_op = helper_op(tensor_solution, diff=("x",), jvp="linear", no_sympy="a reshape")
tensor_solution_op.kind_params = ("a", "b")


@tensorsolve_matrix_op.defvjp
def _(g, ans, a, b):
    return np.reshape(g, np.shape(a))


@tensor_solution_op.defvjp
def _(g, ans, x, a, b):
    return np.reshape(g, np.shape(x))


def _tensorsolve_forms(named, builder):
    """np.linalg.tensorsolve as NumPy computes it: the axes named moved last, a as a
    square matrix, np.linalg.solve with b flattened, the solution in a's last axes' shape."""
    a, b, axes = named["a"], named["b"], named["axes"]
    named_axes = constant_tuple(axes)
    if named_axes is None and not is_none(axes):
        return None  # (NumPy's call refuses axes that are not a sequence of ints)
    if named_axes:
        a = _emit(builder, "moveaxis", a, named_axes, tuple(range(-len(named_axes), 0)))
    matrix = _emit(builder, "tensorsolve_matrix", a, b)
    solution = _emit(builder, "solve", matrix, _emit(builder, "ravel", b, "C"))
    return _emit(builder, "tensor_solution", solution, a, b)


@defop("tensorsolve", "np.linalg.tensorsolve(a, b, axes=axes)", aliases=(np.linalg.tensorsolve,),
       diff=("a", "b"), simplify=_tensorsolve_forms,
       no_gradient="np.linalg.tensorsolve is differentiated with constant axes, built from "
       "np.linalg.solve", no_sympy="built from np.linalg.solve")
def tensorsolve(a, b, axes=None): ...


def _matrix_rank_kernel(named) -> str:
    rtol = "" if isinstance(named["rtol"], Const) and named["rtol"].value is None else ", rtol=rtol"
    return f"np.linalg.matrix_rank(A, tol=tol, hermitian=hermitian{rtol})"


@defop("matrix_rank", _matrix_rank_kernel, aliases=(np.linalg.matrix_rank,), nondiff_output=True,
       floating=None, no_gradient="a rank: an integer, constant near almost every matrix",
       no_sympy="a count of singular values")
def matrix_rank(A, tol=None, hermitian=False, rtol=None): ...


# ----- NumPy 2's names (the array API's), each built from the ops above -----
#
# Registered when NumPy has them. np.linalg.matmul is np.matmul; the others are built at
# build time from ops with rules (a setting computed at run time leaves NumPy's call,
# which passes no gradient). The rules are for real operands, as np.vdot's (np.vecdot
# conjugates its first operand).


def _vector_norm_forms(named, builder):
    """np.linalg.vector_norm: np.linalg.norm's vector norms along one axis; over every axis
    (None) or several, NumPy's sums and extremes of |x| over them (ord 2 with axis None or
    two axes is np.linalg.norm's Frobenius norm, the same sum). At ties (the max norm) and
    at zero, the gradient is the convention of max, min, abs and norm."""
    settings = _settings(named, "ord", "axis", "keepdims")
    if settings is None:
        return None
    order, axes, keepdims = settings
    x = named["x"]
    if order == 0 or not isinstance(order, (int, float)):
        return None
    if isinstance(axes, tuple) and len(axes) == 1:
        axes = axes[0]
    if isinstance(axes, int):
        return _emit(builder, "norm", x, order, axes, keepdims)
    if order == 2 and (axes is None or len(axes) == 2):
        return _emit(builder, "norm", x, None, axes, keepdims)
    magnitude = _emit(builder, "abs", x)
    if order in (np.inf, -np.inf):
        return _emit(builder, "max" if order > 0 else "min", magnitude, axes, keepdims)
    if order == 1:
        return _emit(builder, "sum", magnitude, axes, keepdims)
    total = _emit(builder, "sum", _emit(builder, "power", magnitude, float(order)), axes, keepdims)
    return _emit(builder, "power", total, 1.0 / order)


def _matrix_norm_forms(named, builder):
    """np.linalg.matrix_norm: np.linalg.norm over the last two axes."""
    return builder.emit(OPS["norm"], (named["x"], named["ord"], Const((-2, -1)), named["keepdims"]))


def _numpy_function(name: str):
    """NumPy's function for an op name: ``linalg.vector_norm`` is np.linalg.vector_norm."""
    value = np
    for part in name.split("."):
        value = getattr(value, part)
    return value


def _moved_last(builder, operand, axis):
    return operand if axis == -1 else _emit(builder, "moveaxis", operand, axis, -1)


def _vecdot_forms(named, builder):
    """np.vecdot: the sum of the product along the axis, of each operand's own axis (the
    first conjugated, as NumPy does for complex values)."""
    settings = _settings(named, "axis")
    if settings is None:
        return None
    (axis,) = settings
    first = _emit(builder, "conj", _moved_last(builder, named["x1"], axis))
    product = _emit(builder, "multiply", first, _moved_last(builder, named["x2"], axis))
    return _emit(builder, "sum", product, -1, False)


def _matvec_forms(named, builder):
    column = _emit(builder, "expand_dims", named["x2"], -1)
    return _emit(builder, "squeeze", _emit(builder, "matmul", named["x1"], column), -1)


def _vecmat_forms(named, builder):
    # (the vector conjugated, as NumPy does for complex values)
    row = _emit(builder, "expand_dims", _emit(builder, "conj", named["x1"]), -2)
    return _emit(builder, "squeeze", _emit(builder, "matmul", row, named["x2"]), -2)


def _matrix_transpose_forms(named, builder):
    return _emit(builder, "swapaxes", named["x"], -1, -2)


def _diagonal_forms(named, builder):
    return _emit(builder, "diagonal", named["x"], named["offset"], -2, -1)


def _trace_forms(named, builder):
    return _emit(builder, "trace", named["x"], named["offset"], -2, -1)


def _cross_forms(named, builder):
    return _emit(builder, "cross", named["x1"], named["x2"], named["axis"])


def _outer_forms(named, builder):
    return _emit(builder, "outer", named["x1"], named["x2"])


def _keywords(name: str, positional: tuple[str, ...], keywords: dict):
    """An alias's adapter: ``positional`` operands, then keyword settings with defaults;
    NumPy's out= and dtype= are refused (the result's dtype is the operands')."""
    def call(*args, **kwargs):
        if len(args) != len(positional):
            raise TypeError(f"np.{name} takes {len(positional)} positional arguments")
        for setting in ("out", "dtype"):
            value = kwargs.pop(setting, None)
            if value is not None and not (isinstance(value, Const) and value.value is None):
                raise TypeError(f"np.{name} is differentiated without {setting}=")
        unknown = set(kwargs) - set(keywords)
        if unknown:
            raise TypeError(f"np.{name} takes no argument {min(unknown)!r} here")
        return {**dict(zip(positional, args)), **keywords, **kwargs}

    return call


_NUMPY2 = [  # (name, kernel, stub, forms, built from, operands, keyword settings)
    ("linalg.vector_norm", "np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims)",
     lambda x, ord=2, axis=None, keepdims=False: None, _vector_norm_forms,
     "np.linalg.norm, abs, sum, max, min and power", ("x",),
     {"ord": 2, "axis": None, "keepdims": False}),
    ("linalg.matrix_norm", "np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)",
     lambda x, ord="fro", keepdims=False: None, _matrix_norm_forms, "np.linalg.norm", ("x",),
     {"ord": "fro", "keepdims": False}),
    ("linalg.outer", "np.linalg.outer(x1, x2)", lambda x1, x2: None, _outer_forms, "np.outer",
     ("x1", "x2"), {}),
    ("linalg.vecdot", "np.linalg.vecdot(x1, x2, axis=axis)", lambda x1, x2, axis=-1: None,
     _vecdot_forms, "multiply and sum", ("x1", "x2"), {"axis": -1}),
    ("vecdot", "np.vecdot(x1, x2, axis=axis)", lambda x1, x2, axis=-1: None, _vecdot_forms,
     "multiply and sum", ("x1", "x2"), {"axis": -1}),
    ("matvec", "np.matvec(x1, x2)", lambda x1, x2: None, _matvec_forms, "matmul", ("x1", "x2"), {}),
    ("vecmat", "np.vecmat(x1, x2)", lambda x1, x2: None, _vecmat_forms, "matmul", ("x1", "x2"), {}),
    ("linalg.diagonal", "np.linalg.diagonal(x, offset=offset)", lambda x, offset=0: None,
     _diagonal_forms, "np.diagonal", ("x",), {"offset": 0}),
    ("linalg.trace", "np.linalg.trace(x, offset=offset)", lambda x, offset=0: None, _trace_forms,
     "np.trace", ("x",), {"offset": 0}),
    ("linalg.cross", "np.linalg.cross(x1, x2, axis=axis)", lambda x1, x2, axis=-1: None,
     _cross_forms, "np.cross", ("x1", "x2"), {"axis": -1}),
    ("linalg.matrix_transpose", "np.linalg.matrix_transpose(x)", lambda x: None,
     _matrix_transpose_forms, "np.swapaxes", ("x",), {}),
    ("matrix_transpose", "np.matrix_transpose(x)", lambda x: None, _matrix_transpose_forms,
     "np.swapaxes", ("x",), {}),
]

for _name, _kernel, _stub, _forms, _built_from, _positional, _keyword_settings in _NUMPY2:
    try:
        _function = _numpy_function(_name)
    except AttributeError:  # NumPy before 2.0 (2.2 for matvec and vecmat)
        continue
    _op = defop(_name, _kernel, aliases=((_function, _keywords(_name, _positional,
                                                                _keyword_settings)),),
                attributes=("mT",) if _name == "matrix_transpose" else (), diff=_positional,
                simplify=_forms, real_rules=True,
                no_gradient=f"np.{_name} is differentiated with constant settings, built from "
                f"{_built_from}", no_sympy=f"built from {_built_from}")(_stub)

if hasattr(np.linalg, "matmul"):
    alias(np.linalg.matmul, matmul)


# Batched tangents (transforms/batching.py): each example's product in one, a vector a
# matrix of one row or column there.
@OPS["matmul"].defbatch
def _(batch, node, x1, x2):
    return batch.emit("batched_matmul", x1, x2, Const(batch.batched(x1)),
                      Const(batch.batched(x2)))
