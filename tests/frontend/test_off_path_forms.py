"""Python off the gradient path that the random off-path programs found refused, each
now run as written: a construct without a rule whose result reaches no output (in
forward mode too), ``state.get(...)`` and writes into a dict argument (read back, and
written by a helper too), a method of an object argument called for its effect, and
appends to a list a dict or object argument holds. Effects checked against the plain
function, gradients against central differences."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences

rng = np.random.default_rng(43)


def unused_without_a_rule(x):
    unused = np.trunc(np.tanh(x))  # noqa: F841 - off the path
    return np.sum(np.tanh(x) ** 2)


def test_forward_mode_passes_over_a_construct_off_the_path():
    x = rng.normal(size=(2, 3))
    check_against_finite_differences(unused_without_a_rule, [x], second_order=True)


def counted(x, state):
    state["count"] = state.get("count", 0) + 1
    state["parts"] = np.trunc(x)  # off the path: written, never read back
    state["h"] = np.tanh(x)
    return np.sum(state["h"] * x)


def bump(h, state):
    state["count"] = state["count"] + 1
    state["seen"] = float(np.sum(h))
    state["count"] += 1
    return np.sin(h)


def counted_by_a_helper(x, state):
    state["count"] = state["count"] + 1
    return np.sum(bump(x, state) * x)


class Recorder:
    def __init__(self):
        self.seen = 0
        self.norms = []

    def record(self, h):
        self.seen += 1
        return h


def recorded(x, obj, state):
    h = np.tanh(x)
    obj.record(h)
    obj.norms.append(float(np.sum(h ** 2)))
    state["history"].append(round(float(np.mean(h)), 12))
    return np.sum(h * x)


def step(h, log):
    log.append(float(np.sum(h)))
    return np.tanh(h)


def appended_in_a_loop_then_by_a_helper(x, log):
    for r in x:
        log.append(float(np.sum(r)))
    y = step(x, log)
    count = len(log)  # what the helper appended is read back
    log.append(count)
    return np.sum(y * x) * count


CASES = [
    (counted, lambda: [{}]),
    (counted, lambda: [{"count": 4}]),
    (counted_by_a_helper, lambda: [{"count": 0}]),
    (recorded, lambda: [Recorder(), {"history": [1.0]}]),
    (appended_in_a_loop_then_by_a_helper, lambda: [[]]),
]


def _containers_equal(got, want):
    if isinstance(got, Recorder):
        assert (got.seen, got.norms) == (want.seen, want.norms)
        return
    if isinstance(got, list):
        assert got == want
        return
    assert got.keys() == want.keys()
    for key in got:
        np.testing.assert_array_equal(got[key], want[key])


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                                  enumerate(CASES)])
@pytest.mark.parametrize("transform", ["grad", "jvp", "jit"])
def test_effects_off_the_path_run_once_per_call_as_written(f, make, transform):
    x = rng.normal(size=(2, 3))
    containers, expected = make(), make()
    derivative = {"grad": ad.grad(f), "jvp": ad.jvp(f), "jit": ad.grad(f, jit=True)}[transform]
    extra = (np.ones_like(x),) if transform == "jvp" else ()
    for _ in range(2):
        derivative(x, *containers, *extra)
        f(x, *expected)
        for got, want in zip(containers, expected):
            _containers_equal(got, want)


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                                  enumerate(CASES)])
def test_gradients_with_effects_off_the_path(f, make):
    x = rng.normal(size=(2, 3))
    containers = make()
    gradient = ad.grad(f)(x, *copy.deepcopy(containers))
    np.testing.assert_allclose(gradient, ad.numeric_grad(
        lambda v: f(v, *copy.deepcopy(containers)), x), rtol=1e-6, atol=1e-9)
    if f is appended_in_a_loop_then_by_a_helper:  # its value reads the list's length
        _, along = ad.jvp(f)(x, *copy.deepcopy(containers), np.ones_like(x))
        assert along == pytest.approx(np.sum(gradient), rel=1e-9)
        return
    # (the effects pile up over the calls the checks make, off the path)
    check_against_finite_differences(f, [x, *containers], second_order=True)
