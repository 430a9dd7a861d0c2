"""Parameters in dicts, lists, tuples, namedtuples and dataclasses: gradients in the
argument's structure, leaf by leaf, checked against central differences in float64."""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import Layer, Pair, list_mlp, optional_bias


class Model:
    """A model object: its arrays are attributes, its loss a method calling others."""

    eps = 1e-3

    def __init__(self, sizes, seed=0):
        generator = np.random.default_rng(seed)
        self.layers = [Layer(generator.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
                       for m, n in itertools.pairwise(sizes)]
        self.scale = 1.5
        self.name = "mlp"

    @property
    def penalty(self):
        return self.eps * sum(np.sum(layer.W ** 2) for layer in self.layers)

    def predict(self, x):
        for layer in self.layers[:-1]:
            x = np.tanh(x @ layer.W + layer.b)
        last = self.layers[-1]
        return self.scale * (x @ last.W + last.b)

    def loss(self, x, t):
        return np.mean((self.predict(x) - t) ** 2) + self.penalty


# ----- the functions differentiated -----


def dict_mlp(params, x, t):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.mean((h @ params["W2"] + params["b2"] - t) ** 2)


def nested(tree, x):
    total = 0.0
    for name, value in tree["weights"].items():
        total = total + np.sum(np.sin(value * x)) * len(name)
    scale = tree.get("scale", 1.0)
    first, *_ = tree["pairs"]
    return total * scale + np.sum(first.W @ first.b) + tree["pairs"][1].b ** 2


def dataclass_layers(layers, x):
    for layer in layers:
        z = x @ layer.W + layer.b
        x = np.tanh(z) if layer.activation == "tanh" else np.maximum(z, 0.0)
    return np.sum(x ** 2)


def _helper(p, x):
    return np.tanh(x @ p["W"] + p["b"])


def built_inside(W, b, x):
    p = {"W": W, "b": b}
    q = dict(p, b=b * 2.0)
    return np.sum(_helper(p, x) * _helper(q, x))


def with_metrics(params, x):
    y = x @ params["W"]
    loss = np.sum(y ** 2)
    return loss, {"loss": loss, "norm": np.sum(params["W"] ** 2), "rows": len(y)}


def zipped(weights, scales, x):
    total = 0.0
    for i, (w, s) in enumerate(zip(weights, scales)):
        total = total + (i + 1) * s * np.sum(np.cos(w * x))
    return total


# ----- central differences, leaf by leaf -----


def _numeric(fn, args, wrt, eps=1e-6):
    """Central differences of the scalar fn w.r.t. every float leaf of args[wrt]."""
    leaves, structure = ad.tree.flatten(args[wrt])
    grads = []
    for i, leaf in enumerate(leaves):
        if not (isinstance(leaf, float) or isinstance(leaf, np.ndarray)
                and leaf.dtype.kind == "f"):
            grads.append(None)
            continue
        base = np.array(leaf, dtype=float)
        g = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            values = []
            for step in (eps, -eps):
                moved = base.copy()
                moved[index] += step
                new = list(leaves)
                new[i] = float(moved) if isinstance(leaf, float) else moved
                call = list(args)
                call[wrt] = ad.tree.unflatten(structure, new)
                out = fn(*call)
                values.append(out[0] if isinstance(out, tuple) else out)
            g[index] = (values[0] - values[1]) / (2 * eps)
        grads.append(float(g) if isinstance(leaf, float) else g)
    return grads


def _check(fn, args, wrt=0, **options):
    grad = ad.grad(fn, wrt=wrt, **options)(*args)
    if options.get("has_aux"):
        grad, _ = grad
    expected = _numeric(fn, args, wrt)
    pairs = []  # (path, leaf, its gradient), a gradient's None standing for a leaf
    ad.tree.map(lambda leaf, g: pairs.append((leaf, g)), args[wrt], grad)
    paths = [path for path, _ in ad.tree.paths(args[wrt], "arg")]
    assert len(pairs) == len(expected) == len(paths)
    for path, (leaf, got), want in zip(paths, pairs, expected):
        assert (got is None) == (want is None), path
        if want is not None:
            assert type(got) is type(leaf), path
            assert np.shape(got) == np.shape(leaf), path
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=path)
    return grad


rng = np.random.default_rng(0)


def _normal(*shape):
    return rng.normal(size=shape)


def test_a_dict_of_parameters_gets_a_dict_of_gradients():
    params = {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2), "b2": _normal(2)}
    grad = _check(dict_mlp, (params, _normal(5, 3), _normal(5, 2)))
    assert list(grad) == ["W1", "b1", "W2", "b2"]


def test_a_list_of_layer_tuples_of_any_depth():
    for depth in (1, 2, 4):
        layers = [(_normal(3, 3) / 2, _normal(3)) for _ in range(depth - 1)]
        layers.append((_normal(3, 2), 0.5))  # a float bias: a float gradient
        grad = _check(list_mlp, (layers, _normal(4, 3)))
        assert type(grad) is list and all(type(layer) is tuple for layer in grad)


def test_nested_dicts_namedtuples_and_floats():
    tree = {"weights": {"ab": _normal(3), "c": _normal(3)}, "scale": 1.5,
            "pairs": [Pair(_normal(2, 2), _normal(2)), Pair(None, 0.7)]}
    grad = _check(nested, (tree, _normal(3)))
    assert type(grad["pairs"][0]) is Pair and grad["pairs"][1].W is None


def test_a_missing_optional_key_takes_the_default():
    tree = {"weights": {"w": _normal(2)}, "pairs": [Pair(_normal(2, 2), _normal(2)),
                                                    Pair(None, 0.3)]}
    _check(nested, (tree, _normal(2)))


def test_dataclasses_with_a_static_setting_compile_per_setting():
    layers = [Layer(_normal(3, 3), _normal(3)), Layer(_normal(3, 2), _normal(2), "relu")]
    grad = _check(dataclass_layers, (layers, _normal(4, 3)))
    assert type(grad[0]) is Layer and grad[1].activation is None
    relu_only = [Layer(layer.W, layer.b, "relu") for layer in layers]
    _check(dataclass_layers, (relu_only, _normal(4, 3)))


def test_none_leaves_and_int_settings_pass_no_gradient():
    params = {"W": _normal(3, 2), "b": None, "n": 3}
    grad = _check(optional_bias, (params, _normal(4, 3)))
    assert grad["b"] is None and grad["n"] is None
    with_bias = {"W": _normal(3, 2), "b": _normal(2), "n": 2}
    grad = _check(optional_bias, (with_bias, _normal(4, 3)))
    assert grad["b"].shape == (2,)


def test_dicts_built_inside_and_passed_to_helpers():
    for wrt in (0, 1, (0, 1)):
        args = (_normal(3, 2), _normal(2), _normal(4, 3))
        grad = ad.grad(built_inside, wrt=wrt)(*args)
        expected = [ad.numeric_grad(built_inside, *args, wrt=w)
                    for w in (wrt if isinstance(wrt, tuple) else (wrt,))]
        for got, want in zip(grad if isinstance(wrt, tuple) else (grad,), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_has_aux_returns_a_dict_of_metrics():
    params = {"W": _normal(3, 2)}
    x = _normal(4, 3)
    grad = _check(with_metrics, (params, x), has_aux=True)
    _, aux = ad.grad(with_metrics, has_aux=True)(params, x)
    assert set(aux) == {"loss", "norm", "rows"} and aux["rows"] == 4
    np.testing.assert_allclose(aux["norm"], np.sum(params["W"] ** 2))
    (loss, metrics), grad_again = ad.value_and_grad(with_metrics, has_aux=True)(params, x)
    np.testing.assert_allclose(loss, metrics["loss"])
    np.testing.assert_allclose(grad_again["W"], grad["W"])


def test_zip_and_enumerate_over_lists():
    weights, scales, x = [_normal(3), _normal(3)], [0.5, 2.0], _normal(3)
    _check(zipped, (weights, scales, x), wrt=0)
    _check(zipped, (weights, scales, x), wrt=1)
    both = ad.grad(zipped, wrt=(0, 1))(weights, scales, x)
    assert type(both) is tuple and type(both[0]) is list and type(both[1][0]) is float


def test_a_structure_and_an_array_together_and_by_name():
    params = {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2), "b2": _normal(2)}
    x, t = _normal(5, 3), _normal(5, 2)
    dparams, dx = ad.grad(dict_mlp, wrt=("params", "x"))(params, x, t)
    np.testing.assert_allclose(dx, ad.numeric_grad(dict_mlp, params, x, t, wrt=1),
                               rtol=1e-6, atol=1e-8)
    value, by_name = ad.value_and_grad(dict_mlp, wrt="params")(params, x, t)
    np.testing.assert_allclose(value, dict_mlp(params, x, t))
    for key in params:
        np.testing.assert_allclose(by_name[key], dparams[key])


def test_jit_specialises_per_structure_and_shape():
    params = {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2), "b2": _normal(2)}
    x, t = _normal(5, 3), _normal(5, 2)
    general = ad.grad(dict_mlp)(params, x, t)
    fast = ad.grad(dict_mlp, jit=True)
    for key, value in fast(params, x, t).items():
        np.testing.assert_allclose(value, general[key], rtol=1e-12)
    smaller = {"W1": _normal(3, 2), "b1": _normal(2), "W2": _normal(2, 2), "b2": 0.5}
    for key, value in fast(smaller, x, t).items():
        np.testing.assert_allclose(value, ad.grad(dict_mlp)(smaller, x, t)[key], rtol=1e-12)


def test_the_generated_code_reads_leaves_once_and_builds_the_gradient_once():
    params = {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2), "b2": _normal(2)}
    grad = ad.grad(dict_mlp)
    source = grad.source_for(params, _normal(5, 3), _normal(5, 2))
    for key in params:
        assert source.count(f"params['{key}']") == 1
        assert f"params_{key} = params['{key}']" in source
    assert ("dparams = {'W1': dparams_W1, 'b1': dparams_b1, 'W2': dparams_W2, 'b2':"
            in source)
    assert "by_structure" not in source and "compiled for the structure" in grad.source


def test_a_function_reading_arrays_takes_structures_too():
    def total(xs):
        return np.sum(xs[0] * xs[1])

    grad = ad.grad(total)
    a, b = _normal(3), _normal(3)
    np.testing.assert_allclose(grad(np.stack([a, b])), np.stack([b, a]))
    both = grad((a, b))
    assert type(both) is tuple
    np.testing.assert_allclose(both[0], b)
    np.testing.assert_allclose(both[1], a)
    assert "by_structure" in grad.source  # handed over by its first lines


def test_a_write_into_the_callers_structure_runs_as_written():
    # (tests/frontend/test_effects_and_state.py checks these against finite differences)
    def sets(params):
        params["W"] = params["W"] * 2.0
        return np.sum(params["W"])

    def appends(layers):
        layers.append(layers[0])
        return np.sum(layers[0])

    params = {"W": np.ones(2)}
    np.testing.assert_allclose(ad.grad(sets)(params)["W"], [2.0, 2.0])  # read back: 2 W
    np.testing.assert_allclose(params["W"], [2.0, 2.0])  # written, with its forward value
    layers = [np.ones(2)]
    np.testing.assert_allclose(ad.grad(appends)(layers)[0], [1.0, 1.0])
    assert len(layers) == 2 and layers[1] is layers[0]


def test_keys_must_be_known_while_compiling():
    def by_value(params, x):
        key = "W" if np.sum(x) > 0 else "b"
        return np.sum(params[key] * x)

    def missing(params):
        return np.sum(params["V"])

    with pytest.raises(ad.UnsupportedSyntaxError, match="known only when the code runs"):
        ad.grad(by_value)({"W": np.ones(2), "b": np.ones(2)}, np.ones(2))
    with pytest.raises(ad.tree.StructureError, match="no key 'V' .its keys: 'W'"):
        ad.grad(missing)({"W": np.ones(2)})


def test_a_dict_where_an_array_is_needed_is_named():
    def whole(params):
        return np.sum(params)

    with pytest.raises(ad.UnsupportedSyntaxError, match="passes a dict where autodiff needs "
                       "an array") as info:
        ad.grad(whole)({"W": np.ones(2)})
    assert "params['W']" in info.value.hint


def test_differentiating_a_string_or_none_argument_is_refused():
    def scaled(x, mode):
        return np.sum(x) * (2.0 if mode == "double" else 1.0)

    assert ad.grad(scaled)(np.ones(2), "double").tolist() == [2.0, 2.0]
    with pytest.raises(ad.ArgumentKindError, match="'mode', a str"):
        ad.grad(scaled, wrt=1)(np.ones(2), "double")


def test_a_model_object_gets_a_copy_of_itself_holding_gradients():
    model = Model((3, 4, 2))
    x, t = _normal(5, 3), _normal(5, 2)
    grad = _check(Model.loss, (model, x, t))
    assert type(grad) is Model and grad is not model
    assert type(grad.layers[0]) is Layer and grad.name is None
    assert grad.layers[0].W.shape == (3, 4)
    source = ad.grad(Model.loss).source_for(model, x, t)
    assert "(in Model.predict)" in source and "with_fields(self, " in source


def test_a_bound_method_differentiates_its_own_parameters_or_self():
    model = Model((3, 2))
    x, t = _normal(4, 3), _normal(4, 2)
    np.testing.assert_allclose(ad.grad(model.loss)(x, t),
                               ad.numeric_grad(Model.loss, model, x, t, wrt=1), rtol=1e-6)
    by_self = ad.grad(model.loss, wrt="self")(x, t)
    expected = ad.grad(Model.loss)(model, x, t)
    np.testing.assert_allclose(by_self.layers[0].W, expected.layers[0].W)
    model.layers[0].W = model.layers[0].W * 2.0  # read when called: the arrays it holds now
    np.testing.assert_allclose(ad.grad(model.loss, wrt="self")(x, t).layers[0].W,
                               ad.grad(Model.loss)(model, x, t).layers[0].W)
    partial = ad.grad(functools.partial(dict_mlp, {"W1": _normal(3, 2), "b1": _normal(2),
                                                   "W2": _normal(2, 2), "b2": 0.1}))
    assert partial(x, t).shape == (4, 3)


def encoder_decoder(params, x):
    h = np.tanh(x @ params["enc"]["W"] + params["enc"]["b"])
    return np.sum((h @ params["dec"]) ** 2) * params["scale"] + params["steps"]


def _enc_dec():
    return {"enc": {"W": _normal(3, 2), "b": _normal(2)}, "dec": _normal(2), "scale": 0.5,
            "steps": 3}


def test_wrt_names_a_part_of_a_structure_as_check_grad_writes_it():
    params, x = _enc_dec(), _normal(4, 3)
    whole = ad.grad(encoder_decoder, wrt=(0, 1))(params, x)
    for jit in (False, True):
        part = ad.grad(encoder_decoder, wrt="params['enc']", jit=jit)(params, x)
        assert set(part) == {"W", "b"}
        np.testing.assert_allclose(part["W"], whole[0]["enc"]["W"])
        value, (dW, dx) = ad.value_and_grad(encoder_decoder, wrt=("params['enc']['W']", "x"),
                                            jit=jit)(params, x)
        np.testing.assert_allclose(dW, whole[0]["enc"]["W"])
        np.testing.assert_allclose(dx, whole[1])
        assert value == pytest.approx(encoder_decoder(params, x))
    source = ad.grad(encoder_decoder, wrt="params['enc']['b']").source_for(params, x)
    assert "return dparams_enc_b" in source and "dparams_enc_W" not in source
    # every transform and tool takes the same paths
    expected = ad.numeric_grad(encoder_decoder, params, x, wrt="params['enc']")
    np.testing.assert_allclose(expected["b"], whole[0]["enc"]["b"], rtol=1e-6, atol=1e-8)
    pulled = ad.vjp(encoder_decoder, wrt="params['dec']")(params, x, 2.0)
    np.testing.assert_allclose(pulled, 2.0 * whole[0]["dec"])
    direction = {"W": _normal(3, 2), "b": _normal(2)}
    _, along = ad.jvp(encoder_decoder, wrt="params['enc']")(params, x, direction)
    moved = _along(lambda p, x: encoder_decoder(p, x), (params, x),
                   {"enc": direction, "dec": np.zeros(2), "scale": 0.0, "steps": 0})
    assert along == pytest.approx(moved, rel=1e-6)
    hessian = ad.hessian(encoder_decoder, wrt="params['dec']")(params, x)
    product = ad.hvp(encoder_decoder, wrt="params['dec']")(params, x, np.array([1.0, -2.0]))
    np.testing.assert_allclose(hessian @ np.array([1.0, -2.0]), product, rtol=1e-10)
    gradient = ad.grad(encoder_decoder, wrt="params['dec']")
    column = _along(lambda p, x: gradient(p, x), (params, x),
                    {"enc": {"W": np.zeros((3, 2)), "b": np.zeros(2)},
                     "dec": np.array([1.0, 0.0]), "scale": 0.0, "steps": 0})
    np.testing.assert_allclose(hessian[:, 0], column, rtol=1e-6, atol=1e-8)
    jacobian = ad.jacobian(encoder_decoder, wrt="params['enc']", mode="rev")(params, x)
    np.testing.assert_allclose(jacobian["W"], whole[0]["enc"]["W"])
    rows = {row.name for row in ad.check_grad(encoder_decoder, params, x,
                                              wrt=("params['enc']['W']", "x")).rows}
    assert rows == {"params['enc']['W']", "x", "jvp"}


def test_wrt_names_a_field_of_an_object_and_an_item_of_a_list():
    model = Model((3, 2))
    x, t = _normal(4, 3), _normal(4, 2)
    by_path = ad.grad(model.loss, wrt="self.layers[0].W")(x, t)
    np.testing.assert_allclose(by_path, ad.grad(Model.loss)(model, x, t).layers[0].W)
    layers = [(_normal(3, 4), _normal(4)), (_normal(4, 2), _normal(2))]
    np.testing.assert_allclose(ad.grad(list_mlp_loss, wrt="layers[-1][0]")(layers, x),
                               ad.grad(list_mlp_loss)(layers, x)[1][0])


def list_mlp_loss(layers, x):
    return np.sum(list_mlp(layers, x) ** 2)


def test_a_wrt_path_the_argument_does_not_hold_is_named():
    params, x = _enc_dec(), _normal(4, 3)
    cases = {
        "params['W3']": "wrt=\"params['W3']\": params is a dict with the keys 'enc', 'dec', "
                        "'scale', 'steps', and no ['W3']",
        "params.enc": "and no .enc",
        "params['enc']['W'][0]": "params['enc']['W'] is a leaf",
        "params[x]": "is not an argument's name or a part of one",
        "x[0]": "x is an array or a number here, with no parts",
        "params['name']": "no ['name']",
        "params['steps']": "cannot differentiate with respect to 'params['steps']', a int",
    }
    for wrt, message in cases.items():
        with pytest.raises(ad.AutodiffError, match=re.escape(message)):
            ad.grad(encoder_decoder, wrt=wrt)(params, x)
    with pytest.raises(ad.WrtError, match="names the argument 'params' twice"):
        ad.grad(encoder_decoder, wrt=("params['enc']", "params['enc']['W']"))(params, x)
    with pytest.raises(ad.WrtError, match="names a part of an argument, which this takes "
                       "whole"):
        ad.symbolic_grad(lambda x: np.sum(x ** 2), wrt="x['W']")


def test_changing_the_object_the_caller_passed_runs_as_written():
    class Step:
        def __init__(self):
            self.W = np.ones(2)

        def update(self, x):
            self.W += x
            return np.sum(self.W * self.W)

    step = Step()
    gradient = ad.grad(Step.update, wrt=(0, 1))(step, np.ones(2))
    np.testing.assert_allclose(gradient[0].W, [4.0, 4.0])  # through W + x, read back
    np.testing.assert_allclose(gradient[1], [4.0, 4.0])
    np.testing.assert_allclose(step.W, [2.0, 2.0])


# ----- every transform -----


def layer_out(params, x):
    return np.tanh(x @ params["W"] + params["b"])


def two_outputs(params, x):
    h = layer_out(params, x)
    return {"sum": np.sum(h), "h": h}


def gradient_norm(params, x):
    g = ad.grad(dict_mlp)(params, x, x[:, :2])
    return np.sum(g["W1"] ** 2) + np.sum(g["b2"] ** 2) + g["b1"] @ g["b1"]


def _params():
    return {"W": _normal(3, 2), "b": _normal(2)}


def _along(fn, args, direction, eps=1e-6):
    """Central difference of fn along a direction with the first argument's structure."""
    plus = ad.tree.map(lambda p, d: p + eps * d, args[0], direction)
    minus = ad.tree.map(lambda p, d: p - eps * d, args[0], direction)
    high, low = fn(plus, *args[1:]), fn(minus, *args[1:])
    return ad.tree.map(lambda a, b: None if isinstance(a, str) else (a - b) / (2 * eps),
                       high, low)


def test_vjp_pulls_back_into_the_arguments_structure():
    params, x = _params(), _normal(4, 3)
    seed = _normal(4, 2)
    for jit in (False, True):
        pulled = ad.vjp(layer_out, jit=jit)(params, x, seed)
        expected = ad.numeric_grad(lambda p, x: np.sum(seed * layer_out(p, x)), params, x)
        for key in params:
            np.testing.assert_allclose(pulled[key], expected[key], rtol=1e-6, atol=1e-9)


def metrics(params, x):
    """A structure out: arrays, a tuple of them, a constant, a count and a name."""
    h = layer_out(params, x)
    return {"h": h, "pair": (np.sum(h ** 2), params["b"] * x[0, :2]), "scale": 0.5,
            "rows": len(x), "name": "layer"}


def _weighted(fn, seed):
    """``sum(seed * fn(...))`` over the leaves a seed weighs."""
    def inner(*args):
        out = fn(*args)
        return sum(np.sum(s * o) for s, o in zip(ad.tree.leaves(seed), ad.tree.leaves(out))
                   if not isinstance(s, str))
    return inner


def test_vjp_of_a_function_returning_a_structure_takes_a_seed_of_its_structure():
    params, x = _params(), _normal(4, 3)
    seed = {"h": _normal(4, 2), "pair": (0.7, _normal(2)), "scale": 1.0, "rows": 0,
            "name": "layer"}
    for jit in (False, True):
        pulled = ad.vjp(metrics, wrt=(0, 1), jit=jit)(params, x, seed)
        expected = ad.numeric_grad(_weighted(metrics, seed), params, x, wrt=(0, 1))
        for key in params:
            np.testing.assert_allclose(pulled[0][key], expected[0][key], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(pulled[1], expected[1], rtol=1e-6, atol=1e-9)
    # the seed's structure is checked; a leaf's shape where the leaf is differentiated
    pull = ad.vjp(metrics)
    with pytest.raises(ad.AutodiffError, match=r"returns a structure, \{'h': \*") as info:
        pull(params, x, {"h": seed["h"]})
    assert info.value.lineno is not None and "output's keys" in info.value.hint
    with pytest.raises(ad.AutodiffError, match="was given no seed"):
        pull(params, x)
    with pytest.raises(ad.AutodiffError, match=r"the seed has shape \(3,\)"):
        pull(params, x, {**seed, "pair": (0.7, np.ones(3))})


def outer_of_a_pullback(W, x):
    pulled = ad.vjp(metrics)({"W": W, "b": x[0, :2]}, x, {
        "h": x[:, :2], "pair": (2.0, x[1, :2]), "scale": 1.0, "rows": 0, "name": ""})
    return np.sum(pulled["W"] ** 2) + np.sum(np.sin(pulled["b"]))


def pullback_with_a_short_seed(W, x):
    pulled = ad.vjp(metrics)({"W": W, "b": x[0, :2]}, x, {"h": x[:, :2]})
    return np.sum(pulled["W"])


def test_a_gradient_through_a_pullback_of_a_structure():
    W, x = _normal(3, 2), _normal(4, 3)
    for wrt in (0, 1):
        np.testing.assert_allclose(ad.grad(outer_of_a_pullback, wrt=wrt)(W, x),
                                   ad.numeric_grad(outer_of_a_pullback, W, x, wrt=wrt),
                                   rtol=1e-6, atol=1e-8)
    with pytest.raises(ad.AutodiffError, match=r"the seed has the structure \{'h': \*\}, "
                       r"and the output it weighs \{'h': \*, 'pair': \(\*, \*\)") as info:
        ad.grad(pullback_with_a_short_seed)(W, x)
    assert "pulled = ad.vjp(metrics)" in info.value.source_line


def test_jacobians_of_structures_agree_by_both_modes_and_with_differences():
    params, x = {**_params(), "c": 0.3, "steps": 2}, _normal(2, 3)
    by_mode = {mode: ad.jacobian(metrics, wrt=(0, 1), mode=mode)(params, x)
               for mode in ("rev", "fwd", None)}
    leaves = [(key, index) for key in ("W", "b", "c") for index in np.ndindex(
        np.shape(params[key]))]
    for key, index in leaves:  # one column of the Jacobian per element of a leaf
        direction = ad.tree.map(lambda p: np.zeros(np.shape(p)) if ad.tree.items(p) is None
                                and not isinstance(p, int) else p, params)
        direction[key] = np.zeros(np.shape(params[key]))
        direction[key][index] = 1.0
        direction["steps"] = 0
        column = _along(metrics, (params, x), direction)
        for mode, jacobian in by_mode.items():
            for got, want in [(jacobian["h"][0][key], column["h"]),
                              (jacobian["pair"][0][0][key], column["pair"][0]),
                              (jacobian["pair"][1][0][key], column["pair"][1]),
                              (jacobian["scale"][0][key], 0.0)]:
                np.testing.assert_allclose(np.asarray(got)[(..., *index)], want, rtol=1e-6,
                                           atol=1e-8, err_msg=f"{mode} {key}")
    for mode, jacobian in by_mode.items():
        assert ad.tree.leaves(jacobian["name"]) == [] and jacobian["h"][0]["steps"] is None, mode
        assert np.shape(jacobian["h"][1]) == (2, 2, 2, 3) and np.all(jacobian["rows"][1] == 0)
        np.testing.assert_allclose(jacobian["h"][1], by_mode["rev"]["h"][1], atol=1e-12)


def test_a_constant_in_a_returned_structure_has_a_zero_tangent():
    # a number written in the code is constant: its tangent was once the number itself
    params, x = _params(), _normal(4, 3)
    _, tangent = ad.jvp(metrics)(params, x, _params())
    assert tangent["scale"] == 0.0 and tangent["rows"] == 0.0 and tangent["name"] == "layer"


def test_compare_and_check_grad_take_structures():
    params, x = {**_params(), "c": 0.3}, _normal(4, 3)

    def loss(p, x):
        return np.sum(layer_out(p, x) ** 2) * p["c"]

    table = ad.compare(loss, params, x, wrt=(0, 1), verbose=False)
    assert not table.row("symbolic (SymPy)").available
    assert "argument 0 of loss is a dict" in table.row("symbolic (SymPy)").note
    assert table.row("reverse mode (autodiff)").error < 1e-9
    assert table.row("central differences").evaluations == str(2 * (6 + 2 + 1 + 12))
    report = ad.check_grad(metrics, params, x, wrt=(0, 1))
    assert {row.name for row in report.rows} == {"params['W']", "params['b']", "params['c']",
                                                  "x", "jvp"}


def test_jvp_takes_a_tangent_in_the_arguments_structure():
    params, x = _params(), _normal(4, 3)
    direction = _params()
    for jit in (False, True):
        value, tangent = ad.jvp(layer_out, jit=jit)(params, x, direction)
        np.testing.assert_allclose(value, layer_out(params, x))
        np.testing.assert_allclose(tangent, _along(layer_out, (params, x), direction),
                                   rtol=1e-6, atol=1e-9)
    value, tangent = ad.jvp(two_outputs)(params, x, direction)  # a dict out: a dict of tangents
    expected = _along(two_outputs, (params, x), direction)
    assert set(tangent) == {"sum", "h"}
    for key in expected:
        np.testing.assert_allclose(tangent[key], expected[key], rtol=1e-6, atol=1e-9)
    both = ad.jvp(layer_out, wrt=(0, 1))(params, x, (direction, _normal(4, 3)))
    assert both[1].shape == (4, 2)


def test_hvp_and_a_gradient_of_a_gradient_over_a_dict():
    params = {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2), "b2": _normal(2)}
    x, t = _normal(5, 3), _normal(5, 2)
    v = ad.tree.map(lambda p: rng.normal(size=np.shape(p)), params)
    product = ad.hvp(dict_mlp)(params, x, t, v)
    expected = _along(lambda p, x, t: ad.grad(dict_mlp)(p, x, t), (params, x, t), v)
    for key in params:
        np.testing.assert_allclose(product[key], expected[key], rtol=1e-5, atol=1e-8)
    _check(gradient_norm, (params, _normal(5, 3)))


# Structures holding structures, each with a leaf the function does not read: the
# derivative of its jvp reads none of that leaf's tangent either.


def pairs_but_last_bias(layers, x):
    for W, b in layers[:-1]:
        x = np.tanh(x @ W + b)
    return np.sum((x @ layers[-1][0]) ** 2)


def dict_of_lists(params, x):
    h = x
    for W in params["Ws"]:
        h = np.tanh(h @ W)
    return np.sum(h * params["scales"][0]) + np.sum(params["scales"][1] ** 2)


def two_levels(tree, x):
    first, second = tree
    h = np.sin(x @ first["W"]) * second["bs"][0]
    for b in second["bs"][1:]:
        h = h + np.cos(b * h)
    return np.sum(h ** 2)


push_pairs = ad.jvp(pairs_but_last_bias)


def jvp_inside(layers, x, tangent):
    value, along = push_pairs(layers, x, tangent)
    return value * along + np.sum(np.tanh(along * x))


NESTED = [
    (list_mlp, lambda: ([(_normal(3, 3) / 2, _normal(3)), (_normal(3, 2), _normal(2))],
                        _normal(4, 3))),
    (pairs_but_last_bias, lambda: ([(_normal(3, 3) / 2, _normal(3)),
                                    (_normal(3, 2), _normal(2))], _normal(4, 3))),
    (dict_of_lists, lambda: ({"Ws": [_normal(3, 3) / 2, _normal(3, 2)],
                              "scales": [_normal(2), _normal(2), _normal(2)]}, _normal(4, 3))),
    (two_levels, lambda: (({"W": _normal(3, 2), "unused": _normal(2)},
                           {"bs": [_normal(2), _normal(2), _normal(2)], "c": [_normal(3)]}),
                          _normal(4, 3)))]


def _leaf_by_leaf(got, expected, rtol=1e-6, atol=1e-8):
    """Every leaf of ``got`` close to the same leaf of ``expected``, named by its path."""
    got_paths, expected_paths = ad.tree.paths(got, "got"), ad.tree.paths(expected, "got")
    assert [path for path, _ in got_paths] == [path for path, _ in expected_paths]
    for (path, leaf), (_, want) in zip(got_paths, expected_paths):
        assert np.shape(leaf) == np.shape(want), path
        np.testing.assert_allclose(leaf, want, rtol=rtol, atol=atol, err_msg=path)


@pytest.mark.parametrize("fn, make", NESTED, ids=[fn.__name__ for fn, _ in NESTED])
def test_vjp_of_jvp_over_nested_structures(fn, make):
    args = make()
    tangent = ad.tree.map(lambda p: rng.normal(size=np.shape(p)), args[0])
    push = ad.jvp(fn)
    weights = (0.7, -1.3)

    def weighted(*arguments):
        value, along = push(*arguments)
        return weights[0] * value + weights[1] * along

    expected = ad.numeric_grad(weighted, *args, tangent, wrt=(0, 1, 2))
    for jit in (False, True):
        got = ad.vjp(push, wrt=(0, 1, 2), jit=jit)(*args, tangent, weights)
        _leaf_by_leaf(got, expected)


@pytest.mark.parametrize("fn, make", NESTED, ids=[fn.__name__ for fn, _ in NESTED])
def test_hvp_over_nested_structures(fn, make):
    args = make()
    v = ad.tree.map(lambda p: rng.normal(size=np.shape(p)), args[0])
    expected = _along(lambda *arguments: ad.grad(fn)(*arguments), args, v)
    _leaf_by_leaf(ad.hvp(fn)(*args, v), expected, rtol=1e-5)


def test_a_gradient_through_a_jvp_over_a_list_of_pairs():
    layers, x = NESTED[1][1]()
    tangent = ad.tree.map(lambda p: rng.normal(size=np.shape(p)), layers)
    got = ad.grad(jvp_inside, wrt=(0, 1, 2))(layers, x, tangent)
    _leaf_by_leaf(got, ad.numeric_grad(jvp_inside, layers, x, tangent, wrt=(0, 1, 2)))


def unpacks_a_pair(layer, x):
    W, b = layer  # compiled for arrays too: an array's rows
    return np.sum(np.tanh(x @ W + b) ** 2)


value_and_grad_of_pair = ad.value_and_grad(unpacks_a_pair)


def reads_the_gradients_fields(layer, x):
    value, gradient = value_and_grad_of_pair(layer, x)
    return value + np.sum(gradient.W ** 2) + np.sum(np.sin(gradient.b))


def test_the_gradient_of_a_namedtuple_read_by_its_fields_is_differentiated():
    # The gradient a derivative returns has its argument's structure: reading its fields
    # compiles the caller per structure, as reading the argument's own fields does.
    layer, x = Pair(_normal(3, 2), _normal(2)), _normal(4, 3)
    grad = _check(reads_the_gradients_fields, (layer, x))
    assert type(grad) is Pair


def pair_loss(pair, x):
    W, b = pair
    return np.sum(np.sin(W * x + b))


pair_value_and_grad = ad.value_and_grad(pair_loss)


def by_field(pair, x):
    value, gradient = pair_value_and_grad(pair, x)
    return value + np.sum(np.sin(gradient.W)) + np.sum(gradient.b ** 2)


def by_key(params, x):
    value, gradient = pair_value_and_grad((params["W"], params["b"]), x)
    return value + np.sum(np.sin(gradient[0])) * np.sum(params["W"])


# The gradient an inlined derivative gives a structured argument is read as that structure:
# in the derivative built for arrays, where the argument is an array, '.W' was refused
# ("the attribute '.W' is not supported") instead of compiling per structure
@pytest.mark.parametrize("fn, args", [
    (by_field, lambda: (Pair(_normal(2), _normal(2)), _normal(2))),
    (by_key, lambda: ({"W": _normal(2), "b": _normal(2)}, _normal(2))),
])
def test_a_gradient_of_a_function_reading_a_structures_gradient(fn, args):
    _check(fn, args(), wrt=0)


def test_jacobian_and_hessian_of_a_dict_are_dicts_of_blocks():
    params, x = {"W": _normal(3, 2), "b": _normal(2), "c": 0.7}, _normal(4, 3)

    def loss(p, x):
        return np.sum(layer_out(p, x) ** 2) + p["c"] * np.sum(p["W"] ** 3)

    jacobian = ad.jacobian(layer_out)(params, x)  # output (4, 2) by each leaf
    for key in ("W", "b"):
        assert jacobian[key].shape == (4, 2, *np.shape(params[key]))
        for index in np.ndindex(np.shape(params[key])):
            direction = {k: np.zeros(np.shape(v)) for k, v in params.items()}
            direction[key][index] = 1.0
            np.testing.assert_allclose(jacobian[key][(..., *index)],
                                       _along(layer_out, (params, x), direction),
                                       rtol=1e-6, atol=1e-8)
    assert np.all(jacobian["c"] == 0.0)
    hessian = ad.hessian(loss)(params, x)  # hessian[k1][k2]: d grad[k1] / d params[k2]
    for k2, leaf in params.items():
        for index in np.ndindex(np.shape(leaf)):
            direction = {k: np.zeros(np.shape(v)) if k != "c" else 0.0
                         for k, v in params.items()}
            if k2 == "c":
                direction["c"] = 1.0
            else:
                direction[k2][index] = 1.0
            column = _along(lambda p, x: ad.grad(loss)(p, x), (params, x), direction)
            for k1 in params:
                np.testing.assert_allclose(np.asarray(hessian[k1][k2])[(..., *index)],
                                           column[k1], rtol=1e-5, atol=1e-7)


def test_check_grad_of_a_bound_method_with_respect_to_its_object():
    model = Model((3, 2))
    x, t = _normal(4, 3), _normal(4, 2)
    report = str(ad.check_grad(model.loss, x, t, wrt="self"))
    assert "self.layers[0].W" in report and "passed" in report
    labels = {"W": np.arange(4), "mask": np.array([True, False]), "b": _normal(2)}
    grad = ad.grad(lambda p: np.sum(p["b"] * p["mask"]) + np.sum(p["W"]))(labels)
    assert grad["W"] is None and grad["mask"] is None  # data without a gradient
    np.testing.assert_allclose(grad["b"], [1.0, 0.0])


def comprehended(params, x):
    scaled = {name: value * 2.0 for name, value in params.items() if name != "skip"}
    powers = {k: x ** k for k in range(1, 3)}
    return np.sum(scaled["W"] * powers[2]) + np.sum(np.sin(scaled["b"]))


def test_dict_comprehensions_are_unrolled():
    params = {"W": _normal(3), "b": _normal(3), "skip": _normal(3)}
    grad = _check(comprehended, (params, _normal(3)))
    assert not np.any(grad["skip"])


def named_rows(x):
    d = {name: row for name, row in zip(("a", "b"), x)}
    return np.sum(np.sin(d["a"]) * d["b"])


# Its keys are fixed while compiling; the rows, counted at run time, must cover them
def test_a_dict_comprehension_zipping_keys_with_rows():
    for rows in (2, 3):
        _check(named_rows, (_normal(rows, 2),))
    with pytest.raises(ad.UnsupportedSyntaxError, match="has 2 keys fixed while compiling, "
                       "but zip\\(\\) stops after 1"):
        ad.grad(named_rows)(_normal(1, 2))


def sorted_keys(params, x):
    total = 0.0
    for position, name in enumerate(sorted(params)):
        total = total + (position + 1) * np.sum(np.cos(params[name] * x))
    return total * 2.0 if isinstance(params, dict) else total


def test_sorted_keys_and_isinstance_of_a_structure():
    _check(sorted_keys, ({"b": _normal(2), "a": _normal(2)}, _normal(2)))


def test_an_object_referring_back_to_itself_is_refused():
    model = Model((3, 2))
    model.owner = model
    with pytest.raises(ad.ArgumentKindError, match="refers back to itself"):
        ad.grad(Model.loss)(model, _normal(4, 3), _normal(4, 2))


def zipped_with_rows(xs, x):
    total = 0.0
    for v, row in zip(xs, x):
        total = total + np.sum(np.sin(v * row))
    return total


def test_zip_of_a_list_argument_and_an_arrays_rows():
    xs, x = [_normal(2), _normal(2)], _normal(3, 2)  # zip stops at the list's end
    _check(zipped_with_rows, (xs, x), wrt=0)
    _check(zipped_with_rows, (xs, x), wrt=1)


def counted_from_one(xs, x):
    total = 0.0
    for i, v in enumerate(xs, 1):
        total = total + i * np.sum(np.sin(v * x))
    return total


def zipped_with_a_reversed_range(xs, x):
    total = 0.0
    for v, i in zip(xs, reversed(range(3))):
        total = total + (i + 1) * np.sum(v * x[i])
    for v, j in zip(xs, range(len(x) - 1, -1, -2)):
        total = total + np.sum(np.cos(v * x[j]))
    return total


def leaving_in_the_last_step(xs, x):
    total = 0.0
    for i, v in enumerate(xs):
        if np.sum(v) > 0.0:
            continue  # skips this step only
        total = total + np.sum(v * x)
        if i == len(xs) - 1 and np.sum(x) > 0.0:
            break  # leaves the loop only
    return 3.0 * total


def leaving_early(xs, x):
    total = 0.0
    for v in xs:
        total = total + np.sum(v * x)
        if np.sum(x) > 0.0:
            break
    return total


# Unrolled loops over a list: enumerate's start, a reversed range zipped with the list, and
# 'continue' and a last step's 'break' are kept (the start was read as 0, the range forward,
# and a break in the last step skipped the code after the loop: a None value)
@pytest.mark.parametrize("fn, x", [
    (counted_from_one, np.array([0.4, -0.9])),
    (zipped_with_a_reversed_range, np.array([[0.5, -0.3], [0.8, 0.4], [-0.6, 0.1], [1.2, 0.7]])),
    (leaving_in_the_last_step, np.array([0.4, 0.9])),
    (leaving_in_the_last_step, np.array([0.4, -0.9])),
])
def test_unrolled_loops_over_a_list_run_as_python_does(fn, x):
    xs = [np.array([0.3, -0.5]), np.array([0.7, 0.2]), np.array([-0.4, 0.1])]
    value, _ = ad.value_and_grad(fn)(xs, x)
    np.testing.assert_allclose(value, fn(xs, x), rtol=1e-12)
    _check(fn, (xs, x), wrt=0)
    _check(fn, (xs, x), wrt=1)


def test_leaving_an_unrolled_loop_before_its_last_step_is_refused():
    xs = [np.array([0.3, -0.5]), np.array([0.7, 0.2])]
    with pytest.raises(ad.AutodiffError, match="supported in its last step only"):
        ad.grad(leaving_early)(xs, np.array([0.4, 0.9]))


def test_a_field_an_object_lacks_is_named_not_read_as_none():
    class Partial:
        bias = None  # a class constant: None is a value here

        def __init__(self):
            self.W = np.ones(2)

        def scaled(self, x):
            return np.sum(self.W * x) * (1.0 if self.bias is None else 2.0)

        def missing(self, x):
            return np.sum(self.V * x)

    np.testing.assert_allclose(ad.grad(Partial.scaled)(Partial(), np.full(2, 3.0)).W, 3.0)
    with pytest.raises(ad.tree.StructureError, match="has no field 'V'"):
        ad.grad(Partial.missing)(Partial(), np.ones(2))
