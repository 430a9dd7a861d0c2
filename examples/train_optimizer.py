"""Train the tour's two-layer network with ad.optim's optimisers and with SciPy.

Run it with ``python examples/train_optimizer.py`` (``--fast`` for a quick run).
The parameters are a dict of arrays, ``{"W1", "b1", "W2", "b2"}``, and the loss
takes it as it is; no gradient step is written by hand:

1. Adam, the functional way (as optax): ``params, state = opt.update(grads,
   state, params)`` returns new parameters and changes nothing in place;
2. SGD with Nesterov's momentum, the PyTorch way: ``opt.step(params, grads)``
   writes into the dict's arrays and keeps the state in the optimiser;
3. ``ad.minimize`` hands the whole problem to SciPy's L-BFGS-B, with the exact
   gradient, and gives the parameters back as a dict.
"""

from __future__ import annotations

import argparse

import numpy as np

import autodiff as ad


def loss(params, x, t):
    h = np.tanh(x @ params["W1"] + params["b1"])
    y = h @ params["W2"] + params["b2"]
    return np.mean((y - t) ** 2)


def make_problem(samples: int, hidden: int):
    """Data from a smooth function of 3 inputs, and a network's starting weights."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(samples, 3))
    t = np.sin(x @ np.array([[1.0], [-0.5], [0.25]])) + 0.05 * rng.normal(size=(samples, 1))
    params = {"W1": rng.normal(size=(3, hidden)) / np.sqrt(3), "b1": np.zeros(hidden),
              "W2": rng.normal(size=(hidden, 1)) / np.sqrt(hidden), "b2": np.zeros(1)}
    return x, t, params


def batches(rng, samples: int, size: int):
    order = rng.permutation(samples)
    return [order[start:start + size] for start in range(0, samples, size)]


def adam(x, t, params, epochs: int) -> dict:
    print("=== 1. Adam, functional: params, state = opt.update(grads, state, params) ===")
    rng = np.random.default_rng(1)
    dloss = ad.grad(loss)
    opt = ad.optim.Adam(lr=0.01)
    state = opt.init(params)
    print(f"{opt}; loss at the start {loss(params, x, t):.4f}")
    for epoch in range(1, epochs + 1):
        for batch in batches(rng, len(x), 32):
            params, state = opt.update(dloss(params, x[batch], t[batch]), state, params)
        if epoch % max(1, epochs // 4) == 0:
            print(f"epoch {epoch:3d}: loss {loss(params, x, t):.4f}")
    print(f"{state.step} updates; the state holds Adam's moments in the parameters' "
          f"structure: {sorted(state.slots['m'])}\n")
    return params


def nesterov(x, t, params, epochs: int) -> dict:
    print("=== 2. SGD with Nesterov's momentum, in place: opt.step(params, grads) ===")
    rng = np.random.default_rng(1)
    dloss = ad.grad(loss)
    opt = ad.optim.SGD(lr=0.05, momentum=0.9, nesterov=True)
    W1 = params["W1"]
    for epoch in range(1, epochs + 1):
        for batch in batches(rng, len(x), 32):
            opt.step(params, dloss(params, x[batch], t[batch]))
        if epoch % max(1, epochs // 4) == 0:
            print(f"epoch {epoch:3d}: loss {loss(params, x, t):.4f}")
    print(f"params['W1'] is the array it was, updated in place: {params['W1'] is W1}\n")
    return params


def lbfgs(x, t, params, iterations: int) -> None:
    print("=== 3. ad.minimize: SciPy's L-BFGS-B with the exact gradient ===")
    try:
        result = ad.minimize(loss, params, args=(x, t), method="L-BFGS-B",
                             options={"maxiter": iterations})
    except ImportError as error:
        print(f"skipped: {error}")
        return
    gradient = ad.grad(loss)(result.x, x, t)
    largest = max(np.max(np.abs(g)) for g in gradient.values())
    print(f"{result.nit} iterations, {result.nfev} evaluations of the loss and its gradient")
    print(f"loss {result.fun:.4f}; result.x is a dict again: {sorted(result.x)}, "
          f"W1 of shape {result.x['W1'].shape}")
    print(f"largest gradient entry at the result: {largest:.1e}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer epochs")
    parser.add_argument("--save-dir", default=".", help="no effect: saves no figure")
    args = parser.parse_args(argv)
    epochs = 20 if args.fast else 100
    x, t, start = make_problem(256, 16)
    copy = lambda: ad.tree.map(np.copy, start)  # noqa: E731 - each run from the same start
    adam(x, t, copy(), epochs)
    nesterov(x, t, copy(), epochs)
    lbfgs(x, t, copy(), 200 if args.fast else 1000)


if __name__ == "__main__":
    main()
