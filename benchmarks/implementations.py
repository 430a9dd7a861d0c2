"""Every way to get a case's gradient: built, called once, and checked before timing.

The columns are the hand-written gradient (the reference), ours in its three
flavours (plain, `jit=True`, `jit="numba"`) and the peers that import. Each
gets an `Implementation` recording its build time, its first call (where jit
flavours and JAX specialise and compile) and, when it cannot be timed, why:

- "unsupported": autodiff rejects the case (an AutodiffError), or a jit flavour
  is not available (a TypeError: `ad.grad` has no `jit` keyword yet);
- "error", "wrong gradient", "modified its inputs": a bug in ours, which makes
  the run's exit status 1 (the traceback goes to stderr);
- "failed", "cannot trace", "skipped": a peer that cannot do the case (JAX's
  tracer meeting a `while` on the data), or is not asked to.

A case with a `positional` twin (its parameters in a dict, say) also gets, for
each flavour of ours that works on it, that flavour's gradient of the twin
("autodiff (positional)"): built and checked the same way, timed in the same
rounds, shown in no table but in the targets.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cases import Case
from checking import same_gradient, same_inputs
from peers import PEERS, skip_reason
from timing import timed_call

import autodiff as ad

FUNCTION = "f"
HAND = "hand"
OURS = "autodiff"
OURS_JIT = "autodiff jit"
OURS_NUMBA = "autodiff numba"
OUR_OPTIONS: dict[str, dict[str, Any]] = {
    OURS: {}, OURS_JIT: {"jit": True}, OURS_NUMBA: {"jit": "numba"}
}

UNSUPPORTED = "unsupported"
ERROR = "error"
WRONG = "wrong gradient"
MODIFIED_INPUTS = "modified its inputs"
FAILED = "failed"
CANNOT_TRACE = "cannot trace"
SKIPPED = "skipped"
BUGS = (ERROR, WRONG, MODIFIED_INPUTS)


@dataclass
class Implementation:
    """One column of one case: the gradient function, its costs, or why it is missing."""

    name: str
    gradient: Callable[..., Any] | None = None
    build_s: float | None = None
    first_call_s: float | None = None
    problem: str | None = None
    details: list[str] = field(default_factory=list)

    def fail(self, problem: str, detail: str) -> None:
        """Mark this implementation as not timed, keeping the reason for the notes."""
        self.problem, self.gradient = problem, None
        self.details.append(detail)


def positional_twin(name: str) -> str:
    """The name under which flavour `name` of ours is timed on a case's positional twin."""
    return f"{name} (positional)"


def numba_version() -> str | None:
    """numba's version when it imports; `jit="numba"` needs it, so no numba, no column."""
    try:
        return importlib.import_module("numba").__version__
    except Exception:  # noqa: BLE001  a broken install counts as absent
        return None


def our_columns() -> list[str]:
    """The flavours of ours to time here: numba's only when numba imports."""
    return [name for name in OUR_OPTIONS if name != OURS_NUMBA or numba_version()]


def fresh_copy(func: Callable[..., Any]) -> Callable[..., Any]:
    """The same function as a new object, so `ad.grad`'s per-function cache misses.

    Every flavour's build time is then a cold build.
    """
    return types.FunctionType(
        func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__
    )


def _our_builder(options: dict[str, Any]) -> Callable[[Case], Callable[..., Any]]:
    return lambda case: ad.grad(fresh_copy(case.func), wrt=case.wrt, **options)


def _unsupported_errors(name: str) -> tuple[type[BaseException], ...]:
    """Exceptions meaning "ours cannot do this yet", not "ours is broken"."""
    if name == OURS:
        return (ad.AutodiffError,)
    return (ad.AutodiffError, TypeError)  # TypeError: no `jit` keyword in ad.grad yet


def _classify(impl: Implementation, case: Case, stage: str, error: Exception) -> None:
    """Record a failure to build or call, as unsupported, a bug in ours, or a peer failure."""
    detail = f"{stage}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    if impl.name not in OUR_OPTIONS:
        # JAX's tracer meeting Python control flow on data, without importing jax here
        traced = any(k.__name__ == "ConcretizationTypeError" for k in type(error).__mro__)
        impl.fail(CANNOT_TRACE if traced else FAILED, detail)
    elif isinstance(error, _unsupported_errors(impl.name)):
        impl.fail(UNSUPPORTED, detail)
    else:
        impl.fail(ERROR, detail)
        print(f"{impl.name} crashed on {case.name} ({stage}):", file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)


def build_all(case: Case, ours: list[str], peers: list[str]) -> dict[str, Implementation]:
    """Build every column's gradient for `case`, timing each build."""
    builders: dict[str, Callable[[Case], Callable[..., Any]]] = {HAND: lambda c: c.hand_grad}
    builders.update({name: _our_builder(OUR_OPTIONS[name]) for name in ours})
    builders.update({name: PEERS[name] for name in peers})
    found = {}
    for name, builder in builders.items():
        impl = found[name] = Implementation(name)
        reason = skip_reason(name, case)
        if reason:
            impl.fail(SKIPPED, reason)
            continue
        start = time.perf_counter()
        try:
            impl.gradient = builder(case)
        except Exception as error:  # noqa: BLE001  one column fails, the run goes on
            _classify(impl, case, "build", error)
        else:
            impl.build_s = time.perf_counter() - start
    return found


def first_calls(case: Case, found: dict[str, Implementation]) -> None:
    """Call each gradient once, timing it, and drop those that disagree with the hand one.

    The hand-written gradient must itself work, or the case is broken: that raises.
    """
    expected, found[HAND].first_call_s = timed_call(case.hand_grad, case.make_args())
    for impl in found.values():
        if impl.gradient is None or impl.name == HAND:
            continue
        args = case.make_args()
        try:
            actual, impl.first_call_s = timed_call(impl.gradient, args)
        except Exception as error:  # noqa: BLE001  reported in its cell
            _classify(impl, case, "first call", error)
            continue
        if not same_inputs(args, case.make_args()):
            impl.fail(MODIFIED_INPUTS, "changed its arguments in place")
        elif not same_gradient(expected, actual):
            impl.fail(WRONG, "disagrees with the hand-written gradient")
        if impl.problem:
            print(f"note: {impl.name} on {case.name}: {impl.problem}", file=sys.stderr)


def positional_twins(case: Case, found: dict[str, Implementation]) -> dict[str, Implementation]:
    """Each flavour of ours that works on `case`, built and checked on its positional twin.

    Keyed by `positional_twin(flavour)`; empty when the case has no twin.
    """
    twin = case.positional
    flavours = [name for name, impl in found.items()
                if name in OUR_OPTIONS and impl.gradient is not None]
    if twin is None or not flavours:
        return {}
    built = build_all(twin, flavours, peers=[])
    first_calls(twin, built)
    twins = {}
    for name in flavours:
        impl = twins[positional_twin(name)] = built[name]
        impl.name = positional_twin(name)
    return twins


@dataclass
class CaseResult:
    """What one case measured: its columns, median times per call, and memory peaks.

    `samples_ns` keeps every sample behind each median, in round order.
    """

    case: Case
    implementations: dict[str, Implementation]
    times_ns: dict[str, float]
    peak_bytes: dict[str, int]
    samples_ns: dict[str, list[float]] = field(default_factory=dict)

    def time(self, name: str) -> float | None:
        """Median nanoseconds per call of column `name`, or None when it was not timed."""
        return self.times_ns.get(name)

    def ratio(self, numerator: str, denominator: str) -> float | None:
        """time(numerator) / time(denominator), or None when either is missing."""
        top, bottom = self.time(numerator), self.time(denominator)
        return top / bottom if top is not None and bottom else None
