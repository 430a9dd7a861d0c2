"""Time autodiff's generated gradients against hand-written NumPy gradients.

Run from the repository root:

    python benchmarks/run.py                  # full run, prints a markdown table
    python benchmarks/run.py --quick          # fast smoke run, fewer samples
    python benchmarks/run.py --output FILE    # also write the table and machine details

Every implementation is first checked against the hand-written gradient
(np.allclose, rtol 1e-9, atol 1e-12 times the largest entry), so a wrong
gradient is never timed. All implementations of a case run in one process and
are interleaved (A, B, A, B, ...), one sample each in turn; a sample times many
back-to-back calls, with the call count chosen so that it lasts about 30 ms.
The reported time per call is the median over samples. Peers (HIPS autograd,
JAX, PyTorch, Tangent) get a column only when their package imports.

Columns of the table:

- hand, autodiff: median time per call of the hand-written and generated gradient.
- ours/hand: the ratio of those two times.
- hand mem, autodiff mem: peak memory allocated during one call, by tracemalloc,
  in a separate pass after the timing (tracing slows every allocation). Inputs
  are allocated before tracing starts and do not count; the returned gradient
  does. Peers have no memory column: JAX's and PyTorch's own allocators are
  invisible to tracemalloc.
- mem ours/hand: the ratio of those two peaks.
- <peer>, <peer>/hand: a peer's time per call and its ratio to hand.

When autodiff cannot compile a case (a construct it does not support yet) the
autodiff cells say "unsupported" and the run goes on. A crash in the compiler or
in the generated code ("error", with its traceback on stderr) or a wrong
gradient ("wrong gradient") also leaves the run going, but the exit status is
then 1. A peer that fails is left out of that case's row, with a note on stderr.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
import os
import platform
import statistics
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from cases import CASES, Case
from peers import PEERS

import autodiff as ad

HAND = "hand"
OURS = "autodiff"
TARGET_SAMPLE_NS = 30_000_000
RTOL = 1e-9
# Entries near zero are compared to the largest one, not to themselves: their
# rounding differs between equally good orders of summation.
ATOL_SCALE = 1e-12


# What the autodiff cells say when ours is not measured; only UNSUPPORTED is expected.
UNSUPPORTED = "unsupported"
ERROR = "error"
WRONG = "wrong gradient"
MODIFIED_INPUTS = "modified its inputs"


@dataclass(frozen=True)
class CaseResult:
    """What one case measured: times and peaks by column, or why ours is missing."""

    times: dict[str, float]
    peak_bytes: dict[str, int]
    ours_problem: str | None


def implementations(case: Case) -> tuple[dict[str, Callable[..., Any]], str | None]:
    """The gradient functions to time for `case`, keyed by column name.

    The second item says why ours is missing, when autodiff cannot compile the case.
    """
    found: dict[str, Callable[..., Any]] = {HAND: case.hand_grad}
    ours_problem = None
    try:
        found[OURS] = ad.grad(case.func, wrt=case.wrt)
    except ad.AutodiffError as error:
        ours_problem = UNSUPPORTED
        print(f"note: {OURS} unsupported on {case.name}: {error}", file=sys.stderr)
    except Exception as error:  # noqa: BLE001  a compiler crash is reported, not fatal
        ours_problem = ERROR
        print(f"note: {OURS} crashed compiling {case.name}:", file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)
    for name, build in PEERS.items():
        try:
            found[name] = build(case)
        except ImportError:
            continue
        except Exception as error:  # noqa: BLE001  a peer that cannot do this case is left out
            print(f"note: {name} skipped on {case.name}: {error!r}", file=sys.stderr)
    return found, ours_problem


def same_gradient(expected: Any, actual: Any) -> bool:
    """Whether two gradients (single, or tuples of them) agree to RTOL."""
    if isinstance(expected, tuple):
        return (
            isinstance(actual, (tuple, list))
            and len(actual) == len(expected)
            and all(same_gradient(e, a) for e, a in zip(expected, actual, strict=True))
        )
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        return False
    atol = ATOL_SCALE * float(np.max(np.abs(expected), initial=0.0))
    return bool(np.allclose(actual, expected, rtol=RTOL, atol=atol))


def check(case: Case, found: dict[str, Callable[..., Any]]) -> str | None:
    """Drop every implementation that disagrees with the hand-written gradient.

    Each implementation must also leave its inputs unchanged, since every
    sample reuses them. Raises if the hand-written gradient itself fails;
    returns why ours was dropped, if it was.
    """
    expected = found[HAND](*case.make_args())
    ours_problem = None
    for name in list(found):
        args = case.make_args()
        raised = None
        try:
            agrees = same_gradient(expected, found[name](*args))
        except Exception as error:  # reported below, like a wrong gradient
            if name == HAND:
                raise
            raised = error
            problem, detail = ERROR, f"raised {error!r}"
        else:
            unchanged = all(map(np.array_equal, args, case.make_args()))
            if agrees and unchanged:
                continue
            problem = WRONG if unchanged else MODIFIED_INPUTS
            detail = problem
        if name == HAND:
            raise AssertionError(f"{case.name}: {name} {detail}")
        print(f"note: {name} skipped on {case.name}: {detail}", file=sys.stderr)
        if name == OURS:
            ours_problem = problem
            if raised is not None:  # the compiler's author needs to see where
                traceback.print_exception(raised, file=sys.stderr)
        del found[name]
    return ours_problem


def time_calls(function: Callable[..., Any], args: tuple[Any, ...], calls: int) -> int:
    """Nanoseconds taken by `calls` back-to-back calls of `function(*args)`."""
    start = time.perf_counter_ns()
    for _ in itertools.repeat(None, calls):
        function(*args)
    return time.perf_counter_ns() - start


def calls_per_sample(function: Callable[..., Any], args: tuple[Any, ...], target_ns: int) -> int:
    """How many calls make one sample last about `target_ns`."""
    calls = 1
    while True:
        elapsed = time_calls(function, args, calls)
        if elapsed >= target_ns // 5:
            return max(1, round(calls * target_ns / elapsed))
        calls *= 10 if elapsed < target_ns // 100 else 5


def measure(
    found: dict[str, Callable[..., Any]], args: tuple[Any, ...], samples: int, target_ns: int
) -> dict[str, float]:
    """Median nanoseconds per call for each implementation, samples interleaved."""
    calls = {name: calls_per_sample(f, args, target_ns) for name, f in found.items()}
    per_call: dict[str, list[float]] = {name: [] for name in found}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            for name, function in found.items():
                per_call[name].append(time_calls(function, args, calls[name]) / calls[name])
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(times) for name, times in per_call.items()}


def peak_memory(found: dict[str, Callable[..., Any]], args: tuple[Any, ...]) -> dict[str, int]:
    """Peak bytes allocated during one call of each implementation, by tracemalloc."""
    peaks = {}
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        for name, function in found.items():
            function(*args)  # warm any cache outside the measured call
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            result = function(*args)
            peaks[name] = tracemalloc.get_traced_memory()[1] - before
            del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return peaks


def format_time(ns: float) -> str:
    """A duration in the largest unit that keeps it at or above 1."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def format_bytes(count: float) -> str:
    """A byte count in the largest binary unit that keeps it at or above 1."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count:.3g} B"


def ratio(numerator: float, denominator: float) -> str:
    """numerator / denominator to two decimals, or "-" when the denominator is 0."""
    return f"{numerator / denominator:.2f}" if denominator else "-"


def table_row(case_name: str, result: CaseResult, peers: Sequence[str]) -> list[str]:
    """The cells of one case's row; see the module docstring for the columns."""
    times, peaks = result.times, result.peak_bytes
    row = [case_name, format_time(times[HAND])]
    if result.ours_problem is None:
        row += [format_time(times[OURS]), ratio(times[OURS], times[HAND])]
        row += [format_bytes(peaks[HAND]), format_bytes(peaks[OURS])]
        row += [ratio(peaks[OURS], peaks[HAND])]
    else:
        row += [result.ours_problem, "-", format_bytes(peaks[HAND]), result.ours_problem, "-"]
    for peer in peers:
        if peer in times:
            row += [format_time(times[peer]), ratio(times[peer], times[HAND])]
        else:
            row += ["-", "-"]
    return row


def summary_lines(results: dict[str, CaseResult]) -> list[str]:
    """Median and largest ours/hand ratios, and the cases where ours is missing."""
    measured = [r for r in results.values() if r.ours_problem is None]
    time_ratios = [r.times[OURS] / r.times[HAND] for r in measured]
    # A case whose hand-written gradient allocates nothing (floats) has no memory ratio.
    memory_ratios = [
        r.peak_bytes[OURS] / r.peak_bytes[HAND] for r in measured if r.peak_bytes[HAND]
    ]
    lines = []
    for label, ratios in (("ours/hand", time_ratios), ("mem ours/hand", memory_ratios)):
        if ratios:
            lines += [f"median {label}: {statistics.median(ratios):.2f}"]
            lines += [f"max {label}: {max(ratios):.2f}"]
    missing = [f"{name} ({r.ours_problem})" for name, r in results.items() if r.ours_problem]
    if missing:
        lines.append(f"not measured for {OURS}: " + ", ".join(missing))
    return lines


def markdown_table(results: dict[str, CaseResult], peers: Sequence[str]) -> str:
    """One row per case: times and ratio, peak memories and ratio, then each peer."""
    header = ["case", HAND, OURS, "ours/hand", "hand mem", f"{OURS} mem", "mem ours/hand"]
    for peer in peers:
        header += [peer, f"{peer}/hand"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for case_name, result in results.items():
        lines.append("| " + " | ".join(table_row(case_name, result, peers)) + " |")
    return "\n".join([*lines, "", *summary_lines(results)])


def machine_details() -> str:
    """Platform, interpreter and library versions, as markdown bullet points."""
    details = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu count": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "autodiff": getattr(ad, "__version__", "unknown"),
    }
    return "\n".join(f"- {key}: {value}" for key, value in details.items())


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the markdown table, optionally write it to a file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fast smoke run, fewer samples")
    parser.add_argument("--samples", type=int, help="samples per implementation")
    parser.add_argument("--output", metavar="FILE", help="also write the table here")
    options = parser.parse_args(argv)
    samples = options.samples or (3 if options.quick else 15)
    target_ns = TARGET_SAMPLE_NS // 6 if options.quick else TARGET_SAMPLE_NS

    results: dict[str, CaseResult] = {}
    for case in CASES:
        found, ours_problem = implementations(case)
        ours_problem = check(case, found) or ours_problem
        args = case.make_args()
        results[case.name] = CaseResult(
            measure(found, args, samples, target_ns), peak_memory(found, args), ours_problem
        )
        print(f"timed {case.name}", file=sys.stderr)

    peers = [name for name in PEERS if any(name in r.times for r in results.values())]
    table = markdown_table(results, peers)
    print(table)
    if options.output:
        summary = f"{samples} samples of ~{math.ceil(target_ns / 1e6)} ms per implementation"
        with open(options.output, "w", encoding="utf-8") as file:
            file.write(f"# autodiff benchmark\n\n{table}\n\n{summary}\n\n{machine_details()}\n")
    failed = any(r.ours_problem not in (None, UNSUPPORTED) for r in results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
