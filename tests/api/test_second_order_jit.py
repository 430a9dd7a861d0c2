"""``jit=True`` (and ``jit="numba"``) on ``hvp``, ``hessian`` and ``jacobian``: the same
numbers as the general derivatives, which are checked against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def trajectory(x, w):
    for _ in range(4):
        x = np.tanh(w * x + 0.1)
    return x


X = np.random.default_rng(5).standard_normal(6)
W = np.random.default_rng(6).standard_normal(6)


@pytest.mark.parametrize("jit", [True, "numba"])
def test_hessian_and_hvp(jit):
    expected = ad.hessian(rosenbrock)(X)
    gradient = ad.grad(rosenbrock)
    columns = np.stack([ad.numeric_grad(lambda x: gradient(x)[i], X) for i in range(6)])
    np.testing.assert_allclose(expected, columns, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ad.hessian(rosenbrock, jit=jit)(X), expected, rtol=1e-12)
    v = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(ad.hvp(rosenbrock, jit=jit)(X, v), expected @ v, rtol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd", None])
def test_jacobian_of_a_loop(mode):
    expected = ad.jacobian(trajectory, wrt=(0, 1), mode=mode)(X, W)
    numeric = np.stack([ad.numeric_grad(lambda x, w: trajectory(x, w)[i], X, W, wrt=0)
                        for i in range(6)])
    np.testing.assert_allclose(expected[0], numeric, rtol=1e-6, atol=1e-8)
    for got, want in zip(ad.jacobian(trajectory, wrt=(0, 1), mode=mode, jit=True)(X, W),
                         expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
