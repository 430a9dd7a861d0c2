"""codegen's names_read (by the symbol table) agrees with free_names (by the AST) on
generated derivatives, whose globals and closure it decides; and compile_generated,
which finds them in the compiled code, with both."""

import inspect

import pytest

from autodiff.codegen.python import free_names, names_read
from autodiff.derivatives.build import build_grad
from tests.codegen import corpus


@pytest.mark.parametrize("fn", corpus.FUNCTIONS, ids=lambda f: f.__name__)
def test_names_read_agrees_with_free_names_on_generated_code(fn):
    wrt = tuple(range(len(inspect.signature(fn).parameters)))
    for optimize in (True, False):
        source = build_grad(fn, wrt, with_value=False, optimize=optimize, has_aux=False).source
        assert names_read(source) == free_names(source)


def test_names_read_sees_every_scope_of_a_definition():
    text = (
        "def f(x, scale=SCALE):\n"
        "    import math as m\n"
        "    total = sum(v * w for v in x)\n"
        "    g = lambda t: t + offset\n"
        "    try:\n"
        "        y = helper(total)\n"
        "    except Exception as error:\n"
        "        raise wrap(error)\n"
        "    del total\n"
        "    return g(y) + m.pi + f(x)\n"
    )
    assert names_read(text) == free_names(text) == {
        "SCALE", "sum", "w", "offset", "helper", "Exception", "wrap", "f"}



@pytest.mark.parametrize("fn", corpus.FUNCTIONS, ids=lambda f: f.__name__)
def test_compiling_finds_the_names_the_text_reads(fn):
    """compile_generated learns what a derivative reads from outside from its compiled
    code: the same helpers, closure variables and namespaces as its text's symbol table,
    and the text it shows for the factory declares exactly those."""
    import linecache

    from autodiff.codegen.compile import compile_generated
    from autodiff.codegen.python import generate
    from autodiff.graph.scopes import Home

    wrt = tuple(range(len(inspect.signature(fn).parameters)))
    graph = build_grad(fn, wrt, with_value=False, optimize=True, has_aux=False).graph
    by_text = generate(graph, Home.of_function(fn))
    by_code = generate(graph, Home.of_function(fn))
    function = compile_generated(by_code, fn)
    assert by_code.reads is not None
    assert by_code.runtime == by_text.runtime
    assert by_code.closure_names == by_text.closure_names
    assert by_code.foreign == by_text.foreign
    declared = linecache.getlines(function.__code__.co_filename)[1].strip()
    assert declared == " = ".join(sorted(by_text.runtime.keys() | by_text.closure_names
                                         | by_text.foreign.keys())) + " = None"


def test_a_text_reading_nothing_from_outside_declares_nothing():
    """With no name of outside read, the factory has no line declaring them, and the
    function's lines are where its text shows them."""
    import linecache

    import numpy as np

    from autodiff.codegen.compile import compile_generated
    from autodiff.codegen.python import GeneratedSource

    def user(x):
        return x

    generated = GeneratedSource("def g(x):\n    return x * 2.0\n", "g", helpers={"np": np})
    function = compile_generated(generated, user)
    assert function(3.0) == 6.0 and generated.runtime == {}
    lines = linecache.getlines(function.__code__.co_filename)
    assert lines == ["def __autodiff_factory__():\n", "    def g(x):\n",
                     "        return x * 2.0\n", "    return g\n"]
    assert function.__code__.co_firstlineno == 2
