"""Python as people write it: conversions of computed values (``int(v)``,
``np.float64(v)``, ``v.item()``), each checked against central differences in
reverse and forward mode (``ad.check_grad`` checks both)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_with_jit

rng = np.random.default_rng(19)


# ----- conversions of computed values -----


def indexed_by_int(x):
    return x[int(x[0])] * x[1] + x[int(x[2] > 0.0)] ** 2


def scaled_by_bool(x):
    if bool(x[0] > 0):
        return np.sum(x * x) * bool(x[1])
    return np.sum(x) * float(bool(x[2] < 0))


def converted(x):
    a = np.float64(x[0]) * x[1]
    b = x[2:3].item() * np.sum(np.float64(x) ** 2)
    c = np.sum(np.sin(x)).item() * x.astype(float)[0]
    return a + b + c + float(x[1]) * np.float64(np.sum(x))


def test_int_and_bool_pass_no_gradient_in_either_mode():
    x = np.array([1.3, 0.7, 2.0])
    check_with_jit(indexed_by_int, x)
    # int(1.3) and int(True) are 1: the function is x[1] * x[1] + x[1] ** 2 there
    np.testing.assert_allclose(ad.grad(indexed_by_int)(x), [0.0, 4 * x[1], 0.0])
    for x in (np.array([0.5, 2.0, -1.0]), np.array([-0.5, 2.0, -1.0]), np.array([0.5, 0.0, 1.0])):
        check_with_jit(scaled_by_bool, x)


def test_float64_item_and_astype_pass_the_gradient():
    check_with_jit(converted, rng.normal(size=4))


def test_int_of_a_computed_value_as_a_loop_bound():
    check_with_jit(power_by_int, np.array([1.5, 2.7]))


def power_by_int(x):
    total = x[0]
    for _ in range(int(x[1])):
        total = total * x[0]
    return total


# ----- an item of a tuple or list chosen by an integer known only at run time -----


def chosen_from_tuple(x, i):
    a, b, c = np.sin(x), x * x, np.exp(x)
    return np.sum((a, b, c)[i] * (b, 2.0, a)[i])


def weighted_in_a_loop(x, weights):
    s = 0.0
    for i in range(len(weights)):
        s = s + np.sum(np.tanh(weights[i] * x) * weights[len(weights) - 1 - i])
    return s


def layer_by_argument(x, layers, i):
    h = np.tanh(layers[i] @ x)
    return np.sum(layers[i + 1] @ h)


def chosen_by_value(x):
    return np.sum((np.sin(x), np.cos(x), x ** 3)[int(x[0] > 0) + int(x[1] > 0)])


def test_a_tuple_indexed_at_run_time_sends_the_gradient_to_the_chosen_item():
    x = rng.normal(size=3)
    for i in range(3):
        check_with_jit(chosen_from_tuple, x, i)
    for x in (np.array([0.5, 0.2, 1.0]), np.array([-0.5, 0.2, 1.0]), np.array([-0.5, -0.2, 1.0])):
        check_with_jit(chosen_by_value, x)
    # second order: the gradient is differentiated again, in both modes
    ad.check_grad(ad.grad(chosen_from_tuple), rng.normal(size=3), 1, rtol=1e-6, atol=1e-9)


def test_a_list_argument_indexed_by_a_loop_counter():
    x = rng.normal(size=3)
    weights = [rng.normal(size=3) for _ in range(3)]
    check_with_jit(weighted_in_a_loop, x, weights, wrt=(0, 1))
    layers = [rng.normal(size=(3, 3)) for _ in range(3)]
    for i in (0, 1):
        check_with_jit(layer_by_argument, x, layers, i, wrt=(0, 1))


def picked_structure(x, layers, i):
    return np.sum(layers[i]["W"] @ x)


def picked_by_the_data(x, layers):
    i = int(np.argmax(x))
    return np.sum(layers[i]["W"] @ x)


def test_a_list_of_structures_indexed_by_an_int_argument_is_compiled_per_call():
    layers = [{"W": np.eye(2)}, {"W": 2.0 * np.eye(2)}]
    for i in (0, 1):
        check_with_jit(picked_structure, rng.normal(size=2), layers, i)


def test_a_list_of_structures_indexed_at_run_time_is_refused_at_the_users_line():
    layers = [{"W": np.eye(2)}, {"W": 2.0 * np.eye(2)}]
    for derivative in (lambda: ad.grad(picked_by_the_data)(np.ones(2), layers),
                       lambda: ad.jvp(picked_by_the_data)(np.ones(2), layers, np.ones(2))):
        with pytest.raises(ad.UnsupportedSyntaxError, match=r"'layers\[i\]' chooses an item "
                           "known only when the code runs") as info:
            derivative()
        assert info.value.lineno == picked_by_the_data.__code__.co_firstlineno + 2
        assert "for item in layers" in info.value.hint


# ----- in-place updates of an argument: the update of a copy -----


def overwritten(x, a, b):
    x[0] = a * b
    x[1] += x[2] * a
    return np.sum(x * x)


def scaled_in_a_loop(x, a):
    for i in range(1, len(x)):
        x[i] = x[i - 1] * a + np.sin(x[i])
    return np.sum(x ** 2)


def test_an_updated_argument_is_differentiated_as_a_copy():
    x, a, b = rng.normal(size=3), 0.7, -1.3
    kept = x.copy()
    derivatives = [ad.grad(overwritten, wrt=(0, 1, 2), jit=jit) for jit in (False, True)]
    derivatives += [ad.jvp(overwritten, wrt=(0, 1, 2), jit=jit) for jit in (False, True)]
    for derivative in derivatives[:2]:
        got = derivative(x, a, b)
        np.testing.assert_array_equal(x, kept)  # the caller's array is never changed
        for ours, theirs in zip(got, ad.numeric_grad(overwritten, x.copy(), a, b, wrt=(0, 1, 2))):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
    tangent = (rng.normal(size=3), 0.3, -0.2)
    for derivative in derivatives[2:]:
        value, derivative_value = derivative(x, a, b, tangent)
        np.testing.assert_array_equal(x, kept)
        np.testing.assert_allclose(value, overwritten(x.copy(), a, b))
        expected = sum(np.sum(g * t) for g, t in zip(derivatives[0](x, a, b), tangent))
        np.testing.assert_allclose(derivative_value, expected, rtol=1e-9)
    assert "np.copy(x)" in derivatives[0].source
    check_with_jit(scaled_in_a_loop, rng.normal(size=4), 0.8, wrt=(0, 1))


def recurrence(x):
    out = np.zeros(len(x))
    out[0] = x[0]
    for i in range(1, len(x)):
        prev = out[i - 1]  # read before the update: allowed
        out[i] = 0.5 * prev + np.sin(x[i])
    return np.sum(out * out)


def view_updated_in_a_loop(x):
    head = x[:2]
    for i in range(2):
        x[i] = x[i] * 2.0
    return np.sum(head)


def test_views_of_an_updated_array_are_refused_where_numpy_would_show_the_update():
    check_with_jit(recurrence, rng.normal(size=4))
    for derivative in (lambda: ad.grad(view_updated_in_a_loop)(np.ones(3)),
                       lambda: ad.jvp(view_updated_in_a_loop)(np.ones(3), np.ones(3))):
        with pytest.raises(ad.UnsupportedSyntaxError, match="'head' may be a view of 'x'") as info:
            derivative()
        assert info.value.lineno == view_updated_in_a_loop.__code__.co_firstlineno + 3


# ----- a function held in a default argument, a list or a dict -----


def relu(v):
    return np.maximum(v, 0.0)


ACTIVATIONS = {"sin": np.sin, "relu": relu, "softplus": lambda v: np.log1p(np.exp(v))}
LAYERS = [("tanh", np.tanh), ("relu", relu)]


def activated(x, act=np.tanh):
    return np.sum(act(x) * x)


def by_name(x, name="softplus"):
    return np.sum(ACTIVATIONS[name](x) + ACTIVATIONS["sin"](x))


def through_layers(x):
    for _, f in LAYERS:
        x = f(x * 1.5)
    acts = [np.tanh, relu]
    for f in acts:
        x = f(x) + x
    return np.sum(x * x)


def helper_with_default(x):
    def apply(v, act=np.sin, scale=2.0):
        return act(v) * scale
    return np.sum(apply(x) + apply(x, relu, 0.5))


def test_functions_in_defaults_lists_and_dicts_are_resolved_while_compiling():
    x = rng.normal(size=4)
    check_with_jit(activated, x)
    check_with_jit(activated, x, relu)
    check_with_jit(activated, x, np.sin)
    check_with_jit(by_name, x)
    check_with_jit(by_name, x, "relu")
    check_with_jit(through_layers, x)
    check_with_jit(helper_with_default, x)


def chosen_at_run_time(x, i):
    acts = [np.tanh, relu]
    return np.sum(acts[i](x))


def test_a_function_chosen_by_a_run_time_index_is_refused_with_a_hint():
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"'acts\[i\]' chooses an item") as info:
        ad.grad(chosen_at_run_time)(np.ones(3), 1)
    assert "pass the function itself" in info.value.hint


# ----- recursion whose depth arguments known while compiling decide -----


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def branching(x, n):
    if n <= 1:
        return x
    return branching(x, n - 1) + np.sin(branching(x * 0.5, n - 2))


def is_even(x, n):
    return x if n == 0 else np.cos(is_odd(x, n - 1))


def is_odd(x, n):
    return np.sin(x) if n == 0 else is_even(x * 1.1, n - 1)


def recursive(x):
    def halve(v, depth):
        return v if depth == 0 else halve(np.tanh(v) * 0.5 + v, depth - 1)
    return np.sum(power(x, 3) + branching(x, 5) + is_even(x, 4) + halve(x, 3))


def power_of_a_run_time_depth(x, n):
    return np.sum(power(x, n))


def test_recursion_of_a_depth_known_while_compiling_is_unrolled():
    check_with_jit(recursive, rng.normal(size=3))


def test_recursion_of_a_depth_an_int_argument_gives_is_unrolled_per_call():
    for n in (0, 1, 3):
        check_with_jit(power_of_a_run_time_depth, rng.normal(size=2), n)


def test_recursion_of_a_depth_known_only_at_run_time_is_refused():
    with pytest.raises(ad.UnsupportedSyntaxError, match="recursive call to 'power' nested 50 "
                       "deep while compiling") as info:
        ad.grad(power_of_a_run_time_depth)(np.ones(2), 3.0)
    assert info.value.lineno == power.__code__.co_firstlineno + 1
    assert "write the recursion as a loop" in info.value.hint


def list_chosen_at_run_time(x, i):
    acc = []
    for k in range(3):
        acc.append(x * k)
    return np.sum(sum((acc, acc)[i]))


def chosen_from_the_end(x, i):
    return np.sum((x, np.sin(x), x ** 3)[-i] * x)


def test_a_run_time_index_chooses_arrays_counted_from_either_end_but_never_lists():
    for i in (1, 2, 3):
        check_with_jit(chosen_from_the_end, rng.normal(size=3), i)
    with pytest.raises(ad.UnsupportedSyntaxError, match="from a list of lists, structures or "
                       "functions"):
        ad.grad(list_chosen_at_run_time)(np.ones(2), 1)


# ----- np.add.at and np.subtract.at: unbuffered updates of an array the function made -----


def scattered(x, w):
    counts = np.zeros(3)
    np.add.at(counts, np.array([0, 1, 1, 2, 0, 2]), x * w)  # repeats count each time
    np.subtract.at(counts, [0, 0], w[:2])
    return np.sum(counts ** 2 * np.arange(1.0, 4.0))


def scattered_on_two_axes(x):
    grid = np.ones((3, 2))
    np.add.at(grid, (np.array([0, 2, 2]), 1), x[:3] ** 2)
    return np.sum(np.sin(grid) * grid)


def scattered_into_the_argument(x):
    np.add.at(x, [0, 0], 1.0)
    return np.sum(x)


def test_add_at_counts_every_occurrence_of_a_repeated_index():
    x, w = np.linspace(0.1, 0.9, 6), np.linspace(1.0, 2.0, 6)
    check_with_jit(scattered, x, w, wrt=(0, 1))
    check_with_jit(scattered_on_two_axes, x)
    for fn, args in ((scattered, (x, w)), (scattered_on_two_axes, (x,))):
        assert np.allclose(ad.grad(fn, jit=True)(*args), ad.grad(fn)(*args))
        v = np.linspace(-1.0, 1.0, 6)
        step = 1e-5
        hvp = ad.hvp(fn)(*args, v)
        shifted = [(args[0] + sign * step * v, *args[1:]) for sign in (1, -1)]
        expected = (ad.grad(fn)(*shifted[0]) - ad.grad(fn)(*shifted[1])) / (2 * step)
        assert np.allclose(hvp, expected, rtol=1e-5, atol=1e-7)
    assert "np.add.at(counts, " in ad.grad(scattered).source


def test_add_at_into_an_argument_is_refused_at_the_users_line():
    with pytest.raises(ad.AutodiffError, match="in-place update of 'x', which is an argument"
                       ) as raised:
        ad.grad(scattered_into_the_argument)(np.ones(3))
    assert raised.value.filename == __file__


def scattered_by_keyword(x):
    counts = np.zeros(3)
    np.add.at(counts, indices=[0, 1], b=x[:2])
    return np.sum(counts)


def test_add_at_in_another_form_is_refused_with_its_form():
    with pytest.raises(ad.AutodiffError, match=r"np\.add\.at is differentiated in its form "
                       r"np\.add\.at\(a, indices, b\)") as raised:
        ad.grad(scattered_by_keyword)(np.ones(3))
    assert raised.value.lineno == scattered_by_keyword.__code__.co_firstlineno + 2
    assert "the array, the indices and the values" in raised.value.hint
