"""Numerical staples: convolution and correlation, sliding windows, the trapezoidal
rule, finite differences (``np.gradient``), polynomials and linear interpolation.

Each is linear in its data (convolution and correlation bilinear in their two
operands), so most rules are the transposes of the ops, written with the ops
themselves (a correlation's adjoint is a convolution) or with a helper whose own
VJP is the op. Rules are written with ops autodiff knows, so that they are
differentiated again for second order. The operands are real: ``np.correlate``
conjugates its second operand, which these rules do not.

numba compiles neither the modes of ``np.convolve`` nor ``np.pad``, nor the helpers
here: ``jit="numba"`` refuses derivatives that call them, naming the user's line.
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.ir import Const
from autodiff.graph.patterns import is_none
from autodiff.ops.registry import OPS, RunAsItIs, defop, helper_op
from autodiff.ops.runtime import take_grad, unbroadcast
from autodiff.ops.shape_rules import list_result, shape_like
from autodiff.ops.sympy_forms import objects, sp

# ----- convolution and correlation -----
#
# Each mode's result is a slice of the 'full' one, whose adjoint is the adjoint of the
# full result with zeros around the slice (np.pad of the adjoint by convolution_pads).
# The full convolution of a and v has a[i] meet v[k - i] in element k: a receives the
# correlation of the padded adjoint with v ('valid': one element per shift of v along
# it), v that with a. np.correlate(a, v) is the convolution of a with v reversed, so
# its adjoints are a convolution for a and a reversed correlation for v. The padded
# adjoint is at least as long as either operand, so NumPy never swaps them in these
# 'valid' products, and the products' own rules are these rules again.

_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full"}


def convolution_pads(a, v, mode, kind):
    """Zeros before and after, along each axis, that make an adjoint of ``kind``'s
    result in ``mode`` ("np.convolve", "np.correlate", or "scipy" for scipy.signal's
    convolve and correlate) the adjoint of its 'full' result.

    >>> convolution_pads(np.ones(5), np.ones(2), "same", "np.convolve")
    ((0, 1),)
    """
    mode = _MODES[mode]  # NumPy's mode numbers too
    pads = []
    for n, m in zip(np.shape(a), np.shape(v)):
        full = n + m - 1
        if mode == "full":
            start, length = 0, full
        elif mode == "valid":
            start, length = min(n, m) - 1, abs(n - m) + 1
        elif kind == "scipy":  # 'same': a's length, centred on the full result
            start, length = (m - 1) // 2, n
        else:  # NumPy's 'same': the longer length; np.correlate centres the other way
            shorter = min(n, m)  # when v is the longer operand
            start = shorter // 2 if kind == "np.correlate" and n < m else (shorter - 1) // 2
            length = max(n, m)
        pads.append((start, full - start - length))
    return tuple(pads)


helper_op(convolution_pads, nondiff_output=True, floating=None, shape_params=("a", "v"),
          query=True, recompute="always", no_gradient="lengths, read from the shapes")


@defop("convolve", "np.convolve(a, v, mode=mode)", aliases=(np.convolve,), diff=("a", "v"),
       jvp="linear", sympy=lambda a, v, mode: np.convolve(objects(a), objects(v), mode=mode))
def convolve(a, v, mode="full"): ...


# The adjoint, padded to the 'full' result, correlated with the other operand: written as
# a convolution with it reversed, which np.correlate conjugates for complex values.
@convolve.defvjp
def _(g, ans, a, v, mode):
    full = np.pad(g, convolution_pads(a, v, mode, "np.convolve"))
    return (np.convolve(full, np.flip(v), mode="valid"),
            np.convolve(full, np.flip(a), mode="valid"))


@defop("correlate", "np.correlate(a, v, mode=mode)", aliases=(np.correlate,), diff=("a", "v"),
       jvp="linear", sympy=lambda a, v, mode: np.correlate(objects(a), objects(v), mode=mode),
       real_rules=True)
def correlate(a, v, mode="valid"): ...


@correlate.defvjp
def _(g, ans, a, v, mode):
    full = np.pad(g, convolution_pads(a, v, mode, "np.correlate"))
    return np.convolve(full, v, mode="valid"), np.flip(np.correlate(full, a, mode="valid"))


# Of complex values np.correlate(a, v) correlates a with conj(v): holomorphic in a, and in
# v the conjugate of the rule in conj(v).
@correlate.defvjp_complex
def _(g, ans, a, v, mode):
    full = np.pad(g, convolution_pads(a, v, mode, "np.correlate"))
    return (np.convolve(full, np.conj(v), mode="valid"),
            np.conj(np.flip(np.correlate(full, np.conj(a), mode="valid"))))


# ----- sliding windows -----
#
# np.lib.stride_tricks.sliding_window_view(x, window_shape, axis) is a read-only view of
# every window of x (x's axes, each windowed one shortened by its window less one, then
# the window's axes): an element of x appears once per window holding it, so it receives
# the sum of their adjoints, added back window offset by window offset.


def sliding_window_sum(g, x, window_shape, axis):
    """The adjoint of ``x`` in ``sliding_window_view(x, window_shape, axis)`` given the
    adjoint ``g`` of the windows.

    >>> sliding_window_sum(np.ones((3, 2)), np.zeros(4), 2, None)
    array([1., 2., 2., 1.])
    """
    g = np.asarray(g)
    shape = np.shape(x)
    windows = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if axis is None:
        axes = tuple(range(len(shape)))
    else:
        axes = tuple(axis) if np.iterable(axis) else (axis,)
    axes = tuple(a % len(shape) for a in axes)
    lengths = list(shape)  # of each axis of the windows' positions
    for a, size in zip(axes, windows):
        lengths[a] -= size - 1
    out = np.zeros(shape, dtype=g.dtype)
    for offsets in np.ndindex(*windows):
        starts = [0] * len(shape)
        for a, offset in zip(axes, offsets):  # an axis windowed twice adds its offsets
            starts[a] += offset
        out[tuple(slice(s, s + n) for s, n in zip(starts, lengths))] += g[(..., *offsets)]
    return out


@defop("sliding_window_view",
       "np.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)",
       aliases=(np.lib.stride_tricks.sliding_window_view,), diff=("x",), fresh=False,
       zeros="first", jvp="linear",
       sympy=lambda x, window_shape, axis: np.lib.stride_tricks.sliding_window_view(
           objects(x), window_shape, axis=axis))
def sliding_window_view(x, window_shape, axis=None): ...


@sliding_window_view.defvjp
def _(g, ans, x, window_shape, axis):
    return sliding_window_sum(g, x, window_shape, axis)


helper_op(sliding_window_sum, diff=("g",), fresh=True, zeros="first", jvp="linear",
          shape=shape_like("x"))


@OPS["sliding_window_sum"].defvjp
def _(gg, ans, g, x, window_shape, axis):
    return np.lib.stride_tricks.sliding_window_view(gg, window_shape, axis=axis)


# ----- the trapezoidal rule -----
#
# np.trapezoid(y, x, axis) sums steps * (y[1:] + y[:-1]) / 2 along axis, with steps the
# differences of x (or dx): bilinear in y and the steps. An element of y receives the
# adjoint times the mean of the steps on either side of it, an element of x the
# difference of the means of y on the segments it ends and starts. The rules move the
# axis last, where x's steps (a vector of x along it, or x of y's shape: trapezoid_grid)
# broadcast as NumPy broadcasts them; the adjoint g has the result's shape, which every
# operand broadcasts to.

_TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz  # np.trapz before NumPy 2
_TRAPEZOIDS = tuple(getattr(np, name) for name in ("trapezoid", "trapz") if name in dir(np))


def _trapezoid_call(y, x=None, dx=1.0, axis=-1):
    """np.trapezoid as an op: ``trapezoid`` with sample points ``x``, ``trapezoid_uniform``
    without (``dx`` is then the step; with ``x`` NumPy ignores it)."""
    if x is None or is_none(x):
        return trapezoid_uniform, {"y": y, "dx": dx, "axis": axis}
    return trapezoid, {"y": y, "x": x, "axis": axis}


def trapezoid_grid(x, y, axis):
    """The shape np.trapezoid reads sample points ``x`` in against ``y``: a vector along
    ``axis``, or x's own shape when it has as many axes as y.

    >>> trapezoid_grid(np.ones(3), np.ones((2, 3, 4)), 1)
    (1, 3, 1)
    """
    ndim, shape = np.ndim(y), np.shape(x)
    if len(shape) == ndim:
        return shape
    if len(shape) != 1:
        raise ValueError(f"np.trapezoid's x has {len(shape)} axes: differentiated, it takes "
                         f"one axis or as many as y ({ndim})")
    grid = [1] * ndim
    grid[axis] = shape[0]
    return tuple(grid)


helper_op(trapezoid_grid, nondiff_output=True, floating=None, shape_params=("x", "y"),
          query=True, recompute="always", no_gradient="a shape, read from the shapes")


def _sympy_trapezoid(y, x=None, dx=1.0, axis=-1):
    y = np.moveaxis(objects(y), axis, -1)
    if x is None:
        steps = dx
    else:
        steps = np.moveaxis(np.diff(np.reshape(objects(x), trapezoid_grid(x, y, axis)),
                                    axis=axis), axis, -1)
    return np.sum(steps * (y[..., 1:] + y[..., :-1]) / 2, axis=-1)


@defop("trapezoid", f"np.{_TRAPEZOID.__name__}(y, x, axis=axis)",
       aliases=tuple((fn, _trapezoid_call) for fn in _TRAPEZOIDS), diff=("y", "x"),
       jvp="linear", floating="always",
       sympy=lambda y, x, axis: _sympy_trapezoid(y, x=x, axis=axis))
def trapezoid(y, x, axis=-1): ...


@trapezoid.defvjp
def _(g, ans, y, x, axis):
    grid = np.reshape(x, trapezoid_grid(x, y, axis))
    steps = np.moveaxis(np.diff(grid, axis=axis), axis, -1)
    values = np.moveaxis(y, axis, -1)
    adjoint = np.expand_dims(g, -1)
    edge = np.zeros_like(adjoint * values[..., :1])
    spread = adjoint * steps
    sums = adjoint * (values[..., 1:] + values[..., :-1])
    dy = np.concatenate((spread, edge), -1) + np.concatenate((edge, spread), -1)
    dgrid = np.concatenate((edge, sums), -1) - np.concatenate((sums, edge), -1)
    return (unbroadcast(np.moveaxis(dy, -1, axis) / 2, y),
            np.reshape(unbroadcast(np.moveaxis(dgrid, -1, axis) / 2, grid), np.shape(x)))


@defop("trapezoid_uniform", f"np.{_TRAPEZOID.__name__}(y, dx=dx, axis=axis)",
       diff=("y", "dx"), jvp="linear", floating="always",
       sympy=lambda y, dx, axis: _sympy_trapezoid(y, dx=dx, axis=axis))
def trapezoid_uniform(y, dx=1.0, axis=-1): ...


# dx is a scalar (or broadcasts against y with the axis in place, as NumPy multiplies).
@trapezoid_uniform.defvjp
def _(g, ans, y, dx, axis):
    values = np.moveaxis(y, axis, -1)
    adjoint = np.expand_dims(g, -1)
    edge = np.zeros_like(adjoint * values[..., :1])
    spread = adjoint * np.moveaxis(dx * np.moveaxis(np.ones_like(values[..., 1:]), -1, axis),
                                   axis, -1)
    sums = adjoint * (values[..., 1:] + values[..., :-1])
    dy = np.concatenate((spread, edge), -1) + np.concatenate((edge, spread), -1)
    return (unbroadcast(np.moveaxis(dy, -1, axis) / 2, y),
            unbroadcast(np.moveaxis(sums, -1, axis) / 2, dx))


# ----- finite differences: np.gradient -----
#
# np.gradient(f, *spacing, axis, edge_order) is linear in f: along each axis, central
# differences inside and one-sided ones of first or second order at the two ends, one
# array per axis. The adjoint of f applies each axis's stencil transposed
# (gradient_transpose) to that axis's adjoint and sums them. The transposes take
# uniform steps, one number per axis; sample coordinates are refused there (NumPy's
# stencils for them weigh each neighbour by its own distance). No gradient flows into
# the steps.
#
# Code must know while compiling whether the result is one array or a tuple of them
# (a tuple is unpacked, indexed or looped over, never computed with): an axis or no
# axis gives one array (``gradient``; without an axis, f must have one axis, checked
# when it runs), a tuple of several axes a tuple (``gradients``, a list result).


def _gradient_call(f, *spacing, axis=None, edge_order=1):
    """np.gradient as an op, its steps a tuple: ``gradients`` for several axes named."""
    named = {"f": f, "spacing": spacing, "axis": axis, "edge_order": edge_order}
    if isinstance(axis, Const) and isinstance(axis.value, tuple) and len(axis.value) > 1 or (
            isinstance(axis, tuple) and len(axis) > 1):
        return gradients, named
    return gradient, named


def vector_gradient(f, *spacing, edge_order=1):
    """np.gradient of an array of one axis, where code holds its result as one array.

    >>> vector_gradient(np.array([0.0, 1.0, 4.0]))
    array([1., 2., 3.])
    """
    if np.ndim(f) != 1:
        raise ValueError(f"np.gradient of an array of {np.ndim(f)} axes gives one array per "
                         "axis: name the axes (axis=(0, 1, ...)) so that the derivative "
                         "holds the tuple, or choose one (axis=0)")
    return np.gradient(f, *spacing, edge_order=edge_order)


def _gradient_kernel(named) -> str:
    if is_none(named["axis"]):
        return "vector_gradient(f, *spacing, edge_order=edge_order)"
    return "np.gradient(f, *spacing, axis=axis, edge_order=edge_order)"


def _steps(spacing, axes):
    """One step per axis of ``axes``, as np.gradient reads its ``*varargs``."""
    if len(spacing) == 0:
        steps = [1.0] * len(axes)
    elif len(spacing) == 1:
        steps = list(spacing) * len(axes)
    else:
        steps = list(spacing)
    for step in steps:
        if np.ndim(step) != 0:
            raise ValueError("np.gradient is differentiated with uniform steps (one number "
                             "per axis), not sample coordinates: write the differences with "
                             "np.diff")
    return steps


def _gradient_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if np.iterable(axis) else (axis,)))


def gradient_transpose(g, f, spacing, axis, edge_order):
    """The adjoint of ``f`` in ``np.gradient(f, *spacing, axis=axis, edge_order=...)``
    given the adjoint ``g`` of its result (one per axis, for several axes).

    >>> gradient_transpose(np.array([1.0, 0.0, 0.0]), np.zeros(3), (), None, 1)
    array([-1.,  1.,  0.])
    """
    axes = _gradient_axes(axis, np.ndim(f))
    steps = _steps(spacing, axes)
    parts = list(g) if len(axes) > 1 else [g]
    out = np.zeros(np.shape(f), dtype=np.result_type(*parts, 1.0))
    for part, a, step in zip(parts, axes, steps):
        part = np.moveaxis(np.asarray(part, dtype=out.dtype), a, -1)
        into = np.moveaxis(out, a, -1)  # a view: adding to it adds to out
        inner = part[..., 1:-1] / (2.0 * step)
        into[..., 2:] += inner
        into[..., :-2] -= inner
        first, last = part[..., 0] / step, part[..., -1] / step
        if edge_order == 1:
            into[..., 1] += first
            into[..., 0] -= first
            into[..., -1] += last
            into[..., -2] -= last
        else:
            into[..., 0] -= 1.5 * first
            into[..., 1] += 2.0 * first
            into[..., 2] -= 0.5 * first
            into[..., -1] += 1.5 * last
            into[..., -2] -= 2.0 * last
            into[..., -3] += 0.5 * last
    return out


def _sympy_gradient(f, spacing, axis, edge_order):
    f = objects(f)
    axes = _gradient_axes(axis, f.ndim)
    results = []
    for a, step in zip(axes, _steps(spacing, axes)):
        v = np.moveaxis(f, a, -1)
        inner = (v[..., 2:] - v[..., :-2]) / (2 * step)
        if edge_order == 1:
            first = (v[..., 1:2] - v[..., :1]) / step
            last = (v[..., -1:] - v[..., -2:-1]) / step
        else:
            first = (-3 * v[..., :1] + 4 * v[..., 1:2] - v[..., 2:3]) / (2 * step)
            last = (3 * v[..., -1:] - 4 * v[..., -2:-1] + v[..., -3:-2]) / (2 * step)
        results.append(np.moveaxis(np.concatenate((first, inner, last), -1), -1, a))
    return results[0] if len(results) == 1 else results


@defop("gradient", _gradient_kernel, aliases=((np.gradient, _gradient_call),), diff=("f",),
       jvp="linear", floating="always", sympy=_sympy_gradient)
def gradient(f, spacing=(), axis=None, edge_order=1): ...


gradient.runtime = {"vector_gradient": vector_gradient}


@gradient.defvjp
def _(g, ans, f, spacing, axis, edge_order):
    return gradient_transpose(g, f, spacing, axis, edge_order)


@defop("gradients", "np.gradient(f, *spacing, axis=axis, edge_order=edge_order)",
       diff=("f",), shape=list_result, jvp="linear", floating="always",
       sympy=_sympy_gradient)
def gradients(f, spacing, axis, edge_order=1): ...


@gradients.defvjp
def _(g, ans, f, spacing, axis, edge_order):
    return gradient_transpose(g, f, spacing, axis, edge_order)


helper_op(gradient_transpose, diff=("g",), zeros="first", jvp="linear", shape=shape_like("f"))


@OPS["gradient_transpose"].defvjp
def _(gg, ans, g, f, spacing, axis, edge_order):
    return np.gradient(gg, *spacing, axis=axis, edge_order=edge_order)


# ----- polynomials -----
#
# np.polyval(p, x) sums p[k] * x ** (n - 1 - k): linear in the coefficients (each
# receives the adjoint times its power of x), and in x the derivative polynomial's value
# (the coefficients times their exponents, the constant dropped). Coefficients are a
# vector (NumPy's arrays of coefficients, one polynomial per column, are refused).


def polynomial_exponents(p):
    """The exponents of x that the coefficients ``p`` of np.polyval multiply, highest first.

    >>> polynomial_exponents(np.ones(3))
    array([2, 1, 0])
    """
    if np.ndim(p) != 1:
        raise ValueError(f"np.polyval's coefficients have {np.ndim(p)} axes: differentiated, "
                         "they are a vector (one polynomial)")
    return np.arange(np.shape(p)[0] - 1, -1, -1)


helper_op(polynomial_exponents, nondiff_output=True, floating=None, shape_params=("p",),
          query=True, recompute="always", no_gradient="exponents, read from the shape")


@defop("polyval", "np.polyval(p, x)", aliases=(np.polyval,), diff=("p", "x"),
       sympy=lambda p, x: np.polyval(objects(p), objects(x)))
def polyval(p, x): ...


@polyval.defvjp
def _(g, ans, p, x):
    exponents = polynomial_exponents(p)
    powers = np.expand_dims(x, -1) ** exponents
    terms = np.reshape(np.expand_dims(g, -1) * powers, (np.size(x), np.shape(p)[0]))
    return np.sum(terms, axis=0), g * np.polyval(p[:-1] * exponents[:-1], x)


@polyval.defjvp("p")
def _(t, ans, p, x):
    return np.polyval(t, x)


@polyval.defjvp("x")
def _(t, ans, p, x):
    return t * np.polyval(p[:-1] * polynomial_exponents(p)[:-1], x)


# ----- linear interpolation -----
#
# np.interp(x, xp, fp, left, right) is fp[i] * (1 - s) + fp[i + 1] * s on the segment
# [xp[i], xp[i + 1]] holding x, with s = (x - xp[i]) / (xp[i + 1] - xp[i]); fp[0] (or
# left) below xp[0], fp[-1] (or right) above xp[-1]. Linear in fp: fp[i] and fp[i + 1]
# receive the adjoint times 1 - s and s. In x the slope of the segment, 0 outside the
# range. At a knot, where the slope jumps, the derivative is the slope of the segment
# starting there (the right-hand one), and at the last knot that of the last segment,
# as JAX's jnp.interp has it. The result moves with the sample points xp too, but no
# rule takes that gradient: a gradient reaching xp (or left, right) is refused at the
# user's line. period (x on a circle) is refused.


def interp_segment(x, xp):
    """The index i of the segment [xp[i], xp[i + 1]] of np.interp each x falls in (the
    first or last segment outside the range; at a knot the segment starting there).

    >>> interp_segment(np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0]))
    array([0, 0, 0, 1, 1, 1])
    """
    if np.shape(xp)[0] < 2:
        raise ValueError("np.interp with fewer than two sample points is differentiated "
                         "by no rule: its result is constant")
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, np.shape(xp)[0] - 2)


helper_op(interp_segment, nondiff_output=True, floating=None, recompute="always",
          no_gradient="segment numbers: piecewise constant in x")


def _interp_check(named) -> str | None:
    if is_none(named["period"]):
        return None
    return "np.interp with period is not differentiated: reduce x modulo the period first"


def _sympy_interp(x, xp, fp, left, right, period):
    from autodiff.ops.sympy_forms import Unsupported, elementwise, sp

    if period is not None:
        raise Unsupported("np.interp with period")
    knots = np.asarray(xp, dtype=object).tolist()
    if not all(isinstance(k, (int, float)) or getattr(k, "is_number", False) for k in knots):
        raise Unsupported("np.interp with symbolic sample points")
    values = np.asarray(fp, dtype=object).tolist()
    low = values[0] if left is None else left
    high = values[-1] if right is None else right

    def segment(k, v):
        return values[k] + (v - knots[k]) * (values[k + 1] - values[k]) / (knots[k + 1] - knots[k])

    def at(v):
        pieces = [(low, v < knots[0])]
        pieces += [(segment(k, v), v < knots[k + 1]) for k in range(len(knots) - 2)]
        pieces += [(segment(len(knots) - 2, v), v <= knots[-1]), (high, True)]
        return sp.Piecewise(*pieces)

    return elementwise(at)(objects(x))


@defop("interp", "np.interp(x, xp, fp, left=left, right=right, period=period)",
       aliases=(np.interp,), diff=("x", "fp"), floating="always", sympy=_sympy_interp)
def interp(x, xp, fp, left=None, right=None, period=None): ...


interp.vjp_check = _interp_check


@interp.defvjp
def _(g, ans, x, xp, fp, left, right, period):
    i = interp_segment(x, xp)
    below, above = x < xp[0], x > xp[-1]
    start = np.take(xp, i)
    width = np.take(xp, i + 1) - start
    s = np.where(below, 0.0, np.where(above, 1.0, (x - start) / width))
    slope = (np.take(fp, i + 1) - np.take(fp, i)) / width
    if left is not None:  # outside, the constants take the place of fp's ends
        g = np.where(below, 0.0, g)
    if right is not None:
        g = np.where(above, 0.0, g)
    return (g * np.where(below | above, 0.0, slope),
            take_grad(g * (1 - s), fp, i, None) + take_grad(g * s, fp, i + 1, None))


@interp.defjvp("x")
def _(t, ans, x, xp, fp, left, right, period):
    i = interp_segment(x, xp)
    slope = (np.take(fp, i + 1) - np.take(fp, i)) / (np.take(xp, i + 1) - np.take(xp, i))
    return t * np.where((x < xp[0]) | (x > xp[-1]), 0.0, slope)


@interp.defjvp("fp")
def _(t, ans, x, xp, fp, left, right, period):
    i = interp_segment(x, xp)
    below, above = x < xp[0], x > xp[-1]
    start = np.take(xp, i)
    s = np.where(below, 0.0, np.where(above, 1.0, (x - start) / (np.take(xp, i + 1) - start)))
    moved = np.take(t, i) * (1 - s) + np.take(t, i + 1) * s
    if left is not None:
        moved = np.where(below, 0.0, moved)
    if right is not None:
        moved = np.where(above, 0.0, moved)
    return moved


# ----- np.polyfit: least-squares polynomial coefficients -----
#
# Built at build time as NumPy computes it, from ops with rules: the Vandermonde matrix of
# x (its rows weighted by w), its columns scaled to unit length, np.linalg.lstsq with y
# (weighted), the solution scaled back. So the coefficients are differentiated in y (in
# which they are linear), and in x and w as well, through lstsq's rules (which hold where
# the Vandermonde matrix has full column rank, NumPy's own condition for a fit).
# full=True and cov=True, and a degree computed at run time, run NumPy's call as it is,
# with no gradient.


def polyfit_rcond(x):
    """np.polyfit's default rcond: the length of x times its precision's machine epsilon.

    >>> bool(polyfit_rcond(np.zeros(4)) == 4 * np.finfo(float).eps)
    True
    """
    return len(x) * np.finfo(np.result_type(x, 0.0)).eps


helper_op(polyfit_rcond, nondiff_output=True, floating=None,
          no_gradient="a tolerance given by the length of x: an integer count",
          no_sympy="a tolerance of the least-squares solver")


def _polyfit_call(x, y, deg, rcond=None, full=False, w=None, cov=False):
    for setting in (full, cov):
        if not (isinstance(setting, Const) and setting.value is False or setting is False):
            raise RunAsItIs  # several results, the rank and residuals among them
    return {"x": x, "y": y, "deg": deg, "rcond": rcond, "w": w}


def _polyfit_forms(named, builder):
    x, y, deg, rcond, w = (named[name] for name in ("x", "y", "deg", "rcond", "w"))
    if not (isinstance(deg, Const) and type(deg.value) is int and deg.value >= 0):
        return None  # (NumPy's call refuses a degree that is not a non-negative int)

    def emit(name, *args):
        return builder.emit(OPS[name], tuple(Const(a) if a is None or isinstance(
            a, (bool, int, float)) else a for a in args))

    lhs, rhs = emit("vander", x, deg.value + 1, False), y
    if not is_none(w):
        lhs = emit("multiply", lhs, emit("expand_dims", w, -1))
        rhs = emit("transpose", emit("multiply", emit("transpose", y, None), w), None)
    scale = emit("sqrt", emit("sum", emit("multiply", lhs, lhs), 0, False))
    if is_none(rcond):
        rcond = emit("polyfit_rcond", x)
    solution = emit("lstsq", emit("divide", lhs, scale), rhs, rcond)[0]
    return emit("transpose", emit("divide", emit("transpose", solution, None), scale), None)


@defop("polyfit", "np.polyfit(x, y, deg, rcond=rcond, w=w)",
       aliases=((np.polyfit, _polyfit_call),), diff=("x", "y", "w"), simplify=_polyfit_forms,
       real_rules=True,
       no_gradient="np.polyfit is differentiated with a constant degree, built from np.vander "
       "and np.linalg.lstsq (full=True and cov=True are run as they are, with no gradient)",
       no_sympy="built from np.vander and np.linalg.lstsq")
def polyfit(x, y, deg, rcond=None, w=None): ...


# ----- differences of a flattened array, unwrapped phases -----
#
# np.ediff1d(ary, to_end, to_begin) is np.diff of the flattened array between the
# flattened to_begin and to_end, and is built so (taking the rules of diff, ravel and
# concatenate, in every operand).


def _ediff1d_form(named, builder):
    emit = builder.emit
    flat = emit(OPS["ravel"], (named["ary"], Const("C")))
    parts = [emit(OPS["diff"], (flat, Const(1), Const(-1)))]
    if not is_none(named["to_begin"]):
        parts.insert(0, emit(OPS["ravel"], (named["to_begin"], Const("C"))))
    if not is_none(named["to_end"]):
        parts.append(emit(OPS["ravel"], (named["to_end"], Const("C"))))
    return parts[0] if len(parts) == 1 else emit(OPS["concatenate"], (tuple(parts), Const(0)))


@defop("ediff1d", "np.ediff1d(ary, to_end=to_end, to_begin=to_begin)", aliases=(np.ediff1d,),
       diff=("ary", "to_end", "to_begin"), simplify=_ediff1d_form,
       no_gradient="built as np.diff of the flattened array, concatenated",
       no_sympy="built as np.diff of the flattened array, concatenated")
def ediff1d(ary, to_end=None, to_begin=None): ...


# np.unwrap adds to each element a whole number of periods (the running sum of the
# corrections of the steps larger than discont): piecewise constant in p, so the
# derivative is the identity wherever those corrections stay the same (all but where a
# step is exactly discont, or on the boundary NumPy resolves by the step's sign, where
# the one-sided derivative, the identity, is taken). No gradient reaches the period or
# discont, which only decide how many periods are added.
def _sympy_unwrap(p, discont, axis, period):
    p = objects(p)
    half = period / 2
    discont = half if discont is None or discont < half else discont
    steps = np.diff(p, axis=axis)
    corrections = np.frompyfunc(lambda step: sp.Piecewise(
        (0, sp.Abs(step) < discont), (-period * sp.floor((step + half) / period), True)), 1, 1)(steps)
    later = [slice(None)] * p.ndim
    later[axis] = slice(1, None)
    out = p.copy()
    out[tuple(later)] = p[tuple(later)] + np.cumsum(corrections, axis=axis)
    return out


@defop("unwrap", "np.unwrap(p, discont=discont, axis=axis, period=period)", aliases=(np.unwrap,),
       diff=("p",), shape=shape_like("p"), floating="always", jvp="same", sympy=_sympy_unwrap,
       no_gradient="discont and period only decide how many periods are added")
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi): ...


@unwrap.defvjp
def _(g, ans, p, discont, axis, period):
    return g
