"""A method of an object the caller passed, called for its effect (``stats.update(h)``):
the method is compiled, its writes into the object (``self.count += 1``, a running
mean) happen once per call with their forward values, and what the code reads back
from the object after it is an ordinary data dependency. Gradients against central
differences, reverse, forward and second order, and with ``jit=True``."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences

rng = np.random.default_rng(31)


class RunningStats:
    def __init__(self, size):
        self.count = 0
        self.mean = np.zeros(size)

    def update(self, h):
        self.count += 1
        self.mean = 0.9 * self.mean + 0.1 * h


def tracked(x, stats):
    h = np.tanh(x)
    stats.update(h)
    return np.sum(h ** 2)


def centred_by_what_it_recorded(x, stats):
    h = np.sin(x)
    stats.update(h)
    return np.sum((h - stats.mean) ** 2)


def tracked_twice(x, stats):
    stats.update(x)
    h = np.exp(x) * 0.5
    stats.update(h)
    return np.sum(h * x)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "hvp", "jit"])
def test_a_method_writes_into_the_callers_object_once_per_call(transform):
    x = rng.normal(size=3)
    stats = RunningStats(3)
    derivative = {"grad": ad.grad(tracked), "value_and_grad": ad.value_and_grad(tracked),
                  "jvp": ad.jvp(tracked), "hvp": ad.hvp(tracked),
                  "jit": ad.grad(tracked, jit=True)}[transform]
    extra = () if transform in ("grad", "value_and_grad", "jit") else (np.ones(3),)
    expected = np.zeros(3)
    for call in range(1, 4):
        derivative(x, stats, *extra)
        expected = 0.9 * expected + 0.1 * np.tanh(x)
        assert stats.count == call
        np.testing.assert_allclose(stats.mean, expected, rtol=1e-12)


@pytest.mark.parametrize("f", [tracked, centred_by_what_it_recorded, tracked_twice])
def test_gradients_through_a_method_with_effects(f):
    x = rng.normal(size=3)

    def fresh(v):  # each evaluation starts from the same statistics
        stats = RunningStats(3)
        stats.mean = np.array([0.2, -0.1, 0.3])
        return f(v, stats)

    gradient = ad.grad(f)(x, _stats())
    np.testing.assert_allclose(gradient, ad.numeric_grad(fresh, x), rtol=1e-6, atol=1e-9)
    check_against_finite_differences(fresh, [x], second_order=True)


def _stats():
    stats = RunningStats(3)
    stats.mean = np.array([0.2, -0.1, 0.3])
    return stats


def test_the_object_read_back_after_the_method_holds_the_forward_value():
    x = rng.normal(size=3)
    stats = _stats()
    before = stats.mean.copy()
    value, _ = ad.value_and_grad(centred_by_what_it_recorded)(x, stats)
    mean = 0.9 * before + 0.1 * np.sin(x)
    np.testing.assert_allclose(stats.mean, mean, rtol=1e-12)
    assert value == pytest.approx(np.sum((np.sin(x) - mean) ** 2))


# ----- objects and dicts the code builds, changed where another name holds them -----


class Scaled:
    def __init__(self, s):
        self.s = s

    def scale_by(self, k):
        self.s = self.s * k


def changed_by_a_method(x):
    scaler = Scaled(x[0])
    alias = scaler
    scaler.scale_by(x[1])
    return np.sum(alias.s * x)


def put_sine(d, v):
    d["b"] = np.sin(v) * d["a"]


def changed_by_a_helper_on_a_path_the_data_picks(x):
    d = {"a": x}
    if np.sum(x) > 0:
        put_sine(d, x)
    else:
        d["b"] = x * 3.0
    return np.sum(d["b"] ** 2)


def changed_then_rebound(d):
    d["b"] = d["a"] * 2.0
    d = {"c": 1.0}
    return d


def rebound_in_the_callee(x):
    d = {"a": x}
    changed_then_rebound(d)
    return np.sum(d["b"])


@pytest.mark.parametrize("f", [changed_by_a_method, changed_by_a_helper_on_a_path_the_data_picks])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_change_every_name_holding_the_object_sees(f, sign):
    check_against_finite_differences(f, [sign * np.array([0.4, 1.3, 0.6])], second_order=True)


def test_a_change_the_callee_then_hides_by_rebinding_the_name_is_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="'d' is changed in "
                       "'changed_then_rebound' and then bound to another value there") as info:
        ad.grad(rebound_in_the_callee)(np.ones(2))
    assert info.value.lineno == rebound_in_the_callee.__code__.co_firstlineno + 2


def tracked_in_a_loop(x):
    stats = RunningStats(3)
    for _ in range(3):
        stats.update(np.sin(x))
    return np.sum(stats.mean * x)


def test_an_object_changed_in_a_loop_is_refused_at_the_loop():
    with pytest.raises(ad.UnsupportedSyntaxError, match="'stats' is changed by the loop"):
        ad.grad(tracked_in_a_loop)(np.ones(3))
