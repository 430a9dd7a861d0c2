"""``*args`` and ``**kwargs`` in the user's helpers and lambdas, and ``f(*xs, **kw)``
calls: taken apart while compiling, checked against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad

rng = np.random.default_rng(11)


def stack_of(x, *weights, activation=np.tanh, **options):
    for W in weights:
        x = activation(x @ W)
    return x * options.get("scale", 1.0) + options.get("shift", 0.0)


def starred_loss(W1, W2, x):
    layers = [W1, W2]
    options = {"scale": 2.0}
    h = stack_of(x, *layers, **options, shift=0.5)
    total = lambda *values, **weights: sum(np.sum(v) * weights[k]
                                           for v, k in zip(values, ("a", "b")))
    return np.sum(h ** 2) + total(h, x, a=0.5, b=-1.0) + np.sum(np.maximum(*layers[:1], 0.1))


def unpacks_an_array(x):
    return np.sum(np.maximum(*x))


def test_star_arguments_in_helpers_lambdas_and_calls():
    W1, W2, x = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    for jit in (False, True):
        got = ad.grad(starred_loss, wrt=(0, 1, 2), jit=jit)(W1, W2, x)
        expected = ad.numeric_grad(starred_loss, W1, W2, x, wrt=(0, 1, 2))
        for ours, theirs in zip(got, expected):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    _, along = ad.jvp(starred_loss)(W1, W2, x, np.ones_like(W1))
    assert along == pytest.approx(np.sum(expected[0]), rel=1e-6)


def test_unpacking_an_array_is_refused_at_the_line():
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"'\*x' unpacks a value known only "
                       "when the code runs") as info:
        ad.grad(unpacks_an_array)(np.ones((2, 3)))
    assert "np.maximum(*x)" in info.value.source_line and "x[0], x[1]" in info.value.hint


def test_a_lambda_taking_star_arguments_is_differentiated():
    scaled = lambda v, *rest: np.sum(np.sin(v) ** 2) * (rest[0] if rest else 1.0)  # noqa: E731
    x = rng.normal(size=3)
    for rest in ((), (3.0,)):
        np.testing.assert_allclose(ad.grad(scaled)(x, *rest), ad.numeric_grad(
            lambda v: scaled(v, *rest), x), rtol=1e-6, atol=1e-9)
