"""The markdown tables: times, ratios, compile times, memory, compile-time scaling.

A cell holds a number, the reason a column was not timed on that case
("unsupported", "skipped", ...; see the notes below the tables), or "-" when
there is nothing to compare.
"""

from __future__ import annotations

from collections.abc import Sequence

from implementations import FUNCTION, HAND, OUR_OPTIONS, OURS, OURS_NUMBA, CaseResult
from peers import JAX_JIT
from scaling import ScalingPoint, per_line_growth

Row = list[str]


def format_time(ns: float) -> str:
    """A duration in the largest unit that keeps it at or above 1.

    >>> format_time(1500.0), format_time(2.5e9)
    ('1.5 µs', '2.5 s')
    """
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


def format_ratio(value: float | None) -> str:
    """A ratio to two decimals (three significant digits once large), or "-"."""
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.3g}"


def markdown_table(header: Sequence[str], rows: Sequence[Row]) -> str:
    """A GitHub markdown table, numbers right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def time_cell(result: CaseResult, name: str) -> str:
    """A column's median time on this case, or why it has none."""
    if name == FUNCTION:
        return format_time(result.times_ns[FUNCTION])
    impl = result.implementations.get(name)
    if impl is None:
        return "-"
    if impl.problem:
        return impl.problem
    return format_time(result.times_ns[name])


def time_table(results: Sequence[CaseResult], columns: Sequence[str]) -> str:
    """Median time per call of the function, then of every gradient."""
    header = ["case", f"{FUNCTION} (function)", *columns]
    rows = [[r.case.name, *(time_cell(r, c) for c in [FUNCTION, *columns])] for r in results]
    return markdown_table(header, rows)


def ratio_table(results: Sequence[CaseResult], ours: Sequence[str], peers: Sequence[str]) -> str:
    """Ours against hand, every gradient against its function, each peer against ours."""
    gradients = [HAND, *ours]
    header = ["case", *(f"{name}/hand" for name in ours)]
    header += [f"{name}/f" for name in gradients]
    header += [f"{peer}/{OURS}" for peer in peers]
    rows = []
    for r in results:
        row = [r.case.name, *(format_ratio(r.ratio(name, HAND)) for name in ours)]
        row += [format_ratio(r.ratio(name, FUNCTION)) for name in gradients]
        row += [format_ratio(r.ratio(peer, OURS)) for peer in peers]
        rows.append(row)
    return markdown_table(header, rows)


def seconds_cell(value: float | None) -> str:
    return "-" if value is None else format_time(value * 1e9)


def compile_table(results: Sequence[CaseResult], ours: Sequence[str], peers: Sequence[str]) -> str:
    """Build time and first call of each flavour of ours, and JAX's trace-and-compile."""
    header = ["case"]
    for name in ours:
        header += [f"{name} build", f"{name} 1st call"]
    traced = [peer for peer in peers if peer == JAX_JIT]
    header += [f"{peer} 1st call" for peer in traced]
    rows = []
    for r in results:
        row = [r.case.name]
        for name in [*ours, *traced]:
            impl = r.implementations[name]
            cells = [seconds_cell(impl.first_call_s)]
            if name in OUR_OPTIONS:
                cells.insert(0, seconds_cell(impl.build_s))
            row += cells if not impl.problem else [impl.problem] * len(cells)
        rows.append(row)
    return markdown_table(header, rows)


def memory_table(results: Sequence[CaseResult], ours: Sequence[str]) -> str:
    """Peak memory of one call, hand against each flavour of ours tracemalloc can see."""
    seen = [name for name in ours if name != OURS_NUMBA]
    header = ["case", HAND, *(h for name in seen for h in (name, f"{name}/hand"))]
    rows = []
    for r in results:
        hand = r.peak_bytes[HAND]
        row = [r.case.name, format_bytes(hand)]
        for name in seen:
            peak = r.peak_bytes.get(name)
            if peak is None:
                row += [time_cell(r, name), "-"]
            else:
                row += [format_bytes(peak), format_ratio(peak / hand if hand else None)]
        rows.append(row)
    return markdown_table(header, rows)


def scaling_table(points: Sequence[ScalingPoint]) -> str:
    """Build time against the size of the generated derivative."""
    header = ["statements", "generated lines", "build time", "per line"]
    rows = [
        [str(p.statements), str(p.lines), seconds_cell(p.build_s), seconds_cell(p.seconds_per_line)]
        for p in points
    ]
    return markdown_table(header, rows)


def line_scaling_table(points: Sequence[ScalingPoint]) -> str:
    """Build and first-call time against the user's line count, and its growth."""
    return _growth_table(points, "user lines", "per user line", "lines")


def loop_scaling_table(points: Sequence[ScalingPoint]) -> str:
    """Build and first-call time against the number of loops, and its growth."""
    return _growth_table(points, "loops", "per loop", "loops")


def _growth_table(points: Sequence[ScalingPoint], size: str, per: str, unit: str) -> str:
    header = [size, "generated lines", "build + 1st call", per]
    rows = [
        [str(p.statements), str(p.lines), seconds_cell(p.build_s),
         seconds_cell(p.seconds_per_statement)]
        for p in points
    ]
    smallest = min(p.statements for p in points)
    largest = max(p.statements for p in points)
    return (markdown_table(header, rows) + f"\n\n{per.capitalize()} at {largest} {unit} "
            f"over that at {smallest}: {per_line_growth(points):.2f}×.")


def notes(results: Sequence[CaseResult]) -> list[str]:
    """One bullet per distinct reason a column went untimed, with the cases it hit."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for r in results:
        for impl in r.implementations.values():
            for detail in impl.details:
                grouped.setdefault((impl.name, impl.problem or "", detail), []).append(r.case.name)
    return [
        f"- {name}, {problem} on {', '.join(cases)}: {detail}"
        for (name, problem, detail), cases in grouped.items()
    ]


def section(title: str, body: str, intro: str = "") -> str:
    return "\n\n".join(part for part in (f"## {title}", intro, body) if part)

