"""benchmarks/loops.py runs, checks every gradient against a right hand adjoint, and reports.

No timing is asserted, nor is any peer or numba needed: the report's run
leaves them out.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
MODULES = (
    "array_cases", "cases", "checking", "implementations", "loop_cases", "loop_peers",
    "loop_programs", "loops", "machine", "peers", "report", "scalar_cases", "scaling",
    "targets", "threads", "timing",
)
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "XLA_FLAGS")


@pytest.fixture
def loops(monkeypatch):
    """benchmarks/loops.py as a module, its thread settings and paths undone afterwards."""
    for name in THREAD_VARIABLES:  # loops.py sets those left unset: restored on teardown
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # sys.path is restored whole on teardown
    import loops as module

    yield module
    for name in MODULES:
        sys.modules.pop(name, None)


def test_quick_run_prints_and_writes_the_report(tmp_path):
    output = tmp_path / "LOOPS.md"
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / "loops.py"), "--quick", "--no-peers",
         "--only", "autodiff", "--output", str(output)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    text = output.read_text(encoding="utf-8")
    assert completed.stdout.strip() == text.strip()
    for title in ("## Machine", "## Time ÷ hand adjoint", "## Gradient ÷ f",
                  "## Time per call (median)", "## Checkpoint budgets", "## Notes"):
        assert title in text
    assert "| loop | f | hand | autodiff |" in text
    rows = re.findall(r"^\| (oscillators|tanh RNN|RK4 pendulum|while to 1e-12)[^|]* \| "
                      r"([^|]+) \| ([^|]+) \| ([^|]+) \|$", text, re.MULTILINE)
    main_rows = rows[:4]
    assert [row[0] for row in main_rows] == [
        "oscillators", "tanh RNN", "RK4 pendulum", "while to 1e-12"]
    for _, f_cell, hand_cell, ours_cell in main_rows:
        assert re.fullmatch(r"\d+\.\d\d× \(\S+ \S*B\)", f_cell)
        assert re.fullmatch(r"\S+ [mµn]?s \(\S+ \S*B\)", hand_cell)
        assert re.fullmatch(r"\d+\.\d\d× \(\S+ \S*B\)", ours_cell)
    assert "Memory measured by" in text
    assert "python benchmarks/loops.py --quick --no-peers --only autodiff" in text


def test_hand_adjoints_agree_with_central_differences(loops):
    """The reference every gradient is checked against, on small instances, in float64."""
    import loop_cases
    import loop_programs as programs

    problems = [
        (programs.oscillators, programs.oscillators_hand_grad, ("x", "v", "k"),
         programs.oscillators_args(6, 40)()),
        (loop_cases.rnn, loop_cases.rnn_hand_grad, ("W", "U", "h"),
         loop_cases.rnn_args(12, 3, 5)()),
        (programs.pendulum, programs.pendulum_hand_grad, ("theta", "omega", "g"),
         programs.pendulum_args(40)()),
        (programs.kepler, programs.kepler_hand_grad, ("M", "e"), programs.kepler_args(7)()),
    ]
    assert {hand for _, hand, _, _ in problems} == {
        case.hand_grad for case in loops.loop_cases(quick=True)}
    for func, hand_grad, wrt, args in problems:
        expected = ad.numeric_grad(func, *args, wrt=wrt, method="central")
        actual = hand_grad(*args)
        assert len(actual) == len(wrt)
        scale = max(float(np.max(np.abs(fd))) for fd in expected)
        for name, fd, hand in zip(wrt, expected, actual, strict=True):
            assert np.shape(hand) == np.shape(fd), name
            np.testing.assert_allclose(hand, fd, rtol=1e-6, atol=1e-8 * scale,
                                       err_msg=f"{hand_grad.__name__}, d/d{name}")


def test_hand_adjoints_do_not_change_their_inputs(loops):
    for case in loops.loop_cases(quick=True):
        args = case.make_args()
        case.hand_grad(*args)
        for before, after in zip(case.make_args(), args, strict=True):
            np.testing.assert_array_equal(before, after, err_msg=case.name)


@pytest.mark.parametrize(("key", "flavour"), [
    (key, flavour) for key in ("oscillators", "rnn", "pendulum", "kepler") for flavour in
    ("autodiff", "jit=True")])
def test_our_gradients_of_the_loops_agree_with_the_hand_adjoints(loops, key, flavour):
    case = next(case for case in loops.loop_cases(quick=True) if case.key == key)
    column = loops.build_and_check(case, flavour, case.hand_grad(*case.make_args()))
    assert column.problem is None and column.function is not None


@pytest.mark.parametrize("column", ["JAX scan", "JAX + checkpoint", "PyTorch"])
def test_the_peer_programs_agree_with_the_hand_adjoints(loops, column):
    """The lax.scan programs and the eager PyTorch runs, where installed, to rtol 1e-6."""
    pytest.importorskip("torch" if column == "PyTorch" else "jax")
    for case in loops.loop_cases(quick=True):
        checked = loops.build_and_check(case, column, case.hand_grad(*case.make_args()))
        assert checked.problem is None, (case.name, checked.problem)


def test_refusals_and_wrong_gradients_are_cells_not_timings(loops, monkeypatch):
    case = next(case for case in loops.loop_cases(quick=True) if case.key == "pendulum")
    expected = case.hand_grad(*case.make_args())

    def refuse(*args, **kwargs):
        raise ad.AutodiffError("cannot compile this\nsecond line")

    monkeypatch.setattr(loops.ad, "grad", refuse)
    refused = loops.build_and_check(case, loops.OURS_NUMBA, expected)
    assert refused.problem == "refused: cannot compile this"
    assert refused.function is None

    monkeypatch.setattr(loops.ad, "grad", lambda f, wrt, **options: lambda *a: (1.0, 2.0, 3.0))
    wrong = loops.build_and_check(case, loops.OURS, expected)
    assert (wrong.problem, wrong.function) == (loops.WRONG, None)

    # a peer is held to 1e-6, ours to 1e-9
    nearly = tuple(g * (1 + 1e-8) for g in expected)
    monkeypatch.setattr(loops, "builder", lambda name, case, checkpoint=None: lambda *a: nearly)
    assert loops.build_and_check(case, loops.PYTORCH, expected).problem is None
    assert loops.build_and_check(case, loops.OURS, expected).problem == loops.WRONG


def test_checkpoint_budgets_are_measured_when_ad_grad_takes_them(loops, monkeypatch):
    """The keyword is passed as a byte budget; budgets run only when ad.grad has it."""
    assert loops.checkpoint_budget(400_000_000, 2) == "200MB"
    assert loops.checkpoint_budget(400_000_000, 100) == "4000KB"
    assert loops.checkpoint_budget(1_000, 100) == "1KB"
    given = []
    real_grad = ad.grad

    def grad(f, wrt, checkpoint=None, **options):
        given.append(checkpoint)
        return real_grad(f, wrt=wrt, **options)

    def weigh(jobs, quick):
        for _, column in jobs:
            column.extra_bytes = 1_000_000

    monkeypatch.setattr(loops.ad, "grad", grad)
    monkeypatch.setattr(loops, "weigh", weigh)
    assert loops.has_checkpoint_keyword()
    case = next(case for case in loops.loop_cases(quick=True) if case.key == "rnn")
    settings = loops.Settings(samples=1, target_ns=1_000_000, quick=True, peers=False,
                              output=None, only=("autodiff",))
    result = loops.run_loop(case, settings, peer_columns=[])
    result.columns[loops.OURS].extra_bytes = 50_000_000
    loops.run_budgets(result, settings)
    assert given[-3:] == ["25MB", "5000KB", "500KB"]
    assert [c.problem for c in result.budgets] == [None] * 3
    assert all(c.to_unbudgeted is not None for c in result.budgets)
    table = loops.budget_section([result], enabled=True)
    assert 'checkpoint="25MB"' in table and "1 MB" in table
    assert "Skipped" in loops.budget_section([result], enabled=False)
