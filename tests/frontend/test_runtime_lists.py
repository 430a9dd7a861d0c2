"""Lists whose length is known only when the code runs, filled by index in a loop:
``caches = [None] * T; caches[t] = (h, x_t)`` returned beside the output, and the RNN
form ``hs = [h0] + [None] * T; hs[t + 1] = np.tanh(W @ hs[t] + x[t])`` whose items
carry the gradient (issue 30)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences

rng = np.random.default_rng(30)
W = rng.normal(size=(3, 3)) * 0.5
X = rng.normal(size=(4, 3))


# ----- caches filled by index, returned beside the output -----


def rnn_with_caches(W, x):
    T = x.shape[0]
    caches = [None] * T
    h = np.zeros(W.shape[0])
    for t in range(T):
        h_new = np.tanh(W @ h + x[t])
        caches[t] = (h, x[t], h_new)
        h = h_new
    return np.sum(h ** 2), caches


def test_caches_filled_by_index_are_the_aux():
    gradient, caches = ad.grad(rnn_with_caches, has_aux=True)(W, X)
    np.testing.assert_allclose(
        gradient, ad.numeric_grad(lambda W: rnn_with_caches(W, X)[0], W), rtol=1e-7)
    expected = rnn_with_caches(W, X)[1]
    assert type(caches) is list and len(caches) == len(X)
    for ours, theirs in zip(caches, expected):
        assert type(ours) is tuple and len(ours) == 3
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-15)
    (value, aux), again = ad.value_and_grad(rnn_with_caches, wrt=(0, 1), has_aux=True)(W, X)
    assert value == pytest.approx(rnn_with_caches(W, X)[0], rel=1e-14) and len(aux) == len(X)
    np.testing.assert_allclose(again[0], gradient, rtol=1e-12)
    check_against_finite_differences(lambda W, x: rnn_with_caches(W, x)[0], [W, X],
                                     wrt=(0, 1), second_order=True)


def caches_by_count(W, x, steps):
    caches = [None] * steps  # an int argument: known when the code runs
    h = x
    for t in range(steps):
        h = np.tanh(W @ h)
        caches[t] = h
    return np.sum(h), caches


def test_a_list_of_an_int_arguments_length_filled_by_index():
    for steps in (0, 1, 4):
        gradient, caches = ad.grad(caches_by_count, has_aux=True)(W, X[0], steps)
        np.testing.assert_allclose(
            gradient, ad.numeric_grad(lambda W: caches_by_count(W, X[0], steps)[0], W),
            rtol=1e-7, atol=1e-12)
        assert len(caches) == steps
        for ours, theirs in zip(caches, caches_by_count(W, X[0], steps)[1]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-15)


# ----- items on the gradient path -----


def rnn_list(W, x):
    T = x.shape[0]
    hs = [np.zeros(W.shape[0])] + [None] * T
    for t in range(T):
        hs[t + 1] = np.tanh(W @ hs[t] + x[t])
    return np.sum(hs[-1] ** 2) + 0.5 * np.sum(hs[2])


def rnn_reading_the_previous_item(W, x):
    T = x.shape[0]
    hs = [None] * T
    for t in range(T):
        if t == 0:
            hs[t] = np.tanh(x[t])
        else:
            hs[t] = np.tanh(W @ hs[t - 1] + x[t])
    return np.sum(hs[T - 1] * hs[0])


def summed_after_the_loop(W, x, steps):
    hs = [None] * steps
    h = x[0]
    for t in range(steps):
        h = np.tanh(W @ h)
        hs[t] = h * (t + 1.0)
    return sum(np.sum(v) for v in hs)


def repeated_then_replaced(W, x):
    T = x.shape[0]
    hs = [x[0]] * T  # the same array at every position: each gets its part
    for t in range(T):
        hs[t] = hs[t] + np.tanh(W @ x[t])
        hs[t] = hs[t] * hs[t - 1]
    return np.sum(hs[0]) + np.sum(hs[T - 1] ** 2)


def written_out_then_filled(W, x):
    hs = [x[0], None, None, None]
    for t in range(x.shape[0] - 1):
        hs[t + 1] = np.sin(W @ hs[t]) + x[t + 1]
    return np.sum(hs[3] ** 2) + np.sum(hs[1])


@pytest.mark.parametrize("f", [rnn_list, rnn_reading_the_previous_item, repeated_then_replaced,
                               written_out_then_filled],
                         ids=lambda f: f.__name__)
def test_the_gradient_flows_through_items_set_by_index(f):
    check_against_finite_differences(f, [W, X], wrt=(0, 1), second_order=True)


def test_items_set_by_index_then_summed_after_the_loop():
    for steps in (1, 3):
        check_against_finite_differences(lambda W, x: summed_after_the_loop(W, x, steps),
                                         [W, X], wrt=(0, 1), second_order=True)


def test_the_values_are_pythons():
    for f in (rnn_list, rnn_reading_the_previous_item, repeated_then_replaced,
              written_out_then_filled):
        value, _ = ad.value_and_grad(f)(W, X)
        assert value == pytest.approx(f(W, X), rel=1e-14)
    assert ad.grad(rnn_list, jit=True)(W, X) == pytest.approx(ad.grad(rnn_list)(W, X),
                                                               rel=1e-12)


# ----- what stays refused -----


def test_setting_an_item_of_the_callers_list_in_a_loop_is_refused():
    def sets_callers(x, out):
        for t in range(x.shape[0]):
            out[t] = np.sin(x[t])
        return np.sum(x)

    with pytest.raises(ad.UnsupportedSyntaxError, match="the loop sets items of the list "
                       "'out' the caller passed") as info:
        ad.grad(sets_callers)(X, [None] * 4)
    assert "[None] * n" in info.value.hint


def test_setting_a_slice_of_a_run_time_list_is_refused():
    def by_slice(x, steps):
        hs = [None] * steps
        hs[1:] = [x] * (steps - 1)
        return np.sum(x)

    with pytest.raises(ad.UnsupportedSyntaxError, match="by a slice") as info:
        ad.grad(by_slice)(X[0], 3)
    assert "hs[i] = v" in info.value.hint


def test_a_list_filled_by_index_and_also_named_otherwise_is_refused():
    def shared(x, steps):
        hs = [None] * steps
        other = hs
        for t in range(steps):
            hs[t] = x * t
        return np.sum(x), other

    with pytest.raises(ad.UnsupportedSyntaxError, match="also named 'other'"):
        ad.grad(shared, has_aux=True)(X[0], 3)


def test_an_augmented_assignment_to_an_item_is_refused():
    def augmented(x, steps):
        hs = [x] * steps
        for t in range(steps):
            hs[t] += np.sin(x)  # NumPy adds into x itself, held at every position
        return np.sum(hs[0])

    with pytest.raises(ad.UnsupportedSyntaxError, match="augmented assignment to an item of "
                       "the list 'hs'") as info:
        ad.grad(augmented)(X[0], 3)
    assert "hs[t] = hs[t] + ..." in info.value.hint
