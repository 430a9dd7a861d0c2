"""map, filter and functools.reduce over lists, tuples and dicts known while compiling:
unrolled, each call compiled as the code writes it, checked against central
differences."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autodiff as ad

rng = np.random.default_rng(12)


def _square(v):
    return v * v


def mapped(params, x):
    hs = list(map(lambda W: np.tanh(x @ W), params["Ws"]))  # noqa: C417
    total = functools.reduce(lambda a, b: a + np.sum(b), hs, 0.0)
    wide = list(filter(lambda name: name != "skip", params["names"]))
    products = functools.reduce(np.multiply, map(np.sum, hs))
    pairs = sum(map(lambda a, b: np.sum(a) * b, hs, (0.5, 2.0)))
    return total + sum(map(np.sum, map(_square, hs))) * len(wide) + products + pairs


def filtered_by_value(x):
    return sum(filter(lambda v: v > 0, [x[0], x[1]]))


def test_map_filter_and_reduce_are_unrolled():
    params = {"Ws": [rng.normal(size=(3, 2)), rng.normal(size=(3, 4))],
              "names": ["a", "skip", "b"]}
    x = rng.normal(size=(5, 3))
    for jit in (False, True):
        got = ad.grad(mapped, wrt=(0, 1), jit=jit)(params, x)
        expected = ad.numeric_grad(mapped, params, x, wrt=(0, 1))
        for ours, theirs in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


def test_filter_by_a_value_known_only_at_run_time_is_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="keeps items by a test known only "
                       "when the code runs") as info:
        ad.grad(filtered_by_value)(np.array([1.0, -2.0]))
    assert "np.where" in info.value.hint
