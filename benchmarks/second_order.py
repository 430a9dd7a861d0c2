"""Hessians: one batched call against one call per column, each as a multiple of f.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/second_order.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/second_order.py --jax   # JAX's hessian too

The Hessian is forward mode over the gradient; "batched" pushes every column's
tangent through one sweep of the batched product (transforms/batching.py),
"per column" calls the product once per column (``Jacobian._per_column``, the way
before). Each is checked against the other to rtol 1e-10 first. f, the two Hessians
(and JAX's, compiled with jax.jit) take turns, one sample each per round (see
timing.py); each figure is the median time per call over the median of f's, and in
brackets the fastest sample's over f's fastest (steadier on a loaded machine).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import pin_threads

pin_threads()  # before NumPy is imported
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))  # measure this checkout, not an installed copy

import numpy as np  # noqa: E402
from timing import medians, sample  # noqa: E402

import autodiff as ad  # noqa: E402


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def cases() -> dict:
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(4, 8)), "b1": rng.normal(size=8),
              "W2": rng.normal(size=(8, 2)), "b2": rng.normal(size=2)}
    return {
        "Rosenbrock, n = 50": (rosenbrock, (np.linspace(-1.0, 1.0, 50),)),
        "MLP loss, 58 parameters (dict), batch of 16": (
            mlp_loss, (params, rng.normal(size=(16, 4)), rng.normal(size=(16, 2)))),
    }


def jax_hessian(name: str):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    if name.startswith("Rosenbrock"):
        def f(x):
            return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    else:
        def f(params, x, y):
            h = jnp.tanh(x @ params["W1"] + params["b1"])
            return jnp.mean((h @ params["W2"] + params["b2"] - y) ** 2)
    hessian = jax.jit(jax.hessian(f))
    return lambda *args: jax.block_until_ready(hessian(*args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=31)
    parser.add_argument("--jax", action="store_true", help="JAX's jit-compiled hessian too")
    options = parser.parse_args()
    print("| case | f | batched | per column | batched ÷ f | per column ÷ f |"
          + (" JAX ÷ f |" if options.jax else ""))
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if options.jax else ""))
    for name, (f, args) in cases().items():
        batched = ad.hessian(f)
        per_column = copy.copy(batched)
        per_column._per_column = True
        assert batched.batched_jvp is not None, name
        for got, expected in zip(ad.tree.leaves(batched(*args)),
                                 ad.tree.leaves(per_column(*args))):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        functions = {"f": f, "batched": batched, "per column": per_column}
        if options.jax:
            functions["jax"] = jax_hessian(name)
            functions["jax"](*args)
        samples = sample(functions, args, options.samples, target_ns=20_000_000)
        times, best = medians(samples), {k: min(v) for k, v in samples.items()}

        def ratio(key: str, digits: int = 1) -> str:
            return (f"{times[key] / times['f']:.{digits}f}x "
                    f"({best[key] / best['f']:.{digits}f}x)")

        row = (f"| {name} | {times['f'] / 1e3:.1f} us | {times['batched'] / 1e3:.0f} us | "
               f"{times['per column'] / 1e3:.0f} us | {ratio('batched')} | "
               f"{ratio('per column', 0)} |")
        if options.jax:
            row += f" {ratio('jax')} |"
        print(row)


if __name__ == "__main__":
    main()
