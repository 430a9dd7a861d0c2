"""Along one axis: flip (reversal), cumsum (running sum), diff (differences).

Each is linear, so each JVP is the op applied to the tangent, and each VJP is the
op's transpose written with the others: a reversed running sum, a difference of
the adjoint padded with zeros. numba compiles NumPy's forms of these only without
an axis; their numba forms below index with slices instead, which it compiles
for any axis.
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.ir import Const, SliceSpec
from autodiff.ops import runtime
from autodiff.ops.elementwise import subtract
from autodiff.ops.registry import defop
from autodiff.ops.shape import getitem
from autodiff.ops.shape_rules import shape_like
from autodiff.ops.sympy_forms import objects

_ALL = SliceSpec(Const(None), Const(None), Const(None))


def _axes(axis, ndim: int) -> tuple[int, ...] | None:
    """The axes an ``axis`` operand of flip names (None, an int or a tuple of ints),
    non-negative; None when it is not a constant NumPy takes."""
    if not isinstance(axis, Const):
        return None
    if axis.value is None:
        return tuple(range(ndim))
    named = axis.value if isinstance(axis.value, tuple) else (axis.value,)
    if not all(type(a) is int and -ndim <= a < ndim for a in named):
        return None  # NumPy's own call raises the error
    return tuple(a % ndim for a in named)


def _one_axis(axis, ndim: int) -> int | None:
    """The one axis an ``axis`` operand of cumsum or diff names, non-negative; None
    when it is not a constant int NumPy takes (``axis=None`` is no single axis)."""
    if isinstance(axis, Const) and type(axis.value) is int and -ndim <= axis.value < ndim:
        return axis.value % ndim
    return None


def _indexed(rewrite, a, ndim: int, parts: dict[int, SliceSpec]):
    """``a[..., part, ...]``, each part at its axis: a view numba compiles."""
    return rewrite.emit(getitem, a, tuple(parts.get(i, _ALL) for i in range(ndim)))


@defop("flip", "np.flip(m, axis=axis)", aliases=(np.flip,), diff=("m",), fresh=False,
       shape=shape_like("m"), zeros="first", recompute="always", jvp="linear",
       sympy=lambda m, axis: np.flip(objects(m), axis=axis))
def flip(m, axis=None): ...


@flip.defvjp
def _(g, ans, m, axis):
    return np.flip(g, axis=axis)


@flip.defnumba
def _(rewrite, m, axis):
    shape = rewrite.shape(m)
    axes = None if shape is None else _axes(axis, len(shape))
    if axes is None:
        return None
    if not axes:  # a number: nothing to reverse
        return m
    backwards = SliceSpec(Const(None), Const(None), Const(-1))
    return _indexed(rewrite, m, len(shape), dict.fromkeys(axes, backwards))


@defop("cumsum", "np.cumsum(a, axis=axis)", aliases=(np.cumsum,), methods=("cumsum",),
       diff=("a",), zeros="first", jvp="linear",
       sympy=lambda a, axis: np.cumsum(objects(a), axis=axis))
def cumsum(a, axis=None): ...


# Element i of the result sums a[:i + 1], so a[i] receives the sum of g[i:]: the
# running sum of the reversed adjoint, reversed. Over the flattened array (axis None)
# the adjoint is 1-D and takes a's shape back.
@cumsum.defvjp
def _(g, ans, a, axis):
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@cumsum.defnumba
def _(rewrite, a, axis):
    shape = rewrite.shape(a)  # numba's cumsum runs over the flattened array
    if shape is not None and len(shape) == 1 and _one_axis(axis, 1) == 0:
        return rewrite.emit(cumsum, a, Const(None))
    return None


@defop("diff", "np.diff(a, n=n, axis=axis)", aliases=(np.diff,), diff=("a",), zeros="first",
       jvp="linear", sympy=lambda a, n, axis: np.diff(objects(a), n=n, axis=axis))
def diff(a, n=1, axis=-1): ...


# Each difference is a[i + 1] - a[i], so one transposed is -diff of the adjoint padded
# with a zero at both ends; n transposed (the n-th difference's) is the n-th difference
# of the adjoint padded with n zeros, times (-1) ** n.
@diff.defvjp
def _(g, ans, a, n, axis):
    edge = np.zeros_like(np.sum(g, axis=axis, keepdims=True))
    padded = np.concatenate((edge,) * n + (g,) + (edge,) * n, axis=axis)
    return (-1) ** n * np.diff(padded, n=n, axis=axis)


@diff.defnumba
def _(rewrite, a, n, axis):
    shape = rewrite.shape(a)
    along = None if shape is None else _one_axis(axis, len(shape))
    if along is None or not (isinstance(n, Const) and type(n.value) is int and n.value >= 0):
        return None
    later = {along: SliceSpec(Const(1), Const(None), Const(None))}
    earlier = {along: SliceSpec(Const(None), Const(-1), Const(None))}
    for _ in range(n.value):
        a = rewrite.emit(subtract, _indexed(rewrite, a, len(shape), later),
                         _indexed(rewrite, a, len(shape), earlier))
    return a


# ----- running products -----
#
# d cumprod(a)[i] / d a[j] is the product of a[:i + 1] but a[j]. Dividing ans by a[j]
# fails where an element is 0; instead the rules run a linear recurrence along the axis
# (suffix_scan), with no division, so they are exact with zeros to every order, as JAX's
# scan-based rule is. The rules work along the last axis: the op's axis is moved there
# (or the array flattened, for axis None) and moved back.

@defop("suffix_scan", "suffix_scan(g, c)", aliases=(runtime.suffix_scan,), diff=("g", "c"),
       shape=shape_like("g"), no_sympy="a helper of derivatives: user code never calls it")
def suffix_scan(g, c): ...


def _next(s):
    """s[..., j + 1] at j, 0 past the end (along the last axis)."""
    return np.concatenate((s[..., 1:], np.zeros_like(s[..., :1])), axis=-1)


@suffix_scan.defjvp("g")
def _(t, ans, g, c):
    return runtime.suffix_scan(t, c)


@suffix_scan.defjvp("c")
def _(t, ans, g, c):
    return runtime.suffix_scan(t * _next(ans), c)


# s is linear in g, s = L g with L[j, i] the product of c[j:i]; its transpose is the
# same recurrence run forwards (a suffix scan of the flipped arrays, c moved by one).
# s[j] reads c[j] as c[j] * s[j + 1], so c's adjoint is that total adjoint times s[j + 1].
@suffix_scan.defvjp
def _(gg, ans, g, c):
    total = np.flip(runtime.suffix_scan(np.flip(gg, -1), _next(np.flip(c, -1))), -1)
    return total, total * _next(ans)


def _along_last(a, axis):
    return np.reshape(a, (-1,)) if axis is None else np.moveaxis(a, axis, -1)


def _products_before(a):
    """The product of a[..., :j] at j (1 at j = 0), along the last axis."""
    return np.concatenate((np.ones_like(a[..., :1]), np.cumprod(a[..., :-1], axis=-1)), axis=-1)


@defop("cumprod", "np.cumprod(a, axis=axis)", aliases=(np.cumprod,), methods=("cumprod",),
       diff=("a",), sympy=lambda a, axis: np.cumprod(objects(a), axis=axis))
def cumprod(a, axis=None): ...


# a[j]'s adjoint is products_before[j] * s[j], where s[j] sums g[i] times the product of
# a[j + 1:i + 1] over i >= j: s[j] = g[j] + a[j + 1] * s[j + 1].
@cumprod.defvjp
def _(g, ans, a, axis):
    flat = _along_last(a, axis)
    grad = _products_before(flat) * runtime.suffix_scan(_along_last(g, axis), _next(flat))
    if axis is None:
        return np.reshape(grad, np.shape(a))
    return np.moveaxis(grad, -1, axis)


# The tangent d[i] sums t[j] * products_before[j] * the product of a[j + 1:i + 1] over
# j <= i: d[i] = t[i] * products_before[i] + a[i] * d[i - 1], a suffix scan of the flipped.
@cumprod.defjvp
def _(t, ans, a, axis):
    flat = _along_last(a, axis)
    spread = np.flip(_along_last(np.broadcast_to(t, np.shape(a)), axis) * _products_before(flat), -1)
    tangent = np.flip(runtime.suffix_scan(spread, np.flip(flat, -1)), -1)
    return tangent if axis is None else np.moveaxis(tangent, -1, axis)


# ----- sorting -----
#
# np.sort and np.partition move a's elements: their gradients move the adjoint's back
# (unsorted_like) and their tangents move the tangent's the same way (sorted_like).
# The permutation depends on a but is constant near almost every a, so the helpers
# have no derivative in it. Where elements tie the derivative is undefined: tied
# elements keep their order, as JAX's sort does (its stable sort permutes the tangent
# with the values); for np.partition, each tied element takes the place
# np.argpartition gives it.

_NO_SYMPY_ORDER = "SymPy cannot order symbols: the permutation depends on the values"


@defop("sorted_like", "sorted_like(t, a, axis, kth)", aliases=(runtime.sorted_like,),
       diff=("t",), zeros="first", jvp="linear", no_sympy=_NO_SYMPY_ORDER)
def sorted_like(t, a, axis=-1, kth=None): ...


@defop("unsorted_like", "unsorted_like(g, a, axis, kth)", aliases=(runtime.unsorted_like,),
       diff=("g",), zeros="first", jvp="linear", shape=shape_like("a"), no_sympy=_NO_SYMPY_ORDER)
def unsorted_like(g, a, axis=-1, kth=None): ...


@sorted_like.defvjp
def _(gg, ans, t, a, axis, kth):
    return runtime.unbroadcast(runtime.unsorted_like(gg, a, axis, kth), t)


@unsorted_like.defvjp
def _(gg, ans, g, a, axis, kth):
    return runtime.unbroadcast(runtime.sorted_like(gg, a, axis, kth), g)


@defop("sort", "np.sort(a, axis=axis)", aliases=(np.sort,), diff=("a",), no_sympy=_NO_SYMPY_ORDER)
def sort(a, axis=-1): ...


@sort.defvjp
def _(g, ans, a, axis):
    return runtime.unsorted_like(g, a, axis, None)


@sort.defjvp
def _(t, ans, a, axis):
    return runtime.sorted_like(t, a, axis, None)


@defop("partition", "np.partition(a, kth, axis=axis)", aliases=(np.partition,), diff=("a",),
       no_sympy=_NO_SYMPY_ORDER)
def partition(a, kth, axis=-1): ...


@partition.defvjp
def _(g, ans, a, kth, axis):
    return runtime.unsorted_like(g, a, axis, kth)


@partition.defjvp
def _(t, ans, a, kth, axis):
    return runtime.sorted_like(t, a, axis, kth)


# np.argsort gives the permutation np.sort applies: integers, constant near almost
# every a, so a program indexing with it differentiates through the indexing alone.
@defop("argsort", "np.argsort(a, axis=axis)", aliases=(np.argsort,), methods=("argsort",),
       nondiff_output=True, floating=None,
       no_gradient="a permutation: integers, constant near almost every a",
       no_sympy=_NO_SYMPY_ORDER)
def argsort(a, axis=-1): ...


# ----- NumPy 2's running sums and products (np.cumulative_sum, np.cumulative_prod) -----
#
# np.cumsum and np.cumprod along one axis (axis None only for a vector: NumPy refuses
# another), with include_initial=True starting from the sum's 0 or the product's 1,
# which depend on no element: the rules drop the adjoint's first slice, then are
# np.cumsum's and np.cumprod's. Registered when NumPy has them (2.1 and later).


def _cumulative_call(name: str):
    def call(x, *, axis=None, dtype=None, out=None, include_initial=False):
        for setting, value in (("dtype", dtype), ("out", out)):
            if value is not None and not (isinstance(value, Const) and value.value is None):
                raise TypeError(f"np.{name} is differentiated without {setting}=")
        return {"x": x, "axis": axis, "include_initial": include_initial}

    return call


def _after_initial(g, along, include_initial):
    """The adjoint of the elements after the initial one (all of them without it)."""
    if include_initial:
        return np.moveaxis(np.moveaxis(g, along, 0)[1:], 0, along)
    return g


if hasattr(np, "cumulative_sum"):
    @defop("cumulative_sum", "np.cumulative_sum(x, axis=axis, include_initial=include_initial)",
           aliases=((np.cumulative_sum, _cumulative_call("cumulative_sum")),), diff=("x",),
           zeros="first", jvp="linear",
           sympy=lambda x, axis, include_initial: np.cumulative_sum(
               objects(x), axis=axis, include_initial=include_initial))
    def cumulative_sum(x, axis=None, include_initial=False): ...

    @cumulative_sum.defvjp
    def _(g, ans, x, axis, include_initial):
        along = 0 if axis is None else axis
        kept = _after_initial(g, along, include_initial)
        return np.flip(np.cumsum(np.flip(kept, along), along), along)


if hasattr(np, "cumulative_prod"):
    @defop("cumulative_prod", "np.cumulative_prod(x, axis=axis, include_initial=include_initial)",
           aliases=((np.cumulative_prod, _cumulative_call("cumulative_prod")),), diff=("x",),
           sympy=lambda x, axis, include_initial: np.cumulative_prod(
               objects(x), axis=axis, include_initial=include_initial))
    def cumulative_prod(x, axis=None, include_initial=False): ...

    @cumulative_prod.defvjp
    def _(g, ans, x, axis, include_initial):
        along = 0 if axis is None else axis
        flat = np.moveaxis(x, along, -1)
        kept = np.moveaxis(_after_initial(g, along, include_initial), along, -1)
        grad = _products_before(flat) * runtime.suffix_scan(kept, _next(flat))
        return np.moveaxis(grad, -1, along)

    @cumulative_prod.defjvp
    def _(t, ans, x, axis, include_initial):
        along = 0 if axis is None else axis
        flat = np.moveaxis(x, along, -1)
        spread = np.flip(np.moveaxis(np.broadcast_to(t, np.shape(x)), along, -1)
                         * _products_before(flat), -1)
        tangent = np.flip(runtime.suffix_scan(spread, np.flip(flat, -1)), -1)
        if include_initial:
            tangent = np.concatenate((np.zeros_like(tangent[..., :1]), tangent), axis=-1)
        return np.moveaxis(tangent, -1, along)
