"""Regression tests for transforms that once gave a wrong number or refused a valid
program: derivatives with several outputs taken again, custom rules returning the
wrong number of gradients, ``range`` inside ``enumerate``/``zip``, a ternary before
a loop, and the NaN an unselected ``np.where`` branch used to leak into gradients.

Every expected number is worked out by hand or by central differences in float64.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import AutodiffError


def numeric(f, x, eps=1e-6):
    """Central differences of the scalar-valued ``f`` (possibly returning arrays or
    nested tuples of them) at the float or array ``x``."""
    x = np.asarray(x, dtype=np.float64)

    def flat(value):
        if isinstance(value, tuple):
            return np.concatenate([flat(v) for v in value])
        return np.ravel(np.asarray(value, dtype=np.float64))

    columns = []
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        columns.append((flat(f(up)) - flat(f(down))) / (2 * eps))
    return np.stack(columns, axis=-1)


# ----- 1. derivatives returning several things, differentiated again -----


def cube(x):
    return x ** 3


def sin_times(x, y):
    return np.sin(x) * y


def sum_sin_squared(z):
    return np.sum(np.sin(z) ** 2)


def sum_cubes(z):
    return np.sum(z ** 3)


VALUE_AND_GRAD_CUBE = ad.value_and_grad(cube)
VALUE_AND_GRAD_SIN2 = ad.value_and_grad(sum_sin_squared)
JVP_SUM_CUBES = ad.jvp(sum_cubes)


def value_plus_gradient(x):
    v, g = VALUE_AND_GRAD_CUBE(x)
    return v + g


def value_times_gradient(x):
    v, g = VALUE_AND_GRAD_SIN2(x)
    return v * np.sum(g)


def value_times_tangent(x):
    v, t = JVP_SUM_CUBES(x, np.ones_like(x))
    return v * t


def test_derivatives_with_several_outputs_are_functions_with_several_outputs():
    push = ad.jvp(cube)
    # jvp of jvp reads the inner tangent: at x=2, t=1 along (dx, dt) = (1, 1), the
    # outer tangent is (f'(x) dx, f''(x) t dx + f'(x) dt) = (12, 12 + 12)
    assert ad.jvp(push, wrt=(0, "tangent"))(2.0, 1.0, (1.0, 1.0)) == ((8.0, 12.0), (12.0, 24.0))
    assert ad.jvp(push, wrt=(0, "tangent"), jit=True)(2.0, 1.0, (1.0, 1.0)) == (
        (8.0, 12.0), (12.0, 24.0))
    # vjp of jvp weighs both outputs: d/dx [f(x) + f'(x) t] = 12 + 12 t
    assert ad.vjp(push)(2.0, 3.0, (1.0, 1.0)) == 12.0 + 12.0 * 3.0
    assert ad.jacobian(push, wrt=(0, 1))(2.0, 1.0) == ((12.0, 0.0), (12.0, 12.0))

    # a jvp over two arguments, pulled back through all three of its inputs
    push2 = ad.jvp(sin_times, wrt=(0, 1))
    x, y, tx, ty = 0.5, 2.0, 1.0, 3.0
    pulled = ad.vjp(push2, wrt=(0, 1))(x, y, (tx, ty), (1.0, 1.0))
    # seeds (1, 1) on (sin x y, cos x y tx + sin x ty)
    np.testing.assert_allclose(pulled[0],
                               math.cos(x) * y - math.sin(x) * y * tx + math.cos(x) * ty)
    np.testing.assert_allclose(pulled[1], math.sin(x) + math.cos(x) * tx)
    # the tangent is a tuple: its gradient is a tuple, (cos x y, sin x)
    by_tangent = ad.vjp(push2, wrt="tangent")(x, y, (tx, ty), (1.0, 1.0))
    assert type(by_tangent) is tuple
    np.testing.assert_allclose(by_tangent, (math.cos(x) * y, math.sin(x)))

    # a value_and_grad of two arguments (output (v, (gx, gy))) under vjp
    pull = ad.vjp(ad.value_and_grad(sin_times, wrt=(0, 1)), wrt=(0, 1))
    got = pull(x, y, (1.0, (1.0, 1.0)))
    # d/dx [sin x y + cos x y + sin x] and d/dy [sin x y + cos x y + sin x]
    np.testing.assert_allclose(got, (math.cos(x) * y - math.sin(x) * y + math.cos(x),
                                     math.sin(x) + math.cos(x)))

    # grad of a function calling value_and_grad: x^3 + 3x^2 -> 3x^2 + 6x = 24 at 2
    assert ad.grad(value_plus_gradient)(2.0) == 24.0
    assert ad.jvp(value_plus_gradient)(2.0, 1.0) == (20.0, 24.0)

    x = np.array([0.3, 0.7])
    for f in (value_times_gradient, value_times_tangent):
        gradient = ad.grad(f)(x)
        np.testing.assert_allclose(gradient, numeric(f, x)[0], rtol=1e-6)
        np.testing.assert_allclose(ad.grad(f, jit=True)(x), gradient, rtol=1e-12)
        hessian = ad.hessian(f)(x)
        np.testing.assert_allclose(hessian, numeric(ad.grad(f), x), rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10)


# ----- 2. a custom rule returning the wrong number of gradients -----


def logsumexp_rows(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis)


def logsumexp_bare(g, ans, a, axis):
    return np.expand_dims(g, axis) * np.exp(a - np.expand_dims(ans, axis))


def logsumexp_pair(g, ans, a, axis):
    return np.expand_dims(g, axis) * np.exp(a - np.expand_dims(ans, axis)), None


def weighted_logsumexp(x):
    return np.sum(logsumexp_rows(x, 1) * np.array([1.0, 2.0, 3.0]))


def scale_by(g, b):
    return g * b


def scaled(a, b):
    return a * b


def scaled_rule(g, ans, a, b):
    return scale_by(g, b)  # one array at run time, unknown to the compiler


def three_gradients(g, ans, a, b):
    return g * b, g * a, None


def scale_by_rule(gg, ans, g, b):
    return gg * b, None


def weighted_scaled(x):
    return np.sum(scaled(x, 2.0))


def test_custom_rule_returning_one_array_for_several_parameters_is_an_error():
    x = np.arange(12.0).reshape(3, 4) / 5
    with ad.register_gradient(logsumexp_rows, logsumexp_bare), \
            pytest.raises(AutodiffError) as caught:
        ad.grad(weighted_logsumexp)
    message = str(caught.value)
    # once indexed with [0]: row 0 of the gradient copied into every row
    assert "'logsumexp_bare' of 'logsumexp_rows'" in message
    line = logsumexp_bare.__code__.co_firstlineno
    assert f"test_correctness_transforms.py:{line}" in message
    assert "returns one array" in message and "(a, axis)" in message
    assert caught.value.lineno == weighted_logsumexp.__code__.co_firstlineno + 1
    assert "None for a parameter without one" in caught.value.hint

    with ad.register_gradient(logsumexp_rows, logsumexp_pair):
        got = ad.grad(weighted_logsumexp)(x)
    softmax = np.exp(x) / np.sum(np.exp(x), axis=1, keepdims=True)
    np.testing.assert_allclose(got, softmax * np.array([[1.0], [2.0], [3.0]]), rtol=1e-12)

    # a count known only at run time is checked when the rule runs
    with ad.register_gradient(scale_by, scale_by_rule), \
            ad.register_gradient(scaled, scaled_rule):
        derivative = ad.grad(weighted_scaled)
        with pytest.raises(AutodiffError) as caught:
            derivative(np.ones(3))
    message = str(caught.value)
    line = scaled_rule.__code__.co_firstlineno
    assert f"'scaled_rule' of 'scaled' (test_correctness_transforms.py:{line})" in message
    assert "returned one ndarray of shape (3,), but it must return 2 gradients" in message
    assert caught.value.lineno == weighted_scaled.__code__.co_firstlineno + 1

    # a tuple of the wrong length
    with ad.register_gradient(scaled, three_gradients), \
            pytest.raises(AutodiffError, match="returns 3 gradients, but 'scaled' has 2"):
        ad.grad(weighted_scaled)


# ----- 3. range inside enumerate and zip -----


def enumerate_range(x):
    s = 0.0
    for k, i in enumerate(range(1, 4)):
        s = s + k * i * x
    return s


def zip_range(x):
    s = 0.0
    for i, xi in zip(range(1, 4), x):
        s = s + i * xi
    return s


def zip_range_of_argument(x, n):
    s = 0.0
    for i, xi in zip(range(1, n, 2), x):
        s = s + i * xi ** 2
    return s


def enumerate_range_of_argument(x, n):
    s = 0.0
    for k, i in enumerate(range(2, n)):
        s = s + k * i * x
    return s


@pytest.mark.parametrize("jit", [False, True])
def test_range_inside_enumerate_and_zip(jit):
    # sum of k * i over (0, 1), (1, 2), (2, 3): 8
    assert ad.grad(enumerate_range, jit=jit)(1.0) == 8.0
    assert np.allclose(ad.jvp(enumerate_range, jit=jit)(1.0, 1.0), (8.0, 8.0))
    x = np.ones(3)
    np.testing.assert_array_equal(ad.grad(zip_range, jit=jit)(x), [1.0, 2.0, 3.0])
    assert np.allclose(ad.jvp(zip_range, jit=jit)(x, np.array([1.0, 0.0, 2.0])), (6.0, 7.0))
    # bounds known only when called: range(1, 6, 2) is 1, 3, 5, and zip stops at it
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(ad.grad(zip_range_of_argument, jit=jit)(x, 6),
                                  [2.0, 12.0, 30.0, 0.0, 0.0])
    assert np.allclose(ad.jvp(zip_range_of_argument, jit=jit)(x, 6, np.ones(5)),
                       (1.0 + 12.0 + 45.0, 44.0))
    # range(2, 5) is 2, 3, 4: 0 * 2 + 1 * 3 + 2 * 4
    assert ad.grad(enumerate_range_of_argument, jit=jit)(1.0, 5) == 11.0
    assert np.allclose(ad.jvp(enumerate_range_of_argument, jit=jit)(1.0, 5, 1.0), (11.0, 11.0))
    assert ad.grad(enumerate_range_of_argument, jit=jit)(1.0, 2) == 0.0


# ----- 4. a ternary with a named constant before a loop that updates it -----


def kepler(M, e):
    E = M if e < 0.8 else math.pi
    for _ in range(5):
        E = E - (E - e * np.sin(E) - M) / (1 - e * np.cos(E))
    return E


@pytest.mark.parametrize("e", [0.5, 0.9])
def test_ternary_with_named_constant_before_a_loop(e):
    M = 1.0
    dM, de = ad.grad(kepler, wrt=(0, 1))(M, e)
    np.testing.assert_allclose(dM, numeric(lambda m: kepler(float(m), e), M)[0, 0], rtol=1e-7)
    np.testing.assert_allclose(de, numeric(lambda s: kepler(M, float(s)), e)[0, 0], rtol=1e-7)
    # near the solution of E - e sin E = M: dE/dM = 1 / (1 - e cos E), dE/de = sin E dE/dM
    E = kepler(M, e)
    np.testing.assert_allclose((dM, de), (1 / (1 - e * np.cos(E)), np.sin(E) / (1 - e * np.cos(E))),
                               rtol=1e-6)
    assert ad.grad(kepler, wrt=(0, 1), jit=True)(M, e) == (dM, de)
    value, tangent = ad.jvp(kepler, wrt=(0, 1))(M, e, (1.0, 2.0))
    assert value == E
    np.testing.assert_allclose(tangent, dM + 2.0 * de, rtol=1e-12)


# ----- 5. no NaN from the branch np.where did not take -----


def softplus_sum(x):
    return np.sum(np.where(x > 20, x, np.log1p(np.exp(x))))


def softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(x)))


def sqrt_or_zero(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def identity_or_log(x):
    return np.sum(np.where(x < 1, x, np.log(x)))


def softplus_twice(x):
    for _ in range(2):
        x = np.where(x > 20, x, np.log1p(np.exp(x)))
    return np.sum(x * 2 + np.sin(x))


def squared_miss(x):
    # the adjoint reaching sin is exactly 0 at x = 1 without any masking: its second
    # derivative 2 cos(1)^2 must survive the zero-keeping products
    return (np.where(x > 0, np.sin(x), x) - math.sin(1.0)) ** 2


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def polynomial(x, y):
    return np.sum(x * y / (1 + x ** 2) - y / 3)


@pytest.fixture
def quiet():
    with warnings.catch_warnings():  # the unselected branch overflows, as in NumPy
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            yield


@pytest.mark.parametrize("jit", [False, True, "numba"])
def test_where_unselected_branch_gives_no_nan(quiet, jit):
    if jit == "numba":
        pytest.importorskip("numba")
    x = np.array([800.0, 1.0, -3.0])
    grad = ad.grad(softplus_sum, jit=jit)(x)
    np.testing.assert_allclose(grad, [1.0, sigmoid(1.0), sigmoid(-3.0)], rtol=1e-12)
    np.testing.assert_array_equal(ad.grad(sqrt_or_zero, jit=jit)(np.array([0.0, 4.0])),
                                  [0.0, 0.25])
    at = np.array([-1.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(ad.grad(identity_or_log, jit=jit)(at), [1.0, 1.0, 1.0, 0.5])
    # forward mode: the unselected branch's tangent is infinite or NaN, and dropped
    _, tangent = ad.jvp(softplus_sum, jit=jit)(x, np.ones(3))
    np.testing.assert_allclose(tangent, np.sum(grad), rtol=1e-12)
    assert ad.jvp(sqrt_or_zero, jit=jit)(np.array([0.0, 4.0]), np.ones(2))[1] == 0.25
    assert ad.jvp(identity_or_log, jit=jit)(at, np.ones(4))[1] == 3.5


def test_where_unselected_branch_second_order(quiet):
    assert ad.grad(softplus)(800.0) == 1.0
    assert ad.grad(ad.grad(softplus))(800.0) == 0.0
    s = sigmoid(1.0)
    np.testing.assert_allclose(ad.grad(ad.grad(softplus))(1.0), s * (1 - s), rtol=1e-12)
    x = np.array([800.0, 1.0])
    np.testing.assert_allclose(ad.hessian(softplus_sum)(x), [[0.0, 0.0], [0.0, s * (1 - s)]],
                               rtol=1e-12)
    at = np.array([-1.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(ad.hessian(identity_or_log)(at), np.diag([0, 0, 0, -0.25]))
    # through a loop and more arithmetic after the where
    gradient = ad.grad(softplus_twice)(x)
    inner = np.log1p(np.exp(1.0))
    outer = np.log1p(np.exp(inner))
    expected = (2 + np.cos(outer)) * sigmoid(inner) * s
    np.testing.assert_allclose(gradient, [2 + np.cos(800.0), expected], rtol=1e-12)
    assert np.all(np.isfinite(ad.hessian(softplus_twice)(x)))
    # second derivatives at an adjoint that is zero by itself stay exact
    assert ad.grad(squared_miss)(1.0) == 0.0
    np.testing.assert_allclose(ad.hessian(squared_miss)(1.0), 2 * math.cos(1.0) ** 2,
                               rtol=1e-12)
    np.testing.assert_allclose(ad.grad(ad.grad(squared_miss))(1.0), 2 * math.cos(1.0) ** 2,
                               rtol=1e-12)


def test_code_without_where_is_unchanged():
    # the zero-keeping products appear only downstream of a where's adjoint
    for f in (polynomial,):
        for derivative in (ad.grad(f), ad.grad(f, wrt=(0, 1)), ad.hessian(f).jvp):
            assert "keep_zeros" not in derivative.source
    assert "keep_zeros" in ad.grad(softplus_sum).source
