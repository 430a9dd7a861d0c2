"""The side-by-side table and the two figures: numbers, never wall-clock assertions."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.tools.compare import REVERSE, SYMBOLIC
from autodiff.tools.plot import cost_by_dimension, resampling, step_size_errors


def nested(x):
    return np.sum(np.sin(np.exp(x)) * x)


def with_abs(x, w):
    return np.sum(np.abs(np.tanh(w @ x)))


def counted_loop(x):
    y = x
    while np.sum(y * y) < 100.0:
        y = 1.5 * y
    return np.sum(y)


X = np.linspace(0.1, 0.5, 4)


def test_compare_all_methods_against_the_symbolic_reference(capsys):
    table = ad.compare(nested, X)
    printed = capsys.readouterr().out
    assert [row.method for row in table.rows] == [
        SYMBOLIC, "forward differences", "central differences", "complex step", REVERSE]
    assert table.reference == SYMBOLIC
    errors = {row.method: row.error for row in table.rows}
    assert errors[REVERSE] < 1e-14 and errors["complex step"] < 1e-14
    assert 1e-11 < errors["central differences"] < 1e-7
    assert 1e-10 < errors["forward differences"] < 1e-5
    evaluations = {row.method: row.evaluations for row in table.rows}
    assert evaluations["central differences"] == "8" and evaluations["complex step"] == "4"
    assert table.row(REVERSE).size.endswith("generated lines")
    assert "with CSE" in table.row(SYMBOLIC).size
    assert all(row.seconds > 0 for row in table.rows)
    assert printed.strip() == str(table).strip()
    assert "against the symbolic (SymPy)" in printed and "reference" in printed


def test_compare_marks_what_a_method_cannot_take():
    table = ad.compare(with_abs, np.ones(3), np.full((2, 3), 0.3), wrt=(0, 1), verbose=False)
    complex_step = table.row("complex step")
    assert not complex_step.available and "abs" in complex_step.note
    assert table.row(REVERSE).error < 1e-12
    text = str(table)
    assert "unavailable" in text and "complex step: the complex step needs with_abs" in text

    loop = ad.compare(counted_loop, np.array([0.5, 1.0]), verbose=False)
    assert not loop.row(SYMBOLIC).available and "while" in loop.row(SYMBOLIC).note
    assert loop.reference == "complex step" and loop.row(REVERSE).error < 1e-14


def test_step_size_sweep_draws_the_v():
    sweep = step_size_errors(nested, X, steps=np.logspace(-13, -1, 25))
    assert sweep.reference == "complex step" and sweep.autodiff_error < 1e-14
    for method, slope in (("forward", 1), ("central", 2)):
        errors = sweep.errors[method]
        best = int(np.argmin(errors))
        assert 0 < best < len(errors) - 1
        # right of the minimum, truncation: the error falls as h**slope
        measured = np.log10(errors[-1] / errors[-5]) / np.log10(sweep.steps[-1] / sweep.steps[-5])
        assert measured == pytest.approx(slope, abs=0.3)
        # left of it, round-off: smaller steps make it worse
        assert errors[0] > 100 * errors[best]
    assert np.min(sweep.errors["central"]) < np.min(sweep.errors["forward"])


def test_cost_sweep_and_plot_files(tmp_path):
    sweep = cost_by_dimension(nested, resampling((X,), 0), sizes=(4, 16))
    assert sweep.sizes == [4, 16]
    assert set(sweep.seconds) == {"f(x)", "reverse mode", "forward differences",
                                  "central differences"}
    assert all(len(v) == 2 and min(v) > 0 for v in sweep.seconds.values())
    pytest.importorskip("matplotlib")
    from autodiff.tools.plot import plot_comparison

    path = tmp_path / "three_ways.png"
    figure = plot_comparison(nested, X, path=str(path), sizes=(4, 16))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    left, right = figure.axes
    assert left.get_xscale() == "log" and right.get_xlabel().startswith("input size n")


def test_plot_without_matplotlib_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    from autodiff.tools.plot import plot_comparison

    with pytest.raises(ad.AutodiffError, match=r'pip install "autodiff\[plot\]"'):
        plot_comparison(nested, X)
