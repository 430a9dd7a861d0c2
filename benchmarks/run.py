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
from collections.abc import Callable, Sequence
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


def implementations(case: Case) -> dict[str, Callable[..., Any]]:
    """The gradient functions to time for `case`, keyed by column name."""
    found: dict[str, Callable[..., Any]] = {
        HAND: case.hand_grad,
        OURS: ad.grad(case.func, wrt=case.wrt),
    }
    for name, build in PEERS.items():
        try:
            found[name] = build(case)
        except ImportError:
            continue
        except Exception as error:  # noqa: BLE001  a peer that cannot do this case is left out
            print(f"note: {name} skipped on {case.name}: {error!r}", file=sys.stderr)
    return found


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


def check(case: Case, found: dict[str, Callable[..., Any]]) -> None:
    """Drop peers that disagree with the hand-written gradient; fail if ours does.

    Each implementation must also leave its inputs unchanged, since every
    sample reuses them.
    """
    expected = found[HAND](*case.make_args())
    for name in list(found):
        args = case.make_args()
        agrees = same_gradient(expected, found[name](*args))
        unchanged = all(map(np.array_equal, args, case.make_args()))
        if agrees and unchanged:
            continue
        problem = "wrong gradient" if unchanged else "modified its inputs"
        if name in (HAND, OURS):
            raise AssertionError(f"{case.name}: {name} {problem}")
        print(f"note: {name} skipped on {case.name}: {problem}", file=sys.stderr)
        del found[name]


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


def format_time(ns: float) -> str:
    """A duration in the largest unit that keeps it at or above 1."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def markdown_table(results: dict[str, dict[str, float]], columns: Sequence[str]) -> str:
    """One row per case: hand time, ours, ours/hand, then each peer and peer/hand."""
    header = ["case", HAND, OURS, "ours/hand"]
    for peer in columns:
        header += [peer, f"{peer}/hand"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for case_name, times in results.items():
        hand = times[HAND]
        row = [case_name, format_time(hand), format_time(times[OURS]), f"{times[OURS] / hand:.2f}"]
        for peer in columns:
            if peer in times:
                row += [format_time(times[peer]), f"{times[peer] / hand:.2f}"]
            else:
                row += ["-", "-"]
        lines.append("| " + " | ".join(row) + " |")
    ratios = [times[OURS] / times[HAND] for times in results.values()]
    lines += [
        "",
        f"median ours/hand: {statistics.median(ratios):.2f}",
        f"max ours/hand: {max(ratios):.2f}",
    ]
    return "\n".join(lines)


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

    results: dict[str, dict[str, float]] = {}
    for case in CASES:
        found = implementations(case)
        check(case, found)
        results[case.name] = measure(found, case.make_args(), samples, target_ns)
        print(f"timed {case.name}", file=sys.stderr)

    peers = [name for name in PEERS if any(name in times for times in results.values())]
    table = markdown_table(results, peers)
    print(table)
    if options.output:
        summary = f"{samples} samples of ~{math.ceil(target_ns / 1e6)} ms per implementation"
        with open(options.output, "w", encoding="utf-8") as file:
            file.write(f"# autodiff benchmark\n\n{table}\n\n{summary}\n\n{machine_details()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
