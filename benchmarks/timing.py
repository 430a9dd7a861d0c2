"""Timing and memory measurement: interleaved samples, medians, tracemalloc peaks.

A sample times many back-to-back calls of one implementation, with the count
chosen so that the sample lasts about `target_ns`; the implementations of a
case take turns, one sample each per round, so that a burst of load on the
machine hits them all alike. The time per call is the median over samples.
"""

from __future__ import annotations

import gc
import itertools
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

# A slow implementation (JAX dispatching a 500-step loop op by op takes seconds
# per call) gets fewer samples, never fewer than this, so the run stays short.
MIN_SAMPLES = 3


def time_calls(function: Callable[..., Any], args: tuple[Any, ...], calls: int) -> int:
    """Nanoseconds taken by `calls` back-to-back calls of `function(*args)`."""
    start = time.perf_counter_ns()
    for _ in itertools.repeat(None, calls):
        function(*args)
    return time.perf_counter_ns() - start


def timed_call(function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, float]:
    """The result of one call and the seconds it took (the first call: compile time)."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def calls_per_sample(
    function: Callable[..., Any], args: tuple[Any, ...], target_ns: int
) -> tuple[int, float]:
    """How many calls make one sample last about `target_ns`, and the time of one call."""
    calls = 1
    while True:
        elapsed = time_calls(function, args, calls)
        if elapsed >= target_ns // 5:
            return max(1, round(calls * target_ns / elapsed)), elapsed / calls
        calls *= 10 if elapsed < target_ns // 100 else 5


def sample_counts(sample_ns: dict[str, float], samples: int, budget_ns: float) -> dict[str, int]:
    """Samples per implementation: `samples`, fewer for one that would exceed `budget_ns`."""
    return {
        name: max(MIN_SAMPLES, min(samples, int(budget_ns // max(ns, 1.0))))
        for name, ns in sample_ns.items()
    }


def sample(
    functions: dict[str, Callable[..., Any]],
    args: tuple[Any, ...],
    samples: int,
    target_ns: int,
    own_args: dict[str, tuple[Any, ...]] | None = None,
) -> dict[str, list[float]]:
    """Nanoseconds per call of each function, one entry per sample, samples interleaved.

    Each function is called with `args`, or with its own in `own_args`. The
    starting implementation rotates from round to round, so none of them always
    runs right after the same neighbour. Entry i of every function comes from
    round i, so the entries of two functions pair up round by round.
    """
    own_args = own_args or {}
    arguments = {name: own_args.get(name, args) for name in functions}
    calls, sample_ns = {}, {}
    for name, function in functions.items():
        count, per_call_ns = calls_per_sample(function, arguments[name], target_ns)
        calls[name], sample_ns[name] = count, count * per_call_ns
    counts = sample_counts(sample_ns, samples, budget_ns=samples * target_ns)
    names = list(functions)
    per_call: dict[str, list[float]] = {name: [] for name in names}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for round_index in range(samples):
            shift = round_index % len(names)
            for name in names[shift:] + names[:shift]:
                if len(per_call[name]) < counts[name]:
                    elapsed = time_calls(functions[name], arguments[name], calls[name])
                    per_call[name].append(elapsed / calls[name])
    finally:
        if gc_was_enabled:
            gc.enable()
    return per_call


def medians(per_call: dict[str, list[float]]) -> dict[str, float]:
    """The median of each function's samples: its time per call."""
    return {name: statistics.median(times) for name, times in per_call.items()}


def peak_memory(functions: dict[str, Callable[..., Any]], args: tuple[Any, ...]) -> dict[str, int]:
    """Peak bytes allocated during one call of each function, by tracemalloc.

    Inputs exist before tracing starts and do not count; the returned gradient
    does. Only memory that NumPy and Python report to tracemalloc is seen,
    which is why peers and numba-compiled code are not measured here.
    """
    peaks = {}
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        for name, function in functions.items():
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
