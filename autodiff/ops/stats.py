"""``scipy.stats``: the densities of distributions as users call them.

``scipy.stats.norm.logpdf(x, loc, scale)`` is a method of the distribution object
``scipy.stats.norm``, bound anew at each read: its alias is the method (see
``registry.callable_key``), so ``from scipy.stats import norm; norm.logpdf(x)`` and
``stats.norm.logpdf(x, loc=mu, scale=sigma)`` reach the same op. Each op's stub
states SciPy's parameters with SciPy's defaults (``loc=0``, ``scale=1``), so
keyword arguments are taken as SciPy takes them. The kernel is SciPy's own call
(values exactly as SciPy gives them); the rules are written with ops autodiff knows
(``gammaln``, ``digamma``, ``log_ndtr``, ``ndtr``, ``np.linalg.solve``, ...), so
they are differentiated again.

Registered only when SciPy is installed (``ops/__init__.py`` imports this module
then). Outside a distribution's support SciPy gives ``-inf`` (``nan`` for a bad
parameter) and the rules' values there mean nothing; at its boundary (``x = 0``
for ``gamma``) the density may not be differentiable at all. numba compiles none of
SciPy's functions: ``jit="numba"`` refuses them, naming the user's line.

The location-scale families share one shape of rule: with ``z = (x - loc) /
scale`` and ``f`` the log-density of ``z``, ``d/dx = f'(z) / scale``, ``d/dloc =
-f'(z) / scale`` and ``d/dscale = -(z f'(z) + 1) / scale`` for a log-density
(without the ``1``, and with the density for ``f``, for a CDF).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special
import scipy.stats

from autodiff.ops.registry import defop
from autodiff.ops.runtime import broadcast_like, unbroadcast
from autodiff.ops.shape_rules import broadcast
from autodiff.ops.sympy_forms import elementwise, sp

# What generated code reads to call SciPy's functions.
SCIPY = {"scipy": scipy}
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)
LOCATION_SCALE = broadcast("x", "loc", "scale")


# ----- norm -----


def _norm_slopes(x, loc, scale):
    """The derivatives of norm.logpdf in x, loc and scale, elementwise."""
    z = (x - loc) / scale
    return -z / scale, z / scale, (z * z - 1.0) / scale


def _norm_cdf_slopes(x, loc, scale, log_density_of_z):
    """The derivatives of norm.cdf in x, loc and scale, elementwise, divided by
    ``exp(log_density_of_z)``: the log-CDF's when that is ``logpdf(z) - logcdf``."""
    z = (x - loc) / scale
    slope = np.exp(log_density_of_z) / scale
    return slope, -slope, -slope * z


def _sympy_z(x, loc, scale):
    return (x - loc) / scale


def _sympy_norm_logpdf(x, loc, scale):
    z = _sympy_z(x, loc, scale)
    return -z * z / 2 - sp.log(scale) - sp.log(2 * sp.pi) / 2


def _sympy_ndtr(z):
    return (1 + sp.erf(z / sp.sqrt(2))) / 2


@defop("norm_logpdf", "scipy.stats.norm.logpdf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.logpdf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always", sympy=elementwise(_sympy_norm_logpdf, 3))
def norm_logpdf(x, loc=0.0, scale=1.0): ...


norm_logpdf.runtime = SCIPY


@norm_logpdf.defvjp
def _(g, ans, x, loc, scale):
    dx, dloc, dscale = _norm_slopes(x, loc, scale)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@norm_logpdf.defjvp("x")
def _(t, ans, x, loc, scale):
    return broadcast_like(t * _norm_slopes(x, loc, scale)[0], ans)


@norm_logpdf.defjvp("loc")
def _(t, ans, x, loc, scale):
    return broadcast_like(t * _norm_slopes(x, loc, scale)[1], ans)


@norm_logpdf.defjvp("scale")
def _(t, ans, x, loc, scale):
    return broadcast_like(t * _norm_slopes(x, loc, scale)[2], ans)


@defop("norm_pdf", "scipy.stats.norm.pdf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.pdf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: sp.exp(_sympy_norm_logpdf(x, loc, scale)), 3))
def norm_pdf(x, loc=0.0, scale=1.0): ...


norm_pdf.runtime = SCIPY


@norm_pdf.defvjp
def _(g, ans, x, loc, scale):
    dx, dloc, dscale = _norm_slopes(x, loc, scale)
    return (unbroadcast(g * ans * dx, x), unbroadcast(g * ans * dloc, loc),
            unbroadcast(g * ans * dscale, scale))


@norm_pdf.defjvp("x")
def _(t, ans, x, loc, scale):
    return t * ans * _norm_slopes(x, loc, scale)[0]


@norm_pdf.defjvp("loc")
def _(t, ans, x, loc, scale):
    return t * ans * _norm_slopes(x, loc, scale)[1]


@norm_pdf.defjvp("scale")
def _(t, ans, x, loc, scale):
    return t * ans * _norm_slopes(x, loc, scale)[2]


# The CDF's derivative is the density phi(z) / scale; the log-CDF's is that over the
# CDF, formed as exp(-z**2 / 2 - logcdf) / sqrt(2 pi) as log_ndtr's own rule does, so
# it stays finite far in the left tail where both would underflow. The survival
# function sf(x) = cdf(-z) is its mirror image.
@defop("norm_cdf", "scipy.stats.norm.cdf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.cdf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: _sympy_ndtr(_sympy_z(x, loc, scale)), 3))
def norm_cdf(x, loc=0.0, scale=1.0): ...


norm_cdf.runtime = SCIPY


@norm_cdf.defvjp
def _(g, ans, x, loc, scale):
    z = (x - loc) / scale
    dx, dloc, dscale = _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@norm_cdf.defjvp("x")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[0],
                          ans)


@norm_cdf.defjvp("loc")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[1],
                          ans)


@norm_cdf.defjvp("scale")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[2],
                          ans)


@defop("norm_logcdf", "scipy.stats.norm.logcdf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.logcdf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: sp.log(_sympy_ndtr(_sympy_z(x, loc, scale))), 3))
def norm_logcdf(x, loc=0.0, scale=1.0): ...


norm_logcdf.runtime = SCIPY


@norm_logcdf.defvjp
def _(g, ans, x, loc, scale):
    z = (x - loc) / scale
    dx, dloc, dscale = _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@norm_logcdf.defjvp("x")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[0]


@norm_logcdf.defjvp("loc")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[1]


@norm_logcdf.defjvp("scale")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[2]


@defop("norm_sf", "scipy.stats.norm.sf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.sf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: _sympy_ndtr(-_sympy_z(x, loc, scale)), 3))
def norm_sf(x, loc=0.0, scale=1.0): ...


norm_sf.runtime = SCIPY


@norm_sf.defvjp
def _(g, ans, x, loc, scale):
    z = (x - loc) / scale
    dx, dloc, dscale = _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)
    return (unbroadcast(-g * dx, x), unbroadcast(-g * dloc, loc),
            unbroadcast(-g * dscale, scale))


@norm_sf.defjvp("x")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(-t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[0],
                          ans)


@norm_sf.defjvp("loc")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(-t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[1],
                          ans)


@norm_sf.defjvp("scale")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return broadcast_like(-t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI)[2],
                          ans)


@defop("norm_logsf", "scipy.stats.norm.logsf(x, loc=loc, scale=scale)",
       aliases=(scipy.stats.norm.logsf,), diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: sp.log(_sympy_ndtr(-_sympy_z(x, loc, scale))), 3))
def norm_logsf(x, loc=0.0, scale=1.0): ...


norm_logsf.runtime = SCIPY


@norm_logsf.defvjp
def _(g, ans, x, loc, scale):
    z = (x - loc) / scale
    dx, dloc, dscale = _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)
    return (unbroadcast(-g * dx, x), unbroadcast(-g * dloc, loc),
            unbroadcast(-g * dscale, scale))


@norm_logsf.defjvp("x")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return -t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[0]


@norm_logsf.defjvp("loc")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return -t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[1]


@norm_logsf.defjvp("scale")
def _(t, ans, x, loc, scale):
    z = (x - loc) / scale
    return -t * _norm_cdf_slopes(x, loc, scale, -0.5 * z * z - LOG_SQRT_2PI - ans)[2]
