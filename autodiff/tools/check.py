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

import functools
import inspect
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from autodiff import tree
from autodiff.api import grad, jvp, vjp
from autodiff.derivatives.bound import shifted_wrt, unbound
from autodiff.derivatives.wrt import Wrt
from autodiff.derivatives.wrt import resolve_parts as parts_named
from autodiff.derivatives.wrt import resolve_wrt as parameters_named
from autodiff.errors import ArgumentKindError, AutodiffError, NonScalarOutputError, raised_at_call
from autodiff.frontend.structures import has_gradient, path_text
from autodiff.graph.ir import Location
from autodiff.tools.notebook import html_table
from autodiff.tree import StructureError

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

    An argument that is a structure (a dict, list, tuple, namedtuple or
    dataclass, see ``ad.tree``) is perturbed leaf by leaf; its gradient has the
    argument's structure, as ``ad.grad`` gives it: each leaf of float or complex
    type (an array, a float, a NumPy scalar) has a gradient of its type and
    shape, and the others (an int or a bool setting, an int or bool array, a
    string, ``None``, any other object) have ``None``.

    >>> import numpy as np, autodiff as ad
    >>> float(ad.numeric_grad(lambda x: x ** 3, 2.0))  # doctest: +ELLIPSIS
    12.000000...
    >>> def scaled(params):
    ...     return params["scale"] * np.sum(params["w"] ** 2)
    >>> g = ad.numeric_grad(scaled, {"w": np.array([1.0, 2.0]), "scale": 3.0, "mode": "l2"})
    >>> np.round(g["w"], 6), round(g["scale"], 6), g["mode"]
    (array([ 6., 12.]), 5.0, None)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    f, args, wrt = _unbound(f, args, wrt)
    named, single = resolve_parts(f, wrt, len(args))
    names = argument_names(f, len(args))
    gradients = []
    for position, path in named:
        part_f, part_args, name = _on_part(f, list(args), position, path, names[position])
        gradients.append(
            _numeric_structure(part_f, part_args, position, name, method, step)
            if _is_structure(part_args[position])
            else _numeric_gradient(part_f, part_args, position, name, method, step))
    return gradients[0] if single else tuple(gradients)


def _on_part(f: Callable, args: list, position: int, path: tuple, name: str
             ) -> tuple[Callable, list, str]:
    """``f`` as a function of the part at ``path`` of its argument ``position`` (the rest
    of that argument as it is), the arguments with that part in its place, and the
    part's name written as code (``params['W1']``)."""
    if not path:
        return f, args, name
    whole = args[position]
    try:
        value = tree.part(whole, path)
    except StructureError as error:
        raise ArgumentKindError(f"wrt names {path_text(name, path)}, which {name} does not "
                                f"hold: {error.message}", **_def_line(f)) from None

    @functools.wraps(f)  # f's name and parameters in what is reported
    def on_part(*call):
        call = list(call)
        call[position] = tree.with_part(whole, path, call[position])
        return f(*call)

    args[position] = value
    return on_part, args, path_text(name, path)


def evaluations(method: str, sizes: Sequence[int]) -> int:
    """How many times ``numeric_grad`` calls the function for arguments of these sizes
    (for a structure: one size per leaf with a gradient)."""
    n = sum(sizes)
    return {"central": 2 * n, "forward": n + len(sizes), "complex": n}[method]


def default_step(method: str, dtype) -> float:
    """The step relative to ``max(1, |x_i|)`` that ``numeric_grad`` uses by default."""
    eps = float(np.finfo(dtype).eps)
    return {"central": eps ** (1 / 3), "forward": eps ** 0.5, "complex": 1e-20}[method]


def _is_structure(value) -> bool:
    """Whether an argument is a structure of leaves (a dict, list, tuple, namedtuple,
    dataclass: see ``ad.tree``) rather than one array or number."""
    return value is not None and tree.items(value) is not None


def _unbound(f: Callable, args: tuple, wrt: Wrt) -> tuple[Callable, tuple, Wrt]:
    """A bound method or a partial as its function with the given arguments first
    (``wrt="self"`` naming the object), as the transforms take them."""
    bound = unbound(f)
    if bound is None or bound[2]:  # (a partial with keywords: as it is)
        return f, args, wrt
    function, leading, _, self_name = bound
    return function, (*leading, *args), shifted_wrt(wrt, len(leading), self_name)


def _numeric_gradient(f: Callable, args: list, position: int, name: str, method: str,
                      step: float | None):
    original = args[position]
    if original is None or isinstance(original, (str, bytes)):
        raise ArgumentKindError(
            f"cannot differentiate with respect to '{name}', a {type(original).__name__}: "
            "only floats, ints, arrays and structures of them have gradients",
            hint="leave the argument out of wrt", **_def_line(f))
    scalar = np.ndim(original) == 0 and not isinstance(original, np.ndarray)

    def place(point: np.ndarray) -> None:
        # A fresh copy each time: a function that updates its argument in place
        # (x *= 2) must not move the point the next evaluation starts from. A number of
        # its own kind for a number (a Python float stays one: the code may test it).
        args[position] = _like_leaf(point, original) if scalar else point.copy()

    try:
        gradient = _differences(f, args, np.asarray(original), place, method, step)
    finally:
        args[position] = original
    if scalar:
        return complex(gradient) if np.iscomplexobj(gradient) else float(gradient)
    return gradient


def _numeric_structure(f: Callable, args: list, position: int, name: str, method: str,
                       step: float | None):
    """The gradient with respect to a structure, leaf by leaf, in its structure."""
    original = args[position]
    leaves, structure = tree.flatten(original)
    paths = [path for path, _ in tree.paths(original, name)]
    gradients = []
    try:
        for i, leaf in enumerate(leaves):
            if not has_gradient(leaf):
                gradients.append(None)
                continue
            def place(point: np.ndarray, i: int = i, leaf=leaf) -> None:
                # fresh copies of every array: in-place updates by f (a leaf *= 2) never
                # reach the caller's arrays, nor the point the next evaluation starts from
                moved = [_copied(other) for other in leaves]
                moved[i] = _like_leaf(point, leaf)
                args[position] = tree.unflatten(structure, moved)

            gradient = _differences(f, args, np.asarray(leaf), place, method, step, paths[i])
            gradients.append(_like_leaf(gradient, leaf))
    finally:
        args[position] = original
    return tree.unflatten(structure, gradients)


def _copied(leaf):
    return leaf.copy() if isinstance(leaf, np.ndarray) else leaf


def _fresh(value):
    """``value`` with its arrays copied (a list's, tuple's or dict's too)."""
    if isinstance(value, (list, tuple, dict)):
        leaves, structure = tree.flatten(value)
        return tree.unflatten(structure, [_copied(leaf) for leaf in leaves])
    return _copied(value)


def _like_leaf(values: np.ndarray, leaf):
    """``values`` (an array of the leaf's shape) as a value of the leaf's kind: an array
    for an array, a NumPy scalar for a NumPy scalar, a float for a float."""
    if isinstance(leaf, np.ndarray):
        return values.copy()
    if isinstance(leaf, np.generic):
        return values[()]
    # (a float leaf is complex while the complex step moves it)
    complex_ = isinstance(leaf, complex) or np.iscomplexobj(values)
    return complex(values[()]) if complex_ else float(values[()])


def _differences(f: Callable, args: list, x: np.ndarray, place: Callable, method: str,
                 step: float | None, leaf: str | None = None) -> np.ndarray:
    """The derivatives of ``f(*args)`` along each element of ``x``, which ``place`` puts
    in ``args`` (``leaf``: its path, for a leaf of a structure). A complex ``x`` has the
    derivative along its real part minus ``1j`` times the one along its imaginary part,
    ``df/dx - i df/dy``, as ``ad.grad`` gives (the convention of JAX and autograd)."""
    complex_ = np.iscomplexobj(x)
    if complex_ and method == "complex":
        raise ArgumentKindError(
            f"the complex step cannot differentiate {function_name(f)} with respect to "
            f"{leaf or 'an argument'}, which is complex: the step itself is imaginary",
            hint="use method='central'", **_def_line(f))
    if complex_:
        dtype = x.dtype
    else:
        dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float64)
    work_dtype = np.result_type(dtype, np.complex64) if method == "complex" else dtype
    work = np.array(x, dtype=work_dtype)  # a copy: the caller's array is never touched
    gradient = np.zeros(x.shape, dtype=dtype)
    relative = default_step(method, dtype)
    units = (1, 1j) if complex_ else (1,)

    def at(point) -> float | complex:
        place(point)
        # fresh copies of the other arguments' arrays too: an in-place update by f
        # (x[0] = a * b) never moves the point the next evaluation starts from
        return _scalar_output(f(*map(_fresh, args)), f)

    base = at(work) if method == "forward" else None
    for index in np.ndindex(x.shape):
        centre = work[index]
        if method == "complex":
            h = step if step is not None else relative * max(1.0, abs(float(centre.real)))
            work[index] = centre + 1j * h
            gradient[index] = _imaginary_part(at(work), f, leaf) / h
            work[index] = centre
            continue
        slopes = []
        for unit in units:
            part = centre.real if unit == 1 else centre.imag
            h = step if step is not None else relative * max(1.0, abs(float(part)))
            h = float((part + h) - part)  # a step the float type represents exactly
            work[index] = centre + unit * h
            above = at(work)
            if method == "forward":
                slopes.append((above - base) / h)
            else:
                work[index] = centre - unit * h
                slopes.append((above - at(work)) / (2 * h))
            work[index] = centre
        gradient[index] = slopes[0] if len(slopes) == 1 else slopes[0] - 1j * slopes[1]
    return gradient


def _scalar_output(value, f: Callable):
    if np.ndim(value) != 0:
        raise NonScalarOutputError(
            f"finite differences need {function_name(f)} to return a scalar, not an array of shape "
            f"{np.shape(value)}", **_def_line(f),
            hint="check a non-scalar function with ad.check_grad, which draws a random "
                 "seed, or differentiate np.sum(seed * f(x))")
    return value[()] if isinstance(value, np.ndarray) else value


def _imaginary_part(value, f: Callable, leaf: str | None = None) -> float:
    if not np.iscomplexobj(value):
        raise AutodiffError(
            f"the complex step needs {function_name(f)} to return a complex number for a complex "
            f"{leaf or 'input'}; it returned {type(value).__name__}", **_def_line(f),
            hint="abs, np.real, comparisons and casts to float drop the imaginary part"
                 + ("" if leaf is None else ", and a leaf the function never reads has none")
                 + "; use method='central'")
    return float(np.imag(value))


# ----- wrt, names and locations -----


def resolve_wrt(f: Callable, wrt: Wrt, count: int) -> tuple[list[int], bool]:
    """Positions of the arguments ``wrt`` names, among the ``count`` ``f`` is called
    with, and whether it named a single one."""
    positions, several = parameters_named(wrt, argument_names(f, count), function_name(f),
                                          Location.of_function(inspect.unwrap(f)))
    return positions, not several


def resolve_parts(f: Callable, wrt: Wrt, count: int) -> tuple[list[tuple[int, tuple]], bool]:
    """As :func:`resolve_wrt`, each position with the path ``wrt`` names into it
    (``()`` for the whole argument: see :func:`autodiff.derivatives.wrt.resolve_parts`)."""
    positions, several, paths = parts_named(wrt, argument_names(f, count), function_name(f),
                                            Location.of_function(inspect.unwrap(f)))
    return list(zip(positions, paths)), not several


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

    @property
    def title(self) -> str:
        return (f"gradient check of {self.function} ({self.dtype}, {self.method} differences, "
                f"rtol={self.rtol:g}, atol={self.atol:g}): "
                f"{'passed' if self.passed else 'FAILED'}")

    def table(self) -> list[tuple[str, ...]]:
        """The report's table as text cells, the header first."""
        table = [("argument", "shape", "max abs error", "max rel error", "worst at", "autodiff",
                  "finite diff.", "")]
        for row in self.rows:
            table.append((row.name, str(row.shape), f"{row.max_abs_error:.2e}",
                          f"{row.max_rel_error:.2e}", str(row.worst_index), f"{row.ours:.8g}",
                          f"{row.numeric:.8g}", "ok" if row.passed else "FAILED"))
        return table

    def __str__(self) -> str:
        return "\n".join([self.title, format_table(self.table()), *self.notes])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return html_table(self.title, self.table(), [not row.passed for row in self.rows],
                          self.notes)


@raised_at_call
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

    An argument that is a structure (a dict, list, tuple, namedtuple or
    dataclass) is compared leaf by leaf, each row of the report named by the
    leaf's path written as code (``params['W1']``, ``layers[0][1]``,
    ``model.W``); leaves without a gradient (settings, strings, ``None``) have
    no row, and a leaf that has a gradient on one side only fails.

    Returns the report; raises ``GradientCheckError`` (with the report) on failure.

    >>> import numpy as np, autodiff as ad
    >>> ad.check_grad(lambda x: np.sum(x ** 2), np.ones(3)).passed
    True
    """

    f, args, wrt = _unbound(f, args, wrt)
    named, single = resolve_parts(f, wrt, len(args))
    positions = [position for position, _ in named]
    names = argument_names(f, len(args))
    # each differentiated part (an argument, or the part of one wrt names) and its name
    checked = [_on_part(f, list(args), position, path, names[position])[1:]
               for position, path in named]
    parts = [(part_args[position], name) for (part_args, name), position in
             zip(checked, positions)]
    low_precision = any(_low_precision(value) for value, _ in parts)
    rtol, atol = _tolerances(rtol, atol, low_precision)
    rng = np.random.default_rng(seed)
    output = f(*map(_fresh, args))  # (f may update its arguments in place)
    seeds = _random_like(output, rng)
    structures = [name for name, value in zip(names, args) if _is_structure(value)]
    if seeds is None:
        target, ours = f, grad(f, wrt=wrt)(*args)
    else:
        @functools.wraps(f)  # f's name and parameters in what numeric_grad says
        def target(*a):
            return _inner(seeds, f(*a))
        ours = _pulled_back(f, wrt, args, seeds, structures)
    ours = (ours,) if single else tuple(ours)
    numeric = numeric_grad(target, *args, method=method, step=step,
                           wrt=[path_text(names[p], path) for p, path in named])
    report = GradientCheckReport(function_name(f), _dtype_name(parts[0][0]), method, rtol, atol)
    for (value, name), mine, theirs in zip(parts, ours, numeric):
        if _is_structure(value):
            _compare_leaves(report, name, value, mine, theirs)
        else:
            report.rows.append(_compare(name, mine, theirs, rtol, atol))
    _check_forward_mode(f, args, wrt, single, seeds, numeric, rng, report, jvp, structures)
    if not report.passed:
        failed = ", ".join(row.name for row in report.failures)
        raise GradientCheckError(f"gradient check failed for {failed}:\n{report}", report,
                                 **_def_line(f))
    return report


def _low_precision(value) -> bool:
    """Whether an argument (any leaf with a gradient, for a structure) is float32 or less."""
    if not _is_structure(value):
        return np.asarray(value).dtype in (np.float32, np.float16, np.complex64)
    return any(np.result_type(leaf) in (np.float32, np.float16, np.complex64)
               for leaf in tree.leaves(value) if has_gradient(leaf))


def _dtype_name(value) -> str:
    """The dtype the report names: an argument's, or those of a structure's leaves."""
    if not _is_structure(value):
        return str(np.asarray(value).dtype)
    dtypes = dict.fromkeys(str(np.result_type(leaf)) for leaf in tree.leaves(value)
                           if has_gradient(leaf))
    return ", ".join(dtypes) or "no leaf with a gradient"


def _pulled_back(f: Callable, wrt: Wrt, args: tuple, seeds, structures: list[str]):
    """``ad.vjp`` of ``f`` at ``args`` with ``seeds``; its failure for structured
    arguments is said in terms of checking."""
    try:
        pull = vjp(f, wrt=wrt)
        return pull(*args, **{pull.seed_name: seeds})
    except AutodiffError as error:
        if not structures:
            raise
        raise AutodiffError(
            f"checking {function_name(f)}, which returns an array, takes ad.vjp with the "
            f"structured argument {', '.join(map(repr, structures))}, and ad.vjp failed: "
            f"{error.message}", **_def_line(f),
            hint="check a scalar function instead, np.sum(seed * f(...)) for a fixed "
                 "random seed, which ad.check_grad differentiates with ad.grad") from error


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
    """A random seed in the structure of a non-scalar output (a tuple for a tuple, a dict
    for a dict): normal where a leaf has a gradient, zeros for an int leaf, and a string
    or other leaf kept as it is; None for a scalar output."""
    if tree.items(output) is None and not isinstance(output, tuple) and np.ndim(output) == 0:
        return None

    def seed(leaf):
        if not isinstance(leaf, (np.ndarray, np.generic, float, int, complex)):
            return leaf
        if has_gradient(leaf) or tree.items(output) is None and not isinstance(output, tuple):
            return rng.standard_normal(np.shape(leaf))
        return np.zeros(np.shape(leaf))

    return tree.map(seed, output)


def _inner(seeds, output) -> float:
    """``sum(seeds * output)`` over the leaves a seed weighs (arrays and numbers): its
    real part, for a complex output (the real seeds weigh the real parts)."""
    return np.real(sum(np.sum(np.asarray(v) * np.asarray(o))
                       for v, o in zip(tree.leaves(seeds), tree.leaves(output))
                       if isinstance(v, (np.ndarray, float))))


def _compare(name: str, ours, numeric, rtol: float, atol: float,
             dtype=np.float64) -> Comparison:
    # (complex gradients compared in both parts)
    dtype = np.result_type(dtype, np.asarray(ours).dtype, np.asarray(numeric).dtype)
    ours = np.asarray(ours, dtype=dtype)
    numeric = np.asarray(numeric, dtype=dtype)
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
    value = complex if np.iscomplexobj(numeric) else float
    return Comparison(name, numeric.shape, float(np.max(difference)), float(np.max(relative)),
                      tuple(int(i) for i in worst), value(ours[worst]), value(numeric[worst]),
                      bool(np.all(violation <= 1)))


def _compare_leaves(report: GradientCheckReport, name: str, argument, ours,
                    numeric) -> None:
    """One row per leaf of a structured argument that has a gradient, named by its path."""
    pairs = []
    try:
        tree.map(lambda leaf, mine, theirs: pairs.append((mine, theirs)), argument, ours,
                 numeric)
    except StructureError as error:
        report.rows.append(Comparison(name, (), np.inf, np.inf, (), np.nan, np.nan, False))
        report.notes.append(f"{name}: autodiff's gradient is not in the argument's "
                            f"structure: {error.message}")
        return
    compared = False
    for (path, leaf), (mine, theirs) in zip(tree.paths(argument, name), pairs):
        if mine is None and theirs is None:
            continue
        compared = True
        if mine is None or theirs is None:
            report.rows.append(Comparison(path, np.shape(leaf), np.inf, np.inf, (), np.nan,
                                          np.nan, False))
            report.notes.append(
                f"{path}: autodiff gives no gradient, finite differences give one"
                if mine is None else
                f"{path}: autodiff gives a gradient, finite differences none (a leaf of "
                f"type {type(leaf).__name__} has none)")
            continue
        dtype = np.complex128 if np.iscomplexobj(leaf) else np.float64
        report.rows.append(_compare(path, mine, theirs, report.rtol, report.atol, dtype))
    if not compared:
        report.notes.append(f"{name}: no leaf has a gradient, so none was compared")


def _check_forward_mode(f, args, wrt, single, seeds, numeric, rng, report, jvp,
                        structures=()) -> None:
    """The dot-product test: ``<v, J u>`` by forward mode against ``<J^T v, u>`` by FD."""
    try:
        push = jvp(f, wrt=wrt)
    except AutodiffError as error:
        report.notes.append(f"forward mode not checked: {_jvp_failure(error, structures)}")
        return
    # in the gradients' structures: None where a leaf has no gradient (complex for a
    # complex leaf: both its parts vary)
    directions = tuple(tree.map(lambda g: _direction(rng, g), g) for g in numeric)
    tangent = directions[0] if single else directions
    try:
        _, tangent_out = push(*args, **{push.tangent_name: tangent})
    except AutodiffError as error:
        if not structures:
            raise
        report.notes.append(f"forward mode not checked: {_jvp_failure(error, structures)}")
        return
    ours = _inner(seeds, tangent_out) if seeds is not None else np.sum(tangent_out)
    expected = sum(_along(g, u) for g, u in zip(numeric, directions))
    report.rows.append(_compare("jvp", ours, expected, report.rtol, report.atol))
    report.notes.append("jvp: <v, J u> by forward mode against <J^T v, u> from the finite "
                        "differences, along a random direction u")


def _jvp_failure(error: AutodiffError, structures: Sequence[str]) -> str:
    if not structures:
        return error.message
    return (f"ad.jvp failed with the structured argument {', '.join(map(repr, structures))}: "
            f"{error.message}")


def _direction(rng: np.random.Generator, gradient):
    """A random direction of a gradient's shape, complex for a complex gradient."""
    direction = rng.standard_normal(np.shape(gradient))
    if np.iscomplexobj(gradient):
        direction = direction + 1j * rng.standard_normal(np.shape(gradient))
    return direction


def _along(gradient, direction) -> float:
    """``<gradient, direction>`` over the leaves of a gradient: the real part of
    ``sum(gradient * direction)`` (a complex gradient is df/dx - i df/dy, so this is
    the derivative along a complex direction)."""
    return sum(np.real(np.sum(np.asarray(g) * np.asarray(u)))
               for g, u in zip(tree.leaves(gradient), tree.leaves(direction)))


def format_table(rows: list[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
