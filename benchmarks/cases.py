"""Benchmark cases: a plain NumPy function, its hand-written gradient, and inputs.

Each hand-written gradient is what a careful NumPy programmer would write: every
subexpression computed once, no work whose result is thrown away. That is the
bar the generated gradient is measured against.

To add a case, write the three pieces and append a `Case` to `CASES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# The user functions below are left unannotated, as a user would write them;
# annotations belong to the harness and the hand-written gradients.

Wrt = int | str | tuple[int | str, ...]


@dataclass(frozen=True)
class Case:
    """One function to differentiate, with everything needed to time it.

    `wrt` is passed unchanged to `autodiff.grad`; when it is a tuple, the
    gradient functions return a tuple of gradients in the same order.
    `make_args` returns the positional arguments, from a fixed seed.
    """

    name: str
    func: Callable[..., Any]
    hand_grad: Callable[..., Any]
    wrt: Wrt
    make_args: Callable[[], tuple[Any, ...]]


# ----- scalar polynomial: overhead-bound, a few flops per call -----


def poly(x):
    """A cubic on a Python float."""
    return 3.0 * x**3 + 2.0 * x**2 - 5.0 * x + 1.0


def poly_hand_grad(x: float) -> float:
    """d poly / dx."""
    return 9.0 * x * x + 4.0 * x - 5.0


def poly_args() -> tuple[float]:
    rng = np.random.default_rng(0)
    return (float(rng.standard_normal()),)


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


# ----- recurrent network: a 'for' loop whose body reads the previous state -----


def rnn(W, U, x, h):
    """Sum of the last hidden state of a tanh RNN run over the rows of x."""
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + U @ x[t])
    return np.sum(h)


def rnn_bptt_grad(
    W: np.ndarray, U: np.ndarray, x: np.ndarray, h: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of rnn with respect to (W, U, h): textbook backpropagation through time.

    The hidden states are kept in a list; the backward loop accumulates the
    weight gradients step by step with outer products, as in most written
    RNN code (and in the issue's benchmark).
    """
    states = [h]
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + U @ x[t])
        states.append(h)
    d_W, d_U = np.zeros_like(W), np.zeros_like(U)
    d_h = np.ones_like(h)
    for t in range(x.shape[0] - 1, -1, -1):
        d_pre = d_h * (1.0 - states[t + 1] * states[t + 1])
        d_W += np.outer(d_pre, states[t])
        d_U += np.outer(d_pre, x[t])
        d_h = W.T @ d_pre
    return d_W, d_U, d_h


def rnn_hand_grad(
    W: np.ndarray, U: np.ndarray, x: np.ndarray, h: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of rnn with respect to (W, U, h), by backpropagation through time.

    The forward pass runs step by step as written. The backward pass only
    carries the state adjoint through the loop; the per-step weight gradients,
    sums of outer products, become one matrix product each at the end: at
    h=256 that is several times faster than accumulating np.outer in the loop.
    """
    steps = x.shape[0]
    states = np.empty((steps + 1, h.shape[0]))
    states[0] = h
    for t in range(steps):
        states[t + 1] = np.tanh(W @ states[t] + U @ x[t])
    d_pre = 1.0 - states[1:] * states[1:]  # tanh', then scaled row by row below
    d_h = np.ones_like(h)
    for t in range(steps - 1, -1, -1):
        d_pre[t] *= d_h
        d_h = d_pre[t] @ W
    return d_pre.T @ states[:-1], d_pre.T @ x, d_h


def rnn_args(steps: int, n_in: int, n_hidden: int) -> Callable[[], tuple[np.ndarray, ...]]:
    """An input generator: weights scaled so that tanh does not saturate."""

    def make() -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(3)
        W = rng.standard_normal((n_hidden, n_hidden)) / np.sqrt(n_hidden)
        U = rng.standard_normal((n_hidden, n_in)) / np.sqrt(n_in)
        x = rng.standard_normal((steps, n_in))
        h = 0.1 * rng.standard_normal(n_hidden)
        return W, U, x, h

    return make


# ----- doubling: a 'while' loop whose trip count depends on the data -----


def doubling(x):
    """Double x until its norm reaches 1000, then sum the squares."""
    y = 2 * x
    while np.linalg.norm(y) < 1000:
        y = 2 * y
    return np.sum(y * y)


def doubling_hand_grad(x: np.ndarray) -> np.ndarray:
    """d doubling / dx: y = scale * x, so the gradient is 2 * scale * y.

    The loop must still run to find the scale; each step doubles in place.
    """
    y = 2.0 * x
    scale = 2.0
    while np.linalg.norm(y) < 1000:
        y *= 2.0
        scale *= 2.0
    y *= 2.0 * scale
    return y


def doubling_args(n: int) -> Callable[[], tuple[np.ndarray]]:
    """An input generator: a vector of length n with norm near 1e-3, so about 20 doublings."""

    def make() -> tuple[np.ndarray]:
        rng = np.random.default_rng(4)
        return (1e-3 / np.sqrt(n) * rng.standard_normal(n),)

    return make


MLP_PARAMETERS = ("W1", "b1", "W2", "b2")
RNN_PARAMETERS = ("W", "U", "h")

CASES: list[Case] = [
    Case("poly (float)", poly, poly_hand_grad, 0, poly_args),
    Case("rosenbrock n=1e3", rosenbrock, rosenbrock_hand_grad, "x", rosenbrock_args(1_000)),
    Case("rosenbrock n=1e5", rosenbrock, rosenbrock_hand_grad, "x", rosenbrock_args(100_000)),
    Case(
        "mlp 64x32-64-1",
        mlp_loss,
        mlp_loss_hand_grad,
        MLP_PARAMETERS,
        mlp_args(64, 32, 64, 1),
    ),
    Case(
        "mlp 512x784-256-10",
        mlp_loss,
        mlp_loss_hand_grad,
        MLP_PARAMETERS,
        mlp_args(512, 784, 256, 10),
    ),
    Case("rnn h=32", rnn, rnn_bptt_grad, RNN_PARAMETERS, rnn_args(50, 16, 32)),
    Case("rnn h=256", rnn, rnn_bptt_grad, RNN_PARAMETERS, rnn_args(50, 16, 256)),
    # The same, against a gradient that turns the per-step outer products into
    # one matrix product after the loop: faster than any step-by-step gradient.
    Case("rnn h=32 (batched hand)", rnn, rnn_hand_grad, RNN_PARAMETERS, rnn_args(50, 16, 32)),
    Case("rnn h=256 (batched hand)", rnn, rnn_hand_grad, RNN_PARAMETERS,
         rnn_args(50, 16, 256)),
    Case("while doubling", doubling, doubling_hand_grad, "x", doubling_args(1_000)),
]
