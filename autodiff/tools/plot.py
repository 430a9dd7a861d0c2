"""Figures for the three ways to a derivative (needs matplotlib: ``pip install "autodiff[plot]"``).

Two measurements, each a function returning the numbers and a drawing of them:

- ``step_size_errors``: the error of forward and central differences as the
  step shrinks. On a log-log scale it is a V: truncation error falls as
  ``h`` (forward) or ``h**2`` (central) from the right, round-off error
  ``eps / h`` climbs from the left. Reverse mode has no step: a flat line.
- ``cost_by_dimension``: the time of one gradient as the input grows.
  Finite differences call the function ``n`` or ``2n`` times; reverse mode
  costs a small multiple of one call, whatever ``n`` is.

The figure ``plot_comparison`` returns shows itself in a notebook (as a PNG), with
or without ``%matplotlib inline``.

>>> import numpy as np
>>> from autodiff.tools.plot import plot_comparison
>>> def f(x):
...     return np.sum(np.sin(x) ** 2)
>>> figure = plot_comparison(f, np.linspace(0, 1, 5), path="three_ways.png")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from autodiff.api import grad
from autodiff.errors import AutodiffError
from autodiff.tools.check import Wrt, default_step, function_name, numeric_grad, resolve_wrt
from autodiff.tools.compare import median_seconds, relative_error
from autodiff.tools.notebook import shown_inline

FLOOR = 1e-17  # errors of exactly zero are drawn here, so that a log scale can show them
# the timed batches of calls each median is taken of (median_seconds), by method
TIMINGS = {"f(x)": 5, "reverse mode": 5, "forward differences": 3, "central differences": 3}
COLORS = {"forward differences": "tab:orange", "central differences": "tab:blue",
          "reverse mode": "tab:green", "f(x)": "black"}


@dataclass
class StepSizeSweep:
    """Errors of finite differences against ``reference``, one per step size."""

    steps: np.ndarray
    errors: dict[str, np.ndarray]  # "forward", "central" -> relative error per step
    reference: str
    autodiff_error: float | None  # reverse mode against the same reference
    default_steps: dict[str, float] = field(default_factory=dict)


@dataclass
class CostSweep:
    """Seconds per gradient (and per call of the function) against the input size: each
    the median of ``timings[name]`` timed batches of calls (``median_seconds``)."""

    sizes: list[int]
    seconds: dict[str, list[float]]
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # the differentiated argument's
    timings: dict[str, int] = field(default_factory=lambda: dict(TIMINGS))

    def below_one_call(self) -> list[int]:
        """The sizes at which reverse mode was timed faster than one call of ``f``: timing
        noise, as a gradient does ``f``'s work and more."""
        return [n for n, ours, once in zip(self.sizes, self.seconds["reverse mode"],
                                           self.seconds["f(x)"]) if ours < once]


def step_size_errors(f: Callable, *args, wrt: Wrt = 0,
                     steps: Sequence[float] | None = None) -> StepSizeSweep:
    """Measure the finite-difference error at each step size (absolute steps).

    The reference is the complex step where ``f`` takes complex input, else
    autodiff's reverse mode (whose own error is then not drawn).
    """
    positions, _ = resolve_wrt(f, wrt, len(args))
    steps = np.logspace(-15, -1, 57) if steps is None else np.asarray(steps, dtype=float)
    ours = grad(f, wrt=tuple(positions))(*args)
    try:
        reference, name = numeric_grad(f, *args, wrt=positions, method="complex"), "complex step"
        autodiff_error = relative_error(ours, reference)
    except (AutodiffError, TypeError, ValueError):
        reference, name, autodiff_error = ours, "reverse mode", None
    errors = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for method in ("forward", "central"):
            errors[method] = np.array([
                relative_error(numeric_grad(f, *args, wrt=positions, method=method, step=h),
                                reference) for h in steps])
    dtype = np.result_type(*(np.asarray(args[p]).dtype for p in positions), np.float16)
    defaults = {m: default_step(m, dtype) for m in ("forward", "central")}
    return StepSizeSweep(steps, errors, name, autodiff_error, defaults)


def cost_by_dimension(f: Callable, make_args: Callable[[int], tuple], wrt: Wrt = 0,
                      sizes: Sequence[int] = (10, 30, 100, 300, 1000)) -> CostSweep:
    """Time ``f``, its reverse-mode gradient and both finite differences at each size.

    ``make_args(n)`` returns the arguments for an input of size ``n``.
    """
    seconds: dict[str, list[float]] = {name: [] for name in TIMINGS}
    shapes = []
    for n in sizes:
        args = make_args(n)
        positions, _ = resolve_wrt(f, wrt, len(args))
        shapes.append(np.shape(args[positions[0]]))
        derivative = grad(f, wrt=tuple(positions))
        runs = {"f(x)": partial(f, *args), "reverse mode": partial(derivative, *args)}
        for method in ("forward", "central"):
            runs[f"{method} differences"] = partial(numeric_grad, f, *args, wrt=positions,
                                                    method=method)
        for name, run in runs.items():
            seconds[name].append(median_seconds(run, samples=TIMINGS[name]))
    return CostSweep(list(sizes), seconds, shapes)


def resampling(args: tuple, position: int, seed: int = 0) -> Callable[[int], tuple]:
    """``make_args`` for ``cost_by_dimension``: the argument at ``position`` grown to about
    ``n`` elements drawn from its own values (so they stay in the function's domain).

    A vector gets ``n`` elements. An array of more dimensions grows along its first
    axis alone, to ``round(n / row)`` rows (at least one) of the ``row`` elements its
    other axes hold: a (3, 4) matrix becomes (25, 4) for ``n = 100``. Its other axes are
    those other arguments fit (``X @ w``, a batch of rows), which a square-ish growth
    would break.

    >>> make_args = resampling((np.ones((3, 4)), 2.0), 0)
    >>> [(np.shape(x), y) for x, y in (make_args(10), make_args(100))]
    [((2, 4), 2.0), ((25, 4), 2.0)]
    """
    rng = np.random.default_rng(seed)
    values = np.asarray(args[position], dtype=float)
    row_shape = values.shape[1:]
    row = int(np.prod(row_shape))

    def make_args(n: int) -> tuple:
        shape = (max(1, round(n / row)), *row_shape)
        grown = rng.choice(values.ravel(), size=shape) * rng.uniform(0.9, 1.1, size=shape)
        return (*args[:position], grown, *args[position + 1:])

    return make_args


def plot_comparison(f: Callable, *args, wrt: Wrt = 0, path: str | None = None,
                    sizes: Sequence[int] = (10, 30, 100, 300, 1000),
                    make_args: Callable[[int], tuple] | None = None):
    """Both figures side by side; saved to ``path`` when given. Returns the matplotlib
    Figure (``.savefig`` as usual), which a notebook shows as a PNG.

    The cost panel needs ``f`` at several input sizes: ``make_args(n)``, or by
    default the first ``wrt`` argument resampled to about ``n`` elements
    (``resampling``: a vector to ``n``, a matrix or more grown along its first axis).
    When ``f`` cannot take that (a scalar argument, a function of a fixed shape),
    the panel says so instead.
    """
    figure_class = _matplotlib_figure()
    positions, _ = resolve_wrt(f, wrt, len(args))
    figure = figure_class(figsize=(12, 4.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    draw_step_sizes(left, step_size_errors(f, *args, wrt=wrt))
    if make_args is None and np.ndim(args[positions[0]]) >= 1:
        make_args = resampling(args, positions[0])
    try:
        if make_args is None:
            raise ValueError("its first differentiated argument is a scalar")
        f(*make_args(sizes[0]))
        draw_costs(right, cost_by_dimension(f, make_args, wrt, sizes))
    except (AutodiffError, ValueError, TypeError, IndexError) as error:
        right.axis("off")
        right.text(0.5, 0.5, f"cost against n not drawn:\n{function_name(f)} cannot be "
                   f"evaluated at other sizes\n({error})", ha="center", va="center", wrap=True)
    figure.suptitle(f"Three ways to the gradient of {function_name(f)}")
    if path is not None:
        figure.savefig(path, dpi=120)
    return shown_inline(figure)


def draw_step_sizes(axes, sweep: StepSizeSweep) -> None:
    """The V of finite-difference errors, with the reverse-mode error as a flat line."""
    for method, errors in sweep.errors.items():
        color = COLORS[f"{method} differences"]
        axes.loglog(sweep.steps, np.clip(errors, FLOOR, None), "o-", markersize=3, color=color,
                    label=f"{method} differences")
        axes.axvline(sweep.default_steps[method], color=color, linestyle=":", linewidth=1)
    if sweep.autodiff_error is not None:
        error = sweep.autodiff_error
        axes.axhline(max(error, FLOOR), color=COLORS["reverse mode"], linestyle="--",
                     label=f"reverse mode (autodiff): {error:.0e}" if error else
                     "reverse mode (autodiff): equal to the last bit")
    axes.set_xlabel("step h")
    axes.set_ylabel(f"relative error against the {sweep.reference}")
    axes.set_title("Finite-difference error against step size\n(dotted: default steps)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend()


def draw_costs(axes, sweep: CostSweep) -> None:
    """Seconds per gradient against the input size, on log-log axes, saying what was
    timed; sizes where reverse mode was timed below one call of ``f`` are circled,
    with a legend entry calling them timing noise."""
    for name, seconds in sweep.seconds.items():
        label = "one call of f" if name == "f(x)" else name
        axes.loglog(sweep.sizes, seconds, ":" if name == "f(x)" else "-", color=COLORS[name],
                    marker="o", markersize=4, label=label)
    axes.set_xlabel("input size n" + _shapes_drawn(sweep.shapes))
    axes.set_ylabel("seconds per gradient (median)")
    axes.set_title("Cost of one gradient, measured: the median of "
                   f"{sweep.timings['reverse mode']} timings\n"
                   f"({sweep.timings['central differences']} for finite differences), "
                   "each of a batch of calls")
    noise = sweep.below_one_call()
    if noise:
        timed = dict(zip(sweep.sizes, sweep.seconds["reverse mode"]))
        axes.loglog(noise, [timed[n] for n in noise], "o", markersize=11,
                    markerfacecolor="none", color="tab:red",
                    label=f"reverse mode below one call of f (n = {', '.join(map(str, noise))}):"
                    "\ntiming noise, as a gradient does f's work and more")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8)


def _shapes_drawn(shapes: list[tuple[int, ...]]) -> str:
    """`` (shapes (10,) to (1000,))``: the differentiated argument's, for the size axis."""
    if not shapes:
        return ""
    if shapes[0] == shapes[-1]:
        return f" (shape {shapes[0]})"
    return f" (shapes {shapes[0]} to {shapes[-1]})"


def _matplotlib_figure():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise AutodiffError("the figures need matplotlib, which is not installed",
                            hint='pip install "autodiff[plot]"') from None
    return Figure
