"""Python forms of issue 30: generators iterated in the function, ``:=``, ``del``, a
differentiated function with ``*args``/``**kwargs``, ``type(t) in (list, tuple)`` and
``isinstance`` on structures, recursion over nested structures, methods of constants
(``k.startswith("W")``), a name that is an int on one path and a tuple on another, and
in-place updates through a view of a local copy. Each is checked against central
differences: reverse and forward mode, second order where it applies, and jit=True."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(30)
X = rng.uniform(0.5, 1.5, size=4)
Y = rng.uniform(0.5, 1.5, size=4)


def check(f, *args, wrt=0, second_order=True):
    """Reverse, forward (and second order) against central differences, and jit=True."""
    if all(isinstance(a, (np.ndarray, float)) for a in args):
        check_against_finite_differences(f, list(args), wrt=wrt, second_order=second_order)
    check_with_jit(f, *args, wrt=wrt)


def refused(f, *args, words=(), kind=ad.AutodiffError, wrt=0):
    with pytest.raises(kind) as info:
        ad.grad(f, wrt=wrt)(*args)
    text = str(info.value)
    for word in words:
        assert word in text, text
    assert "test_python_forms_30.py:" in text, text
    return text


# ----- := -----


def walrus_in_if(x):
    if (n := np.sum(x ** 2)) > 1.0:
        return n * 2.0 + np.sum(x)
    return n


def walrus_in_while(x):
    i, acc = 0, 0.0
    while (i := i + 1) < 4:
        acc = acc + np.sum(np.sin(x * i))
    return acc * i


def walrus_in_while_run_time(x):
    acc = x
    while (s := np.sum(acc ** 2)) < 50.0:
        acc = acc * 1.5
    return s + np.sum(acc)


def walrus_in_comprehension(x):
    ys = [(last := np.cos(v * 2.0)) for v in [x, x * 3.0]]
    return np.sum(ys[0] * last)


def walrus_in_comprehension_over_rows(x):
    ys = [(last := v * v) for v in x]
    return sum(ys) * last


def walrus_in_a_loop_comprehension(x):
    total = 0.0
    for k in range(3):
        total = total + sum([(w := v * k) for v in (x, x ** 2)]) @ x
        total = total + np.sum(w)
    return total


@pytest.mark.parametrize("f", [walrus_in_if, walrus_in_while, walrus_in_while_run_time,
                               walrus_in_comprehension, walrus_in_comprehension_over_rows,
                               walrus_in_a_loop_comprehension])
def test_walrus(f):
    check(f, X)


def walrus_while_else(x):
    while (s := np.sum(x)) > 9.0:
        x = x / 2
    else:
        x = x * s
    return np.sum(x)


def test_walrus_in_a_while_test_with_else_is_refused():
    refused(walrus_while_else, X, words=["(:=)", "'else:'", "hint:"])


# ----- del -----


def delete_a_name(x):
    y = x * 2.0
    z = np.sin(y) + 1.0
    del y
    return np.sum(z ** 2)


def delete_an_argument(x, y):
    z = x * y
    del x
    x = z ** 2
    return np.sum(x + y)


def delete_items(x):
    d = {"a": x, "b": np.exp(x), "c": x * 3.0}
    del d["a"]
    parts = [x, x * 3.0, np.sin(x), x * 4.0]
    del parts[0], parts[-1]
    del parts[1:]
    return np.sum(d["b"] * parts[0]) + len(d) * np.sum(d["c"]) + len(parts)


def delete_in_a_loop(x):
    acc = 0.0
    for i in range(len(x)):
        y = x * i
        acc = acc + np.sum(np.sin(y))
        del y
    return acc


def delete_then_rebind_in_a_loop(x):
    y = x
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum(y ** 2)
        del y
        y = x * (i + 2.0)
    return acc + np.sum(y)


@pytest.mark.parametrize("f", [delete_a_name, delete_items, delete_in_a_loop,
                               delete_then_rebind_in_a_loop])
def test_del(f):
    check(f, X)


def test_del_of_an_argument():
    check(delete_an_argument, X, Y, wrt=(0, 1))


def read_after_del(x):
    y = x * 2.0
    del y
    return np.sum(y)


def read_after_del_on_a_path(x):
    y = x * 2.0
    if np.sum(x) > 0:
        del y
    return np.sum(y)


def read_after_del_in_a_loop(x):
    acc = 0.0
    for i in range(len(x)):
        y = x * i
        acc = acc + np.sum(y)
        del y
    return acc + np.sum(y)


def del_from_the_callers_dict(d):
    del d["a"]
    return np.sum(d["b"])


def del_array_element(x):
    y = x * 2
    del y[0]
    return np.sum(y)


def test_del_refusals():
    for f, line in [(read_after_del, "del y' at line"), (read_after_del_on_a_path, "del y'"),
                    (read_after_del_in_a_loop, "del y'")]:
        text = refused(f, X, words=[line, "NameError", "hint:"])
        assert "return" in text
    refused(del_from_the_callers_dict, {"a": X, "b": Y}, words=["the caller passed", "hint:"])
    refused(del_array_element, X, words=["'del y[0]'", "np.delete"])


# ----- methods of constants -----


def dict_comprehension_by_prefix(params):
    ws = {k: v for k, v in params.items() if k.startswith("W")}
    return sum(np.sum(v ** 2) for v in ws.values())


def string_methods(params):
    total = 0.0
    for k in params:
        kind, index = k.lower().split("_")
        if kind.endswith("w") and "{}_{}".format(kind, index).replace("_", "").upper() == (
                "W" + index):
            total = total + np.sum(np.sin(params[k])) * int(index) * (1, 2, 3).index(2)
    return total + len("-".join(["a", "b"])) + (7).bit_length()


@pytest.mark.parametrize("f", [dict_comprehension_by_prefix, string_methods])
def test_methods_of_constants(f):
    check(f, {"W_1": X, "b_1": Y, "W_2": X * Y})


def method_of_a_constant_on_a_value(x):
    return np.sum(x) * "abc".count(np.sum(x))


def test_method_of_a_constant_with_a_run_time_argument_is_refused():
    refused(method_of_a_constant_on_a_value, X, words=["a method of a constant", "hint:"])


# ----- type(t) in (list, tuple), isinstance, recursion over structures -----


def by_type(t):
    if type(t) in (list, tuple):
        return sum(by_type(s) for s in t)
    return np.sum(t ** 2)


def by_isinstance(t):
    if isinstance(t, (list, tuple)):
        return sum(by_isinstance(s) for s in t)
    if isinstance(t, dict):
        return sum(by_isinstance(v) * 2.0 for v in t.values())
    return np.sum(np.sin(t))


def by_exact_type(t, depth=0):
    if type(t) is list:
        return sum(by_exact_type(s, depth + 1) for s in t) * 2.0
    if type(t) is tuple:
        return sum(by_exact_type(s, depth + 1) for s in t)
    if type(t) not in (list, tuple, dict) and not isinstance(t, list):
        return np.sum(np.cos(t)) * (depth + 1)
    return 0.0


@pytest.mark.parametrize("f, t", [
    (by_type, [X, [X * 2.0, Y]]), (by_type, (X, (Y,))), (by_isinstance, {"a": [X, (Y, X)], "b": Y}),
    (by_exact_type, [X, (Y, [X * Y])]), (by_exact_type, (X, [Y]))])
def test_recursion_over_nested_structures(f, t):
    check(f, t)


@pytest.mark.parametrize("f", [by_type, by_isinstance, by_exact_type])
def test_kind_tests_on_an_array_argument(f):
    check(f, X)


def with_a_literal_list(x):
    parts = [x, x * 2.0]
    pair = (x, np.sin(x))
    return np.sum(x) * (isinstance(parts, list) + 2.0 * (type(pair) is tuple)
                        + 4.0 * (type(parts) is tuple))


def test_kind_of_a_list_written_in_the_code():
    check(with_a_literal_list, X)
    np.testing.assert_allclose(ad.grad(with_a_literal_list)(X), 3.0 * np.ones_like(X))


def halves(t):
    rest = t[1:]  # a slice of a list argument: a list or a tuple, not known which
    if type(rest) is list:
        return np.sum(rest[0])
    return np.sum(t[0])


def test_list_or_tuple_unknown_is_refused_for_is():
    refused(halves, [X, Y], words=["list or a tuple", "hint:"])


def depth_at_run_time(x, n):
    if n <= 0:
        return np.sum(x)
    return depth_at_run_time(x * 1.1, n - 1)


def test_recursion_whose_depth_is_decided_at_run_time():
    refused(depth_at_run_time, X, 3.0, words=["recursive call to 'depth_at_run_time'",
                                               "hint:"])


def heavy_recursion(t, n):
    if n > 0:
        return sum(heavy_recursion(s, n - 1) for s in [[t * k for k in range(1)]
                                                        for _ in range(1)][0])
    return np.sum(t)


def test_recursion_deeper_than_pythons_stack_is_an_autodiff_error():
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        refused(heavy_recursion, X, 3.0, words=["recursive call to 'heavy_recursion'",
                                                "too deep", "hint:"])
    finally:
        sys.setrecursionlimit(limit)


# ----- generators -----


def scaled(x, n):
    for k in range(n):
        yield x * (k + 1.0)


def pairs(x):
    for k in range(3):
        yield k, np.sin(x * (k + 1.0))


def first_ones(x, stop):
    for k in range(10):
        if k == stop:
            return
        yield x ** (k + 1)


def chained(x):
    yield x
    yield from scaled(x, 2)
    if np.sum(x) > 100.0:
        return
    yield np.sin(x)


def generator_defined_inside(x):
    def layers(x):
        for k in range(3):
            yield x * k
    return sum(np.sum(v) for v in layers(x))


def generator_summed(x):
    return sum(np.sum(np.cos(v)) for v in scaled(x, 3)) + np.sum(list(scaled(x, 2))[1] ** 2)


def generator_in_a_for_loop(x):
    total = 0.0
    for k, v in pairs(x):
        total = total + np.sum(v) * (k + 1)
    return total


def generator_of_run_time_length(x):
    total = 0.0
    for v in scaled(x, len(x)):
        total = total + np.sum(v ** 2)
    return total


def generator_with_yield_from_and_return(x):
    return sum([np.sum(v ** 2) for v in chained(x)])


def generator_ended_by_return(x):
    a, b, c = first_ones(x, 3)
    return np.sum(a * b + c) + len(list(first_ones(x, 2)))


def generator_of_dicts(x):
    def layers(x):
        for k in range(2):
            yield {"w": x * (k + 1.0), "k": k}
    return sum(np.sum(layer["w"] ** 2) * layer["k"] for layer in layers(x))


def generator_unpacked(x):
    a, b = scaled(x, 2)
    return np.sum(np.tanh(a) * b)


@pytest.mark.parametrize("f", [
    generator_defined_inside, generator_summed, generator_in_a_for_loop,
    generator_of_run_time_length, generator_with_yield_from_and_return,
    generator_ended_by_return, generator_of_dicts, generator_unpacked])
def test_generators(f):
    check(f, X)


def test_a_generator_is_run_to_its_end_where_it_is_called():
    np.testing.assert_allclose(ad.grad(generator_defined_inside)(X), 3.0 * np.ones_like(X))
    np.testing.assert_allclose(ad.grad(generator_ended_by_return)(X),
                               6.0 * X ** 2)  # x * x**2 + x**3: three items


def sends(x):
    def inner(x):
        got = yield x
        yield got
    return sum(np.sum(v) for v in inner(x))


def returns_a_value(x):
    def inner(x):
        yield x
        return 3.0
    return sum(np.sum(v) for v in inner(x))


def endless(x):
    def inner(x):
        k = 0.0
        while True:
            yield x * k
            k = k + 1.0
    for v in inner(x):
        return np.sum(v)


def is_a_generator(x):
    yield np.sum(x)


def test_generator_refusals():
    refused(sends, X, words=["the value of a 'yield' expression", "hint:"])
    refused(returns_a_value, X, words=["returns a value", "hint:"])
    refused(endless, X, words=["never ends", "hint:"])
    refused(is_a_generator, X, words=["'yield'"])


# ----- a name that is an int on one path and a tuple on another -----

WIDE = False
WEIGHTS = np.linspace(0.5, 2.0, 7)


def pad_by_setting(x, mode="same"):
    p = 1 if mode == "same" else (1, 2)
    return np.sum(np.pad(x, p)[:6] * WEIGHTS[:6] * np.pad(x, p)[:6])


def pad_by_global(x):
    p = (2, 1) if WIDE else 1
    return np.sum(np.pad(np.sin(x), p)[:6] * WEIGHTS[:6])


def pad_by_data(x):
    p = 1 if np.sum(x) > 0 else (2, 1)
    return np.sum(np.pad(x ** 2, p)[:6] * WEIGHTS[:6])


def pad_by_data_in_if(x):
    if np.sum(x) > 0:
        p = 1
    else:
        p = (2, 1)
    return np.sum(np.pad(x ** 2, p)[:6] * WEIGHTS[:6])


@pytest.mark.parametrize("f", [pad_by_setting, pad_by_global, pad_by_data, pad_by_data_in_if])
def test_a_pad_width_that_is_an_int_or_a_tuple(f):
    check(f, X)
    check(f, -X)  # the other path, by the same derivatives
    if f is pad_by_setting:
        check_with_jit(lambda x: pad_by_setting(x, "valid"), X)


# ----- in-place updates through a view of a local copy -----


def view_scaled(x):
    v = x.copy()
    s = v[1:]
    s[0] *= 3
    return np.sum(v ** 2)


def view_added(x, y):
    v = x.copy()
    s = v[1:]
    s += y * x[0]
    return np.sum(v ** 2) * np.sum(s)


def view_assigned(x, y):
    v = x * 2.0
    s = v[1:]
    s[...] = np.sin(y) * x[0]
    return np.sum(v ** 2) + np.sum(s * x[1:])


def view_of_a_view(x, y):
    v = np.outer(x, x)
    a = v[1:, :]
    s = a[:, 1:]
    s[0] = y ** 2
    s *= 2.0
    w = v.T
    w[0, 0] = x[2] * 3
    return np.sum(np.sin(v)) + np.sum(a[:, 1:] * s[0])


def views_beside_each_other(x, y):
    v = x.copy()
    head = v[:2]  # taken before the update, read after it: NumPy shows the update
    s = v[1:]
    s[0] = y[0] * y[1]
    return np.sum(head ** 2) + np.sum(v * x)


def view_in_a_loop(x, y):
    v = x.copy()
    for i in range(3):
        s = v[1:]
        s[i] *= y[i]
        v = v * 1.5
    return np.sum(v ** 2)


def view_added_in_a_loop(x, y):
    v = x.copy()
    for i in range(len(y)):
        s = v[::-1][:3]
        s += y * i
        v = np.tanh(v)
    return np.sum(v ** 2)


@pytest.mark.parametrize("f, args", [
    (view_scaled, (X,)), (view_added, (X, Y[:3])), (view_assigned, (X, Y[:3])),
    (view_of_a_view, (X, Y[:3])), (views_beside_each_other, (X, Y[:3])),
    (view_in_a_loop, (X, Y[:3])), (view_added_in_a_loop, (X, Y[:3]))])
def test_updates_through_a_view_of_a_local_copy(f, args):
    check(f, *args, wrt=tuple(range(len(args))))


def test_the_update_reaches_the_array_and_not_the_callers():
    x = X.copy()
    value, gradient = ad.value_and_grad(view_scaled)(x)
    expected = x.copy()
    expected[1] *= 3
    np.testing.assert_allclose(value, np.sum(expected ** 2))
    np.testing.assert_allclose(gradient, 2.0 * expected * np.array([1.0, 3.0, 1.0, 1.0]))
    np.testing.assert_array_equal(x, X)


def view_reshaped(x, y):
    v = x.copy()
    s = v.reshape(2, 2)
    s[0] = y[:2]
    return np.sum(v)


def view_by_integers(x):
    v = x.copy()
    s = v[0]
    s += 1.0
    return np.sum(v)


def view_of_an_array_the_loop_keeps(x, y):
    v = x.copy()
    for i in range(3):
        head, s = v[:1], v[1:]  # (a view the loop's scan does not see taken)
        s[i] = s[i] * y[i] + head[0]
    return np.sum(v ** 2)


def views_taken_in_a_loop(x, y):
    v = x.copy()
    for i in range(3):
        s = v[1:]
        s[i] *= y[i]
        t = v[::-1]
        t[0] += s[0] * 2.0
    return np.sum(v ** 2) + np.sum(t)


def test_views_taken_and_updated_in_a_loop_update_the_array_it_carries():
    check(views_taken_in_a_loop, X, Y[:3], wrt=(0, 1))


def view_of_the_argument(x):
    s = x[1:]
    s[0] = 2.0
    return np.sum(x)


def test_updates_through_views_refused():
    refused(view_reshaped, X, Y, words=["a view made by reshape", "hint:"])
    refused(view_by_integers, X, words=["integers alone", "hint: update the array itself"])
    refused(view_of_an_array_the_loop_keeps, X, Y,
            words=["a view of 'v', inside a loop that does not assign 'v'", "hint:"])
    refused(view_of_the_argument, X, words=["the caller's array would change"])


# ----- a differentiated function with *args and **kwargs -----


def star(*args, **kw):
    return np.sum(args[0] ** 2) * kw.get("s", 1.0)


def star_with_names(x, *rest, scale=1.0, **kw):
    total = np.sum(np.sin(x) * x) * scale
    for r in rest:
        total = total + np.sum(np.sin(r) * x)
    for k, v in kw.items():
        total = total + np.sum(v ** 3) * len(k)
    return total


def test_star_arguments_by_index():
    check(star, X)
    check(star, X, Y)  # (y carries no gradient)
    check(star_with_names, X, Y, X * Y, wrt=(0, 1, 2))


def test_star_arguments_with_keywords():
    got = ad.grad(star, wrt="s")(X, Y, s=2.0)
    np.testing.assert_allclose(got, np.sum(X ** 2))
    np.testing.assert_allclose(ad.grad(star, wrt="kw['s']")(X, s=2.0), np.sum(X ** 2))
    np.testing.assert_allclose(ad.grad(star)(X, Y, s=2.0), 4.0 * X)
    gradients = ad.grad(star_with_names, wrt=(0, "rest[0]", 2, "zz", "scale"))(
        X, Y, X * 2.0, scale=2.0, zz=Y)
    expected = ad.numeric_grad(lambda x, r0, r1, zz, scale: star_with_names(
        x, r0, r1, scale=scale, zz=zz), X, Y, X * 2.0, Y, 2.0, wrt=(0, 1, 2, 3, 4))
    for ours, theirs in zip(gradients, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    value, derivative = ad.jvp(star_with_names, wrt=(0, "zz"))(X, Y, zz=Y, tangent=(X, Y))
    np.testing.assert_allclose(value, star_with_names(X, Y, zz=Y))
    dx, dzz = ad.numeric_grad(lambda x, zz: star_with_names(x, Y, zz=zz), X, Y, wrt=(0, 1))
    np.testing.assert_allclose(derivative, np.sum(dx * X) + np.sum(dzz * Y), rtol=1e-6)
    np.testing.assert_allclose(ad.grad(star, jit=True)(X, Y, s=2.0), 4.0 * X)
    np.testing.assert_allclose(ad.hessian(star)(X, s=3.0), 6.0 * np.eye(len(X)))


def test_the_derivative_keeps_the_signature():
    import inspect
    assert str(inspect.signature(ad.grad(star))) == "(*args, **kw)"
    assert "def star_grad(args_0, *, s):" in ad.grad(star).source_for(X, s=2.0)


def test_star_refusals():
    with pytest.raises(ad.WrtError, match=r"wrt='s' is not an argument of star\(args_0\)"):
        ad.grad(star, wrt="s")(X)


def view_by_a_mask(x):
    v = x.copy()
    s = v[x > 0]
    s[0] = 100.0
    return np.sum(v)


def test_a_view_that_may_be_a_copy_is_refused():
    refused(view_by_a_mask, X, words=["indexing by a value known only when the code runs",
                                      "hint:"])


# ----- an array as a default argument -----

W = np.array([0.5, 1.5, 2.5, -1.0])


def weighted_by_default(x, w=np.array([0.5, 1.5, 2.5, -1.0])):
    return np.sum(np.sin(x) * w ** 2)


def helper_with_an_array_default(y, w=np.array([0.5, 1.5, 2.5, -1.0]), scale=2.0):
    return np.sum(y * w) * scale


def calls_a_helper_with_an_array_default(x):
    return helper_with_an_array_default(np.sin(x) * x)


def local_function_with_an_array_default(x):
    def inner(y, w=W * 2.0):
        return np.sum(np.cos(y) * w)
    return inner(x) + inner(x, x)


@pytest.mark.parametrize("f", [weighted_by_default, calls_a_helper_with_an_array_default,
                               local_function_with_an_array_default])
def test_an_array_as_a_default_argument(f):
    check(f, X)


def test_the_default_array_differentiated():
    check(weighted_by_default, X, W, wrt=1)


# ----- lists and tuples of different lengths on two paths -----


def index_chosen_by_data(x):
    p = (0, 1) if np.sum(x) > 0 else (1,)  # a tuple: an index of two axes, or of one
    return np.sum(x[p] ** 2)


def list_grown_on_one_path(x):
    parts = [x[0]]
    if np.sum(x) > 0:
        parts = parts + [np.sin(x[1])]
    return sum(parts) * x[2]


def test_paths_leaving_sequences_of_different_lengths():
    table = np.array([[0.5, -1.0, 2.0], [1.5, 0.7, -0.3]])
    check(index_chosen_by_data, table)
    check(index_chosen_by_data, -table)
    check(list_grown_on_one_path, X)
    check(list_grown_on_one_path, -X)


def advances_a_generator(x):
    items = scaled(x, 3)
    return np.sum(next(items))


def test_next_of_a_generator_is_refused():
    refused(advances_a_generator, X, words=["'next(items)' advances a generator", "hint:"])


def test_a_derivative_of_a_star_function_is_kept():
    assert ad.grad(star) is ad.grad(star)
    assert ad.grad(star, wrt="s") is not ad.grad(star)


def view_of_an_array_updated_since(x):
    v = x.copy()
    s = v[1:]
    v[0] = 5.0
    s[0] = 3.0 * x[1]
    return np.sum(v * x)


def view_of_an_array_rebound_since(x):
    v = x.copy()
    s = v[1:]
    v = v * 2
    s[0] = 3.0
    return np.sum(v * x) + np.sum(s)


def view_in_a_function_defined_inside(x):
    v = x.copy()

    def bump():
        s = v[1:]
        s[0] = 3.0
        return np.sum(s)
    return bump() + np.sum(v * x)


def test_a_view_whose_array_no_name_holds_is_refused():
    for f in [view_of_an_array_updated_since, view_of_an_array_rebound_since,
              view_in_a_function_defined_inside]:
        refused(f, X, words=["a view of an array no name holds now", "hint:"])


def rows_written_through_views(x, y):
    out = np.zeros((3, 4))
    for i in range(3):
        row = out[i]
        row[:] = x * y[i]
        row[1:] *= np.sin(x[1:])
    return np.sum(out ** 2)


def test_rows_written_through_views_in_a_loop():
    check(rows_written_through_views, X, Y[:3], wrt=(0, 1))


class Summing:
    def __init__(self):
        self.w = np.array([0.5, 1.5, 2.5, -1.0])

    def forward(self, *xs, scale=1.0):
        return sum(np.sum(np.sin(v) * self.w) for v in xs) * scale


def test_a_bound_method_and_a_partial_with_star_parameters():
    import functools
    model = Summing()
    for wrt, other in [(0, 1), (1, 0)]:
        got = ad.grad(model.forward, wrt=wrt)(X, Y, scale=2.0)
        args = [X, Y]
        expected = ad.numeric_grad(lambda a: model.forward(
            *(a if i == wrt else args[i] for i in range(2)), scale=2.0), args[wrt])
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    partial = functools.partial(star, s=3.0)
    np.testing.assert_allclose(ad.grad(partial)(X), 6.0 * X)
