"""A first tour of autodiff: differentiate NumPy functions and read what it generates.

Run it with ``python examples/quickstart.py``. For each computation it prints
the derivative autodiff generated (plain Python you can read and step through
in a debugger) and the numbers it gives:

1. the classic first example: ``mean(3 * (x + 2)**2)`` at ``x = ones((2, 2))``,
   whose gradient is a 2x2 matrix of 4.5;
2. ``(x + y) * (x - y)``, with gradients ``2x`` and ``-2y``;
3. ``a * b + b``, with gradients ``b`` and ``a + 1``;
4. the loss of a small two-layer network: its gradients checked against
   finite differences with ``ad.check_grad``, then 200 steps of gradient descent.
"""

from __future__ import annotations

import argparse

import numpy as np

import autodiff as ad


def heading(title: str) -> None:
    print(f"\n{'=' * 72}\n{title}\n{'=' * 72}\n")


# ----- 1. the gradient matrix of 4.5 -----


def mean_of_squares(x):
    y = x + 2
    z = y * y * 3
    return z.mean()


def gradient_matrix() -> None:
    heading("1. out = mean(3 * (x + 2)**2) at x = ones((2, 2))")
    dout = ad.grad(mean_of_squares)
    print(dout.source)
    x = np.ones((2, 2))
    # d out / dx_ij = 6 * (x_ij + 2) / 4 = 4.5, since the mean divides by 4 entries.
    print(f"out = {mean_of_squares(x)}")
    print(f"d out / dx =\n{dout(x)}")


# ----- 2. two arguments at once -----


def difference_of_squares(x, y):
    return np.sum((x + y) * (x - y))


def two_arguments() -> None:
    heading("2. sum((x + y) * (x - y)): the gradients are 2x and -2y")
    # wrt=(0, 1): one gradient per argument, returned as a tuple in that order.
    df = ad.grad(difference_of_squares, wrt=(0, 1))
    print(df.source)
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([0.5, -1.0, 4.0])
    dx, dy = df(x, y)
    print(f"x = {x}, y = {y}")
    print(f"df/dx = {dx}   (2x  = {2 * x})")
    print(f"df/dy = {dy}   (-2y = {-2 * y})")


# ----- 3. plain Python numbers -----


def affine(a, b):
    return a * b + b


def python_numbers() -> None:
    heading("3. a * b + b on Python floats: the gradients are b and a + 1")
    df = ad.grad(affine, wrt=("a", "b"))  # arguments may be named instead of numbered
    print(df.source)
    a, b = 3.0, 2.0
    da, db = df(a, b)  # float in, float out
    print(f"a = {a}, b = {b}: df/da = {da} (b), df/db = {db} (a + 1)")


# ----- 4. a network, checked and trained -----


def loss(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def network() -> None:
    heading("4. A two-layer network: tanh hidden layer, mean squared error")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3))
    t = np.sin(x.sum(axis=1, keepdims=True))
    params = [rng.normal(size=(3, 8)) * 0.5, np.zeros(8), rng.normal(size=(8, 1)) * 0.5,
              np.zeros(1)]

    # value_and_grad returns the loss too, which training wants anyway.
    dloss = ad.value_and_grad(loss, wrt=(0, 1, 2, 3))
    print(dloss.source)
    value, grads = dloss(*params, x, t)
    print(f"loss = {value:.6f}, gradient shapes: {[g.shape for g in grads]}\n")

    # Compare every gradient with central finite differences, element by element;
    # check_grad raises ad.GradientCheckError if any of them disagrees.
    print(ad.check_grad(loss, *params, x, t, wrt=(0, 1, 2, 3)))

    print("\nGradient descent, learning rate 0.2:")
    for step in range(201):
        value, grads = dloss(*params, x, t)
        params = [p - 0.2 * g for p, g in zip(params, grads)]
        if step % 50 == 0:
            print(f"step {step:3d}: loss {value:.5f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Every example takes these two; the quickstart is quick and draws nothing.
    parser.add_argument("--fast", action="store_true", help="no effect: already fast")
    parser.add_argument("--save-dir", default=".", help="no effect: saves no figure")
    parser.parse_args(argv)
    gradient_matrix()
    two_arguments()
    python_numbers()
    network()


if __name__ == "__main__":
    main()
