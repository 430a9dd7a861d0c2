"""Cases with Python control flow around array code: a `for` over time steps, a `while`.

The recurrent network has two hand-written gradients: the textbook one, which
accumulates outer products step by step, and a faster one that turns them
into one matrix product after the loop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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
