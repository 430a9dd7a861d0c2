"""Every script in examples/ runs to the end and prints what it promises.

Each runs as a newcomer would run it, ``python examples/<name>.py`` from the
repository's root, in a process of its own, with ``--fast`` (less data, fewer
epochs) and ``--save-dir`` pointing at a temporary directory for its figures.
Scripts that take no options ignore them. They import the installed autodiff, as a
user's script would (the README's test command installs it).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if p.name != "__init__.py")

# Lines each script must print: a result and a piece of generated source.
EXPECTED = {
    "quickstart.py": ["def mean_of_squares_grad(", "[[4.5 4.5]\n [4.5 4.5]]",
                      "def difference_of_squares_grad(", "df/dx = [2. 4. 6.]",
                      "df/dy = [-1.  2. -8.]", "df/da = 2.0 (b), df/db = 4.0 (a + 1)",
                      "def loss_value_and_grad(", "max abs error", "step 200: loss"],
    "train_regression.py": ["loss = 1.302221", "dW1 =", "db2 =\n[-2.282298]",
                            "step 10: loss", "train loss: first", "final train loss"],
    "control_flow.py": ["def doubling_grad(", "for _ in range(count):",
                        "the loop doubles 9 times, so d sum / dx = 2**9 = 512",
                        "autodiff:            [512. 512. 512.]", "h_stack.append(h)",
                        "h_stack.pop()", "gradient check of rnn_loss", "def huber_grad(",
                        "huber'(+0.3) = +0.3000   (quadratic branch; gradient check passed)",
                        "huber'(-2.5) = -1.0000   (linear branch; gradient check passed)",
                        "gradient check of huber_loss"],
    "three_ways.py": ["depth  SymPy ops  with CSE  autodiff lines", "SymPy's derivative at depth 6",
                      "against the symbolic (SymPy)", "reverse mode (autodiff)",
                      "complex step"],
    "vjp_nonscalar.py": ["that is 2**9 * x", "def doubling_vjp(", "for _ in range(count):",
                         "def polar_to_cartesian_vjp(", "seed (1, 0): dr = 0.877583"],
    "custom_gradient.py": ["NumPy's rounding passes no gradient: [0. 0. 0.]",
                           "def quantized_loss_grad(", "round_ste(", "t1 = softplus(x)",
                           "quantized weights after training: [ 0.5  -1.25  0.75]",
                           "def softplus_loss_grad("],
    "hessian.py": ["worked out by hand", "def rosenbrock_grad_hvp(", "Newton step 8: x = [1. 1.]"],
    "layer_library.py": ["agrees with the hand-written backward pass: True",
                         "gradient check of network_loss", "): passed",
                         "bn_param['running_mean'] = ", "np.random.seed(1)"],
    "pytorch_style.py": ["the gradient is a model too: Sequential with layers ['Linear', "
                         "'BatchNorm1d', 'Tanh', 'Dropout', 'Linear']", "gradient check: passed",
                         "step 150: loss", "evaluation loss (running statistics, no dropout)"],
    "train_optimizer.py": ["Adam(lr=0.01, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0)",
                           "the state holds Adam's moments in the parameters' structure",
                           "params['W1'] is the array it was, updated in place: True",
                           "result.x is a dict again: ['W1', 'W2', 'b1', 'b2']"],
    "model_class.py": ["def loss_value_and_grad(self, x, t):", "self_layers_0_W = self_layers_0.W",
                       "(in MLP.predict)", "(in MLP.penalty)", "dself = with_fields(self, ",
                       "gradient: MLP object, name = None", "self.layers[2].b", "step 300: loss",
                       "trained: MLP object named 'sine fit'",
                       "largest difference from MLP.loss's gradient: 0.0"],
}


def run_example(path: Path, save_dir: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, str(path.relative_to(ROOT)), "--fast", "--save-dir", str(save_dir)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


def test_every_example_has_expected_output():
    assert {p.name for p in EXAMPLES} <= set(EXPECTED), (
        "add the new example's key output to EXPECTED")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    result = run_example(path, tmp_path)
    assert result.returncode == 0, f"{path.name} failed:\n{result.stderr}"
    for line in EXPECTED.get(path.name, []):
        assert line in result.stdout, f"{path.name} did not print {line!r}:\n{result.stdout}"


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    """One fast run of train_regression.py, and the directory its figure went to."""
    save_dir = tmp_path_factory.mktemp("figures")
    result = run_example(ROOT / "examples" / "train_regression.py", save_dir)
    assert result.returncode == 0, result.stderr
    return result.stdout, save_dir


def test_training_lowers_the_loss(training):
    stdout, _ = training
    match = re.search(r"train loss: first ([\d.]+), last ([\d.]+)", stdout)
    assert match, stdout
    first, last = map(float, match.groups())
    assert last < first / 5, stdout


def test_training_saves_the_loss_curve(training):
    pytest.importorskip("matplotlib")
    stdout, save_dir = training
    figure = save_dir / "loss_curve.png"
    assert f"loss curve saved to {figure}" in stdout
    assert figure.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_examples_need_no_checkout(tmp_path):
    # `autodiff demo` runs an example with runpy from an installed package, in
    # whatever directory the user is in: nothing may depend on the repository's
    # layout, and figures go to the current directory by default.
    script = ("import runpy, sys; sys.argv = ['train_regression', '--fast']; "
              f"runpy.run_path({str(ROOT / 'examples' / 'train_regression.py')!r}, "
              "run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    if "matplotlib is not installed" not in result.stdout:
        assert (tmp_path / "loss_curve.png").is_file()
