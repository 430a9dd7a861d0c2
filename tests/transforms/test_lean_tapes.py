"""A loop's backward sweep keeps only what it reads: see transforms/control.py.

- a value every iteration computes alike (``-k``, ``0.5 * dt``) leaves the loop once,
  the last iteration's, instead of being taped at each;
- a value the backward sweep reads for its shape alone (a carried value, or ``a`` of
  ``v = v + dt * a`` whose adjoint is unbroadcast to it) has its shape taped, not itself;
- what a rule computes for an operand that carries no gradient is never taped.

Each program is checked against central differences, in reverse and forward mode and to
second order, and the tape's memory against a hand-written adjoint's.
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import autodiff as ad
from autodiff.graph.ir import Node, walk
from tests.helpers import check_against_finite_differences


def oscillators(x, v, k, c, dt, steps):
    for _ in range(steps):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return np.sum(x * x) + 0.1 * np.sum(v * v)


def oscillators_hand(x, v, k, c, dt, steps):
    """The adjoint a person writes: one array kept per step."""
    xs = []
    for _ in range(steps):
        xs.append(x)
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    dx, dv, dk = 2 * x, 0.2 * v, np.zeros_like(k)
    for i in reversed(range(steps)):
        dv = dv + dt * dx
        da = dt * dv
        dk -= da * xs[i]
        dx = dx - k * da
        dv = dv - c * da
    return dx, dv, dk


def _arrays(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n), 1 + rng.random(n)


def test_the_oscillators_tape_one_array_per_step_as_the_hand_adjoint_does():
    x, v, k = _arrays()
    gradient = ad.grad(oscillators, wrt=(0, 1, 2))
    for ours, hand in zip(gradient(x, v, k, 0.3, 0.05, 40),
                          oscillators_hand(x, v, k, 0.3, 0.05, 40)):
        np.testing.assert_allclose(ours, hand, rtol=1e-12)
    source = gradient.source
    pushed = [line.split(".append(")[1].rstrip(")") for line in source.splitlines()
              if ".append(" in line]
    arrays = [name for name in pushed if "shape" not in name]
    assert arrays == ["x_1"], source  # not -k, not a, not v: their shapes at most
    assert "invariant = -k" in source  # computed in the loop, read after it
    check_against_finite_differences(oscillators, [x, v, k, 0.3, 0.05, 12], wrt=(0, 1, 2),
                                     second_order=True)


def extra_peak(function, *args) -> int:
    """The peak of NumPy's allocations while ``function(*args)`` runs."""
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_oscillators_need_no_more_memory_than_the_hand_adjoint():
    x, v, k = _arrays(n=20_000)
    args = (x, v, k, 0.1, 0.01, 100)
    gradient = ad.grad(oscillators, wrt=(0, 1, 2))
    gradient(*args)
    tape = 100 * x.nbytes
    ours, hand = extra_peak(gradient, *args), extra_peak(oscillators_hand, *args)
    assert hand > tape
    assert ours < hand + 8 * x.nbytes, (ours / tape, hand / tape)  # (a few temporaries)


def pendulum(theta, omega, g, dt, steps):
    def f(th, om):
        return om, -g * math.sin(th)
    for _ in range(steps):
        k1 = f(theta, omega)
        k2 = f(theta + 0.5 * dt * k1[0], omega + 0.5 * dt * k1[1])
        k3 = f(theta + 0.5 * dt * k2[0], omega + 0.5 * dt * k2[1])
        k4 = f(theta + dt * k3[0], omega + dt * k3[1])
        theta = theta + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        omega = omega + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return theta


def test_a_scalar_integrator_keeps_its_step_sizes_out_of_the_tape():
    gradient = ad.grad(pendulum, wrt=(0, 1, 2, 3))
    source = gradient.source
    for invariant in ("-g", "0.5 * dt", "dt / 6"):
        [name] = [line.split(" = ")[0].strip() for line in source.splitlines()
                  if line.endswith(f" = {invariant}")]
        assert f".append({name})" not in source, source
    check_against_finite_differences(pendulum, [0.8, 0.1, 9.81, 0.01, 30], wrt=(0, 1, 2, 3),
                                     second_order=True)


def test_a_value_taped_for_two_uses_is_taped_once():
    # the shape of `2 * k2[0]` is the shape of k2[0]: one tape of it, not two
    graph = ad.grad(pendulum, wrt=(0, 1, 2)).graph
    pushed = [node.args[1] for node in walk(graph.nodes)
              if isinstance(node, Node) and node.op.name == "tape_push"]
    assert len(pushed) > 10
    assert len(pushed) == len(set(pushed)), graph
    check_against_finite_differences(pendulum, [0.8, 0.1, 9.81, 0.01, 30], wrt=(0, 1, 2),
                                     second_order=True)


def noisy(x, sigma, steps):
    rng = np.random.default_rng(5)
    for _ in range(steps):
        noise = rng.normal(size=3)  # new at each step, though it reads nothing the loop sets
        x = x + sigma * noise * x
    return np.sum(x)


def test_a_draw_in_the_loop_is_taped_not_taken_for_a_constant():
    x = np.array([1.0, -0.5, 2.0])
    check_against_finite_differences(noisy, [x, 0.3, 6], wrt=(0, 1))
    assert "noise_stack" in ad.grad(noisy, wrt=(0, 1)).source


def chained_invariants(x, w, steps):
    for i in range(steps):
        scale = np.exp(-w)      # invariant
        shift = scale * scale + w  # invariant, from an invariant
        if i % 2 == 0:
            half = 0.5 * w      # invariant but inside a branch: taped when read
            x = x * half
        x = np.sin(x) * scale + shift
    return np.sum(x * x)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_invariants_built_on_invariants_and_in_branches(steps):
    x = np.array([0.3, -0.2, 0.7])
    w = np.array([0.4, 0.1, -0.3])
    check_against_finite_differences(chained_invariants, [x, w, steps], wrt=(0, 1),
                                     second_order=steps == 5)


def converge(x, w):
    step = 0
    while step < 4 or np.max(np.abs(x)) > 10.0:
        rate = w * w          # invariant in a while loop
        x = x * rate + 0.1
        step += 1
        if step > 40:
            break
    return np.sum(x)


def test_an_invariant_of_a_while_loop_with_a_break():
    check_against_finite_differences(converge, [np.array([0.5, 2.0]), np.array([0.9, 1.1])],
                                     wrt=(0, 1), second_order=True)


def nested(x, w, outer, inner):
    for _ in range(outer):
        decay = np.tanh(w)           # invariant of both loops
        for _ in range(inner):
            gain = decay * 2.0       # invariant of the inner loop, not of the outer one's body
            x = np.sin(x * gain)
        x = x + decay
    return np.sum(x)


def test_invariants_of_nested_loops():
    x = np.array([0.2, -0.4])
    w = np.array([0.3, 0.6])
    check_against_finite_differences(nested, [x, w, 3, 4], wrt=(0, 1), second_order=True)
    ad.check_grad(nested, x, w, 3, 4, wrt=(0, 1))
    np.testing.assert_allclose(ad.grad(nested, wrt=(0, 1), jit=True)(x, w, 3, 4),
                               ad.grad(nested, wrt=(0, 1))(x, w, 3, 4), rtol=1e-12)


def broadcast_state(v, w, steps):
    total = 0.0  # a number first, an array after the first step: its shape changes
    for _ in range(steps):
        total = total + w * v
        v = v * 0.9
    return np.sum(total * total)


def test_a_carried_value_whose_shape_changes_keeps_each_steps_shape():
    v = np.array([[1.0, 2.0, 3.0]])
    w = np.array([[0.5], [1.5]])
    check_against_finite_differences(broadcast_state, [v, w, 4], wrt=(0, 1),
                                     second_order=True)


WEIGHTS = np.array([0.63, 0.52])


def carried_zeros(pair, y, n):
    if n > 2:
        out2 = np.clip(pair[0], -0.8, 0.8)
    elif pair[1] > 0.965:
        out2 = np.array([[y, -0.5], [y, y], [pair[1], y]])[n - 1]
    else:
        out2 = pair[0]
    for pos, i in enumerate(range(1, 3)):
        e = np.clip(pair[0][:, None], -0.8, 0.8)
        table = np.zeros((4,))
        for j in reversed(range(4)):
            if j == 3:
                out2 = np.tanh(out2 + np.tanh(np.dot(table.reshape((1, 4)), table[..., ::-1])))
            table[j] = 0.5 * table[j - 1] + 0.5 * np.sin(0.2 * j * np.tanh(sum(r / (1 + pair[1] * pair[1]) for r in table)))
            if y > 0.813:
                break
            if j < n:
                e = e + 0.2 * np.tanh(y)
        u = y
        if pos == 0:
            break
        e += 0.2 * i * np.tanh(sum(r + r for r in table))
        out2 = out2 + 0.5 * np.tanh(u)
    return np.sum(WEIGHTS * out2)


def test_a_value_carried_out_of_a_loop_lends_its_shape_to_nothing_inside():
    # table = np.zeros((4,)) is computed alike at each step and carried out of the loop
    # once; its slot inside the loop, None before the first step, had table's shape, so
    # reverse mode over the forward mode read len(table) from it.
    pair = (np.array([1.1655016264903622, 0.3613270517335735]), 1.0653173560648224)
    y, tangent, seeds = 0.8632240821162156, ((np.array([0.3, -0.2]), 0.5), 0.7), (1.0, 1.0)
    push = ad.jvp(carried_zeros, wrt=(0, 1))
    got = ad.vjp(push, wrt=0)(pair, y, 0, tangent, seeds)
    expected = ad.numeric_grad(lambda p: sum(push(p, y, 0, tangent)), pair)
    for ours, numeric in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
        np.testing.assert_allclose(ours, numeric, rtol=1e-6, atol=1e-8)


def early_exit(x):
    total = 0.0
    for v in x:
        if v > 1.0:
            break
        total = total + v * v
    return total


def test_reverse_over_reverse_of_a_loop_cut_short():
    # The running total is read for its shape alone now, so grad of grad no longer goes
    # through forward mode: the backward loop of a backward loop over range(n)[:count]
    # must run those count indices, not the whole range (it popped an empty tape).
    gradient = ad.grad(early_exit)

    def along(x, v):
        return np.sum(v * gradient(x))

    x, v = np.array([0.3, -0.5, 1.4, 0.2]), np.array([1.0, 2.0, -1.0, 0.5])
    ours = ad.grad(along, wrt=(0, 1))(x, v)
    for got, numeric in zip(ours, ad.numeric_grad(along, x, v, wrt=(0, 1))):
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours[0], [2.0, 4.0, 0.0, 0.0])
