"""Hessians and forward Jacobians from one batched call (transforms/batching.py):
against central differences of the gradient, against one call per column, with
jit=True, with structures, several wrt, complex arguments, float32, and the functions
whose products cannot be batched (one call per column, the same values)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import autodiff as ad

M = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.8]])


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def looping(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x * s + x[0])
    k = 0
    while k < 2:
        s = s * 1.1 + x[1] * s
        k += 1
    return np.sum(s ** 2)


def while_until(x):
    y = x * 1.0
    while np.sum(y * y) < 20.0:
        y = 1.5 * y + np.sin(y)
    return np.sum(y ** 3)


def branches(x):
    h = np.where(x > 0.0, x ** 2, -x)
    return np.sum(np.maximum(h, 0.1 * x) * x)


def indexing(x):
    rows = x.reshape(2, 3)
    picked = rows[:, [0, 2]] * rows[1, 1:]
    return np.sum(picked ** 2) + np.sum(x[np.array([4, 0, 4])] * x[::2].sum())


def products(x):
    A = x.reshape(2, 3)
    v = x[:3]
    return np.sum((A @ M) ** 2) + (v @ M @ v) * np.sum(A @ v) + np.tanh(M @ v) @ v


def scalars(x):
    return np.sum(2.0 * x ** 3 + 1.0) / (1.0 + np.sum(x * x)) + 3.0 * x[0] * x[-1]


def in_place(x):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
        out[i] = total
    return np.sum(out * x)


def repeated_writes(x):
    out = np.ones_like(x)
    out[1:3] = x[:2] * x[3]
    out[[0, 0]] = x[:2] ** 3  # (the last write stays)
    return np.sum(out * np.cos(x))


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


FUNCTIONS = [rosen, looping, while_until, branches, indexing, products, scalars, in_place,
             repeated_writes]


def _per_column(jacobian):
    jacobian = copy.copy(jacobian)
    jacobian._per_column = True
    return jacobian


def _hessian_by_differences(f, x, h=1e-5):
    gradient = ad.grad(f)
    columns = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        columns.append((gradient(x + e) - gradient(x - e)) / (2 * h))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessians_match_differences_and_per_column(f):
    x = np.random.default_rng(0).uniform(-0.9, 0.9, size=6)
    H = ad.hessian(f)
    assert H.batched_jvp is not None  # one batched call, not a column each
    got = H(x)
    np.testing.assert_allclose(got, _per_column(H)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, _hessian_by_differences(f, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, got.T, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessians_with_jit(f):
    x = np.random.default_rng(1).uniform(-0.9, 0.9, size=6)
    expected = _per_column(ad.hessian(f))(x)
    got = ad.hessian(f, jit=True)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ad.hessian(f, jit=True)(x + 0.01), ad.hessian(f)(x + 0.01),
                               rtol=1e-12, atol=1e-12)


def test_the_source_shows_the_batched_product():
    source = ad.hessian(rosen).source
    assert "stacked on a leading axis" in source
    assert "batch_like" in source


def test_hessian_of_a_dict_of_parameters():
    rng = np.random.default_rng(2)
    params = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2)}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    H = ad.hessian(mlp_loss)
    got, expected = H(params, x, y), _per_column(H)(params, x, y)
    for a in params:
        for b in params:
            assert got[a][b].shape == params[a].shape + params[b].shape
            np.testing.assert_allclose(got[a][b], expected[a][b], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(got[a][b], np.moveaxis(
                got[b][a], range(params[b].ndim), range(-params[b].ndim, 0)).reshape(
                    got[a][b].shape), rtol=1e-9, atol=1e-9)
    # a column against differences of the gradient
    h, k = 1e-6, (1, 2)
    up, down = copy.deepcopy(params), copy.deepcopy(params)
    up["W1"][k] += h
    down["W1"][k] -= h
    g_up, g_down = ad.grad(mlp_loss)(up, x, y), ad.grad(mlp_loss)(down, x, y)
    for a in params:
        np.testing.assert_allclose(got[a]["W1"][(...,) + k], (g_up[a] - g_down[a]) / (2 * h),
                                   rtol=1e-5, atol=1e-7)


def test_several_wrt_and_a_scalar_argument():
    def f(x, a, y):
        return np.sum(np.sin(x * a) * y ** 2) + a ** 3

    x, y, a = np.array([0.3, -0.2, 0.5]), np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]]), 0.7
    H = ad.hessian(f, wrt=(0, 1, 2))
    got, expected = H(x, a, y), _per_column(H)(x, a, y)
    for row_got, row_expected in zip(got, expected):
        for g, e in zip(row_got, row_expected):
            assert type(g) is type(e) and np.shape(g) == np.shape(e)
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    assert isinstance(got[1][1], float)


def test_forward_jacobians_of_vector_functions():
    def f(x, W):
        return np.tanh(W @ x) * x[0], {"sum": np.sum(W * x), "const": np.ones(2)}

    x, W = np.array([0.2, -0.4, 0.9]), np.arange(6.0).reshape(2, 3) / 5
    J = ad.jacobian(f, wrt=(0, 1), mode="fwd")
    got, expected = J(x, W), _per_column(J)(x, W)
    for g, e in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    assert not np.any(got[1]["const"][0])  # an output no tangent reaches: zeros


def test_complex_arguments_along_one_and_i():
    def f(z):
        return np.sum(np.abs(z * z + 1.0) ** 2)

    z = np.array([0.3 + 0.2j, -0.5 + 0.1j])
    J = ad.jacobian(f, mode="fwd")
    np.testing.assert_allclose(J(z), _per_column(J)(z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J(z), ad.grad(f)(z), rtol=1e-10)


def test_float32_stays_float32():
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    for f in (rosen, looping, in_place):
        H = ad.hessian(f)(x)
        assert H.dtype == np.float32
        np.testing.assert_allclose(H, ad.hessian(f)(x.astype(np.float64)), rtol=2e-3, atol=2e-3)


def test_gradient_of_a_gradient_through_a_loop_by_forward_mode():
    def loop(x):
        s = x[0]
        for _ in range(4):
            s = np.sin(s * x[1]) + x[2]
        return s

    def outer(x):
        return np.sum(ad.grad(loop)(x) ** 2)

    x = np.array([0.3, 1.2, -0.4])
    gradient = ad.grad(outer)  # the reverse sweep inside reads a tape: forward over it
    h, expected = 1e-6, []
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        expected.append((outer(x + e) - outer(x - e)) / (2 * h))
    np.testing.assert_allclose(gradient(x), expected, rtol=1e-5, atol=1e-7)


def test_an_effect_on_primal_values_runs_once(capsys):
    def noisy(x):
        print("value", float(np.sum(x)))
        return np.sum(x ** 3)

    H = ad.hessian(noisy)
    x = np.array([1.0, 2.0])
    capsys.readouterr()
    np.testing.assert_allclose(H(x), np.diag(6 * x))
    assert capsys.readouterr().out.count("value") == 1  # one call: printed once


def test_a_product_that_cannot_be_batched_takes_one_call_per_column():
    def halves(x):
        a, b = np.split(x, 2)
        return np.sum(a * b ** 2)

    H = ad.hessian(halves)
    x = np.array([0.5, -1.0, 2.0, 0.25])
    np.testing.assert_allclose(H(x), _hessian_by_differences(halves, x), rtol=1e-6, atol=1e-7)
    assert H.batched_jvp is None  # np.split's adjoint is a list: per column
    assert "one call per argument element" in H.source


def test_numba_keeps_one_call_per_column():
    pytest.importorskip("numba")
    H = ad.hessian(rosen, jit="numba")
    x = np.linspace(-1, 1, 5)
    assert H.batched_jvp is None
    np.testing.assert_allclose(H(x), ad.hessian(rosen)(x), rtol=1e-12)


def test_a_batched_call_that_fails_when_it_runs_falls_back_to_columns(monkeypatch):
    """A form the batched product cannot run (found only when it runs) costs the
    batching, never the Jacobian; an error of the code itself is raised as it is."""
    H = ad.hessian(rosen)
    x = np.linspace(-1, 1, 5)
    expected = ad.hessian(rosen)(x)

    def fails(*args, **kwargs):
        raise TypeError("a list where an array was expected")

    monkeypatch.setattr(type(H), "_batched", fails)
    np.testing.assert_allclose(H(x), expected, rtol=1e-12)

    def checked(x):
        if x[0] > 0:
            raise ValueError("x[0] must be negative")
        return np.sum(x ** 3)

    with pytest.raises(ValueError, match="must be negative"):
        ad.hessian(checked)(np.array([1.0, 2.0]))
