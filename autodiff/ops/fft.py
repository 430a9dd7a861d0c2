"""NumPy's discrete Fourier transforms, ``np.fft``.

Gradients follow the convention of JAX and autograd (see ``ops/complex_numbers.py``):
the gradient of a real function of z = x + iy is df/dx - i df/dy, so a C-linear op's
VJP is its transpose, without conjugation. The DFT matrix is symmetric: the transpose
of ``fft`` (``ifft``) in a norm is ``fft`` (``ifft``) in that norm, then the transpose of
fitting the operand to ``n`` (``s``): cutting what NumPy padded, padding with zeros
what it cut (:func:`fitted_to`). ``rfft`` reads a real x (its VJP takes the real part)
and ``irfft`` gives a real result (its VJP takes the real part of the adjoint); both
are R-linear, not C-linear. Each op is linear, so its JVP is the op applied to the
tangent. ``hfft`` and ``ihfft`` are built while compiling from ``irfft`` and ``rfft``
as NumPy defines them, the 2-D transforms from the n-dimensional ones. ``fftshift``
and ``ifftshift`` permute, each the other's transpose; ``fftfreq`` and ``rfftfreq``
are constants, and refuse a gradient reaching their spacing ``d``.

The rules never decide on ``n``, ``s``, ``axis``, ``axes`` or ``norm`` while compiling:
they pass them to the transforms they call, and the helpers below read them when the
derivative runs, so a length computed at run time (``n=len(x)``) is differentiated
as a constant one is. Only ``hfft`` and ``ihfft`` swap their norm while compiling: a
norm computed at run time leaves NumPy's call, which refuses a gradient. A repeated
axis of an n-dimensional transform is refused when the derivative runs (its
transpose would have to fit the operand between the steps along that axis).

numba compiles no ``np.fft``: ``jit="numba"`` refuses derivatives that call these
ops, naming the user's line.

>>> import numpy as np
>>> fitted_to(np.arange(3.0), np.zeros(5)).tolist()
[0.0, 1.0, 2.0, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from autodiff.errors import NonDifferentiableError
from autodiff.graph.ir import Const
from autodiff.graph.patterns import constant_tuple, is_none
from autodiff.ops.registry import OPS, defop, helper_op
from autodiff.ops.shape_rules import shape_like
from autodiff.ops.sympy_forms import objects

_HELPER = "a helper of derivatives: user code never calls it"
_NO_SYMPY = ("a discrete Fourier transform, a sum of complex exponentials over whole axes, "
             "which the SymPy route (real symbols) has no form for")

# ----- the helpers the rules call -----


def _last_axis(axes) -> int:
    """The last axis an n-dimensional transform runs along (``axes`` an int for a 1-D one;
    None: every axis, or the last ``len(s)``)."""
    if axes is None:
        return -1
    return axes[-1] if np.iterable(axes) else axes


def fitted_to(g, x):
    """``g`` cut, or padded with zeros at the end, along each axis to ``x``'s shape: how
    np.fft fits an operand to ``n`` (``s``), and the transpose of that fitting.

    >>> fitted_to(np.ones((2, 4)), np.zeros((3, 2))).tolist()
    [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    """
    g = np.asarray(g)
    shape = np.shape(x)
    if g.shape == shape:
        return g
    out = np.zeros(shape, dtype=g.dtype)
    common = tuple(slice(0, min(have, want)) for have, want in zip(g.shape, shape))
    out[common] = g[common]
    return out


def half_spectrum_padded(g, x, s, axes):
    """The adjoint ``g`` of ``np.fft.rfftn(x, s, axes)`` (of ``rfft``: ``s`` and ``axes`` an
    int each, or None), ``n // 2 + 1`` long along the last axis transformed, padded with
    zeros to that axis's ``n``: ``s``'s last (``x``'s length there for None or -1).

    >>> half_spectrum_padded(np.ones(3), np.zeros(5), None, -1).tolist()
    [1.0, 1.0, 1.0, 0.0, 0.0]
    """
    g = np.asarray(g)
    axis = _last_axis(axes)
    n = s[-1] if np.iterable(s) else s
    if n is None or n == -1:
        n = np.shape(x)[axis]
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, n - g.shape[axis])
    return np.pad(g, widths)


def hermitian_weights(g, axes):
    """How often each entry of the half spectrum np.fft.irfftn (irfft) reads counts in its
    result, along the last axis it transforms, of the adjoint ``g`` (``n`` long there):
    once for k = 0 and, for an even ``n``, k = n / 2, twice for the others up to
    n // 2 (their conjugates are the other half), never past it (NumPy drops those
    entries); shaped to multiply ``g``.

    >>> hermitian_weights(np.zeros((2, 5)), None).tolist()
    [[1.0, 2.0, 2.0, 0.0, 0.0]]
    """
    axis = _last_axis(axes)
    n = np.shape(g)[axis]
    weights = np.zeros(n, dtype=np.result_type(np.real(g), np.float32))
    weights[:n // 2 + 1] = 2.0
    weights[0] = 1.0
    if n % 2 == 0:
        weights[n // 2] = 1.0
    shape = [1] * np.ndim(g)
    shape[axis] = n
    return weights.reshape(shape)


def fft_axes(x, s, axes):
    """The axes np.fft's n-dimensional transforms of ``x`` run along, as NumPy reads them:
    ``axes``, else the last ``len(s)``, else None (every axis). A repeated axis is
    refused: the transforms along it are steps, each fitting the operand to its length,
    which one transform back does not undo.

    >>> fft_axes(np.zeros((2, 3)), (4,), None)
    (-1,)
    """
    if axes is None:
        return None if s is None else tuple(range(-len(s), 0))
    axes = tuple(axes) if np.iterable(axes) else (axes,)
    ndim = np.ndim(x)
    if len({axis % ndim for axis in axes}) != len(axes):  # (NumPy checked the range)
        raise NonDifferentiableError(
            f"np.fft's n-dimensional transform along the axes {axes} of an array of "
            f"{ndim} dimensions: a repeated axis is not differentiated",
            hint="transform along each axis once (call the transform twice for a "
            "repeated axis)")
    return axes


def _decided_axes(named, builder):
    """fft_axes decided while compiling: None, the last len(s) for s of a known length,
    or constant axes that cannot name one axis twice (all from the start, or all from
    the end, none repeated)."""
    s, axes = named["s"], named["axes"]
    if is_none(axes):
        if is_none(s):
            return Const(None)
        length = len(s) if isinstance(s, tuple) else len(s.value) if (
            isinstance(s, Const) and isinstance(s.value, tuple)) else None
        return None if length is None else Const(tuple(range(-length, 0)))
    values = constant_tuple(axes)
    if values is None and isinstance(axes, Const) and type(axes.value) is int:
        values = (axes.value,)
    if values is None or len(set(values)) != len(values):
        return None
    if all(a >= 0 for a in values) or all(a < 0 for a in values):
        return Const(values)
    return None


helper_op(fitted_to, diff=("g",), jvp="linear", fresh=False, ndarray=True,
          shape=shape_like("x"), shape_params=("x",), zeros="first", no_sympy=_HELPER)
helper_op(half_spectrum_padded, diff=("g",), jvp="linear", ndarray=True, shape_params=("x",),
          zeros="first", no_sympy=_HELPER)
helper_op(hermitian_weights, nondiff_output=True, floating="always", ndarray=True,
          shape_params=("g",), query=True, recompute="always",
          no_gradient="counts read from a shape", no_sympy=_HELPER)
helper_op(fft_axes, nondiff_output=True, floating=None, shape_params=("x",), query=True,
          simplify=_decided_axes, no_gradient="axes, read from the settings and a shape",
          no_sympy=_HELPER)


# Cutting or padding is a selection: its transpose fits the adjoint back to g's shape.
@OPS["fitted_to"].defvjp
def _(gg, ans, g, x):
    return fitted_to(gg, g)


# Padding with zeros is a selection too: its transpose keeps g's entries.
@OPS["half_spectrum_padded"].defvjp
def _(gg, ans, g, x, s, axes):
    return fitted_to(gg, g)


@OPS["fitted_to"].defspecialize
def _(rewrite, g, x):
    shape = rewrite.array_shape(x)
    return g if shape is not None and shape == rewrite.array_shape(g) else None


# ----- one dimension -----


def _transform(name: str, settings: str):
    """The defop of ``np.fft.NAME``: linear in ``a`` (its JVP the transform of the tangent).
    A graph holding it computes with complex values from the start, irfft's too: its
    result is real, but its rule transforms the adjoint into complex values, and the
    ops before it must not be differentiated with rules for real values alone."""
    return defop(name, f"np.fft.{name}(a, {settings}, norm=norm)",
                 aliases=(getattr(np.fft, name),), diff=("a",), jvp="linear", zeros="first",
                 floating="always", ndarray=True, makes_complex=True, no_sympy=_NO_SYMPY)


@_transform("fft", "n=n, axis=axis")
def fft(a, n=None, axis=-1, norm=None): ...


# y = F P a (P fits a to n along the axis, F the DFT in the norm): F is symmetric, so
# the transpose is P^T F g, the same transform of g fitted back to a's length.
@fft.defvjp
def _(g, ans, a, n, axis, norm):
    return fitted_to(np.fft.fft(g, axis=axis, norm=norm), a)


@_transform("ifft", "n=n, axis=axis")
def ifft(a, n=None, axis=-1, norm=None): ...


# The inverse DFT matrix is symmetric too: the transpose is the same inverse transform.
@ifft.defvjp
def _(g, ans, a, n, axis, norm):
    return fitted_to(np.fft.ifft(g, axis=axis, norm=norm), a)


@_transform("rfft", "n=n, axis=axis")
def rfft(a, n=None, axis=-1, norm=None): ...


# y = S F P a for a real a (S keeps the first n // 2 + 1 entries): its gradient is the
# real part of the transpose, P^T F S^T g, S^T padding g with zeros to n.
@rfft.defvjp
def _(g, ans, a, n, axis, norm):
    full = np.fft.fft(half_spectrum_padded(g, a, n, axis), axis=axis, norm=norm)
    return np.real(fitted_to(full, a))


@_transform("irfft", "n=n, axis=axis")
def irfft(a, n=None, axis=-1, norm=None): ...


# With a fitted to m = n // 2 + 1 entries, y_j = c Re(sum_k w_k a_k e^(2 pi i jk / n)) (c the
# norm's 1 / n, 1 / sqrt(n) or 1; w of hermitian_weights): R-linear, Re(B a). Its gradient
# is B^T g = w c sum_j g_j e^(2 pi i jk / n), the inverse DFT of the real adjoint in the
# same norm, weighted (w is 0 past m), fitted back to a's length.
@irfft.defvjp
def _(g, ans, a, n, axis, norm):
    real = np.real(g)
    return fitted_to(hermitian_weights(real, axis) * np.fft.ifft(real, axis=axis, norm=norm), a)


def _norm_swapped(named):
    """NumPy's hfft and ihfft are irfft and rfft in the other direction's norm: None when
    the norm is known only when the code runs."""
    norm = named["norm"]
    if not isinstance(norm, Const):
        return None
    swapped = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
    return Const(swapped[norm.value]) if norm.value in swapped else None


def _hfft_form(named, builder):
    norm = _norm_swapped(named)
    if norm is None:
        return None
    conjugated = builder.emit(OPS["conj"], (named["a"],))
    return builder.emit(irfft, (conjugated, named["n"], named["axis"], norm))


def _ihfft_form(named, builder):
    norm = _norm_swapped(named)
    if norm is None:
        return None
    spectrum = builder.emit(rfft, (named["a"], named["n"], named["axis"], norm))
    return builder.emit(OPS["conj"], (spectrum,))


_SWAPPED = ("np.fft.{} is differentiated with a constant norm: it is built, as NumPy defines "
            "it, from {} in the swapped norm")


@defop("hfft", "np.fft.hfft(a, n=n, axis=axis, norm=norm)", aliases=(np.fft.hfft,),
       diff=("a",), floating="always", makes_complex=True, simplify=_hfft_form,
       no_gradient=_SWAPPED.format("hfft", "np.conj and np.fft.irfft"),
       no_sympy="built from np.conj and np.fft.irfft")
def hfft(a, n=None, axis=-1, norm=None): ...


@defop("ihfft", "np.fft.ihfft(a, n=n, axis=axis, norm=norm)", aliases=(np.fft.ihfft,),
       diff=("a",), floating="always", makes_complex=True, simplify=_ihfft_form,
       no_gradient=_SWAPPED.format("ihfft", "np.fft.rfft and np.conj"),
       no_sympy="built from np.fft.rfft and np.conj")
def ihfft(a, n=None, axis=-1, norm=None): ...


# ----- n dimensions -----
#
# Each transform runs along each of its axes in turn, the real one (rfftn's, irfftn's)
# along the last: transforms along other axes commute, so the rules are the 1-D ones over
# every axis at once (fft_axes reads the axes as NumPy does).


@_transform("fftn", "s=s, axes=axes")
def fftn(a, s=None, axes=None, norm=None): ...


# fft's rule along every axis: each 1-D DFT is symmetric.
@fftn.defvjp
def _(g, ans, a, s, axes, norm):
    return fitted_to(np.fft.fftn(g, axes=fft_axes(a, s, axes), norm=norm), a)


@_transform("ifftn", "s=s, axes=axes")
def ifftn(a, s=None, axes=None, norm=None): ...


# ifft's rule along every axis.
@ifftn.defvjp
def _(g, ans, a, s, axes, norm):
    return fitted_to(np.fft.ifftn(g, axes=fft_axes(a, s, axes), norm=norm), a)


@_transform("rfftn", "s=s, axes=axes")
def rfftn(a, s=None, axes=None, norm=None): ...


# rfft's rule along the last axis, fft's along the others: the real part of the full
# transform of g padded to n along the last axis, fitted back to a's shape.
@rfftn.defvjp
def _(g, ans, a, s, axes, norm):
    transformed = fft_axes(a, s, axes)
    full = np.fft.fftn(half_spectrum_padded(g, a, s, transformed), axes=transformed, norm=norm)
    return np.real(fitted_to(full, a))


@_transform("irfftn", "s=s, axes=axes")
def irfftn(a, s=None, axes=None, norm=None): ...


# NumPy runs ifft along the other axes, then irfft along the last: the transpose is irfft's
# rule along the last axis, then ifft's (C-linear, symmetric) along the others; the weights
# vary along the last axis alone, so both are one weighted inverse transform of g.
@irfftn.defvjp
def _(g, ans, a, s, axes, norm):
    transformed = fft_axes(a, s, axes)
    real = np.real(g)
    inverse = np.fft.ifftn(real, axes=transformed, norm=norm)
    return fitted_to(hermitian_weights(real, transformed) * inverse, a)


# The 2-D transforms are the n-dimensional ones along two axes by default.
def _along(op):
    def form(named, builder):
        return builder.emit(op, (named["a"], named["s"], named["axes"], named["norm"]))

    return form


for _name, _op in (("fft2", fftn), ("ifft2", ifftn), ("rfft2", rfftn), ("irfft2", irfftn)):
    def _stub(a, s=None, axes=(-2, -1), norm=None): ...

    defop(_name, f"np.fft.{_name}(a, s=s, axes=axes, norm=norm)",
          aliases=(getattr(np.fft, _name),), diff=("a",), floating="always",
          makes_complex=True, simplify=_along(_op),
          no_gradient=f"built from np.fft.{_op.name}", no_sympy=f"built from np.fft.{_op.name}")(
              _stub)


# ----- shifts and frequencies -----


# fftshift rolls each axis by half its length: a permutation, whose transpose is the
# inverse permutation, ifftshift (and the other way round).
@defop("fftshift", "np.fft.fftshift(x, axes=axes)", aliases=(np.fft.fftshift,), diff=("x",),
       jvp="linear", zeros="first", shape=shape_like("x"), ndarray=True,
       sympy=lambda x, axes: np.fft.fftshift(objects(x), axes))
def fftshift(x, axes=None): ...


@fftshift.defvjp
def _(g, ans, x, axes):
    return np.fft.ifftshift(g, axes)


@defop("ifftshift", "np.fft.ifftshift(x, axes=axes)", aliases=(np.fft.ifftshift,),
       diff=("x",), jvp="linear", zeros="first", shape=shape_like("x"), ndarray=True,
       sympy=lambda x, axes: np.fft.ifftshift(objects(x), axes))
def ifftshift(x, axes=None): ...


@ifftshift.defvjp
def _(g, ans, x, axes):
    return np.fft.fftshift(g, axes)


_FREQUENCIES = ("the sample frequencies k / (n d) are taken as constants, of the window "
                "length n and the spacing d")


@defop("fftfreq", "np.fft.fftfreq(n, d=d, device=device)", aliases=(np.fft.fftfreq,),
       floating="always", ndarray=True, no_gradient=_FREQUENCIES,
       sympy=lambda n, d, device: objects(np.fft.fftfreq(n)) * n / (n * d))
def fftfreq(n, d=1.0, device=None): ...


@defop("rfftfreq", "np.fft.rfftfreq(n, d=d, device=device)", aliases=(np.fft.rfftfreq,),
       floating="always", ndarray=True, no_gradient=_FREQUENCIES,
       sympy=lambda n, d, device: objects(np.fft.rfftfreq(n)) * n / (n * d))
def rfftfreq(n, d=1.0, device=None): ...


__all__ = ["fft", "fft_axes", "fftfreq", "fftn", "fftshift", "fitted_to", "half_spectrum_padded",
           "hermitian_weights", "hfft", "ifft", "ifftn", "ifftshift", "ihfft", "irfft",
           "irfftn", "rfft", "rfftfreq", "rfftn"]
