"""Compile time as the function grows: is building a derivative linear in its size?

A generator writes functions of k statements (a chain cycling through three
kinds of layer) to real module files, since autodiff reads a function's
source with `inspect`; k is chosen so that the generated derivatives have
about 50 to 2000 lines. Each is built cold several times (twice in a quick
run), keeping the fastest.
"""

from __future__ import annotations

import gc
import importlib.util
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from implementations import fresh_copy

import autodiff as ad

FULL_TARGET_LINES = (50, 100, 200, 500, 1000, 2000)
QUICK_TARGET_LINES = (50, 200, 500)
REFERENCE_LINES = 200  # "at most 0.5 s for a 200-line function"
STATEMENTS = (
    "h = np.tanh(h * w + b)",
    "h = np.sin(h) * w + h",
    "h = h * np.exp(-h * h) + b",
)
_module_ids = itertools.count()


@dataclass(frozen=True)
class ScalingPoint:
    """One generated function: its size and how long its derivative took to build."""

    statements: int
    lines: int
    build_s: float

    @property
    def seconds_per_line(self) -> float:
        return self.build_s / self.lines


def chain_source(statements: int) -> str:
    """The source of `chain(x, w, b)`: `statements` layers, then a sum.

    >>> print(chain_source(1))  # doctest: +NORMALIZE_WHITESPACE
    import numpy as np
    def chain(x, w, b):
        h = x
        h = np.tanh(h * w + b)
        return np.sum(h)
    """
    body = [f"    {STATEMENTS[i % len(STATEMENTS)]}" for i in range(statements)]
    lines = ["import numpy as np", "", "", "def chain(x, w, b):", "    h = x", *body]
    return "\n".join([*lines, "    return np.sum(h)", ""])


def load_chain(statements: int, directory: Path) -> Callable[..., Any]:
    """Write the chain to its own module file, import it, and return the function."""
    name = f"generated_chain_{next(_module_ids)}"
    path = directory / f"{name}.py"
    path.write_text(chain_source(statements))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect finds a function's file through its module
    spec.loader.exec_module(module)
    return module.chain


def cold_build(func: Callable[..., Any], repeats: int) -> tuple[float, Callable[..., Any]]:
    """The fastest of `repeats` cold builds of the gradient, and the gradient."""
    best, gradient = float("inf"), None
    for _ in range(repeats):
        gc.collect()  # each build starts from the same heap, not the last one's garbage
        start = time.perf_counter()
        gradient = ad.grad(fresh_copy(func), wrt=("w", "b"))
        best = min(best, time.perf_counter() - start)
    return best, gradient


def measure_point(statements: int, directory: Path, repeats: int) -> ScalingPoint:
    """Build one chain's gradient, and run it once so that it is known to work."""
    func = load_chain(statements, directory)
    seconds, gradient = cold_build(func, repeats)
    x = np.linspace(-1.0, 1.0, 8)
    gradient(x, 0.5, 0.1)
    return ScalingPoint(statements, len(gradient.source.splitlines()), seconds)


def statements_for(target_lines: Sequence[int], directory: Path) -> list[int]:
    """Statement counts that give about each target line count, from two probes.

    The generated derivative grows by a fixed number of lines per statement on
    top of a fixed preamble, so two sizes fix the line.
    """
    small, large = (measure_point(k, directory, repeats=1) for k in (1, 11))
    per_statement = (large.lines - small.lines) / (large.statements - small.statements)
    fixed = small.lines - per_statement * small.statements
    return [max(1, round((target - fixed) / per_statement)) for target in target_lines]


def compile_scaling(quick: bool) -> list[ScalingPoint]:
    """Build times of generated functions from about 50 to 2000 derivative lines."""
    targets = QUICK_TARGET_LINES if quick else FULL_TARGET_LINES
    with tempfile.TemporaryDirectory(prefix="autodiff_scaling_") as name:
        directory = Path(name)
        counts = statements_for(targets, directory)
        repeats = 2 if quick else 3
        return [measure_point(k, directory, repeats) for k in counts]


def reference_point(points: Sequence[ScalingPoint]) -> ScalingPoint:
    """The point nearest REFERENCE_LINES lines, against which growth is judged."""
    return min(points, key=lambda p: abs(p.lines - REFERENCE_LINES))
