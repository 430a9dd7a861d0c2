"""Loops against a hand-written adjoint: time and extra memory of every gradient, in one run.

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python benchmarks/loops.py            # full: writes benchmarks/LOOPS.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/loops.py --quick    # small sizes, writes nothing
    python benchmarks/loops.py --cases "kepler|pendulum"         # only the loops matching a regex
    python benchmarks/loops.py --no-peers --output FILE          # without JAX and PyTorch

The loops (see loop_programs.py): 10,000 damped oscillators over 1,000
semi-implicit Euler steps; a tanh RNN of 128 units over 500 steps; an RK4
pendulum on Python floats over 2,000 steps; Kepler's equation solved for 1,000
anomalies by a `while` iterating to convergence.

Method. Each gradient is built and called once (its compile time, for the jit
flavours and JAX), then checked against the hand adjoint: ours to rtol 1e-9,
JAX and PyTorch (in float64) to 1e-6, and its inputs against a fresh copy; a
wrong gradient is never timed. The function f and every gradient of a loop
take turns, one sample each per round (see timing.py); the time per call is
the median over samples. The extra memory of one call (its peak less the
memory before it) is measured for each implementation in a process of its
own: inputs made, gradient built and called once, then the kernel's
high-water mark of resident memory (VmHWM) reset through /proc/self/clear_refs
and read again after one more call. That sees every library's allocations
alike. So that memory the warm-up call freed is not counted as already
there, glibc returns blocks over 64 KiB to the kernel on free
(MALLOC_MMAP_THRESHOLD_), malloc_trim hands back the rest, and Python objects
come from malloc too (PYTHONMALLOC=malloc: the pendulum's floats). The
NumPy-only implementations are also weighed by tracemalloc, in bytes rather
than pages; where the kernel refuses the reset, that is their only figure,
and the others get none. The report says which method ran.

Checkpoint budgets: when `ad.grad` takes a `checkpoint=` keyword, ours is also
measured with memory budgets (`checkpoint="40MB"`) of 1/2, 1/10 and 1/100 of
its unbudgeted extra memory, each timed in the same rounds as the unbudgeted
gradient; without the keyword (or with --no-checkpoint) the report says so
and nothing runs.

The exit status is 1 when a flavour of ours crashed, returned a wrong gradient
or changed its inputs; a refusal (an AutodiffError) is not a failure.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import gc
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import time
import traceback
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import pin_threads

SET_BY_RUN = pin_threads()  # before NumPy, or any peer, is imported
ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "autodiff").is_dir():
    sys.path.insert(1, str(ROOT))  # measure this checkout, not an installed copy

import loop_cases as recurrent
import loop_programs as programs
from checking import same_gradient, same_inputs
from implementations import fresh_copy
from machine import machine_details
from peers import JAX_JIT, TORCH, available_peers
from report import format_time, markdown_table, section
from timing import medians, sample, timed_call

import autodiff as ad

LOOPS_MD = Path(__file__).resolve().parent / "LOOPS.md"
SCRIPT = Path(__file__).resolve()

FUNCTION = "f"
HAND = "hand"
OURS = "autodiff"
OURS_JIT = "jit=True"
OURS_NUMBA = "numba"
JAX_SCAN = "JAX scan"
JAX_CHECKPOINT = "JAX + checkpoint"
PYTORCH = "PyTorch"
OUR_OPTIONS: dict[str, dict[str, Any]] = {
    OURS: {}, OURS_JIT: {"jit": True}, OURS_NUMBA: {"jit": "numba"}
}
PEER_COLUMNS = {JAX_SCAN: JAX_JIT, JAX_CHECKPOINT: JAX_JIT, PYTORCH: TORCH}
COLUMNS = [FUNCTION, HAND, *OUR_OPTIONS, *PEER_COLUMNS]
PEER_RTOL = 1e-6
CHECKPOINT_FRACTIONS = (2, 10, 100)

# Problems that make the exit status 1: a bug in ours.
ERROR = "error"
WRONG = "wrong gradient"
MODIFIED_INPUTS = "modified its inputs"
BUGS = (ERROR, WRONG, MODIFIED_INPUTS)


@dataclass(frozen=True)
class LoopCase:
    """One loop program at one size: function, hand adjoint, what to differentiate."""

    key: str  # names the JAX program in loop_peers
    name: str
    func: Callable[..., Any]
    hand_grad: Callable[..., Any]
    wrt: tuple[str, ...]
    make_args: Callable[[], tuple[Any, ...]]


def loop_cases(quick: bool) -> list[LoopCase]:
    """The four loops, at the issue's sizes or, with `quick`, at a tenth or so of them."""
    n_osc, osc_steps = (1_000, 100) if quick else (10_000, 1_000)
    rnn_steps, n_in, n_hidden = (50, 8, 32) if quick else (500, 32, 128)
    rk4_steps = 200 if quick else 2_000
    n_kepler = 100 if quick else 1_000
    return [
        LoopCase("oscillators", f"oscillators {n_osc:,} × {osc_steps:,} Euler steps",
                 programs.oscillators, programs.oscillators_hand_grad, ("x", "v", "k"),
                 programs.oscillators_args(n_osc, osc_steps)),
        LoopCase("rnn", f"tanh RNN h={n_hidden}, {rnn_steps} steps", recurrent.rnn,
                 recurrent.rnn_hand_grad, ("W", "U", "h"),
                 recurrent.rnn_args(rnn_steps, n_in, n_hidden)),
        LoopCase("pendulum", f"RK4 pendulum on floats, {rk4_steps:,} steps", programs.pendulum,
                 programs.pendulum_hand_grad, ("theta", "omega", "g"),
                 programs.pendulum_args(rk4_steps)),
        LoopCase("kepler", f"while to 1e-12: Kepler n={n_kepler:,}", programs.kepler,
                 programs.kepler_hand_grad, ("M", "e"), programs.kepler_args(n_kepler)),
    ]


def first_line(error: BaseException, with_type: bool = True) -> str:
    """The first line of an error's message, for a table cell."""
    text = str(error).strip()
    line = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {line}" if with_type else line


def has_checkpoint_keyword() -> bool:
    return "checkpoint" in inspect.signature(ad.grad).parameters


def builder(column: str, case: LoopCase,
            checkpoint: str | None = None) -> Callable[..., Any]:
    """The function timed in `column` for `case` (imports JAX or PyTorch when asked)."""
    if column == FUNCTION:
        return case.func
    if column == HAND:
        return case.hand_grad
    if column in OUR_OPTIONS:
        options = dict(OUR_OPTIONS[column])
        if checkpoint is not None:
            options["checkpoint"] = checkpoint
        return ad.grad(fresh_copy(case.func), wrt=case.wrt, **options)
    import loop_peers

    if column == PYTORCH:
        return loop_peers.torch_gradient(case.func, case.wrt)
    return loop_peers.jax_scan_gradient(case.key, checkpoint=column == JAX_CHECKPOINT)


@dataclass
class Column:
    """One implementation of one loop: built, checked, timed, weighed; or why not."""

    name: str
    function: Callable[..., Any] | None = None
    problem: str | None = None
    first_call_s: float | None = None
    time_ns: float | None = None
    extra_bytes: int | None = None
    memory_method: str | None = None
    traced_bytes: int | None = None  # by tracemalloc, for the NumPy-only columns
    checkpoint: str | None = None
    to_unbudgeted: float | None = None  # a budgeted gradient's time over ours without one


def build_and_check(case: LoopCase, name: str, expected: Any,
                    checkpoint: str | None = None) -> Column:
    """Build column `name`, call it once, and keep it only when its gradient is right."""
    column = Column(name, checkpoint=checkpoint)
    ours = name in OUR_OPTIONS
    stage = "build"
    try:
        function = builder(name, case, checkpoint)
        stage = "first call"
        args = case.make_args()
        actual, column.first_call_s = timed_call(function, args)
    except ad.AutodiffError as error:
        column.problem = f"refused: {first_line(error, with_type=False)}"
        return column
    except Exception as error:  # noqa: BLE001  one column fails, the run goes on
        if ours and not (isinstance(error, TypeError) and stage == "build"):
            column.problem = f"{ERROR}: {first_line(error)}"
            print(f"{name} crashed on {case.name} ({stage}):", file=sys.stderr)
            traceback.print_exception(error, file=sys.stderr)
        else:  # a peer that cannot, or an ad.grad without the keyword: not our bug
            column.problem = f"unsupported: {first_line(error)}"
        return column
    if name == FUNCTION:
        column.function = function
        return column
    if not same_inputs(args, case.make_args()):
        column.problem = MODIFIED_INPUTS
    elif not same_gradient(expected, actual, 1e-9 if ours or name == HAND else PEER_RTOL):
        column.problem = WRONG
    else:
        column.function = function
    if column.problem:
        print(f"note: {name} on {case.name}: {column.problem}", file=sys.stderr)
    return column


# ----- memory: each implementation in a process of its own -----

VMHWM = "VmHWM (peak resident memory) growth, reset by /proc/self/clear_refs"
TRACEMALLOC = "tracemalloc (NumPy and Python allocations only)"
NUMPY_ONLY = (FUNCTION, HAND, OURS, OURS_JIT)


def _status_kib(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _release_free_memory() -> None:
    """Hand the pages of freed heap blocks back to the kernel (glibc's malloc_trim).

    Without it, the measured call would reuse memory its warm-up call freed,
    already resident, and its growth would be too small.
    """
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: large blocks are returned anyway
        pass


def _reset_peak() -> bool:
    """Reset the kernel's VmHWM to the present VmRSS; False where that does not work.

    A kernel that ignores the reset leaves VmHWM at the earlier peak, above
    VmRSS by what was freed since. The kernel's resident-memory counters are
    summed lazily over CPUs, so the two may differ by a few hundred KiB even
    after a reset: 1 MiB of slack, and more tries.
    """
    for _ in range(3):
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
                clear_refs.write("5")
        except OSError:
            return False
        if _status_kib("VmHWM") - _status_kib("VmRSS") <= 1024:
            return True
    return False


def measure_memory(function: Callable[..., Any], args: tuple[Any, ...],
                   numpy_only: bool) -> dict[str, Any]:
    """Extra peak bytes of one call of `function(*args)`, after a warm-up call; and how.

    "extra_bytes" by the kernel's high-water mark (by tracemalloc where that
    cannot be reset, for NumPy-only code); "traced_bytes" by tracemalloc as
    well, for NumPy-only code, which counts bytes rather than pages.
    """
    function(*args)  # compiles, fills caches: that is not the call's memory
    gc.collect()
    _release_free_memory()
    found: dict[str, Any] = {"extra_bytes": None, "method": None, "traced_bytes": None}
    if _reset_peak():
        before = _status_kib("VmRSS")
        result = function(*args)
        found["extra_bytes"], found["method"] = (_status_kib("VmHWM") - before) * 1024, VMHWM
        del result
    if numpy_only:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            result = function(*args)
            found["traced_bytes"] = tracemalloc.get_traced_memory()[1] - before
            del result
        finally:
            tracemalloc.stop()
        if found["method"] is None:
            found["extra_bytes"], found["method"] = found["traced_bytes"], TRACEMALLOC
    return found


def memory_child(case_key: str, column: str, quick: bool, checkpoint: str | None) -> None:
    """In a fresh process: build one implementation, measure it, print the result as JSON."""
    case = next(case for case in loop_cases(quick) if case.key == case_key)
    args = case.make_args()
    function = builder(column, case, checkpoint)
    print(json.dumps(measure_memory(function, args, column in NUMPY_ONLY)))


def child_environment() -> dict[str, str]:
    """This process's environment, with glibc returning every block over 64 KiB on free."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", MALLOC_TRIM_THRESHOLD_="65536",
               PYTHONMALLOC="malloc")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_child(case: LoopCase, column: Column, quick: bool) -> None:
    """Measure `column`'s extra memory on `case` in a subprocess; fill it in."""
    command = [sys.executable, str(SCRIPT), "--memory-of", case.key, column.name]
    command += ["--quick"] * quick
    if column.checkpoint is not None:
        command += ["--checkpoint-budget", column.checkpoint]
    completed = subprocess.run(command, capture_output=True, text=True, env=child_environment(),
                               timeout=600, check=False)
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        print(f"memory of {column.name} on {case.name} failed:\n{completed.stderr}",
              file=sys.stderr)
        return
    found = json.loads(lines[-1])
    column.extra_bytes, column.memory_method = found["extra_bytes"], found["method"]
    column.traced_bytes = found["traced_bytes"]


def weigh(jobs: list[tuple[LoopCase, Column]], quick: bool) -> None:
    """Every job's memory, two processes at a time (the timings are done by then)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda job: run_child(job[0], job[1], quick), jobs))


# ----- one loop: build, check, time -----


@dataclass
class LoopResult:
    case: LoopCase
    columns: dict[str, Column]
    budgets: list[Column] = field(default_factory=list)

    def ratio(self, top: str, bottom: str) -> float | None:
        a, b = self.columns[top].time_ns, self.columns[bottom].time_ns
        return a / b if a is not None and b else None


@dataclass(frozen=True)
class Settings:
    samples: int
    target_ns: int
    quick: bool
    peers: bool
    output: Path | None
    only: tuple[str, ...] | None  # the columns besides f and hand, or all of them


def run_loop(case: LoopCase, settings: Settings, peer_columns: list[str]) -> LoopResult:
    """Build and check every column of `case`, then time the good ones in the same rounds."""
    expected = case.hand_grad(*case.make_args())
    names = [FUNCTION, HAND, *[n for n in OUR_OPTIONS if n != OURS_NUMBA or numba_imports()],
             *peer_columns]
    names = [n for n in names if n in (FUNCTION, HAND) or not settings.only
             or n in settings.only]
    columns = {name: build_and_check(case, name, expected) for name in names}
    working = {n: c.function for n, c in columns.items() if c.function is not None}
    times = medians(sample(working, case.make_args(), settings.samples, settings.target_ns))
    for name, ns in times.items():
        columns[name].time_ns = ns
    return LoopResult(case, columns)


def numba_imports() -> bool:
    try:
        import numba  # noqa: F401
    except Exception:  # noqa: BLE001  a broken install counts as absent
        return False
    return True


def checkpoint_budget(extra_bytes: int, fraction: int) -> str:
    """A memory budget as `checkpoint=` takes it: a string with a decimal unit."""
    budget = extra_bytes / fraction
    if budget >= 10e6:
        return f"{round(budget / 1e6)}MB"
    return f"{max(1, round(budget / 1e3))}KB"


def run_budgets(result: LoopResult, settings: Settings) -> None:
    """Ours under budgets of 1/2, 1/10, 1/100 of its unbudgeted extra memory."""
    plain = result.columns[OURS]
    if plain.function is None or not plain.extra_bytes:
        return
    case = result.case
    expected = case.hand_grad(*case.make_args())
    for fraction in CHECKPOINT_FRACTIONS:
        budget = checkpoint_budget(plain.extra_bytes, fraction)
        column = build_and_check(case, OURS, expected, checkpoint=budget)
        result.budgets.append(column)
        if column.function is not None:
            times = medians(sample({OURS: plain.function, budget: column.function},
                                   case.make_args(), settings.samples, settings.target_ns))
            column.time_ns = times[budget]
            column.to_unbudgeted = times[budget] / times[OURS]
    weigh([(case, c) for c in result.budgets if c.function is not None], settings.quick)


# ----- the report -----


def format_bytes(count: float) -> str:
    """A byte count in decimal units, three significant digits.

    >>> format_bytes(80_640_000), format_bytes(1_010_000), format_bytes(0)
    ('80.6 MB', '1.01 MB', '0 B')
    """
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count:.0f} B"


def ours_at_best(result: LoopResult) -> str:
    """The fastest right flavour of ours on one loop, against the hand adjoint and f."""
    timed = [n for n in OUR_OPTIONS if n in result.columns and result.columns[n].time_ns]
    if not timed:
        return f"- {result.case.name}: no flavour of ours gave a right gradient."
    best = min(timed, key=lambda n: result.columns[n].time_ns)
    column, hand = result.columns[best], result.columns[HAND]
    memory = ""
    if column.extra_bytes is not None and hand.extra_bytes:
        memory = f", {column.extra_bytes / hand.extra_bytes:.2f}× its extra memory"
    return (f"- {result.case.name}: ours at best ({best}) {result.ratio(best, HAND):.2f}× the "
            f"hand adjoint's time{memory}; gradient ÷ f = {result.ratio(best, FUNCTION):.2f} "
            f"(hand: {result.ratio(HAND, FUNCTION):.2f}).")


def cell(result: LoopResult, name: str) -> str:
    """Time ÷ hand and extra memory, e.g. "5.3× (389 MiB)"; the hand's own time."""
    column = result.columns.get(name)
    if column is None:
        return "-"
    if column.problem:
        return column.problem.replace("|", "/")
    if column.time_ns is None:
        return "-"
    memory = "" if column.extra_bytes is None else f" ({format_bytes(column.extra_bytes)})"
    if name == HAND:
        return f"{format_time(column.time_ns)}{memory}"
    return f"{result.ratio(name, HAND):.2f}×{memory}"


def tables(results: list[LoopResult], shown: list[str]) -> list[str]:
    """The main table, gradient ÷ f, and times per call."""
    main = markdown_table(["loop", *shown], [[r.case.name, *(cell(r, n) for n in shown)]
                                             for r in results])
    gradients = [n for n in shown if n != FUNCTION]
    over_f = markdown_table(
        ["loop", *gradients],
        [[r.case.name, *(f"{r.ratio(n, FUNCTION):.2f}" if r.ratio(n, FUNCTION) else "-"
                         for n in gradients)] for r in results])
    per_call = markdown_table(
        ["loop", *shown],
        [[r.case.name, *(format_time(r.columns[n].time_ns) if r.columns[n].time_ns else "-"
                         for n in shown)] for r in results])
    weighed = [n for n in shown if n in NUMPY_ONLY]
    traced = markdown_table(
        ["loop", *weighed],
        [[r.case.name, *(format_bytes(r.columns[n].traced_bytes)
                         if r.columns[n].traced_bytes is not None else "-" for n in weighed)]
         for r in results])
    return [
        section("Summary", "\n".join(ours_at_best(r) for r in results)),
        section("Time ÷ hand adjoint (extra peak memory of one call)", main,
                "Each cell: the column's time per call over the hand adjoint's (lower is "
                "better), and in brackets the memory its call needs beyond what existed "
                "before it. The hand column gives its own time per call; the f column is "
                "the function itself, not a gradient."),
        section("Gradient ÷ f", over_f,
                "The cost of the gradient in evaluations of the plain NumPy function f "
                "(the same f for every column)."),
        section("Time per call (median)", per_call),
        section("Extra memory by tracemalloc (NumPy-only columns)", traced,
                "The same calls weighed by tracemalloc, which counts the bytes NumPy and "
                "Python allocate rather than resident pages: closer for figures of a few "
                "MiB and less, blind to numba, JAX and PyTorch."),
    ]


def budget_section(results: list[LoopResult], enabled: bool) -> str:
    if not enabled:
        why = ("`ad.grad` has no `checkpoint=` keyword in this checkout" if not
               has_checkpoint_keyword() else "--no-checkpoint")
        return section("Checkpoint budgets", f"Skipped: {why}.")
    rows = []
    for r in results:
        plain = r.columns[OURS]
        for column in r.budgets:
            memory = "-" if column.extra_bytes is None else format_bytes(column.extra_bytes)
            ratio = "-" if column.to_unbudgeted is None else f"{column.to_unbudgeted:.2f}"
            rows.append([r.case.name, f'checkpoint="{column.checkpoint}"',
                         column.problem or ratio, memory])
        if not r.budgets:
            rows.append([r.case.name, "-", plain.problem or "-", "-"])
    return section("Checkpoint budgets", markdown_table(
        ["loop", "budget", "time ÷ unbudgeted autodiff", "extra memory"], rows),
        "Ours with a memory budget of 1/2, 1/10 and 1/100 of its unbudgeted extra "
        "memory; each budgeted gradient is timed in the same rounds as the unbudgeted one.")


def notes(results: list[LoopResult], quick: bool) -> list[str]:
    methods = sorted({c.memory_method for r in results for c in r.columns.values()
                      if c.memory_method})
    lines = [(f"- Memory measured by {', '.join(methods) or 'nothing (no method worked)'}, "
              "each implementation in a process of its own, after one warm-up call, with "
              "freed memory handed back to the kernel (MALLOC_MMAP_THRESHOLD_, malloc_trim, "
              "PYTHONMALLOC=malloc). Figures under 1 MB are coarse (whole pages, counters "
              "summed lazily): the tracemalloc table is closer there.")]
    if any(JAX_SCAN in r.columns or PYTORCH in r.columns for r in results):
        lines.append("- JAX programs: the loop as `jax.lax.scan` under `jax.jit(jax.grad(...))`; "
                     "the `while` to convergence first finds its iteration count with a jitted "
                     "`lax.while_loop` (JAX cannot reverse-differentiate one), then scans that "
                     "many steps. PyTorch runs the same Python function eagerly on tensors.")
    lines.append("- First calls (compile for the jit flavours and JAX), in seconds: " + "; ".join(
        f"{r.case.name}: " + ", ".join(f"{n} {c.first_call_s:.2f}" for n, c in r.columns.items()
                                       if c.first_call_s is not None and n in
                                       (OURS_JIT, OURS_NUMBA, JAX_SCAN, JAX_CHECKPOINT))
        for r in results))
    for r in results:
        for column in [*r.columns.values(), *r.budgets]:
            if column.problem == WRONG:
                rtol = "1e-6" if column.name in PEER_COLUMNS else "1e-9"
                lines.append(f"- {column.name} on {r.case.name}: its gradient disagrees with "
                             f"the hand adjoint (rtol {rtol}), so it was not timed.")
            elif column.problem == MODIFIED_INPUTS:
                lines.append(f"- {column.name} on {r.case.name}: it changed its arguments in "
                             "place, so it was not timed.")
    if quick:
        lines.append("- --quick: small sizes, few samples; the figures are for smoke only.")
    return lines


def command_line(argv: Sequence[str]) -> str:
    pinned = "" if "OPENBLAS_NUM_THREADS" in SET_BY_RUN else (
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']} ")
    return f"{pinned}{shlex.join(['python', 'benchmarks/loops.py', *argv])}"


def document(results: list[LoopResult], shown: list[str], argv: Sequence[str],
             settings: Settings, seconds: float, peer_problems: dict[str, str],
             budgets: bool) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    produced = (f"Produced by `{command_line(argv)}` in {seconds / 60:.1f} min "
                f"(load average at the end: {load}): "
                f"{settings.samples} samples of about {settings.target_ns / 1e6:.0f} ms per "
                "implementation (fewer, at least 3, for a slow one), median reported. See the "
                "docstring of `benchmarks/loops.py` for the method.")
    machine = machine_details(SET_BY_RUN, peer_problems).replace("set by run.py",
                                                                 "set by loops.py")
    parts = ["# Loop benchmarks: gradients against a hand-written adjoint", produced,
             section("Machine", machine), *tables(results, shown),
             budget_section(results, budgets), section("Notes", "\n".join(notes(results,
                                                                                settings.quick)))]
    return "\n\n".join(parts) + "\n"


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, Settings]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few short samples")
    parser.add_argument("--cases", metavar="REGEX", help="only the loops whose name matches")
    parser.add_argument("--no-peers", action="store_true", help="leave out JAX and PyTorch")
    parser.add_argument("--only", metavar="COLUMNS", help="comma-separated columns to run "
                        "besides f and hand, e.g. 'autodiff,jit=True,PyTorch'")
    parser.add_argument("--no-checkpoint", action="store_true",
                        help="skip the checkpoint budgets even where ad.grad takes them")
    parser.add_argument("--samples", type=int, help="samples per implementation (default 11)")
    parser.add_argument("--output", metavar="FILE", type=Path, help="write the report here")
    parser.add_argument("--memory-of", nargs=2, metavar=("LOOP", "COLUMN"),
                        help=argparse.SUPPRESS)  # the child process of one memory measurement
    parser.add_argument("--checkpoint-budget", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    full = not (options.quick or options.cases or options.no_peers or options.samples
                or options.only or options.no_checkpoint)
    settings = Settings(
        samples=options.samples or (3 if options.quick else 11),
        target_ns=5_000_000 if options.quick else 100_000_000,
        quick=options.quick,
        peers=not options.no_peers,
        output=options.output or (LOOPS_MD if full else None),
        only=tuple(options.only.split(",")) if options.only else None,
    )
    return options, settings


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    options, settings = parse(argv)
    if options.memory_of:
        memory_child(*options.memory_of, settings.quick, options.checkpoint_budget)
        return 0
    start = time.perf_counter()
    cases = [c for c in loop_cases(settings.quick)
             if not options.cases or re.search(options.cases, c.name, re.IGNORECASE)]
    if not cases:
        raise SystemExit(f"no loop matches {options.cases!r}")
    found, peer_problems = available_peers([JAX_JIT, TORCH] if settings.peers else [])
    peer_columns = [name for name, peer in PEER_COLUMNS.items() if peer in found]
    results = []
    for case in cases:
        case_start = time.perf_counter()
        results.append(run_loop(case, settings, peer_columns))
        print(f"timed {case.name} ({time.perf_counter() - case_start:.1f} s)", file=sys.stderr)
    weigh([(r.case, c) for r in results for c in r.columns.values() if c.function is not None],
          settings.quick)
    budgets = has_checkpoint_keyword() and not options.no_checkpoint
    if budgets:
        for result in results:
            run_budgets(result, settings)
    elif not options.no_checkpoint:
        print("checkpoint budgets skipped: ad.grad has no checkpoint= keyword", file=sys.stderr)
    shown = [name for name in COLUMNS if any(name in r.columns for r in results)]
    report = document(results, shown, argv, settings, time.perf_counter() - start,
                      peer_problems, budgets)
    print(report)
    if settings.output:
        settings.output.write_text(report, encoding="utf-8")
        print(f"wrote {settings.output}", file=sys.stderr)
    bugs = [c for r in results for c in [*r.columns.values(), *r.budgets]
            if c.name in OUR_OPTIONS and c.problem and c.problem.split(":")[0] in BUGS]
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
