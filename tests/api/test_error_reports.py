"""What a person sees when something goes wrong: tracebacks that end at their own
call, generated lines shown by Python's default printer, and errors inside gradient
rules named at the rule's line and the call that brought it in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules


def _run_script(tmp_path, text: str, **env) -> str:
    """The standard error of ``text`` run as a script, as a person runs one."""
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent(text))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, **env}, cwd=tmp_path,
                            check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stderr


def _frames(stderr: str) -> list[str]:
    return re.findall(r'^  File "([^"]+)"', stderr, re.MULTILINE)


COMPILE_ERROR = """\
    import numpy as np
    import autodiff as ad

    def f(x):
        with np.errstate(all="ignore"):
            y = np.sin(x)
        return y

    ad.grad(f)
"""


def test_a_compile_error_ends_at_the_users_call(tmp_path):
    stderr = _run_script(tmp_path, COMPILE_ERROR)
    frames = _frames(stderr)
    assert frames[0].endswith("model.py") and len(frames) == 2, stderr
    assert "AUTODIFF_DEBUG=1" in stderr  # the one autodiff line says how to see more
    assert stderr.rstrip().splitlines()[-3:] == [
        ("autodiff.errors.UnsupportedSyntaxError: model.py:5: 'with' statements are not "
         "supported, except 'with ad.no_grad():'"), '    with np.errstate(all="ignore"):',
        "  hint: move the block out of the function"]


def test_autodiff_debug_keeps_the_internal_frames(tmp_path):
    stderr = _run_script(tmp_path, COMPILE_ERROR, AUTODIFF_DEBUG="1")
    assert len(_frames(stderr)) > 5
    assert any("frontend" in frame for frame in _frames(stderr))


def test_a_first_jit_call_that_cannot_compile_ends_at_the_call(tmp_path):
    pytest.importorskip("numba")
    stderr = _run_script(tmp_path, """\
        import numpy as np
        import autodiff as ad

        def f(x):
            w = np.piecewise(np.arange(3.0), [np.arange(3.0) > 1.0], [2.0, 1.0])  # as it is
            return np.sum(np.tanh(x)) * w[0]

        ad.grad(f, jit="numba")(np.ones(3))
    """)
    frames = _frames(stderr)
    assert frames[0].endswith("model.py"), stderr
    assert not any("autodiff/jit.py" in frame or "specialize" in frame for frame in frames)
    assert "model.py:6: jit='numba' cannot compile" in stderr


def test_an_error_while_the_derivative_runs_shows_the_generated_line(tmp_path):
    stderr = _run_script(tmp_path, """\
        import numpy as np
        import autodiff as ad

        def f(x, W):
            return np.sum(W @ x)

        ad.grad(f)(np.ones(3), np.ones((2, 4)))
    """)
    generated = stderr.split('File "<autodiff __main__.f')[1]
    assert generated.splitlines()[1].strip() == "t1 = W @ x", stderr
    assert "model.py:5: ValueError while computing this line" in stderr


@pytest.fixture
def modules(tmp_path):
    return UserModules(tmp_path)


def test_an_error_in_a_rule_names_the_rule_and_the_call(modules):
    rules = modules("""
        import numpy as np


        def softplus_vjp(g, ans, x):
            slope = x.frobnicate
            return g * slope
    """)
    user = modules(f"""
        import numpy as np
        from {rules.__name__} import softplus_vjp


        def softplus(x):
            return np.log1p(np.exp(x))


        def loss(x):
            return np.sum(softplus(x) ** 2)
    """)
    with ad.register_gradient(user.softplus, rules.softplus_vjp), \
            pytest.raises(ad.UnknownFunctionError) as raised:
        ad.grad(user.loss)
    error = raised.value
    assert (error.filename, error.lineno) == (rules.__file__, 6)
    assert error.source_line == "slope = x.frobnicate"
    user_file = os.path.basename(user.__file__)
    assert (f"(in the gradient rule 'softplus_vjp', brought in by {user_file}:11: "
            "return np.sum(softplus(x) ** 2))") in error.message
    # the rule itself is fine once mended: the derivative runs
    assert np.isfinite(ad.grad(user.loss)(np.ones(2))).all()
