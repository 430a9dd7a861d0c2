"""A statement's text as astor writes it, found once per shape of statement.

Most statements of a derivative differ only in the names they read and write
(``t5 = keep_zeros_multiply(dt6, h1)``, ``dt7 = keep_zeros_multiply(dt8, h1)``),
and astor's text of a statement depends on its names only where it writes them: a
name is a name wherever it stands, and never takes parentheses. So the text of
one statement of each shape (its nodes, operators, attributes, keywords and
constants, its names left out) is kept with a slot for each name, and the next
statement of that shape is its text with the names filled in.

Two things astor does depend on the length of the text around them, and such
statements are written by astor itself: a string constant (its quotes are chosen
by the line it lands on), and a statement whose text is over 80 characters
(wrapped; see :func:`statement_text`).
"""

from __future__ import annotations

import ast
import copy

import astor

# shape of a statement -> (its text as a format string with a field per name, the
# length of the newlines astor ends it with)
_TEXTS: dict[tuple, tuple[str, int]] = {}
_MOST_SHAPES = 20_000  # (the constants of a shape are part of it: a bound on many)
_SLOT = "\x00"  # stands for a name in the text of a shape (no name holds it)
_NAME = "name"  # a name's place in a shape


class _WrittenByAstor(Exception):
    """A statement whose text depends on more than its shape."""


def statement_text(statement: ast.stmt) -> str:
    """astor's text of ``statement``, its lines over 79 characters wrapped by astor: a
    statement whose whole text is shorter has none (most are), and is left as it is."""
    names: list[str] = []
    try:
        key = _shape(statement, names)
    except _WrittenByAstor:
        return _astor_text(statement)
    known = _TEXTS.get(key)
    if known is None:
        known = _TEXTS[key] = _text_of_shape(statement)
        if len(_TEXTS) > _MOST_SHAPES:
            _TEXTS.clear()
    text, newlines = known
    text = text.format(*names)
    if len(text) + newlines > 80:  # wrapped by astor
        return _astor_text(statement)
    return text


def _astor_text(statement: ast.stmt) -> str:
    return astor.to_source(statement, pretty_source=_wrapped).rstrip("\n")


def _wrapped(parts: list[str]) -> str:
    text = "".join(parts)
    return text if len(text) <= 80 else astor.source_repr.pretty_source(parts)


def _text_of_shape(statement: ast.stmt) -> tuple[str, int]:
    """The text of ``statement``'s shape, unwrapped: a format string whose fields are
    its names, in the order :func:`_shape` meets them."""
    blank = copy.deepcopy(statement)
    slots: list[ast.Name] = []
    _shape(blank, slots, nodes=True)
    for index, name in enumerate(slots):
        name.id = f"{_SLOT}{index}{_SLOT}"
    whole = astor.to_source(blank, pretty_source="".join)
    text = whole.rstrip("\n")
    pieces = text.split(_SLOT)
    escaped = [piece.replace("{", "{{").replace("}", "}}") if i % 2 == 0 else "{" + piece + "}"
               for i, piece in enumerate(pieces)]
    return "".join(escaped), len(whole) - len(text)


def _shape(node: ast.AST, names: list, nodes: bool = False) -> tuple | str:
    """What astor's text of ``node`` depends on besides its names, which are appended to
    ``names`` (the Name nodes themselves with ``nodes``)."""
    kind = type(node)
    if kind is ast.Name:
        names.append(node if nodes else node.id)
        return _NAME
    if kind is ast.Constant:
        value = node.value
        if isinstance(value, str):
            raise _WrittenByAstor
        return (kind, type(value), repr(value))
    if kind is ast.JoinedStr:
        raise _WrittenByAstor
    parts: list = [kind]
    for field in kind._fields:
        value = getattr(node, field, None)
        if isinstance(value, ast.AST):
            parts.append(_shape(value, names, nodes))
        elif type(value) is list:
            parts.append(tuple(_shape(item, names, nodes) if isinstance(item, ast.AST)
                               else item for item in value))
        else:
            parts.append(value)
    return tuple(parts)
