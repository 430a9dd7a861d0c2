"""Reductions: sum, mean, prod, max, min, var, std, ptp, nansum, nanmean, average over ``axis`` (None, int or tuple), ``keepdims``; argmax and argmin, which pass no gradient; the other NaN-skipping reductions, NumPy's where=, initial= and mean=.

Every rule first puts back the reduced axes (``expand_reduced``) so that the
incoming gradient broadcasts against the input.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from autodiff.graph.ir import Const
from autodiff.graph.patterns import is_false, is_none
from autodiff.ops import runtime
from autodiff.ops.registry import OPS, defop
from autodiff.ops.runtime import expand_reduced, product_of_others, reduced_size
from autodiff.ops.shape_rules import reduced, shape_like
from autodiff.ops.sympy_forms import Unsupported, elementwise, fold, objects, sp

REDUCE = {"diff": ("a",), "shape": reduced}


# ----- NumPy's keywords of the reductions: where=, initial=, mean= -----
#
# A call is bound by the NumPy function's own signature (so positions mean what they
# mean in the NumPy installed: np.var(x, 0, None, None, 1) is ddof 1). dtype= and out=
# are refused. A call with where=, initial= or mean= (NumPy 2's, in var and std) is
# the op reduction_keywords (at the end of this module), built from the reductions and
# np.where, so that it has their rules.

_NO_VALUE = object()


def _absent(value) -> bool:
    return value is _NO_VALUE or value is None or isinstance(value, Const) and value.value is None


def _reduction_call(function, name: str):
    """The adapter of NumPy's ``function`` (and the method of the same name) to the op
    ``name``, or to reduction_keywords for its keywords."""
    signature = inspect.signature(function)
    signature = signature.replace(parameters=[p.replace(default=_NO_VALUE) if p.name != "a" else p
                                              for p in signature.parameters.values()])

    def call(*args, **kwargs):
        given = {key: value for key, value in signature.bind(*args, **kwargs).arguments.items()
                 if key == "a" or not _absent(value)}
        for refused in ("dtype", "out"):
            if refused in given:
                raise TypeError(f"{refused}= is not supported")
        if "correction" in given:  # NumPy 2's name for ddof
            if "ddof" in given:
                raise TypeError("ddof= and correction= cannot both be given")
            given["ddof"] = given.pop("correction")
        if isinstance(given.get("where"), Const) and given["where"].value is True:
            del given["where"]
        if not {"where", "initial", "mean"} & given.keys():
            return given
        if name in ("max", "min", "nanmax", "nanmin") and "where" in given and "initial" not in given:
            raise TypeError(f"np.{name} with where= needs initial=, as NumPy's does (a maximum "
                            "or minimum has no identity to start from)")
        return OPS["reduction_keywords"], {**given, "name": Const(name)}

    return call


@defop("sum", "np.sum(a, axis=axis, keepdims=keepdims)", aliases=((np.sum, _reduction_call(np.sum, "sum")),),
       methods=(("sum", _reduction_call(np.sum, "sum")),),
       **REDUCE, zeros="first", sympy=lambda a, axis, keepdims: np.sum(objects(a), axis=axis, keepdims=keepdims), jvp="linear")
def sum_(a, axis=None, keepdims=False): ...


# (A scalar adjoint spread over a is broadcast_like(g, a), in a's dtype: see ops/shape.py.)
@sum_.defvjp
def _(g, ans, a, axis, keepdims):
    return np.broadcast_to(expand_reduced(g, axis, keepdims), np.shape(a))


@sum_.defrewrite
def _(rewrite, node, a, axis, keepdims):
    if is_none(axis) and is_false(keepdims):
        return rewrite.sum_of_broadcast(node, a)
    return None


@defop("mean", "np.mean(a, axis=axis, keepdims=keepdims)", aliases=((np.mean, _reduction_call(np.mean, "mean")),),
       methods=(("mean", _reduction_call(np.mean, "mean")),), floating="always", **REDUCE, sympy=lambda a, axis, keepdims: np.mean(objects(a), axis=axis, keepdims=keepdims), jvp="linear")
def mean(a, axis=None, keepdims=False): ...


@mean.defvjp
def _(g, ans, a, axis, keepdims):
    return np.broadcast_to(expand_reduced(g, axis, keepdims) / reduced_size(a, axis), np.shape(a))


@defop("prod", "np.prod(a, axis=axis, keepdims=keepdims)", aliases=((np.prod, _reduction_call(np.prod, "prod")),),
       methods=(("prod", _reduction_call(np.prod, "prod")),), **REDUCE, sympy=lambda a, axis, keepdims: np.prod(objects(a), axis=axis, keepdims=keepdims))
def prod(a, axis=None, keepdims=False): ...


@prod.defvjp
def _(g, ans, a, axis, keepdims):
    # The product of the other elements, not ans / a, so that zeros are exact.
    return expand_reduced(g, axis, keepdims) * product_of_others(a, axis)


@prod.defjvp
def _(t, ans, a, axis, keepdims):
    return np.sum(t * product_of_others(a, axis), axis=axis, keepdims=keepdims)


@defop("max", "np.max(a, axis=axis, keepdims=keepdims)", aliases=((np.max, _reduction_call(np.max, "max")), (np.amax, _reduction_call(np.amax, "max"))),
       methods=(("max", _reduction_call(np.max, "max")),), **REDUCE, sympy=lambda a, axis, keepdims: fold(sp.Max, a, axis, keepdims))
def max_(a, axis=None, keepdims=False): ...


@max_.defvjp
def _extremum_vjp(g, ans, a, axis, keepdims):
    # Ties share the gradient evenly, as JAX and torch.amax do.
    winners = a == expand_reduced(ans, axis, keepdims)
    count = runtime.count_true(winners, axis, True, a)  # in a's dtype: g / count stays float32
    return winners * (expand_reduced(g, axis, keepdims) / count)


@defop("min", "np.min(a, axis=axis, keepdims=keepdims)", aliases=((np.min, _reduction_call(np.min, "min")), (np.amin, _reduction_call(np.amin, "min"))),
       methods=(("min", _reduction_call(np.min, "min")),), **REDUCE, sympy=lambda a, axis, keepdims: fold(sp.Min, a, axis, keepdims))
def min_(a, axis=None, keepdims=False): ...


min_.defvjp(_extremum_vjp)


@max_.defjvp
def _extremum_jvp(t, ans, a, axis, keepdims):
    # The mean of the tangents of the tied winners: the VJP's even share, transposed.
    winners = a == expand_reduced(ans, axis, keepdims)
    return (np.sum(winners * t, axis=axis, keepdims=keepdims)
            / runtime.count_true(winners, axis, keepdims, a))


min_.defjvp(_extremum_jvp)


_SYMPY_SQRT = elementwise("sqrt")


def _sympy_variance(a, axis, ddof, keepdims):
    a = objects(a)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    count = a.size // max(np.size(np.mean(a, axis=axis, keepdims=True)), 1)
    return np.sum(centred * centred, axis=axis, keepdims=keepdims) / (count - ddof)


@defop("var", "np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=((np.var, _reduction_call(np.var, "var")),),
       methods=(("var", _reduction_call(np.var, "var")),), floating="always", **REDUCE, sympy=_sympy_variance, real_rules=True)
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


# Of complex values, the mean of |a - mean|^2: the gradient is 2 conj(centred) / (n - ddof)
# (JAX's and autograd's convention), the tangent 2 Re(conj(centred) t) / (n - ddof).
@var.defvjp_complex
def _(g, ans, a, axis, ddof, keepdims):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return (expand_reduced(np.real(g), axis, keepdims) * 2.0 * np.conj(centred)
            / (reduced_size(a, axis) - ddof))


@var.defjvp_complex
def _(t, ans, a, axis, ddof, keepdims):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return 2.0 * np.sum(np.real(np.conj(centred) * t), axis=axis, keepdims=keepdims) / (
        reduced_size(a, axis) - ddof)


@defop("std", "np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=((np.std, _reduction_call(np.std, "std")),),
       methods=(("std", _reduction_call(np.std, "std")),), floating="always", **REDUCE, sympy=lambda a, axis, ddof, keepdims: _SYMPY_SQRT(_sympy_variance(a, axis, ddof, keepdims)),
       real_rules=True)
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


# Of complex values, as var's: conj(centred) for centred, Re(conj(centred) t) for centred t.
@std.defvjp_complex
def _(g, ans, a, axis, ddof, keepdims):
    n = reduced_size(a, axis)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    spread = expand_reduced(ans, axis, keepdims) * (n - ddof) + (n <= 1)
    return expand_reduced(np.real(g), axis, keepdims) * np.conj(centred) / spread


@std.defjvp_complex
def _(t, ans, a, axis, ddof, keepdims):
    n = reduced_size(a, axis)
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return np.sum(np.real(np.conj(centred) * t), axis=axis, keepdims=keepdims) / (
        ans * (n - ddof) + (n <= 1))


@defop("ptp", "np.ptp(a, axis=axis, keepdims=keepdims)", aliases=(np.ptp,), **REDUCE,
       sympy=lambda a, axis, keepdims: fold(sp.Max, a, axis, keepdims) - fold(sp.Min, a, axis, keepdims))
def ptp(a, axis=None, keepdims=False): ...


# max - min: the rules of both. Tied extremes share their part evenly, as for max and
# min; where max and min are the same element (one element, or all equal) they cancel.
@ptp.defvjp
def _(g, ans, a, axis, keepdims):
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    shares = (top / runtime.count_true(top, axis, True, a)
              - bottom / runtime.count_true(bottom, axis, True, a))
    return expand_reduced(g, axis, keepdims) * shares


@ptp.defjvp
def _(t, ans, a, axis, keepdims):
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    return (np.sum(top * t, axis=axis, keepdims=keepdims)
            / runtime.count_true(top, axis, keepdims, a)
            - np.sum(bottom * t, axis=axis, keepdims=keepdims)
            / runtime.count_true(bottom, axis, keepdims, a))


# ----- NaN-skipping and weighted means -----
#
# np.nansum and np.nanmean leave out the NaN elements: the result does not depend on
# them, so their gradient is 0 there (as in JAX, whose nansum sums where(isnan, 0, a)).

def _sympy_kept(a):
    """Where the object array ``a`` holds no NaN. An expression that is NaN for some
    inputs alone (np.where(x > 1, np.nan, x)) is refused: which elements count would
    depend on the values."""
    def kept(v):
        if v is sp.nan or (isinstance(v, float) and math.isnan(v)):
            return False
        if isinstance(v, sp.Basic) and v.has(sp.nan):
            raise Unsupported("np.nansum/np.nanmean of an element NaN for some inputs only")
        return True

    return np.frompyfunc(kept, 1, 1)(a).astype(bool)


def _sympy_nanmean(a, axis, keepdims):
    a = objects(a)
    kept = _sympy_kept(a)
    return (np.sum(np.where(kept, a, 0), axis=axis, keepdims=keepdims)
            / np.sum(kept, axis=axis, keepdims=keepdims))


@defop("nansum", "np.nansum(a, axis=axis, keepdims=keepdims)", aliases=((np.nansum, _reduction_call(np.nansum, "nansum")),), **REDUCE, gradients_keep_zeros=True,
       sympy=lambda a, axis, keepdims: np.sum(np.where(_sympy_kept(objects(a)), objects(a), 0), axis=axis, keepdims=keepdims))
def nansum(a, axis=None, keepdims=False): ...


@nansum.defvjp
def _(g, ans, a, axis, keepdims):
    # g spread over a first: a Python float (the seed) in a's dtype, where np.where
    # would make it float64
    return np.where(np.isnan(a), 0.0, runtime.broadcast_like(expand_reduced(g, axis, keepdims), a))


@nansum.defjvp
def _(t, ans, a, axis, keepdims):
    return np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)


@defop("nanmean", "np.nanmean(a, axis=axis, keepdims=keepdims)", aliases=((np.nanmean, _reduction_call(np.nanmean, "nanmean")),),
       floating="always", **REDUCE, gradients_keep_zeros=True, sympy=_sympy_nanmean)
def nanmean(a, axis=None, keepdims=False): ...


@nanmean.defvjp
def _(g, ans, a, axis, keepdims):
    kept = np.logical_not(np.isnan(a))
    share = expand_reduced(g, axis, keepdims) / runtime.count_true(kept, axis, True, a)
    return np.where(kept, share, 0.0)


@nanmean.defjvp
def _(t, ans, a, axis, keepdims):
    kept = np.logical_not(np.isnan(a))
    return (np.sum(np.where(kept, t, 0.0), axis=axis, keepdims=keepdims)
            / runtime.count_true(kept, axis, keepdims, a))


def _sympy_average(a, axis, weights, keepdims):
    a = objects(a)
    if weights is None:
        return np.mean(a, axis=axis, keepdims=keepdims)
    weights = runtime.spread_weights(objects(weights), a, axis)
    return (np.sum(a * weights, axis=axis, keepdims=keepdims)
            / np.sum(np.broadcast_to(weights, a.shape), axis=axis, keepdims=keepdims))


@defop("average", "np.average(a, axis=axis, weights=weights, keepdims=keepdims)",
       aliases=(np.average,), floating="always", diff=("a", "weights"), shape=reduced,
       sympy=_sympy_average)
def average(a, axis=None, weights=None, keepdims=False): ...


def _unweighted_is_mean(named, builder):
    if is_none(named["weights"]):
        return builder.emit(mean, (named["a"], named["axis"], named["keepdims"]))
    return None


average.simplify = _unweighted_is_mean


# sum(w * a) / sum(w): a's part is w / sum(w); the weights' is (a - average) / sum(w),
# summed back to their shape when they are 1-D along axis.
@average.defvjp
def _(g, ans, a, axis, weights, keepdims):
    spread = np.broadcast_to(runtime.spread_weights(weights, a, axis), np.shape(a))
    share = expand_reduced(g, axis, keepdims) / np.sum(spread, axis=axis, keepdims=True)
    centred = a - expand_reduced(ans, axis, keepdims)
    return share * spread, runtime.unspread_weights(share * centred, weights, axis)


@average.defjvp("a")
def _(t, ans, a, axis, weights, keepdims):
    spread = np.broadcast_to(runtime.spread_weights(weights, a, axis), np.shape(a))
    return (np.sum(spread * t, axis=axis, keepdims=keepdims)
            / np.sum(spread, axis=axis, keepdims=keepdims))


@average.defjvp("weights")
def _(t, ans, a, axis, weights, keepdims):
    spread = np.broadcast_to(runtime.spread_weights(weights, a, axis), np.shape(a))
    centred = a - expand_reduced(ans, axis, keepdims)
    return (np.sum(runtime.spread_weights(t, a, axis) * centred, axis=axis, keepdims=keepdims)
            / np.sum(spread, axis=axis, keepdims=keepdims))


@defop("spread_weights", "spread_weights(weights, a, axis)", aliases=(runtime.spread_weights,),
       diff=("weights",), fresh=False, zeros="first", jvp="linear", shape_params=("a",),
       no_sympy="a helper of derivatives: user code never calls it")
def spread_weights(weights, a, axis): ...


@spread_weights.defvjp
def _(gg, ans, weights, a, axis):
    return runtime.unspread_weights(runtime.unbroadcast(gg, ans), weights, axis)


@defop("unspread_weights", "unspread_weights(g, weights, axis)", aliases=(runtime.unspread_weights,),
       diff=("g",), fresh=False, zeros="first", jvp="linear", shape=shape_like("weights"),
       shape_params=("weights",), no_sympy="a helper of derivatives: user code never calls it")
def unspread_weights(g, weights, axis): ...


@unspread_weights.defvjp
def _(gg, ans, g, weights, axis):
    return np.broadcast_to(runtime.spread_weights(gg, g, axis), np.shape(g))


# ----- order statistics -----
#
# np.median and np.quantile/np.percentile (method "linear") interpolate between two
# elements of the sorted array: the gradient goes to those two elements with the
# interpolation's weights (quantile_spread), the tangent is taken from them
# (quantile_select). Which elements they are depends on a but is constant near almost
# every a. Tied elements keep their order in the sort, as in JAX (whose quantile sorts
# with a stable sort and differentiates through it). In q, the result is linear
# between two sorted positions: its slope is the difference of the two elements times
# n - 1, the right-hand slope where q falls on a position exactly (0 at q = 1).

_NO_SYMPY_ORDER = "SymPy cannot order symbols: which elements are picked depends on the values"


@defop("median", "np.median(a, axis=axis, keepdims=keepdims)", aliases=(np.median,),
       floating="always", **REDUCE, no_sympy=_NO_SYMPY_ORDER)
def median(a, axis=None, keepdims=False): ...


@median.defvjp
def _(g, ans, a, axis, keepdims):
    return runtime.quantile_spread(g, a, 0.5, axis, keepdims, False)


@median.defjvp
def _(t, ans, a, axis, keepdims):
    return runtime.quantile_select(t, a, 0.5, axis, keepdims, False)


def _per_quantile(x, q):
    """``x``, of np.quantile's result shape (q's axes first), summed to q's shape."""
    return np.sum(np.reshape(x, np.shape(q) + (-1,)), axis=-1)


def _spread_over_result(t, q, like):
    """``t``, of q's shape, shaped to broadcast against ``like`` (q's axes first)."""
    return np.reshape(t, np.shape(q) + (1,) * (np.ndim(like) - np.ndim(q)))


@defop("quantile", "np.quantile(a, q, axis=axis, keepdims=keepdims)", aliases=(np.quantile,),
       floating="always", diff=("a", "q"), no_sympy=_NO_SYMPY_ORDER)
def quantile(a, q, axis=None, keepdims=False): ...


@quantile.defvjp
def _(g, ans, a, q, axis, keepdims):
    slope = runtime.quantile_select(a, a, q, axis, keepdims, True)
    return runtime.quantile_spread(g, a, q, axis, keepdims, False), _per_quantile(g * slope, q)


@quantile.defjvp("a")
def _(t, ans, a, q, axis, keepdims):
    return runtime.quantile_select(t, a, q, axis, keepdims, False)


@quantile.defjvp("q")
def _(t, ans, a, q, axis, keepdims):
    slope = runtime.quantile_select(a, a, q, axis, keepdims, True)
    return slope * _spread_over_result(t, q, slope)


def _as_quantile(name: str):
    """np.percentile (np.nanpercentile) as NumPy computes it: np.quantile (np.nanquantile)
    at q / 100, whose rules it then has."""
    def form(named, builder):
        q = builder.emit(OPS["divide"], (builder.emit(OPS["asarray"], (named["q"],)),
                                         Const(100.0)))
        return builder.emit(OPS[name], (named["a"], q, named["axis"], named["keepdims"]))

    return form


_AT_Q_PERCENT = "built as np.{} at q / 100"


@defop("percentile", "np.percentile(a, q, axis=axis, keepdims=keepdims)",
       aliases=(np.percentile,), diff=("a", "q"), simplify=_as_quantile("quantile"),
       no_gradient=_AT_Q_PERCENT.format("quantile"), no_sympy=_AT_Q_PERCENT.format("quantile"))
def percentile(a, q, axis=None, keepdims=False): ...


# The helpers: linear in t (g), piecewise linear in q (its weights are); the positions
# they pick depend on a but are constant near almost every a, so a has no derivative.
_HELPER = "a helper of derivatives: user code never calls it"


@defop("quantile_select", "quantile_select(t, a, q, axis, keepdims, slope)",
       aliases=(runtime.quantile_select,), diff=("t", "q"), no_sympy=_HELPER)
def quantile_select(t, a, q, axis=None, keepdims=False, slope=False): ...


@defop("quantile_spread", "quantile_spread(g, a, q, axis, keepdims, slope)",
       aliases=(runtime.quantile_spread,), diff=("g", "q"), shape=shape_like("a"), no_sympy=_HELPER)
def quantile_spread(g, a, q, axis=None, keepdims=False, slope=False): ...


@quantile_select.defjvp("t")
def _(dt, ans, t, a, q, axis, keepdims, slope):
    return runtime.quantile_select(dt, a, q, axis, keepdims, slope)


@quantile_select.defjvp("q")
def _(dq, ans, t, a, q, axis, keepdims, slope):
    if slope:  # the slopes are constant between positions
        return np.zeros_like(ans)
    rate = runtime.quantile_select(t, a, q, axis, keepdims, True)
    return rate * _spread_over_result(dq, q, rate)


@quantile_select.defvjp
def _(gg, ans, t, a, q, axis, keepdims, slope):
    spread = runtime.quantile_spread(gg, a, q, axis, keepdims, slope)
    if slope:
        return runtime.unbroadcast(spread, t), np.zeros_like(q)
    rate = runtime.quantile_select(t, a, q, axis, keepdims, True)
    return runtime.unbroadcast(spread, t), _per_quantile(gg * rate, q)


@quantile_spread.defjvp("g")
def _(dg, ans, g, a, q, axis, keepdims, slope):
    return runtime.quantile_spread(dg, a, q, axis, keepdims, slope)


@quantile_spread.defjvp("q")
def _(dq, ans, g, a, q, axis, keepdims, slope):
    if slope:
        return np.zeros_like(ans)
    shaped = np.broadcast_to(g, np.shape(runtime.quantile_select(a, a, q, axis, keepdims, True)))
    return runtime.quantile_spread(shaped * _spread_over_result(dq, q, shaped), a, q, axis, keepdims, True)


# <gg, spread(g)> is <select(gg), g>: g's part is select(gg); q's, from the slopes.
@quantile_spread.defvjp
def _(gg, ans, g, a, q, axis, keepdims, slope):
    selected = runtime.quantile_select(gg, a, q, axis, keepdims, slope)
    if slope:
        return runtime.unbroadcast(selected, g), np.zeros_like(q)
    rate = runtime.quantile_select(gg, a, q, axis, keepdims, True)
    return runtime.unbroadcast(selected, g), _per_quantile(g * rate, q)


# Weights of a's shape are applied as they are: for one signature, nothing to do.
@spread_weights.defspecialize
def _(rewrite, weights, a, axis):
    shape = rewrite.array_shape(weights)
    return weights if shape is not None and shape == rewrite.array_shape(a) else None


@unspread_weights.defspecialize
def _(rewrite, g, weights, axis):
    shape = rewrite.array_shape(weights)
    return g if shape is not None and shape == rewrite.array_shape(g) else None


# ----- positions of extremes (no gradient) -----

# np.argmax and np.argmin give integers, constant near almost every a: a program that
# reads a[np.argmax(a)] differentiates through the read, never through the position.
POSITION = "the position of an extreme: integers, constant near almost every a"
_NO_SYMPY_POSITION = "SymPy cannot order symbols: the position depends on the values"


@defop("argmax", "np.argmax(a, axis=axis, keepdims=keepdims)", aliases=(np.argmax,),
       methods=("argmax",), nondiff_output=True, floating=None, shape=reduced,
       no_gradient=POSITION, no_sympy=_NO_SYMPY_POSITION)
def argmax(a, axis=None, keepdims=False): ...


@defop("argmin", "np.argmin(a, axis=axis, keepdims=keepdims)", aliases=(np.argmin,),
       methods=("argmin",), nondiff_output=True, floating=None, shape=reduced,
       no_gradient=POSITION, no_sympy=_NO_SYMPY_POSITION)
def argmin(a, axis=None, keepdims=False): ...


# ----- more NaN-skipping reductions -----
#
# Each leaves out the NaN elements, as np.nansum and np.nanmean do: the result does not
# depend on them, so their gradient is 0 there (as in JAX's nan reductions). A slice
# holding NaNs alone gives NaN (NumPy warns) and passes no gradient to them.
#
# np.nanprod, np.nancumsum and np.nancumprod are NumPy's prod, cumsum and cumprod of the
# array with NaN replaced by 1 or 0, and are built so, taking those ops' rules.


def _nan_replaced(builder, a, value: int):
    """``np.where(np.isnan(a), value, a)``: an int keeps an integer array's dtype."""
    return builder.emit(OPS["where"], (builder.emit(OPS["isnan"], (a,)), Const(value), a))


def _nanprod_form(named, builder):
    return builder.emit(prod, (_nan_replaced(builder, named["a"], 1), named["axis"],
                               named["keepdims"]))


def _nancumulative_form(name: str, value: int):
    def form(named, builder):
        return builder.emit(OPS[name], (_nan_replaced(builder, named["a"], value), named["axis"]))

    return form


_BUILT_AS = "built as np.{} of the array with NaN replaced by {}"


@defop("nanprod", "np.nanprod(a, axis=axis, keepdims=keepdims)", aliases=((np.nanprod, _reduction_call(np.nanprod, "nanprod")),),
       diff=("a",), shape=reduced, simplify=_nanprod_form,
       no_gradient=_BUILT_AS.format("prod", 1), no_sympy=_BUILT_AS.format("prod", 1))
def nanprod(a, axis=None, keepdims=False): ...


@defop("nancumsum", "np.nancumsum(a, axis=axis)", aliases=(np.nancumsum,), diff=("a",),
       simplify=_nancumulative_form("cumsum", 0),
       no_gradient=_BUILT_AS.format("cumsum", 0), no_sympy=_BUILT_AS.format("cumsum", 0))
def nancumsum(a, axis=None): ...


@defop("nancumprod", "np.nancumprod(a, axis=axis)", aliases=(np.nancumprod,), diff=("a",),
       simplify=_nancumulative_form("cumprod", 1),
       no_gradient=_BUILT_AS.format("cumprod", 1), no_sympy=_BUILT_AS.format("cumprod", 1))
def nancumprod(a, axis=None): ...


def _sympy_nan_extremum(fn, bound):
    def form(a, axis, keepdims):
        a = objects(a)
        return fold(getattr(sp, fn), np.where(_sympy_kept(a), a, bound()), axis, keepdims)

    return form


@defop("nanmax", "np.nanmax(a, axis=axis, keepdims=keepdims)", aliases=((np.nanmax, _reduction_call(np.nanmax, "nanmax")),), **REDUCE, gradients_keep_zeros=True,
       sympy=_sympy_nan_extremum("Max", lambda: -sp.oo))
def nanmax(a, axis=None, keepdims=False): ...


@defop("nanmin", "np.nanmin(a, axis=axis, keepdims=keepdims)", aliases=((np.nanmin, _reduction_call(np.nanmin, "nanmin")),), **REDUCE, gradients_keep_zeros=True,
       sympy=_sympy_nan_extremum("Min", lambda: sp.oo))
def nanmin(a, axis=None, keepdims=False): ...


# As max and min: tied winners share the gradient evenly (JAX's convention); a NaN
# never equals the result, and a slice of NaNs alone has no winner (the count is
# kept at least 1 so that it passes 0, not 0 / 0).
@nanmax.defvjp
def _nan_extremum_vjp(g, ans, a, axis, keepdims):
    winners = a == expand_reduced(ans, axis, keepdims)
    count = np.maximum(runtime.count_true(winners, axis, True, a), 1)
    return winners * (expand_reduced(g, axis, keepdims) / count)


@nanmax.defjvp
def _nan_extremum_jvp(t, ans, a, axis, keepdims):
    winners = a == expand_reduced(ans, axis, keepdims)
    return (np.sum(winners * t, axis=axis, keepdims=keepdims)
            / np.maximum(runtime.count_true(winners, axis, keepdims, a), 1))


nanmin.defvjp(_nan_extremum_vjp)
nanmin.defjvp(_nan_extremum_jvp)


def _sympy_nanvariance(a, axis, ddof, keepdims):
    a = objects(a)
    kept = _sympy_kept(a)
    mean = (np.sum(np.where(kept, a, 0), axis=axis, keepdims=True)
            / np.sum(kept, axis=axis, keepdims=True))
    centred = np.where(kept, a - mean, 0)
    return (np.sum(centred * centred, axis=axis, keepdims=keepdims)
            / (np.sum(kept, axis=axis, keepdims=keepdims) - ddof))


@defop("nanvar", "np.nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=((np.nanvar, _reduction_call(np.nanvar, "nanvar")),),
       floating="always", **REDUCE, gradients_keep_zeros=True, sympy=_sympy_nanvariance, real_rules=True)
def nanvar(a, axis=None, ddof=0, keepdims=False): ...


def _nan_centred(a, axis):
    """``a`` minus the mean of its elements that are not NaN, and 0 at the NaNs."""
    return np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))


def _kept_count(a, axis, keepdims):
    return np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims)


# var's rules over the elements kept: n is their count along each slice (a slice of NaNs
# alone divides its zeros by 1).
@nanvar.defvjp
def _(g, ans, a, axis, ddof, keepdims):
    n = _kept_count(a, axis, True)
    return (expand_reduced(g, axis, keepdims) * 2.0 * _nan_centred(a, axis)
            / np.where(n == 0, 1, n - ddof))


@nanvar.defjvp
def _(t, ans, a, axis, ddof, keepdims):
    n = _kept_count(a, axis, keepdims)
    centred = _nan_centred(a, axis)
    return 2.0 * np.sum(centred * t, axis=axis, keepdims=keepdims) / np.where(n == 0, 1, n - ddof)


@defop("nanstd", "np.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)", aliases=((np.nanstd, _reduction_call(np.nanstd, "nanstd")),),
       floating="always", **REDUCE, gradients_keep_zeros=True, real_rules=True,
       sympy=lambda a, axis, ddof, keepdims: _SYMPY_SQRT(_sympy_nanvariance(a, axis, ddof, keepdims)))
def nanstd(a, axis=None, ddof=0, keepdims=False): ...


# std's rules (and autograd's convention where a slice keeps one element or none: the
# derivative is 0 there) over the elements kept.
@nanstd.defvjp
def _(g, ans, a, axis, ddof, keepdims):
    n = _kept_count(a, axis, True)
    spread = np.where(n == 0, 1.0, expand_reduced(ans, axis, keepdims) * (n - ddof) + (n <= 1))
    return expand_reduced(g, axis, keepdims) * _nan_centred(a, axis) / spread


@nanstd.defjvp
def _(t, ans, a, axis, ddof, keepdims):
    n = _kept_count(a, axis, keepdims)
    centred = _nan_centred(a, axis)
    return (np.sum(centred * t, axis=axis, keepdims=keepdims)
            / np.where(n == 0, 1.0, ans * (n - ddof) + (n <= 1)))


# ----- where=, initial= and mean= (see _reduction_call at the top) -----
#
# As NumPy defines them: where= reduces the elements where it holds alone (a sum or
# product leaves the others out as 0 or 1, a maximum or minimum as initial, a mean
# counts the elements it keeps, var and std centre those on their mean); initial= is
# one more element (added, multiplied, or compared with np.maximum/np.minimum, np.fmax/
# np.fmin for the NaN-skipping forms, whose ties split the gradient evenly); mean= is
# the mean var and std centre on, differentiated as an operand. Each is built from the
# reductions, np.where and arithmetic, and so has their rules. Where a slice keeps one
# element, std is 0 with the derivative 0 (as np.std's rule); over several equal
# elements it has a cone point and its gradient is nan, as for np.std.

_PAIRED = {"max": "maximum", "min": "minimum", "nanmax": "fmax", "nanmin": "fmin"}


def _kept(builder, a, mask, nan: bool):
    """Which elements of ``a`` a mean, var or std reduces, in ``a``'s shape."""
    emit = builder.emit
    kept = Const(True) if mask is None else mask
    if nan:
        kept = emit(OPS["logical_and"], (kept, emit(OPS["logical_not"], (emit(OPS["isnan"], (a,)),))))
    return emit(OPS["broadcast_to"], (kept, emit(OPS["shape"], (a,))))


def _moments(builder, named, name: str, mask):
    emit, a, axis, keepdims = builder.emit, named["a"], named["axis"], named["keepdims"]
    kept = _kept(builder, a, mask, name.startswith("nan"))
    kept_values = emit(OPS["where"], (kept, a, Const(0)))
    if name.endswith("mean"):
        return emit(OPS["divide"], (emit(sum_, (kept_values, axis, keepdims)),
                                    emit(sum_, (kept, axis, keepdims))))
    centre = named["mean"] if not _absent(named["mean"]) else emit(
        OPS["divide"], (emit(sum_, (kept_values, axis, Const(True))), emit(sum_, (kept, axis, Const(True)))))
    centred = emit(OPS["where"], (kept, emit(OPS["subtract"], (a, centre)), Const(0.0)))
    squares = emit(sum_, (emit(OPS["multiply"], (centred, centred)), axis, keepdims))
    count = emit(sum_, (kept, axis, keepdims))
    divisor = emit(OPS["maximum"], (emit(OPS["subtract"], (count, named["ddof"])), Const(0)))
    variance = emit(OPS["divide"], (squares, divisor))
    if name.endswith("var"):
        return variance
    single = emit(OPS["less_equal"], (count, Const(1)))
    safe = emit(OPS["where"], (single, Const(1.0), variance))
    return emit(OPS["where"], (single, emit(OPS["multiply"], (variance, Const(0.0))),
                               emit(OPS["sqrt"], (safe,))))


def _keywords_form(named, builder):
    emit, name = builder.emit, named["name"].value
    a, axis, keepdims, initial = named["a"], named["axis"], named["keepdims"], named["initial"]
    mask = None if _absent(named["where"]) else named["where"]
    initial = None if _absent(initial) else initial
    if name in ("mean", "var", "std", "nanmean", "nanvar", "nanstd"):
        return _moments(builder, named, name, mask)
    if name in _PAIRED:
        if mask is not None:
            a = emit(OPS["where"], (mask, a, initial))
        result = emit(OPS[name], (a, axis, keepdims))
        return emit(OPS[_PAIRED[name]], (result, initial)) if initial is not None else result
    identity, combine = (Const(0), "add") if name in ("sum", "nansum") else (Const(1), "multiply")
    if mask is not None:
        a = emit(OPS["where"], (mask, a, identity))
    result = emit(OPS[name], (a, axis, keepdims))
    return emit(OPS[combine], (result, initial)) if initial is not None else result


def _keywords_kernel(named) -> str:
    name = named["name"].value
    given = [p for p in ("axis", "keepdims", "initial", "where", "ddof", "mean")
             if not _absent(named[p])]
    return f"np.{name}(a, {', '.join(f'{p}={p}' for p in given)})"


_BUILT = "built from the reductions, np.where and arithmetic"


@defop("reduction_keywords", _keywords_kernel, diff=("a", "initial", "mean"),
       simplify=_keywords_form, no_gradient=_BUILT, no_sympy=_BUILT)
def reduction_keywords(a, axis=None, keepdims=False, initial=None, where=None, ddof=0, mean=None,
                       name="sum"): ...


# ----- order statistics skipping NaNs -----
#
# np.nanmedian, np.nanquantile and np.nanpercentile (method "linear") are median,
# quantile and percentile of each slice's elements that are not NaN: the same rules
# (and conventions: ties keep their order, the right-hand slope in q), through helpers
# counting each slice's own elements. NaN elements get no gradient.


@defop("nanmedian", "np.nanmedian(a, axis=axis, keepdims=keepdims)", aliases=(np.nanmedian,),
       floating="always", **REDUCE, gradients_keep_zeros=True, no_sympy=_NO_SYMPY_ORDER)
def nanmedian(a, axis=None, keepdims=False): ...


@nanmedian.defvjp
def _(g, ans, a, axis, keepdims):
    return runtime.nanquantile_spread(g, a, 0.5, axis, keepdims, False)


@nanmedian.defjvp
def _(t, ans, a, axis, keepdims):
    return runtime.nanquantile_select(t, a, 0.5, axis, keepdims, False)


@defop("nanquantile", "np.nanquantile(a, q, axis=axis, keepdims=keepdims)",
       aliases=(np.nanquantile,), floating="always", diff=("a", "q"), gradients_keep_zeros=True,
       no_sympy=_NO_SYMPY_ORDER)
def nanquantile(a, q, axis=None, keepdims=False): ...


@nanquantile.defvjp
def _(g, ans, a, q, axis, keepdims):
    slope = runtime.nanquantile_select(a, a, q, axis, keepdims, True)
    return runtime.nanquantile_spread(g, a, q, axis, keepdims, False), _per_quantile(g * slope, q)


@nanquantile.defjvp("a")
def _(t, ans, a, q, axis, keepdims):
    return runtime.nanquantile_select(t, a, q, axis, keepdims, False)


@nanquantile.defjvp("q")
def _(t, ans, a, q, axis, keepdims):
    slope = runtime.nanquantile_select(a, a, q, axis, keepdims, True)
    return slope * _spread_over_result(t, q, slope)


@defop("nanpercentile", "np.nanpercentile(a, q, axis=axis, keepdims=keepdims)",
       aliases=(np.nanpercentile,), diff=("a", "q"), simplify=_as_quantile("nanquantile"),
       no_gradient=_AT_Q_PERCENT.format("nanquantile"),
       no_sympy=_AT_Q_PERCENT.format("nanquantile"))
def nanpercentile(a, q, axis=None, keepdims=False): ...


# The helpers' rules are quantile_select's and quantile_spread's.
@defop("nanquantile_select", "nanquantile_select(t, a, q, axis, keepdims, slope)",
       aliases=(runtime.nanquantile_select,), diff=("t", "q"), no_sympy=_HELPER)
def nanquantile_select(t, a, q, axis=None, keepdims=False, slope=False): ...


@defop("nanquantile_spread", "nanquantile_spread(g, a, q, axis, keepdims, slope)",
       aliases=(runtime.nanquantile_spread,), diff=("g", "q"), shape=shape_like("a"), no_sympy=_HELPER)
def nanquantile_spread(g, a, q, axis=None, keepdims=False, slope=False): ...


@nanquantile_select.defjvp("t")
def _(dt, ans, t, a, q, axis, keepdims, slope):
    return runtime.nanquantile_select(dt, a, q, axis, keepdims, slope)


@nanquantile_select.defjvp("q")
def _(dq, ans, t, a, q, axis, keepdims, slope):
    if slope:
        return np.zeros_like(ans)
    rate = runtime.nanquantile_select(t, a, q, axis, keepdims, True)
    return rate * _spread_over_result(dq, q, rate)


@nanquantile_select.defvjp
def _(gg, ans, t, a, q, axis, keepdims, slope):
    spread = runtime.nanquantile_spread(gg, a, q, axis, keepdims, slope)
    if slope:
        return runtime.unbroadcast(spread, t), np.zeros_like(q)
    rate = runtime.nanquantile_select(t, a, q, axis, keepdims, True)
    return runtime.unbroadcast(spread, t), _per_quantile(gg * rate, q)


@nanquantile_spread.defjvp("g")
def _(dg, ans, g, a, q, axis, keepdims, slope):
    return runtime.nanquantile_spread(dg, a, q, axis, keepdims, slope)


@nanquantile_spread.defjvp("q")
def _(dq, ans, g, a, q, axis, keepdims, slope):
    if slope:
        return np.zeros_like(ans)
    shaped = np.broadcast_to(g, np.shape(runtime.nanquantile_select(a, a, q, axis, keepdims, True)))
    return runtime.nanquantile_spread(shaped * _spread_over_result(dq, q, shaped), a, q, axis,
                                      keepdims, True)


@nanquantile_spread.defvjp
def _(gg, ans, g, a, q, axis, keepdims, slope):
    selected = runtime.nanquantile_select(gg, a, q, axis, keepdims, slope)
    if slope:
        return runtime.unbroadcast(selected, g), np.zeros_like(q)
    rate = runtime.nanquantile_select(gg, a, q, axis, keepdims, True)
    return runtime.unbroadcast(selected, g), _per_quantile(g * rate, q)


# Batched tangents (transforms/batching.py): each example reduced over its own axes, the
# axis counted past the batch axis.
for _name in ("sum", "mean", "prod", "max", "min", "var", "std", "nansum", "nanmean",
              "nanmax", "nanmin", "nanvar", "nanstd"):
    OPS[_name].batching = "reduce"
