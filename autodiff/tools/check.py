"""Finite differences, and gradient checking against them.

``numeric_grad`` estimates a gradient by evaluating the function at perturbed
points; ``check_grad`` compares autodiff's gradient (reverse mode) and its
forward mode with those estimates and reports the worst disagreement.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.sin(x) * x)
>>> x = np.array([0.5, -1.0, 2.0])
>>> np.allclose(ad.numeric_grad(f, x), np.cos(x) * x + np.sin(x))
True
>>> ad.check_grad(f, x).passed
True

Default steps, per element ``x_i`` of an argument of float type with machine
epsilon ``eps`` (2.2e-16 for float64, 1.2e-7 for float32):

- ``central``: ``h = eps ** (1/3) * max(1, |x_i|)`` (6e-6 for float64). The
  truncation error falls as ``h**2`` and the round-off error grows as
  ``eps / h``; their sum is smallest near ``eps ** (1/3)``.
- ``forward``: ``h = sqrt(eps) * max(1, |x_i|)`` (1.5e-8), the same balance for
  an error that falls only as ``h``.
- ``complex``: ``f(x + i h)`` has imaginary part ``h f'(x)`` with no
  subtraction, so there is no round-off to balance: ``h = 1e-20 * max(1, |x_i|)``.
  It needs ``f`` to carry complex numbers through (no ``abs``, no comparisons
  that matter, no casts to float).

A ``step`` given by the caller is absolute and used as it is.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from autodiff.api import grad, jvp, vjp
from autodiff.derivatives.wrt import Wrt
from autodiff.derivatives.wrt import resolve_wrt as parameters_named
from autodiff.errors import AutodiffError, NonScalarOutputError
from autodiff.graph.ir import Location

METHODS = ("central", "forward", "complex")



class GradientCheckError(AutodiffError):
    """A gradient disagrees with finite differences; ``.report`` holds the comparison."""

    def __init__(self, message: str, report: GradientCheckReport, **where) -> None:
        self.report = report
        super().__init__(message, **where)


class GradientCheckWarning(UserWarning):
    """Gradient checking at a precision too low to trust (float32 and below)."""


# ----- finite differences -----


def numeric_grad(f: Callable, *args, wrt: Wrt = 0, method: str = "central",
                 step: float | None = None):
    """The gradient of the scalar ``f(*args)`` by finite differences.

    ``wrt`` is an index, a name or a tuple of them, as in ``ad.grad``; the
    result has the same structure and the shapes of the arguments. ``method``
    is ``"central"`` (2 evaluations per element), ``"forward"`` (1 per element
    and 1 more) or ``"complex"`` (the complex step, 1 per element, exact to
    rounding where ``f`` allows complex input). See the module docstring for
    the default ``step``.

    >>> import numpy as np, autodiff as ad
    >>> float(ad.numeric_grad(lambda x: x ** 3, 2.0))  # doctest: +ELLIPSIS
    12.000000...
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    positions, single = resolve_wrt(f, wrt, len(args))
    args = list(args)
    gradients = [_numeric_gradient(f, args, position, method, step) for position in positions]
    return gradients[0] if single else tuple(gradients)


def evaluations(method: str, sizes: Sequence[int]) -> int:
    """How many times ``numeric_grad`` calls the function for arguments of these sizes."""
    n = sum(sizes)
    return {"central": 2 * n, "forward": n + len(sizes), "complex": n}[method]


def default_step(method: str, dtype) -> float:
    """The step relative to ``max(1, |x_i|)`` that ``numeric_grad`` uses by default."""
    eps = float(np.finfo(dtype).eps)
    return {"central": eps ** (1 / 3), "forward": eps ** 0.5, "complex": 1e-20}[method]


def _numeric_gradient(f: Callable, args: list, position: int, method: str,
                      step: float | None):
    original = args[position]
    x = np.asarray(original)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    work_dtype = np.result_type(dtype, np.complex64) if method == "complex" else dtype
    work = np.array(x, dtype=work_dtype)  # a copy: the caller's array is never touched
    gradient = np.zeros(x.shape, dtype=dtype)
    relative = default_step(method, dtype)
    scalar = np.ndim(original) == 0 and not isinstance(original, np.ndarray)

    def at(point) -> float | complex:
        # A fresh copy each time: a function that updates its argument in place
        # (x *= 2) must not move the point the next evaluation starts from.
        args[position] = point[()] if scalar else point.copy()
        return _scalar_output(f(*args), f)

    base = at(work) if method == "forward" else None
    try:
        for index in np.ndindex(x.shape):
            centre = work[index]
            h = step if step is not None else relative * max(1.0, abs(float(centre.real)))
            if method == "complex":
                work[index] = centre + 1j * h
                gradient[index] = _imaginary_part(at(work), f) / h
            else:
                h = float((centre + h) - centre)  # a step the float type represents exactly
                work[index] = centre + h
                above = at(work)
                if method == "forward":
                    gradient[index] = (above - base) / h
                else:
                    work[index] = centre - h
                    gradient[index] = (above - at(work)) / (2 * h)
            work[index] = centre
    finally:
        args[position] = original
    return float(gradient) if scalar else gradient


def _scalar_output(value, f: Callable):
    if np.ndim(value) != 0:
        raise NonScalarOutputError(
            f"finite differences need {function_name(f)} to return a scalar, not an array of shape "
            f"{np.shape(value)}", **_def_line(f),
            hint="check a non-scalar function with ad.check_grad, which draws a random "
                 "seed, or differentiate np.sum(seed * f(x))")
    return value[()] if isinstance(value, np.ndarray) else value


def _imaginary_part(value, f: Callable) -> float:
    if not np.iscomplexobj(value):
        raise AutodiffError(
            f"the complex step needs {function_name(f)} to return a complex number for a complex "
            f"input; it returned {type(value).__name__}", **_def_line(f),
            hint="abs, np.real, comparisons and casts to float drop the imaginary part; "
                 "use method='central'")
    return float(np.imag(value))


# ----- wrt, names and locations -----


def resolve_wrt(f: Callable, wrt: Wrt, count: int) -> tuple[list[int], bool]:
    """Positions of the arguments ``wrt`` names, among the ``count`` ``f`` is called
    with, and whether it named a single one."""
    positions, several = parameters_named(wrt, argument_names(f, count), function_name(f),
                                          Location.of_function(inspect.unwrap(f)))
    return positions, not several


def argument_names(f: Callable, count: int) -> list[str]:
    """The names of the first ``count`` positional parameters (``arg0``... if unknown)."""
    try:
        parameters = [p.name for p in inspect.signature(f).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        parameters = []
    return [parameters[i] if i < len(parameters) else f"arg{i}" for i in range(count)]


def function_name(f: Callable) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _def_line(f: Callable) -> dict:
    """Where errors about ``f`` point: its ``def`` line."""
    return Location.error_fields(Location.of_function(inspect.unwrap(f)))


# ----- gradient checking -----


@dataclass
class Comparison:
    """One gradient (or directional derivative) against its finite-difference estimate."""

    name: str
    shape: tuple
    max_abs_error: float
    max_rel_error: float
    worst_index: tuple
    ours: float
    numeric: float
    passed: bool


@dataclass
class GradientCheckReport:
    """The result of ``check_grad``: one row per argument, and one for forward mode."""

    function: str
    dtype: str
    method: str
    rtol: float
    atol: float
    rows: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(row.passed for row in self.rows)

    @property
    def failures(self) -> list[Comparison]:
        return [row for row in self.rows if not row.passed]

    def __str__(self) -> str:
        header = (f"gradient check of {self.function} ({self.dtype}, {self.method} differences, "
                  f"rtol={self.rtol:g}, atol={self.atol:g}): "
                  f"{'passed' if self.passed else 'FAILED'}")
        table = [("argument", "shape", "max abs error", "max rel error", "worst at", "autodiff",
                  "finite diff.", "")]
        for row in self.rows:
            table.append((row.name, str(row.shape), f"{row.max_abs_error:.2e}",
                          f"{row.max_rel_error:.2e}", str(row.worst_index), f"{row.ours:.8g}",
                          f"{row.numeric:.8g}", "ok" if row.passed else "FAILED"))
        return "\n".join([header, format_table(table), *self.notes])

    __repr__ = __str__


def check_grad(f: Callable, *args, wrt: Wrt = 0, rtol: float | None = None,
               atol: float | None = None, method: str = "central", step: float | None = None,
               seed: int = 0) -> GradientCheckReport:
    """Compare autodiff's gradient of ``f`` with finite differences; raise if they differ.

    For each argument in ``wrt``, the reverse-mode gradient is compared element
    by element with ``numeric_grad``: an element passes when
    ``|ours - numeric| <= atol + rtol * |numeric|``. Defaults are those of
    ``torch.autograd.gradcheck`` in float64 (``rtol=1e-3``, ``atol=1e-5``); a
    float32 argument loosens them to ``rtol=1e-2``, ``atol=1e-3`` with a
    ``GradientCheckWarning``. A function with an array output is checked
    through ``sum(v * f(x))`` for a random ``v`` (``ad.vjp``). The forward mode
    is checked too: ``ad.jvp`` along a random direction ``u`` must give
    ``<v, J u>`` equal to ``<J^T v, u>`` from the finite differences.

    Returns the report; raises ``GradientCheckError`` (with the report) on failure.

    >>> import numpy as np, autodiff as ad
    >>> print(ad.check_grad(lambda x: np.sum(x ** 2), np.ones(3)))  # doctest: +SKIP
    """

    positions, single = resolve_wrt(f, wrt, len(args))
    names = argument_names(f, len(args))
    low_precision = any(np.asarray(args[p]).dtype in (np.float32, np.float16)
                        for p in positions)
    rtol, atol = _tolerances(rtol, atol, low_precision)
    rng = np.random.default_rng(seed)
    output = f(*args)
    seeds = _random_like(output, rng)
    if seeds is None:
        target, ours = f, grad(f, wrt=wrt)(*args)
    else:
        def target(*a):
            return _inner(seeds, f(*a))
        pull = vjp(f, wrt=wrt)
        ours = pull(*args, **{pull.seed_name: seeds})
    ours = (ours,) if single else tuple(ours)
    numeric = numeric_grad(target, *args, wrt=positions, method=method, step=step)
    report = GradientCheckReport(function_name(f), str(np.asarray(args[positions[0]]).dtype),
                                 method, rtol, atol)
    for position, mine, theirs in zip(positions, ours, numeric):
        report.rows.append(_compare(names[position], mine, theirs, rtol, atol))
    _check_forward_mode(f, args, wrt, single, seeds, numeric, rng, report, jvp)
    if not report.passed:
        failed = ", ".join(row.name for row in report.failures)
        raise GradientCheckError(f"gradient check failed for {failed}:\n{report}", report,
                                 **_def_line(f))
    return report


def _tolerances(rtol: float | None, atol: float | None, low_precision: bool):
    if not low_precision:
        return (1e-3 if rtol is None else rtol), (1e-5 if atol is None else atol)
    rtol, atol = (1e-2 if rtol is None else rtol), (1e-3 if atol is None else atol)
    warnings.warn(f"checking gradients in float32: finite differences keep only a few correct "
                  f"digits there, so the tolerances are loose (rtol={rtol:g}, atol={atol:g}); "
                  f"float64 is the right precision for checking", GradientCheckWarning,
                  stacklevel=3)
    return rtol, atol


def _random_like(output, rng: np.random.Generator):
    """A random seed shaped like a non-scalar output (a tuple for a tuple); None for a scalar."""
    if isinstance(output, tuple):
        return tuple(rng.standard_normal(np.shape(part)) for part in output)
    if np.ndim(output) == 0:
        return None
    return rng.standard_normal(np.shape(output))


def _inner(a, b) -> float:
    if isinstance(a, tuple):
        return sum(_inner(x, y) for x, y in zip(a, b))
    return np.sum(np.asarray(a) * np.asarray(b))


def _compare(name: str, ours, numeric, rtol: float, atol: float) -> Comparison:
    ours = np.asarray(ours, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    if ours.shape != numeric.shape:
        return Comparison(name, numeric.shape, np.inf, np.inf, (), np.nan, np.nan, False)
    difference = np.abs(ours - numeric)
    if difference.size == 0:
        return Comparison(name, numeric.shape, 0.0, 0.0, (), 0.0, 0.0, True)
    scale = np.abs(numeric)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(difference == 0, 0.0, difference / scale)
    violation = difference / (atol + rtol * scale)
    violation = np.where(np.isnan(violation), np.inf, violation)  # a NaN never passes
    worst = np.unravel_index(np.argmax(violation), numeric.shape)
    return Comparison(name, numeric.shape, float(np.max(difference)), float(np.max(relative)),
                      tuple(int(i) for i in worst), float(ours[worst]), float(numeric[worst]),
                      bool(np.all(violation <= 1)))


def _check_forward_mode(f, args, wrt, single, seeds, numeric, rng, report, jvp) -> None:
    """The dot-product test: ``<v, J u>`` by forward mode against ``<J^T v, u>`` by FD."""
    try:
        push = jvp(f, wrt=wrt)
    except AutodiffError as error:
        report.notes.append(f"forward mode not checked: {error.message}")
        return
    directions = tuple(rng.standard_normal(np.shape(g)) for g in numeric)
    tangent = directions[0] if single else directions
    _, tangent_out = push(*args, **{push.tangent_name: tangent})
    ours = _inner(seeds, tangent_out) if seeds is not None else np.sum(tangent_out)
    expected = sum(_inner(g, u) for g, u in zip(numeric, directions))
    report.rows.append(_compare("jvp", ours, expected, report.rtol, report.atol))
    report.notes.append("jvp: <v, J u> by forward mode against <J^T v, u> from the finite "
                        "differences, along a random direction u")


def format_table(rows: list[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
