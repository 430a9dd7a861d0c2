"""Regression tests for gradients that were silently wrong (a zero, a nan) or failed.

One test per defect, each with the numbers it must give, in reverse mode, forward
mode and, where the op is smooth there, to second order.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences


def hessian_by_differences(f, x, h=1e-5):
    """Central differences of ``ad.grad(f)``: the Hessian of a scalar ``f`` at ``x``."""
    grad = ad.grad(f)
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = h
        step = step.reshape(x.shape)
        columns.append((np.asarray(grad(x + step)) - np.asarray(grad(x - step))) / (2 * h))
    return np.moveaxis(np.array(columns).reshape(x.shape + x.shape), range(x.ndim),
                       range(x.ndim, 2 * x.ndim)) if x.ndim else columns[0]


# ----- np.array of nested lists -----


def nested_rows(x):
    return np.sum(np.array([[x, 2 * x], [x ** 2, 1.0]]))


def nested_arrays(x, y):
    return np.sum(np.array([[x, 2.0 * y], [np.sin(x), x * y]]) ** 2)


def nested_deep(x):
    return np.sum(np.array([[[x, 1.0], [x ** 3, 2.0]], [[3.0, x], [np.cos(x), x * x]]]) ** 2)


def test_nested_lists_in_np_array_carry_their_gradients():
    assert ad.grad(nested_rows)(3.0) == pytest.approx(9.0)
    assert ad.jvp(nested_rows)(3.0, 1.0) == pytest.approx((19.0, 9.0))
    assert ad.grad(ad.grad(nested_rows))(3.0) == pytest.approx(2.0)
    assert ad.hessian(nested_rows)(3.0) == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    check_against_finite_differences(nested_arrays, [rng.normal(size=3), rng.normal(size=3)],
                                     wrt=(0, 1))
    check_against_finite_differences(nested_deep, [0.7])
    assert ad.hessian(nested_deep)(0.7) == pytest.approx(
        hessian_by_differences(nested_deep, 0.7), rel=1e-6)


# ----- lists built by the function, read as arrays -----


def sum_of_built_list(a):
    return np.sum([i * 3 for i in a])


def sum_of_squares_list(a):
    return np.sum([i * i for i in a])


def convolution_by_loops(x):
    rows = []
    for i in range(2):
        row = []
        for j in range(2):
            row.append(np.sum(x[i:i + 2, j:j + 2]) ** 2)
        rows.append(row)
    return np.sum(np.array(rows))


def test_lists_built_by_the_function_read_as_arrays():
    np.testing.assert_allclose(ad.grad(sum_of_built_list)(np.ones(3)), [3.0, 3.0, 3.0])
    assert ad.jvp(sum_of_built_list)(np.ones(3), np.ones(3)) == pytest.approx((9.0, 9.0))
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ad.grad(sum_of_squares_list)(x), 2 * x)
    np.testing.assert_allclose(ad.hessian(sum_of_squares_list)(x), 2 * np.eye(3))
    x = np.arange(9.0).reshape(3, 3) / 10
    sums = np.array([[np.sum(x[i:i + 2, j:j + 2]) for j in range(2)] for i in range(2)])
    expected = np.zeros((3, 3))
    for i in range(2):
        for j in range(2):
            expected[i:i + 2, j:j + 2] += 2 * sums[i, j]
    np.testing.assert_allclose(ad.grad(convolution_by_loops)(x), expected)
    check_against_finite_differences(convolution_by_loops, [x])
    np.testing.assert_allclose(ad.hessian(convolution_by_loops)(x),
                               hessian_by_differences(convolution_by_loops, x), atol=1e-6)


# ----- edge points where the derivative exists -----


def zero_to_the(y):
    return np.power(0.0, y)


def zeros_to_the(y):
    return np.sum(np.power(np.array([0.0, 2.0]), y))


def to_the_zero(x):
    return x ** 0.0


def to_the_one(x):
    return x ** 1.0


def to_the_two(x):
    return x ** 2.0


def test_power_at_zero_follows_the_jax_convention():
    assert ad.grad(zero_to_the)(2.0) == 0.0
    assert ad.jvp(zero_to_the)(2.0, 1.0) == (0.0, 0.0)
    assert ad.grad(ad.grad(zero_to_the))(2.0) == 0.0
    assert ad.grad(zeros_to_the)(1.5) == pytest.approx(2.0 ** 1.5 * np.log(2.0))
    assert ad.hessian(zeros_to_the)(1.5) == pytest.approx(2.0 ** 1.5 * np.log(2.0) ** 2)
    # value, first and second derivative at 0, in every mode
    for f, first, second in [(to_the_zero, 0.0, 0.0), (to_the_one, 1.0, 0.0),
                             (to_the_two, 0.0, 2.0)]:
        assert ad.grad(f)(0.0) == first, f.__name__
        assert ad.jvp(f)(0.0, 1.0)[1] == first, f.__name__
        assert ad.grad(ad.grad(f))(0.0) == second, f.__name__
        assert ad.hessian(f)(0.0) == second, f.__name__
        summed = ad.grad(lambda x: np.sum(f(x)))  # noqa: B023 - compiled here, in this trip
        np.testing.assert_array_equal(summed(np.zeros(2)), [first] * 2)


def std_of(x):
    return np.std(x)


def std_rows(x):
    return np.sum(np.std(x, axis=1))


def var_of(x):
    return np.var(x)


def test_std_of_one_element_has_derivative_zero(recwarn):
    # autograd's convention: std of a single element is 0 whatever it is
    assert ad.grad(std_of)(3.0) == 0.0
    assert ad.jvp(std_of)(3.0, 1.0)[1] == 0.0
    assert ad.hessian(std_of)(3.0) == 0.0
    np.testing.assert_array_equal(ad.grad(std_of)(np.ones(1)), [0.0])
    np.testing.assert_array_equal(ad.grad(std_rows)(np.ones((2, 1))), [[0.0], [0.0]])
    assert ad.grad(var_of)(3.0) == 0.0
    np.testing.assert_array_equal(ad.grad(var_of)(np.ones(3)), np.zeros(3))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    # equal elements: a cone point, no derivative (nan, as in JAX and autograd)
    with np.errstate(all="ignore"):
        assert np.isnan(ad.grad(std_of)(np.ones(3))).all()
    check_against_finite_differences(std_rows, [np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])])


# ----- np.r_ and np.c_ -----


def joined_by_r(x):
    return np.sum(np.r_[x, 2 * x] * np.arange(4.0))


def joined_by_c(x):
    return np.sum(np.c_[x, 2 * x] * np.arange(4.0).reshape(2, 2))


def joined_cubed(x, y):
    return np.sum(np.r_[x, 1:3, y, 3.0] ** 3)


joined_cubed_grad = ad.grad(joined_cubed, wrt=0)


def along_joined_grad(x):
    return np.sum(joined_cubed_grad(x, 0.5) * x)


def matrix_by_r(x):
    return np.sum(np.r_['r', x, x])


def test_r_and_c_concatenate_with_gradients():
    np.testing.assert_allclose(ad.grad(joined_by_r)(np.ones(2)), [4.0, 7.0])
    assert ad.jvp(joined_by_r)(np.ones(2), np.ones(2)) == pytest.approx((11.0, 11.0))
    np.testing.assert_allclose(ad.grad(joined_by_c)(np.ones(2)), [2.0, 8.0])
    assert ad.jvp(joined_by_c)(np.ones(2), np.ones(2)) == pytest.approx((10.0, 10.0))
    x = np.array([0.5, -1.0])
    dx, dy = ad.grad(joined_cubed, wrt=(0, 1))(x, 2.0)
    np.testing.assert_allclose(dx, 3 * x ** 2)
    assert dy == pytest.approx(12.0)
    np.testing.assert_allclose(ad.hessian(joined_cubed, wrt=0)(x, 2.0), np.diag(6 * x))
    assert ad.hessian(joined_cubed, wrt=1)(x, 2.0) == pytest.approx(12.0)
    # reverse over reverse: d/dx sum(3 x^2 * x) = 9 x^2
    np.testing.assert_allclose(ad.grad(along_joined_grad)(x), 9 * x ** 2)
    with pytest.raises(ad.AutodiffError, match="np.r_"):
        ad.grad(matrix_by_r)(np.ones(2))


# ----- np.linspace -----


def spaced(x, y):
    return np.sum(np.linspace(x, y, 5) ** 2)


def spaced_arrays(x, y):
    return np.sum(np.sin(np.linspace(x, y, 4, endpoint=False, axis=-1)) ** 2)


def test_linspace_differentiates_with_respect_to_its_endpoints():
    # samples 1, 1.25, ..., 2 with weights (1 - f, f) on (start, stop)
    assert ad.grad(spaced, wrt=(0, 1))(1.0, 2.0) == pytest.approx((6.25, 8.75))
    assert ad.jvp(spaced, wrt=(0, 1))(1.0, 2.0, (1.0, 0.0)) == pytest.approx((11.875, 6.25))
    assert ad.hessian(spaced, wrt=0)(1.0, 2.0) == pytest.approx(3.75)
    assert ad.grad(ad.grad(spaced))(1.0, 2.0) == pytest.approx(3.75)
    check_against_finite_differences(spaced_arrays, [np.array([0.3, -0.2, 1.0]),
                                                     np.array([[2.0], [3.0]])], wrt=(0, 1))
    np.testing.assert_allclose(ad.hessian(spaced_arrays)(np.array([0.3, -0.2, 1.0]),
                                                         np.array([[2.0], [3.0]])),
                               hessian_by_differences(
                                   lambda x: spaced_arrays(x, np.array([[2.0], [3.0]])),
                                   np.array([0.3, -0.2, 1.0])), atol=1e-6)


# ----- np.einsum in the sublist form -----


WEIGHTS = np.arange(6.0).reshape(3, 2)


def einsum_sublists(x):
    return np.sum(np.einsum(x, [0, 1], [1, 0]) * WEIGHTS)


def einsum_sublists_ellipsis(x):
    return np.sum(np.einsum(x, [Ellipsis, 1], [1, Ellipsis]) ** 2)


def test_einsum_sublist_form_has_gradients():
    x = np.ones((2, 3))
    np.testing.assert_allclose(ad.grad(einsum_sublists)(x), WEIGHTS.T)
    assert ad.jvp(einsum_sublists)(x, x) == pytest.approx((15.0, 15.0))
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(ad.grad(einsum_sublists_ellipsis)(x), 2 * x)
    assert ad.jvp(einsum_sublists_ellipsis)(x, x)[1] == pytest.approx(2 * np.sum(x * x))
    np.testing.assert_allclose(ad.hessian(einsum_sublists_ellipsis)(x).reshape(6, 6),
                               2 * np.eye(6))


# ----- second order through solve; trace and dot above two dimensions -----


def solve_squared(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


solve_squared_grad = ad.grad(solve_squared, wrt=(0, 1))


def solve_grads_summed(A, b):
    dA, db = solve_squared_grad(A, b)
    return np.sum(dA) + np.sum(db)


def trace_3d(x):
    return np.sum(np.trace(x, offset=1, axis1=2, axis2=0) ** 2)


DOT_RIGHT = np.random.default_rng(5).normal(size=(4, 3, 2))


def dot_3d(x):
    return np.sum(np.tanh(np.dot(x, DOT_RIGHT)))


trace_3d_grad = ad.grad(trace_3d)
dot_3d_grad = ad.grad(dot_3d)
ALONG = np.random.default_rng(6).normal(size=(3, 2, 4))


def along_trace_grad(x):
    return np.sum(trace_3d_grad(x) * ALONG)


def along_dot_grad(x):
    return np.sum(dot_3d_grad(x) * ALONG[:2, :, :3])


def test_solve_to_second_order_and_trace_and_dot_above_two_dimensions():
    A = np.array([[2.1, 0.1], [0.1, 2.1]])
    b = np.array([1.0, -0.5])
    x = np.linalg.solve(A, b)
    np.testing.assert_allclose(ad.hessian(solve_squared, wrt=1)(A, b),
                               2 * np.linalg.inv(A).T @ np.linalg.inv(A))
    check_against_finite_differences(solve_grads_summed, [A, b], wrt=(0, 1), rtol=1e-5)
    np.testing.assert_allclose(solve_squared_grad(A, b)[1], 2 * np.linalg.solve(A.T, x))
    rng = np.random.default_rng(1)
    for f, point in [(trace_3d, rng.normal(size=(3, 2, 4))), (dot_3d, rng.normal(size=(2, 2, 3)))]:
        check_against_finite_differences(f, [point])
        np.testing.assert_allclose(ad.hessian(f)(point), hessian_by_differences(f, point),
                                   atol=1e-6)
    # a hand-made case: the trace of each (2, 2) slice along the last axis
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.trace(x)))(np.ones((2, 2, 3))),
                               np.eye(2)[:, :, None] * np.ones(3))
    # reverse over reverse: the Hessian applied to a direction
    for f, along, point, direction in [
            (trace_3d, along_trace_grad, rng.normal(size=(3, 2, 4)), ALONG),
            (dot_3d, along_dot_grad, rng.normal(size=(2, 2, 3)), ALONG[:2, :, :3])]:
        hessian = ad.hessian(f)(point).reshape(point.size, point.size)
        np.testing.assert_allclose(ad.grad(along)(point).ravel(),
                                   hessian @ direction.ravel(), atol=1e-10)
