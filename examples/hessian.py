"""Second derivatives: the Hessian and Hessian-vector products of the Rosenbrock function.

Run it with ``python examples/hessian.py``.

``ad.hessian(f)`` differentiates the generated gradient of ``f`` once more, in
forward mode: one Jacobian-vector product of the gradient per input element
gives one column of the Hessian. ``ad.hvp(f)`` is a single such product,
``H @ v``, without building ``H``: what Newton-CG and other second-order
methods need for large inputs.
"""

from __future__ import annotations

import numpy as np

import autodiff as ad


def rosenbrock(x):
    return (1.0 - x[0]) ** 2 + 100.0 * (x[1] - x[0] ** 2) ** 2


def rosenbrock_hessian(x):
    """The Hessian worked out by hand, to compare with."""
    return np.array([[2.0 - 400.0 * (x[1] - x[0] ** 2) + 800.0 * x[0] ** 2, -400.0 * x[0]],
                     [-400.0 * x[0], 200.0]])


def main() -> None:
    x = np.array([-1.2, 1.0])
    hessian = ad.hessian(rosenbrock)
    H = hessian(x)
    print(f"Hessian at x = {x}:\n{H}")
    print(f"worked out by hand:\n{rosenbrock_hessian(x)}")
    print(f"max difference: {np.max(np.abs(H - rosenbrock_hessian(x))):.1e}\n")

    # The Hessian-vector product: H @ v, from one call of generated code.
    hvp = ad.hvp(rosenbrock)
    v = np.array([1.0, -2.0])
    print(f"hvp(x, v) = {hvp(x, v)}, H @ v = {H @ v}\n")

    # What runs: the forward-mode derivative of the generated gradient. The
    # Hessian calls it once per element of x, with tangent (1, 0), then (0, 1).
    print("The generated Hessian-vector product:\n")
    print(hvp.source)
    print("What the Hessian is assembled from:\n")
    print(hessian.source)

    # A use: Newton's method, x <- x - H^-1 g, reaches the minimum (1, 1) in a
    # few steps where gradient descent needs thousands.
    grad = ad.grad(rosenbrock)
    for step in range(8):
        x = x - np.linalg.solve(hessian(x), grad(x))
        print(f"Newton step {step + 1}: x = {x}, f(x) = {rosenbrock(x):.3e}")


if __name__ == "__main__":
    main()
