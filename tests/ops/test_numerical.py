"""Numerical staples against finite differences: np.convolve and np.correlate (every
mode, either operand the longer, equal lengths, length-1 kernels), scipy.signal's
convolve and correlate, sliding windows, the trapezoidal rule, np.gradient, np.polyval,
np.interp and np.polyfit."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import NonDifferentiableError
from autodiff.ops import OPS
from tests.helpers import check_against_finite_differences
from tests.ops.table import ops_reached, table_test

CASES = [
    # np.convolve and np.correlate: NumPy swaps the operands when v is the longer
    ("np.convolve(x, y)", [(5,), (3,)]), ("np.convolve(x, y)", [(2,), (4,)]),
    ("np.convolve(x, y, 'valid')", [(5,), (3,)]), ("np.convolve(x, y, mode='valid')", [(3,), (5,)]),
    ("np.convolve(x, y, 'same')", [(5,), (3,)]), ("np.convolve(x, y, mode='same')", [(2,), (5,)]),
    ("np.convolve(x, y, 'same')", [(4,), (4,)]), ("np.convolve(x, y, 'valid')", [(4,), (4,)]),
    ("np.convolve(x, y, mode='same')", [(6,), (1,)]), ("np.convolve(x, y, 'valid')", [(1,), (3,)]),
    ("np.convolve(x, y, 'same')", [(3,), (6,)]), ("np.convolve(x, x * y)", [(3,), (3,)]),
    ("np.correlate(x, y)", [(5,), (3,)]), ("np.correlate(x, y)", [(3,), (5,)]),
    ("np.correlate(x, y, 'full')", [(5,), (2,)]), ("np.correlate(x, y, mode='full')", [(2,), (4,)]),
    ("np.correlate(x, y, 'same')", [(5,), (3,)]), ("np.correlate(x, y, 'same')", [(2,), (5,)]),
    ("np.correlate(x, y, 'same')", [(3,), (6,)]), ("np.correlate(x, y, mode='same')", [(4,), (4,)]),
    ("np.correlate(x, y, 'valid')", [(4,), (4,)]), ("np.correlate(x, y, 1)", [(1,), (4,)]),
    ("np.correlate(x, y, mode='full')", [(4,), (1,)]), ("np.correlate(np.sin(x), x)", [(4,)]),
    # sliding windows: over every axis, chosen axes, an axis windowed twice
    ("np.lib.stride_tricks.sliding_window_view(x, 3)", [(5,)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 1)", [(3,)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 3))", [(4, 5)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 2, axis=1)", [(3, 4)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 3, axis=-2)", [(4, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 0))", [(3, 2, 4)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(0, 0))", [(6, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 2)) ** 2", [(3, 3)]),
    ("np.einsum('...ij,ij->...', np.lib.stride_tricks.sliding_window_view(x, (2, 2)), y)",
     [(4, 3), (2, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 2) @ y", [(5,), (2,)]),
    # the trapezoidal rule: steps dx, sample points along the axis or of y's shape
    ("np.trapezoid(x)", [(5,)]), ("np.trapezoid(x, dx=0.5)", [(2, 4)]),
    ("np.trapezoid(x, dx=y, axis=0)", [(3, 2), ()]), ("np.trapezoid(x, axis=1)", [(2, 3, 4)]),
    ("np.trapezoid(x, y)", [(4,), (4,)]), ("np.trapezoid(x, y, axis=0)", [(4, 2), (4,)]),
    ("np.trapezoid(x, y, axis=1)", [(2, 3, 2), (3,)]), ("np.trapezoid(x, x=y)", [(2, 3), (2, 3)]),
    ("np.trapezoid(x, y, axis=-2)", [(3, 2), (3, 2)]), ("np.trapezoid(x, np.cumsum(y))", [(1,), (1,)]),
    ("np.trapezoid(x, y)", [(2,), (2,)]), ("np.trapezoid(x * x, x, dx=3.0)", [(3,)]),
    ("np.trapezoid(x, y)", [(2, 3), (1, 3)]),
    # np.gradient: one array (no axis for a vector, or one axis), a tuple for several axes
    ("np.gradient(x)", [(5,)]), ("np.gradient(x, 0.5)", [(2,)]), ("np.gradient(x, edge_order=2)", [(3,)]),
    ("np.gradient(x, 2.0, edge_order=2)", [(6,)]), ("np.gradient(x, axis=0)", [(4, 3)]),
    ("np.gradient(x, 0.3, axis=-1, edge_order=2)", [(2, 3, 4)]), ("np.gradient(x, axis=(1,))", [(2, 2)]),
    ("np.gradient(x, axis=(0, 1))[1]", [(3, 4)]),
    ("np.gradient(x, 0.5, 2.0, axis=(1, 0), edge_order=2)[0]", [(3, 4)]),
    ("np.stack(np.gradient(x, 0.25, axis=(0, 1, 2)))", [(2, 3, 2)]),
    ("np.gradient(x, axis=(0, 1))[0] * np.gradient(x, axis=(0, 1))[1]", [(3, 3)]),
    ("np.gradient(np.gradient(x, edge_order=2), 0.5)", [(4,)]),
    # polynomials: constant, linear and higher, at scalars and arrays, through 0
    ("np.polyval(x, y)", [(3,), (4,)]), ("np.polyval(x, y)", [(4,), (2, 3)]),
    ("np.polyval(x, y)", [(1,), (3,)]), ("np.polyval(x, y)", [(2,), ()]),
    ("np.polyval(x, y)", [(5,), None]), ("np.polyval(x, y - y)", [(3,), (2,)]),
    ("np.polyval(x, np.array([0.0, 1.0, -2.0]))", [(4,)]), ("np.polyval(np.array([1.0, -2.0, 0.5]), x)", [(3, 2)]),
    # interpolation: inside, outside (ends, or left and right), a scalar; xp uneven
    ("np.interp(x, np.array([-1.7, -0.4, 0.3, 1.2, 1.9]), y)", [(6,), (5,)]),
    ("np.interp(2.5 * x, np.array([-1.7, -0.4, 0.3, 1.2, 1.9]), y)", [(3, 2), (5,)]),
    ("np.interp(2.5 * x, np.array([-1.1, 0.2, 1.3]), y, left=-3.0, right=2.0)", [(7,), (3,)]),
    ("np.interp(2.5 * x, np.array([-1.1, 0.2, 1.3]), y, 0.5)", [(7,), (3,)]),
    ("np.interp(x, np.array([-0.9, 0.8]), y, right=1.5)", [(), (2,)]),
    ("np.interp(x, np.array([-0.3, 0.1, 0.4]), np.sin(x))", [(3,)]),
    ("np.interp(x, np.linspace(-2.0, 2.0, 6), np.array([1.0, -2.0, 0.5, 3.0, 0.0, 1.0]))", [(2, 3)]),
    ("np.interp(x * y, np.array([-1.1, 0.2, 1.3]), y ** 2)", [(3,), (3,)]),
    # np.ediff1d: the flattened differences, between to_begin and to_end
    ("np.ediff1d(x)", [(5,)]), ("np.ediff1d(x)", [(2, 3)]),
    ("np.ediff1d(x, to_begin=y)", [(4,), ()]), ("np.ediff1d(x, to_end=y)", [(4,), (2,)]),
    ("np.ediff1d(x, y, to_begin=y * y)", [(2, 2), (3,)]),
    ("np.ediff1d(x, to_end=[0.0, 1.0], to_begin=-1.0)", [(3,)]),
    # np.unwrap: the identity where the periods added stay the same
    ("np.unwrap(4.0 * x)", [(6,)]), ("np.unwrap(4.0 * x, axis=0)", [(5, 2)]),
    ("np.unwrap(3.0 * x, discont=4.0)", [(2, 5)]), ("np.unwrap(x * 5.0, period=2.0)", [(6,)]),
    ("np.unwrap(x * 5.0, 1.5, -1, period=3.0) * x", [(3, 4)]),
]

test_numerical = table_test(CASES, seed=1900, routes=("sympy",))


# np.polyfit, built from np.vander and np.linalg.lstsq (which SymPy has no form of): in y,
# x and the weights, one fit or several (y's columns), at x's own or a given rcond.
POLYFIT_CASES = [
    ("np.polyfit(np.linspace(-1.0, 1.0, 5), x, 2)", [(5,)]),
    ("np.polyfit(np.linspace(-1.0, 1.0, 4), x, deg=1)", [(4, 3)]),
    ("np.polyfit(x + np.arange(6.0), y, 3)", [(6,), (6,)]),
    ("np.polyfit(x + np.arange(5.0), y, 2, w=np.linspace(0.5, 1.5, 5))", [(5,), (5, 2)]),
    ("np.polyfit(np.arange(5.0), x, 2, w=y + 2.0)", [(5,), (5,)]),
    ("np.polyfit(x + np.arange(4.0), y, 1, rcond=1e-10)", [(4,), (4,)]),
    ("np.polyfit(x + np.arange(3.0), y, 0)", [(3,), (3,)]),
    ("np.polyval(np.polyfit(x + np.arange(5.0), y, 2), 0.5)", [(5,), (5,)]),
]

test_polyfit = table_test(POLYFIT_CASES, seed=1950)


def test_polyfit_is_numpys_fit_and_runs_its_other_results_as_they_are(user_module):
    module = user_module("""
        import numpy as np


        def coefficients(x, y, w):
            return np.sum(np.polyfit(x, y, 3, w=w) * np.arange(1.0, 9.0).reshape(4, 2))


        def with_residuals(x, y):
            c, residuals, rank, values, rcond = np.polyfit(x, y, 2, full=True)
            return np.sum(c) + residuals[0]
    """)
    rng = np.random.default_rng(3)
    x, y, w = np.linspace(-2.0, 3.0, 7), rng.normal(size=(7, 2)), rng.uniform(0.5, 2.0, 7)
    value, _ = ad.value_and_grad(module.coefficients, wrt=1)(x, y, w)
    assert value == np.sum(np.polyfit(x, y, 3, w=w) * np.arange(1.0, 9.0).reshape(4, 2))
    with pytest.raises(ad.AutodiffError, match="np.polyfit"):
        ad.grad(module.with_residuals, wrt=1)(x, y[:, 0])


def test_every_numerical_op_is_checked_by_the_table():
    """As tests/ops/test_registry.py, for this module's ops: each op with rules is
    reached by a case, its rules by the derivatives the checks build, and each op users
    write has a SymPy form."""
    written = {"convolve", "correlate", "sliding_window_view", "trapezoid", "trapezoid_uniform",
               "gradient", "gradients", "polyval", "interp", "unwrap"}
    ours = written | {"sliding_window_sum", "gradient_transpose"}  # the transposes
    seen = ops_reached(CASES)
    assert not ours - seen, f"numerical ops no case goes through: {sorted(ours - seen)}"
    assert all(OPS[name].vjp is not None for name in ours)
    assert all(OPS[name].sympy is not None for name in written)


# ----- edge values, conventions and refusals -----


@pytest.fixture
def staples(user_module):
    return user_module("""
        import numpy as np


        def knots(x, fp):
            return np.sum(np.interp(x, np.array([0.0, 1.0, 3.0]), fp) * np.array([1.0, 2.0, 3.0, 4.0, 5.0]))


        def clamped(x, fp):
            return np.sum(np.interp(x, np.array([0.0, 1.0, 3.0]), fp, left=-1.0, right=7.0))


        def moving_knots(x, xp):
            return np.sum(np.interp(x, xp, np.array([0.0, 1.0, 4.0])))


        def circular(x):
            return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 2.0]), period=2.0))


        def image_gradient(x):
            gx, gy = np.gradient(x)
            return np.sum(gx * gy)


        def sampled_gradient(x):
            return np.sum(np.gradient(x, np.array([0.0, 0.5, 2.0])) ** 2)


        def short(x):
            return np.sum(np.gradient(x, edge_order=2))


        def stacked_polynomials(p, x):
            return np.sum(np.polyval(p, x))
    """)


def test_interp_takes_the_right_hand_slope_at_knots_and_none_outside(staples):
    # at the knots 0, 1 and 3 (the last: the last segment's slope), below and above
    x = np.array([0.0, 1.0, 3.0, -0.5, 4.0])
    fp = np.array([2.0, 0.0, 4.0])
    dx, dfp = ad.grad(staples.knots, wrt=(0, 1))(x, fp)
    np.testing.assert_array_equal(dx, [1.0 * -2.0, 2.0 * 2.0, 3.0 * 2.0, 0.0, 0.0])
    # each knot's value reaches its own sample; outside, the nearest end's
    np.testing.assert_array_equal(dfp, [1.0 + 4.0, 2.0, 3.0 + 5.0])
    _, slope = ad.jvp(staples.knots, wrt=0)(x, fp, np.ones(5))
    assert slope == dx.sum()
    dx, dfp = ad.grad(staples.clamped, wrt=(0, 1))(x, fp)
    np.testing.assert_array_equal(dx, [-2.0, 2.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(dfp, [1.0, 1.0, 1.0])  # left and right take the outside


@pytest.mark.parametrize("jit", [False, True])
def test_interp_refuses_a_gradient_into_its_sample_points_and_period(staples, jit):
    with pytest.raises(NonDifferentiableError, match="'interp' passes no gradient to its "
                                                     "argument 'xp'"):
        ad.grad(staples.moving_knots, wrt=1, jit=jit)(np.array([0.5]), np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ad.AutodiffError, match="period"):
        ad.grad(staples.circular, jit=jit)(np.array([0.5, 1.5]))


def test_gradient_refuses_what_its_rules_do_not_take(staples):
    with pytest.raises(ad.AutodiffError, match=r"axis=\(0, 1, \.\.\.\)") as error:
        ad.grad(staples.image_gradient)(np.ones((3, 4)))
    assert "gx, gy = np.gradient(x)" in str(error.value)  # the user's line
    with pytest.raises(ad.AutodiffError, match="uniform steps"):
        ad.grad(staples.sampled_gradient)(np.ones(3))
    with pytest.raises(ad.AutodiffError, match="Shape of array too small"):
        ad.grad(staples.short)(np.ones(2))  # as NumPy: edge_order 2 needs 3 points
    with pytest.raises(ad.AutodiffError, match="they are a vector"):
        ad.grad(staples.stacked_polynomials)(np.ones((3, 2)), np.ones(2))


def test_numba_refuses_these_derivatives_at_the_users_line(user_module):
    pytest.importorskip("numba")
    module = user_module("""
        import numpy as np


        def smooth(x, k):
            return np.sum(np.convolve(x, k, 'same') ** 2)


        def windows(x):
            return np.sum(np.lib.stride_tricks.sliding_window_view(x, 2) ** 2)
    """)
    with pytest.raises(ad.AutodiffError, match=r"np.convolve\(x, k, 'same'\)"):
        ad.grad(module.smooth, jit="numba")(np.ones(5), np.ones(3))
    with pytest.raises(ad.AutodiffError, match="sliding_window_view"):
        ad.grad(module.windows, jit="numba")(np.ones(5))


# ----- programs written with them -----


def test_a_one_dimensional_convolution_layer_and_a_smoothing_loss(user_module):
    module = user_module("""
        import numpy as np
        from numpy.lib.stride_tricks import sliding_window_view


        def conv_layer_loss(params, signal, target):
            # two channels of width-3 filters over a 1-d signal, a ReLU-free tanh, a readout
            windows = sliding_window_view(signal, 3)               # (n - 2, 3)
            hidden = np.tanh(np.einsum('tk,ck->tc', windows, params['filters']) + params['bias'])
            prediction = hidden @ params['readout']
            return np.mean((prediction - target) ** 2)


        def image_loss(kernel, image):
            patches = sliding_window_view(image, (3, 3))           # (h - 2, w - 2, 3, 3)
            response = np.einsum('...ij,ij->...', patches, kernel)
            return np.sum(response ** 2) / response.size


        def smoothing_loss(x, data):
            kernel = np.array([0.25, 0.5, 0.25])
            smooth = np.convolve(x, kernel, mode='same')
            roughness = np.sum(np.gradient(x, 0.1) ** 2)
            return np.sum((smooth - data) ** 2) + 0.01 * roughness + np.trapezoid(x ** 2, dx=0.1)
    """)
    rng = np.random.default_rng(19)
    params = {"filters": rng.normal(size=(2, 3)), "bias": rng.normal(size=2),
              "readout": rng.normal(size=2)}
    signal, target = rng.normal(size=9), rng.normal(size=7)
    ad.check_grad(module.conv_layer_loss, params, signal, target, wrt=(0, 1))
    ad.check_grad(module.image_loss, rng.normal(size=(3, 3)), rng.normal(size=(5, 6)),
                  wrt=(0, 1))
    ad.check_grad(module.smoothing_loss, rng.normal(size=8), rng.normal(size=8))
    check_against_finite_differences(module.smoothing_loss, [rng.normal(size=8),
                                                             rng.normal(size=8)],
                                     wrt=(0, 1), second_order=True)
