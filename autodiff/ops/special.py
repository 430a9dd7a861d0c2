"""``scipy.special``: the special functions of statistics and machine learning.

Registered only when SciPy is installed (``ops/__init__.py`` imports this module
then): autodiff itself never needs SciPy. Generated code calls the functions as
``scipy.special.erf(x)``; ``math.gamma`` and ``math.lgamma`` are names for
``gamma`` and ``gammaln`` (their derivatives need the digamma function).

Each rule is written with ops autodiff knows, so that it can be differentiated
again: the derivative of ``gammaln`` is ``digamma``, whose derivative is
``polygamma(1, x)``, whose derivative in ``x`` is ``polygamma(2, x)``, and so on.
Integer orders (``polygamma``'s ``n``, ``multigammaln``'s ``d``) take no gradient.

numba compiles none of SciPy's functions: ``jit="numba"`` refuses a derivative
that calls one, naming the user's line.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from autodiff.graph.ir import Const
from autodiff.ops.registry import OPS, alias, defop
from autodiff.ops.runtime import broadcast_like, expand_reduced, unbroadcast
from autodiff.ops.shape_rules import broadcast
from autodiff.ops.sympy_forms import elementwise, objects, sp

UNARY = broadcast("x")
# What generated code reads to call SciPy's functions.
SCIPY = {"scipy": scipy}
SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)


# ----- logistic -----


@defop("expit", "scipy.special.expit(x)", aliases=(scipy.special.expit,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: 1 / (1 + sp.exp(-x))),
       jvp="same")
def expit(x): ...


expit.runtime = SCIPY


@expit.defvjp
def _(g, ans, x):
    return g * ans * (1 - ans)


@defop("logit", "scipy.special.logit(x)", aliases=(scipy.special.logit,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: sp.log(x / (1 - x))),
       jvp="same")
def logit(x): ...


logit.runtime = SCIPY


@logit.defvjp
def _(g, ans, x):
    return g / (x * (1 - x))


# ----- error functions and the normal distribution -----


@defop("erf", "scipy.special.erf(x)", aliases=(scipy.special.erf,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("erf"), jvp="same")
def erf(x): ...


erf.runtime = SCIPY


@erf.defvjp
def _(g, ans, x):
    return g * (2.0 / SQRT_PI) * np.exp(-x * x)


@defop("erfc", "scipy.special.erfc(x)", aliases=(scipy.special.erfc,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise("erfc"), jvp="same")
def erfc(x): ...


erfc.runtime = SCIPY


@erfc.defvjp
def _(g, ans, x):
    return g * (-2.0 / SQRT_PI) * np.exp(-x * x)


# The inverses: d erfinv(x)/dx is 1 / erf'(erfinv(x)).
@defop("erfinv", "scipy.special.erfinv(x)", aliases=(scipy.special.erfinv,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise("erfinv"), jvp="same")
def erfinv(x): ...


erfinv.runtime = SCIPY


@erfinv.defvjp
def _(g, ans, x):
    return g * (SQRT_PI / 2.0) * np.exp(ans * ans)


@defop("erfcinv", "scipy.special.erfcinv(x)", aliases=(scipy.special.erfcinv,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise("erfcinv"), jvp="same")
def erfcinv(x): ...


erfcinv.runtime = SCIPY


@erfcinv.defvjp
def _(g, ans, x):
    return g * (-SQRT_PI / 2.0) * np.exp(ans * ans)


# The standard normal CDF, its logarithm and its inverse.
@defop("ndtr", "scipy.special.ndtr(x)", aliases=(scipy.special.ndtr,), diff=("x",),
       shape=UNARY, floating="always",
       sympy=elementwise(lambda x: (1 + sp.erf(x / sp.sqrt(2))) / 2), jvp="same")
def ndtr(x): ...


ndtr.runtime = SCIPY


@ndtr.defvjp
def _(g, ans, x):
    return g * np.exp(-0.5 * x * x) / SQRT_2PI


# The normal density over the CDF, formed as exp(-x**2 / 2 - log_ndtr(x)): the quotient
# stays finite far in the left tail, where both would underflow.
@defop("log_ndtr", "scipy.special.log_ndtr(x)", aliases=(scipy.special.log_ndtr,),
       diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.log((1 + sp.erf(x / sp.sqrt(2))) / 2)), jvp="same")
def log_ndtr(x): ...


log_ndtr.runtime = SCIPY


@log_ndtr.defvjp
def _(g, ans, x):
    return g * np.exp(-0.5 * x * x - ans) / SQRT_2PI


@defop("ndtri", "scipy.special.ndtri(x)", aliases=(scipy.special.ndtri,), diff=("x",),
       shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.sqrt(2) * sp.erfinv(2 * x - 1)), jvp="same")
def ndtri(x): ...


ndtri.runtime = SCIPY


@ndtri.defvjp
def _(g, ans, x):
    return g * SQRT_2PI * np.exp(0.5 * ans * ans)


# ----- the gamma function and its relatives -----


# The derivatives of the digamma function: polygamma(n + 1, x) in x. The order n is an
# integer and takes no gradient.
@defop("polygamma", "scipy.special.polygamma(n, x)", aliases=(scipy.special.polygamma,),
       diff=("x",), shape=broadcast("n", "x"), floating="always",
       sympy=elementwise(lambda n, x: sp.polygamma(n, x), 2))
def polygamma(n, x): ...


polygamma.runtime = SCIPY


@polygamma.defvjp
def _(g, ans, n, x):
    return unbroadcast(g * scipy.special.polygamma(n + 1, x), x)


@polygamma.defjvp
def _(t, ans, n, x):
    return broadcast_like(t * scipy.special.polygamma(n + 1, x), ans)


@defop("digamma", "scipy.special.digamma(x)", aliases=(scipy.special.digamma,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: sp.polygamma(0, x)),
       jvp="same")
def digamma(x): ...


digamma.runtime = SCIPY


@digamma.defvjp
def _(g, ans, x):
    return g * scipy.special.polygamma(1, x)


# log|gamma(x)|, also math.lgamma: its derivative is digamma(x) for every x off the poles.
# SymPy's loggamma is the same for x > 0; for x < 0 it differs by a constant multiple of
# i pi, which its derivative, polygamma(0, x), does not see.
@defop("gammaln", "scipy.special.gammaln(x)", aliases=(scipy.special.gammaln, math.lgamma),
       diff=("x",), shape=UNARY, floating="always", sympy=elementwise("loggamma"),
       math_form="lgamma", jvp="same")
def gammaln(x): ...


gammaln.runtime = SCIPY


@gammaln.defvjp
def _(g, ans, x):
    return g * scipy.special.digamma(x)


@defop("gamma", "scipy.special.gamma(x)", aliases=(scipy.special.gamma, math.gamma),
       diff=("x",), shape=UNARY, floating="always", sympy=elementwise("gamma"),
       math_form="gamma", jvp="same")
def gamma(x): ...


gamma.runtime = SCIPY


@gamma.defvjp
def _(g, ans, x):
    return g * ans * scipy.special.digamma(x)


# 1 / gamma(x), an entire function: at the poles of gamma it is 0 and digamma is
# infinite, so the derivative, -rgamma(x) * digamma(x), is nan there.
@defop("rgamma", "scipy.special.rgamma(x)", aliases=(scipy.special.rgamma,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: 1 / sp.gamma(x)),
       jvp="same")
def rgamma(x): ...


rgamma.runtime = SCIPY


@rgamma.defvjp
def _(g, ans, x):
    return -g * ans * scipy.special.digamma(x)


def _sympy_multigammaln(a, d):
    d = int(d)
    constant = sp.Rational(d * (d - 1), 4) * sp.log(sp.pi)
    return constant + sum(sp.loggamma(a - sp.Rational(j, 2)) for j in range(d))


# log of the multivariate gamma function of dimension d (an integer, no gradient): a sum
# of gammaln(a - j / 2) for j < d, whose derivative is the sum of the digammas.
@defop("multigammaln", "scipy.special.multigammaln(a, d)",
       aliases=(scipy.special.multigammaln,), diff=("a",), shape=broadcast("a"),
       floating="always", sympy=elementwise(_sympy_multigammaln, 2), jvp="same")
def multigammaln(a, d): ...


multigammaln.runtime = SCIPY


@multigammaln.defvjp
def _(g, ans, a, d):
    shifts = np.arange(d) / 2.0
    return g * np.sum(scipy.special.digamma(np.expand_dims(a, -1) - shifts), axis=-1)


@defop("beta", "scipy.special.beta(a, b)", aliases=(scipy.special.beta,), diff=("a", "b"),
       shape=broadcast("a", "b"), floating="always", sympy=elementwise("beta", 2))
def beta(a, b): ...


beta.runtime = SCIPY


@beta.defvjp
def _(g, ans, a, b):
    both = scipy.special.digamma(a + b)
    return (unbroadcast(g * ans * (scipy.special.digamma(a) - both), a),
            unbroadcast(g * ans * (scipy.special.digamma(b) - both), b))


@beta.defjvp("a")
def _(t, ans, a, b):
    return t * ans * (scipy.special.digamma(a) - scipy.special.digamma(a + b))


@beta.defjvp("b")
def _(t, ans, a, b):
    return t * ans * (scipy.special.digamma(b) - scipy.special.digamma(a + b))


@defop("betaln", "scipy.special.betaln(a, b)", aliases=(scipy.special.betaln,),
       diff=("a", "b"), shape=broadcast("a", "b"), floating="always",
       sympy=elementwise(lambda a, b: sp.loggamma(a) + sp.loggamma(b) - sp.loggamma(a + b), 2))
def betaln(a, b): ...


betaln.runtime = SCIPY


@betaln.defvjp
def _(g, ans, a, b):
    both = scipy.special.digamma(a + b)
    return (unbroadcast(g * (scipy.special.digamma(a) - both), a),
            unbroadcast(g * (scipy.special.digamma(b) - both), b))


@betaln.defjvp("a")
def _(t, ans, a, b):
    return broadcast_like(t * (scipy.special.digamma(a) - scipy.special.digamma(a + b)), ans)


@betaln.defjvp("b")
def _(t, ans, a, b):
    return broadcast_like(t * (scipy.special.digamma(b) - scipy.special.digamma(a + b)), ans)


# ----- x * log(y) with 0 where x is 0 -----


def _sympy_xlogy(x, y):
    return sp.S.Zero if x == 0 else x * sp.log(y)


def _sympy_xlog1py(x, y):
    return sp.S.Zero if x == 0 else x * sp.log(1 + y)


# As JAX: the derivative in x is log(y) (log1p(y)) everywhere; the one in y is x / y
# (x / (1 + y)), and 0 where x is 0, whatever y (even 0: the function is 0 along x = 0).
@defop("xlogy", "scipy.special.xlogy(x, y)", aliases=(scipy.special.xlogy,), diff=("x", "y"),
       shape=broadcast("x", "y"), floating="always", sympy=elementwise(_sympy_xlogy, 2))
def xlogy(x, y): ...


xlogy.runtime = SCIPY


@xlogy.defvjp
def _(g, ans, x, y):
    return (unbroadcast(g * np.log(y), x),
            unbroadcast(g * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, y)), y))


@xlogy.defjvp("x")
def _(t, ans, x, y):
    return broadcast_like(t * np.log(y), ans)


@xlogy.defjvp("y")
def _(t, ans, x, y):
    return broadcast_like(t * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, y)), ans)


@defop("xlog1py", "scipy.special.xlog1py(x, y)", aliases=(scipy.special.xlog1py,),
       diff=("x", "y"), shape=broadcast("x", "y"), floating="always",
       sympy=elementwise(_sympy_xlog1py, 2))
def xlog1py(x, y): ...


xlog1py.runtime = SCIPY


@xlog1py.defvjp
def _(g, ans, x, y):
    return (unbroadcast(g * np.log1p(y), x),
            unbroadcast(g * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, 1 + y)), y))


@xlog1py.defjvp("x")
def _(t, ans, x, y):
    return broadcast_like(t * np.log1p(y), ans)


@xlog1py.defjvp("y")
def _(t, ans, x, y):
    return broadcast_like(t * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, 1 + y)), ans)


# ----- entropies -----


# -x log(x): its derivative -(log(x) + 1) is -inf at 0, the edge of its domain.
@defop("entr", "scipy.special.entr(x)", aliases=(scipy.special.entr,), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: -x * sp.log(x)),
       jvp="same")
def entr(x): ...


entr.runtime = SCIPY


@entr.defvjp
def _(g, ans, x):
    return -g * (np.log(x) + 1)


# x log(x / y) - x + y on x, y > 0.
@defop("kl_div", "scipy.special.kl_div(x, y)", aliases=(scipy.special.kl_div,),
       diff=("x", "y"), shape=broadcast("x", "y"), floating="always",
       sympy=elementwise(lambda x, y: x * sp.log(x / y) - x + y, 2))
def kl_div(x, y): ...


kl_div.runtime = SCIPY


@kl_div.defvjp
def _(g, ans, x, y):
    return unbroadcast(g * np.log(x / y), x), unbroadcast(g * (1 - x / y), y)


@kl_div.defjvp("x")
def _(t, ans, x, y):
    return t * np.log(x / y)


@kl_div.defjvp("y")
def _(t, ans, x, y):
    return t * (1 - x / y)


# ----- modified Bessel functions of the first kind -----


@defop("i0", "scipy.special.i0(x)", aliases=(scipy.special.i0,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besseli(0, x)), jvp="same")
def i0(x): ...


i0.runtime = SCIPY


@i0.defvjp
def _(g, ans, x):
    return g * scipy.special.i1(x)


# i1'(x) = i0(x) - i1(x) / x, whose limit at 0 is 1 / 2.
@defop("i1", "scipy.special.i1(x)", aliases=(scipy.special.i1,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besseli(1, x)), jvp="same")
def i1(x): ...


i1.runtime = SCIPY


@i1.defvjp
def _(g, ans, x):
    nonzero = np.where(x == 0, 1.0, x)
    return g * np.where(x == 0, 0.5, scipy.special.i0(x) - ans / nonzero)


# The exponentially scaled forms exp(-|x|) i0(x) and exp(-|x|) i1(x).
@defop("i0e", "scipy.special.i0e(x)", aliases=(scipy.special.i0e,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.exp(-sp.Abs(x)) * sp.besseli(0, x)),
       jvp="same")
def i0e(x): ...


i0e.runtime = SCIPY


@i0e.defvjp
def _(g, ans, x):
    return g * (scipy.special.i1e(x) - np.sign(x) * ans)


@defop("i1e", "scipy.special.i1e(x)", aliases=(scipy.special.i1e,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.exp(-sp.Abs(x)) * sp.besseli(1, x)),
       jvp="same")
def i1e(x): ...


i1e.runtime = SCIPY


@i1e.defvjp
def _(g, ans, x):
    nonzero = np.where(x == 0, 1.0, x)
    return g * np.where(x == 0, 0.5, scipy.special.i0e(x) - ans * (np.sign(x) + 1 / nonzero))


# ----- log-sum-exp and the softmax -----


def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp as an op: ``logsumexp`` without ``b``, ``weighted_logsumexp``
    with one; return_sign=True (a tuple) is refused."""
    if not (return_sign is False or isinstance(return_sign, Const) and return_sign.value is False):
        raise TypeError("scipy.special.logsumexp(..., return_sign=True) is not supported: "
                        "differentiate logsumexp of the absolute values and the sign apart")
    if b is None or isinstance(b, Const) and b.value is None:
        return logsumexp, {"a": a, "axis": axis, "keepdims": keepdims}
    return weighted_logsumexp, {"a": a, "axis": axis, "b": b, "keepdims": keepdims}


def _sympy_logsumexp(a, axis, keepdims, b=1):
    terms = elementwise("exp")(objects(a)) * objects(b)
    return elementwise("log")(np.sum(terms, axis=axis, keepdims=keepdims))


# log(sum(exp(a))) over axis: its gradient is the softmax exp(a - ans).
@defop("logsumexp", "scipy.special.logsumexp(a, axis=axis, keepdims=keepdims)",
       aliases=((scipy.special.logsumexp, _logsumexp),), diff=("a",), floating="always",
       sympy=_sympy_logsumexp)
def logsumexp(a, axis=None, keepdims=False): ...


logsumexp.runtime = SCIPY


@logsumexp.defvjp
def _(g, ans, a, axis, keepdims):
    return expand_reduced(g, axis, keepdims) * np.exp(a - expand_reduced(ans, axis, keepdims))


@logsumexp.defjvp
def _(t, ans, a, axis, keepdims):
    return np.sum(t * np.exp(a - expand_reduced(ans, axis, keepdims)), axis=axis,
                  keepdims=keepdims)


# log(sum(b * exp(a))) over axis (b broadcast against a): its gradient in a is
# b * exp(a - ans), in b exp(a - ans).
@defop("weighted_logsumexp", "scipy.special.logsumexp(a, axis=axis, b=b, keepdims=keepdims)",
       diff=("a", "b"), floating="always",
       sympy=lambda a, axis, b, keepdims: _sympy_logsumexp(a, axis, keepdims, b))
def weighted_logsumexp(a, axis, b, keepdims=False): ...


weighted_logsumexp.runtime = SCIPY


@weighted_logsumexp.defvjp
def _(g, ans, a, axis, b, keepdims):
    spread = expand_reduced(g, axis, keepdims) * np.exp(a - expand_reduced(ans, axis, keepdims))
    weighted = spread * b  # (b may be larger than a: spread takes its shape for b's share)
    return unbroadcast(weighted, a), unbroadcast(broadcast_like(spread, weighted), b)


@weighted_logsumexp.defjvp("a")
def _(t, ans, a, axis, b, keepdims):
    weights = np.exp(a - expand_reduced(ans, axis, keepdims))
    return np.sum(t * weights * b, axis=axis, keepdims=keepdims)


@weighted_logsumexp.defjvp("b")
def _(t, ans, a, axis, b, keepdims):
    weights = np.exp(a - expand_reduced(ans, axis, keepdims))
    return np.sum(t * weights, axis=axis, keepdims=keepdims)


def _sympy_softmax(x, axis):
    e = elementwise("exp")(objects(x))
    return e / np.sum(e, axis=axis, keepdims=True)


# Its Jacobian, diag(ans) - ans ans^T along the axis, is symmetric: the JVP is the VJP.
@defop("softmax", "scipy.special.softmax(x, axis=axis)", aliases=(scipy.special.softmax,),
       diff=("x",), shape=UNARY, floating="always", sympy=_sympy_softmax, jvp="same")
def softmax(x, axis=None): ...


softmax.runtime = SCIPY


@softmax.defvjp
def _(g, ans, x, axis):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


def _sympy_log_softmax(x, axis):
    x = objects(x)
    total = np.sum(elementwise("exp")(x), axis=axis, keepdims=True)
    return x - elementwise("log")(total)


@defop("log_softmax", "scipy.special.log_softmax(x, axis=axis)",
       aliases=(scipy.special.log_softmax,), diff=("x",), shape=UNARY, floating="always",
       sympy=_sympy_log_softmax)
def log_softmax(x, axis=None): ...


log_softmax.runtime = SCIPY


@log_softmax.defvjp
def _(g, ans, x, axis):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


@log_softmax.defjvp
def _(t, ans, x, axis):
    return t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True)


# ----- Bessel functions -----
#
# Each derivative in x is the recurrence of its family: J_v' = (J_{v-1} - J_{v+1}) / 2
# (and Y's alike), I_v' = (I_{v-1} + I_{v+1}) / 2, K_v' = -(K_{v-1} + K_{v+1}) / 2, the
# same at x = 0 where the forms J_v' = J_{v-1} - v J_v / x are 0 / 0. The order v (or the
# integer n) takes no gradient, as in JAX and autograd: the derivative in the order has
# no closed form in these functions, and a value carrying a gradient into it is refused
# at the call. scipy.special.jn is jv. Off their domains (x <= 0 for Y and K, x < 0 for a
# non-integer order) SciPy's value is nan, and so is the derivative.
ORDER = ("the order of a Bessel function takes no gradient: as in JAX and autograd, there "
         "is no rule for it")


@defop("j0", "scipy.special.j0(x)", aliases=(scipy.special.j0,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besselj(0, x)), jvp="same")
def j0(x): ...


j0.runtime = SCIPY


@j0.defvjp
def _(g, ans, x):
    return -g * scipy.special.j1(x)


@defop("j1", "scipy.special.j1(x)", aliases=(scipy.special.j1,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besselj(1, x)), jvp="same")
def j1(x): ...


j1.runtime = SCIPY


@j1.defvjp
def _(g, ans, x):
    return g * (scipy.special.j0(x) - scipy.special.jv(2, x)) / 2


@defop("jv", "scipy.special.jv(v, x)", aliases=(scipy.special.jv,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.besselj(v, x), 2))
def jv(v, x): ...


jv.runtime = SCIPY


@jv.defvjp
def _(g, ans, v, x):
    return unbroadcast(g * (scipy.special.jv(v - 1, x) - scipy.special.jv(v + 1, x)) / 2, x)


@jv.defjvp
def _(t, ans, v, x):
    return broadcast_like(t * (scipy.special.jv(v - 1, x) - scipy.special.jv(v + 1, x)) / 2,
                          ans)


@defop("y0", "scipy.special.y0(x)", aliases=(scipy.special.y0,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.bessely(0, x)), jvp="same")
def y0(x): ...


y0.runtime = SCIPY


@y0.defvjp
def _(g, ans, x):
    return -g * scipy.special.y1(x)


@defop("y1", "scipy.special.y1(x)", aliases=(scipy.special.y1,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.bessely(1, x)), jvp="same")
def y1(x): ...


y1.runtime = SCIPY


@y1.defvjp
def _(g, ans, x):
    return g * (scipy.special.y0(x) - scipy.special.yv(2, x)) / 2


# The integer order n stays an integer in the rule (n - 1, n + 1): SciPy's yn of a
# negative order is (-1)^n Y_{-n}, as the recurrence wants.
@defop("yn", "scipy.special.yn(n, x)", aliases=(scipy.special.yn,), diff=("x",),
       shape=broadcast("n", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda n, x: sp.bessely(n, x), 2))
def yn(n, x): ...


yn.runtime = SCIPY


@yn.defvjp
def _(g, ans, n, x):
    return unbroadcast(g * (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x)) / 2, x)


@yn.defjvp
def _(t, ans, n, x):
    return broadcast_like(t * (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x)) / 2,
                          ans)


@defop("yv", "scipy.special.yv(v, x)", aliases=(scipy.special.yv,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.bessely(v, x), 2))
def yv(v, x): ...


yv.runtime = SCIPY


@yv.defvjp
def _(g, ans, v, x):
    return unbroadcast(g * (scipy.special.yv(v - 1, x) - scipy.special.yv(v + 1, x)) / 2, x)


@yv.defjvp
def _(t, ans, v, x):
    return broadcast_like(t * (scipy.special.yv(v - 1, x) - scipy.special.yv(v + 1, x)) / 2,
                          ans)


# Modified, first kind, any order (i0 and i1 are above): defined for x < 0 when the order
# is an integer.
@defop("iv", "scipy.special.iv(v, x)", aliases=(scipy.special.iv,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.besseli(v, x), 2))
def iv(v, x): ...


iv.runtime = SCIPY


@iv.defvjp
def _(g, ans, v, x):
    return unbroadcast(g * (scipy.special.iv(v - 1, x) + scipy.special.iv(v + 1, x)) / 2, x)


@iv.defjvp
def _(t, ans, v, x):
    return broadcast_like(t * (scipy.special.iv(v - 1, x) + scipy.special.iv(v + 1, x)) / 2,
                          ans)


# exp(-|x|) iv(v, x), finite far out where iv overflows: its derivative is the scaled
# recurrence minus sign(x) times itself, 0 for the kink of |x| at 0 (as i0e above; for
# v >= 1, iv(v, 0) is 0 and there is no kink).
@defop("ive", "scipy.special.ive(v, x)", aliases=(scipy.special.ive,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.exp(-sp.Abs(x)) * sp.besseli(v, x), 2),
       real_rules=True)  # (of a complex x it scales by exp(-|Re x|), no holomorphic function)
def ive(v, x): ...


ive.runtime = SCIPY


@ive.defvjp
def _(g, ans, v, x):
    slope = (scipy.special.ive(v - 1, x) + scipy.special.ive(v + 1, x)) / 2 - np.sign(x) * ans
    return unbroadcast(g * slope, x)


@ive.defjvp
def _(t, ans, v, x):
    slope = (scipy.special.ive(v - 1, x) + scipy.special.ive(v + 1, x)) / 2 - np.sign(x) * ans
    return broadcast_like(t * slope, ans)


# Modified, second kind: x > 0 (SciPy gives inf at 0 and nan below).
@defop("k0", "scipy.special.k0(x)", aliases=(scipy.special.k0,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besselk(0, x)), jvp="same")
def k0(x): ...


k0.runtime = SCIPY


@k0.defvjp
def _(g, ans, x):
    return -g * scipy.special.k1(x)


@defop("k1", "scipy.special.k1(x)", aliases=(scipy.special.k1,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.besselk(1, x)), jvp="same")
def k1(x): ...


k1.runtime = SCIPY


@k1.defvjp
def _(g, ans, x):
    return -g * (scipy.special.k0(x) + scipy.special.kv(2, x)) / 2


@defop("kn", "scipy.special.kn(n, x)", aliases=(scipy.special.kn,), diff=("x",),
       shape=broadcast("n", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda n, x: sp.besselk(n, x), 2))
def kn(n, x): ...


kn.runtime = SCIPY


@kn.defvjp
def _(g, ans, n, x):
    return unbroadcast(-g * (scipy.special.kn(n - 1, x) + scipy.special.kn(n + 1, x)) / 2, x)


@kn.defjvp
def _(t, ans, n, x):
    return broadcast_like(-t * (scipy.special.kn(n - 1, x) + scipy.special.kn(n + 1, x)) / 2,
                          ans)


@defop("kv", "scipy.special.kv(v, x)", aliases=(scipy.special.kv,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.besselk(v, x), 2))
def kv(v, x): ...


kv.runtime = SCIPY


@kv.defvjp
def _(g, ans, v, x):
    return unbroadcast(-g * (scipy.special.kv(v - 1, x) + scipy.special.kv(v + 1, x)) / 2, x)


@kv.defjvp
def _(t, ans, v, x):
    return broadcast_like(-t * (scipy.special.kv(v - 1, x) + scipy.special.kv(v + 1, x)) / 2,
                          ans)


# The scaled forms exp(x) k(x), finite far out where k underflows: the derivative of
# exp(x) f(x) is exp(x) f'(x) plus itself.
@defop("k0e", "scipy.special.k0e(x)", aliases=(scipy.special.k0e,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.exp(x) * sp.besselk(0, x)),
       jvp="same")
def k0e(x): ...


k0e.runtime = SCIPY


@k0e.defvjp
def _(g, ans, x):
    return g * (ans - scipy.special.k1e(x))


@defop("k1e", "scipy.special.k1e(x)", aliases=(scipy.special.k1e,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: sp.exp(x) * sp.besselk(1, x)),
       jvp="same")
def k1e(x): ...


k1e.runtime = SCIPY


@k1e.defvjp
def _(g, ans, x):
    return g * (ans - (scipy.special.k0e(x) + scipy.special.kve(2, x)) / 2)


@defop("kve", "scipy.special.kve(v, x)", aliases=(scipy.special.kve,), diff=("x",),
       shape=broadcast("v", "x"), floating="always", no_gradient=ORDER,
       sympy=elementwise(lambda v, x: sp.exp(x) * sp.besselk(v, x), 2))
def kve(v, x): ...


kve.runtime = SCIPY


@kve.defvjp
def _(g, ans, v, x):
    slope = ans - (scipy.special.kve(v - 1, x) + scipy.special.kve(v + 1, x)) / 2
    return unbroadcast(g * slope, x)


@kve.defjvp
def _(t, ans, v, x):
    slope = ans - (scipy.special.kve(v - 1, x) + scipy.special.kve(v + 1, x)) / 2
    return broadcast_like(t * slope, ans)


# ----- incomplete gamma and beta functions -----
#
# Regularised: gammainc(a, x) = P(a, x), gammaincc(a, x) = 1 - P(a, x), betainc(a, b, x)
# = I_x(a, b). The derivatives in x are the densities of the gamma and beta
# distributions, formed in logarithms with xlogy and xlog1py so that they are right at
# the ends (x^0 = 1 at x = 0 for a = 1). The shapes take no gradient: theirs have no
# closed form. JAX computes the one of gammainc in a numerically (left out here);
# autograd gives neither, and JAX none for betainc's a and b.
SHAPE = "the shape parameters take no gradient: their derivatives have no closed form"


@defop("gammainc", "scipy.special.gammainc(a, x)", aliases=(scipy.special.gammainc,),
       diff=("x",), shape=broadcast("a", "x"), floating="always", no_gradient=SHAPE,
       sympy=elementwise(lambda a, x: sp.lowergamma(a, x) / sp.gamma(a), 2))
def gammainc(a, x): ...


gammainc.runtime = SCIPY


@gammainc.defvjp
def _(g, ans, a, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))
    return unbroadcast(g * density, x)


@gammainc.defjvp
def _(t, ans, a, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))
    return broadcast_like(t * density, ans)


@defop("gammaincc", "scipy.special.gammaincc(a, x)", aliases=(scipy.special.gammaincc,),
       diff=("x",), shape=broadcast("a", "x"), floating="always", no_gradient=SHAPE,
       sympy=elementwise(lambda a, x: sp.uppergamma(a, x) / sp.gamma(a), 2))
def gammaincc(a, x): ...


gammaincc.runtime = SCIPY


@gammaincc.defvjp
def _(g, ans, a, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))
    return unbroadcast(-g * density, x)


@gammaincc.defjvp
def _(t, ans, a, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))
    return broadcast_like(-t * density, ans)


@defop("betainc", "scipy.special.betainc(a, b, x)", aliases=(scipy.special.betainc,),
       diff=("x",), shape=broadcast("a", "b", "x"), floating="always", no_gradient=SHAPE,
       sympy=elementwise(lambda a, b, x: sp.betainc_regularized(a, b, 0, x), 3))
def betainc(a, b, x): ...


betainc.runtime = SCIPY


@betainc.defvjp
def _(g, ans, a, b, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) + scipy.special.xlog1py(b - 1, -x)
                     - scipy.special.betaln(a, b))
    return unbroadcast(g * density, x)


@betainc.defjvp
def _(t, ans, a, b, x):
    density = np.exp(scipy.special.xlogy(a - 1, x) + scipy.special.xlog1py(b - 1, -x)
                     - scipy.special.betaln(a, b))
    return broadcast_like(t * density, ans)


# ----- more of the logistic and entropy families -----


def _sympy_rel_entr(x, y):
    return sp.S.Zero if x == 0 else x * sp.log(x / y)


# x log(x / y) on x, y > 0, 0 at x = 0. As xlogy: the derivative in y, -x / y, is 0 where
# x is 0 (the function is 0 along x = 0); the one in x, log(x / y) + 1, is -inf there.
@defop("rel_entr", "scipy.special.rel_entr(x, y)", aliases=(scipy.special.rel_entr,),
       diff=("x", "y"), shape=broadcast("x", "y"), floating="always",
       sympy=elementwise(_sympy_rel_entr, 2))
def rel_entr(x, y): ...


rel_entr.runtime = SCIPY


@rel_entr.defvjp
def _(g, ans, x, y):
    return (unbroadcast(g * (np.log(x / y) + 1), x),
            unbroadcast(g * np.where(x == 0, 0.0, -x / np.where(x == 0, 1.0, y)), y))


@rel_entr.defjvp("x")
def _(t, ans, x, y):
    return broadcast_like(t * (np.log(x / y) + 1), ans)


@rel_entr.defjvp("y")
def _(t, ans, x, y):
    return broadcast_like(t * np.where(x == 0, 0.0, -x / np.where(x == 0, 1.0, y)), ans)


# log(1 + exp(x)), whose derivative is expit(x).
@defop("softplus", "scipy.special.softplus(x)", aliases=(scipy.special.softplus,),
       diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.log(1 + sp.exp(x))), jvp="same")
def softplus(x): ...


softplus.runtime = SCIPY


@softplus.defvjp
def _(g, ans, x):
    return g * scipy.special.expit(x)


# log(expit(x)) = -softplus(-x), whose derivative is expit(-x), finite in both tails.
@defop("log_expit", "scipy.special.log_expit(x)", aliases=(scipy.special.log_expit,),
       diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise(lambda x: -sp.log(1 + sp.exp(-x))), jvp="same")
def log_expit(x): ...


log_expit.runtime = SCIPY


@log_expit.defvjp
def _(g, ans, x):
    return g * scipy.special.expit(-x)


# SciPy's own log1p and expm1 are NumPy's functions on real numbers: names for those ops.
alias(scipy.special.log1p, OPS["log1p"])
alias(scipy.special.expm1, OPS["expm1"])


# The scaled complementary error function exp(x^2) erfc(x), finite where erfc underflows:
# its derivative 2 x erfcx(x) - 2 / sqrt(pi) is written with erfcx itself.
@defop("erfcx", "scipy.special.erfcx(x)", aliases=(scipy.special.erfcx,), diff=("x",),
       shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.exp(x * x) * sp.erfc(x)), jvp="same")
def erfcx(x): ...


erfcx.runtime = SCIPY


@erfcx.defvjp
def _(g, ans, x):
    return g * (2.0 * x * ans - 2.0 / SQRT_PI)


# NumPy's own i0 (np.i0): NumPy has no i1 for its derivative, so the op lives here and
# is registered only when SciPy imports; its rule calls SciPy's i1 (whose own rules are
# above). Without SciPy, np.i0 is a function with no rule: a gradient reaching it is an
# error at the user's call.
@defop("np_i0", "np.i0(x)", aliases=(np.i0,), diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.besseli(0, x)), jvp="same")
def np_i0(x): ...


np_i0.runtime = SCIPY


@np_i0.defvjp
def _(g, ans, x):
    return g * scipy.special.i1(x)
