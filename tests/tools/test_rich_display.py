"""What a notebook shows: derivatives, check_grad's report, compare's table and the
symbolic gradient, by their ``_repr_html_`` and ``_repr_latex_`` (IPython's display
protocol, called here as IPython calls it: IPython itself is never imported)."""

from __future__ import annotations

import builtins
import html
import inspect
import re
import sys
import types

import numpy as np
import pytest

import autodiff as ad
from autodiff.codegen.display import SHOWN_LINES
from autodiff.codegen.highlight import STYLES
from autodiff.tools.compare import REVERSE, SYMBOLIC
from tests.test_line_names import ipython_running

RNG = np.random.default_rng(3)


# Its "<" and "&" reach the comments of the generated code, which HTML must escape.
def two_layers(x, w1, w2, slope=0.1):
    h = np.tanh(x @ w1)
    h = np.where((h < 0) & (x @ w1 > -5.0), slope * h, h)
    return np.sum(np.tanh(h @ w2) ** 2)


def smooth_layers(x, w1, w2):
    return np.sum(np.tanh(np.tanh(x @ w1) @ w2) ** 2)


def many_lines(x):
    a = np.sin(x)
    b = np.cos(a) * x
    c = np.exp(-b) + a
    d = np.tanh(c * b)
    e = np.log1p(d * d)
    f = np.sqrt(e + 1.0) * c
    g = np.sin(f) - np.cos(e)
    h = np.tanh(g) * a
    return np.sum(h * h + f)


def per_structure(params, x):
    return np.sum(np.tanh(x @ params["W"]) + params["b"])


def shown_code(page: str) -> str:
    """The text of every <pre> of ``page``, as it reads on screen."""
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", "\n".join(blocks)))


def test_a_derivative_shows_its_signature_and_its_source_highlighted():
    derivative = ad.grad(two_layers, wrt=(1, 2))
    page = derivative._repr_html_()
    assert isinstance(derivative.source, str)
    assert f"<b>two_layers_grad</b>{html.escape(str(inspect.signature(derivative)))}" in page
    assert shown_code(page).splitlines() == derivative.source.splitlines()
    # user text is escaped: no "<" of h < 0 is left bare, where it would open a tag
    text = re.sub(r"</?(pre|span|div|code|b|details|summary)\b[^>]*>", "", page)
    assert "<" not in text and "(h &lt; 0) &amp; (" in text
    origins = [line.strip() for line in derivative.source.splitlines()
               if re.match(r"\s*# (grad of )?line \d+: ", line)]
    assert any(line.startswith("# grad of line") for line in origins)
    for comment in origins:
        assert (f'<span class="ad-origin" style="{STYLES["origin"]}">{html.escape(comment)}'
                "</span>") in page
    # other comments are not pointers to the user's lines, and look different
    assert '<span class="ad-comment" style="' in page
    assert STYLES["origin"] != STYLES["comment"]


def test_a_derivative_of_a_notebook_cell_names_the_cell(monkeypatch):
    where = ad.grad(two_layers).where
    assert f"(defined at {html.escape(f'{where.filename}:{where.lineno}')})" in (
        ad.grad(two_layers)._repr_html_())
    ipython_running(monkeypatch, {where.filename: 16})
    assert f"(defined at Cell In[16], line {where.lineno})" in ad.grad(two_layers)._repr_html_()


def test_a_jacobian_and_a_hessian_show_the_code_they_are_assembled_from():
    for derivative in (ad.jacobian(two_layers, wrt=1), ad.hessian(two_layers, wrt=1)):
        page = derivative._repr_html_()
        assert f"<b>{html.escape(derivative.__name__)}</b>" in page
        assert shown_code(page).splitlines() == derivative.source.splitlines()


def test_a_long_derivative_folds_past_its_first_lines():
    derivative = ad.grad(many_lines)
    page = derivative._repr_html_()
    lines = derivative.source.rstrip("\n").splitlines()
    assert len(lines) > SHOWN_LINES
    first, folded = page.split("<details>")
    assert shown_code(first).splitlines() == lines[:SHOWN_LINES]
    assert f"<summary>{len(lines) - SHOWN_LINES} more lines</summary>" in folded
    assert shown_code(folded).splitlines() == lines[SHOWN_LINES:]


def test_a_derivative_compiled_at_its_first_call_says_so_then_shows_the_code():
    params, x = {"W": RNG.normal(size=(3, 2)), "b": 0.5}, RNG.normal(size=3)
    derivative = ad.grad(per_structure)
    before = derivative._repr_html_()
    assert "<pre" not in before and "after that call" in before
    assert "the derivative of <code>per_structure</code>" in before
    assert derivative.source.startswith("def per_structure_grad(params, x):")  # as before
    derivative(params, x)
    after = derivative._repr_html_()
    assert shown_code(after).splitlines() == derivative.source_for(params, x).splitlines()

    specialized = ad.grad(two_layers, jit=True)
    assert shown_code(specialized._repr_html_()) == specialized.source.rstrip("\n")
    args = RNG.normal(size=2), RNG.normal(size=(2, 3)), RNG.normal(size=3)
    specialized(*args)
    assert "1 signature so far" in specialized._repr_html_()
    assert (shown_code(specialized._repr_html_()).splitlines()
            == specialized.source_for(*args).splitlines())


@ad.custom_grad
def slightly_wrong(x):
    return np.sin(x)


@slightly_wrong.defvjp
def _(g, ans, x):
    return g * np.cos(x) * 1.01


@slightly_wrong.defjvp
def _(t, ans, x):
    return t * np.cos(x)


def weighted(x, w):
    return np.sum(slightly_wrong(x) * w)


def rows_of(page: str) -> list[tuple[bool, list[str]]]:
    """Each body row of an HTML table: whether it is marked failed, and its cells."""
    rows = re.findall(r"<tr([^>]*)>(.*?)</tr>", page.split("<tbody>")[1], flags=re.DOTALL)
    return [("ad-failed" in attributes,
             [html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", cells)])
            for attributes, cells in rows]


def test_check_grad_shows_every_row_and_marks_failures():
    x, w = RNG.normal(size=4), RNG.normal(size=4)
    with pytest.raises(ad.GradientCheckError) as caught:
        ad.check_grad(weighted, x, w, wrt=(0, 1))
    report = caught.value.report
    page = report._repr_html_()
    assert html.escape(report.title) in page
    shown = rows_of(page)
    assert [cells for _, cells in shown] == [list(row) for row in report.table()[1:]]
    assert [failed for failed, _ in shown] == [not row.passed for row in report.rows]
    assert [row.name for row in report.rows if not row.passed] == ["x"]


def with_abs(x, w):
    return np.sum(np.abs(np.tanh(w @ x)))


def test_compare_shows_every_method_and_marks_the_unavailable(capsys):
    table = ad.compare(with_abs, np.ones(3), np.full((2, 3), 0.3), wrt=(0, 1), verbose=False)
    page = table._repr_html_()
    shown = rows_of(page)
    assert [cells[0] for _, cells in shown] == [row.method for row in table.rows]
    assert [failed for failed, _ in shown] == [not row.available for row in table.rows]
    assert any(failed for failed, _ in shown) and SYMBOLIC in page and REVERSE in page
    assert html.escape(table.notes[0]) in page
    assert capsys.readouterr().out == ""


def test_compare_prints_outside_ipython_only(capsys, monkeypatch):
    table = ad.compare(with_abs, np.ones(3), np.full((2, 3), 0.3), symbolic=False)
    assert capsys.readouterr().out.strip() == str(table).strip()
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setattr(builtins, "get_ipython", lambda: None, raising=False)
    ad.compare(with_abs, np.ones(3), np.full((2, 3), 0.3), symbolic=False)
    assert capsys.readouterr().out == ""  # the cell shows the returned table, once
    ad.compare(with_abs, np.ones(3), np.full((2, 3), 0.3), symbolic=False, verbose=True)
    assert capsys.readouterr().out.strip().startswith("gradient of with_abs")


def test_symbolic_gradient_shows_as_latex():
    gradient = ad.symbolic_grad(smooth_layers, wrt=(1, 2), shapes={
        "x": (2,), "w1": (2, 2), "w2": (2,)})
    latex = gradient._repr_latex_()
    assert latex.startswith("$") and latex.endswith("$") and latex.count("$") == 2
    assert r"\mathtt{smooth\_layers}" in latex and r"\partial \mathtt{w2}" in latex
    assert latex.count("&=") == 2 and latex.count(r"\begin{") == latex.count(r"\end{")
