"""Compile time as the function grows: is building a derivative linear in its size?

A generator writes functions of k statements (a chain cycling through three
kinds of layer) to real module files, since autodiff reads a function's
source with `inspect`; k is chosen so that the generated derivatives have
about 50 to 2000 lines. Each is built cold several times (twice in a quick
run), keeping the fastest.

`line_scaling` measures what a user sees per line of their own: straight-line
functions of 25 to 800 statements, each a new variable from the one before
(``h5 = np.sin(h4) * w + h4``, with a reduction every fourth line), the time of
``ad.grad`` plus the first call, per user line.

`loop_scaling` does the same per loop for functions of 25 to 200 small ``for``
loops one after another, each carrying ``h`` through three steps of a layer: the
work a loop adds (its tape, its backward loop, the names living through it) is
the same whatever comes before it, so the time per loop should be too.
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
FULL_USER_LINES = (25, 50, 100, 200, 400, 800)
QUICK_USER_LINES = (25, 100)
# Each statement a new variable from the one before, the first from the arguments.
LINE_STATEMENTS = (
    "h{i} = np.tanh({h} * w + b)",
    "h{i} = np.sin({h}) * w + {h}",
    "h{i} = {h} * np.exp(-{h} * {h}) + b",
    "h{i} = np.maximum({h}, 0.1 * {h}) + np.sum({h}) * 0.001",
)
FULL_LOOP_COUNTS = (25, 50, 100, 200)
QUICK_LOOP_COUNTS = (25, 50)
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

    @property
    def seconds_per_statement(self) -> float:
        return self.build_s / self.statements


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


def lines_source(statements: int) -> str:
    """The source of `lines(x, w, b)`: `statements` lines, each a new variable.

    >>> print(lines_source(2))  # doctest: +NORMALIZE_WHITESPACE
    import numpy as np
    def lines(x, w, b):
        h0 = np.tanh(x * w + b)
        h1 = np.sin(h0) * w + h0
        return np.sum(h1 ** 2)
    """
    body = ["    " + LINE_STATEMENTS[i % len(LINE_STATEMENTS)].format(
        i=i, h=f"h{i - 1}" if i else "x") for i in range(statements)]
    lines = ["import numpy as np", "", "", "def lines(x, w, b):", *body]
    return "\n".join([*lines, f"    return np.sum(h{statements - 1} ** 2)", ""])


def loops_source(loops: int) -> str:
    """The source of `loops(x, w, b)`: `loops` loops one after another, each of three
    steps of a layer, carrying `h`.

    >>> print(loops_source(2))  # doctest: +NORMALIZE_WHITESPACE
    import numpy as np
    def loops(x, w, b):
        h = x
        for t in range(3):
            h = np.tanh(h * w + b)
        for t in range(3):
            h = np.sin(h) * w + h
        return np.sum(h)
    """
    body = [line for i in range(loops) for line in (
        "    for t in range(3):", f"        {STATEMENTS[i % len(STATEMENTS)]}")]
    lines = ["import numpy as np", "", "", "def loops(x, w, b):", "    h = x", *body]
    return "\n".join([*lines, "    return np.sum(h)", ""])


def load_chain(statements: int, directory: Path) -> Callable[..., Any]:
    """Write the chain to its own module file, import it, and return the function."""
    return _load(chain_source(statements), "chain", directory)


def _load(source: str, function: str, directory: Path) -> Callable[..., Any]:
    """Write ``source`` to a module file of its own, import it, return ``function``."""
    name = f"generated_{function}_{next(_module_ids)}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect finds a function's file through its module
    spec.loader.exec_module(module)
    return getattr(module, function)


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


def measure_lines(statements: int, directory: Path, repeats: int) -> ScalingPoint:
    """`ad.grad` of a straight-line function and its first call, cold, the fastest of
    `repeats`: its `build_s` is what a user waits before the first gradient."""
    return _first_gradient(_load(lines_source(statements), "lines", directory), statements,
                           repeats)


def measure_loops(loops: int, directory: Path, repeats: int) -> ScalingPoint:
    """`ad.grad` of a function of `loops` loops and its first call, cold, the fastest of
    `repeats` (its `statements` count the loops)."""
    return _first_gradient(_load(loops_source(loops), "loops", directory), loops, repeats)


def _first_gradient(func: Callable[..., Any], statements: int, repeats: int) -> ScalingPoint:
    """The fastest of `repeats` cold builds of `func`'s gradient, each with its first call."""
    x = np.linspace(-1.0, 1.0, 8)
    best, lines = float("inf"), 0
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        gradient = ad.grad(fresh_copy(func), wrt=(0, 1, 2))
        gradient(x, x + 0.5, x - 0.25)
        best = min(best, time.perf_counter() - start)
        lines = len(gradient.source.splitlines())
    return ScalingPoint(statements, lines, best)


def line_scaling(quick: bool) -> list[ScalingPoint]:
    """Build and first-call times of straight-line functions of 25 to 800 lines."""
    sizes = QUICK_USER_LINES if quick else FULL_USER_LINES
    with tempfile.TemporaryDirectory(prefix="autodiff_lines_") as name:
        return [measure_lines(k, Path(name), 2 if quick else 3) for k in sizes]


def loop_scaling(quick: bool) -> list[ScalingPoint]:
    """Build and first-call times of functions of 25 to 200 loops one after another."""
    counts = QUICK_LOOP_COUNTS if quick else FULL_LOOP_COUNTS
    with tempfile.TemporaryDirectory(prefix="autodiff_loops_") as name:
        return [measure_loops(k, Path(name), 2 if quick else 3) for k in counts]


def per_line_growth(points: Sequence[ScalingPoint]) -> float:
    """Time per user line at the largest size over that at the smallest."""
    smallest = min(points, key=lambda p: p.statements)
    largest = max(points, key=lambda p: p.statements)
    return largest.seconds_per_statement / smallest.seconds_per_statement


def reference_point(points: Sequence[ScalingPoint]) -> ScalingPoint:
    """The point nearest REFERENCE_LINES lines, against which growth is judged."""
    return min(points, key=lambda p: abs(p.lines - REFERENCE_LINES))
