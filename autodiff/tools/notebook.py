"""The tools in a notebook: their tables as HTML, their figures as PNG, and whether code
runs in IPython.

IPython shows an object by calling its ``_repr_html_`` or ``_repr_png_`` (found by
name), so the tables and figures need no import of IPython; neither does telling an
IPython session apart, which sets ``get_ipython`` among the builtins.

>>> table = html_table("a & b", [("x", "error"), ("dx", "1e-9"), ("dy", "0.5")], [False, True])
>>> "a &amp; b" in table, table.count('class="ad-failed"')
(True, 1)
"""

from __future__ import annotations

import builtins
import html
import io
import sys
from collections.abc import Sequence
from types import MethodType

FAILED_STYLE = "background:#f8d7da;color:#842029;font-weight:bold"
_CELL = "padding:0.15em 0.6em;text-align:left;font-family:monospace"


def in_ipython() -> bool:
    """Whether this runs in an interactive IPython session (a Jupyter kernel, the
    IPython shell), where the value of a cell's last line is displayed: IPython is
    imported and has set ``get_ipython`` among the builtins.

    >>> in_ipython()
    False
    """
    return "IPython" in sys.modules and hasattr(builtins, "get_ipython")


def html_table(title: str, rows: Sequence[Sequence[str]], failed: Sequence[bool],
               notes: Sequence[str] = ()) -> str:
    """``rows`` as an HTML table under ``title`` (the first row the header), the body
    rows whose ``failed`` is true marked in red, and ``notes`` after it; all text
    escaped."""
    header, *body = rows
    head = "".join(f'<th style="{_CELL}">{html.escape(cell)}</th>' for cell in header)
    lines = []
    for row, bad in zip(body, failed, strict=True):
        marked = f' class="ad-failed" style="{FAILED_STYLE}"' if bad else ""
        cells = "".join(f'<td style="{_CELL}">{html.escape(cell)}</td>' for cell in row)
        lines.append(f"<tr{marked}>{cells}</tr>")
    remarks = "".join(f"<div>{html.escape(note)}</div>" for note in notes)
    return (f'<div class="ad-table"><div style="margin-bottom:0.3em">{html.escape(title)}'
            f'</div><table style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(lines)}</tbody></table>{remarks}</div>")


def shown_inline(figure):
    """``figure`` (a matplotlib Figure), given the ``_repr_png_`` a notebook displays it
    by. Without it a figure not made by ``pyplot`` shows as its repr, ``<Figure size
    1200x460 with 2 Axes>``, unless ``%matplotlib inline`` has registered matplotlib's
    own display of figures (which IPython then prefers: the figure shows once)."""
    figure._repr_png_ = MethodType(png_bytes, figure)
    return figure


def png_bytes(figure) -> bytes:
    """The figure drawn as a PNG, at its own size and resolution."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
