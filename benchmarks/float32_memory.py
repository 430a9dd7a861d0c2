"""What the gradient of a float32 logistic regression allocates beyond its data.

    python benchmarks/float32_memory.py [ROWS] [COLUMNS]

X is a float32 matrix of ROWS x COLUMNS (default 2,000,000 x 50: 400 MB); the
figure is tracemalloc's peak during one call of ``ad.grad(loss)(W, X, y)`` (and
of its ``jit=True`` and ``value_and_grad`` forms), after a first call compiled
it, beyond what was held before the call. A float64 copy of X would be twice X.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import autodiff as ad  # noqa: E402


def loss(W, X, y):
    z = X @ W
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5 * np.sum(W * W)


def extra_peak(call) -> int:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def main(rows: int = 2_000_000, columns: int = 50) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((rows, columns), dtype=np.float32)
    y = (rng.random(rows) > 0.5).astype(np.float32)
    W = (0.1 * rng.standard_normal(columns)).astype(np.float32)
    print(f"X: {rows} x {columns} float32, {X.nbytes / 1e6:.0f} MB")
    for name, derivative in (("grad", ad.grad(loss)), ("grad jit=True", ad.grad(loss, jit=True)),
                             ("value_and_grad", ad.value_and_grad(loss))):
        derivative(W, X, y)  # compiled at the first call
        peak = extra_peak(lambda: derivative(W, X, y))
        result = derivative(W, X, y)
        gradient = result[1] if isinstance(result, tuple) else result
        print(f"{name:>15}: {peak / 1e6:7.1f} MB beyond the arguments "
              f"({peak / X.nbytes:.2f} x X), a {gradient.dtype} gradient")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
