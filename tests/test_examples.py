"""Every script in examples/ runs to the end and prints what it promises.

Each runs as a newcomer would run it, ``python examples/<name>.py`` from the
repository's root, in a process of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

# Lines each script must print: a result and a piece of generated source.
EXPECTED = {
    "quickstart.py": ["def loss_value_and_grad(", "loss = ", "max |AD - finite differences|",
                      "step 200: loss"],
    "vjp_nonscalar.py": ["that is 2**9 * x", "def doubling_vjp(", "for _ in range(count):",
                         "def polar_to_cartesian_vjp(", "seed (1, 0): dr = 0.877583"],
    "custom_gradient.py": ["NumPy's rounding passes no gradient: [0. 0. 0.]",
                           "def quantized_loss_grad(", "round_ste(", "t1 = softplus(x)",
                           "quantized weights after training: [ 0.5  -1.25  0.75]",
                           "def softplus_loss_grad("],
    "hessian.py": ["worked out by hand", "def rosenbrock_grad_hvp(", "Newton step 8: x = [1. 1.]"],
}


def run_example(path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, str(path.relative_to(ROOT))], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_every_example_has_expected_output():
    assert {p.name for p in EXAMPLES} <= set(EXPECTED), (
        "add the new example's key output to EXPECTED")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    result = run_example(path)
    assert result.returncode == 0, f"{path.name} failed:\n{result.stderr}"
    for line in EXPECTED.get(path.name, []):
        assert line in result.stdout, f"{path.name} did not print {line!r}:\n{result.stdout}"
