"""A first tour of autodiff: differentiate a small NumPy model and look at the result.

Run it with ``python examples/quickstart.py``. It

1. differentiates a two-layer network's loss with ``ad.grad``,
2. prints the generated derivative, plain Python you can read and step through,
3. checks every gradient against central finite differences,
4. takes a few steps of gradient descent with it.
"""

from __future__ import annotations

import numpy as np

import autodiff as ad


def loss(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def central_difference(f, args, index, step=1e-6):
    """The gradient of ``f`` w.r.t. ``args[index]``, one coordinate at a time."""
    x = args[index]
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += step
        minus[i] -= step
        grad[i] = (f(*args[:index], plus, *args[index + 1:])
                   - f(*args[:index], minus, *args[index + 1:])) / (2 * step)
    return grad


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3))
    t = np.sin(x.sum(axis=1, keepdims=True))
    params = [rng.normal(size=(3, 8)) * 0.5, np.zeros(8), rng.normal(size=(8, 1)) * 0.5,
              np.zeros(1)]

    dloss = ad.value_and_grad(loss, wrt=(0, 1, 2, 3))
    print("The generated derivative:\n")
    print(dloss.source)

    value, grads = dloss(*params, x, t)
    print(f"loss = {value:.6f}")
    for name, index, grad in zip(["W1", "b1", "W2", "b2"], range(4), grads):
        numeric = central_difference(loss, [*params, x, t], index)
        error = np.max(np.abs(grad - numeric))
        print(f"d{name}: shape {grad.shape}, max |AD - finite differences| = {error:.1e}")

    for step in range(201):
        value, grads = dloss(*params, x, t)
        params = [p - 0.2 * g for p, g in zip(params, grads)]
        if step % 50 == 0:
            print(f"step {step:3d}: loss {value:.5f}")


if __name__ == "__main__":
    main()
