"""Functions with rules of their own (``custom_grad``, ``register_gradient``) that take
dicts, lists and tuples of arrays: the function gets the structure as it is, its VJP
rule returns gradients in that structure and its JVP rule takes tangents in it. Every
gradient is checked against central differences, leaf by leaf, in float64."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad

rng = np.random.default_rng(3)


def _normal(*shape):
    return rng.normal(size=shape)


@ad.custom_grad
def dense(params, x):
    return np.tanh(x @ params["W"] + params["b"])


@dense.defvjp
def _(g, ans, params, x):
    dz = g * (1.0 - ans ** 2)
    return {"W": x.T @ dz, "b": np.sum(dz, axis=0)}, dz @ params["W"].T


@dense.defjvp("params")
def _(t, ans, params, x):
    return (1.0 - ans ** 2) * (x @ t["W"] + t["b"])


@dense.defjvp("x")
def _(t, ans, params, x):
    return (1.0 - ans ** 2) * (t @ params["W"])


def dense_loss(params, x):
    h = dense(params, x)
    return np.sum(h ** 2) + 0.5 * np.sum(params["W"] * params["W"])


@ad.custom_grad
def chain(layers, x):
    for W, b in layers:
        x = np.tanh(x @ W + b)
    return x


@chain.defvjp
def _(g, ans, layers, x):
    # the rule recomputes what it needs: two layers, known when it is written
    (W1, b1), (W2, _) = layers
    h = np.tanh(x @ W1 + b1)
    dz2 = g * (1.0 - ans ** 2)
    dh = dz2 @ W2.T
    dz1 = dh * (1.0 - h ** 2)
    return [(x.T @ dz1, np.sum(dz1, axis=0)), (h.T @ dz2, np.sum(dz2, axis=0))], dz1 @ W1.T


def chain_loss(layers, x):
    return np.sum(chain(layers, x) ** 2)


@ad.custom_grad
def frozen_scale(params, x):
    return params["scale"] * np.sum(params["w"] * x)


@frozen_scale.defvjp
def _(g, ans, params, x):
    return {"w": g * params["scale"] * x, "scale": None}, g * params["scale"] * params["w"]


def frozen_loss(params, x):
    return frozen_scale(params, x) + params["scale"] ** 2


@ad.custom_grad
def nested(tree, x):
    return np.sum(tree["enc"]["W"] * x) * tree["gain"]


@nested.defvjp
def _(g, ans, tree, x):
    inner = np.sum(tree["enc"]["W"] * x)
    return {"enc": {"W": g * tree["gain"] * x}, "gain": g * inner}, g * tree["gain"] * tree["enc"]["W"]


def nested_loss(tree, x):
    return np.sin(nested(tree, x))


def built_inside(W, b, x):
    return np.sum(dense({"W": W, "b": b * 2.0}, x))


def _numeric(fn, args, wrt):
    return ad.numeric_grad(fn, *args, wrt=wrt)


def _assert_leaves_close(got, want):
    pairs = []
    ad.tree.map(lambda g, w: pairs.append((g, w)), got, want)
    assert pairs
    for g, w in pairs:
        assert (g is None) == (w is None)
        if w is not None:
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_a_rule_returns_the_gradient_of_a_dict_as_a_dict():
    params, x = {"W": _normal(3, 2), "b": _normal(2)}, _normal(4, 3)
    for jit in (False, True):
        got = ad.grad(dense_loss, wrt=(0, 1), jit=jit)(params, x)
        _assert_leaves_close(got, _numeric(dense_loss, (params, x), (0, 1)))
    source = ad.grad(dense_loss).source_for(params, x)
    assert "t1 = {'W': params_W, 'b': params_b}" in source and "dense(t1, x)" in source


def test_a_rule_over_a_list_of_layers_and_a_nested_dict():
    layers = [(_normal(3, 4), _normal(4)), (_normal(4, 2), _normal(2))]
    x = _normal(5, 3)
    _assert_leaves_close(ad.grad(chain_loss, wrt=(0, 1))(layers, x),
                         _numeric(chain_loss, (layers, x), (0, 1)))
    tree, y = {"enc": {"W": _normal(3)}, "gain": 0.7}, _normal(3)
    _assert_leaves_close(ad.grad(nested_loss, wrt=(0, 1))(tree, y),
                         _numeric(nested_loss, (tree, y), (0, 1)))


def test_none_in_a_rules_dict_is_no_gradient_for_that_leaf():
    params, x = {"w": _normal(3), "scale": 1.5}, _normal(3)
    got = ad.grad(frozen_loss)(params, x)
    np.testing.assert_allclose(got["w"], params["scale"] * x)
    assert got["scale"] == pytest.approx(2 * params["scale"])  # from the square alone


def test_a_dict_built_inside_is_passed_whole():
    W, b, x = _normal(3, 2), _normal(2), _normal(4, 3)
    got = ad.grad(built_inside, wrt=(0, 1, 2))(W, b, x)
    _assert_leaves_close(got, _numeric(built_inside, (W, b, x), (0, 1, 2)))


def test_forward_mode_takes_tangents_in_the_structure_and_second_order_works():
    params, x = {"W": _normal(3, 2), "b": _normal(2)}, _normal(4, 3)
    direction = {"W": _normal(3, 2), "b": _normal(2)}
    _, along = ad.jvp(dense_loss)(params, x, direction)
    eps = 1e-6
    plus = ad.tree.map(lambda p, d: p + eps * d, params, direction)
    minus = ad.tree.map(lambda p, d: p - eps * d, params, direction)
    expected = (dense_loss(plus, x) - dense_loss(minus, x)) / (2 * eps)
    np.testing.assert_allclose(along, expected, rtol=1e-6)
    product = ad.hvp(dense_loss)(params, x, direction)
    gradient = ad.grad(dense_loss)
    want = ad.tree.map(lambda a, b: (a - b) / (2 * eps), gradient(plus, x), gradient(minus, x))
    _assert_leaves_close(product, want)


@ad.custom_grad
def wrong_keys(params):
    return np.sum(params["W"])


@wrong_keys.defvjp
def _(g, ans, params):
    return {"W": g * np.ones_like(params["W"]), "bias": 0.0}


@ad.custom_grad
def dict_for_an_array(x):
    return np.sum(x)


@dict_for_an_array.defvjp
def _(g, ans, x):
    return {"x": g * np.ones_like(x)}


def test_a_rule_returning_another_structure_is_named():
    with pytest.raises(ad.AutodiffError, match=r"returns \{'W': \*, 'bias': \*\} for the "
                       r"structure \{'W': \*, 'b': \*\}") as info:
        ad.grad(lambda p: wrong_keys(p) * 2.0)({"W": _normal(2), "b": _normal(2)})
    assert "of 'wrong_keys'" in info.value.message and "keys" in info.value.hint
    x = _normal(3)
    with pytest.raises(ad.AutodiffError, match=r"returns \{'x': \*\} for an array"):
        ad.grad(lambda x: dict_for_an_array(np.sin(x)))(x)


def test_a_namedtuple_the_caller_passed_is_refused_by_name():
    from tests.helpers import Layer

    with pytest.raises(ad.AutodiffError, match="passing to 'dense' the Layer object the "
                       "caller passed is not supported") as info:
        ad.grad(lambda layer, x: np.sum(dense(layer, x)))(Layer(_normal(3, 2), _normal(2)),
                                                           _normal(4, 3))
    assert "a dict" in info.value.hint
