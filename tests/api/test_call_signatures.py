"""Code compiled per call signature: what the code needs while compiling (a rank, a
dtype, an int argument, a module's constant) known from each call.

Each function here was refused before (an ``axis`` or an ``ord`` computed from
``x.ndim``, an einsum spec built from it, ``x.shape[:-1] + (k, 2)``, ``ord=ORD``):
its gradient, its JVP and its second derivatives are checked against central
differences, for calls of several ranks and settings.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(23)

ORD = 2
SPEC = "ij,j->i"


def norm_of_a_global_order(x):
    return np.linalg.norm(x, ord=ORD)


def norm_of_an_int_order(x, p):
    return np.linalg.norm(x, ord=p) ** 2


def einsum_of_a_global_spec(A, v):
    return np.sum(np.tanh(np.einsum(SPEC, A, v)))


def einsum_spelled_from_the_rank(x):
    letters = "abcdefgh"[:x.ndim]
    return np.einsum(letters + "->", np.sin(x) * x)


def last_axis_from_the_rank(x):
    axis = x.ndim - 1
    return np.sum(np.cumsum(x, axis=axis) ** 2)


def norm_over_all_but_the_first_axis(x):
    return np.sum(np.linalg.norm(x, axis=tuple(range(1, x.ndim))) ** 3)


def pairs_of_the_last_axis(x):
    batch = x.shape[:-1]
    y = x.reshape(batch + (x.shape[-1] // 2, 2))
    return np.sum(y[..., 0] * np.exp(y[..., 1]))


def padded_by_an_int_or_a_pair(x, k):
    if isinstance(k, int):
        k = (k, k)
    return np.sum(np.pad(x, [k] * x.ndim) ** 2 * 0.5 + np.pad(x, [k] * x.ndim))


def cast_to_its_own_dtype(x):
    return np.sum(np.sin(x.astype(x.dtype)) * x)


def batch_of_one(x):
    ones = np.ones((1, *x.shape))
    return np.sum(ones * np.tanh(x).reshape(*x.shape) * x)


def eps_of_its_dtype(x):
    eps = np.finfo(x.dtype).eps
    return np.sum(np.log(x * x + eps))


CASES = [
    (norm_of_a_global_order, lambda: [rng.normal(size=4)]),
    (norm_of_an_int_order, lambda: [rng.normal(size=4), 3]),
    (norm_of_an_int_order, lambda: [rng.normal(size=4), 2]),
    (einsum_of_a_global_spec, lambda: [rng.normal(size=(2, 3)), rng.normal(size=3)]),
    (einsum_spelled_from_the_rank, lambda: [rng.normal(size=(2, 3))]),
    (einsum_spelled_from_the_rank, lambda: [rng.normal(size=4)]),
    (last_axis_from_the_rank, lambda: [rng.normal(size=(2, 3))]),
    (last_axis_from_the_rank, lambda: [rng.normal(size=(2, 1, 3))]),
    (norm_over_all_but_the_first_axis, lambda: [rng.normal(size=(2, 3, 2))]),
    (norm_over_all_but_the_first_axis, lambda: [rng.normal(size=(3, 2))]),
    (pairs_of_the_last_axis, lambda: [rng.normal(size=(3, 4))]),
    (pairs_of_the_last_axis, lambda: [rng.normal(size=(2, 1, 2))]),
    (padded_by_an_int_or_a_pair, lambda: [rng.normal(size=(2, 3)), 1]),
    (padded_by_an_int_or_a_pair, lambda: [rng.normal(size=3), (1, 2)]),
    (cast_to_its_own_dtype, lambda: [rng.normal(size=(2, 2))]),
    (eps_of_its_dtype, lambda: [rng.normal(size=3)]),
    (batch_of_one, lambda: [rng.normal(size=(2, 3))]),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                                  enumerate(CASES)])
def test_code_needing_the_call_signature_is_differentiated(f, make):
    args = make()
    check_against_finite_differences(f, args, second_order=True)
    check_with_jit(f, *args)


def test_one_derivative_serves_calls_of_every_rank_and_setting():
    derivative = ad.grad(norm_of_an_int_order)
    for p in (2, 3, 4, 2):
        x = rng.normal(size=5)
        np.testing.assert_allclose(derivative(x, p), ad.numeric_grad(
            norm_of_an_int_order, x, p), rtol=1e-6, atol=1e-9)
    derivative = ad.grad(last_axis_from_the_rank)
    for shape in ((3,), (2, 3), (2, 1, 3), (3,)):
        x = rng.normal(size=shape)
        np.testing.assert_allclose(derivative(x), ad.numeric_grad(last_axis_from_the_rank, x),
                                   rtol=1e-6, atol=1e-9)


def test_a_float32_call_compiles_its_own_code():
    x = rng.normal(size=3)
    single = ad.grad(cast_to_its_own_dtype)(x.astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, ad.grad(cast_to_its_own_dtype)(x), rtol=1e-5)


@pytest.mark.parametrize("jit", [False, True])
def test_a_module_constant_read_as_a_setting_is_checked_at_every_call(monkeypatch, jit):
    derivative = ad.grad(norm_of_a_global_order, jit=jit)
    x = rng.normal(size=4)
    np.testing.assert_allclose(derivative(x), x / np.linalg.norm(x), rtol=1e-12)
    monkeypatch.setattr(f"{__name__}.ORD", np.inf)
    x = np.array([0.5, -3.0, 1.0, 2.0])
    np.testing.assert_allclose(derivative(x), [0.0, -1.0, 0.0, 0.0])
    monkeypatch.setattr(f"{__name__}.ORD", 1)
    np.testing.assert_allclose(derivative(x), np.sign(x))


def test_an_int_argument_steers_the_code_of_each_call_with_jit():
    derivative = ad.grad(norm_of_an_int_order, jit=True)
    x = rng.normal(size=4)
    for p in (2, 3, 2, 4):
        np.testing.assert_allclose(derivative(x, p), ad.numeric_grad(
            norm_of_an_int_order, x, p), rtol=1e-6, atol=1e-9)


def test_the_source_says_it_is_compiled_per_call_and_shows_each_calls_code():
    derivative = ad.grad(einsum_spelled_from_the_rank)
    assert "source_for" in derivative.source
    matrix, vector = rng.normal(size=(2, 3)), rng.normal(size=3)
    assert "'ab->'" in derivative.source_for(matrix)
    assert "'a->'" in derivative.source_for(vector)
    compile(derivative.source_for(vector), "<generated>", "exec")


def frexp_on_the_path(x):
    return np.sum(np.frexp(x)[0])


def frexp_on_a_path_steered_by_the_rank(x):
    if x.ndim == 2:
        x = x.sum(axis=0)
    return np.sum(np.frexp(x)[0])


def test_a_refusal_no_call_could_answer_comes_when_the_derivative_is_made():
    with pytest.raises(ad.UnknownFunctionError, match="frexp") as info:
        ad.grad(frexp_on_the_path)
    assert info.value.lineno == frexp_on_the_path.__code__.co_firstlineno + 1


def test_a_refusal_of_code_compiled_per_call_comes_at_the_call_at_the_users_line():
    derivative = ad.grad(frexp_on_a_path_steered_by_the_rank)
    with pytest.raises(ad.UnknownFunctionError, match="frexp") as info:
        derivative(np.ones((2, 3)))
    assert info.value.lineno == frexp_on_a_path_steered_by_the_rank.__code__.co_firstlineno + 3
    assert info.value.filename.endswith("test_call_signatures.py")


def cumulative_loss(params, x):
    axis = x.ndim - 1
    return np.sum(np.cumsum(np.tanh(x @ params["W"]), axis=axis) ** 2)


def test_structures_and_call_signatures_together():
    params = {"W": rng.normal(size=(3, 2))}
    for x in (rng.normal(size=3), rng.normal(size=(4, 3))):
        got = ad.grad(cumulative_loss)(params, x)
        want = ad.numeric_grad(cumulative_loss, params, x)
        np.testing.assert_allclose(got["W"], want["W"], rtol=1e-6, atol=1e-9)
        assert ad.check_grad(cumulative_loss, params, x).passed


def test_every_transform_of_code_compiled_per_call():
    x, p = rng.normal(size=4), 3
    gradient = ad.numeric_grad(norm_of_an_int_order, x, p)
    value, got = ad.value_and_grad(norm_of_an_int_order)(x, p)
    assert value == pytest.approx(norm_of_an_int_order(x, p))
    np.testing.assert_allclose(got, gradient, rtol=1e-6)
    np.testing.assert_allclose(ad.vjp(norm_of_an_int_order)(x, p, 2.0), 2 * gradient, rtol=1e-6)
    np.testing.assert_allclose(ad.jacobian(norm_of_an_int_order)(x, p), gradient, rtol=1e-6)
    hessian = ad.hessian(norm_of_an_int_order)(x, p)
    rows = [ad.numeric_grad(lambda v, i=i: ad.grad(norm_of_an_int_order)(v, p)[i], x)
            for i in range(len(x))]
    np.testing.assert_allclose(hessian, np.array(rows), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def padded_by_keyword(x, *, width=2):
    return np.sum(np.pad(x, [(width, width)] * x.ndim) ** 2) + np.linalg.norm(x, ord=ORD)


def test_keyword_only_ints_are_settings_of_each_call():
    x = rng.normal(size=(2, 3))
    for width in (0, 1, 3):
        np.testing.assert_allclose(
            ad.grad(padded_by_keyword)(x, width=width),
            ad.numeric_grad(lambda v, w=width: padded_by_keyword(v, width=w), x),
            rtol=1e-6, atol=1e-9)


def inner_product_of_a_jvp(x, p):
    return ad.jvp(norm_of_an_int_order)(x, p, np.ones(x.shape[0]))[1]


def test_a_derivative_compiled_per_call_called_in_differentiated_code():
    x = rng.normal(size=4)
    for p in (2, 3):
        np.testing.assert_allclose(ad.grad(inner_product_of_a_jvp)(x, p), ad.numeric_grad(
            inner_product_of_a_jvp, x, p), rtol=1e-5, atol=1e-8)


def test_an_int_differentiated_argument_is_refused_as_a_setting():
    with pytest.raises(ad.ArgumentKindError, match="compiled for each call's ints"):
        ad.grad(norm_of_an_int_order)(3, 2)


def test_the_code_of_each_call_exports():
    derivative = ad.grad(norm_of_an_int_order)
    namespace: dict = {}
    exec(compile(derivative.export_for(rng.normal(size=3), 3), "<export>", "exec"), namespace)
    x = rng.normal(size=3)
    exported = next(v for k, v in namespace.items() if k.endswith("_grad"))
    np.testing.assert_allclose(exported(x, 3), derivative(x, 3), rtol=1e-12)


def norm_of_a_layer(params, x):
    W = params["W"]
    axis = W.ndim - 2
    h = np.cumsum(x @ W, axis=axis)
    return np.linalg.norm(h, ord=params["p"]) ** 2


@pytest.mark.parametrize("order", [2, 3])
def test_the_ranks_of_a_structures_arrays_are_known_for_each_call(order):
    params = {"W": rng.normal(size=(3, 2)), "p": order}
    x = rng.normal(size=3)
    got = ad.grad(norm_of_a_layer)(params, x)
    np.testing.assert_allclose(got["W"], ad.numeric_grad(norm_of_a_layer, params, x)["W"],
                               rtol=1e-6, atol=1e-9)
    assert ad.check_grad(norm_of_a_layer, params, x).passed
    assert "axis=0" in ad.grad(norm_of_a_layer).source_for(params, x)


def unpacks_an_array_in_a_tuple(x):
    return np.sum(np.array((1.0, *x)) ** 2)


def test_unpacking_an_array_in_a_tuple_is_refused_at_the_line():
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"'\*x' unpacks a value known only "
                       "when the code runs") as info:
        ad.grad(unpacks_an_array_in_a_tuple)(np.ones(2))
    assert info.value.lineno == unpacks_an_array_in_a_tuple.__code__.co_firstlineno + 1
    assert "x[0], x[1]" in info.value.hint
