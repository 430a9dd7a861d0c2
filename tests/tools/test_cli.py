"""The ``autodiff`` command line, run as a user runs it: ``python -m autodiff ...`` in a
process of its own, on small files written to a temporary directory."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autodiff.codegen.highlight import highlight, strip_ansi, supports_color
from autodiff.tools.cli import main

ROOT = Path(__file__).resolve().parents[2]

MODEL = """
import numpy as np


def loss(x, W, scale=2.0):
    # a tiny model
    h = np.tanh(x @ W)
    return scale * np.sum(h ** 2)


def helper(x):
    return x
"""

# Parameters in a dict: compiled for the structure the --shape items give.
STRUCTURED = """
import numpy as np


def dict_loss(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)
"""

# A custom rule that is deliberately wrong: the check must catch it.
WRONG = """
import numpy as np
import autodiff as ad


@ad.custom_grad
def square(x):
    return x * x


@square.defvjp
def _(g, ans, x):
    return 3.0 * g * x


def loss(x):
    return np.sum(square(x))
"""


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL))
    (tmp_path / "wrong.py").write_text(textwrap.dedent(WRONG))
    (tmp_path / "structured.py").write_text(textwrap.dedent(STRUCTURED))
    (tmp_path / "broken.py").write_text("def f(x)\n    return x\n")
    return tmp_path


def run(cwd: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # The installed autodiff, as a user runs it (the README's test command installs it):
    # examples/ is importable as autodiff.examples only there.
    env.pop("NO_COLOR", None)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "autodiff", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


# ----- grad -----


def test_grad_prints_the_reverse_and_forward_derivatives(workdir):
    reverse = run(workdir, "grad", "model.py:loss", "--wrt", "x,1")
    assert reverse.returncode == 0, reverse.stderr
    assert "def loss_grad(x, W" in reverse.stdout
    assert "# line 7: h = np.tanh(x @ W)" in reverse.stdout
    assert "return dx, dW" in reverse.stdout
    assert "\x1b[" not in reverse.stdout  # captured output is not a terminal

    forward = run(workdir, "grad", "model.py:loss", "--mode", "fwd")
    assert forward.returncode == 0, forward.stderr
    assert "def loss_jvp(x, W" in forward.stdout
    assert "# tangent of line 7" in forward.stdout

    standalone = run(workdir, "grad", "model.py:loss", "--wrt", "x,1", "--standalone")
    assert standalone.returncode == 0, standalone.stderr
    assert standalone.stdout.startswith('"""The derivative of ') and "loss" in (
        standalone.stdout.splitlines()[0])
    assert "import numpy as np" in standalone.stdout
    assert "autodiff" not in standalone.stdout.split("def loss_grad")[1]
    assert "at_user_line" not in standalone.stdout


def test_grad_and_check_of_a_dict_of_parameters(workdir):
    shapes = ["--shape", "params.W=3,2", "--shape", "params.b=2", "--shape", "x=4,3"]
    refused = run(workdir, "grad", "structured.py:dict_loss", "--wrt", "params")
    assert refused.returncode == 2 and "--shape params.W=3,4" in refused.stderr
    reverse = run(workdir, "grad", "structured.py:dict_loss", "--wrt", "params", *shapes)
    assert reverse.returncode == 0, reverse.stderr
    assert "params_W = params['W']" in reverse.stdout
    assert "dparams = {'W': dparams_W, 'b': dparams_b}" in reverse.stdout
    forward = run(workdir, "grad", "structured.py:dict_loss", "--mode", "fwd", *shapes)
    assert "params_W_dot = tangent['W']" in forward.stdout, forward.stderr
    checked = run(workdir, "check", "structured.py:dict_loss", *shapes)
    assert checked.returncode == 0, checked.stderr
    assert "params['W']" in checked.stdout and "params['b']" in checked.stdout


def test_grad_colors_only_on_request(workdir):
    plain = run(workdir, "grad", "model.py:loss", "--color", "never")
    colored = run(workdir, "grad", "model.py:loss", "--color", "always")
    assert colored.returncode == 0, colored.stderr
    assert "\x1b[" in colored.stdout and "\x1b[" not in plain.stdout
    assert strip_ansi(colored.stdout) == plain.stdout
    comment = next(line for line in colored.stdout.splitlines() if "# line 7" in line)
    assert comment.lstrip().startswith("\x1b[")


def test_color_only_on_a_terminal_that_wants_it():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert supports_color(Terminal(), {"TERM": "xterm"})
    assert not supports_color(Terminal(), {"TERM": "xterm", "NO_COLOR": ""})
    assert not supports_color(Terminal(), {"TERM": "dumb"})
    assert not supports_color(io.StringIO(), {"TERM": "xterm"})


def test_highlight_keeps_the_text():
    source = 'def f(x):\n    """Two\n    lines."""\n    return x.sum() + 1.5  # line 3: why\n'
    colored = highlight(source)
    assert strip_ansi(colored) == source
    assert "\x1b[1;36m# line 3: why\x1b[0m" in colored
    assert ".sum()" in colored  # a method, not the builtin sum: left plain
    assert highlight('s = """unfinished\n') == 's = """unfinished\n'  # does not tokenize


# ----- graph -----


def test_graph_as_dot_text_and_file(workdir):
    printed = run(workdir, "graph", "model.py:loss")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith('digraph "loss" {')
    assert "tanh" in printed.stdout

    written = run(workdir, "graph", "model.py:loss", "--derivative", "-o", "grad.dot")
    assert written.returncode == 0, written.stderr
    dot = (workdir / "grad.dot").read_text()
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    assert dot != printed.stdout


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graph_as_svg(workdir):
    result = run(workdir, "graph", "model.py:loss", "-o", "loss.svg")
    assert result.returncode == 0, result.stderr
    assert "<svg" in (workdir / "loss.svg").read_text()


def test_graph_without_graphviz_says_what_to_do(workdir):
    empty = workdir / "no_programs"
    empty.mkdir()
    result = run(workdir, "graph", "model.py:loss", "-o", "loss.png", path=str(empty))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "the Graphviz 'dot' program is not installed" in result.stderr
    assert "write loss.dot instead, or install graphviz" in result.stderr
    assert not (workdir / "loss.png").exists()


# ----- check and compare -----


def test_check_passes_with_every_argument(workdir):
    result = run(workdir, "check", "model.py:loss", "--shape", "x=3,4", "--shape", "W=4,2",
                 "--wrt", "all", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert "passed" in result.stdout
    for row in ("x ", "W ", "scale"):
        assert row in result.stdout


def test_check_fails_on_a_wrong_custom_rule(workdir):
    result = run(workdir, "check", "wrong.py:loss", "--shape", "x=5")
    assert result.returncode == 1
    assert "FAILED" in result.stdout and "finite diff." in result.stdout
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("autodiff: error: wrong.py:")
    assert "gradient check failed for x" in result.stderr


def test_compare_prints_the_table(workdir):
    result = run(workdir, "compare", "model.py:loss", "--shape", "x=3,4", "--shape", "W=4,2")
    assert result.returncode == 0, result.stderr
    for method in ("symbolic (SymPy)", "central differences", "reverse mode (autodiff)"):
        assert method in result.stdout


def test_compare_plots(workdir):
    pytest.importorskip("matplotlib")
    (workdir / "vector.py").write_text("import numpy as np\n\n\ndef f(x):\n"
                                       "    return np.sum(np.sin(x) ** 2)\n")
    result = run(workdir, "compare", "vector.py:f", "--shape", "x=4", "--plot", "out.png")
    assert result.returncode == 0, result.stderr
    assert "wrote out.png" in result.stdout
    assert (workdir / "out.png").read_bytes().startswith(b"\x89PNG")


# ----- demo -----


def test_demo_lists_and_runs_the_examples(tmp_path):
    listed = run(tmp_path, "demo", "--list")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert "quickstart" in names
    assert {f"{name}.py" for name in names} == {
        p.name for p in (ROOT / "examples").glob("*.py") if p.name != "__init__.py"}

    demo = run(tmp_path, "demo", "quickstart", "--fast")
    assert demo.returncode == 0, demo.stderr
    assert "def loss_value_and_grad(" in demo.stdout


# ----- errors: one line, the right exit code -----


@pytest.mark.parametrize("args, code, message", [
    (["grad", "missing.py:f"], 2, "no such file: 'missing.py'"),
    (["grad", "model.py:nope"], 2, ("model.py has no function 'nope' "
                                   "(model.py defines loss, helper)")),
    (["grad", "model.py"], 2, ("name the function after the file, as in model.py:loss "
                              "(model.py defines loss, helper)")),
    (["grad", "broken.py:f"], 2, "broken.py:1: syntax error"),
    (["grad", "model.py:loss", "--wrt", "y"], 2, "loss(x, W, scale) has no argument 'y'"),
    (["check", "model.py:loss", "--shape", "x=3,a"], 2, "bad --shape 'x=3,a': 'a' is not"),
    (["check", "model.py:loss", "--shape", "z=3"], 2,
     "--shape z=3: loss(x, W, scale) has no argument 'z'"),
    (["check", "model.py:loss", "--shape", "x=3,4", "--shape", "W=5,2"], 1,
     "model.py:7: ValueError: matmul"),
    (["graph", "model.py:loss", "-o", "graph.pdf"], 2, "cannot write 'graph.pdf'"),
    (["demo", "no_such_example"], 2, "no example 'no_such_example'; available: "),
], ids=["missing file", "unknown function", "missing FUNC", "syntax error", "unknown wrt",
        "bad shape", "shape of unknown argument", "error in the user's code", "unknown format",
        "unknown example"])
def test_errors_are_one_line(workdir, args, code, message):
    result = run(workdir, *args)
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("autodiff: error: ")
    assert message in result.stderr


def test_an_autodiff_error_keeps_its_location_and_hint(workdir):
    (workdir / "unsupported.py").write_text(
        "def f(x):\n    with open(x) as h:\n        return x\n")
    result = run(workdir, "grad", "unsupported.py:f")
    assert result.returncode == 1
    assert result.stderr.startswith("autodiff: error: unsupported.py:2: 'with' statements")
    assert "Traceback" not in result.stderr


# ----- help -----


def test_help_of_the_module():
    result = run(ROOT, "--help")
    assert result.returncode == 0 and "grad" in result.stdout and "example:" in result.stdout


@pytest.mark.parametrize("command", ["grad", "graph", "check", "compare", "demo"])
def test_help_of_every_command(command, capsys):
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert f"usage: autodiff {command}" in text
    assert "example:\n  autodiff " + command in text
