"""Derivatives exported as modules of their own (``g.export()``) run without autodiff:
every program of the corpora, in a fresh interpreter where ``import autodiff`` fails,
gives the gradients the derivative in memory gives."""

from __future__ import annotations

import builtins
import os
import pickle
import runpy
import subprocess
import symtable
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from autodiff.codegen.export import _Module
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import CORPUS
from tests.helpers import random_array
from tests.ops import test_complex, test_fft, test_linalg, test_reduce
from tests.ops.table import shared_module, signatures

ROOT = Path(__file__).resolve().parents[2]



def run_exported(directory: Path, calls: list[tuple[str, str, list, dict]]) -> dict:
    """``{module: result}`` of calling, in a fresh interpreter without autodiff, each
    exported module's function with its arguments: (module, function, args, kwargs)."""
    (directory / "calls.pkl").write_bytes(pickle.dumps(calls))
    script = textwrap.dedent("""
        import importlib, pickle, sys
        sys.modules["autodiff"] = None
        calls = pickle.loads(open(sys.argv[1], "rb").read())
        results = {}
        for module, function, args, kwargs in calls:
            results[module] = getattr(importlib.import_module(module), function)(*args, **kwargs)
        open(sys.argv[2], "wb").write(pickle.dumps(results))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(directory), str(ROOT)]))
    env.pop("PYTHONSAFEPATH", None)
    done = subprocess.run([sys.executable, "-c", script, str(directory / "calls.pkl"),
                           str(directory / "results.pkl")], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return pickle.loads((directory / "results.pkl").read_bytes())


def _leaves(value) -> list:
    return ad.tree.leaves(value)


def unresolved_and_unused(text: str, exported: str) -> tuple[set, set]:
    """The global names the module's code reads that nothing defines, and the names the
    module defines (imports, constants, functions, classes) that nothing reads but
    ``exported``: what ruff would report as undefined (F821) and unused (F401)."""
    module = symtable.symtable(text, "exported", "exec")
    defined = {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}
    read = {s.get_name() for s in module.get_symbols() if s.is_referenced()}
    tables = list(module.get_children())
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        read |= {s.get_name() for s in table.get_symbols()
                 if s.is_referenced() and (s.is_global() or s.is_free() and table.get_type()
                                           == "class")}
    return read - defined - set(dir(builtins)), defined - read - {exported}


def test_exported_corpus_runs_without_autodiff(tmp_path):
    calls, expected = [], {}
    for index, program in enumerate(CORPUS + CONTROL_FLOW):
        gradient = ad.grad(program.fn, wrt=program.wrt)
        text = gradient.export()
        assert "autodiff" not in "".join(
            line for line in text.splitlines(True) if line.startswith(("import", "from")))
        assert unresolved_and_unused(text, gradient.__name__) == (set(), set()), (
            program.fn.__name__)
        name = f"exported_{index}"
        (tmp_path / f"{name}.py").write_text(text)
        args = program.make_args(np.random.default_rng(index))
        calls.append((name, gradient.__name__, args, {}))
        expected[name] = gradient(*args)
    results = run_exported(tmp_path, calls)
    for name, ours in expected.items():
        theirs = results[name]
        assert len(_leaves(ours)) == len(_leaves(theirs)), name
        for a, b in zip(_leaves(ours), _leaves(theirs)):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_closures_globals_of_no_module_and_structures(tmp_path, user_module, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))  # the user's module: importable by its name
    module = user_module("""
        import numpy as np

        RATE = 0.1

        def make(scale):
            def loss(params, x):
                h = np.tanh(x @ params["W"] + params["b"])
                return scale * np.sum(h ** 2) + RATE * np.sum(params["W"] ** 2)
            return loss

        def flat(W, x):
            return np.sum(np.sin(x @ W)) * RATE
    """)
    loss = module.make(2.5)
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    x = rng.normal(size=(4, 3))
    gradient = ad.grad(loss)
    text = gradient.export_for(params, x)
    # the closure variable is a keyword-only parameter; RATE comes from the user's module
    assert f"from {module.__name__} import RATE" in text
    assert "def loss_grad(params, x, *, scale):" in text
    assert unresolved_and_unused(text, "loss_grad") == (set(), set())
    (tmp_path / "exported_loss.py").write_text(text)
    # a global of a script (__main__, a notebook) is a keyword-only parameter too
    script = tmp_path / "script.py"
    script.write_text(Path(module.__file__).read_text())
    flat = ad.grad(runpy.run_path(str(script), run_name="__main__")["flat"])
    assert "def flat_grad(W, x, *, RATE):" in flat.export()
    (tmp_path / "exported_flat.py").write_text(flat.export())
    results = run_exported(tmp_path, [
        ("exported_loss", "loss_grad", [params, x], {"scale": 2.5}),
        ("exported_flat", "flat_grad", [params["W"], x], {"RATE": 0.1})])
    for key in params:
        np.testing.assert_array_equal(results["exported_loss"][key], gradient(params, x)[key])
    np.testing.assert_array_equal(results["exported_flat"], flat(params["W"], x))


def test_forward_mode_and_second_order_export(tmp_path, user_module):
    module = user_module("""
        import numpy as np

        def f(x, y):
            return np.sum(np.exp(np.sin(x) * y) / (1.0 + x * x))
    """)
    rng = np.random.default_rng(1)
    x, y, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    push, hvp = ad.jvp(module.f), ad.hvp(module.f)
    (tmp_path / "exported_push.py").write_text(push.export())
    (tmp_path / "exported_hvp.py").write_text(hvp.export())
    results = run_exported(tmp_path, [("exported_push", push.__name__, [x, y, v], {}),
                                      ("exported_hvp", hvp.__name__, [x, y, v], {})])
    for ours, theirs in zip(_leaves(push(x, y, v)), _leaves(results["exported_push"])):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(hvp(x, y, v), results["exported_hvp"])


def test_a_helper_that_needs_autodiff_is_refused(user_module):
    module = user_module("""
        import warnings
        import numpy as np

        def f(x):
            if np.any(x > 10.0):
                warnings.warn("large x")
            return np.sum(x ** 2)
    """)
    with pytest.raises(ad.AutodiffError, match=r"cannot export f_grad: it calls "
                       r"warn_at_user_line.*\n  hint: take warnings.warn"):
        ad.grad(module.f).export()


def _table_calls(cases, preamble: str, complex_values: bool, prefix: str, directory: Path):
    """Each case of an op table: its gradient in memory, and its export written to
    ``directory``, with the arguments to call both with."""
    module = shared_module(signatures(cases), preamble, complex_values)
    calls, expected = [], {}
    for index, (_, shapes, *rest) in enumerate(cases):
        domain = rest[0] if rest else "complex" if complex_values else "real"
        rng = np.random.default_rng(index)
        args = [random_array(rng, shape, domain) for shape in shapes]
        out_shape = np.shape(getattr(module, f"value_{index}")(*args))
        weights = rng.uniform(0.5, 1.5, size=out_shape) * (1.0 + 0.5j if complex_values else 1)
        gradient = ad.grad(getattr(module, f"loss_{index}"),
                           wrt=tuple(range(len(args))) if len(args) > 1 else 0)
        name = f"{prefix}_{index}"
        text = gradient.export_for(*args, weights)  # for complex values, when they are
        assert unresolved_and_unused(text, gradient.__name__) == (set(), set()), cases[index]
        (directory / f"{name}.py").write_text(text)
        calls.append((name, gradient.__name__, [*args, weights], {}))
        expected[name] = gradient(*args, weights)
    return calls, expected


def test_exported_op_tables_run_without_autodiff(tmp_path):
    """The helpers every op's rules call, written out: the linear algebra, reductions,
    fft and complex tables (the helpers of complex values included)."""
    calls, expected = [], {}
    for cases, complex_values, prefix in ((test_linalg.CASES, False, "linalg"),
                                          (test_reduce.CASES, False, "reduce"),
                                          (test_fft.CASES, True, "fft"),
                                          (test_complex.CASES, True, "complex")):
        more_calls, more_expected = _table_calls(cases, "", complex_values, prefix, tmp_path)
        calls += more_calls
        expected.update(more_expected)
    results = run_exported(tmp_path, calls)
    for name, ours in expected.items():
        for a, b in zip(_leaves(ours), _leaves(results[name]), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_a_name_both_the_users_and_a_helpers_is_refused(tmp_path, user_module, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))  # its globals are imported from it
    module = user_module("""
        import numpy as np

        _real_part = 2.0  # also the name of a helper as_gradient_of calls

        def f(x):
            return np.sum(x ** 2) * _real_part
    """)
    with pytest.raises(ad.AutodiffError, match=r"cannot export f_grad: two things named "
                       r"'_real_part' would be defined in one module\n  hint: rename the "
                       r"variable of your code"):
        ad.grad(module.f).export()


def test_a_value_with_no_source_text_is_refused():
    with pytest.raises(ad.AutodiffError, match=r"cannot export f_grad: a_helper reads 'TABLE', "
                       r"a object that cannot be written as Python source\n  hint: export a "
                       r"derivative that does not call it"):
        _Module("f_grad").constant_text("TABLE", object(), "a_helper")
