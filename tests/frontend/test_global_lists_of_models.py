"""A list, tuple or dict of the user's objects a global holds (``layers = [Dense(...),
...]`` called in a loop, ``MODELS["enc"](x)``) is read as a structure, as a global
model is: its arrays read at each call, its settings (the layers' strings, the list's
length) checked; an update of its arrays between calls seen. And recursion over a nest
ending at the arrays the code computes (``v * 2`` is no list)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.tree import StructureError
from tests.helpers import check_against_finite_differences

rng = np.random.default_rng(31)


class Dense:
    def __init__(self, n, m, act="tanh", alpha=0.1):
        self.W = rng.normal(size=(m, n))
        self.b = rng.normal(size=m)
        self.act = act
        self.alpha = alpha

    def __call__(self, x):
        h = self.W @ x + self.b
        if self.act == "tanh":
            return np.tanh(h)
        return h * self.alpha


layers = [Dense(3, 4), Dense(4, 2, act="linear", alpha=0.3)]
MODELS = {"enc": Dense(3, 3), "dec": Dense(3, 2, act="linear")}
PAIR = (Dense(3, 3), Dense(3, 3))


@pytest.fixture(autouse=True)
def fresh_models(monkeypatch):
    monkeypatch.setitem(globals(), "layers", [Dense(3, 4), Dense(4, 2, act="linear",
                                                                  alpha=0.3)])


def stacked(x):
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2) + len(layers)


def by_key(x):
    return np.sum(MODELS["dec"](MODELS["enc"](x)) ** 2) + np.sum(PAIR[1](x) * PAIR[0](x))


def _agrees(derivative, fn, x):
    np.testing.assert_allclose(derivative(x), ad.numeric_grad(fn, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("jit", [False, True])
def test_a_global_list_of_layers_called_in_a_loop(jit):
    x = rng.normal(size=3)
    grad = ad.grad(stacked, jit=jit)
    _agrees(grad, stacked, x)
    layers[0].W -= 0.2 * layers[0].W  # an optimiser's step: seen
    layers[1].alpha = 0.8  # a float read at each call
    _agrees(grad, stacked, x)
    value, tangent = ad.jvp(stacked, jit=jit)(x, np.ones(3))
    assert value == pytest.approx(stacked(x), rel=1e-12)
    assert tangent == pytest.approx(ad.numeric_grad(stacked, x).sum(), rel=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_a_changed_setting_or_length_is_refused(jit):
    x = rng.normal(size=3)
    grad = ad.grad(stacked, jit=jit)
    grad(x)
    layers[1].act = "tanh"
    with pytest.raises(StructureError, match="'layers' holds an object whose settings"):
        grad(x)
    layers[1].act = "linear"
    grad(x)
    layers.append(Dense(2, 2))
    with pytest.raises(StructureError, match="'layers' holds an object whose settings"):
        grad(x)


@pytest.mark.parametrize("jit", [False, True])
def test_a_dict_and_a_tuple_of_models(jit):
    x = rng.normal(size=3)
    grad = ad.grad(by_key, jit=jit)
    _agrees(grad, by_key, x)
    MODELS["enc"].W *= 0.5
    _agrees(grad, by_key, x)


@pytest.mark.parametrize("f", [stacked, by_key])
def test_against_central_differences_to_second_order(f):
    check_against_finite_differences(f, [rng.normal(size=3)], second_order=True)


def test_an_update_of_the_layers_between_calls_is_seen():
    x = rng.normal(size=3)
    derivative = ad.grad(stacked)
    before = derivative(x)
    layers[0].W -= 0.1  # in place, as an optimiser does
    after = derivative(x)
    _agrees(derivative, stacked, x)
    assert not np.allclose(before, after)
    layers[1].W = layers[1].W * 2.0  # a new array
    _agrees(derivative, stacked, x)


def summed_over_a_nest(t):
    if isinstance(t, (list, tuple)):
        return sum(summed_over_a_nest(item) for item in t)
    if isinstance(t, dict):
        return sum(summed_over_a_nest(item) for item in t.values())
    return np.sum(t ** 2)


def nest_of_computed_values(x):
    return summed_over_a_nest([np.sin(x), {"a": x * 2.0, "b": [np.exp(x) * 0.5, (x,)]}])


def test_recursion_over_a_nest_ends_at_the_arrays_the_code_computes():
    check_against_finite_differences(nest_of_computed_values, [rng.normal(size=3)],
                                     second_order=True)
