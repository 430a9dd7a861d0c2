"""ANSI syntax highlighting of Python source, over the standard library's ``tokenize``.

The command line colours the generated derivatives it prints. Comments matter
most there: each names the line of the user's code a block comes from, so they
get the most visible colour. No third-party highlighter is needed for so few
token kinds.

>>> highlight("x = 1  # why", colors=False)
'x = 1  # why'
>>> "\\x1b[" in highlight("x = 1  # why")
True
"""

from __future__ import annotations

import builtins
import io
import keyword
import os
import re
import tokenize
from typing import TextIO

RESET = "\x1b[0m"
COMMENT = "\x1b[1;36m"    # bold cyan: the pointers back to the user's lines
KEYWORD = "\x1b[35m"      # magenta
BUILTIN = "\x1b[34m"      # blue
NUMBER = "\x1b[33m"       # yellow
STRING = "\x1b[32m"       # green
DEFINITION = "\x1b[1m"    # bold: the name after ``def`` or ``class``

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
# Python 3.12 splits f-strings into several tokens; all of them are string text.
_STRING_TYPES = {tokenize.STRING} | {
    getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}


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


def _color_of(token: tokenize.TokenInfo, previous: tokenize.TokenInfo | None) -> str | None:
    if token.type == tokenize.COMMENT:
        return COMMENT
    if token.type in _STRING_TYPES:
        return STRING
    if token.type == tokenize.NUMBER:
        return NUMBER
    if token.type != tokenize.NAME:
        return None
    if previous is not None and previous.string in ("def", "class"):
        return DEFINITION
    if keyword.iskeyword(token.string):
        return KEYWORD
    # ``x.sum`` is an attribute, not the builtin ``sum``.
    if token.string in _BUILTINS and not (previous is not None and previous.string == "."):
        return BUILTIN
    return None


def _paint(text: str, color: str) -> str:
    # Colour each line on its own, so that a pager showing part of a
    # multi-line string still resets at the end of every line.
    return "\n".join(f"{color}{line}{RESET}" if line else line for line in text.split("\n"))


def highlight(source: str, colors: bool = True) -> str:
    """``source`` with ANSI colours on keywords, builtins, numbers, strings and comments.

    With ``colors=False``, or when ``source`` does not tokenize, it comes back
    unchanged; removing the colours (:func:`strip_ansi`) always gives ``source``.

    >>> highlight("return 1.5", colors=False)
    'return 1.5'
    """
    if not colors:
        return source
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out, position, previous = [], 0, None
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            color = _color_of(token, previous)
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.ENDMARKER):
                previous = token
            if color is None:
                continue
            start = starts[token.start[0] - 1] + token.start[1]
            end = starts[token.end[0] - 1] + token.end[1]
            out.append(source[position:start])
            out.append(_paint(source[start:end], color))
            position = end
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    out.append(source[position:])
    return "".join(out)
