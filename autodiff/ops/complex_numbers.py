"""The parts of complex numbers: ``np.real``, ``np.imag``, ``np.conj``, ``np.angle``, and
Python's ``complex(a, b)``.

Gradients follow the convention of JAX and autograd: the gradient of a real function
of z = x + iy is df/dx - i df/dy. An adjoint reaching a real result (``np.real(z)``)
may be complex, where that result was then multiplied by a complex number: its real
part is the adjoint (``np.real(g)`` in the rules below). Each op's rules for real
operands are the plain ones (the real part of a real x is x); a derivative that
computes with complex values uses the rules for complex ones (see
``transforms.complex_values``).
"""

from __future__ import annotations

import numpy as np

from autodiff.graph.ir import Const
from autodiff.ops.registry import OPS, defop
from autodiff.ops.shape_rules import broadcast
from autodiff.ops.sympy_forms import elementwise, sp

UNARY = broadcast("x")


# Re z is linear in z: its tangent is Re t. Its adjoint, real, is the gradient df/dx - i
# df/dy of f = g Re z, that is g.
@defop("real", "np.real(x)", aliases=(np.real,), attributes=("real",), diff=("x",), shape=UNARY,
       floating="always", jvp="linear", sympy=elementwise("re"), real_rules=True)
def real(x): ...


@real.defvjp
def _(g, ans, x):
    return g


@real.defvjp_complex
def _(g, ans, x):
    return np.real(g)


# Im z is linear in z: its tangent is Im t. Its gradient is -i (df/dy = 1); a real x has
# no imaginary part to vary.
@defop("imag", "np.imag(x)", aliases=(np.imag,), attributes=("imag",), diff=("x",), shape=UNARY,
       floating="always", jvp="linear", sympy=elementwise("im"), real_rules=True)
def imag(x): ...


@imag.defvjp
def _(g, ans, x):
    return 0.0 * g


@imag.defvjp_complex
def _(g, ans, x):
    return -1j * np.real(g)


# conj z is linear (over the reals) in z: its tangent is conj t, its transpose conj g.
@defop("conj", "np.conj(x)", aliases=(np.conj, np.conjugate), methods=("conj", "conjugate"),
       diff=("x",), shape=UNARY, jvp="linear", sympy=elementwise("conjugate"), real_rules=True)
def conj(x): ...


@conj.defvjp
def _(g, ans, x):
    return g


@conj.defvjp_complex
def _(g, ans, x):
    return np.conj(g)


# arg z = atan2(y, x): its gradient is (-y - ix) / |z|^2 = -i conj(z) / |z|^2, its tangent
# Im(conj(z) t) / |z|^2 (0 at z = 0, where it has none); in degrees, times 180 / pi. A
# real x's angle, 0 or pi, is piecewise constant.
@defop("angle", "np.angle(z, deg=deg)", aliases=(np.angle,), diff=("z",), shape=broadcast("z"),
       floating="always", sympy=lambda z, deg: elementwise(
           lambda v: sp.arg(v) * (180 / sp.pi if deg else 1))(z), real_rules=True)
def angle(z, deg=False): ...


@angle.defvjp
def _(g, ans, z, deg):
    return 0.0 * g


@angle.defjvp
def _(t, ans, z, deg):
    return 0.0 * ans


def _per_modulus_squared(z, deg):
    """conj(z) / |z|^2 (0 at 0), times 180 / pi for degrees."""
    squared = np.real(z * np.conj(z))
    scale = 180.0 / np.pi if deg else 1.0
    return scale * np.conj(z) / np.where(squared == 0.0, 1.0, squared)


@angle.defvjp_complex
def _(g, ans, z, deg):
    return -1j * np.real(g) * _per_modulus_squared(z, deg)


@angle.defjvp_complex
def _(t, ans, z, deg):
    return np.imag(_per_modulus_squared(z, deg) * t)


# Python's complex(a, b): a + b i, built from the ops with rules.
def _complex_from_parts(named, builder):
    real_part, imaginary = named["real"], named["imag"]
    if isinstance(imaginary, Const) and imaginary.value == 0:
        return builder.emit(OPS["add"], (real_part, Const(0j)))
    return builder.emit(OPS["add"], (real_part, builder.emit(OPS["multiply"], (
        imaginary, Const(1j)))))


@defop("complex_number", "complex(real, imag)", aliases=(complex,), diff=("real", "imag"),
       simplify=_complex_from_parts, no_gradient="built from + and * while compiling",
       no_sympy="built from + and * while compiling")
def complex_number(real, imag=0.0): ...


__all__ = ["angle", "complex_number", "conj", "imag", "real"]
