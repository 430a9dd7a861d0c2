"""The cost per call of finding the code compiled for a call's signature.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/dispatch.py

A p-norm whose order is an int argument is compiled per call signature (see
docs/api.md, "Code compiled per call signature"). Three timings of its gradient for
one small vector, the best of five repeats of 2000 calls each: through the
derivative (the signature looked up, then its code), its compiled code called
directly, and the general derivative of the same norm with the order written in
the code (compiled once, checking the rank at run time).
"""

from __future__ import annotations

import timeit

import numpy as np

import autodiff as ad


def p_norm(x, p):
    return np.linalg.norm(x, ord=p)


def third_norm(x):
    return np.linalg.norm(x, ord=3)


def main() -> None:
    x = np.random.default_rng(5).uniform(-2.0, 2.0, 10)
    per_call, general = ad.grad(p_norm), ad.grad(third_norm)
    np.testing.assert_allclose(per_call(x, 3), general(x), rtol=1e-12)
    compiled = per_call.by_structure.for_call((x, 3), {})
    timings = {"through the derivative": lambda: per_call(x, 3),
               "its compiled code": lambda: compiled(x, 3),
               "general, ord=3 in the code": lambda: general(x)}
    for name, run in timings.items():
        seconds = min(timeit.repeat(run, number=2000, repeat=5)) / 2000
        print(f"{name:28s} {seconds * 1e6:6.1f} µs")


if __name__ == "__main__":
    main()
