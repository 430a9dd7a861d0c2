"""A list (or dict) of layer objects held in a global, called in a loop as a
``Sequential`` is: read as a structure, its arrays read at each call (an optimiser's
update between calls is seen), its settings checked at each call. And recursion over
nested lists ending at values the code computes (``v * 2`` is an array, no list).
Gradients against central differences, reverse, forward and second order."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(37)


class Dense:
    def __init__(self, n_in, n_out, activation="tanh"):
        self.W = rng.normal(size=(n_in, n_out)) * 0.5
        self.b = np.zeros(n_out)
        self.activation = activation

    def __call__(self, x):
        h = x @ self.W + self.b
        return np.tanh(h) if self.activation == "tanh" else h


LAYERS = [Dense(3, 4), Dense(4, 2, activation="linear")]
BLOCKS = {"encoder": Dense(3, 3), "head": Dense(3, 1, activation="linear")}


def through_the_list(x):
    for layer in LAYERS:
        x = layer(x)
    return np.sum(x ** 2)


def through_the_dict(x):
    return np.sum(BLOCKS["head"](BLOCKS["encoder"](x)) ** 2)


@pytest.mark.parametrize("f", [through_the_list, through_the_dict])
def test_layers_held_in_a_global_list_or_dict(f):
    x = rng.normal(size=(2, 3))
    check_against_finite_differences(f, [x], second_order=True)
    check_with_jit(f, x)


def test_an_update_of_the_layers_between_calls_is_seen():
    x = rng.normal(size=(2, 3))
    derivative = ad.grad(through_the_list)
    before = derivative(x)
    saved = LAYERS[0].W.copy()
    try:
        LAYERS[0].W -= 0.1 * np.ones_like(LAYERS[0].W)  # in place, as an optimiser does
        after = derivative(x)
        np.testing.assert_allclose(after, ad.numeric_grad(through_the_list, x), rtol=1e-6)
        assert not np.allclose(before, after)
        LAYERS[1].W = LAYERS[1].W * 2.0  # a new array
        np.testing.assert_allclose(derivative(x), ad.numeric_grad(through_the_list, x),
                                   rtol=1e-6)
    finally:
        LAYERS[0].W = saved


def test_a_layer_added_to_the_list_after_compiling_is_an_error_not_a_gradient():
    derivative = ad.grad(through_the_list)
    x = rng.normal(size=(2, 3))
    derivative(x)
    LAYERS.append(Dense(2, 2))
    try:
        with pytest.raises(ad.tree.StructureError, match="'LAYERS' holds an object whose settings"):
            derivative(x)
    finally:
        LAYERS.pop()


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
