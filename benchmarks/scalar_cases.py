"""Cases on Python floats: a few flops per operation, so interpreter overhead is the cost.

The scalar loops read `x[i]` from a float array and do scalar arithmetic on it,
which is what `jit="numba"` is for. Their recurrences are nonlinear or branch
on the state, so no NumPy expert could vectorise them: the hand-written
gradients loop too, and read `x[i]` as the functions do.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# ----- scalar polynomial -----


def poly(x):
    """A cubic on a Python float."""
    return 3.0 * x**3 + 2.0 * x**2 - 5.0 * x + 1.0


def poly_hand_grad(x: float) -> float:
    """d poly / dx."""
    return 9.0 * x * x + 4.0 * x - 5.0


def poly_args() -> tuple[float]:
    rng = np.random.default_rng(0)
    return (float(rng.standard_normal()),)


# ----- a chain of 15 scalar operations on two floats -----
# sin, *, -, exp, *, +, *, -, tanh, *, log1p, *, cos, /, +


def scalar_chain(x, y):
    """Fifteen `math` operations on two floats: the cost is all per-operation overhead."""
    a = math.sin(x) * y
    b = math.exp(-a) + x * x
    c = math.tanh(b * y - a)
    d = math.log1p(c * c)
    return d * x + math.cos(y) / b


def scalar_chain_hand_grad(x: float, y: float) -> tuple[float, float]:
    """Gradients of scalar_chain with respect to (x, y), backwards line by line."""
    sin_x = math.sin(x)
    a = sin_x * y
    exp_a = math.exp(-a)
    b = exp_a + x * x
    c = math.tanh(b * y - a)
    c2 = c * c
    cos_y_over_b = math.cos(y) / b
    d_x = math.log1p(c2)  # d out / dx through the product d * x
    d_y = -math.sin(y) / b
    d_b = -cos_y_over_b / b
    d_pre = 2.0 * x * c / (1.0 + c2) * (1.0 - c2)  # through log1p(c * c), then tanh
    d_b += d_pre * y
    d_y += d_pre * b
    d_a = -d_pre - d_b * exp_a
    d_x += 2.0 * x * d_b + d_a * y * math.cos(x)
    d_y += d_a * sin_x
    return d_x, d_y


def scalar_chain_args() -> tuple[float, float]:
    rng = np.random.default_rng(5)
    x, y = rng.uniform(0.2, 1.5, size=2)
    return float(x), float(y)


# ----- a nonlinear scalar recurrence over an array's elements -----


def recurrence(x, w):
    """s <- tanh(w s + x[i]) over the elements of x, one float at a time."""
    s = 0.0
    for i in range(x.shape[0]):
        s = math.tanh(w * s + x[i])
    return s


def recurrence_hand_grad(x: np.ndarray, w: float) -> tuple[np.ndarray, float]:
    """Gradients of recurrence with respect to (x, w): the states kept in a list."""
    states = [0.0]
    s = 0.0
    for i in range(x.shape[0]):
        s = math.tanh(w * s + x[i])
        states.append(s)
    d_x = np.empty(x.shape[0])
    d_w = 0.0
    d_s = 1.0
    for i in range(x.shape[0] - 1, -1, -1):
        s = states[i + 1]
        d_pre = d_s * (1.0 - s * s)
        d_x[i] = d_pre
        d_w += d_pre * states[i]
        d_s = d_pre * w
    return d_x, d_w


# ----- a leaky rectifier recurrence: a branch on the state -----


def leaky_recurrence(x, w):
    """s <- w s + x[i], scaled by 0.1 when negative, over the elements of x."""
    s = 0.0
    for i in range(x.shape[0]):
        s = w * s + x[i]
        if s < 0.0:
            s = 0.1 * s
    return s


def leaky_recurrence_hand_grad(x: np.ndarray, w: float) -> tuple[np.ndarray, float]:
    """Gradients of leaky_recurrence with respect to (x, w): states and slopes kept."""
    states = [0.0]
    slopes = []
    s = 0.0
    for i in range(x.shape[0]):
        s = w * s + x[i]
        if s < 0.0:
            s = 0.1 * s
            slopes.append(0.1)
        else:
            slopes.append(1.0)
        states.append(s)
    d_x = np.empty(x.shape[0])
    d_w = 0.0
    d_s = 1.0
    for i in range(x.shape[0] - 1, -1, -1):
        d_pre = d_s * slopes[i]
        d_x[i] = d_pre
        d_w += d_pre * states[i]
        d_s = d_pre * w
    return d_x, d_w


def scalar_loop_args(n: int) -> Callable[[], tuple[np.ndarray, float]]:
    """An input generator: n standard normal elements, and a float weight below 1."""

    def make() -> tuple[np.ndarray, float]:
        rng = np.random.default_rng(6)
        return rng.standard_normal(n), 0.8

    return make
