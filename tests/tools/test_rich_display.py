"""What a notebook shows of a derivative, by its ``_repr_html_`` (IPython's display
protocol, called here as IPython calls it: IPython itself is never imported)."""

from __future__ import annotations

import html
import inspect
import re

import numpy as np

import autodiff as ad
from autodiff.codegen.display import SHOWN_LINES
from autodiff.codegen.highlight import STYLES

RNG = np.random.default_rng(3)


# Its "<" and "&" reach the comments of the generated code, which HTML must escape.
def two_layers(x, w1, w2, slope=0.1):
    h = np.tanh(x @ w1)
    h = np.where((h < 0) & (x @ w1 > -5.0), slope * h, h)
    return np.sum(np.tanh(h @ w2) ** 2)


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
