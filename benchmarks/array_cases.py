"""Straight-line array cases: slices, reductions, matmul, broadcasting.

Each hand-written gradient is what a careful NumPy programmer would write:
every subexpression computed once, no work whose result is thrown away, and
large temporaries updated in place where that saves an allocation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# ----- Rosenbrock: slices, powers and a reduction -----


def rosenbrock(x):
    """The n-dimensional Rosenbrock function."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hand_grad(x: np.ndarray) -> np.ndarray:
    """d rosenbrock / dx: each term touches x[i] (as head) and x[i + 1]."""
    head = x[:-1]
    residual = x[1:] - head * head
    grad = np.zeros_like(x)
    grad[1:] = 200.0 * residual
    grad[:-1] += 2.0 * (head - 1.0) - 400.0 * head * residual
    return grad


def rosenbrock_args(n: int) -> Callable[[], tuple[np.ndarray]]:
    """An input generator for a vector of length n."""

    def make() -> tuple[np.ndarray]:
        rng = np.random.default_rng(1)
        return (rng.uniform(-2.0, 2.0, size=n),)

    return make


# ----- a p-norm whose order is an int argument: compiled per call signature -----


def p_norm(x, p):
    """The p-norm of x, p an int the call passes (a setting the code is compiled for)."""
    return np.linalg.norm(x, ord=p)


def p_norm_hand_grad(x: np.ndarray, p: int) -> np.ndarray:
    """d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||_p^(p-1)."""
    magnitude = np.abs(x)
    norm = np.sum(magnitude ** p) ** (1.0 / p)
    return np.sign(x) * magnitude ** (p - 1) / norm ** (p - 1)


def p_norm_args(n: int, p: int) -> Callable[[], tuple[np.ndarray, int]]:
    """A vector of length n, and the order p."""

    def make() -> tuple[np.ndarray, int]:
        rng = np.random.default_rng(5)
        return (rng.uniform(-2.0, 2.0, size=n), p)

    return make


# ----- two-layer network: matmul, broadcasting bias, tanh, mean -----


def mlp_loss(W1, b1, W2, b2, x, t):
    """Mean squared error of a tanh network with one hidden layer."""
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def mlp_loss_hand_grad(
    W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray, x: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of mlp_loss with respect to (W1, b1, W2, b2), by backpropagation."""
    h = np.tanh(x @ W1 + b1)
    residual = h @ W2 + b2 - t
    d_y = (2.0 / residual.size) * residual
    d_W2 = h.T @ d_y
    d_b2 = d_y.sum(axis=0)
    d_pre = (d_y @ W2.T) * (1.0 - h * h)
    d_W1 = x.T @ d_pre
    d_b1 = d_pre.sum(axis=0)
    return d_W1, d_b1, d_W2, d_b2


def mlp_args(
    batch: int, n_in: int, n_hidden: int, n_out: int
) -> Callable[[], tuple[np.ndarray, ...]]:
    """An input generator: parameters, then data x and targets t."""

    def make() -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(2)
        W1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
        b1 = 0.1 * rng.standard_normal(n_hidden)
        W2 = rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)
        b2 = 0.1 * rng.standard_normal(n_out)
        x = rng.standard_normal((batch, n_in))
        t = rng.standard_normal((batch, n_out))
        return W1, b1, W2, b2, x, t

    return make


# ----- the same network, its parameters in a dict -----


def mlp_dict_loss(params, x, t):
    """mlp_loss with its parameters passed as one dict."""
    h = np.tanh(x @ params["W1"] + params["b1"])
    y = h @ params["W2"] + params["b2"]
    return np.mean((y - t) ** 2)


def mlp_dict_loss_hand_grad(
    params: dict[str, np.ndarray], x: np.ndarray, t: np.ndarray
) -> dict[str, np.ndarray]:
    """The gradient of mlp_dict_loss with respect to params, as a dict with its keys."""
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    h = np.tanh(x @ W1 + b1)
    residual = h @ W2 + b2 - t
    d_y = (2.0 / residual.size) * residual
    d_pre = (d_y @ W2.T) * (1.0 - h * h)
    return {"W1": x.T @ d_pre, "b1": d_pre.sum(axis=0), "W2": h.T @ d_y, "b2": d_y.sum(axis=0)}


def mlp_dict_args(
    batch: int, n_in: int, n_hidden: int, n_out: int
) -> Callable[[], tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]]:
    """The inputs of mlp_args (the same numbers), the four parameters in a dict."""
    positional = mlp_args(batch, n_in, n_hidden, n_out)

    def make() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        W1, b1, W2, b2, x, t = positional()
        return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}, x, t

    return make


# ----- softmax cross-entropy on logits, integer labels -----


def softmax_cross_entropy(z, labels):
    """Mean cross-entropy of the softmax of each row of z, stable by max-subtraction."""
    shifted = z - np.max(z, axis=1, keepdims=True)
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(z.shape[0]), labels])


def softmax_cross_entropy_hand_grad(z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """d loss / dz = (softmax(z) - one_hot(labels)) / rows.

    The max carries no gradient (the softmax does not depend on it), so it is
    only subtracted for stability.
    """
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(z.shape[0]), labels] -= 1.0
    p /= z.shape[0]
    return p


def softmax_args(rows: int, classes: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """An input generator: logits and one integer label per row."""

    def make() -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(7)
        return 3.0 * rng.standard_normal((rows, classes)), rng.integers(0, classes, size=rows)

    return make


# ----- an elementwise chain: memory-bound on a large vector -----


def elementwise_chain(x):
    """Eight elementwise operations and a sum over a long vector."""
    return np.sum(np.tanh(np.sin(x) * x + np.exp(-x * x)))


def elementwise_chain_hand_grad(x: np.ndarray) -> np.ndarray:
    """d/dx = (1 - tanh(u)^2) (cos(x) x + sin(x) - 2 x exp(-x^2)), u the tanh's argument."""
    sin_x = np.sin(x)
    gauss = np.exp(-x * x)
    t = sin_x * x
    t += gauss
    np.tanh(t, out=t)
    grad = np.cos(x)
    grad *= x
    grad += sin_x
    gauss *= x
    gauss *= 2.0
    grad -= gauss
    t *= t
    np.subtract(1.0, t, out=t)
    grad *= t
    return grad


def vector_args(n: int) -> Callable[[], tuple[np.ndarray]]:
    """An input generator: a standard normal vector of length n."""

    def make() -> tuple[np.ndarray]:
        return (np.random.default_rng(8).standard_normal(n),)

    return make


# ----- a broadcasting pairwise-distance loss -----


def pairwise_loss(X, Y):
    """Sum of a Gaussian kernel over all pairs of rows of X and Y, by broadcasting."""
    diff = X[:, None, :] - Y[None, :, :]
    D = np.sum(diff**2, axis=-1)
    return np.sum(np.exp(-D))


def pairwise_loss_hand_grad(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients with respect to (X, Y).

    With K = exp(-D): dX = 2 (K @ Y - X * rowsum(K)), dY = 2 (K.T @ X - Y * colsum(K)).
    The sums over the third axis become matrix products, so the (n, m, d)
    differences are needed only to compute D.
    """
    diff = X[:, None, :] - Y[None, :, :]
    diff *= diff
    kernel = np.exp(-diff.sum(axis=-1))
    d_X = kernel @ Y
    d_X -= X * kernel.sum(axis=1)[:, None]
    d_X *= 2.0
    d_Y = kernel.T @ X
    d_Y -= Y * kernel.sum(axis=0)[:, None]
    d_Y *= 2.0
    return d_X, d_Y


def pairwise_args(n: int, m: int, d: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """An input generator: point clouds close enough that exp(-D) does not underflow."""

    def make() -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(9)
        scale = 0.5 / np.sqrt(d)
        return scale * rng.standard_normal((n, d)), scale * rng.standard_normal((m, d))

    return make
