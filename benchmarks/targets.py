"""The issue's targets, each with the measured figure and PASS or MISS.

A target whose figure could not be measured here (no peer installed, a jit
flavour not available yet) says "not measured" instead of passing silently.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cases import OVERHEAD, SCALAR_LOOP
from implementations import (
    FUNCTION,
    HAND,
    OURS,
    OURS_JIT,
    OURS_NUMBA,
    CaseResult,
    positional_twin,
)
from peers import AUTOGRAD, JAX_JIT, TORCH
from report import format_ratio, format_time, markdown_table, seconds_cell
from scaling import ScalingPoint, per_line_growth, reference_point

NOT_MEASURED = "not measured"

# (peer, the least speed-up of ours over it on the overhead-bound cases)
OVERHEAD_SPEEDUPS = ((TORCH, 10.0), (AUTOGRAD, 10.0), (JAX_JIT, 2.0))


@dataclass(frozen=True)
class Target:
    """One line of the summary: what was asked, what was measured, and the verdict."""

    goal: str
    measured: str
    verdict: str


def verdict(passed: bool) -> str:
    return "PASS" if passed else "MISS"


def extreme(
    results: Sequence[CaseResult], value: Callable[[CaseResult], float | None], pick: Callable
) -> tuple[float, str] | None:
    """The largest or smallest (by `pick`, max or min) value over the cases, and its case."""
    found = [(v, r.case.name) for r in results if (v := value(r)) is not None]
    return pick(found) if found else None


def ratio_targets(results: Sequence[CaseResult], ours: Sequence[str]) -> list[Target]:
    """Median and worst of ours/hand, for the plain and jit flavours."""
    targets = []
    for name in (n for n in (OURS, OURS_JIT) if n in ours):
        ratios = [v for r in results if (v := r.ratio(name, HAND)) is not None]
        if not ratios:
            targets.append(Target(f"{name}/hand median ≤ 1.05", NOT_MEASURED, "-"))
            continue
        median = statistics.median(ratios)
        worst, case = extreme(results, lambda r, n=name: r.ratio(n, HAND), max)
        targets += [
            Target(f"{name}/hand median ≤ 1.05", f"{median:.2f} over {len(ratios)} cases",
                   verdict(median <= 1.05)),
            Target(f"{name}/hand worst ≤ 1.3", f"{worst:.2f} ({case})", verdict(worst <= 1.3)),
        ]
    return targets


def speedup_targets(results: Sequence[CaseResult], ours: Sequence[str]) -> list[Target]:
    """Each flavour of ours against the peers on the overhead-bound cases: the least speed-up."""
    overhead = [r for r in results if OVERHEAD in r.case.tags]
    targets = []
    for name in ours:
        for peer, least in OVERHEAD_SPEEDUPS:
            goal = f"{name} ≥ {least:g}× faster than {peer} (overhead-bound cases)"
            found = extreme(overhead, lambda r, p=peer, n=name: r.ratio(p, n), min)
            if found is None:
                targets.append(Target(goal, NOT_MEASURED, "-"))
            else:
                value, case = found
                targets.append(Target(goal, f"{format_ratio(value)}× ({case})",
                                      verdict(value >= least)))
    return targets


def numba_target(results: Sequence[CaseResult], ours: Sequence[str]) -> list[Target]:
    """jit="numba" against plain generated code on the scalar loops."""
    goal = f"{OURS_NUMBA} ≥ 5× faster than {OURS} (scalar-loop cases)"
    loops = [r for r in results if SCALAR_LOOP in r.case.tags]
    found = extreme(loops, lambda r: r.ratio(OURS, OURS_NUMBA), min) if OURS_NUMBA in ours else None
    if found is None:
        return [Target(goal, NOT_MEASURED, "-")]
    value, case = found
    return [Target(goal, f"{format_ratio(value)}× ({case})", verdict(value >= 5.0))]


def cheap_gradient_targets(results: Sequence[CaseResult], ours: Sequence[str]) -> list[Target]:
    """The worst gradient time / function time, ours against 3, hand for comparison."""
    targets = []
    for name in (HAND, *ours):
        goal = f"{name}: gradient / function ≤ 3 on every case"
        found = extreme(results, lambda r, n=name: r.ratio(n, FUNCTION), max)
        if found is None:
            targets.append(Target(goal, NOT_MEASURED, "-"))
            continue
        value, case = found
        judged = verdict(value <= 3.0) if name != HAND else "(reference)"
        targets.append(Target(goal, f"worst {format_ratio(value)} ({case})", judged))
    return targets


def compile_targets(points: Sequence[ScalingPoint]) -> list[Target]:
    """Build time at about 200 generated lines, and its growth up to the largest size."""
    if not points:
        return [Target("compile time ≤ 0.5 s at 200 lines, linear", NOT_MEASURED, "-")]
    reference, largest = reference_point(points), max(points, key=lambda p: p.lines)
    growth = largest.seconds_per_line / reference.seconds_per_line
    return [
        Target("compile time ≤ 0.5 s for a ~200-line derivative",
               f"{seconds_cell(reference.build_s)} at {reference.lines} lines",
               verdict(reference.build_s <= 0.5)),
        Target(f"linear: time per line at {largest.lines} lines ≤ 2× that at "
               f"{reference.lines}", f"{growth:.2f}×", verdict(growth <= 2.0)),
    ]


def line_targets(points: Sequence[ScalingPoint]) -> list[Target]:
    """Build and first call per user line on straight-line code, and its growth."""
    if not points:
        return [Target("build + 1st call ≤ 2 ms per user line, linear", NOT_MEASURED, "-")]
    worst = max(points, key=lambda p: p.seconds_per_statement)
    smallest = min(points, key=lambda p: p.statements)
    largest = max(points, key=lambda p: p.statements)
    growth = per_line_growth(points)
    return [
        Target("build + 1st call ≤ 2 ms per user line (straight-line code)",
               f"worst {seconds_cell(worst.seconds_per_statement)} at {worst.statements} lines",
               verdict(worst.seconds_per_statement <= 0.002)),
        Target(f"linear: per user line at {largest.statements} lines ≤ 1.5× that at "
               f"{smallest.statements}", f"{growth:.2f}×", verdict(growth <= 1.5)),
    ]


def structure_targets(results: Sequence[CaseResult], ours: Sequence[str]) -> list[Target]:
    """Each flavour of ours on a dict-of-parameters case against its positional twin.

    Both are timed in the same rounds, so each round gives a ratio of the two;
    the measured ratio is their median, its noise their interquartile range.
    The target passes when that range reaches down to 1.0: in at least a
    quarter of the rounds the dict version was as fast as the positional one.
    """
    targets = []
    for r in (r for r in results if r.case.positional is not None):
        for name in (n for n in (OURS, OURS_JIT) if n in ours):
            twin = positional_twin(name)
            goal = (f"{name}: dict params / positional params within noise of 1.0 "
                    f"({r.case.positional.name})")
            if r.time(name) is None or r.time(twin) is None:
                targets.append(Target(goal, NOT_MEASURED, "-"))
                continue
            rounds = [d / p for d, p in zip(r.samples_ns[name], r.samples_ns[twin])]
            low, median, high = statistics.quantiles(rounds, n=4, method="inclusive")
            measured = (f"{median:.2f} (interquartile {low:.2f} to {high:.2f} over "
                        f"{len(rounds)} rounds; {format_time(r.time(name))} against "
                        f"{format_time(r.time(twin))})")
            targets.append(Target(goal, measured, verdict(low <= 1.0)))
    return targets


def all_targets(
    results: Sequence[CaseResult], ours: Sequence[str], points: Sequence[ScalingPoint],
    line_points: Sequence[ScalingPoint] = (),
) -> list[Target]:
    """Every target of the issue, in the issue's order."""
    return [
        *ratio_targets(results, ours),
        *speedup_targets(results, ours),
        *numba_target(results, ours),
        *cheap_gradient_targets(results, ours),
        *compile_targets(points),
        *line_targets(line_points),
        *structure_targets(results, ours),
    ]


def targets_table(targets: Sequence[Target]) -> str:
    return markdown_table(["target", "measured", "verdict"],
                          [[t.goal, t.measured, t.verdict] for t in targets])
