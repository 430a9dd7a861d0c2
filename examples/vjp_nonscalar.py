"""Vector-Jacobian products: gradients of functions that return arrays or tuples.

Run it with ``python examples/vjp_nonscalar.py``.

``ad.grad`` needs a function returning one number. When a function returns an
array ``y``, there is no single gradient; what reverse mode computes instead is
a *vector-Jacobian product*: given a ``seed`` shaped like ``y``, the gradient of
``sum(seed * y)``. It is what ``y.backward(seed)`` does in PyTorch.
``ad.vjp(f)`` returns a function with ``f``'s arguments plus that seed.
"""

from __future__ import annotations

import numpy as np

import autodiff as ad


def doubling(x):
    # Double x until it is large: how many times depends on the data.
    y = 2 * x
    while np.linalg.norm(y) < 1000:
        y = 2 * y
    return y


def polar_to_cartesian(r, theta):
    # Two outputs: the seed is then a pair, one seed per output.
    return r * np.cos(theta), r * np.sin(theta)


def main() -> None:
    # --- an array output ---
    x = np.array([1.0, 2.0, 3.0])
    y = doubling(x)
    k = round(np.log2(y[0] / x[0]))  # y = 2**k * x, so dy/dx = 2**k times the identity
    print(f"doubling(x) = {y}, that is 2**{k} * x")

    pull = ad.vjp(doubling)              # pull(x, seed)
    seed = np.array([0.1, 1.0, 0.0001])
    dx = pull(x, seed)
    print(f"vjp with seed {seed}: {dx}")
    print(f"seed * 2**{k}:              {seed * 2.0 ** k}")
    assert np.allclose(dx, seed * 2.0 ** k)

    # The generated code runs the loop forwards, counting its iterations, then
    # runs the gradient of its body backwards that many times: no tape of arrays.
    print("\nThe generated vector-Jacobian product:\n")
    print(pull.source)

    # --- a tuple output ---
    r, theta = 2.0, 0.5
    pull_xy = ad.vjp(polar_to_cartesian, wrt=(0, 1))   # gradients for r and theta
    # Seeding (1, 0) asks for the gradient of the first output alone:
    # d(r cos t)/dr = cos t and d(r cos t)/dt = -r sin t.
    dr, dtheta = pull_xy(r, theta, (1.0, 0.0))
    print(f"seed (1, 0): dr = {dr:.6f} (cos t = {np.cos(theta):.6f}), "
          f"dtheta = {dtheta:.6f} (-r sin t = {-r * np.sin(theta):.6f})")
    dr, dtheta = pull_xy(r, theta, (0.0, 1.0))
    print(f"seed (0, 1): dr = {dr:.6f} (sin t = {np.sin(theta):.6f}), "
          f"dtheta = {dtheta:.6f} (r cos t = {r * np.cos(theta):.6f})")
    print("\nThe generated vector-Jacobian product:\n")
    print(pull_xy.source)

    # One seed per output element gives the whole Jacobian, row by row:
    # that is what ad.jacobian(f, mode="rev") does.
    print("The Jacobian of polar_to_cartesian w.r.t. (r, theta), row by row:")
    print(np.array(ad.jacobian(polar_to_cartesian, wrt=(0, 1), mode="rev")(r, theta)))


if __name__ == "__main__":
    main()
