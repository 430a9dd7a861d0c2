"""codegen's names_read (by the symbol table) agrees with free_names (by the AST) on
generated derivatives, whose globals and closure it decides."""

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

