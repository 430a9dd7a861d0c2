"""A derivative shown in a notebook: its signature, the function it differentiates and
its generated source, highlighted, as the HTML Jupyter displays.

IPython finds a ``_repr_html_`` on the object it displays by its name alone, so
nothing here imports IPython. A derivative is a plain function (its type's repr
cannot change): :func:`show_in_notebooks` gives it the method as an attribute,
which IPython calls all the same.

>>> def f_grad(x):
...     return 2 * x  # grad of line 2: return x * x
>>> f_grad.source = "def f_grad(x):\\n    return 2 * x  # grad of line 2: return x * x\\n"
>>> show_in_notebooks(f_grad)
>>> "ad-origin" in f_grad._repr_html_()
True
"""

from __future__ import annotations

import functools
import html
import inspect
from collections.abc import Callable, Sequence

from autodiff.codegen.highlight import highlight_html
from autodiff.line_names import cell_number, line_name

# Lines shown before the rest of a source is folded away (an HTML <details>).
SHOWN_LINES = 40

_PRE = '<pre style="margin:0;padding:0.3em 0.5em;line-height:1.35;overflow-x:auto">'


def source_html(source: str, shown_lines: int = SHOWN_LINES) -> str:
    """``source`` highlighted in ``<pre>``; past ``shown_lines`` lines, the rest in a
    ``<details>`` that opens on a click.

    >>> source_html("x = 1  # line 3: a < b").count("&lt;")
    1
    >>> "<details>" in source_html("x = 1\\n" * 50)
    True
    """
    lines = highlight_html(source.rstrip("\n")).split("\n")
    shown = f"{_PRE}{chr(10).join(lines[:shown_lines])}</pre>"
    rest = lines[shown_lines:]
    if not rest:
        return shown
    return (f"{shown}<details><summary>{len(rest)} more line{'s' if len(rest) > 1 else ''}"
            f"</summary>{_PRE}{chr(10).join(rest)}</pre></details>")


def header_html(derivative: Callable, note: str = "") -> str:
    """The derivative's name and parameters, the function it differentiates and where
    that is defined, and ``note`` (plain text: it is escaped)."""
    name = getattr(derivative, "__name__", type(derivative).__name__)
    try:
        parameters = str(inspect.signature(derivative))
    except (TypeError, ValueError):
        parameters = "(...)"
    original = getattr(derivative, "original", None)
    about = ""
    if original is not None:
        about = f", the derivative of <code>{html.escape(_name(original))}</code>"
        where = getattr(derivative, "where", None)
        if where is not None and where.filename:
            about += f" (defined at {html.escape(_where(where.filename, where.lineno))})"
    remark = f"<br>{html.escape(note)}" if note else ""
    return (f'<div style="margin-bottom:0.3em"><code><b>{html.escape(name)}</b>'
            f"{html.escape(parameters)}</code>{about}{remark}</div>")


def _where(filename: str, lineno: int | None) -> str:
    """``/home/me/model.py:12`` (the whole path: a notebook reader may open the file),
    or ``Cell In[16], line 2`` for a cell IPython ran."""
    if cell_number(filename) is not None:
        return line_name(filename, lineno)
    return f"{filename}:{lineno}"


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def derivative_html(derivative: Callable, note: str = "",
                    sources: Sequence[str] | None = None) -> str:
    """The HTML a notebook shows for ``derivative``: :func:`header_html`, then each of
    ``sources`` (by default its ``.source``) as :func:`source_html` shows it."""
    if sources is None:
        sources = [derivative.source]
    shown = "".join(source_html(source) for source in sources)
    return f'<div class="ad-derivative">{header_html(derivative, note)}{shown}</div>'


def latest_compiled_html(derivative: Callable, compiled: Sequence[Callable], each: str,
                         before: str, general: bool = False) -> str:
    """What a notebook shows of a derivative compiled at the first call with each new
    ``each`` (structure, signature) of its arguments: the code of the latest one and how
    many there are; before any call, ``before`` (and, with ``general``, the general code
    the first call starts from)."""
    if not compiled:
        return derivative_html(derivative, before, None if general else [])
    count = f"{len(compiled)} {each}{'s' if len(compiled) > 1 else ''}"
    return derivative_html(derivative, (
        f"Compiled for each {each} of its arguments: {count} so far, the latest below "
        "(.source_for(*args) shows the code for others)."), [compiled[-1].source])


def show_in_notebooks(derivative: Callable, note: str = "") -> None:
    """Give ``derivative`` the ``_repr_html_`` Jupyter displays it with:
    :func:`derivative_html`, with ``note`` under its name."""
    derivative._repr_html_ = functools.partial(derivative_html, derivative, note)


__all__ = ["SHOWN_LINES", "derivative_html", "header_html", "latest_compiled_html",
           "show_in_notebooks", "source_html"]
