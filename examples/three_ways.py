"""Three ways to a derivative: SymPy, finite differences and autodiff, side by side.

Run it with ``python examples/three_ways.py`` (``--fast`` measures less;
``--save-dir DIR`` says where ``three_ways.png`` goes, the current directory by
default; the figure needs matplotlib: ``pip install "autodiff[plot]"``).

The function is a deep composition: the same small map applied ``depth``
times. It prints

1. how the symbolic derivative swells with the depth (SymPy's operation count
   grows with the square of the depth; sharing common subexpressions brings it
   back to linear) while autodiff's generated derivative stays the same size,
   since its backward sweep is a loop like the function's;
2. the comparison table: each method's error against the most accurate one,
   its time per gradient and its number of function evaluations;
3. a figure: the finite-difference error against the step size (a V, with the
   autodiff error as a flat line beneath it), and the measured cost of one
   gradient as the input grows.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import autodiff as ad


def make_deep(depth: int):
    """``x -> sum(y**2)`` where ``y = tanh(y * x + 0.5)``, ``depth`` times over."""
    def deep(x):
        y = x
        for _ in range(depth):
            y = np.tanh(y * x + 0.5)
        return np.sum(y * y)

    return deep


def swell(depths: list[int], x: np.ndarray) -> None:
    print(f"{'depth':>5}  {'SymPy ops':>9}  {'with CSE':>8}  {'autodiff lines':>14}  "
          f"{'max |SymPy - autodiff|':>22}")
    for depth in depths:
        deep = make_deep(depth)
        symbolic = ad.symbolic_grad(deep, shapes={"x": x.shape})
        ours = ad.grad(deep)
        difference = np.max(np.abs(symbolic(x) - ours(x)))
        print(f"{depth:>5}  {symbolic.operations:>9}  {symbolic.operations_cse:>8}  "
              f"{len(ours.source.splitlines()):>14}  {difference:>22.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="measure less")
    parser.add_argument("--save-dir", default=".", help="where three_ways.png goes")
    options = parser.parse_args()
    x = np.linspace(-1.0, 1.0, 3)

    print("1. The symbolic derivative swells; the generated one does not\n")
    swell([1, 2, 4] if options.fast else [1, 2, 4, 6, 8, 10], x)
    deep = make_deep(6)
    print(f"\nSymPy's derivative at depth 6, the first of its {x.size} components:")
    text = str(ad.symbolic_grad(deep, shapes={"x": x.shape}).expression[0])
    print(f"  {text[:300]} ... ({len(text)} characters)")

    print("\n2. The same gradient, three ways\n")
    ad.compare(deep, x)

    print("\n3. Figures")
    try:
        from autodiff.tools.plot import plot_comparison

        path = os.path.join(options.save_dir, "three_ways.png")
        sizes = (10, 100) if options.fast else (10, 30, 100, 300, 1000, 3000)
        plot_comparison(deep, x, path=path, sizes=sizes)
        print(f"saved to {path}")
    except ad.AutodiffError as error:  # matplotlib is an optional extra
        print(f"no figure: {error}")


if __name__ == "__main__":
    main()
