"""A first tour of autodiff: differentiate NumPy functions and read what it generates.

Run it with ``python examples/quickstart.py``. For each computation it prints
the derivative autodiff generated (plain Python you can read and step through
in a debugger) and the numbers it gives:

1. the classic first example: ``mean(3 * (x + 2)**2)`` at ``x = ones((2, 2))``,
   whose gradient is a 2x2 matrix of 4.5;
2. ``(x + y) * (x - y)``, with gradients ``2x`` and ``-2y``;
3. ``a * b + b``, with gradients ``b`` and ``a + 1``;
4. the loss of a small two-layer network whose parameters live in a dict: its
   gradient comes back as a dict with the same keys, is checked against
   finite differences, and drives 200 steps of gradient descent.
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


# ----- 4. a network with its parameters in a dict, checked and trained -----


def loss(params, x, t):
    h = np.tanh(x @ params["W1"] + params["b1"])
    y = h @ params["W2"] + params["b2"]
    return np.mean((y - t) ** 2)


def network() -> None:
    heading("4. A two-layer network, its parameters in a dict")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3))
    t = np.sin(x.sum(axis=1, keepdims=True))
    params = {"W1": rng.normal(size=(3, 8)) * 0.5, "b1": np.zeros(8),
              "W2": rng.normal(size=(8, 1)) * 0.5, "b2": np.zeros(1)}

    # value_and_grad returns the loss too, which training wants anyway. The code is
    # generated for the structure of the arguments: each parameter is read once at
    # the top, and the gradient is built as a dict with the same keys at the end.
    dloss = ad.value_and_grad(loss)
    print(dloss.source_for(params, x, t))
    value, grads = dloss(params, x, t)
    print(f"loss = {value:.6f}")
    print(f"gradient: {ad.tree.map(lambda g: g.shape, grads)}\n")

    # Compare every gradient with central finite differences, element by element,
    # leaf by leaf; check_grad raises ad.GradientCheckError if any of them disagrees.
    print(ad.check_grad(loss, params, x, t))

    print("\nGradient descent, learning rate 0.2:")
    for step in range(201):
        value, grads = dloss(params, x, t)
        params = ad.tree.map(lambda p, g: p - 0.2 * g, params, grads)
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
