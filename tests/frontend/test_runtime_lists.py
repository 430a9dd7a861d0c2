"""Lists whose length is known only when the code runs, filled by index in a loop:
``caches = [None] * T; caches[t] = (h, x_t)`` returned beside the output, and the RNN
form ``hs = [h0] + [None] * T; hs[t + 1] = np.tanh(W @ hs[t] + x[t])`` whose items
carry the gradient (issue 30)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.tree import StructureError
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


def test_an_item_of_a_list_written_out_set_by_an_index_known_at_run_time():
    def by_index(x):
        parts = [x[0], x[1]]
        parts[int(x[2])] = x[2] * x[0]  # a list built when the code runs from here on
        return parts[0] * parts[1]

    for x in (np.array([0.3, 1.2, 0.7]), np.array([0.3, 1.2, 1.4])):
        check_against_finite_differences(by_index, [x], second_order=True)


def joined(x):
    a, b = [], []
    for r in x:
        a.append(r * r)
        b.append(np.sin(r))
    return np.sum(np.stack(a + b) ** 2)


def test_two_lists_built_at_run_time_joined():
    check_against_finite_differences(joined, [np.array([0.3, 1.2, -0.7])], second_order=True)


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
    def by_slice(x):
        steps = len(x)  # (known when the code runs: an int argument would be a setting)
        hs = [None] * steps
        hs[1:] = [x] * (steps - 1)
        return np.sum(x)

    with pytest.raises(ad.UnsupportedSyntaxError, match="by a slice") as info:
        ad.grad(by_slice)(X[0])
    assert "hs[i] = v" in info.value.hint


def test_a_list_filled_by_index_and_also_named_otherwise_is_refused():
    def shared(x):
        steps = len(x)
        hs = [None] * steps
        other = hs
        for t in range(steps):
            hs[t] = x * t
        return np.sum(x), other

    with pytest.raises(ad.UnsupportedSyntaxError, match="also named 'other'"):
        ad.grad(shared, has_aux=True)(X[0])


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


# ----- a list of tuples read back in a second loop -----


def two_passes(W, x):
    T = x.shape[0]
    caches = [None] * T
    h = np.zeros(W.shape[0])
    for t in range(T):
        h = np.tanh(W @ h + x[t])
        caches[t] = (h, x[t])
    loss = 0.0
    for t in range(T):
        h_t, x_t = caches[t]
        loss = loss + np.sum(h_t * x_t)
    return loss


def test_the_tuples_a_loop_filled_carry_the_gradient_into_a_second_loop():
    check_against_finite_differences(two_passes, [W, X], wrt=(0, 1), second_order=True)


# ----- dicts whose keys are known only when the code runs -----


def layer_outputs(W, x, n_layers):
    outputs = {"input": x}
    h = x
    for i in range(n_layers):
        h = np.tanh(W @ h)
        outputs[f"h{i}"] = h
    print(len(outputs))
    return np.sum(h ** 2), outputs


def test_a_dict_of_keys_computed_in_a_loop_is_the_aux(capsys):
    for n_layers in (0, 3):
        gradient, outputs = ad.grad(layer_outputs, has_aux=True)(W, X[0], n_layers)
        _, expected = layer_outputs(W, X[0], n_layers)
        assert capsys.readouterr().out == f"{n_layers + 1}\n" * 2  # ours, then Python's
        capsys.readouterr()
        assert type(outputs) is dict and list(outputs) == list(expected)
        for key in expected:
            np.testing.assert_allclose(outputs[key], expected[key], rtol=1e-15)
        np.testing.assert_allclose(
            gradient, ad.numeric_grad(lambda W: layer_outputs(W, X[0], n_layers)[0], W),
            rtol=1e-7, atol=1e-12)
        capsys.readouterr()
    (value, outputs), (dW, dx) = ad.value_and_grad(layer_outputs, wrt=(0, 1), has_aux=True,
                                                   jit=True)(W, X[0], 2)
    assert value == pytest.approx(layer_outputs(W, X[0], 2)[0], rel=1e-14)
    assert list(outputs) == ["input", "h0", "h1"]
    np.testing.assert_allclose(dx, ad.numeric_grad(lambda x: layer_outputs(W, x, 2)[0], X[0]),
                               rtol=1e-7)
    capsys.readouterr()


def test_reading_such_a_dict_by_key_off_the_gradient_path():
    def counted(W, x, n):
        seen = {}
        h = x
        for i in range(n):
            h = np.tanh(W @ h)
            seen[i] = bool(np.max(np.abs(h)) > 0.1)  # (a flag: it carries no gradient)
        return np.sum(h) * len(seen), seen[n - 1]

    gradient, last = ad.grad(counted, has_aux=True)(W, X[0], 3)
    assert last == counted(W, X[0], 3)[1]
    np.testing.assert_allclose(gradient, ad.numeric_grad(lambda W: counted(W, X[0], 3)[0], W),
                               rtol=1e-7)


def test_such_a_dict_on_the_gradient_path_is_refused():
    def on_path(W, x, n):
        hs = {}
        h = x
        for i in range(n):
            h = np.tanh(W @ h)
            hs[f"h{i}"] = h
        return np.sum(hs[f"h{n - 1}"])

    with pytest.raises(ad.NonDifferentiableError, match="'dict_setitem' passes no gradient to "
                       "its argument 'value' \\(a dict whose keys are known only when the code "
                       "runs: its items carry no gradient\\)") as info:
        ad.grad(on_path)(W, X[0], 3)
    assert info.value.lineno == on_path.__code__.co_firstlineno + 5
    assert "keep a value the output reads in a list" in info.value.hint
    with pytest.raises(ad.AutodiffError, match="'dict_setitem' passes no gradient"):
        ad.jvp(on_path)(W, X[0], 3, W)


def test_loops_methods_and_numpy_over_such_a_dict_are_refused():
    def looped(W, x, n):
        d = {}
        for i in range(n):
            d[i] = x * i
        total = 0.0
        for k in d:  # Python's keys, which a loop over an array's rows would not give
            total = total + k
        return np.sum(W) * total

    def method(W, x, n):
        d = {}
        for i in range(n):
            d[i] = x * i
        return np.sum(W), list(d.items())

    def summed(W, x, n):
        d = {}
        for i in range(n):
            d[i] = x * i
        return np.sum(W) * np.sum(d)

    with pytest.raises(ad.UnsupportedSyntaxError, match="a loop over 'd', a dict whose keys "
                       "are known only when the code runs, is not supported"):
        ad.grad(looped)(W, X[0], 3)
    with pytest.raises(ad.UnsupportedSyntaxError, match="the method '.items\\(\\)' of a dict "
                       "whose keys are known only when the code runs"):
        ad.grad(method, has_aux=True)(W, X[0], 3)
    with pytest.raises(ad.UnsupportedSyntaxError, match="'np.sum\\(d\\)' uses a dict whose "
                       "keys are known only when the code runs"):
        ad.grad(summed)(W, X[0], 3)


# ----- keys known only when the code runs, written into the caller's dict -----


def keeps_states(W, x, steps, params):
    h = x
    for t in range(steps):
        h = np.tanh(params["scale"] * (W @ h))
        params[f"h{t}"] = h
    return np.sum(h)


def test_a_loop_writes_keys_into_the_callers_dict():
    params = {"scale": 1.5}
    dW, dparams = ad.grad(keeps_states, wrt=(0, 3))(W, X[0], 3, params)
    assert sorted(params) == ["h0", "h1", "h2", "scale"]
    expected = {"scale": 1.5}
    keeps_states(W, X[0], 3, expected)
    for key in expected:
        np.testing.assert_allclose(params[key], expected[key], rtol=1e-15)
    np.testing.assert_allclose(
        dW, ad.numeric_grad(lambda W: keeps_states(W, X[0], 3, {"scale": 1.5}), W), rtol=1e-7)
    np.testing.assert_allclose(
        dparams["scale"], ad.numeric_grad(
            lambda s: keeps_states(W, X[0], 3, {"scale": s}), 1.5), rtol=1e-7)
    # called again with the keys it wrote (another structure, compiled for it): written over
    dW = ad.grad(keeps_states)(W, X[0], 2, params)
    np.testing.assert_allclose(params["h1"], expected["h1"], rtol=1e-15)
    np.testing.assert_allclose(
        dW, ad.numeric_grad(lambda W: keeps_states(W, X[0], 2, {"scale": 1.5}), W), rtol=1e-7)
    tangent = rng.normal(size=W.shape)
    value, derivative = ad.jvp(keeps_states)(W, X[0], 2, params, tangent)
    assert value == pytest.approx(keeps_states(W, X[0], 2, {"scale": 1.5}), rel=1e-14)
    assert derivative == pytest.approx(np.sum(dW * tangent), rel=1e-7)


def test_a_key_the_code_reads_written_by_a_loop_is_refused_when_it_runs():
    def clash(W, x, steps, params):
        h = x
        for t in range(steps):
            h = np.tanh(params["scale"] * (W @ h))
            params["sca" + "le"[:t]] = h  # 'scale' at t = 2
        return np.sum(h)

    with pytest.raises(StructureError, match="writes the key 'scale' into the dict the "
                       "caller passed, whose item 'scale' it reads as the call passed it"):
        ad.grad(clash)(W, X[0], 3, {"scale": 1.5})
    assert ad.grad(clash)(W, X[0], 2, {"scale": 1.5}).shape == W.shape


def test_a_loop_writing_a_key_known_while_compiling_into_the_callers_dict_is_refused():
    def last(W, x, steps, params):
        h = x
        for t in range(steps):
            h = np.tanh(W @ h)
            params["last"] = h
        return np.sum(h)

    with pytest.raises(ad.UnsupportedSyntaxError, match="the loop writes the key 'last' into "
                       "the dict 'params' the caller passed") as info:
        ad.grad(last)(W, X[0], 3, {})
    assert "write it after the loop" in info.value.hint
