"""Three ways to a derivative, side by side: SymPy, finite differences, autodiff.

``compare`` computes the same gradient by each method at the same point and
tabulates how far each is from the most accurate one, what one gradient costs
(in seconds and in evaluations of the function) and how big its working is:
the size of the symbolic expression, or the lines of generated code.

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.sin(np.exp(x)) * x)
>>> table = ad.compare(f, np.linspace(0.1, 0.5, 4), verbose=False)
>>> [row.method for row in table.rows][-1]
'reverse mode (autodiff)'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from autodiff import tree
from autodiff.derivatives.jacobian import build_gradient
from autodiff.derivatives.structured import per_structure
from autodiff.errors import AutodiffError
from autodiff.frontend.structures import has_gradient, path_text
from autodiff.tools.check import (
    Wrt,
    argument_names,
    evaluations,
    format_table,
    function_name,
    numeric_grad,
    resolve_parts,
)
from autodiff.tools.notebook import html_table, in_ipython

SYMBOLIC, REVERSE = "symbolic (SymPy)", "reverse mode (autodiff)"
DIFFERENCES = {"forward": "forward differences", "central": "central differences",
               "complex": "complex step"}


@dataclass
class MethodResult:
    """One way of computing the gradient, and what it cost."""

    method: str
    gradient: tuple | None  # one array per argument in wrt; None when unavailable
    seconds: float = np.nan  # per gradient, median of several runs
    evaluations: str = ""  # evaluations of the function per gradient
    size: str = ""  # expression size (SymPy) or generated lines (autodiff)
    build_seconds: float = np.nan  # once: differentiating symbolically, or compiling
    error: float = np.nan  # against the reference, relative to its largest element
    note: str = ""

    @property
    def available(self) -> bool:
        return self.gradient is not None


@dataclass
class Comparison:
    """The table ``compare`` prints: one ``MethodResult`` per method."""

    function: str
    rows: list[MethodResult]
    reference: str
    function_seconds: float

    def row(self, method: str) -> MethodResult:
        return next(row for row in self.rows if row.method == method)

    @property
    def title(self) -> str:
        return (f"gradient of {self.function}: error = max |g - reference| / max |reference|, "
                f"against the {self.reference}; f(x) takes {_seconds(self.function_seconds)}")

    def table(self) -> list[tuple[str, ...]]:
        """The table as text cells, the header first."""
        table = [("method", "error", "time / gradient", "x f(x)", "f evaluations", "size",
                  "built in")]
        for row in self.rows:
            if not row.available:
                table.append((row.method, "unavailable", "", "", "", "", ""))
                continue
            error = "reference" if row.method == self.reference else f"{row.error:.1e}"
            table.append((row.method, error, _seconds(row.seconds),
                          f"{row.seconds / self.function_seconds:.1f}", row.evaluations,
                          row.size, _seconds(row.build_seconds)))
        return table

    @property
    def notes(self) -> list[str]:
        """Why each unavailable method is."""
        return [f"{row.method}: {row.note}" for row in self.rows if not row.available]

    def __str__(self) -> str:
        return "\n".join([self.title, format_table(self.table()), *self.notes])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_table(self.title, self.table(), [not row.available for row in self.rows],
                          self.notes)


def compare(f: Callable, *args, wrt: Wrt = 0, verbose: bool | None = None,
            symbolic: bool = True) -> Comparison:
    """Compute the gradient of ``f`` at ``args`` by every method and tabulate them.

    Methods: SymPy's symbolic derivative (skipped with ``symbolic=False``, and
    unavailable where SymPy cannot take the function), forward and central
    differences, the complex step (where ``f`` takes complex input) and
    autodiff's reverse mode. The reference for the error column is the first
    available of symbolic, complex step and reverse mode. Returns the table;
    prints it too with ``verbose=True``, and by default (``verbose=None``) outside
    IPython: in a notebook, the returned table shows itself (as HTML), once.

    >>> import numpy as np, autodiff as ad
    >>> table = ad.compare(lambda x: np.sum(np.sin(x)), np.zeros(3), verbose=False)
    >>> table.reference, table.row("reverse mode (autodiff)").error < 1e-12
    ('symbolic (SymPy)', True)
    """
    named, _ = resolve_parts(f, wrt, len(args))
    positions = [position for position, _ in named]
    structured = [p for p in positions if tree.items(args[p]) is not None]
    # one size per leaf with a gradient: a dict's, a list's, an object's, or the array
    # (a complex one counts its two parts)
    sizes = [int(np.size(leaf)) * (2 if np.iscomplexobj(leaf) else 1) for p, path in named
             for leaf in tree.leaves(tree.part(args[p], path))
             if p not in structured or has_gradient(leaf)]
    # the arguments, or the parts of them that wrt names ("params['W1']")
    parts = [path_text(argument_names(f, len(args))[p], path) if path else p
             for p, path in named]
    rows = []
    if symbolic and structured:
        rows.append(MethodResult(SYMBOLIC, None, note=(
            f"SymPy takes arrays and numbers, and argument {structured[0]} of "
            f"{function_name(f)} is a {type(args[structured[0]]).__name__}")))
    elif symbolic:
        rows.append(_symbolic_row(f, args, positions))
    for method, label in DIFFERENCES.items():
        rows.append(_difference_row(f, args, parts, method, label, sizes))
    rows.append(_reverse_row(f, args, parts))
    reference = next(row for row in rows
                     if row.available and row.method in (SYMBOLIC, DIFFERENCES["complex"],
                                                         REVERSE))
    for row in rows:
        if row.available:
            row.error = relative_error(row.gradient, reference.gradient)
    result = Comparison(function_name(f), rows, reference.method, median_seconds(lambda: f(*args)))
    if verbose or verbose is None and not in_ipython():
        print(result)
    return result


def _symbolic_row(f: Callable, args: tuple, positions: list[int]) -> MethodResult:
    from autodiff.tools.symbolic import SymbolicError, symbolic_grad

    names = argument_names(f, len(args))
    shapes = {name: np.shape(arg) for name, arg in zip(names, args) if np.ndim(arg) > 0}
    try:
        start = time.perf_counter()
        derivative = symbolic_grad(f, wrt=tuple(positions), shapes=shapes)
        build = time.perf_counter() - start
        gradient = derivative(*args)
    except (SymbolicError, AutodiffError) as error:
        return MethodResult(SYMBOLIC, None, note=getattr(error, "message", str(error)))
    return MethodResult(SYMBOLIC, gradient, median_seconds(lambda: derivative(*args)), "0",
                        f"{derivative.operations} ops ({derivative.operations_cse} with CSE)",
                        build)


def _difference_row(f: Callable, args: tuple, positions: list, method: str, label: str,
                    sizes: list[int]) -> MethodResult:
    def run():
        return numeric_grad(f, *args, wrt=positions, method=method)

    try:
        gradient = run()
    except (AutodiffError, TypeError, ValueError) as error:  # complex input refused
        return MethodResult(label, None, note=getattr(error, "message", str(error)))
    return MethodResult(label, gradient, median_seconds(run), str(evaluations(method, sizes)))


def _reverse_row(f: Callable, args: tuple, positions: list) -> MethodResult:
    start = time.perf_counter()  # a fresh build (for the structures passed), to time it
    derivative = per_structure(f, f"{function_name(f)}_grad", lambda **given: build_gradient(
        f, tuple(positions), with_value=False, optimize=True, has_aux=False, **given))
    gradient = derivative(*args)
    seconds = median_seconds(lambda: derivative(*args))
    build = time.perf_counter() - start - seconds  # less the first call's own work
    source = (derivative.source_for(*args) if hasattr(derivative, "source_for")
              else getattr(derivative, "source", ""))
    return MethodResult(REVERSE, gradient, seconds, "1 (+ backward sweep)",
                        f"{len(source.splitlines())} generated lines", build)


def relative_error(gradient: tuple, reference: tuple) -> float:
    """The largest difference over every leaf of the gradients, relative to the largest
    element of the reference."""
    pairs = [(_inexact(g), _inexact(r))
             for g, r in zip(tree.leaves(gradient), tree.leaves(reference))]
    difference = max((np.max(np.abs(g - r), initial=0.0) for g, r in pairs), default=0.0)
    scale = max((np.max(np.abs(r), initial=0.0) for _, r in pairs), default=0.0)
    return float(difference / scale) if scale > 0 else float(difference)


def _inexact(leaf) -> np.ndarray:
    """A gradient's leaf as a float array (complex for a complex one: both parts count)."""
    return np.asarray(leaf, dtype=np.result_type(leaf, float))


def median_seconds(run: Callable[[], object], budget: float = 0.2, samples: int = 5) -> float:
    """Seconds per call of ``run``: the median of ``samples`` timings of a batch of calls,
    the batch sized so that all of them take about ``budget`` seconds."""
    start = time.perf_counter()
    run()
    once = max(time.perf_counter() - start, 1e-7)
    batch = max(1, int(budget / samples / once))
    timings = []
    for _ in range(samples if once < budget else 1):
        start = time.perf_counter()
        for _ in range(batch):
            run()
        timings.append((time.perf_counter() - start) / batch)
    return float(np.median(timings))


def _seconds(seconds: float) -> str:
    if np.isnan(seconds):
        return ""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"
