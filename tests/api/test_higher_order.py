"""Second derivatives: ``ad.hessian`` (forward mode over the reverse-mode gradient),
``ad.hvp``, and ``ad.grad`` of a function that calls a generated gradient.

They differentiate derivative graphs, so they go through the rules of the helper
ops those graphs call (``unbroadcast``, ``expand_reduced``, the matmul adjoints,
``product_of_others``, ``einsum_grads``, ``solve_grads``, the list ops, ...).
Everything is compared in float64 with central differences of ``ad.grad(f)``,
which the rest of the suite checks against differences of ``f`` itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import NonDifferentiableError
from tests.helpers import UserModules

SOURCE = """
import numpy as np

import autodiff as ad

M = np.array([[3.0, 0.5, 0.2], [0.1, 2.5, -0.3], [0.4, 0.2, 4.0]])
A = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])


def gradient_along(f, v):
    # A function calling a generated gradient: its gradient is the Hessian times v.
    df = ad.grad(f)

    def along(x):
        return np.sum(df(x) * v)
    return along


# ----- functions of a vector -----

def smooth(x):
    return np.sum(np.tanh(x) * np.exp(0.3 * x) + np.log(1.0 + x * x))


def matmul_vectors(x):
    return (x @ M @ x) * (np.tanh(A @ x) @ np.array([1.0, -0.5]))


def matmul_matrices(x):
    W = np.reshape(x, (2, 3))
    return np.sum(np.tanh(W @ M) @ W.T)


def dot_and_inner(x):
    return np.dot(2.0, x) @ np.cos(x) + np.inner(x, M @ x) + np.sum(np.inner(np.outer(x, x), M) ** 2)


def reductions(x):
    X = np.reshape(x, (2, 3))
    return (np.sum(np.mean(X * X, axis=0) ** 2)
            + np.sum(np.max(X * X, axis=1, keepdims=True) * X)
            + np.sum(np.sum(np.exp(X), axis=1) ** 2)
            + np.sum(np.mean(np.tanh(X), axis=(0, 1), keepdims=True) ** 2)
            + np.sum(np.max(X, axis=0) ** 3))


def broadcasting(x):
    b = np.array([1.0, 2.0, -1.0, 0.5])
    c = x * b + np.tanh(x - b)
    return np.sum(c * c) + np.sum(np.mean(c, axis=0) ** 3)


def loop(x):
    s = x
    total = 0.0
    for i in range(3):
        s = np.tanh(s * x + 0.5)
        total = total + np.sum(s * s)
    return total


def branch(x):
    if np.sum(x) > 0:
        y = np.exp(x) * x
    else:
        y = x ** 3
    return np.sum(y * np.sin(x))


def appended(x):
    acc = []
    for i in range(3):
        acc.append(np.tanh(x * x[i]))
    return np.sum(np.stack(acc) ** 2) + np.sum(sum(acc) * acc[1])


def appended_linear(x):
    # The adjoints popped off the list vary with x, though nothing else in the loop does.
    acc = []
    for i in range(3):
        acc.append(x * (i + 1.0))
    return np.sum(np.stack(acc) ** 2)


def element_updates(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = np.tanh(x[i] * x[2 - i])
    return np.sum(out * out * x)


def joined(x):
    y = np.concatenate([x, x * x, np.sin(x[:2])])
    return np.sum(y ** 3) + np.sum(np.tanh(np.stack([x, np.exp(x)], axis=1)) @ np.array([1.0, -2.0]))


def product(x):
    return np.prod(x) + np.sum(np.prod(np.reshape(x, (2, 2)), axis=0) ** 2)


def plain_product(x):
    return np.prod(x)


def einsum(x):
    X = np.reshape(x, (2, 3))
    return np.einsum("ij,jk,ik->", X, M, X) + np.sum(np.einsum("ij,ij->i", X, np.tanh(X)) ** 2)


def solve(x):
    a = M + np.outer(x, x)
    y = np.linalg.solve(a, x)
    return np.sum(y * y) + np.sum(np.linalg.solve(a, M) * M)


# ----- functions of a float -----

def scalar_chain(x):
    return np.tanh(x) * np.exp(x) + np.log(1.0 + x * x) * x


def scalar_loop(x):
    y = x
    for i in range(3):
        y = np.sin(y) * x
    return y


def scalar_branch(x):
    if x > 0:
        y = x ** 3
    else:
        y = np.exp(x) * x
    return y * np.sin(x)
"""

X3 = [0.7, -0.4, 0.3]
X6 = [0.7, -0.4, 0.3, 0.2, -0.9, 0.5]
POINTS = {
    "smooth": X3, "matmul_vectors": X3, "matmul_matrices": X6, "dot_and_inner": X3,
    "reductions": X6, "broadcasting": [[0.7], [-0.4], [0.3]], "loop": X3, "branch": X3,
    "appended": X3, "appended_linear": X3, "element_updates": X3, "joined": X3,
    "product": [0.7, 0.0, 0.3, -1.2], "einsum": X6, "solve": X3,
}


def _known(reason: str, raises):
    return pytest.mark.xfail(reason=reason, raises=raises, strict=True)


# Reverse over reverse that does not work yet (none known).
GRAD_OF_GRAD_KNOWN: dict = {}


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("higher_order"))(SOURCE)


def differences_of_gradient(f, x, step: float = 1e-6):
    """Central differences of ``ad.grad(f)``: the Hessian, shaped ``x.shape + x.shape``."""
    gradient = ad.grad(f)
    if isinstance(x, float):
        return (gradient(x + step) - gradient(x - step)) / (2 * step)
    hessian = np.zeros(x.shape + x.shape)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += step
        minus[i] -= step
        hessian[(...,) + i] = (gradient(plus) - gradient(minus)) / (2 * step)
    return hessian


def _flat(hessian, x):
    return hessian.reshape(x.size, x.size)


@pytest.mark.parametrize("name", POINTS)
def test_hessian_and_hvp_match_differences_of_the_gradient(functions, name):
    f, x = getattr(functions, name), np.array(POINTS[name])
    expected = differences_of_gradient(f, x)
    hessian = ad.hessian(f)(x)
    assert hessian.shape == x.shape + x.shape
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-7)
    v = np.random.default_rng(3).uniform(-1.0, 1.0, size=x.shape)
    product = ad.hvp(f)(x, v)
    assert np.shape(product) == x.shape
    np.testing.assert_allclose(product.ravel(), _flat(hessian, x) @ v.ravel(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", [pytest.param(n, marks=GRAD_OF_GRAD_KNOWN.get(n, ()))
                                  for n in POINTS])
def test_gradient_of_a_function_calling_a_gradient(functions, name):
    f, x = getattr(functions, name), np.array(POINTS[name])
    v = np.random.default_rng(4).uniform(-1.0, 1.0, size=x.shape)
    ours = ad.grad(functions.gradient_along(f, v))(x)
    expected = _flat(differences_of_gradient(f, x), x).T @ v.ravel()
    np.testing.assert_allclose(np.ravel(ours), expected, rtol=1e-6, atol=1e-7)


SCALARS = [(name, x) for name in ("scalar_chain", "scalar_loop", "scalar_branch")
           for x in (0.7, -0.6)]


@pytest.mark.parametrize("name, x", SCALARS)
def test_hessian_of_a_scalar_function(functions, name, x):
    f = getattr(functions, name)
    hessian = ad.hessian(f)(x)
    assert isinstance(hessian, float)
    np.testing.assert_allclose(hessian, differences_of_gradient(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, x", SCALARS)
def test_gradient_of_the_gradient_of_a_scalar_function(functions, name, x):
    f = getattr(functions, name)
    second = ad.grad(ad.grad(f))(x)
    assert isinstance(second, float)
    np.testing.assert_allclose(second, differences_of_gradient(f, x), rtol=1e-6, atol=1e-7)


def test_third_derivative_of_a_scalar_chain(functions):
    f, x, step = functions.scalar_chain, 0.7, 1e-5
    second = ad.grad(ad.grad(f))
    expected = (second(x + step) - second(x - step)) / (2 * step)
    np.testing.assert_allclose(ad.grad(ad.grad(ad.grad(f)))(x), expected, rtol=1e-6)
    np.testing.assert_allclose(ad.hessian(ad.grad(f))(x), expected, rtol=1e-6)


def test_hessian_of_prod_is_exact_with_zeros(functions):
    # H[i, j] is the product of all elements but i and j: with two zeros, only the
    # pair of zeros has a nonzero entry; dividing by the elements would give nan.
    x = np.array([2.0, 0.0, 3.0, 0.0])
    expected = np.zeros((4, 4))
    expected[1, 3] = expected[3, 1] = 6.0
    f = functions.plain_product
    np.testing.assert_array_equal(ad.hessian(f)(x), expected)
    np.testing.assert_array_equal(ad.hvp(f)(x, np.eye(4)[1]), expected[1])
    np.testing.assert_array_equal(ad.grad(functions.gradient_along(f, np.eye(4)[3]))(x),
                                  expected[3])


def test_third_derivatives_of_prod_are_refused(functions):
    along = functions.gradient_along(functions.product, np.ones(4))
    with pytest.raises(NonDifferentiableError, match="product_of_others_jvp"):
        ad.hessian(along)(np.array(POINTS["product"]))


def test_gradient_of_a_function_calling_a_vjp(user_module):
    # The derivative ad.vjp writes checks its seed (the op vjp_seed): a gradient flows
    # through the seed and through the point.
    module = user_module("""
        import numpy as np
        import autodiff as ad

        def f(x):
            return np.tanh(x) * x

        def pulled(x, seed):
            return np.sum(ad.vjp(f)(x, seed) ** 2)
    """)
    x, seed = np.array([0.3, -0.8, 1.1]), np.array([0.5, 1.5, -1.0])
    ours = ad.grad(module.pulled, wrt=(0, 1))(x, seed)
    expected = ad.numeric_grad(module.pulled, x, seed, wrt=(0, 1))
    for got, want in zip(ours, expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def _branching_cell(h, v):
    if np.sum(v) > 100.0:
        tmp = h / (1 + v * v)
    else:
        tmp = h * np.cos(v)
    return np.sum(tmp)


def _two_derivatives_of_a_branching_cell(a):
    return np.sum(ad.grad(_branching_cell)(a, a)) + np.sum(ad.grad(_branching_cell)(a, a))


def test_a_shape_is_never_read_from_an_adjoint_a_branch_leaves_none():
    # The backward sweep of an `if` gives an adjoint the branch taken does not reach
    # the value None; a shape query of the other call's sweep read its shape from it
    # (unbroadcast(g, dt10), dt10 None: a sum over everything) with optimize=True.
    a = np.array([[-0.187, -0.987], [-0.234, -0.086]])
    for optimize in (True, False):
        np.testing.assert_allclose(
            ad.grad(_two_derivatives_of_a_branching_cell, optimize=optimize)(a),
            -2 * np.sin(a), rtol=1e-12)
