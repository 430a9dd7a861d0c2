"""The benchmark harness runs, refuses wrong gradients, and writes its report.

Nothing here asserts a timing: the figures depend on the machine. No peer
(JAX, PyTorch, ...) and no numba is needed; `--only autodiff` leaves them out.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
HARNESS_MODULES = (
    "array_cases", "cases", "checking", "implementations", "loop_cases", "machine", "peers",
    "report", "scalar_cases", "scaling", "targets", "threads", "timing",
)


@pytest.fixture
def harness(monkeypatch):
    """The benchmark modules, importable by their plain names for this test only."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    yield
    for name in HARNESS_MODULES:
        sys.modules.pop(name, None)


def test_quick_run_prints_and_writes_the_report(tmp_path):
    output = tmp_path / "RESULTS.md"
    completed = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--only", "autodiff",
         "--cases", r"^poly|rosenbrock n=10$", "--output", str(output)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    for text in (completed.stdout, output.read_text(encoding="utf-8")):
        assert "## Targets" in text and "## Machine" in text
        assert "| poly (float) |" in text and "| rosenbrock n=10 |" in text
        assert "| statements | generated lines |" in text  # the compile-time scaling
        assert "| user lines | generated lines |" in text  # and per user line
        assert "| loops | generated lines |" in text  # and per loop
        assert "rosenbrock n=1e3" not in text  # --cases filtered it out


def test_wrong_gradients_and_changed_inputs_are_not_timed(harness):
    from cases import Case
    from implementations import HAND, MODIFIED_INPUTS, WRONG, Implementation, first_calls

    def square_sum(x):
        return np.sum(x * x)

    def right(x):
        return 2.0 * x

    def in_place(x):
        x *= 2.0
        return x

    case = Case("square sum", square_sum, right, 0, lambda: (np.arange(3.0),))
    found = {name: Implementation(name, gradient) for name, gradient in
             ((HAND, right), ("ours", lambda x: 2.0 * x + 1e-6), ("peer", in_place))}
    first_calls(case, found)
    assert found[HAND].problem is None and found[HAND].first_call_s is not None
    assert (found["ours"].problem, found["ours"].gradient) == (WRONG, None)
    assert found["peer"].problem == MODIFIED_INPUTS


def test_a_case_autodiff_rejects_is_unsupported_not_a_crash(harness):
    from cases import Case
    from implementations import OURS, OURS_JIT, UNSUPPORTED, build_all, first_calls

    def quiet(x):
        with np.errstate(all="ignore"):
            y = np.sum(x)
        return y

    case = Case("rejected", quiet, lambda x: np.ones_like(x), 0,
                lambda: (np.arange(3.0),))
    found = build_all(case, [OURS, OURS_JIT], peers=[])
    first_calls(case, found)
    assert found[OURS].problem == found[OURS_JIT].problem == UNSUPPORTED


def test_a_jit_flavour_ad_grad_lacks_is_unsupported(harness, monkeypatch):
    """An autodiff without the `jit` keyword raises TypeError: a cell, not a crash."""
    import implementations
    from cases import CASES
    from implementations import OURS, OURS_JIT, UNSUPPORTED, build_all, first_calls

    monkeypatch.setitem(implementations.OUR_OPTIONS, OURS_JIT, {"not_a_keyword": True})
    case = next(case for case in CASES if case.name == "rosenbrock n=10")
    found = build_all(case, [OURS, OURS_JIT], peers=[])
    first_calls(case, found)
    assert found[OURS].problem is None and found[OURS].first_call_s is not None
    assert found[OURS_JIT].problem == UNSUPPORTED
    assert "TypeError" in found[OURS_JIT].details[0]


def small_problems() -> list[tuple]:
    """(function, hand-written gradient, wrt, arguments) of every case, at a small size."""
    import array_cases as arrays
    import loop_cases as loops
    import scalar_cases as scalars
    from cases import MLP_PARAMETERS, RNN_PARAMETERS, XW

    return [
        (scalars.poly, scalars.poly_hand_grad, 0, scalars.poly_args()),
        (scalars.scalar_chain, scalars.scalar_chain_hand_grad, ("x", "y"),
         scalars.scalar_chain_args()),
        (scalars.recurrence, scalars.recurrence_hand_grad, XW, scalars.scalar_loop_args(20)()),
        (scalars.leaky_recurrence, scalars.leaky_recurrence_hand_grad, XW,
         scalars.scalar_loop_args(20)()),
        (arrays.rosenbrock, arrays.rosenbrock_hand_grad, "x", arrays.rosenbrock_args(10)()),
        (arrays.p_norm, arrays.p_norm_hand_grad, "x", arrays.p_norm_args(10, 3)()),
        (arrays.mlp_loss, arrays.mlp_loss_hand_grad, MLP_PARAMETERS, arrays.mlp_args(8, 4, 6, 2)()),
        (arrays.softmax_cross_entropy, arrays.softmax_cross_entropy_hand_grad, "z",
         arrays.softmax_args(16, 5)()),
        (arrays.elementwise_chain, arrays.elementwise_chain_hand_grad, "x",
         arrays.vector_args(50)()),
        (arrays.pairwise_loss, arrays.pairwise_loss_hand_grad, ("X", "Y"),
         arrays.pairwise_args(6, 5, 3)()),
        (loops.rnn, loops.rnn_bptt_grad, RNN_PARAMETERS, loops.rnn_args(5, 3, 4)()),
        (loops.rnn, loops.rnn_hand_grad, RNN_PARAMETERS, loops.rnn_args(5, 3, 4)()),
        (loops.doubling, loops.doubling_hand_grad, "x", loops.doubling_args(20)()),
    ]


def test_hand_gradients_agree_with_finite_differences(harness):
    """The hand-written gradients are the reference every column is checked against."""
    import array_cases as arrays
    from cases import CASES

    import autodiff as ad

    problems = small_problems()
    checked = {hand for _, hand, _, _ in problems} | {arrays.mlp_dict_loss_hand_grad}  # below
    assert {case.hand_grad for case in CASES} <= checked
    for func, hand_grad, wrt, args in problems:
        expected = ad.numeric_grad(func, *args, wrt=wrt)
        actual = hand_grad(*args)
        pairs = list(zip(expected, actual)) if isinstance(wrt, tuple) else [(expected, actual)]
        scale = max(float(np.max(np.abs(fd))) for fd, _ in pairs)
        for fd, hand in pairs:
            np.testing.assert_allclose(hand, fd, rtol=1e-5, atol=1e-7 * scale,
                                       err_msg=hand_grad.__name__)


def test_the_dict_case_is_its_positional_twin(harness):
    """The network with its parameters in a dict: same loss, same gradient, keyed by name."""
    import array_cases as arrays
    from cases import CASES, MLP_PARAMETERS

    twins = [case for case in CASES if case.positional is not None]
    assert twins and all(case.positional in CASES for case in twins)
    params, x, t = arrays.mlp_dict_args(8, 4, 6, 2)()
    positional = arrays.mlp_args(8, 4, 6, 2)()
    assert arrays.mlp_dict_loss(params, x, t) == arrays.mlp_loss(*positional)
    actual = arrays.mlp_dict_loss_hand_grad(params, x, t)
    expected = dict(zip(MLP_PARAMETERS, arrays.mlp_loss_hand_grad(*positional), strict=True))
    assert list(actual) == list(expected)
    for name, gradient in expected.items():
        np.testing.assert_allclose(actual[name], gradient, rtol=1e-12, err_msg=name)


def test_the_dict_case_is_timed_against_its_twin_in_the_same_rounds(harness):
    from cases import CASES
    from implementations import (
        OURS,
        CaseResult,
        build_all,
        first_calls,
        positional_twin,
        positional_twins,
    )
    from targets import structure_targets
    from timing import medians

    case = next(case for case in CASES if case.positional is not None)
    found = build_all(case, [OURS], peers=[])
    first_calls(case, found)
    twins = positional_twins(case, found)
    assert list(twins) == [positional_twin(OURS)]
    assert twins[positional_twin(OURS)].problem is None
    # slower by 10% in half the rounds, as fast in the others: within noise of 1.0
    samples = {OURS: [1.1, 1.0, 1.1, 1.0], positional_twin(OURS): [1.0, 1.0, 1.0, 1.0]}
    [target] = structure_targets([CaseResult(case, found, medians(samples), {}, samples)],
                                 [OURS])
    assert target.measured.startswith("1.05 (interquartile 1.00 to 1.10 over 4 rounds")
    assert target.verdict == "PASS"


def test_generated_chains_grow_with_their_statement_count(harness, tmp_path):
    from scaling import measure_point

    small, large = measure_point(1, tmp_path, repeats=1), measure_point(4, tmp_path, repeats=1)
    assert small.lines < large.lines and small.build_s > 0


def test_straight_line_functions_are_timed_per_user_line(harness, tmp_path):
    from report import line_scaling_table
    from scaling import lines_source, measure_lines, per_line_growth
    from targets import line_targets

    assert lines_source(4).count(" = ") == 4  # a statement per user line
    points = [measure_lines(k, tmp_path, repeats=1) for k in (2, 5)]
    assert points[0].lines < points[1].lines and points[0].seconds_per_statement > 0
    assert per_line_growth(points) > 0
    assert "| user lines | generated lines |" in line_scaling_table(points)
    assert [t.goal.split(" ")[0] for t in line_targets(points)] == ["build", "linear:"]


def test_functions_of_loops_are_timed_per_loop(harness, tmp_path):
    from report import loop_scaling_table
    from scaling import loops_source, measure_loops

    assert loops_source(4).count("for t in range(3):") == 4
    points = [measure_loops(k, tmp_path, repeats=1) for k in (2, 5)]
    assert points[0].lines < points[1].lines and points[0].seconds_per_statement > 0
    assert "| loops | generated lines |" in loop_scaling_table(points)
