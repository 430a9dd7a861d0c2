"""``checkpoint=``: a loop's reverse sweep from states kept within a budget
(transforms/checkpoint.py, ops/checkpoints.py).

The checkpointed derivative must give the plain derivative's numbers (both checked
against central differences), for every number of snapshots, every kind of loop, and
every transform that takes ``checkpoint=``; memory is measured with tracemalloc, which
counts NumPy's arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import AutodiffError
from autodiff import CheckpointWarning
from tests.helpers import check_against_finite_differences
from tests.transforms.test_lean_tapes import extra_peak, oscillators


def _same(ours, plain, rtol=1e-12):
    for a, b in zip(ad.tree.leaves(ours), ad.tree.leaves(plain)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-300)


def _oscillator_args(n=4, steps=13):
    rng = np.random.default_rng(0)
    x, v, k = rng.standard_normal((3, n))
    return x, v, 1.0 + k * k, 0.3, 0.05, steps


@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, 13, 14, 50])
def test_every_number_of_snapshots_gives_the_plain_gradient(snapshots):
    args = _oscillator_args()
    plain = ad.grad(oscillators, wrt=(0, 1, 2))(*args)
    _same(ad.grad(oscillators, wrt=(0, 1, 2), checkpoint=snapshots)(*args), plain)


def test_the_plain_gradient_is_right():
    check_against_finite_differences(oscillators, list(_oscillator_args()), wrt=(0, 1, 2))


def test_the_generated_code_says_which_schedule_and_keeps_states():
    source = ad.grad(oscillators, wrt=(0, 1, 2), checkpoint="200MB").source
    assert "[checkpointed within '200MB': binomial schedule (Revolve)]" in source
    assert "checkpoints = Checkpoints(" in source and "snapshot_count('200MB'" in source
    assert "checkpoints.keep(" in source and "checkpoints.restore(" in source
    assert "# recomputed: line" in source
    compile(source, "<checkpointed>", "exec")


def test_a_budget_bounds_the_memory_of_the_reverse_sweep():
    rng = np.random.default_rng(1)
    n, steps = 20_000, 200
    args = (rng.standard_normal(n), rng.standard_normal(n), 1 + rng.random(n), 0.1, 0.01,
            steps)
    plain = ad.grad(oscillators, wrt=(0, 1, 2))
    state = 2 * 8 * n  # x and v
    budgeted = ad.grad(oscillators, wrt=(0, 1, 2), checkpoint=f"{10 * state / 1e6}MB")
    _same(budgeted(*args), plain(*args))
    tape = steps * 8 * n
    assert extra_peak(plain, *args) > tape
    assert extra_peak(budgeted, *args) < 10 * state + 12 * 8 * n  # ten states and a step's values
    by_count = ad.grad(oscillators, wrt=(0, 1, 2), checkpoint=5)
    assert extra_peak(by_count, *args) < 5 * state + 12 * 8 * n


def converge(x, w):
    step = 0
    while step < 4 or np.max(np.abs(x)) > 10.0:
        x = x * (w * w) + 0.1
        step += 1
        if step > 40:
            break
    return np.sum(x)


def early_exit(x, w, steps):
    for i in range(steps):
        x = np.sin(x * w) + 0.1 * i
        if np.max(x) > 0.9:
            break
    return np.sum(x * x)


def nested(x, w, outer, inner):
    for _ in range(outer):
        for _ in range(inner):
            x = np.sin(x * w)
        x = x + np.tanh(w)
    return np.sum(x)


def pendulum(theta, omega, g, dt, steps):
    def f(th, om):
        return om, -g * math.sin(th)
    for _ in range(steps):
        k1 = f(theta, omega)
        k2 = f(theta + 0.5 * dt * k1[0], omega + 0.5 * dt * k1[1])
        theta = theta + dt * k2[0]
        omega = omega + dt * k2[1]
    return theta


def rnn(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h)


def strided(x, w, n):
    for t in range(n - 1, 0, -2):  # down, two at a time: the index's values matter
        x = np.sin(x * w * t)
    for t in reversed(range(1, n)):
        x = np.sin(x + w / t)
    for t in reversed(range(1, n, 3)):
        x = x * np.cos(w * t)
        if np.max(x) > 5.0:
            break
    return np.sum(x)


def shape_grows(v, w, steps):
    total = 0.0  # a number, then an array: the state's shape changes after a step
    for _ in range(steps):
        total = total + w * v
        v = v * 0.9
    return np.sum(total * total)


def in_branch_and_twice(x, w, steps, flag):
    if flag:
        for _ in range(steps):
            x = np.cos(x) * w
    for _ in range(steps):
        x = x * w + np.sin(x)
    return np.sum(x)


def zero_steps(x, w, steps):
    for _ in range(steps):
        x = x * w
    return np.sum(x * w)


_RNG = np.random.default_rng(2)
PROGRAMS = {
    "while": (converge, [np.array([0.5, 2.0]), np.array([0.9, 1.1])], (0, 1)),
    "break": (early_exit, [np.array([0.1, 0.3]), np.array([0.7, 0.9]), 12], (0, 1)),
    "nested": (nested, [np.array([0.2, -0.4]), np.array([0.3, 0.6]), 5, 3], (0, 1)),
    "floats": (pendulum, [0.8, 0.1, 9.81, 0.01, 17], (0, 1, 2, 3)),
    "rnn": (rnn, [_RNG.standard_normal((3, 3)) / 2, _RNG.standard_normal((3, 2)),
                  _RNG.standard_normal((9, 2)), _RNG.standard_normal(3)], (0, 1, 3)),
    "strided": (strided, [np.array([0.2, 0.5]), np.array([0.3, 0.1]), 9], (0, 1)),
    "shape grows": (shape_grows, [np.array([[1.0, 2.0, 3.0]]), np.array([[0.5], [1.5]]), 6],
                    (0, 1)),
    "two loops": (in_branch_and_twice, [np.array([0.2, 0.5]), np.array([0.9, 0.8]), 7, True],
                  (0, 1)),
    "zero steps": (zero_steps, [np.array([0.2, 0.5]), np.array([0.9, 0.8]), 0], (0, 1)),
}


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("snapshots", [1, 3])
def test_loops_of_every_kind(name, snapshots):
    f, args, wrt = PROGRAMS[name]
    plain = check_against_finite_differences(f, args, wrt=wrt, forward=False)
    _same(ad.grad(f, wrt=wrt, checkpoint=snapshots)(*args), plain)
    _same(ad.grad(f, wrt=wrt, checkpoint="1KB", jit=True)(*args), plain)


def test_value_and_grad_and_vjp_take_a_budget():
    args = _oscillator_args()
    value, gradient = ad.value_and_grad(oscillators, wrt=(0, 1), checkpoint=2)(*args)
    assert value == oscillators(*args)
    _same(gradient, ad.grad(oscillators, wrt=(0, 1))(*args))

    def trajectory(x, w, steps):
        for _ in range(steps):
            x = np.tanh(x * w)
        return x

    x, w = np.array([0.3, -0.2]), np.array([1.1, 0.7])
    seed = np.array([1.0, -2.0])
    _same(ad.vjp(trajectory, wrt=(0, 1), checkpoint=2)(x, w, 8, seed),
          ad.vjp(trajectory, wrt=(0, 1))(x, w, 8, seed))


def test_structured_parameters():
    def model(params, xs):
        h = np.zeros(2)
        for t in range(xs.shape[0]):
            h = np.tanh(params["W"] @ h + params["U"] * xs[t])
        return np.sum(h * h)

    params = {"W": np.array([[0.5, -0.2], [0.1, 0.4]]), "U": np.array([0.3, -0.6])}
    xs = np.linspace(-1, 1, 11)
    _same(ad.grad(model, checkpoint=3)(params, xs), ad.grad(model)(params, xs))


def test_statements_for_their_effects_run_once(capsys):
    def logged(x, steps):
        for i in range(steps):
            print("step", i)
            x = np.sin(x)
        return np.sum(x)

    ad.grad(logged, checkpoint=2)(np.array([0.5]), 6)
    assert capsys.readouterr().out.count("step") == 6


def noisy(x, steps):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = x + rng.normal(size=x.shape) * x
    return np.sum(x)


def history(x, steps):
    seen = []
    for _ in range(steps):
        x = np.sin(x)
        seen.append(x)
    return sum(np.sum(s) for s in seen)


@pytest.mark.parametrize("f, why", [
    (noisy, "it reads a call that, run again, may give another result"),
    (history, "it changes a list from one step to the next")])
def test_a_loop_whose_steps_cannot_run_again_is_taped_with_a_warning(f, why):
    with pytest.warns(CheckpointWarning, match=why) as caught:
        gradient = ad.grad(f, checkpoint=3)
    assert caught[0].filename == __file__
    assert "compute that before the loop" in str(caught[0].message)
    x = np.array([0.3, 0.6])
    _same(gradient(x, 4), ad.grad(f)(x, 4))
    check_against_finite_differences(f, [x, 4], forward=False)


@pytest.mark.parametrize("budget, why", [
    (0, "at least 1"), (-3, "at least 1"), ("lots", "a number and a unit"),
    (2.5, "neither a whole number"), ("0MB", "more than 0")])
def test_a_budget_that_is_not_one_is_refused_when_the_transform_is_made(budget, why):
    with pytest.raises(AutodiffError, match=why) as caught:
        ad.grad(oscillators, checkpoint=budget)
    assert '"200MB"' in str(caught.value)


def test_numba_is_refused_with_a_budget():
    with pytest.raises(AutodiffError, match="numba cannot compile"):
        ad.grad(oscillators, checkpoint=3, jit="numba")


def test_a_derivative_of_a_checkpointed_derivative_is_refused_not_zero():
    inner = ad.grad(oscillators, checkpoint=2)

    def outer(x, v, k):
        return np.sum(inner(x, v, k, 0.3, 0.05, 6) ** 2)

    x, v, k, *_ = _oscillator_args()
    for transform in (ad.grad, ad.hvp):
        with pytest.raises(AutodiffError, match="a derivative of it cannot follow") as caught:
            transform(outer)(x, v, k, *([x] if transform is ad.hvp else []))
        assert "for _ in range(steps):\n" in str(caught.value) + "\n"
        assert "[checkpointed" not in str(caught.value)
