"""Syntax highlighting of Python source, over the standard library's ``tokenize``: in
ANSI colours for a terminal, in HTML for a notebook.

Both read one classification of the tokens (:func:`spans`), so a token has the
same kind wherever it is shown. Comments matter most in generated derivatives:
each names the line of the user's code a block comes from (an *origin*), so
those get the most visible colour. No third-party highlighter is needed for so
few token kinds.

>>> highlight("x = 1  # why", colors=False)
'x = 1  # why'
>>> "\\x1b[" in highlight("x = 1  # why")
True
>>> highlight_html("x < 1  # line 3: y = x")
'x &lt; <span class="ad-number" style="color:#b35900">1</span>  <span class="ad-origin" \
style="color:#0b6e99;font-weight:bold"># line 3: y = x</span>'
"""

from __future__ import annotations

import builtins
import html
import io
import keyword
import os
import re
import tokenize
from typing import TextIO

RESET = "\x1b[0m"
# The colour of each kind of token, in a terminal.
ANSI = {
    "origin": "\x1b[1;36m",      # bold cyan: the pointers back to the user's lines
    "comment": "\x1b[1;36m",
    "keyword": "\x1b[35m",       # magenta
    "builtin": "\x1b[34m",       # blue
    "number": "\x1b[33m",        # yellow
    "string": "\x1b[32m",        # green
    "definition": "\x1b[1m",     # bold: the name after ``def`` or ``class``
}
# The same in HTML, as inline styles: no style sheet needs to come with the page. On a
# white page or a dark one, since notebooks have both.
STYLES = {
    "origin": "color:#0b6e99;font-weight:bold",
    "comment": "color:#6a737d;font-style:italic",
    "keyword": "color:#a626a4",
    "builtin": "color:#4078f2",
    "number": "color:#b35900",
    "string": "color:#50a14f",
    "definition": "font-weight:bold",
}

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# A comment naming the user's line a block of generated code comes from (codegen's
# ``# line 4: ...``, ``# grad of line 4 (in layer): ...``, ``# tangent of line 4: ...``).
_ORIGIN = re.compile(r"#\s*(?:grad of |tangent of )?line \d+\b")
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
# Python 3.12 splits f-strings into several tokens; all of them are string text.
_STRING_TYPES = {tokenize.STRING} | {
    getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}
_LAYOUT = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def supports_color(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Whether ``stream`` is a terminal that shows colours (https://no-color.org).

    >>> supports_color(io.StringIO())
    False
    """
    environ = os.environ if environ is None else environ
    if "NO_COLOR" in environ or environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def strip_ansi(text: str) -> str:
    """``text`` without ANSI colour codes.

    >>> strip_ansi(highlight("def f(x): return 2"))
    'def f(x): return 2'
    """
    return _ANSI_ESCAPE.sub("", text)


def _kind_of(token: tokenize.TokenInfo, previous: tokenize.TokenInfo | None) -> str | None:
    if token.type == tokenize.COMMENT:
        return "origin" if _ORIGIN.match(token.string) else "comment"
    if token.type in _STRING_TYPES:
        return "string"
    if token.type == tokenize.NUMBER:
        return "number"
    if token.type != tokenize.NAME:
        return None
    if previous is not None and previous.string in ("def", "class"):
        return "definition"
    if keyword.iskeyword(token.string):
        return "keyword"
    # ``x.sum`` is an attribute, not the builtin ``sum``.
    if token.string in _BUILTINS and not (previous is not None and previous.string == "."):
        return "builtin"
    return None


def spans(source: str) -> list[tuple[int, int, str]] | None:
    """The highlighted tokens of ``source``: ``(start, end, kind)`` by offsets into it, in
    order, ``kind`` a key of :data:`ANSI` and :data:`STYLES`. None when it does not
    tokenize.

    >>> spans("return x  # why")
    [(0, 6, 'keyword'), (10, 15, 'comment')]
    """
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    found, previous = [], None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            kind = _kind_of(token, previous)
            if token.type not in _LAYOUT:
                previous = token
            if kind is not None:
                found.append((starts[token.start[0] - 1] + token.start[1],
                              starts[token.end[0] - 1] + token.end[1], kind))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return found


def _painted(source: str, paint) -> str:
    """``source`` with ``paint(text, kind)`` around each highlighted token and
    ``paint(text, None)`` around the text between them."""
    found = spans(source)
    if found is None:
        return paint(source, None)
    out, position = [], 0
    for start, end, kind in found:
        out.append(paint(source[position:start], None))
        out.append(paint(source[start:end], kind))
        position = end
    out.append(paint(source[position:], None))
    return "".join(out)


def _ansi(text: str, kind: str | None) -> str:
    if kind is None:
        return text
    # Colour each line on its own, so that a pager showing part of a multi-line
    # string still resets at the end of every line.
    color = ANSI[kind]
    return "\n".join(f"{color}{line}{RESET}" if line else line for line in text.split("\n"))


def _html(text: str, kind: str | None) -> str:
    if kind is None:
        return html.escape(text)
    # Each line in a span of its own, as in a terminal: the lines can be cut apart.
    opening = f'<span class="ad-{kind}" style="{STYLES[kind]}">'
    return "\n".join(f"{opening}{html.escape(line)}</span>" if line else line
                     for line in text.split("\n"))


def highlight(source: str, colors: bool = True) -> str:
    """``source`` with ANSI colours on keywords, builtins, numbers, strings and comments.

    With ``colors=False``, or when ``source`` does not tokenize, it comes back
    unchanged; removing the colours (:func:`strip_ansi`) always gives ``source``.

    >>> highlight("return 1.5", colors=False)
    'return 1.5'
    """
    return _painted(source, _ansi) if colors else source


def highlight_html(source: str) -> str:
    """``source`` as HTML text (escaped), its tokens in ``<span class="ad-KIND">`` with
    their colour inline. Every line of the result is one line of ``source`` (no tag
    spans two), so the result can be cut at line ends; to place inside ``<pre>``.

    >>> highlight_html("if a & b:")
    '<span class="ad-keyword" style="color:#a626a4">if</span> a &amp; b:'
    """
    return _painted(source, _html)


__all__ = ["ANSI", "RESET", "STYLES", "highlight", "highlight_html", "spans", "strip_ansi",
           "supports_color"]
