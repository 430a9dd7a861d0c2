"""Reductions: sum, mean, prod, max, min over ``axis`` (None, int or tuple), ``keepdims``.

Every rule first puts back the reduced axes (``expand_reduced``) so that the
incoming gradient broadcasts against the input.
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.patterns import is_false, is_none
from autodiff.ops.registry import defop
from autodiff.ops.runtime import expand_reduced, product_of_others, reduced_size
from autodiff.ops.shape_rules import reduced
from autodiff.ops.sympy_forms import elementwise, fold, objects, sp

REDUCE = {"diff": ("a",), "shape": reduced}


@defop("sum", "np.sum(a, axis=axis, keepdims=keepdims)", aliases=(np.sum,), methods=("sum",),
       **REDUCE, zeros="first", sympy=lambda a, axis, keepdims: np.sum(objects(a), axis=axis, keepdims=keepdims), jvp="linear")
def sum_(a, axis=None, keepdims=False): ...


@sum_.defvjp
def _(g, ans, a, axis, keepdims):
    return np.broadcast_to(expand_reduced(g, axis, keepdims), np.shape(a))


@sum_.defrewrite
def _(rewrite, node, a, axis, keepdims):
    if is_none(axis) and is_false(keepdims):
        return rewrite.sum_of_broadcast(node, a)
    return None


@defop("mean", "np.mean(a, axis=axis, keepdims=keepdims)", aliases=(np.mean,),
       methods=("mean",), floating="always", **REDUCE, sympy=lambda a, axis, keepdims: np.mean(objects(a), axis=axis, keepdims=keepdims), jvp="linear")
def mean(a, axis=None, keepdims=False): ...


@mean.defvjp
def _(g, ans, a, axis, keepdims):
    return np.broadcast_to(expand_reduced(g, axis, keepdims) / reduced_size(a, axis), np.shape(a))


@defop("prod", "np.prod(a, axis=axis, keepdims=keepdims)", aliases=(np.prod,),
       methods=("prod",), **REDUCE, sympy=lambda a, axis, keepdims: np.prod(objects(a), axis=axis, keepdims=keepdims))
def prod(a, axis=None, keepdims=False): ...


@prod.defvjp
def _(g, ans, a, axis, keepdims):
    # The product of the other elements, not ans / a, so that zeros are exact.
    return expand_reduced(g, axis, keepdims) * product_of_others(a, axis)


@prod.defjvp
def _(t, ans, a, axis, keepdims):
    return np.sum(t * product_of_others(a, axis), axis=axis, keepdims=keepdims)


@defop("max", "np.max(a, axis=axis, keepdims=keepdims)", aliases=(np.max, np.amax),
       methods=("max",), **REDUCE, sympy=lambda a, axis, keepdims: fold(sp.Max, a, axis, keepdims))
def max_(a, axis=None, keepdims=False): ...


@max_.defvjp
def _extremum_vjp(g, ans, a, axis, keepdims):
    # Ties share the gradient evenly, as JAX and torch.amax do.
    winners = a == expand_reduced(ans, axis, keepdims)
    return winners * (expand_reduced(g, axis, keepdims) / np.sum(winners, axis=axis, keepdims=True))


@defop("min", "np.min(a, axis=axis, keepdims=keepdims)", aliases=(np.min, np.amin),
       methods=("min",), **REDUCE, sympy=lambda a, axis, keepdims: fold(sp.Min, a, axis, keepdims))
def min_(a, axis=None, keepdims=False): ...


min_.defvjp(_extremum_vjp)


@max_.defjvp
def _extremum_jvp(t, ans, a, axis, keepdims):
    # The mean of the tangents of the tied winners: the VJP's even share, transposed.
    winners = a == expand_reduced(ans, axis, keepdims)
    return (np.sum(winners * t, axis=axis, keepdims=keepdims)
            / np.sum(winners, axis=axis, keepdims=keepdims))


min_.defjvp(_extremum_jvp)


_SYMPY_SQRT = elementwise("sqrt")


def _sympy_variance(a, axis, ddof, keepdims):
    a = objects(a)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = a.size // max(np.size(np.mean(a, axis=axis, keepdims=True)), 1)
    return np.sum(centred * centred, axis=axis, keepdims=keepdims) / (count - ddof)


@defop("var", "np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=(np.var,),
       methods=("var",), floating="always", **REDUCE, sympy=_sympy_variance)
def var(a, axis=None, ddof=0, keepdims=False): ...


# Var is smooth everywhere: of a scalar or of equal elements its derivative is 0.
@var.defvjp
def _(g, ans, a, axis, ddof, keepdims):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return expand_reduced(g, axis, keepdims) * 2.0 * centred / (reduced_size(a, axis) - ddof)


@var.defjvp
def _(t, ans, a, axis, ddof, keepdims):
    # The centred values sum to zero, so the mean of t drops out.
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return 2.0 * np.sum(centred * t, axis=axis, keepdims=keepdims) / (reduced_size(a, axis) - ddof)


@defop("std", "np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=(np.std,),
       methods=("std",), floating="always", **REDUCE, sympy=lambda a, axis, ddof, keepdims: _SYMPY_SQRT(_sympy_variance(a, axis, ddof, keepdims)))
def std(a, axis=None, ddof=0, keepdims=False): ...


# The derivative of std is centred / (n * std). Autograd's convention at the edges: where
# each result reduces one element (a scalar, or an axis of length 1), std is 0 whatever
# the input and its derivative is 0, not 0 / 0; the "+ (n <= 1)" makes the divisor 1
# there (centred is 0). Over several equal elements std has a cone point and no
# derivative: the gradient is nan there, as in autograd and JAX (sqrt of var).
@std.defvjp
def _(g, ans, a, axis, ddof, keepdims):
    n = reduced_size(a, axis)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    spread = expand_reduced(ans, axis, keepdims) * (n - ddof) + (n <= 1)
    return expand_reduced(g, axis, keepdims) * centred / spread


@std.defjvp
def _(t, ans, a, axis, ddof, keepdims):
    n = reduced_size(a, axis)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return np.sum(centred * t, axis=axis, keepdims=keepdims) / (ans * (n - ddof) + (n <= 1))
