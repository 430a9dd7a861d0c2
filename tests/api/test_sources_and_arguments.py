"""Where functions come from (notebook cells, ``python -c``, exec) and which arguments
gradients are taken with respect to."""

from __future__ import annotations

import ast
import linecache
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules

X = np.array([0.5, -1.0])


def _run_like_ipython(text: str, filename: str) -> dict:
    """Run ``text`` as IPython runs a cell: its text in linecache, each top-level
    statement compiled on its own."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    for statement in ast.parse(text).body:
        exec(compile(ast.Module([statement], type_ignores=[]), filename, "exec"),  # noqa: S102
             namespace)
    return namespace


def test_a_notebook_cell(tmp_path):
    cell = textwrap.dedent("""\
        import numpy as np, autodiff as ad
        scale = 3.0

        @ad.grad
        def df(x):
            return np.sum(scale * np.sin(x) * x)

        def f(x):
            return np.sum(scale * np.sin(x) * x)

        g = ad.grad(f)
        """)
    namespace = _run_like_ipython(cell, str(tmp_path / "ipykernel_1" / "3141.py"))
    expected = 3.0 * (np.cos(X) * X + np.sin(X))
    assert np.allclose(namespace["g"](X), expected)
    assert np.allclose(namespace["df"](X), expected)


def test_a_notebook_cell_edited_after_it_ran_is_refused(tmp_path):
    filename = str(tmp_path / "cell.py")
    namespace = _run_like_ipython("def f(x):\n    return x * x\n", filename)
    linecache.cache[filename] = (0, None, ["def f(x):\n", "    return x * x * x\n"], filename)
    with pytest.raises(ad.SourceUnavailableError, match="not the code that runs"):
        ad.grad(namespace["f"])


def test_python_dash_c():
    program = textwrap.dedent("""\
        import numpy as np, autodiff as ad
        def f(x):
            return np.sum(np.sin(x) * x)
        print(float(ad.grad(f)(np.zeros(1))[0]), ad.grad(lambda x: x * x)(3.0))
        """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0.0", "6.0"]


def test_a_string_run_by_exec_is_refused_clearly():
    namespace: dict = {}
    exec("def f(x):\n    return x * x\n", namespace)  # noqa: S102 - the case under test
    with pytest.raises(ad.SourceUnavailableError) as raised:
        ad.grad(namespace["f"])
    assert "exec" in str(raised.value) and "linecache" in raised.value.hint


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("arguments"))("""
        import numpy as np


        def product(p):
            return np.sum(p[0] * p[1])


        def by_key(p):
            return np.sum(p["a"] * 2.0)


        def appended(x, y):
            return np.sum(np.append(x, y))


        def appended_constants(x):
            return np.sum(x * np.append(np.ones(1), np.zeros(1)))
    """)


@pytest.mark.parametrize("argument, expected", [
    ([1.0, 2.0], [2.0, 1.0]), ((1.0, 2.0), (2.0, 1.0)),
    ([np.ones(2), np.full(2, 3.0)], [np.full(2, 3.0), np.ones(2)]),
    ({"a": 1.0}, {"a": 2.0}), ({"a": np.ones(2)}, {"a": np.full(2, 2.0)}),
], ids=["list", "tuple", "list of arrays", "dict", "dict of arrays"])
def test_gradients_with_respect_to_structures_have_their_structure(user, argument, expected):
    fn = user.by_key if isinstance(argument, dict) else user.product
    gradient = ad.grad(fn)(argument)
    assert ad.tree.structure(gradient) == ad.tree.structure(expected)
    for got, want in zip(ad.tree.leaves(gradient), ad.tree.leaves(expected)):
        assert type(got) is type(want)
        np.testing.assert_array_equal(got, want)


def test_np_append_is_numpys_not_a_list_growing(user):
    # np.append is NumPy's op (a new array), not a list growing in place
    got = ad.grad(user.appended, wrt=(0, 1))(X, X[:1])
    for ours, theirs in zip(got, ad.numeric_grad(user.appended, X, X[:1], wrt=(0, 1))):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
    assert np.allclose(ad.grad(user.appended_constants)(X), [1.0, 0.0])
