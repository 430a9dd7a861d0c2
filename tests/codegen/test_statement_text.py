"""codegen/text.py: the text of a statement found from the one of its shape is astor's.

A statement of a shape met before is its shape's text with its names filled in; these
check it against astor's own text of each statement, the first of its shape and the
next, short and wrapped, with and without the constants astor writes by context.
"""

from __future__ import annotations

import ast

import astor
import pytest

from autodiff.codegen import text as text_module
from autodiff.codegen.text import statement_text
from autodiff.derivatives.build import build_grad
from tests.codegen import corpus


def _astor(statement: ast.stmt) -> str:
    def wrapped(parts):
        joined = "".join(parts)
        return joined if len(joined) <= 80 else astor.source_repr.pretty_source(parts)
    return astor.to_source(statement, pretty_source=wrapped).rstrip("\n")


STATEMENTS = [
    "t5 = keep_zeros_multiply(dt6, h1)",
    "dt7 = keep_zeros_multiply(dt8, h1)",  # the shape of the one before
    "a = b * (c + d)",
    "a = (b * c) + d",
    "a = -(b ** 2)",
    "a = (-b) ** 2",
    "a = b ** -1.5",
    "a = b - -0.0",
    "a = np.sum(x, axis=(0, 1), keepdims=True)",
    "a = x[:, 1:n, ::2]",
    "a = x[i, None]",
    "a = (x, y)",
    "a = x,",
    "x += y",
    "tape.append((h, c))",
    "a = {'k': v, 'j': w}",
    "a = f'{x:.3f} and {y!r}'",
    "a = 'single' + \"it's\" + x",
    "a = 1e1000 - x",
    "a = not x and y or z",
    "a = x if c else y",
    "a = 0 < x <= y",
    "a = float('nan') * x",
    "a = (1+2j) * z",
    "if flag:\n    break",
    "return dx, dw, db",
    "assert np.all(x > 0), 'positive'",
    "raise ValueError(message)",
    "a = {x, y}",
    "a = [*xs, y]",
    "a = f(*args, **kwargs)",
]


@pytest.mark.parametrize("source", STATEMENTS)
def test_the_text_is_astors(source):
    statement = ast.parse(source).body[0]
    assert statement_text(statement) == _astor(statement)
    assert statement_text(statement) == _astor(statement)  # from its shape, the second time


@pytest.mark.parametrize("length", [60, 70, 75, 76, 77, 78, 79, 80, 81, 90, 120])
def test_long_statements_are_wrapped_as_astor_wraps_them(length):
    """A statement of a shape seen short is wrapped once its names make it long."""
    short = ast.parse("t = unbroadcast(keep_zeros_multiply(a, b), c)").body[0]
    assert statement_text(short) == _astor(short)
    name = "n" * max(1, length - len("t = unbroadcast(keep_zeros_multiply(a, b), )"))
    long = ast.parse(f"t = unbroadcast(keep_zeros_multiply(a, b), {name})").body[0]
    assert statement_text(long) == _astor(long)


def test_names_holding_braces_or_slots_are_written_as_they_are():
    statement = ast.Assign([ast.Name("t", ast.Store())],
                           ast.Call(ast.Name("f", ast.Load()), [ast.Name("x", ast.Load())], []),
                           lineno=0)
    assert statement_text(statement) == "t = f(x)"
    statement.value.args[0].id = "{0}"  # (no name holds one; the text is still filled)
    assert statement_text(statement) == "t = f({0})"


def test_a_statement_is_left_as_it_was():
    statement = ast.parse("a = np.sum(x * y, axis=0) + b").body[0]
    before = ast.dump(statement)
    statement_text(statement)
    statement_text(statement)
    assert ast.dump(statement) == before


def test_shapes_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(text_module, "_TEXTS", {})
    monkeypatch.setattr(text_module, "_MOST_SHAPES", 3)
    for k in range(10):
        statement = ast.parse(f"a = b * {k}.5").body[0]
        assert statement_text(statement) == _astor(statement)
    assert len(text_module._TEXTS) <= 3


@pytest.mark.parametrize("fn", corpus.FUNCTIONS, ids=lambda f: f.__name__)
def test_generated_statements_are_astors(fn, monkeypatch):
    """Every statement codegen writes for the corpus, as astor writes it."""
    import inspect

    from autodiff.codegen import python

    seen = []

    def checked(statement):
        seen.append((statement_text(statement), _astor(statement)))
        return seen[-1][0]

    monkeypatch.setattr(python, "statement_text", checked)
    wrt = tuple(range(len(inspect.signature(fn).parameters)))
    build_grad(fn, wrt, with_value=False, optimize=True, has_aux=False)
    assert seen and all(ours == theirs for ours, theirs in seen)
