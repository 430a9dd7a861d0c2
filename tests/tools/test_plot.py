"""The figure of ``plot_comparison``: shown in a notebook without ``%matplotlib inline``,
drawn in full for a matrix argument, and saying what its cost panel measured."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff.tools.plot import CostSweep, draw_costs, plot_comparison

Figure = pytest.importorskip("matplotlib.figure").Figure  # matplotlib is an extra


def batch_loss(x, w):
    return np.sum(np.tanh(w @ x) ** 2)


def scaled(a, x):
    return np.sum(a * np.sin(x))


X = np.linspace(0.1, 0.5, 3)
W = np.full((2, 3), 0.3)


def test_the_figure_shows_itself_as_a_png_and_still_saves(tmp_path):
    figure = plot_comparison(batch_loss, X, W, wrt=1, sizes=(6, 15))
    assert isinstance(figure, Figure)
    assert figure._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")  # what IPython displays
    figure.savefig(tmp_path / "again.png")
    assert (tmp_path / "again.png").read_bytes()[:4] == b"\x89PNG"


def test_a_matrix_argument_gets_both_panels_grown_along_its_first_axis():
    figure = plot_comparison(batch_loss, X, W, wrt=1, sizes=(6, 15))
    steps, costs = figure.axes
    assert len(steps.get_lines()) >= 2 and not costs.texts
    assert {line.get_label() for line in costs.get_lines()} >= {
        "one call of f", "reverse mode", "forward differences", "central differences"}
    assert costs.get_xlabel() == "input size n (shapes (2, 3) to (5, 3))"


def test_a_scalar_argument_cannot_grow_and_the_panel_says_so():
    figure = plot_comparison(scaled, 2.0, X, wrt=0, sizes=(6, 15))
    assert "cost against n not drawn" in figure.axes[1].texts[0].get_text()
    assert "is a scalar" in figure.axes[1].texts[0].get_text()


def sweep(reverse_mode: list[float]) -> CostSweep:
    """Timings as ``cost_by_dimension`` records them, one call of f taking 1 ms."""
    return CostSweep(sizes=[10, 100, 1000], shapes=[(10,), (100,), (1000,)], seconds={
        "f(x)": [1e-3, 1e-3, 1e-3], "reverse mode": reverse_mode,
        "forward differences": [1e-2, 1e-1, 1.0], "central differences": [2e-2, 2e-1, 2.0]})


def legend_texts(axes) -> list[str]:
    return [text.get_text() for text in axes.get_legend().get_texts()]


def test_reverse_mode_timed_below_one_call_of_f_is_noted_as_noise():
    axes = Figure().subplots()
    draw_costs(axes, sweep([0.5e-3, 3e-3, 0.9e-3]))
    noted = [text for text in legend_texts(axes) if "timing noise" in text]
    assert len(noted) == 1 and "(n = 10, 1000)" in noted[0]
    circled = [line for line in axes.get_lines() if line.get_label() == noted[0]]
    assert list(circled[0].get_xdata()) == [10, 1000]


def test_reverse_mode_above_one_call_of_f_has_no_note():
    axes = Figure().subplots()
    draw_costs(axes, sweep([2e-3, 3e-3, 4e-3]))
    assert not any("noise" in text for text in legend_texts(axes))


def test_the_cost_panel_says_what_it_timed_and_at_which_sizes():
    axes = Figure().subplots()
    draw_costs(axes, sweep([2e-3, 3e-3, 4e-3]))
    assert "the median of 5 timings\n(3 for finite differences)" in axes.get_title()
    assert axes.get_ylabel() == "seconds per gradient (median)"
    assert axes.get_xlabel() == "input size n (shapes (10,) to (1000,))"
