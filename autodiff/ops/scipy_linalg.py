"""``scipy.linalg``: Cholesky factors and solves, triangular solves, the matrix
exponential, logarithm and square root, and Sylvester equations.

Registered only when SciPy is installed (``ops/__init__.py`` imports this module
then). Where SciPy computes what an op of ``np.linalg`` does, the call is built as
that op and has its rules: ``scipy.linalg.inv`` and ``det`` are names for
``np.linalg.inv`` and ``det``; ``scipy.linalg.cholesky``, ``cho_factor``,
``cho_solve`` and ``solve`` are built from ``np.linalg.cholesky``, ``np.linalg.solve``
and ``solve_triangular`` (so generated code runs NumPy's routine for them, and numba
compiles those). The others are ops of their own whose rules are written with
themselves (the Frechet derivative of ``expm`` is a block of ``expm`` of a larger
matrix), so that they are differentiated again for second order.

numba compiles none of SciPy's functions: ``jit="numba"`` refuses a derivative that
calls one, naming the user's line.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from autodiff.graph.ir import Const, Value
from autodiff.ops.registry import OPS, alias, defop
from autodiff.ops.runtime import unbroadcast
from autodiff.ops.shape_rules import shape_like
from autodiff.ops.sympy_forms import Unsupported, matrix, objects, sp

# What generated code reads to call SciPy's functions.
SCIPY = {"scipy": scipy}


def _setting(name: str, value):
    """The value of a setting of a call (a constant, or a default left out)."""
    if isinstance(value, Const):
        return value.value
    if isinstance(value, (Value, tuple)):
        raise TypeError(f"'{name}' must be a constant to be differentiated")
    return value


# ----- names for np.linalg's inverse and determinant -----
#
# scipy.linalg.inv and det compute NumPy's inverse and determinant (overwrite_a and
# check_finite change neither). An inverse assuming a symmetric or triangular matrix
# reads one triangle of it: that form is refused (scipy.linalg.solve with an identity
# right-hand side differentiates it).


def _inv_call(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    if _setting("assume_a", assume_a) not in (None, "gen", "general"):
        raise TypeError("scipy.linalg.inv is differentiated with assume_a=None or 'general' "
                        "alone (another reads one triangle of a): use scipy.linalg.solve(a, "
                        "np.eye(n), assume_a=...) for those")
    return OPS["inv"], [a]


def _det_call(a, overwrite_a=False, check_finite=True):
    return OPS["det"], [a]


alias(scipy.linalg.inv, OPS["inv"], _inv_call)
alias(scipy.linalg.det, OPS["det"], _det_call)


# ----- Cholesky factors -----
#
# scipy.linalg.cholesky returns the UPPER factor U (A = U^T U) by default, reading the
# upper triangle of a; with lower=True, NumPy's lower factor L (A = L L^T), reading
# the lower triangle. U is the transpose of NumPy's factor of a^T (whose lower
# triangle is a's upper one), so both are built from np.linalg.cholesky and take its
# rules (the gradient goes to the triangle read alone).


def _cholesky_factor(builder, a, lower: bool):
    if lower:
        return builder.emit(OPS["cholesky"], (a,))
    swapped = builder.emit(OPS["swapaxes"], (a, Const(-1), Const(-2)))
    factor = builder.emit(OPS["cholesky"], (swapped,))
    return builder.emit(OPS["swapaxes"], (factor, Const(-1), Const(-2)))


def _cholesky_form(named, builder):
    lower = named["lower"]
    if not isinstance(lower, Const):
        return None  # the call as it is: a gradient reaching it is refused
    return _cholesky_factor(builder, named["a"], bool(lower.value))


_CONSTANT_LOWER = "{} is differentiated with a constant 'lower' (built from np.linalg.cholesky)"


@defop("scipy_cholesky", "scipy.linalg.cholesky(a, lower=lower)",
       aliases=(scipy.linalg.cholesky,), diff=("a",), simplify=_cholesky_form,
       no_gradient=_CONSTANT_LOWER.format("scipy.linalg.cholesky"),
       no_sympy="built as np.linalg.cholesky")
def scipy_cholesky(a, lower=False, overwrite_a=False, check_finite=True): ...


scipy_cholesky.runtime = SCIPY


# cho_factor returns (c, lower), c holding the factor in the triangle lower names and
# what LAPACK leaves untouched in the other one: a's own entries there (SciPy's
# documentation calls them arbitrary; they are a's, as LAPACK writes one triangle of
# a copy of a). Here c is built as the factor plus a's other triangle, the same array,
# so a program reading it gets the same values and their derivatives. cho_solve reads
# c's triangle alone, by two triangular solves.


def _cho_factor_form(named, builder):
    lower, a = named["lower"], named["a"]
    if not isinstance(lower, Const):
        return None
    lower = bool(lower.value)
    other = builder.emit(OPS["triu" if lower else "tril"], (a, Const(1 if lower else -1)))
    c = builder.emit(OPS["add"], (_cholesky_factor(builder, a, lower), other))
    return (c, Const(lower))


@defop("cho_factor", "scipy.linalg.cho_factor(a, lower=lower)", aliases=(scipy.linalg.cho_factor,),
       diff=("a",), simplify=_cho_factor_form,
       no_gradient=_CONSTANT_LOWER.format("scipy.linalg.cho_factor"),
       no_sympy="built as np.linalg.cholesky")
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True): ...


cho_factor.runtime = SCIPY


def _triangular(builder, c, b, trans: int, lower: bool):
    return builder.emit(OPS["solve_triangular"],
                        (c, b, Const(trans), Const(lower), Const(False), Const(False), Const(True)))


def _cho_solve_form(named, builder):
    pair, b = named["c_and_lower"], named["b"]
    if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Const)):
        return None
    c, lower = pair[0], bool(pair[1].value)
    if lower:  # L L^T x = b
        return _triangular(builder, c, _triangular(builder, c, b, 0, True), 1, True)
    return _triangular(builder, c, _triangular(builder, c, b, 1, False), 0, False)  # U^T U x = b


@defop("cho_solve", "scipy.linalg.cho_solve(c_and_lower, b)", aliases=(scipy.linalg.cho_solve,),
       diff=("c_and_lower", "b"), simplify=_cho_solve_form,
       no_gradient="scipy.linalg.cho_solve is differentiated on a pair (c, lower) known while "
       "compiling, with a constant lower (cho_factor's result, or a tuple written out): it is "
       "built as two triangular solves",
       no_sympy="built as two scipy.linalg.solve_triangular")
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True): ...


cho_solve.runtime = SCIPY


# ----- triangular solves -----
#
# x = solve_triangular(a, b) solves op(T) x = b, where T is the triangle of a that
# lower names (with ones on the diagonal for unit_diagonal=True) and op(T) is T, or
# T^T for trans 1 ('T') or 2 ('C', the same for real matrices). The entries outside
# the triangle are not read: their adjoint is zero. With gb = op(T)^-T g (a solve of
# its own, with the other trans), gb is b's adjoint and -gb x^T (x gb^T when
# transposed) is T's, kept on the entries read. A vector b (1-D) is a column. A zero on
# T's diagonal (a singular T) makes SciPy raise LinAlgError, in the derivative as in
# the call; near one, the derivatives grow as the solution does.


def _transposed(trans) -> bool:
    return trans in (1, 2, "T", "C")


def _read_part(t, lower, unit_diagonal):
    """The entries of ``t`` a triangular solve reads (the others zero)."""
    n = np.shape(t)[-1]
    if unit_diagonal:
        if lower:
            return t * np.tri(n, k=-1)
        return t * np.transpose(np.tri(n, k=-1))
    if lower:
        return t * np.tri(n)
    return t * np.transpose(np.tri(n))


def _columns(v, b):
    """``v`` (shaped like b or x) as a matrix of columns, when ``b`` is a vector."""
    if np.ndim(b) == 1:
        return np.expand_dims(v, -1)
    return v


def _sympy_solve_triangular(a, b, trans, lower, unit_diagonal, overwrite_b, check_finite):
    t, b = matrix(a), objects(b)
    if b.ndim > 2:
        raise Unsupported("scipy.linalg.solve_triangular on stacks of matrices (one matrix "
                          "at a time is supported)")
    n = t.shape[0]
    for i in range(n):
        for j in range(n):
            if (j > i if lower else j < i):
                t[i, j] = 0
        if unit_diagonal:
            t[i, i] = 1
    if _transposed(trans):
        t = t.T
    solution = t.LUsolve(sp.Matrix(b.reshape(len(b), -1).tolist()))
    return objects(solution.tolist()).reshape(b.shape)


@defop("solve_triangular", "scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower, "
       "unit_diagonal=unit_diagonal)", aliases=(scipy.linalg.solve_triangular,),
       diff=("a", "b"), floating="always", sympy=_sympy_solve_triangular)
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True): ...


solve_triangular.runtime = SCIPY


def _solve_triangular_check(named) -> str | None:
    for name in ("trans", "lower", "unit_diagonal"):
        if not isinstance(named[name], Const):
            return f"the '{name}' of scipy.linalg.solve_triangular must be a constant to be differentiated"
    if named["trans"].value not in (0, 1, 2, "N", "T", "C"):
        return "scipy.linalg.solve_triangular takes trans 0, 1, 2, 'N', 'T' or 'C'"
    return None


solve_triangular.vjp_check = _solve_triangular_check


@solve_triangular.defvjp
def _(g, ans, a, b, trans, lower, unit_diagonal, overwrite_b, check_finite):
    other = 0 if _transposed(trans) else 1
    gb = scipy.linalg.solve_triangular(a, g, trans=other, lower=lower, unit_diagonal=unit_diagonal)
    gbs, xs = _columns(gb, b), _columns(ans, b)
    if _transposed(trans):
        outer = xs @ np.swapaxes(gbs, -1, -2)
    else:
        outer = gbs @ np.swapaxes(xs, -1, -2)
    return unbroadcast(-_read_part(outer, lower, unit_diagonal), a), unbroadcast(gb, b)


@solve_triangular.defjvp("a")
def _(t, ans, a, b, trans, lower, unit_diagonal, overwrite_b, check_finite):
    dt = _read_part(t, lower, unit_diagonal)
    if _transposed(trans):
        dt = np.swapaxes(dt, -1, -2)
    moved = -(dt @ _columns(ans, b))
    if np.ndim(b) == 1:
        moved = moved[..., 0]
    return scipy.linalg.solve_triangular(a, moved, trans=trans, lower=lower,
                                         unit_diagonal=unit_diagonal)


@solve_triangular.defjvp("b")
def _(t, ans, a, b, trans, lower, unit_diagonal, overwrite_b, check_finite):
    return scipy.linalg.solve_triangular(a, t, trans=trans, lower=lower,
                                         unit_diagonal=unit_diagonal)


# ----- general solves -----
#
# scipy.linalg.solve(a, b) is np.linalg.solve for a general matrix (assume_a None, the
# default, finds the structure of a and solves with it: the same solution, whose
# derivative is the general one). A symmetric, Hermitian or positive definite a is read
# through the triangle lower names (upper by default), so it is built as np.linalg.solve
# of the symmetric matrix of that triangle; a triangular one as solve_triangular.
# Banded, tridiagonal and diagonal forms read a band and are not differentiated.


def _symmetric(builder, a, lower: bool):
    """The symmetric matrix of a's lower (or upper) triangle, as ops."""
    name, k = ("tril", -1) if lower else ("triu", 1)
    part = builder.emit(OPS[name], (a, Const(0)))
    strict = builder.emit(OPS[name], (a, Const(k)))
    return builder.emit(OPS["add"], (part, builder.emit(OPS["swapaxes"], (strict, Const(-1), Const(-2)))))


def _solve_form(named, builder):
    a, b = named["a"], named["b"]
    settings = (named["lower"], named["assume_a"], named["transposed"])
    if not all(isinstance(s, Const) for s in settings):
        return None
    lower, assume, transposed = (s.value for s in settings)
    if assume in ("lower triangular", "upper triangular"):
        return _triangular(builder, a, b, int(bool(transposed)), assume == "lower triangular")
    if assume in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite"):
        a = _symmetric(builder, a, bool(lower))
    elif assume not in (None, "gen", "general"):
        return None
    if transposed:
        a = builder.emit(OPS["swapaxes"], (a, Const(-1), Const(-2)))
    return builder.emit(OPS["solve"], (a, b))


@defop("scipy_solve", "scipy.linalg.solve(a, b, lower=lower, assume_a=assume_a, "
       "transposed=transposed)", aliases=(scipy.linalg.solve,), diff=("a", "b"),
       simplify=_solve_form,
       no_gradient="scipy.linalg.solve is differentiated with constant settings and assume_a "
       "general, symmetric, hermitian, positive definite or triangular (built as "
       "np.linalg.solve or solve_triangular); banded, tridiagonal and diagonal forms are not",
       no_sympy="built as np.linalg.solve")
def scipy_solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                assume_a=None, transposed=False): ...


scipy_solve.runtime = SCIPY


# ----- Sylvester equations -----
#
# X = solve_sylvester(A, B, Q) solves A X + X B = Q. Differentiating, A dX + dX B =
# dQ - dA X - X dB: dX solves the same equation with that right-hand side. The
# adjoint of the map Q -> X is the solve of the transposed equation A^T Y + Y B^T = G,
# so Q's adjoint is Y, A's is -Y X^T and B's -X^T Y. The equation has one solution
# where no eigenvalue of A is the negative of one of B; near such a pair the
# derivatives grow as the solution does (as they do for a near-singular np.linalg.solve).


def _sympy_sylvester(a, b, q):
    a, b, q = matrix(a), matrix(b), matrix(q)
    n, m = q.shape
    # (I_m (x) A + B^T (x) I_n) vec(X) = vec(Q), vec stacking the columns
    system = sp.kronecker_product(sp.eye(m), a) + sp.kronecker_product(b.T, sp.eye(n))
    solution = system.LUsolve(q.T.reshape(n * m, 1))
    return objects(solution.reshape(m, n).T.tolist())


@defop("solve_sylvester", "scipy.linalg.solve_sylvester(a, b, q)",
       aliases=(scipy.linalg.solve_sylvester,), diff=("a", "b", "q"), floating="always",
       sympy=_sympy_sylvester)
def solve_sylvester(a, b, q): ...


solve_sylvester.runtime = SCIPY


@solve_sylvester.defvjp
def _(g, ans, a, b, q):
    y = scipy.linalg.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
    return (unbroadcast(-(y @ np.swapaxes(ans, -1, -2)), a),
            unbroadcast(-(np.swapaxes(ans, -1, -2) @ y), b), unbroadcast(y, q))


@solve_sylvester.defjvp("a")
def _(t, ans, a, b, q):
    return scipy.linalg.solve_sylvester(a, b, -(t @ ans))


@solve_sylvester.defjvp("b")
def _(t, ans, a, b, q):
    return scipy.linalg.solve_sylvester(a, b, -(ans @ t))


@solve_sylvester.defjvp("q")
def _(t, ans, a, b, q):
    return scipy.linalg.solve_sylvester(a, b, t)


# ----- matrix functions: expm, logm, sqrtm -----
#
# For a matrix function f given by a power series (exp, and log and the square root
# on matrices whose eigenvalues avoid the closed negative real axis),
# f([[A, E], [0, A]]) = [[f(A), L(A, E)], [0, f(A)]], L(A, E) being the Frechet
# derivative of f at A along E (Higham, "Functions of Matrices", 2008, theorem 3.6),
# and the adjoint of E -> L(A, E) is G -> L(A^T, G) (f has real coefficients). So the
# JVP is a block of f of a matrix twice as large and the VJP the same at A^T, both
# written with f itself, which differentiates them again (JAX's expm is
# differentiated through its Frechet derivative the same way). The block matrix has
# each eigenvalue of A twice, which these rules need no special case for: the
# derivative is defined at repeated eigenvalues. The square root is differentiated by
# the Sylvester equation sqrtm(A) X + X sqrtm(A) = E instead, solved by
# solve_sylvester (whose rules give its second order). logm and sqrtm grow without
# bound as an eigenvalue of A nears 0, as their derivatives do.
#
# A matrix with a negative eigenvalue has a complex logarithm and square root: the
# call is refused then, when it runs, since autodiff differentiates real values.


def _block(a, e):
    """[[a, e], [0, a]] (for stacks too): f of it holds f(a)'s Frechet derivative at a
    along e in its upper right block."""
    top = np.concatenate([a, e], axis=-1)
    return np.concatenate([top, np.concatenate([np.zeros_like(a), a], axis=-1)], axis=-2)


@defop("expm", "scipy.linalg.expm(A)", aliases=(scipy.linalg.expm,), diff=("A",),
       shape=shape_like("A"), floating="always",
       no_sympy="SymPy's exponential of a symbolic matrix goes through its eigenvalues, "
       "roots of its characteristic polynomial")
def expm(A): ...


expm.runtime = SCIPY


@expm.defvjp
def _(g, ans, A):
    n = np.shape(A)[-1]
    return scipy.linalg.expm(_block(np.swapaxes(A, -1, -2), g))[..., :n, n:]


@expm.defjvp
def _(t, ans, A):
    n = np.shape(A)[-1]
    return scipy.linalg.expm(_block(A, t))[..., :n, n:]


def _real(name: str, result):
    if np.iscomplexobj(result):
        raise ValueError(f"scipy.linalg.{name} of this matrix is complex (it has a negative "
                         "eigenvalue): autodiff differentiates real values, and so "
                         f"{name} of matrices whose real eigenvalues are positive")
    return result


def real_logm(A):
    """``scipy.linalg.logm(A)``, refusing a complex logarithm."""
    return _real("logm", scipy.linalg.logm(A))


def real_sqrtm(A):
    """``scipy.linalg.sqrtm(A)``, refusing a complex square root."""
    return _real("sqrtm", scipy.linalg.sqrtm(A))


_NO_SYMBOLIC_FUNCTION = ("SymPy's {} of a symbolic matrix goes through its eigenvalues, roots "
                         "of its characteristic polynomial")


@defop("logm", "real_logm(A)", aliases=(scipy.linalg.logm,), diff=("A",), shape=shape_like("A"),
       floating="always", no_sympy=_NO_SYMBOLIC_FUNCTION.format("logarithm"))
def logm(A): ...


logm.runtime = {"real_logm": real_logm}


@logm.defvjp
def _(g, ans, A):
    n = np.shape(A)[-1]
    return scipy.linalg.logm(_block(np.swapaxes(A, -1, -2), g))[..., :n, n:]


@logm.defjvp
def _(t, ans, A):
    n = np.shape(A)[-1]
    return scipy.linalg.logm(_block(A, t))[..., :n, n:]


@defop("sqrtm", "real_sqrtm(A)", aliases=(scipy.linalg.sqrtm,), diff=("A",),
       shape=shape_like("A"), floating="always",
       no_sympy=_NO_SYMBOLIC_FUNCTION.format("square root"))
def sqrtm(A): ...


sqrtm.runtime = {"real_sqrtm": real_sqrtm}


@sqrtm.defvjp
def _(g, ans, A):
    transposed = np.swapaxes(ans, -1, -2)
    return scipy.linalg.solve_sylvester(transposed, transposed, g)


@sqrtm.defjvp
def _(t, ans, A):
    return scipy.linalg.solve_sylvester(ans, ans, t)
