"""Time autodiff's generated gradients against hand-written NumPy gradients and peers.

Run from the repository root:

    python benchmarks/run.py                  # full run: prints, writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick          # smoke run: few samples, writes nothing
    python benchmarks/run.py --cases rnn      # only the cases whose name matches a regex
    python benchmarks/run.py --output FILE    # write the report to FILE

Only a full run (no --quick, --cases, --samples, --no-peers, --only, --no-scaling)
writes benchmarks/RESULTS.md by default, so a partial run never overwrites
the real figures.

Method. Every gradient is first called once (its compile time, for the jit
flavours and JAX) and checked against the hand-written gradient (rtol 1e-9),
and its inputs against a fresh copy: a wrong gradient is never timed. All
implementations of a case run in one process and take turns, one sample each
per round; a sample times back-to-back calls lasting about 30 ms, and the
time per call is the median over samples. The plain function f is timed
alongside, for the cheap-gradient ratio. A case taking its parameters in a
dict names its positional twin (the same function and numbers, one argument
per array): our gradient of the twin is checked likewise and timed in the
same rounds as the case, for the dict/positional ratio among the targets. A
separate pass measures the peak memory of one call with tracemalloc.
Linear-algebra libraries get one thread each (see threads.py) unless the
environment says otherwise.

Peers (JAX jit and eager, PyTorch, HIPS autograd, Tangent) get a column only
when their package imports; they are never required. `autodiff jit` and
`autodiff numba` say "unsupported" while `ad.grad` has no `jit` keyword, and
`autodiff numba` has a column only when numba imports.

The exit status is 1 when a flavour of ours crashed, returned a wrong
gradient or changed its inputs ("error", "wrong gradient", "modified its
inputs" in its cell, with the traceback on stderr); "unsupported" is not a failure.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# The harness modules sit beside this file; with PYTHONSAFEPATH (as in CI) Python
# does not put a script's own directory on sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import pin_threads

SET_BY_RUN = pin_threads()  # before NumPy, or any peer, is imported
ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "autodiff").is_dir():
    sys.path.insert(1, str(ROOT))  # measure this checkout, not an installed copy

# NumPy and the rest only now, after the thread settings, on purpose.
from cases import CASES, Case
from implementations import (
    BUGS,
    FUNCTION,
    HAND,
    OURS,
    OURS_JIT,
    CaseResult,
    build_all,
    first_calls,
    our_columns,
    positional_twins,
)
from machine import machine_details
from peers import available_peers
from report import (
    compile_table,
    memory_table,
    notes,
    line_scaling_table,
    loop_scaling_table,
    ratio_table,
    scaling_table,
    section,
    time_table,
)
from scaling import ScalingPoint, compile_scaling, line_scaling, loop_scaling
from targets import all_targets, targets_table
from timing import medians, peak_memory, sample

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
TARGET_SAMPLE_NS = 30_000_000


@dataclass(frozen=True)
class Settings:
    """How much to measure, from the command line."""

    samples: int
    target_ns: int
    quick: bool
    scaling: bool
    output: Path | None


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, Settings]:
    """The options, and the settings they imply."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 short samples")
    parser.add_argument("--samples", type=int, help="samples per implementation (default 15)")
    parser.add_argument("--cases", metavar="PATTERN", help="only cases matching this regex")
    parser.add_argument("--output", metavar="FILE", type=Path, help="write the report here")
    parser.add_argument("--no-peers", action="store_true", help="leave out JAX, torch, ...")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated columns to time "
                        "besides hand, e.g. 'autodiff,autodiff jit,torch'")
    parser.add_argument("--no-scaling", action="store_true", help="skip compile-time scaling")
    options = parser.parse_args(argv)
    partial = (options.quick or options.cases or options.samples or options.no_peers
               or options.only)
    full = not (partial or options.no_scaling)
    settings = Settings(
        samples=options.samples or (3 if options.quick else 15),
        target_ns=TARGET_SAMPLE_NS // 6 if options.quick else TARGET_SAMPLE_NS,
        quick=options.quick,
        scaling=not options.no_scaling,
        output=options.output or (RESULTS if full else None),
    )
    return options, settings


def select_cases(pattern: str | None) -> list[Case]:
    """The cases whose name matches `pattern` (case-insensitive), all without one."""
    if pattern is None:
        return list(CASES)
    chosen = [case for case in CASES if re.search(pattern, case.name, re.IGNORECASE)]
    if not chosen:
        raise SystemExit(f"no case matches {pattern!r}; cases: {[c.name for c in CASES]}")
    return chosen


def run_case(case: Case, ours: list[str], peers: list[str], settings: Settings) -> CaseResult:
    """Build, check, time and weigh every implementation of one case."""
    found = build_all(case, ours, peers)
    first_calls(case, found)
    twins = positional_twins(case, found)
    found.update(twins)
    args = case.make_args()
    working = {name: impl.gradient for name, impl in found.items() if impl.gradient is not None}
    own_args = {name: case.positional.make_args() for name in twins if name in working}
    samples = sample({FUNCTION: case.func, **working}, args, settings.samples,
                     settings.target_ns, own_args)
    # tracemalloc sees NumPy's allocations, not numba's nor the peers' own allocators
    weighed = {n: f for n, f in working.items() if n == HAND or n in (OURS, OURS_JIT)}
    return CaseResult(case, found, medians(samples), peak_memory(weighed, args), samples)


def document(
    results: list[CaseResult],
    ours: list[str],
    peers: list[str],
    points: list[ScalingPoint],
    header: str,
    line_points: list[ScalingPoint] = (),
    loop_points: list[ScalingPoint] = (),
) -> str:
    """The whole report, in markdown."""
    present = [*ours, *peers]
    parts = [
        header,
        section("Targets", targets_table(all_targets(results, ours, points, line_points))),
        section("Time per call (median)", time_table(results, [HAND, *present])),
        section("Ratios", ratio_table(results, ours, peers),
                "`X/hand` and `X/f`: X's time over the hand-written gradient's or the "
                "function's (lower is better). `peer/autodiff`: how many times faster "
                "plain autodiff is than the peer (higher is better)."),
        section("Compile time", compile_table(results, ours, peers),
                "Build: `ad.grad(...)` on a fresh function object (no cache). 1st call: "
                "where the jit flavours and `jax.jit` specialise to the argument shapes."),
        section("Peak memory of one call (tracemalloc)", memory_table(results, ours)),
    ]
    if points:
        parts.append(section("Compile time as the function grows", scaling_table(points),
                             "A generated chain of `np.tanh`/`np.sin`/`np.exp` layers, "
                             "its derivative built cold, fastest of 3 (2 with --quick)."))
    if line_points:
        parts.append(section("Compile time per user line", line_scaling_table(line_points),
                             "Straight-line functions, each line a new variable "
                             "(`h5 = np.sin(h4) * w + h4`, a reduction every fourth line): "
                             "`ad.grad(f, wrt=(0, 1, 2))` on a fresh function object and its "
                             "first call, fastest of 3 (2 with --quick)."))
    if loop_points:
        parts.append(section("Compile time per loop", loop_scaling_table(loop_points),
                             "Functions of small `for` loops one after another, each "
                             "carrying `h` through three steps of a layer: `ad.grad(f, "
                             "wrt=(0, 1, 2))` on a fresh function object and its first "
                             "call, fastest of 3 (2 with --quick)."))
    found_notes = notes(results)
    if found_notes:
        parts.append(section("Notes", "\n".join(found_notes)))
    return "\n\n".join(parts) + "\n"


def header_text(argv: Sequence[str], settings: Settings, seconds: float,
                peer_problems: dict[str, str]) -> str:
    """Title, the command, the sampling, and the machine."""
    command = shlex.join(["python", "benchmarks/run.py", *argv])
    sampling = (f"{settings.samples} samples of about {settings.target_ns / 1e6:.0f} ms per "
                "implementation (fewer, at least 3, for one too slow for that), median "
                f"reported; the run took {seconds / 60:.1f} min.")
    produced = (f"Produced by `{command}`. {sampling} See the docstring of "
                "`benchmarks/run.py` for the method.")
    machine = section("Machine", machine_details(SET_BY_RUN, peer_problems))
    return f"# autodiff benchmarks\n\n{produced}\n\n{machine}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen cases and the scaling, print the report, write it when asked."""
    argv = list(sys.argv[1:] if argv is None else argv)
    options, settings = parse(argv)
    start = time.perf_counter()
    only = options.only.split(",") if options.only else None
    ours = [name for name in our_columns() if only is None or name in only]
    peers, peer_problems = available_peers([] if options.no_peers else only)
    results = []
    for case in select_cases(options.cases):
        case_start = time.perf_counter()
        results.append(run_case(case, ours, peers, settings))
        print(f"timed {case.name} ({time.perf_counter() - case_start:.1f} s)", file=sys.stderr)
    points = compile_scaling(settings.quick) if settings.scaling else []
    line_points = line_scaling(settings.quick) if settings.scaling else []
    loop_points = loop_scaling(settings.quick) if settings.scaling else []
    header = header_text(argv, settings, time.perf_counter() - start, peer_problems)
    report = document(results, ours, peers, points, header, line_points, loop_points)
    print(report)
    if settings.output:
        settings.output.write_text(report, encoding="utf-8")
        print(f"wrote {settings.output}", file=sys.stderr)
    failed = any(impl.problem in BUGS for r in results for impl in r.implementations.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
