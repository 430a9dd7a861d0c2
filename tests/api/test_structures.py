"""Parameters in dicts, lists, tuples, namedtuples and dataclasses: gradients in the
argument's structure, leaf by leaf, checked against central differences in float64."""

from __future__ import annotations

import functools
import itertools

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


def test_mutating_the_callers_structure_is_refused():
    def sets(params):
        params["W"] = params["W"] * 2.0
        return np.sum(params["W"])

    def appends(layers):
        layers.append(layers[0])
        return np.sum(layers[0])

    with pytest.raises(ad.UnsupportedSyntaxError, match="'params' the caller passed") as info:
        ad.grad(sets)({"W": np.ones(2)})
    assert info.value.lineno is not None and "dict(params)" in info.value.hint
    with pytest.raises(ad.UnsupportedSyntaxError, match="change the caller's list"):
        ad.grad(appends)([np.ones(2)])


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


def test_changing_the_object_the_caller_passed_is_refused():
    class Step:
        def __init__(self):
            self.W = np.ones(2)

        def update(self, x):
            self.W += x
            return np.sum(self.W)

    with pytest.raises(ad.UnsupportedSyntaxError, match="would change the Step object "
                       "'self' the caller passed") as info:
        ad.grad(Step.update)(Step(), np.ones(2))
    assert "self.W += x" in str(info.value)


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
    return ad.tree.map(lambda a, b: (a - b) / (2 * eps), high, low)


def test_vjp_pulls_back_into_the_arguments_structure():
    params, x = _params(), _normal(4, 3)
    seed = _normal(4, 2)
    for jit in (False, True):
        pulled = ad.vjp(layer_out, jit=jit)(params, x, seed)
        expected = ad.numeric_grad(lambda p, x: np.sum(seed * layer_out(p, x)), params, x)
        for key in params:
            np.testing.assert_allclose(pulled[key], expected[key], rtol=1e-6, atol=1e-9)


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


def test_transforms_that_take_arrays_say_so():
    params, x = _params(), _normal(4, 3)
    with pytest.raises(ad.ArgumentKindError, match="mode='rev'. takes arrays") as info:
        ad.jacobian(layer_out, mode="rev")
    assert info.value.lineno is not None and "mode='fwd'" in info.value.hint
    with pytest.raises(ad.ArgumentKindError, match="mode='rev'. takes arrays"):
        ad.jacobian(lambda xs: xs[0] * xs[1], mode="rev")((np.ones(2), np.ones(2)))
    with pytest.raises(ad.ArgumentKindError, match="compare takes arrays and numbers"):
        ad.compare(layer_out, params, x)


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
