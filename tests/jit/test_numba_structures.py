"""``jit="numba"`` with structured arguments (dicts, lists, tuples, namedtuples,
dataclasses, objects of the user's classes): numba compiles the kernel over the
leaves, a Python function around it reads each leaf once and builds the results'
structures once. Each result is the one ``jit=True`` gives (same structure, leaf
types, shapes and dtypes) and matches central differences leaf by leaf."""

from __future__ import annotations

import decimal
import importlib.util

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import Layer, Pair, list_mlp, optional_bias

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="jit='numba' needs the optional jit extra")

rng = np.random.default_rng(11)


def _normal(*shape, dtype=np.float64):
    return rng.normal(size=shape).astype(dtype)


def _same(got, want, rtol=1e-12, atol=1e-14) -> None:
    """Same structure, same leaf types, shapes and dtypes, same values."""
    assert ad.tree.structure(got) == ad.tree.structure(want)
    assert type(got) is type(want)
    got_paths, want_paths = ad.tree.paths(got, "r"), ad.tree.paths(want, "r")
    assert [p for p, _ in got_paths] == [p for p, _ in want_paths]
    for (path, a), (_, b) in zip(got_paths, want_paths):
        if b is None or isinstance(b, (str, int)) and not isinstance(b, bool):
            assert a == b, path
            continue
        assert np.shape(a) == np.shape(b), path
        assert np.result_type(a) == np.result_type(b), path
        if isinstance(b, np.ndarray):
            assert type(a) is np.ndarray, path
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
    for (path, a), (_, b) in zip(_objects(got, "r"), _objects(want, "r")):
        assert type(a) is type(b), path  # the classes of nested structures too


def _objects(tree, path):
    yield path, tree
    items = ad.tree.items(tree)
    for key, child in items or ():
        yield from _objects(child, f"{path}[{key!r}]")


def _matches_finite_differences(fn, args, wrt, grad) -> None:
    """``grad`` (a structure) against central differences, leaf by leaf, in float64."""
    expected = ad.numeric_grad(fn, *args, wrt=wrt)
    got_paths, want_paths = ad.tree.paths(grad, "g"), ad.tree.paths(expected, "g")
    assert [p for p, _ in got_paths] == [p for p, _ in want_paths]
    assert ad.tree.structure(grad) == ad.tree.structure(expected)
    for (path, a), (_, b) in zip(got_paths, want_paths):
        assert (a is None) == (b is None), path
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, err_msg=path)


def _check(fn, args, wrt=0):
    """The numba gradient equals jit=True's and central differences; returned."""
    fast = ad.grad(fn, wrt=wrt, jit="numba")
    got = fast(*args)
    _same(got, ad.grad(fn, wrt=wrt, jit=True)(*args))
    _same(got, ad.grad(fn, wrt=wrt)(*args), rtol=1e-10)
    _matches_finite_differences(fn, args, wrt, got)
    return got


# ----- the functions differentiated -----


def dict_mlp(params, x, t):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.mean((h @ params["W2"] + params["b2"] - t) ** 2)


def pair_loss(pair, x):
    return np.sum(np.sin(x @ pair.W + pair.b) ** 2)


def dataclass_layers(layers, x):
    for layer in layers:
        z = x @ layer.W + layer.b
        x = np.tanh(z) if layer.activation == "tanh" else np.maximum(z, 0.0)
    return np.sum(x ** 2)


class Model:
    """A model object: arrays and a float as attributes, a name (a setting), its loss a
    method calling another."""

    def __init__(self, sizes, seed=0):
        generator = np.random.default_rng(seed)
        self.W1 = generator.normal(size=(sizes[0], sizes[1])) / np.sqrt(sizes[0])
        self.b1 = np.zeros(sizes[1])
        self.W2 = generator.normal(size=(sizes[1], sizes[2]))
        self.scale = 1.5
        self.name = "mlp"

    def predict(self, x):
        return self.scale * (np.tanh(x @ self.W1 + self.b1) @ self.W2)

    def loss(self, x, t):
        return np.mean((self.predict(x) - t) ** 2) + 1e-3 * np.sum(self.W1 ** 2)


def with_metrics(params, x):
    y = x @ params["W"]
    loss = np.sum(y ** 2)
    return loss, {"loss": loss, "norm": np.sum(params["W"] ** 2), "rows": len(y)}


def _dict_params(dtype=np.float64, hidden=4):
    return {"W1": _normal(3, hidden, dtype=dtype), "b1": _normal(hidden, dtype=dtype),
            "W2": _normal(hidden, 2, dtype=dtype), "b2": _normal(2, dtype=dtype)}


# ----- gradients in the arguments' structures -----


def test_a_dict_of_parameters():
    params, x, t = _dict_params(), _normal(5, 3), _normal(5, 2)
    grad = _check(dict_mlp, (params, x, t))
    assert type(grad) is dict and list(grad) == list(params)
    both = _check(dict_mlp, (params, x, t), wrt=(0, 1))
    assert type(both[0]) is dict and both[1].shape == (5, 3)


def test_a_list_of_weight_and_bias_layers():
    layers = [(_normal(3, 4), _normal(4)), (_normal(4, 4), _normal(4)), (_normal(4, 2), _normal(2))]
    grad = _check(list_mlp, (layers, _normal(5, 3)))
    assert type(grad) is list and all(type(layer) is tuple for layer in grad)


def test_a_namedtuple():
    grad = _check(pair_loss, (Pair(_normal(3, 2), _normal(2)), _normal(4, 3)))
    assert type(grad) is Pair


def test_dataclasses_with_a_setting_compile_per_setting():
    layers = [Layer(_normal(3, 3), _normal(3)), Layer(_normal(3, 2), _normal(2), "relu")]
    x = _normal(4, 3)
    grad = _check(dataclass_layers, (layers, x))
    assert type(grad[0]) is Layer and grad[1].activation is None
    fast = ad.grad(dataclass_layers, jit="numba")
    compiled = len(fast.specializations.compiled)
    _check(dataclass_layers, ([Layer(layer.W, layer.b, "relu") for layer in layers], x))
    fast(layers, x)
    assert len(fast.specializations.compiled) == compiled + 1  # one per setting


def test_an_object_of_the_users_class_through_its_method():
    model, x, t = Model((3, 4, 2)), _normal(5, 3), _normal(5, 2)
    grad = _check(Model.loss, (model, x, t))
    assert type(grad) is Model and grad is not model
    assert grad.name is None and type(grad.scale) is float
    source = ad.grad(Model.loss, jit="numba").source_for(model, x, t)
    assert "with_fields(self, W1=dself_W1" in source


def test_an_int_setting_and_a_none_leaf():
    params, x = {"W": _normal(3, 2), "b": None, "n": 3}, _normal(4, 3)
    grad = _check(optional_bias, (params, x))
    assert grad["b"] is None and grad["n"] is None
    with_bias = {"W": _normal(3, 2), "b": _normal(2), "n": 2}
    assert _check(optional_bias, (with_bias, x))["b"].shape == (2,)
    fast = ad.grad(optional_bias, jit="numba")
    compiled = len(fast.specializations.compiled)
    np.testing.assert_allclose(fast({**params, "n": 5}, x)["W"],  # a new setting: compiled again
                               5 / 3 * fast(params, x)["W"], rtol=1e-12)
    assert len(fast.specializations.compiled) == compiled + 1


def test_float32_leaves_keep_float32():
    params = _dict_params(np.float32)
    x, t = _normal(5, 3, dtype=np.float32), _normal(5, 2, dtype=np.float32)
    value, grad = ad.value_and_grad(dict_mlp, jit="numba")(params, x, t)
    want_value, want = ad.value_and_grad(dict_mlp, jit=True)(params, x, t)
    _same(grad, want, rtol=1e-5, atol=1e-6)  # (sums in another order)
    assert all(leaf.dtype == np.float32 for leaf in grad.values())
    assert type(value) is type(want_value) is np.float32
    scaled = {**params, "scale": 0.5}  # a Python float leaf keeps float32 arrays float32

    def with_scale(params, x, t):
        return dict_mlp(params, x, t) * params["scale"]

    grad = ad.grad(with_scale, jit="numba")(scaled, x, t)
    _same(grad, ad.grad(with_scale, jit=True)(scaled, x, t), rtol=1e-5, atol=1e-6)
    assert grad["W1"].dtype == np.float32 and type(grad["scale"]) is float


def test_new_shapes_compile_again():
    fast = ad.grad(dict_mlp, jit="numba")
    compiled = len(fast.specializations.compiled)
    x, t = _normal(5, 3), _normal(5, 2)
    small, large = _dict_params(hidden=2), _dict_params(hidden=6)
    _same(fast(small, x, t), ad.grad(dict_mlp, jit=True)(small, x, t))
    _same(fast(large, x, t), ad.grad(dict_mlp, jit=True)(large, x, t))
    _matches_finite_differences(dict_mlp, (large, x, t), 0, fast(large, x, t))
    assert len(fast.specializations.compiled) == compiled + 2
    _same(fast(small, x, t), ad.grad(dict_mlp, jit=True)(small, x, t))  # the first again
    assert len(fast.specializations.compiled) == compiled + 2


# ----- the other transforms -----


def test_value_and_grad_and_a_dict_of_metrics():
    params, x, t = _dict_params(), _normal(5, 3), _normal(5, 2)
    value, grad = ad.value_and_grad(dict_mlp, jit="numba")(params, x, t)
    want_value, want_grad = ad.value_and_grad(dict_mlp, jit=True)(params, x, t)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    _same(grad, want_grad)
    small = {"W": _normal(3, 2)}
    (loss, metrics), grad = ad.value_and_grad(with_metrics, has_aux=True, jit="numba")(small, x)
    (want_loss, want_metrics), want = ad.value_and_grad(with_metrics, has_aux=True,
                                                        jit=True)(small, x)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    _same(metrics, want_metrics)
    _same(grad, want)
    _matches_finite_differences(lambda p, x: with_metrics(p, x)[0], (small, x), 0, grad)
    grad, aux = ad.grad(with_metrics, has_aux=True, jit="numba")(small, x)
    _same(aux, want_metrics)
    _same(grad, want)


def test_vjp_and_jvp_with_structures():
    params, x = {"W": _normal(3, 2), "b": _normal(2)}, _normal(4, 3)

    def layer(params, x):
        return np.tanh(x @ params["W"] + params["b"])

    seed = _normal(4, 2)
    pulled = ad.vjp(layer, jit="numba")(params, x, seed)
    _same(pulled, ad.vjp(layer, jit=True)(params, x, seed))
    _matches_finite_differences(lambda p, x: np.sum(seed * layer(p, x)), (params, x), 0,
                                pulled)
    direction = {"W": _normal(3, 2), "b": _normal(2)}
    value, tangent = ad.jvp(layer, jit="numba")(params, x, direction)
    want_value, want_tangent = ad.jvp(layer, jit=True)(params, x, direction)
    _same(value, want_value)
    _same(tangent, want_tangent)
    eps = 1e-6
    plus = layer(ad.tree.map(lambda p, d: p + eps * d, params, direction), x)
    minus = layer(ad.tree.map(lambda p, d: p - eps * d, params, direction), x)
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)

    def two_outputs(params, x):  # a dict out: a dict of tangents
        h = np.tanh(x @ params["W"])
        return {"sum": np.sum(h), "h": h}

    value, tangent = ad.jvp(two_outputs, jit="numba")(params, x, direction)
    _same((value, tangent), ad.jvp(two_outputs, jit=True)(params, x, direction))


# ----- what the function around the kernel does -----


def test_the_leaves_are_read_once_and_the_gradient_built_once():
    params, x, t = _dict_params(), _normal(5, 3), _normal(5, 2)
    source = ad.grad(dict_mlp, jit="numba").source_for(params, x, t)
    around, kernel = source.split("\n\n\n", 1)
    for key in params:
        assert around.count(f"params['{key}']") == 1
        assert f"params_{key} = params['{key}']" in around
        assert f"params['{key}']" not in kernel.split("\n", 1)[1].replace(
            f'params["{key}"]', "")  # only in the comments quoting the user's lines
    assert around.count("= dict_mlp_grad_kernel(") == 1 and around.count("{'W1': dparams_W1") == 1
    assert len(around.splitlines()) == 1 + 4 + 1 + 1  # def, reads, kernel, return
    assert kernel.startswith("def dict_mlp_grad_kernel(params_W1, params_b1, params_W2, "
                             "params_b2, x, t):")


def test_leaf_names_that_clash_are_told_apart():
    def f(p, p_a_b):
        return np.sum(p["a"]["b"] * p["a_b"]) * np.sum(p_a_b)

    p = {"a": {"b": _normal(3)}, "a_b": _normal(3)}
    _check(f, (p, _normal(2)), wrt=(0, 1))


# ----- what numba cannot take -----


def test_an_object_numba_cannot_take_is_refused_by_its_path():
    def f(params, x):
        return np.sum(params["W"] * x) * float(params["rate"])

    params = {"W": _normal(3), "rate": decimal.Decimal("0.5")}
    with pytest.raises(ad.ArgumentKindError) as error:
        ad.grad(f, jit="numba")(params, _normal(3))
    message = str(error.value)
    assert "jit='numba' compiles f_grad for arrays and numbers" in message
    assert "takes params['rate'] (a Decimal) whole" in message
    assert "jit=True" in error.value.hint
    np.testing.assert_allclose(ad.grad(f, jit=True)(params, _normal(3) * 0 + 1.0)["W"],
                               np.full(3, 0.5))


def test_structures_returned_inside_others_are_built_around_the_kernel():
    def f(params, x):
        loss = np.sum(params["W"] * x)
        return loss, [{"loss": loss, "first": params["W"][0]}]

    args = ({"W": _normal(3)}, _normal(3))
    _same(ad.grad(f, has_aux=True, jit="numba")(*args), ad.grad(f, has_aux=True, jit=True)(*args))
