"""Python forms found in the test suites of other differentiation libraries (builtin
``max``/``min`` of several values, ``for ... else``, dict and list updates, ...),
each checked against central differences in reverse and forward mode
(``ad.check_grad`` checks both), with and without jit."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(23)


# ----- builtin max and min of several values, or of one list -----


def extremes_of_numbers(x):
    a, b, c = x[0], x[1] * 2.0, np.sin(x[2])
    return (max(a, b, c) + min([a, b, c]) * 3.0 + max((a * b, c), default=0.0)
            + min(a, 1.0 + c, b * b, x[3]) + max([x[3]]))


def extremes_of_arrays(x, y):
    return np.sum(max(x, y * 2.0, np.cos(x)) * min([x, y, 0.5 * x * y]))


def extremes_of_arrays_by_numpy(x, y):
    return np.sum(np.maximum(np.maximum(x, y * 2.0), np.cos(x))
                  * np.minimum(np.minimum(x, y), 0.5 * x * y))


def extreme_of_a_list_argument(xs):
    return max(xs) * min(xs[0], xs[2])


def test_max_and_min_of_several_numbers_or_one_list():
    for x in (rng.normal(size=4), np.array([0.3, -0.2, 1.1, 0.4]), np.array([2.0, 0.1, -1.0, 3.0])):
        check_with_jit(extremes_of_numbers, x)
    check_with_jit(extreme_of_a_list_argument, [1.5, 3.0, 0.5])


def test_max_and_min_of_several_arrays_are_elementwise():
    # Python itself compares arrays of one element (as max(a, b) does here already)
    check_with_jit(extremes_of_arrays, np.array(0.3), np.array(-0.4))
    check_with_jit(extremes_of_arrays, np.array([1.2]), np.array([0.7]), wrt=1)
    # several elements: elementwise, as np.maximum and np.minimum
    x, y = rng.normal(size=5), rng.normal(size=5)
    for wrt in (0, 1):
        expected = ad.numeric_grad(extremes_of_arrays_by_numpy, x, y, wrt=wrt)
        np.testing.assert_allclose(ad.grad(extremes_of_arrays, wrt=wrt)(x, y), expected,
                                   rtol=1e-6, atol=1e-9)
        v = rng.normal(size=5)
        value, tangent = ad.jvp(extremes_of_arrays, wrt=wrt)(x, y, v)
        np.testing.assert_allclose(value, extremes_of_arrays_by_numpy(x, y))
        np.testing.assert_allclose(tangent, expected @ v, rtol=1e-6, atol=1e-9)


def tied_three(x):
    return max(x[0], x[1], x[2])


def test_a_tie_splits_as_max_of_two_folded():
    # max(max(a, b), c): a tie of two splits evenly, as np.maximum's rule does
    np.testing.assert_allclose(ad.grad(tied_three)(np.array([1.0, 1.0, 0.0])), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(ad.grad(tied_three)(np.array([1.0, 1.0, 1.0])),
                               [0.25, 0.25, 0.5])


def max_with_key(x):
    return max([x[0], x[1]], key=abs)


def max_of_an_array(x):
    return max(x)


def min_of_nothing(x):
    return min([]) + x[0]


@pytest.mark.parametrize("fn, message", [
    (max_with_key, "max() with key= is not supported"),
    (max_of_an_array, "'max(x)' iterates a value known only when the code runs"),
    (min_of_nothing, "min() of an empty sequence"),
])
def test_max_and_min_refused_forms_say_why(fn, message):
    with pytest.raises(ad.AutodiffError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ad.grad(fn)(np.array([1.0, -2.0]))


# ----- for ... else and while ... else: the else runs when no break left the loop -----


def search_with_else(x):
    s = x[0]
    for _ in range(4):
        s = s * x[1]
        if s > x[2]:
            break
    else:
        s = s + np.sin(x[0]) * 10.0
    return s


def while_with_else(x):
    s = x[0]
    while s < x[2]:
        s = s * 1.5 + x[1]
        if s > 3.0:
            break
    else:
        s = s * x[1]
    return s


def unrolled_with_else(x):
    s = x[0]
    for w in (x[1], x[2], 0.5):
        s = s * w
    else:  # noqa: PLW0120 - the form under test
        s = s + x[0] ** 2
    return s


def return_with_else(x):
    for i in range(3):
        if x[i] > 0.55:
            return x[i] ** 2
    else:  # noqa: PLW0120 - the form under test
        y = x[0] * 3.0
    return y + x[1]


def break_in_an_inner_else(x):
    s = x[0]
    for _ in range(3):
        for _ in range(2):
            s = s * x[1]
            if s > x[2]:
                break
        else:
            s = s + 0.1  # the inner loop ran out: this break leaves the outer loop
            break
        s = s - 0.05 * x[0]
    else:
        s = s * 3.0
    return s


LOOP_POINTS = [np.array([0.5, 1.2, 0.9]), np.array([0.5, 1.1, 5.0]), np.array([0.9, 2.0, 0.1]),
               np.array([0.2, 0.3, 0.4])]


@pytest.mark.parametrize("fn", [search_with_else, while_with_else, unrolled_with_else,
                                return_with_else, break_in_an_inner_else],
                         ids=lambda fn: fn.__name__)
def test_loop_else_runs_when_no_break_left_the_loop(fn):
    for x in LOOP_POINTS:
        value, _ = ad.value_and_grad(fn)(x)
        assert value == fn(x)
        check_with_jit(fn, x)


# ----- d.update(...) on a dict the function built; items of a list written out -----


def updated_dict(x):
    d = {"a": x[0]}
    other = {"b": x[1] * 2.0}
    d.update(c=np.sin(x[2]), **other)
    d.update({"a": d["a"] * x[1]})
    d.update([("e", x[0] ** 2)])
    return d["a"] + d["b"] * d["c"] + d["e"]


def set_list_items(x):
    parts = [x[0], x[1] * 2.0]
    parts[0] += 1.0
    parts[1] = parts[1] * x[2]
    parts[-1] *= x[0]
    zeros = [0.0, 0.0]
    zeros[1] = x[2] ** 2
    return parts[0] * parts[1] + zeros[0] + zeros[1] + sum(parts)


def updated_in_a_branch(x):
    d = {"a": x[0]}
    parts = [x[0], x[1]]
    if x[2] > 0:
        d.update(a=x[1] * 3.0)
        parts[0] = x[2] * 5.0
    return d["a"] + parts[0] * parts[1]


def made_by(x):
    return [x[0], x[1]]


def set_in_a_returned_list(x):
    parts = made_by(x)
    parts[0] = parts[0] * 3.0
    return parts[0] + parts[1]


@pytest.mark.parametrize("fn", [updated_dict, set_list_items, updated_in_a_branch,
                                set_in_a_returned_list], ids=lambda fn: fn.__name__)
def test_dict_updates_and_list_items_set_in_the_code(fn):
    for x in (np.array([0.3, 1.2, 0.7]), np.array([-0.3, -1.2, -0.7])):
        value, _ = ad.value_and_grad(fn)(x)
        np.testing.assert_allclose(value, fn(x))
        check_with_jit(fn, x)


def list_also_named(x):
    parts = [x[0], x[1]]
    q = parts
    parts[0] = x[2]
    return q[0]


def list_inside_a_dict(x):
    parts = [x[0], x[1]]
    d = {"p": parts}
    parts[0] = x[2]
    return d["p"][0]


def doubles_first(p):
    p[0] = p[0] * 2.0


def list_changed_by_a_callee(x):
    parts = [x[0], x[1]]
    doubles_first(parts)
    return parts[0]


def doubles_entry(d):
    d["a"] = d["a"] * 2.0


def dict_changed_by_a_callee(x):
    d = {"a": x[0]}
    doubles_entry(d)
    return d["a"]


def dict_updated_through_another_name(x):
    d = {"a": x[0]}
    d2 = d
    d2.update(a=x[1])
    return d["a"]


@pytest.mark.parametrize("fn, message", [
    (list_also_named, "changes a list also held by 'q'"),
    (list_inside_a_dict, "changes a list also held by 'd'"),
    (list_changed_by_a_callee, "also held by 'parts' where this function is called"),
])
def test_a_change_another_name_would_see_is_refused(fn, message):
    with pytest.raises(ad.AutodiffError, match=message):
        ad.grad(fn)(np.array([0.3, 1.2, 0.7]))


@pytest.mark.parametrize("fn", [dict_changed_by_a_callee, dict_updated_through_another_name])
def test_a_change_to_a_dict_every_name_holding_it_sees(fn):
    # as in Python: the callee's d["a"] = ... and d2.update(...) change the one dict
    check_against_finite_differences(fn, [np.array([0.3, 1.2, 0.7])], second_order=True)


def reduced_list_argument(xs, w):
    return np.sum(functools.reduce(lambda a, b: a * b, xs) * w) + sum(map(np.sum, xs))


def test_reduce_and_map_over_a_list_argument_compile_for_the_list_passed():
    xs, w = [1.5, -2.0, np.array([0.5, 1.5])], np.array([0.3, 0.7])
    ad.check_grad(reduced_list_argument, xs, w, wrt=(0, 1))
    got, expected = ad.grad(reduced_list_argument, jit=True)(xs, w), ad.grad(
        reduced_list_argument)(xs, w)
    for ours, theirs in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
        np.testing.assert_allclose(ours, theirs)


# ----- the kind of a value: type(x) is ..., isinstance -----


def by_kind(x):
    if type(x) is not np.ndarray:  # a number
        return x ** 3
    return np.sum(x ** 3)


def by_kind_of_its_type(x):
    kind = type(x)
    scale = 2.0 if kind is float else 1.0
    return scale * np.sum(np.tanh(x))


def by_instance(x):
    if isinstance(x, (float, int)):  # a Python number, or a NumPy float64 scalar
        return x ** 3
    return np.sum(x ** 3) if isinstance(x, np.ndarray) else x


def structure_or_array(params, x):
    if type(params) is dict:
        return np.sum(params["w"] * x)
    return np.sum(params * x)


@pytest.mark.parametrize("fn, args", [
    (by_kind, (np.array([0.5, -1.0]),)), (by_kind, (0.7,)),
    (by_kind_of_its_type, (np.array([0.5, -1.0]),)), (by_kind_of_its_type, (0.7,)),
    (by_instance, (np.array([0.5, -1.0]),)), (by_instance, (0.7,)),
], ids=["array", "float", "array, type read once", "float, type read once",
        "array, isinstance", "float, isinstance"])
def test_type_of_a_value_is_tested_when_it_runs(fn, args):
    check_with_jit(fn, *args)
    assert "type(x) is not np.ndarray" in ad.grad(by_kind).source
    assert "isinstance(x, (float, int))" in ad.grad(by_instance).source


def test_type_of_a_structure_is_known_while_compiling():
    x = np.array([1.0, 2.0])
    gradient = ad.grad(structure_or_array)({"w": np.array([3.0, 4.0])}, x)
    np.testing.assert_allclose(gradient["w"], x)
    np.testing.assert_allclose(ad.grad(structure_or_array)(np.array([3.0, 4.0]), x), x)
