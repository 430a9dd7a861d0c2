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

from autodiff.graph.ir import Const
from autodiff.ops.registry import defer_alias, defop, helper_op
from autodiff.ops.runtime import broadcast_like, unbroadcast
from autodiff.ops.shape_rules import broadcast, shape_like
from autodiff.ops.sympy_forms import elementwise, matrix, objects, sp

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


def _density(log_density):
    """The SymPy form of a density from that of its logarithm."""
    return lambda *args: sp.exp(log_density(*args))


@defop("norm_logpdf", "scipy.stats.norm.logpdf(x, loc=loc, scale=scale)",
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always", sympy=elementwise(_sympy_norm_logpdf, 3))
def norm_logpdf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.logpdf", norm_logpdf)


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
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always", sympy=elementwise(_density(_sympy_norm_logpdf), 3))
def norm_pdf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.pdf", norm_pdf)


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
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: _sympy_ndtr(_sympy_z(x, loc, scale)), 3))
def norm_cdf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.cdf", norm_cdf)


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
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: sp.log(_sympy_ndtr(_sympy_z(x, loc, scale))), 3))
def norm_logcdf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.logcdf", norm_logcdf)


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
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: _sympy_ndtr(-_sympy_z(x, loc, scale)), 3))
def norm_sf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.sf", norm_sf)


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
       diff=("x", "loc", "scale"), shape=LOCATION_SCALE,
       floating="always",
       sympy=elementwise(lambda x, loc, scale: sp.log(_sympy_ndtr(-_sympy_z(x, loc, scale))), 3))
def norm_logsf(x, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "norm.logsf", norm_logsf)


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


# ----- t -----


def _t_slopes(x, df, loc, scale):
    """The derivatives of t.logpdf in x, df, loc and scale, elementwise."""
    z = (x - loc) / scale
    spread = df + z * z
    dz = -(df + 1.0) * z / spread
    ddf = 0.5 * (scipy.special.digamma(0.5 * (df + 1.0)) - scipy.special.digamma(0.5 * df)
                 - 1.0 / df - np.log1p(z * z / df) + (df + 1.0) * z * z / (df * spread))
    return dz / scale, ddf, -dz / scale, -(z * dz + 1.0) / scale


def _sympy_t_logpdf(x, df, loc, scale):
    z = _sympy_z(x, loc, scale)
    return (sp.loggamma((df + 1) / 2) - sp.loggamma(df / 2) - sp.log(df * sp.pi) / 2
            - sp.log(scale) - (df + 1) / 2 * sp.log(1 + z * z / df))


# Student's t: the derivative in the degrees of freedom df takes the digamma function.
@defop("t_logpdf", "scipy.stats.t.logpdf(x, df, loc=loc, scale=scale)",
       diff=("x", "df", "loc", "scale"),
       shape=broadcast("x", "df", "loc", "scale"), floating="always",
       sympy=elementwise(_sympy_t_logpdf, 4))
def t_logpdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "t.logpdf", t_logpdf)


t_logpdf.runtime = SCIPY


@t_logpdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, ddf, dloc, dscale = _t_slopes(x, df, loc, scale)
    return (unbroadcast(g * dx, x),
            unbroadcast(g * ddf, df),
            unbroadcast(g * dloc, loc),
            unbroadcast(g * dscale, scale))


@t_logpdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _t_slopes(x, df, loc, scale)[0], ans)


@t_logpdf.defjvp("df")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _t_slopes(x, df, loc, scale)[1], ans)


@t_logpdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _t_slopes(x, df, loc, scale)[2], ans)


@t_logpdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _t_slopes(x, df, loc, scale)[3], ans)


@defop("t_pdf", "scipy.stats.t.pdf(x, df, loc=loc, scale=scale)",
       diff=("x", "df", "loc", "scale"),
       shape=broadcast("x", "df", "loc", "scale"), floating="always",
       sympy=elementwise(_density(_sympy_t_logpdf), 4))
def t_pdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "t.pdf", t_pdf)


t_pdf.runtime = SCIPY


@t_pdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, ddf, dloc, dscale = _t_slopes(x, df, loc, scale)
    return (unbroadcast(g * ans * dx, x),
            unbroadcast(g * ans * ddf, df),
            unbroadcast(g * ans * dloc, loc),
            unbroadcast(g * ans * dscale, scale))


@t_pdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return t * ans * _t_slopes(x, df, loc, scale)[0]


@t_pdf.defjvp("df")
def _(t, ans, x, df, loc, scale):
    return t * ans * _t_slopes(x, df, loc, scale)[1]


@t_pdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return t * ans * _t_slopes(x, df, loc, scale)[2]


@t_pdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return t * ans * _t_slopes(x, df, loc, scale)[3]


# ----- gamma, chi2 and beta -----


def _gamma_slopes(x, a, loc, scale):
    """The derivatives of gamma.logpdf in x, a, loc and scale, elementwise."""
    y = (x - loc) / scale
    dy = (a - 1.0) / y - 1.0
    return dy / scale, np.log(y) - scipy.special.digamma(a), -dy / scale, -(y * dy + 1.0) / scale


def _sympy_gamma_logpdf(x, a, loc, scale):
    y = _sympy_z(x, loc, scale)
    return (a - 1) * sp.log(y) - y - sp.loggamma(a) - sp.log(scale)


# On its support, x > loc: at x = loc the density is 0, infinite or 1 / scale
# (a < 1, a > 1, a = 1) and the derivatives in x and a are infinite or undefined.
@defop("gamma_logpdf", "scipy.stats.gamma.logpdf(x, a, loc=loc, scale=scale)",
       diff=("x", "a", "loc", "scale"),
       shape=broadcast("x", "a", "loc", "scale"), floating="always",
       sympy=elementwise(_sympy_gamma_logpdf, 4))
def gamma_logpdf(x, a, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "gamma.logpdf", gamma_logpdf)


gamma_logpdf.runtime = SCIPY


@gamma_logpdf.defvjp
def _(g, ans, x, a, loc, scale):
    dx, da, dloc, dscale = _gamma_slopes(x, a, loc, scale)
    return (unbroadcast(g * dx, x),
            unbroadcast(g * da, a),
            unbroadcast(g * dloc, loc),
            unbroadcast(g * dscale, scale))


@gamma_logpdf.defjvp("x")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(t * _gamma_slopes(x, a, loc, scale)[0], ans)


@gamma_logpdf.defjvp("a")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(t * _gamma_slopes(x, a, loc, scale)[1], ans)


@gamma_logpdf.defjvp("loc")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(t * _gamma_slopes(x, a, loc, scale)[2], ans)


@gamma_logpdf.defjvp("scale")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(t * _gamma_slopes(x, a, loc, scale)[3], ans)


@defop("gamma_pdf", "scipy.stats.gamma.pdf(x, a, loc=loc, scale=scale)",
       diff=("x", "a", "loc", "scale"),
       shape=broadcast("x", "a", "loc", "scale"), floating="always",
       sympy=elementwise(_density(_sympy_gamma_logpdf), 4))
def gamma_pdf(x, a, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "gamma.pdf", gamma_pdf)


gamma_pdf.runtime = SCIPY


@gamma_pdf.defvjp
def _(g, ans, x, a, loc, scale):
    dx, da, dloc, dscale = _gamma_slopes(x, a, loc, scale)
    return (unbroadcast(g * ans * dx, x),
            unbroadcast(g * ans * da, a),
            unbroadcast(g * ans * dloc, loc),
            unbroadcast(g * ans * dscale, scale))


@gamma_pdf.defjvp("x")
def _(t, ans, x, a, loc, scale):
    return t * ans * _gamma_slopes(x, a, loc, scale)[0]


@gamma_pdf.defjvp("a")
def _(t, ans, x, a, loc, scale):
    return t * ans * _gamma_slopes(x, a, loc, scale)[1]


@gamma_pdf.defjvp("loc")
def _(t, ans, x, a, loc, scale):
    return t * ans * _gamma_slopes(x, a, loc, scale)[2]


@gamma_pdf.defjvp("scale")
def _(t, ans, x, a, loc, scale):
    return t * ans * _gamma_slopes(x, a, loc, scale)[3]


def _chi2_slopes(x, df, loc, scale):
    """The derivatives of chi2.logpdf in x, df, loc and scale, elementwise: the gamma
    distribution of shape df / 2 and scale 2 * scale."""
    y = (x - loc) / scale
    dy = (0.5 * df - 1.0) / y - 0.5
    ddf = 0.5 * (np.log(0.5 * y) - scipy.special.digamma(0.5 * df))
    return dy / scale, ddf, -dy / scale, -(y * dy + 1.0) / scale


def _sympy_chi2_logpdf(x, df, loc, scale):
    y = _sympy_z(x, loc, scale)
    return ((df / 2 - 1) * sp.log(y) - y / 2 - sp.loggamma(df / 2) - df / 2 * sp.log(2)
            - sp.log(scale))


@defop("chi2_logpdf", "scipy.stats.chi2.logpdf(x, df, loc=loc, scale=scale)",
       diff=("x", "df", "loc", "scale"),
       shape=broadcast("x", "df", "loc", "scale"), floating="always",
       sympy=elementwise(_sympy_chi2_logpdf, 4))
def chi2_logpdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "chi2.logpdf", chi2_logpdf)


chi2_logpdf.runtime = SCIPY


@chi2_logpdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, ddf, dloc, dscale = _chi2_slopes(x, df, loc, scale)
    return (unbroadcast(g * dx, x),
            unbroadcast(g * ddf, df),
            unbroadcast(g * dloc, loc),
            unbroadcast(g * dscale, scale))


@chi2_logpdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _chi2_slopes(x, df, loc, scale)[0], ans)


@chi2_logpdf.defjvp("df")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _chi2_slopes(x, df, loc, scale)[1], ans)


@chi2_logpdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _chi2_slopes(x, df, loc, scale)[2], ans)


@chi2_logpdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * _chi2_slopes(x, df, loc, scale)[3], ans)


@defop("chi2_pdf", "scipy.stats.chi2.pdf(x, df, loc=loc, scale=scale)",
       diff=("x", "df", "loc", "scale"),
       shape=broadcast("x", "df", "loc", "scale"), floating="always",
       sympy=elementwise(_density(_sympy_chi2_logpdf), 4))
def chi2_pdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "chi2.pdf", chi2_pdf)


chi2_pdf.runtime = SCIPY


@chi2_pdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, ddf, dloc, dscale = _chi2_slopes(x, df, loc, scale)
    return (unbroadcast(g * ans * dx, x),
            unbroadcast(g * ans * ddf, df),
            unbroadcast(g * ans * dloc, loc),
            unbroadcast(g * ans * dscale, scale))


@chi2_pdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return t * ans * _chi2_slopes(x, df, loc, scale)[0]


@chi2_pdf.defjvp("df")
def _(t, ans, x, df, loc, scale):
    return t * ans * _chi2_slopes(x, df, loc, scale)[1]


@chi2_pdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return t * ans * _chi2_slopes(x, df, loc, scale)[2]


@chi2_pdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return t * ans * _chi2_slopes(x, df, loc, scale)[3]


def _beta_slopes(x, a, b, loc, scale):
    """The derivatives of beta.logpdf in x, a, b, loc and scale, elementwise."""
    y = (x - loc) / scale
    dy = (a - 1.0) / y - (b - 1.0) / (1.0 - y)
    both = scipy.special.digamma(a + b)
    return (dy / scale, np.log(y) - scipy.special.digamma(a) + both,
            np.log1p(-y) - scipy.special.digamma(b) + both, -dy / scale,
            -(y * dy + 1.0) / scale)


def _sympy_beta_logpdf(x, a, b, loc, scale):
    y = _sympy_z(x, loc, scale)
    return ((a - 1) * sp.log(y) + (b - 1) * sp.log(1 - y) - sp.loggamma(a) - sp.loggamma(b)
            + sp.loggamma(a + b) - sp.log(scale))


# On its support, loc < x < loc + scale (the boundary as gamma's).
@defop("beta_logpdf", "scipy.stats.beta.logpdf(x, a, b, loc=loc, scale=scale)",
       diff=("x", "a", "b", "loc", "scale"),
       shape=broadcast("x", "a", "b", "loc", "scale"), floating="always",
       sympy=elementwise(_sympy_beta_logpdf, 5))
def beta_logpdf(x, a, b, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "beta.logpdf", beta_logpdf)


beta_logpdf.runtime = SCIPY


@beta_logpdf.defvjp
def _(g, ans, x, a, b, loc, scale):
    dx, da, db, dloc, dscale = _beta_slopes(x, a, b, loc, scale)
    return (unbroadcast(g * dx, x),
            unbroadcast(g * da, a),
            unbroadcast(g * db, b),
            unbroadcast(g * dloc, loc),
            unbroadcast(g * dscale, scale))


@beta_logpdf.defjvp("x")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * _beta_slopes(x, a, b, loc, scale)[0], ans)


@beta_logpdf.defjvp("a")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * _beta_slopes(x, a, b, loc, scale)[1], ans)


@beta_logpdf.defjvp("b")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * _beta_slopes(x, a, b, loc, scale)[2], ans)


@beta_logpdf.defjvp("loc")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * _beta_slopes(x, a, b, loc, scale)[3], ans)


@beta_logpdf.defjvp("scale")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * _beta_slopes(x, a, b, loc, scale)[4], ans)


@defop("beta_pdf", "scipy.stats.beta.pdf(x, a, b, loc=loc, scale=scale)",
       diff=("x", "a", "b", "loc", "scale"),
       shape=broadcast("x", "a", "b", "loc", "scale"), floating="always",
       sympy=elementwise(_density(_sympy_beta_logpdf), 5))
def beta_pdf(x, a, b, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "beta.pdf", beta_pdf)


beta_pdf.runtime = SCIPY


@beta_pdf.defvjp
def _(g, ans, x, a, b, loc, scale):
    dx, da, db, dloc, dscale = _beta_slopes(x, a, b, loc, scale)
    return (unbroadcast(g * ans * dx, x),
            unbroadcast(g * ans * da, a),
            unbroadcast(g * ans * db, b),
            unbroadcast(g * ans * dloc, loc),
            unbroadcast(g * ans * dscale, scale))


@beta_pdf.defjvp("x")
def _(t, ans, x, a, b, loc, scale):
    return t * ans * _beta_slopes(x, a, b, loc, scale)[0]


@beta_pdf.defjvp("a")
def _(t, ans, x, a, b, loc, scale):
    return t * ans * _beta_slopes(x, a, b, loc, scale)[1]


@beta_pdf.defjvp("b")
def _(t, ans, x, a, b, loc, scale):
    return t * ans * _beta_slopes(x, a, b, loc, scale)[2]


@beta_pdf.defjvp("loc")
def _(t, ans, x, a, b, loc, scale):
    return t * ans * _beta_slopes(x, a, b, loc, scale)[3]


@beta_pdf.defjvp("scale")
def _(t, ans, x, a, b, loc, scale):
    return t * ans * _beta_slopes(x, a, b, loc, scale)[4]


# ----- poisson -----


_COUNT = ("the count k - loc is an integer: the probability mass function is not "
          "differentiable in it")


def _poisson_slope(k, mu, loc):
    """The derivative of poisson.logpmf in mu, elementwise: (k - loc) / mu - 1, and -1
    where k - loc is 0 (as xlogy's, even at mu = 0)."""
    count = k - loc
    return np.where(count == 0, 0.0, count / np.where(count == 0, 1.0, mu)) - 1.0


def _sympy_poisson_logpmf(k, mu, loc):
    count = k - loc
    return count * sp.log(mu) - mu - sp.loggamma(count + 1)


# The mass function of the counts k (loc shifts them) in the rate mu. k and loc take
# no gradient: a gradient reaching them is refused, with the reason.
@defop("poisson_logpmf", "scipy.stats.poisson.logpmf(k, mu, loc=loc)",
       diff=("mu",), shape=broadcast("k", "mu", "loc"),
       floating="always", sympy=elementwise(_sympy_poisson_logpmf, 3))
def poisson_logpmf(k, mu, loc=0): ...


defer_alias("scipy.stats", "poisson.logpmf", poisson_logpmf)


poisson_logpmf.runtime = SCIPY
poisson_logpmf.no_gradient_to = {"k": _COUNT, "loc": _COUNT}


@poisson_logpmf.defvjp
def _(g, ans, k, mu, loc):
    return unbroadcast(g * _poisson_slope(k, mu, loc), mu)


@poisson_logpmf.defjvp
def _(t, ans, k, mu, loc):
    return broadcast_like(t * _poisson_slope(k, mu, loc), ans)


@defop("poisson_pmf", "scipy.stats.poisson.pmf(k, mu, loc=loc)",
       diff=("mu",), shape=broadcast("k", "mu", "loc"),
       floating="always", sympy=elementwise(_density(_sympy_poisson_logpmf), 3))
def poisson_pmf(k, mu, loc=0): ...


defer_alias("scipy.stats", "poisson.pmf", poisson_pmf)


poisson_pmf.runtime = SCIPY
poisson_pmf.no_gradient_to = {"k": _COUNT, "loc": _COUNT}


@poisson_pmf.defvjp
def _(g, ans, k, mu, loc):
    return unbroadcast(g * ans * _poisson_slope(k, mu, loc), mu)


@poisson_pmf.defjvp
def _(t, ans, k, mu, loc):
    return t * ans * _poisson_slope(k, mu, loc)


# ----- multivariate_normal -----


def multivariate_normal_covariance(cov, x, mean):
    """``cov`` itself, once the shapes of ``multivariate_normal.logpdf(x, mean, cov)``
    are those its rules take: a (d, d) matrix ``cov``, ``mean`` None or of shape (d,),
    and one point ``x`` of shape (d,) or n points of shape (n, d). SciPy takes more (a
    number or a vector of variances for ``cov``, points along other axes), whose
    gradients the rules would not give: those are refused when the derivative runs.

    >>> multivariate_normal_covariance(np.eye(2), np.zeros((3, 2)), None).shape
    (2, 2)
    """
    shape = np.shape(cov)
    if (len(shape) != 2 or shape[0] != shape[1] or np.ndim(x) not in (1, 2)
            or np.shape(x)[-1] != shape[0]
            or mean is not None and np.shape(mean) != shape[:1]):
        raise ValueError(
            "multivariate_normal.logpdf(x, mean, cov) is differentiated for a covariance "
            f"matrix of shape (d, d), a mean of shape (d,) and points x of shape (d,) or "
            f"(n, d); here cov has shape {shape}, mean "
            f"{'None' if mean is None else np.shape(mean)} and x {np.shape(x)}: pass cov as "
            "a matrix (np.diag(variances), variance * np.eye(d)) and the mean as a vector")
    return cov


_covariance = helper_op(multivariate_normal_covariance, diff=("cov",), jvp="linear",
                        shape=shape_like("cov"), sympy=lambda cov, x, mean: cov)
_covariance.kind_params = ("x", "mean")  # their shapes, checked


@_covariance.defvjp
def _(g, ans, cov, x, mean):
    return g


def _mvn_parts(centred, checked):
    """The inverse of the symmetric matrix S SciPy reads from the lower triangle of the
    covariance ``checked``, and the solutions of S s = x - mean for each point (of
    x's shape), from ``centred``, x - mean."""
    lower = np.tril(checked)
    symmetric = lower + np.transpose(np.tril(lower, -1))
    solved = np.transpose(np.linalg.solve(symmetric, np.transpose(centred)))
    return np.linalg.inv(symmetric), solved


def _mvn_vjp(g, centred, checked):
    """For the sum of g * multivariate_normal.logpdf: g s (the gradient in the mean, and
    minus the one in x, of each point), and the gradient in the covariance,
    -(sum(g) S^-1 - sum(g s s^T)) / 2 read through the lower triangle (an entry below
    the diagonal stands for two of S)."""
    inverse, solved = _mvn_parts(centred, checked)
    weighted = np.expand_dims(g, -1) * solved  # (g is a number for one point)
    size = np.shape(solved)[-1]
    spread = np.transpose(np.reshape(weighted, (-1, size))) @ np.reshape(solved, (-1, size))
    full = 0.5 * (spread - np.sum(g) * inverse)
    return weighted, np.tril(full + np.transpose(full), -1) + np.triu(np.tril(full))


def _mvn_jvp_centred(t, ans, centred, checked):
    """The tangent of multivariate_normal.logpdf due to the tangent ``t`` of x - mean,
    in ans's shape: -s . t for each point."""
    solved = _mvn_parts(centred, checked)[1]
    return np.reshape(-np.sum(solved * t, axis=-1), np.shape(ans))


def _mvn_jvp_cov(t, ans, centred, checked):
    """The tangent of multivariate_normal.logpdf due to the tangent ``t`` of the
    covariance (its lower triangle, as SciPy reads it): (s^T T s - tr(S^-1 T)) / 2."""
    inverse, solved = _mvn_parts(centred, checked)
    lower = np.tril(t)
    varied = lower + np.transpose(np.tril(lower, -1))
    total = np.sum((solved @ varied) * solved, axis=-1) - np.sum(inverse * varied)
    return np.reshape(0.5 * total, np.shape(ans))


def _mvn_call(x, mean=None, cov=1, allow_singular=False):
    """multivariate_normal.logpdf's arguments; a mean of None is the op centred at 0."""
    if not (allow_singular is False or isinstance(allow_singular, Const)
            and allow_singular.value is False):
        raise TypeError("allow_singular=True is not supported: the gradient of a singular "
                        "covariance's density is not defined")
    if mean is None or isinstance(mean, Const) and mean.value is None:
        return {"x": x, "cov": cov}
    return {"x": x, "mean": mean, "cov": cov}


def _mvn_pdf_call(*args, **kwargs):
    named = _mvn_call(*args, **kwargs)
    return (multivariate_normal_pdf if "mean" in named else centred_normal_pdf), named


def _mvn_logpdf_call(*args, **kwargs):
    named = _mvn_call(*args, **kwargs)
    return (multivariate_normal_logpdf if "mean" in named else centred_normal_logpdf), named


def _sympy_mvn_logpdf(x, mean, cov):
    lower = np.tril(objects(cov))
    symmetric = matrix(lower + np.transpose(np.tril(lower, -1)))
    size = symmetric.shape[0]
    centre = np.zeros(size, dtype=object) if mean is None else objects(mean)
    inverse, logdet = symmetric.inv(), sp.log(symmetric.det())
    values = []
    for point in objects(x).reshape(-1, size):
        d = sp.Matrix((point - centre).tolist())
        values.append(-(size * sp.log(2 * sp.pi) + logdet + (d.T * inverse * d)[0, 0]) / 2)
    return values[0] if len(values) == 1 else objects(values)


# log N(x; mean, cov) of one point x (d,) or of each of n points (n, d), as SciPy
# computes it; SciPy reads the covariance's lower triangle only, and so do the rules
# (the gradient in an entry below the diagonal counts both entries of the symmetric
# matrix). The gradient is taken for a (d, d) matrix cov and a mean of shape (d,) (see
# multivariate_normal_covariance); with no mean it is centred_normal_logpdf;
# allow_singular=True is refused.
@defop("multivariate_normal_logpdf",
       "scipy.stats.multivariate_normal.logpdf(x, mean=mean, cov=cov)",
       diff=("x", "mean", "cov"), floating="always", sympy=_sympy_mvn_logpdf)
def multivariate_normal_logpdf(x, mean, cov=1): ...


defer_alias("scipy.stats", "multivariate_normal.logpdf", multivariate_normal_logpdf, _mvn_logpdf_call)


multivariate_normal_logpdf.runtime = SCIPY


@multivariate_normal_logpdf.defvjp
def _(g, ans, x, mean, cov):
    weighted, dcov = _mvn_vjp(g, x - mean, multivariate_normal_covariance(cov, x, mean))
    return -weighted, unbroadcast(weighted, mean), dcov


@multivariate_normal_logpdf.defjvp("x")
def _(t, ans, x, mean, cov):
    return _mvn_jvp_centred(t, ans, x - mean, multivariate_normal_covariance(cov, x, mean))


@multivariate_normal_logpdf.defjvp("mean")
def _(t, ans, x, mean, cov):
    return _mvn_jvp_centred(-t, ans, x - mean, multivariate_normal_covariance(cov, x, mean))


@multivariate_normal_logpdf.defjvp("cov")
def _(t, ans, x, mean, cov):
    return _mvn_jvp_cov(t, ans, x - mean, multivariate_normal_covariance(cov, x, mean))


@defop("multivariate_normal_pdf", "scipy.stats.multivariate_normal.pdf(x, mean=mean, cov=cov)",
       diff=("x", "mean", "cov"), floating="always",
       sympy=lambda x, mean, cov: elementwise("exp")(_sympy_mvn_logpdf(x, mean, cov)))
def multivariate_normal_pdf(x, mean, cov=1): ...


defer_alias("scipy.stats", "multivariate_normal.pdf", multivariate_normal_pdf, _mvn_pdf_call)


multivariate_normal_pdf.runtime = SCIPY


@multivariate_normal_pdf.defvjp
def _(g, ans, x, mean, cov):
    weighted, dcov = _mvn_vjp(g * ans, x - mean, multivariate_normal_covariance(cov, x, mean))
    return -weighted, unbroadcast(weighted, mean), dcov


@multivariate_normal_pdf.defjvp("x")
def _(t, ans, x, mean, cov):
    checked = multivariate_normal_covariance(cov, x, mean)
    return ans * _mvn_jvp_centred(t, ans, x - mean, checked)


@multivariate_normal_pdf.defjvp("mean")
def _(t, ans, x, mean, cov):
    checked = multivariate_normal_covariance(cov, x, mean)
    return ans * _mvn_jvp_centred(-t, ans, x - mean, checked)


@multivariate_normal_pdf.defjvp("cov")
def _(t, ans, x, mean, cov):
    checked = multivariate_normal_covariance(cov, x, mean)
    return ans * _mvn_jvp_cov(t, ans, x - mean, checked)


# multivariate_normal.logpdf(x, cov=cov) and .pdf, with no mean (SciPy's zero mean).
@defop("centred_normal_logpdf", "scipy.stats.multivariate_normal.logpdf(x, cov=cov)",
       diff=("x", "cov"), floating="always",
       sympy=lambda x, cov: _sympy_mvn_logpdf(x, None, cov))
def centred_normal_logpdf(x, cov=1): ...


centred_normal_logpdf.runtime = SCIPY


@centred_normal_logpdf.defvjp
def _(g, ans, x, cov):
    weighted, dcov = _mvn_vjp(g, x, multivariate_normal_covariance(cov, x, None))
    return -weighted, dcov


@centred_normal_logpdf.defjvp("x")
def _(t, ans, x, cov):
    return _mvn_jvp_centred(t, ans, x, multivariate_normal_covariance(cov, x, None))


@centred_normal_logpdf.defjvp("cov")
def _(t, ans, x, cov):
    return _mvn_jvp_cov(t, ans, x, multivariate_normal_covariance(cov, x, None))


@defop("centred_normal_pdf", "scipy.stats.multivariate_normal.pdf(x, cov=cov)",
       diff=("x", "cov"), floating="always",
       sympy=lambda x, cov: elementwise("exp")(_sympy_mvn_logpdf(x, None, cov)))
def centred_normal_pdf(x, cov=1): ...


centred_normal_pdf.runtime = SCIPY


@centred_normal_pdf.defvjp
def _(g, ans, x, cov):
    weighted, dcov = _mvn_vjp(g * ans, x, multivariate_normal_covariance(cov, x, None))
    return -weighted, dcov


@centred_normal_pdf.defjvp("x")
def _(t, ans, x, cov):
    return ans * _mvn_jvp_centred(t, ans, x, multivariate_normal_covariance(cov, x, None))


@centred_normal_pdf.defjvp("cov")
def _(t, ans, x, cov):
    return ans * _mvn_jvp_cov(t, ans, x, multivariate_normal_covariance(cov, x, None))


# ----- dirichlet -----


def dirichlet_concentration(alpha, x):
    """``alpha`` itself, once the shapes of ``dirichlet.logpdf(x, alpha)`` are those its
    rules take: K concentrations ``alpha`` and points ``x`` with their K components
    along the first axis, (K,) or (K, n). SciPy also takes K - 1 components (the last
    one is then 1 minus their sum), whose gradients the rules would not give: refused
    when the derivative runs.

    >>> dirichlet_concentration(np.ones(3), np.full((3, 2), 1 / 3)).shape
    (3,)
    """
    if np.ndim(alpha) != 1 or np.ndim(x) not in (1, 2) or np.shape(x)[0] != np.size(alpha):
        raise ValueError(
            "dirichlet.logpdf(x, alpha) is differentiated for K concentrations alpha and "
            f"points x of shape (K,) or (K, n); here alpha has shape {np.shape(alpha)} and "
            f"x {np.shape(x)}: pass every component of x, the last one too")
    return alpha


_concentration = helper_op(dirichlet_concentration, diff=("alpha",), jvp="linear",
                           shape=shape_like("alpha"), sympy=lambda alpha, x: alpha)
_concentration.kind_params = ("x",)  # its shape, checked


@_concentration.defvjp
def _(g, ans, alpha, x):
    return g


def _dirichlet_slopes(x, checked):
    """The derivatives of dirichlet.logpdf in each component of x, (alpha - 1) / x (of
    x's shape), and the part of those in alpha that is the same for each point,
    digamma(sum(alpha)) - digamma(alpha) (each point adds log x)."""
    dx = np.transpose((checked - 1.0) / np.transpose(x))
    shared = scipy.special.digamma(np.sum(checked)) - scipy.special.digamma(checked)
    return dx, shared


def _dirichlet_vjp(g, x, alpha):
    checked = dirichlet_concentration(alpha, x)
    dx, shared = _dirichlet_slopes(x, checked)
    per_point = np.reshape(g * np.log(x), (np.shape(x)[0], -1))  # (g: a number, or one per point)
    return g * dx, np.sum(per_point, axis=1) + np.sum(g) * shared


def _dirichlet_jvp_x(t, ans, x, alpha):
    dx = _dirichlet_slopes(x, dirichlet_concentration(alpha, x))[0]
    return np.reshape(np.sum(t * dx, axis=0), np.shape(ans))


def _dirichlet_jvp_alpha(t, ans, x, alpha):
    shared = _dirichlet_slopes(x, dirichlet_concentration(alpha, x))[1]
    return np.reshape(t @ np.log(x) + np.sum(t * shared), np.shape(ans))


def _sympy_dirichlet_logpdf(x, alpha):
    alpha = objects(alpha)
    columns = objects(x).reshape(len(alpha), -1).T
    shared = sp.loggamma(sum(alpha)) - sum(sp.loggamma(a) for a in alpha)
    values = [shared + sum((a - 1) * sp.log(c) for a, c in zip(alpha, column))
              for column in columns]
    return values[0] if len(values) == 1 else objects(values)


# The density of x on the simplex: x's components along its first axis, one point (K,)
# or n of them (K, n); the gradient in x is that of the formula, sum((alpha - 1) log x),
# in each component (SciPy refuses x off the simplex, so finite differences move x
# along it, through a softmax for instance).
@defop("dirichlet_logpdf", "scipy.stats.dirichlet.logpdf(x, alpha)",
       diff=("x", "alpha"), floating="always",
       sympy=_sympy_dirichlet_logpdf)
def dirichlet_logpdf(x, alpha): ...


defer_alias("scipy.stats", "dirichlet.logpdf", dirichlet_logpdf)


dirichlet_logpdf.runtime = SCIPY


@dirichlet_logpdf.defvjp
def _(g, ans, x, alpha):
    return _dirichlet_vjp(g, x, alpha)


@dirichlet_logpdf.defjvp("x")
def _(t, ans, x, alpha):
    return _dirichlet_jvp_x(t, ans, x, alpha)


@dirichlet_logpdf.defjvp("alpha")
def _(t, ans, x, alpha):
    return _dirichlet_jvp_alpha(t, ans, x, alpha)


@defop("dirichlet_pdf", "scipy.stats.dirichlet.pdf(x, alpha)",
       diff=("x", "alpha"), floating="always",
       sympy=lambda x, alpha: elementwise("exp")(_sympy_dirichlet_logpdf(x, alpha)))
def dirichlet_pdf(x, alpha): ...


defer_alias("scipy.stats", "dirichlet.pdf", dirichlet_pdf)


dirichlet_pdf.runtime = SCIPY


@dirichlet_pdf.defvjp
def _(g, ans, x, alpha):
    return _dirichlet_vjp(g * ans, x, alpha)


@dirichlet_pdf.defjvp("x")
def _(t, ans, x, alpha):
    return ans * _dirichlet_jvp_x(t, ans, x, alpha)


@dirichlet_pdf.defjvp("alpha")
def _(t, ans, x, alpha):
    return ans * _dirichlet_jvp_alpha(t, ans, x, alpha)


# ----- the CDFs of t, gamma, chi2 and beta -----
#
# F(x) = G((x - loc) / scale): the derivative in x is the density, in loc minus the
# density and in scale minus the density times z. The derivative in a shape (df, a,
# b) is an integral with no closed form in the ops autodiff knows; as in autograd
# and JAX, there is no rule for it, and a gradient reaching a shape is refused.

_SHAPE_OF_CDF = ("the derivative of a CDF in its shape has no closed form: as in JAX "
                 "and autograd, there is no rule for it")


def _cdf_slopes(density, x, loc, scale):
    """The derivatives of a location-scale CDF in x, loc and scale, from its density at x."""
    return density, -density, -density * ((x - loc) / scale)


def _sympy_t_cdf(x, df, loc, scale):
    # 1/2 + sign(z)/2 * I(z^2 / (df + z^2); 1/2, df/2), the regularised incomplete beta
    z = _sympy_z(x, loc, scale)
    return (1 + sp.sign(z) * sp.betainc_regularized(sp.Rational(1, 2), df / 2, 0,
                                                     z * z / (df + z * z))) / 2


@defop("t_cdf", "scipy.stats.t.cdf(x, df, loc=loc, scale=scale)",
       diff=("x", "loc", "scale"), shape=broadcast("x", "df", "loc", "scale"),
       floating="always", sympy=elementwise(_sympy_t_cdf, 4))
def t_cdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "t.cdf", t_cdf)


t_cdf.runtime = SCIPY
t_cdf.no_gradient_to = {"df": _SHAPE_OF_CDF}


@t_cdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, dloc, dscale = _cdf_slopes(scipy.stats.t.pdf(x, df, loc, scale), x, loc, scale)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@t_cdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * scipy.stats.t.pdf(x, df, loc, scale), ans)


@t_cdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(-t * scipy.stats.t.pdf(x, df, loc, scale), ans)


@t_cdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(-t * scipy.stats.t.pdf(x, df, loc, scale) * ((x - loc) / scale), ans)


def _sympy_gamma_cdf(x, a, loc, scale):
    return sp.lowergamma(a, _sympy_z(x, loc, scale)) / sp.gamma(a)


@defop("gamma_cdf", "scipy.stats.gamma.cdf(x, a, loc=loc, scale=scale)",
       diff=("x", "loc", "scale"), shape=broadcast("x", "a", "loc", "scale"),
       floating="always", sympy=elementwise(_sympy_gamma_cdf, 4))
def gamma_cdf(x, a, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "gamma.cdf", gamma_cdf)


gamma_cdf.runtime = SCIPY
gamma_cdf.no_gradient_to = {"a": _SHAPE_OF_CDF}


@gamma_cdf.defvjp
def _(g, ans, x, a, loc, scale):
    dx, dloc, dscale = _cdf_slopes(scipy.stats.gamma.pdf(x, a, loc, scale), x, loc, scale)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@gamma_cdf.defjvp("x")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(t * scipy.stats.gamma.pdf(x, a, loc, scale), ans)


@gamma_cdf.defjvp("loc")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(-t * scipy.stats.gamma.pdf(x, a, loc, scale), ans)


@gamma_cdf.defjvp("scale")
def _(t, ans, x, a, loc, scale):
    return broadcast_like(-t * scipy.stats.gamma.pdf(x, a, loc, scale) * ((x - loc) / scale),
                          ans)


def _sympy_chi2_cdf(x, df, loc, scale):
    return sp.lowergamma(df / 2, _sympy_z(x, loc, scale) / 2) / sp.gamma(df / 2)


@defop("chi2_cdf", "scipy.stats.chi2.cdf(x, df, loc=loc, scale=scale)",
       diff=("x", "loc", "scale"), shape=broadcast("x", "df", "loc", "scale"),
       floating="always", sympy=elementwise(_sympy_chi2_cdf, 4))
def chi2_cdf(x, df, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "chi2.cdf", chi2_cdf)


chi2_cdf.runtime = SCIPY
chi2_cdf.no_gradient_to = {"df": _SHAPE_OF_CDF}


@chi2_cdf.defvjp
def _(g, ans, x, df, loc, scale):
    dx, dloc, dscale = _cdf_slopes(scipy.stats.chi2.pdf(x, df, loc, scale), x, loc, scale)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@chi2_cdf.defjvp("x")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(t * scipy.stats.chi2.pdf(x, df, loc, scale), ans)


@chi2_cdf.defjvp("loc")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(-t * scipy.stats.chi2.pdf(x, df, loc, scale), ans)


@chi2_cdf.defjvp("scale")
def _(t, ans, x, df, loc, scale):
    return broadcast_like(-t * scipy.stats.chi2.pdf(x, df, loc, scale) * ((x - loc) / scale),
                          ans)


def _sympy_beta_cdf(x, a, b, loc, scale):
    return sp.betainc_regularized(a, b, 0, _sympy_z(x, loc, scale))


@defop("beta_cdf", "scipy.stats.beta.cdf(x, a, b, loc=loc, scale=scale)",
       diff=("x", "loc", "scale"),
       shape=broadcast("x", "a", "b", "loc", "scale"), floating="always",
       sympy=elementwise(_sympy_beta_cdf, 5))
def beta_cdf(x, a, b, loc=0.0, scale=1.0): ...


defer_alias("scipy.stats", "beta.cdf", beta_cdf)


beta_cdf.runtime = SCIPY
beta_cdf.no_gradient_to = {"a": _SHAPE_OF_CDF, "b": _SHAPE_OF_CDF}


@beta_cdf.defvjp
def _(g, ans, x, a, b, loc, scale):
    dx, dloc, dscale = _cdf_slopes(scipy.stats.beta.pdf(x, a, b, loc, scale), x, loc, scale)
    return unbroadcast(g * dx, x), unbroadcast(g * dloc, loc), unbroadcast(g * dscale, scale)


@beta_cdf.defjvp("x")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(t * scipy.stats.beta.pdf(x, a, b, loc, scale), ans)


@beta_cdf.defjvp("loc")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(-t * scipy.stats.beta.pdf(x, a, b, loc, scale), ans)


@beta_cdf.defjvp("scale")
def _(t, ans, x, a, b, loc, scale):
    return broadcast_like(-t * scipy.stats.beta.pdf(x, a, b, loc, scale) * ((x - loc) / scale),
                          ans)
