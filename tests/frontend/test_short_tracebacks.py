"""A refusal ends its traceback at the user's call, wherever it sits in the code (an
``if`` body, a loop's body, a nested function, a method, code compiled per structure at
its first call) and whichever entry point met it; ``AUTODIFF_DEBUG=1`` keeps the rest.
And hints name functions that exist."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.frontend.convert import _method_hint

PROGRAM = """\
import numpy as np
import autodiff as ad


def in_if(x):
    if np.sum(x) > 0:
        y = np.frexp(x)[0]
    else:
        y = x
    return np.sum(y)


def in_loop(x):
    for _ in range(3):
        x = np.frexp(x)[0]
    return np.sum(x)


def in_nested(x):
    def inner(z):
        if np.sum(z) > 0:
            z = np.frexp(z)[0]
        return z
    return np.sum(inner(x))


class Model:
    def loss(self, x):
        if np.sum(x) > 0:
            x = np.frexp(x)[0]
        return np.sum(x)


def in_structure(p):
    if np.sum(p["a"]) > 0:
        y = np.frexp(p["a"])[0]
    else:
        y = p["a"]
    return np.sum(y)


def vector(x):
    if np.sum(x) > 0:
        return np.frexp(x)[0]
    return x


x = np.ones(2)
CALLS = {{
    "if": lambda: ad.grad(in_if)(x),
    "loop": lambda: ad.grad(in_loop)(x),
    "nested": lambda: ad.grad(in_nested)(x),
    "method": lambda: ad.grad(Model().loss)(x),
    "structure": lambda: ad.grad(in_structure)({{"a": x}}),
    "jit structure": lambda: ad.grad(in_structure, jit=True)({{"a": x}}),
    "jvp": lambda: ad.jvp(in_if)(x, x),
    "check_grad": lambda: ad.check_grad(in_structure, {{"a": x}}),
    "jacobian": lambda: ad.jacobian(vector)(x),
    "hessian": lambda: ad.hessian(in_if)(x),
}}
CALLS[{case!r}]()
"""

CASES = ["if", "loop", "nested", "method", "structure", "jit structure", "jvp",
         "check_grad", "jacobian", "hessian"]


# The package under test, wherever the script runs from.
ROOT = str(Path(autodiff.__file__).parent.parent)


def _run(tmp_path: Path, text: str, **env) -> str:
    """The standard error of ``text`` run as a script, as a person runs one."""
    script = tmp_path / "model.py"
    script.write_text(text)
    path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": path, **env},
                            cwd=tmp_path, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stderr


def _stderr(tmp_path: Path, case: str, **env) -> str:
    return _run(tmp_path, PROGRAM.format(case=case), **env)


def _frames(stderr: str) -> list[str]:
    return re.findall(r'^  File "([^"]+)"', stderr, re.MULTILINE)


@pytest.mark.parametrize("case", CASES)
def test_a_refusal_ends_at_the_users_call(tmp_path, case):
    stderr = _stderr(tmp_path, case)
    frames = _frames(stderr)
    package = str(Path(autodiff.__file__).parent)
    inside = [frame for frame in frames if frame.startswith(package)]
    # the user's frames, the generated function they called (if any), and the one
    # line of autodiff that re-raises, which says how to see the rest
    assert frames[0].endswith("model.py"), stderr
    assert len(inside) == 1, stderr
    assert "AUTODIFF_DEBUG=1" in stderr
    assert "The above exception" not in stderr and "During handling" not in stderr
    assert len(stderr.splitlines()) < 20, stderr
    assert "UnknownFunctionError: model.py:" in stderr
    assert "np.frexp" in stderr


def test_autodiff_debug_keeps_the_frames_of_a_refusal_in_an_if_body(tmp_path):
    stderr = _stderr(tmp_path, "structure", AUTODIFF_DEBUG="1")
    assert len(_frames(stderr)) > 10
    assert any("frontend" in frame or "transforms" in frame for frame in _frames(stderr))


def test_a_name_error_ends_at_the_users_call(tmp_path):
    stderr = _run(tmp_path, textwrap.dedent("""\
        import numpy as np
        import autodiff as ad

        def f(p):
            return np.sum(p["a"] * Undefined)

        ad.grad(f)({"a": np.ones(2)})
    """))
    frames = _frames(stderr)
    package = str(Path(autodiff.__file__).parent)
    assert len([frame for frame in frames if frame.startswith(package)]) == 1, stderr
    assert "UndefinedNameError: model.py:5: name 'Undefined' is not defined" in stderr


# ----- hints name functions that exist -----

_NAMED = re.compile(r"\b(np|numpy|math)((?:\.[A-Za-z_][A-Za-z_0-9]*)+)\(")
_MODULES = {"np": np, "numpy": np, "math": __import__("math")}


def _missing(text: str) -> list[str]:
    """The functions ``text`` names (``np.linalg.solve(``) that do not exist."""
    missing = []
    for match in _NAMED.finditer(text):
        obj = _MODULES[match.group(1)]
        for part in match.group(2).split(".")[1:]:
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(match.group(0))
                break
    return missing


def _texts_in_the_package():
    """Every string written in autodiff's source, an f-string's fixed parts joined with
    its fields marked, and where."""
    for path in Path(autodiff.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield path, node.lineno, node.value
            elif isinstance(node, ast.JoinedStr):
                yield path, node.lineno, "".join(
                    part.value if isinstance(part, ast.Constant) else "{field}"
                    for part in node.values)


def test_every_function_a_message_or_hint_names_exists():
    missing = [(str(path), line, name) for path, line, text in _texts_in_the_package()
               for name in _missing(text)]
    assert not missing, missing


def test_the_hint_of_an_unknown_method_names_a_numpy_function_only_when_it_exists():
    for name in ("normal", "uniform", "integers", "compress", "exp", "cumsum", "tofile"):
        hint = _method_hint(name)
        assert not _missing(hint), hint
        if f"np.{name}(" in hint:
            assert hasattr(np, name)


def test_the_hint_for_a_random_generators_method_names_no_numpy_function(tmp_path):
    stderr = _run(tmp_path, textwrap.dedent("""\
        import numpy as np
        import autodiff as ad

        def f(mu, rng):
            return np.sum(rng.normal(mu, 1.0))

        ad.grad(f)(np.ones(3), np.random.default_rng(0))
    """))
    assert "np.normal" not in stderr
    hint = stderr.split("hint: ")[-1]
    assert not _missing(hint), hint
