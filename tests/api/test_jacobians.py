"""Jacobians, Hessians and Hessian-vector products of functions written the way NumPy
users write them, against central finite differences in float64.

Each Jacobian is computed three ways (``mode="rev"``, one VJP per output element;
``mode="fwd"``, one JVP per input element; and the default choice) and compared
with differences of the function itself. Each Hessian is compared with
differences of ``ad.grad(f)``, which the rest of the suite already checks, and
``ad.hvp`` with the Hessian times a vector.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules

SOURCE = """
import numpy as np


# ----- vector-valued maps -----

def elementwise_chain(x):
    return np.exp(np.sin(x)) * x ** 2 - np.log1p(x * x) / (1.0 + np.cos(x) ** 2)


def dense_layer(W, x, b):
    return np.tanh(W @ x + b)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def row_softmax(Z):
    e = np.exp(Z - np.max(Z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def normalize(x):
    return x / np.linalg.norm(x)


def running_sum_of_squares(x):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
        out[i] = total
    return out


def discounted_returns(rewards, gamma):
    n = rewards.shape[0]
    out = np.zeros(n)
    g = 0.0
    for i in reversed(range(n)):
        g = rewards[i] + gamma * g
        out[i] = g
    return out


def log_cumulative_exp(x):
    acc = []
    s = 0.0
    for v in x:
        s = s + np.exp(v)
        acc.append(s)
    return np.log(np.stack(acc))


def branch_on_data(x):
    if np.sum(x) > 0:
        y = x * x
    else:
        y = np.sin(x)
    return 2.0 * y + x


def leaky_relu(x):
    return np.maximum(x, 0.1 * x)


def standardize_rows(X):
    mu = np.mean(X, axis=1, keepdims=True)
    centered = X - mu
    sigma = np.sqrt(np.mean(centered ** 2, axis=1, keepdims=True) + 1e-3)
    return centered / sigma


def outer_sine(a, b):
    return np.sin(a * b) + a


def stacked_features(x):
    return np.stack([x, x ** 2, np.sin(x)], axis=1)


def circle(t):
    return np.array([np.cos(t), np.sin(t), t * t])


def log_sum_exp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def mean_and_squared_deviations(x):
    mean = np.mean(x)
    return mean, (x - mean) ** 2


def product_and_ratio(a, b):
    return a * b, a / b


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for x_t in xs:
        h = np.tanh(W @ h + x_t)
    return h


def grow_until_large(x):
    y = 1.5 * x
    while np.sum(y * y) < 50.0:
        y = 1.5 * y + np.sin(y)
    return y


def solve_linear(A, b):
    return np.linalg.solve(A, b)


def gram(X):
    return X.T @ X


# ----- scalar functions, for Hessians -----

def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def chain_energy(x):
    total = 0.0
    for i in range(1, x.shape[0]):
        total = total + (x[i] - x[i - 1]) ** 2 * np.cos(x[i])
    return total


def grow_then_measure(x):
    y = x
    while np.sum(y * y) < 100.0:
        y = 1.5 * y + 0.1 * np.sin(y)
    return np.sum(np.sin(y) * y)


def mlp_loss(W, b, x):
    h = np.tanh(W @ x + b)
    return np.sum(h ** 2) + 0.1 * np.sum(W * W)


def matrix_energy(W, x):
    return np.sum(np.log1p((W @ x) ** 2))


def quadratic_plus_exp(x, A):
    return x @ A @ x + np.sum(np.exp(x))


def branch_loss(x):
    if np.sum(x) > 0:
        return np.sum(x ** 4) / 4.0
    return np.sum(np.cosh(x))


def cross_entropy(x, t):
    return -np.sum(t * np.log(softmax(x)))


def scalar_poly(t):
    return np.sin(t) * t ** 3
"""


@pytest.fixture(scope="module")
def functions(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("jacobians"))(SOURCE)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _positive(shape, seed: int = 0):
    return _rng(seed).uniform(0.5, 1.5, size=shape)


def _real(shape, seed: int = 0):
    # away from 0, where leaky_relu and branches are not smooth
    values = _rng(seed).uniform(-1.5, 1.5, size=shape)
    return np.where(np.abs(values) < 0.2, values + 0.4, values)


def _invertible(n: int, seed: int = 0):
    return _rng(seed).normal(size=(n, n)) + 3.0 * np.eye(n)


# (function name, its arguments, wrt)
JACOBIAN_CASES = [
    ("elementwise_chain", lambda: [_real(5)], 0),
    ("dense_layer", lambda: [_real((3, 4), 1), _real(4, 2), _real(3, 3)], 1),
    ("dense_layer", lambda: [_real((3, 4), 1), _real(4, 2), _real(3, 3)], (0, 1, 2)),
    ("softmax", lambda: [_real(5)], 0),
    ("row_softmax", lambda: [_real((2, 3))], 0),
    ("normalize", lambda: [_real(4)], 0),
    ("running_sum_of_squares", lambda: [_real(5)], 0),
    ("discounted_returns", lambda: [_real(4), 0.9], (0, 1)),
    ("log_cumulative_exp", lambda: [_real(4)], 0),
    ("branch_on_data", lambda: [_positive(4)], 0),  # the if branch
    ("branch_on_data", lambda: [-_positive(4)], 0),  # the else branch
    ("leaky_relu", lambda: [_real(6)], 0),
    ("standardize_rows", lambda: [_real((3, 4))], 0),
    ("outer_sine", lambda: [_real((3, 1)), _real(4, 1)], (0, 1)),
    ("stacked_features", lambda: [_real(4)], 0),
    ("circle", lambda: [0.7], 0),  # a Python float
    ("circle", lambda: [np.float64(0.7)], 0),
    ("log_sum_exp", lambda: [_real(5)], 0),
    ("mean_and_squared_deviations", lambda: [_real(4)], 0),
    ("product_and_ratio", lambda: [_real(3), _positive(3, 1)], (0, 1)),
    ("rnn", lambda: [0.5 * _real((3, 3)), _real((4, 3), 1)], 0),
    ("grow_until_large", lambda: [_positive(3)], 0),
    ("solve_linear", lambda: [_invertible(3), _real(3, 1)], (0, 1)),
    ("gram", lambda: [_real((3, 2))], 0),
]
JACOBIAN_IDS = [f"{name}-wrt{wrt}-{k}" for k, (name, _, wrt) in enumerate(JACOBIAN_CASES)]

# (function name, its arguments, wrt)
HESSIAN_CASES = [
    ("rosenbrock", lambda: [_real(4)], 0),
    ("log_sum_exp", lambda: [_real(4)], 0),
    ("chain_energy", lambda: [_real(5)], 0),
    ("grow_then_measure", lambda: [_positive(3)], 0),
    ("mlp_loss", lambda: [_real((2, 3)), _real(2, 1), _real(3, 2)], (0, 1)),
    ("mlp_loss", lambda: [_real((2, 3)), _real(2, 1), _real(3, 2)], (0, 1, 2)),
    ("matrix_energy", lambda: [_real((2, 3)), _real(3, 1)], 0),
    ("quadratic_plus_exp", lambda: [_real(3), _real((3, 3), 1)], 0),
    ("branch_loss", lambda: [_positive(3)], 0),  # the if branch
    ("branch_loss", lambda: [-_positive(3)], 0),  # the else branch
    ("cross_entropy", lambda: [_real(4), np.array([0.1, 0.2, 0.3, 0.4])], 0),
    ("scalar_poly", lambda: [0.8], 0),
]
HESSIAN_IDS = [f"{name}-wrt{wrt}-{k}" for k, (name, _, wrt) in enumerate(HESSIAN_CASES)]


# ----- finite differences -----


def finite_difference_jacobian(f, args: list, wrt, step: float = 1e-6):
    """The Jacobian of ``f`` by central differences, structured like ``ad.jacobian``'s:
    blocks ``output.shape + argument.shape``, a tuple over ``wrt`` when it is a tuple,
    a tuple over outputs when ``f`` returns a tuple."""
    several = isinstance(wrt, tuple)
    indices = wrt if several else (wrt,)
    value = f(*args)
    tuple_output = isinstance(value, tuple)
    outputs = value if tuple_output else (value,)
    blocks: list[list] = [[] for _ in outputs]
    for index in indices:
        x = args[index]
        python_scalar = np.ndim(x) == 0 and not isinstance(x, np.ndarray)
        base = np.asarray(x, dtype=np.float64)

        def at(v, index=index, python_scalar=python_scalar):
            v = float(v) if python_scalar else v
            result = f(*args[:index], v, *args[index + 1:])
            return result if tuple_output else (result,)

        columns: list[list] = [[] for _ in outputs]
        for element in np.ndindex(base.shape):
            h = step * max(1.0, abs(base[element]))
            plus, minus = base.copy(), base.copy()
            plus[element] += h
            minus[element] -= h
            for k, (up, down) in enumerate(zip(at(plus), at(minus))):
                columns[k].append((np.asarray(up, float) - np.asarray(down, float)) / (2 * h))
        for k, out in enumerate(outputs):
            stacked = np.stack(columns[k], axis=-1) if columns[k] else np.zeros((*np.shape(out), 0))
            blocks[k].append(stacked.reshape(np.shape(out) + base.shape))
    per_output = [tuple(b) if several else b[0] for b in blocks]
    return tuple(per_output) if tuple_output else per_output[0]


def assert_same_structure_and_close(ours, expected, rtol=1e-5, atol=1e-7, where="J"):
    """Recursively compare tuples of blocks: same nesting, same shapes, close values."""
    if isinstance(expected, tuple):
        assert isinstance(ours, tuple), f"{where}: expected a tuple, got {type(ours).__name__}"
        assert len(ours) == len(expected), f"{where}: {len(ours)} blocks, expected {len(expected)}"
        for i, (o, e) in enumerate(zip(ours, expected)):
            assert_same_structure_and_close(o, e, rtol, atol, f"{where}[{i}]")
        return
    assert not isinstance(ours, tuple), f"{where}: got a tuple, expected one block"
    assert np.shape(ours) == np.shape(expected), (
        f"{where}: shape {np.shape(ours)}, expected {np.shape(expected)}")
    assert np.asarray(ours).dtype == np.float64, f"{where}: dtype {np.asarray(ours).dtype}"
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=atol, err_msg=where)


# ----- Jacobians -----


@pytest.mark.parametrize("mode", ["rev", "fwd", None], ids=["rev", "fwd", "auto"])
@pytest.mark.parametrize("name, make_args, wrt", JACOBIAN_CASES, ids=JACOBIAN_IDS)
def test_jacobian_matches_finite_differences(functions, name, make_args, wrt, mode):
    f = getattr(functions, name)
    args = make_args()
    expected = finite_difference_jacobian(f, args, wrt)
    ours = ad.jacobian(f, wrt=wrt, mode=mode)(*args)
    assert_same_structure_and_close(ours, expected)


def test_jacobian_of_layer_is_the_closed_form(functions):
    W, x, b = _real((3, 4), 1), _real(4, 2), _real(3, 3)
    h = np.tanh(W @ x + b)
    closed_form = (1.0 - h ** 2)[:, None] * W
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(ad.jacobian(functions.dense_layer, wrt=1, mode=mode)(W, x, b),
                                   closed_form, rtol=1e-12, atol=1e-14)


def test_jacobian_of_softmax_is_the_closed_form(functions):
    x = _real(5)
    s = functions.softmax(x)
    closed_form = np.diag(s) - np.outer(s, s)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(ad.jacobian(functions.softmax, mode=mode)(x), closed_form,
                                   rtol=1e-12, atol=1e-14)


def test_jacobian_shapes_for_scalar_in_and_out(functions):
    # scalar -> vector: shape (3,); vector -> scalar: shape (n,); scalar -> scalar: a float
    assert np.shape(ad.jacobian(functions.circle, mode="rev")(0.3)) == (3,)
    assert np.shape(ad.jacobian(functions.circle, mode="fwd")(0.3)) == (3,)
    assert np.shape(ad.jacobian(functions.log_sum_exp, mode="rev")(_real(5))) == (5,)
    assert np.shape(ad.jacobian(functions.log_sum_exp, mode="fwd")(_real(5))) == (5,)
    for mode in ("rev", "fwd"):
        value = ad.jacobian(functions.scalar_poly, mode=mode)(0.8)
        np.testing.assert_allclose(value, np.cos(0.8) * 0.8 ** 3 + 3 * np.sin(0.8) * 0.8 ** 2)


def test_jacobian_has_the_dtype_of_its_argument(functions):
    # a 0-d float32 array took float64 blocks; an int array takes float64 ones
    expected = ad.jacobian(functions.circle)(0.3)
    for mode in ("rev", "fwd"):
        for t, dtype in ((np.array(0.3, np.float32), np.float32), (np.array(0.3), np.float64),
                         (np.float32(0.3), np.float32)):
            block = ad.jacobian(functions.circle, mode=mode)(t)
            assert block.shape == (3,) and block.dtype == dtype
            np.testing.assert_allclose(block, expected, rtol=1e-6)
        block = ad.jacobian(functions.log_sum_exp, mode=mode)(np.arange(3))
        assert block.dtype == np.float64
        np.testing.assert_allclose(block, ad.jacobian(functions.log_sum_exp)(np.arange(3.0)))


# ----- Hessians -----


def _hessian_blocks(H, several: bool) -> list[list]:
    return [list(row) for row in H] if several else [[H]]


@pytest.mark.parametrize("name, make_args, wrt", HESSIAN_CASES, ids=HESSIAN_IDS)
def test_hessian_matches_finite_differences_of_the_gradient(functions, name, make_args, wrt):
    f = getattr(functions, name)
    args = make_args()
    expected = finite_difference_jacobian(ad.grad(f, wrt=wrt), args, wrt)
    H = ad.hessian(f, wrt=wrt)(*args)
    assert_same_structure_and_close(H, expected, rtol=1e-5, atol=1e-6, where="H")


@pytest.mark.parametrize("name, make_args, wrt", HESSIAN_CASES, ids=HESSIAN_IDS)
def test_hessian_is_symmetric(functions, name, make_args, wrt):
    f = getattr(functions, name)
    args = make_args()
    several = isinstance(wrt, tuple)
    indices = wrt if several else (wrt,)
    sizes = [np.size(args[i]) for i in indices]
    blocks = _hessian_blocks(ad.hessian(f, wrt=wrt)(*args), several)
    for i, j in np.ndindex(len(indices), len(indices)):
        upper = np.reshape(blocks[i][j], (sizes[i], sizes[j]))
        lower = np.reshape(blocks[j][i], (sizes[j], sizes[i]))
        np.testing.assert_allclose(upper, lower.T, rtol=1e-10, atol=1e-12,
                                   err_msg=f"H[{i}][{j}] != H[{j}][{i}].T")


@pytest.mark.parametrize("name, make_args, wrt", HESSIAN_CASES, ids=HESSIAN_IDS)
def test_hvp_is_hessian_times_vector(functions, name, make_args, wrt):
    f = getattr(functions, name)
    args = make_args()
    several = isinstance(wrt, tuple)
    indices = wrt if several else (wrt,)
    rng = _rng(42)
    vs = [rng.uniform(-1.0, 1.0, size=np.shape(args[i])) for i in indices]
    vs = [float(v) if np.ndim(args[i]) == 0 and not isinstance(args[i], np.ndarray) else v
          for v, i in zip(vs, indices)]
    blocks = _hessian_blocks(ad.hessian(f, wrt=wrt)(*args), several)
    expected = [sum(np.tensordot(blocks[i][j], vs[j], axes=np.ndim(vs[j]))
                    for j in range(len(indices)))
                for i in range(len(indices))]
    ours = ad.hvp(f, wrt=wrt)(*args, tuple(vs) if several else vs[0])
    ours = list(ours) if several else [ours]
    assert len(ours) == len(expected)
    for i, (o, e) in enumerate(zip(ours, expected)):
        assert np.shape(o) == np.shape(args[indices[i]]), f"H v block {i}: shape {np.shape(o)}"
        np.testing.assert_allclose(o, e, rtol=1e-9, atol=1e-10, err_msg=f"H v block {i}")


def test_hessian_of_quadratic_is_the_closed_form(functions):
    x, A = _real(3), _real((3, 3), 1)
    H = ad.hessian(functions.quadratic_plus_exp)(x, A)
    np.testing.assert_allclose(H, A + A.T + np.diag(np.exp(x)), rtol=1e-12, atol=1e-12)
