"""Differentiating through loops and branches: while, for and if on the data.

Run it with ``python examples/control_flow.py`` (``--fast`` shortens the
sequence of the recurrent network; the other parts are already quick).

autodiff differentiates the path the data actually took. The forward sweep of
the generated code runs your loop or branch as written and remembers what the
backward sweep needs: how many times a loop ran, which branch an ``if`` took,
and the values a loop overwrites. It prints

1. a ``while`` loop whose trip count depends on the input, with its generated
   derivative (the backward loop runs ``count`` times), checked against finite
   differences;
2. a recurrent network unrolled by ``for t in range(T)``, whose backward sweep
   walks the sequence in reverse, popping one stored hidden state per step;
3. a piecewise (Huber) loss with an ``if`` on the data, checked on both branches.
"""

from __future__ import annotations

import argparse

import numpy as np

import autodiff as ad


def doubling(x):
    # How many times the loop runs depends on x, so a static graph cannot unroll it.
    y = 2.0 * x
    while np.linalg.norm(y) < 1000.0:
        y = 2.0 * y
    return np.sum(y)


def rnn_loss(W_h, W_x, b, xs, target):
    # A plain Elman RNN: h_t = tanh(h_{t-1} W_h + x_t W_x + b), loss on the last state.
    h = np.zeros(W_h.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W_h + xs[t] @ W_x + b)
    return np.sum((h - target) ** 2)


def huber(residual, delta):
    # Quadratic near zero, linear in the tails: robust to outliers, smooth at +-delta.
    size = np.abs(residual)
    if size <= delta:
        return 0.5 * residual ** 2
    else:
        return delta * (size - 0.5 * delta)


def huber_loss(w, x, y, delta):
    # A sum of per-sample Huber losses, so each sample takes its own branch.
    total = 0.0
    for i in range(x.shape[0]):
        total = total + huber(x[i] @ w - y[i], delta)
    return total / x.shape[0]


def while_loop() -> None:
    print("=== 1. A while loop that runs a data-dependent number of times ===\n")
    dsum = ad.grad(doubling)
    # The forward loop counts its iterations and stores nothing else: the
    # backward step (dy = dy * 2.0) needs no value from the forward sweep.
    print(dsum.source)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([0.01, 0.02, 0.03])):
        y = 2.0 * x
        doublings = 1
        while np.linalg.norm(y) < 1000.0:
            y, doublings = 2.0 * y, doublings + 1
        print(f"x = {x}: the loop doubles {doublings} times, so d sum / dx = 2**{doublings} "
              f"= {2.0 ** doublings:g} for every entry")
        print(f"  autodiff:            {dsum(x)}")
        print(f"  finite differences:  {ad.numeric_grad(doubling, x)}")
    print()


def recurrent_network(fast: bool) -> None:
    print("=== 2. A recurrent network: for t in range(T) ===\n")
    rng = np.random.default_rng(1)
    steps, hidden, inputs = (5, 4, 3) if fast else (20, 8, 3)
    W_h = rng.normal(size=(hidden, hidden)) * 0.5
    W_x = rng.normal(size=(inputs, hidden)) * 0.5
    b = np.zeros(hidden)
    xs = rng.normal(size=(steps, inputs))
    target = rng.normal(size=hidden) * 0.5

    drnn = ad.grad(rnn_loss, wrt=(0, 1, 2))
    # The generated code is long; these are the lines that store and replay the
    # hidden states: one append per step forwards, one pop per step backwards.
    print("From the generated derivative, the loops and the hidden states' tape:")
    for line in drnn.source.splitlines():
        if "h_stack" in line or "for t in" in line:
            print(line)
    print(f"\nrnn_loss over {steps} steps = {rnn_loss(W_h, W_x, b, xs, target):.6f}")
    print(ad.check_grad(rnn_loss, W_h, W_x, b, xs, target, wrt=(0, 1, 2)))
    print()


def piecewise_loss() -> None:
    print("=== 3. An if on the data: the Huber loss ===\n")
    dhuber = ad.grad(huber)
    print(dhuber.source)
    delta = 1.0
    # check_grad raises GradientCheckError if a gradient disagrees, so reaching
    # the print means both branches' derivatives match finite differences.
    for residual in (0.3, -0.3, 2.5, -2.5):
        branch = "quadratic" if abs(residual) <= delta else "linear"
        report = ad.check_grad(huber, residual, delta)
        print(f"huber'({residual:+.1f}) = {dhuber(residual, delta):+.4f}   ({branch} branch; "
              f"gradient check {'passed' if report.passed else 'FAILED'})")

    # A linear fit with outliers: samples fall on both sides of delta.
    rng = np.random.default_rng(2)
    x = rng.normal(size=(12, 2))
    y = x @ np.array([1.0, -2.0]) + rng.normal(size=12) * 0.1
    y[::4] += 5.0  # outliers, which land on the linear branch
    w = np.zeros(2)
    residuals = np.abs(x @ w - y)
    print(f"\nhuber_loss on 12 samples: {np.sum(residuals <= delta)} on the quadratic branch, "
          f"{np.sum(residuals > delta)} on the linear one")
    print(ad.check_grad(huber_loss, w, x, y, delta))
    print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="a shorter RNN sequence")
    parser.add_argument("--save-dir", default=".", help="unused: this example saves no figure")
    args = parser.parse_args(argv)
    while_loop()
    recurrent_network(args.fast)
    piecewise_loss()


if __name__ == "__main__":
    main()
