"""``jit="numba"`` of a function calling a model a global or closure variable holds (an
object of the user's class, a ``Sequential``-like object holding a list of layers, a
list or dict of layers):
the function around numba's kernel reads the object at each call, checks its settings
and passes its arrays to the kernel. Gradients equal ``jit=False``'s and central
differences; an optimiser's step, a new float hyperparameter and a rebound global are
seen; a new shape compiles again; a changed setting is refused as ``jit=True`` refuses
it."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import autodiff as ad
from autodiff.tree import StructureError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="jit='numba' needs the optional jit extra")

rng = np.random.default_rng(30)


class Lin:
    def __init__(self, n=3):
        self.W = rng.normal(size=(n, n)) * 0.5

    def __call__(self, x):
        return np.tanh(self.W @ x)


class Dense:
    def __init__(self, n, m, act="tanh", alpha=0.1):
        self.W = rng.normal(size=(m, n))
        self.b = rng.normal(size=m)
        self.act = act
        self.alpha = alpha

    def __call__(self, x):
        h = self.W @ x + self.b
        if self.act == "tanh":
            return np.tanh(h)
        return h * self.alpha


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


lin = Lin()
seq = Sequential([Dense(3, 4), Dense(4, 2, act="linear", alpha=0.3)])


layers = [Dense(3, 4), Dense(4, 3, act="linear", alpha=0.3)]
MODELS = {"enc": Dense(3, 2)}


@pytest.fixture(autouse=True)
def fresh_models(monkeypatch):
    """Each test its own models (tests change them)."""
    monkeypatch.setitem(globals(), "lin", Lin())
    monkeypatch.setitem(globals(), "layers", [Dense(3, 4), Dense(4, 3, act="linear",
                                                                  alpha=0.3)])
    monkeypatch.setitem(globals(), "MODELS", {"enc": Dense(3, 2)})
    monkeypatch.setitem(globals(), "seq", Sequential([Dense(3, 4),
                                                      Dense(4, 2, act="linear", alpha=0.3)]))


def lin_loss(x):
    return np.sum(lin(x) ** 2)


def seq_loss(x, t):
    return np.sum((seq(x) - t) ** 2)


def looped(x, n):
    total = 0.0
    for _ in range(n):
        x = lin(x)
        total = total + np.sum(x)
    return total


def twice_in_a_loop(x, n):
    total = 0.0
    for _ in range(n):
        x = lin(lin(x))
        total = total + np.sum(lin(x) * 2.0)
    return total + np.sum(lin(x))


def in_a_branch(x):
    if np.sum(x) > 0:
        y = lin(x)
    else:
        y = x * lin.W[0]
    return np.sum(y ** 2)


def stacked(x):
    for layer in layers:
        x = layer(x)
    return np.sum(MODELS["enc"](x) ** 2)


def with_params(params, x):
    return np.sum(np.tanh(params["V"] @ seq(x) + params["c"]) ** 2)


def _check(fn, args, wrt=0):
    """The numba gradient equals jit=False's to 1e-12 and central differences."""
    fast = ad.grad(fn, wrt=wrt, jit="numba")
    got = fast(*args)
    want = ad.grad(fn, wrt=wrt)(*args)
    for a, b in zip(ad.tree.leaves(got), ad.tree.leaves(want)):
        assert type(a) is type(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    numeric = ad.numeric_grad(fn, *args, wrt=wrt)
    for a, b in zip(ad.tree.leaves(got), ad.tree.leaves(numeric)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    return fast


def test_a_global_model_called():
    fast = _check(lin_loss, (np.arange(1.0, 4.0),))
    source = fast.source_for(np.arange(1.0, 4.0))
    around, kernel = source.split("\n\n\n")
    # the function around the kernel reads the global and checks its settings, the
    # kernel takes its array
    assert around.startswith("def lin_loss_grad(x, *, lin):")
    assert "settings_unchanged(lin, " in around and "lin_W = lin.W" in around
    assert "def lin_loss_grad_kernel(x, lin_W):" in kernel
    assert "settings_unchanged" not in kernel and "lin." not in kernel


def test_a_sequential_of_layers_with_settings():
    x, t = rng.normal(size=3), rng.normal(size=2)
    _check(seq_loss, (x, t))
    _check(seq_loss, (x, t), wrt=1)


def test_with_a_structured_argument_too():
    params = {"V": rng.normal(size=(3, 2)), "c": rng.normal(size=3)}
    x = rng.normal(size=3)
    _check(with_params, (params, x))
    _check(with_params, (params, x), wrt=1)


def test_read_in_a_loop():
    x = rng.normal(size=3)
    fast = _check(looped, (x, 3))
    np.testing.assert_allclose(fast(x, 0), ad.grad(looped)(x, 0), rtol=1e-12)
    assert "lin." not in fast.source_for(x, 3).split("\n\n\n")[1]


def test_read_in_several_places_checked_once():
    x = rng.normal(size=3)
    fast = _check(twice_in_a_loop, (x, 2))
    np.testing.assert_allclose(fast(x, 0), ad.grad(twice_in_a_loop)(x, 0), rtol=1e-12)
    around, kernel = fast.source_for(x, 2).split("\n\n\n")
    assert around.count("settings_unchanged(lin, ") == 1
    assert around.count(" = lin.W\n") == 1  # read once, however many times it is called
    assert kernel.startswith("def twice_in_a_loop_grad_kernel(x, n, lin_W):")
    assert "lin." not in kernel


def test_read_in_a_branch():
    x = np.abs(rng.normal(size=3))
    fast = _check(in_a_branch, (x,))
    _check(in_a_branch, (-x,))
    lin.W *= -1.0
    np.testing.assert_allclose(fast(-x), ad.grad(in_a_branch)(-x), rtol=1e-12, atol=1e-14)


def test_an_optimiser_step_between_calls_is_seen():
    x, t = rng.normal(size=3), rng.normal(size=2)
    fast, slow = ad.grad(seq_loss, jit="numba"), ad.grad(seq_loss)
    first = fast(x, t)
    for layer in seq.layers:  # in place, as an optimiser's step
        layer.W -= 0.1 * np.sign(layer.W)
        layer.b *= 0.5
    second = fast(x, t)
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, slow(x, t), rtol=1e-12, atol=1e-14)
    seq.layers[0].W = rng.normal(size=(4, 3))  # a new array of the same shape
    np.testing.assert_allclose(fast(x, t), slow(x, t), rtol=1e-12, atol=1e-14)
    assert len(fast.specializations.compiled) == 1  # no compiling again


def test_a_float_hyperparameter_changed_is_seen():
    x, t = rng.normal(size=3), rng.normal(size=2)
    fast, slow = ad.grad(seq_loss, jit="numba"), ad.grad(seq_loss)
    first = fast(x, t)
    seq.layers[1].alpha = 0.9
    second = fast(x, t)
    assert not np.allclose(first, second)
    np.testing.assert_allclose(second, slow(x, t), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(second, ad.numeric_grad(seq_loss, x, t), rtol=1e-6, atol=1e-8)


def test_a_new_shape_compiles_again():
    x, t = rng.normal(size=3), rng.normal(size=2)
    fast, slow = ad.grad(seq_loss, jit="numba"), ad.grad(seq_loss)
    fast(x, t)
    seq.layers[0].W, seq.layers[0].b = rng.normal(size=(5, 3)), rng.normal(size=5)
    seq.layers[1].W = rng.normal(size=(2, 5))
    np.testing.assert_allclose(fast(x, t), slow(x, t), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast(x, t), ad.numeric_grad(seq_loss, x, t), rtol=1e-6,
                               atol=1e-8)
    assert len(fast.specializations.compiled) == 2


def test_a_global_rebound_to_another_object_is_read():
    x = rng.normal(size=3)
    fast = ad.grad(lin_loss, jit="numba")
    fast(x)
    globals()["lin"] = Lin()
    np.testing.assert_allclose(fast(x), ad.grad(lin_loss)(x), rtol=1e-12, atol=1e-14)


def test_a_changed_setting_is_refused_as_with_jit_true():
    x, t = rng.normal(size=3), rng.normal(size=2)
    fast, specialised = ad.grad(seq_loss, jit="numba"), ad.grad(seq_loss, jit=True)
    fast(x, t)
    specialised(x, t)
    seq.layers[1].act = "tanh"  # a setting the code branched on while compiling
    for derivative in (fast, specialised):
        with pytest.raises(StructureError, match="'seq' holds an object whose settings") as info:
            derivative(x, t)
        # at the user's line reading the model
        assert info.value.filename == __file__
        assert info.value.lineno == seq_loss.__code__.co_firstlineno + 1


def test_a_model_in_a_closure():
    def make(model):
        def loss(x):
            return np.sum(model(x) ** 2)
        return loss

    model = Lin()
    loss = make(model)
    x = rng.normal(size=3)
    fast = _check(loss, (x,))
    model.W *= 2.0
    np.testing.assert_allclose(fast(x), ad.grad(loss)(x), rtol=1e-12, atol=1e-14)


def test_two_variables_of_one_name():
    def make(lin):  # a closure variable named as the module's global it calls with
        def loss(x):
            return np.sum(lin(x) ** 2) + lin_loss(x)
        return loss

    own = Lin()
    loss = make(own)
    x = rng.normal(size=3)
    fast = _check(loss, (x,))
    around = fast.source_for(x).split("\n\n\n")[0]
    assert around.startswith("def loss_grad(x, *, lin, lin_1):")  # its own first
    assert "lin_W = lin.W" in around and "lin_W_1 = lin_1.W" in around
    own.W *= 3.0
    globals()["lin"] = Lin()
    np.testing.assert_allclose(fast(x), ad.grad(loss)(x), rtol=1e-12, atol=1e-14)


def test_a_global_list_and_dict_of_layers():
    x = rng.normal(size=3)
    fast = _check(stacked, (x,))
    around = fast.source_for(x).split("\n\n\n")[0]
    assert around.startswith("def stacked_grad(x, *, layers, MODELS):")
    layers[0].W *= 0.5
    MODELS["enc"].b += 1.0
    np.testing.assert_allclose(fast(x), ad.grad(stacked)(x), rtol=1e-12, atol=1e-14)
    layers[1].act = "tanh"
    with pytest.raises(StructureError, match="'layers' holds an object whose settings"):
        fast(x)


def test_forward_mode_and_value_and_grad():
    x, t = rng.normal(size=3), rng.normal(size=2)
    direction = rng.normal(size=3)
    value, tangent = ad.jvp(seq_loss, jit="numba")(x, t, direction)
    want_value, want_tangent = ad.jvp(seq_loss)(x, t, direction)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tangent, ad.numeric_grad(seq_loss, x, t) @ direction,
                               rtol=1e-6, atol=1e-8)
    value, grad = ad.value_and_grad(seq_loss, jit="numba")(x, t)
    np.testing.assert_allclose(value, seq_loss(x, t), rtol=1e-12)
    np.testing.assert_allclose(grad, ad.grad(seq_loss)(x, t), rtol=1e-12, atol=1e-14)
