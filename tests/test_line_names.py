"""Errors about code in a notebook cell name the cell as IPython's tracebacks do
(``Cell In[16], line 2``); about code in a file, ``model.py:2`` as before.

IPython is not installed here: the session is simulated by a ``get_ipython`` among
the builtins (IPython's own sets it there) returning a shell whose ``compile`` (IPython's
``CachingCompiler``, ``get_ipython().compile``) has a ``_filename_map`` (its map from
the file name a cell was compiled under to the cell's execution count)."""

from __future__ import annotations

import builtins
import os
from types import SimpleNamespace

import numpy as np
import pytest

import autodiff as ad
from autodiff.line_names import line_name

CELL = """\
import numpy as np
def loss(x):
    return np.sum(x.frobnicate())
def mismatched(x):
    return np.sum(x[:3] * np.ones(4))
class Positive(Exception):
    pass
def refuses_positive(x):
    if np.sum(x) > 0:
        raise Positive("only negative inputs")
    return np.sum(x * x)
"""


def ipython_running(monkeypatch, cells: dict[str, int]) -> None:
    """A simulated IPython session that has run ``cells`` (file name -> execution count)."""
    caching_compiler = SimpleNamespace(_filename_map=cells)
    shell = SimpleNamespace(compile=caching_compiler)
    monkeypatch.setattr(builtins, "get_ipython", lambda: shell, raising=False)


@pytest.fixture
def cell(user_module, monkeypatch):
    module = user_module(CELL)
    ipython_running(monkeypatch, {module.__file__: 16})
    return module


def test_a_compile_error_in_a_cell_names_the_cell(cell):
    with pytest.raises(ad.UnknownFunctionError) as raised:
        ad.grad(cell.loss)(np.ones(5))
    assert str(raised.value).startswith(
        "Cell In[16], line 3: the method '.frobnicate()' is not supported")


def test_an_error_while_a_derivative_of_a_cell_runs_names_the_cell(cell):
    with pytest.raises(ad.DerivativeError) as raised:
        ad.grad(cell.mismatched)(np.ones(5))
    assert str(raised.value).startswith("Cell In[16], line 5: ValueError while computing")


def test_the_note_on_a_users_own_exception_names_the_cell(cell):
    with pytest.raises(cell.Positive) as raised:
        ad.grad(cell.refuses_positive)(np.ones(2))
    assert "raised at Cell In[16], line 10: raise Positive" in "".join(raised.value.__notes__)


def test_a_file_keeps_its_name_and_line(user_module, monkeypatch):
    module = user_module(CELL)
    ipython_running(monkeypatch, {"/tmp/ipykernel_1234/2861871040.py": 16})  # another cell
    with pytest.raises(ad.UnknownFunctionError) as raised:
        ad.grad(module.loss)(np.ones(5))
    assert str(raised.value).startswith(f"{os.path.basename(module.__file__)}:3: the method")


@pytest.mark.parametrize("shell", [
    None,                                  # get_ipython() once the shell has ended
    SimpleNamespace(),                     # a shell without IPython's compiler
    SimpleNamespace(compile=SimpleNamespace()),  # a compiler without the map
], ids=["no shell", "no compiler", "no map"])
def test_an_ipython_without_the_map_gives_the_file_name(monkeypatch, shell):
    monkeypatch.setattr(builtins, "get_ipython", lambda: shell, raising=False)
    assert line_name("/tmp/ipykernel_1234/2861871040.py", 2) == "2861871040.py:2"


def test_without_ipython_a_file_is_its_base_name(monkeypatch):
    monkeypatch.delattr(builtins, "get_ipython", raising=False)
    assert line_name("/home/me/model.py", 12) == "model.py:12"
    assert line_name("/home/me/model.py") == "model.py"


def test_a_cell_without_a_line_is_the_cell(monkeypatch):
    ipython_running(monkeypatch, {"/tmp/ipykernel_1234/2861871040.py": 7})
    assert line_name("/tmp/ipykernel_1234/2861871040.py") == "Cell In[7]"
