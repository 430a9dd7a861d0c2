"""Off the gradient path, the user's Python runs as written, in order, once per call,
in the forward sweep: writes into a dict, an object or a list the caller passed
(batch norm's running statistics, a layer's ``self.cache``, ``log.append``), a random
seed set and masks drawn from it, a generator passed as an argument. A value written
out carries its forward value and no gradient back into the caller's container; what
the call reads back is an ordinary data dependency. Every gradient is checked against
central differences: reverse, forward (ad.jvp), second order where it applies, and
``jit=True``."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(30)


# ----- batch norm: running statistics written into the dict it was given -----


def batch_norm(x, params):
    mu = x.mean(0)
    var = x.var(0)
    params["running_mean"] = 0.9 * params["running_mean"] + 0.1 * mu
    params["running_var"] = 0.9 * params["running_var"] + 0.1 * var
    y = params["gamma"] * (x - mu) / np.sqrt(var + 1e-5) + params["beta"]
    return np.sum(np.tanh(y) ** 2)


def bn_params():
    return {"running_mean": np.zeros(3), "running_var": np.ones(3),
            "gamma": rng.uniform(0.5, 1.5, size=3), "beta": rng.uniform(-0.5, 0.5, size=3)}


def test_batch_norm_writes_its_running_statistics_once_per_call():
    x, params = rng.normal(size=(5, 3)), bn_params()
    gamma = params["gamma"].copy()
    ad.grad(batch_norm, wrt=(0, 1))(x, params)
    np.testing.assert_allclose(params["running_mean"], 0.1 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(params["running_var"], 0.9 + 0.1 * x.var(0), rtol=1e-12)
    assert params["gamma"] is not None and np.array_equal(params["gamma"], gamma)
    ad.grad(batch_norm, wrt=(0, 1))(x, params)  # a second call: a second step
    np.testing.assert_allclose(params["running_mean"], 0.19 * x.mean(0), rtol=1e-12)


def test_batch_norm_gradients_against_finite_differences():
    x, params = rng.normal(size=(5, 3)), bn_params()
    gradient = ad.grad(batch_norm, wrt=(0, 1))(x, params)
    # the running statistics are written, never read for the output: no gradient
    np.testing.assert_array_equal(gradient[1]["running_mean"], np.zeros(3))
    check_with_jit(batch_norm, x, params, wrt=(0, 1))
    check_against_finite_differences(batch_norm, [x, params], wrt=0, second_order=True)

    def of_x_and_gamma(x, gamma):  # (a dict of the function's own: nothing written out)
        return batch_norm(x, {"running_mean": np.zeros(3), "running_var": np.ones(3),
                              "gamma": gamma, "beta": np.full(3, 0.2)})

    check_against_finite_differences(of_x_and_gamma, [x, params["gamma"]], wrt=(0, 1),
                                     second_order=True)


# ----- reading back what the call wrote: an ordinary data dependency -----


def writes_then_reads(x, state):
    state["h"] = np.tanh(x)
    seen = state
    state["scaled"] = seen["h"] * state["scale"]
    return np.sum(seen["scaled"] ** 2) + np.sum(state["h"])


def test_reading_back_what_was_written_carries_the_gradient():
    x = rng.normal(size=4)
    state = {"scale": rng.uniform(1.0, 2.0, size=4)}
    for wrt in (0, (0, 1)):
        check_with_jit(writes_then_reads, x, state, wrt=wrt)
    check_against_finite_differences(writes_then_reads, [x, state], wrt=0, second_order=True)
    state = {"scale": np.full(4, 2.0)}
    ad.grad(writes_then_reads)(x, state)
    np.testing.assert_allclose(state["h"], np.tanh(x), rtol=1e-15)  # the forward values
    np.testing.assert_allclose(state["scaled"], 2.0 * np.tanh(x), rtol=1e-15)


def test_a_value_written_out_carries_no_gradient_out_of_the_call():
    def keeps_output(x, out):
        y = np.sin(x)
        out["y"] = y
        return np.sum(y * y)

    out = {}
    x = rng.normal(size=3)
    gradient = ad.grad(keeps_output)(x, out)
    np.testing.assert_allclose(gradient, np.sin(2 * x), rtol=1e-12)
    assert isinstance(out["y"], np.ndarray)
    np.testing.assert_array_equal(out["y"], np.sin(x))
    value, tangent = ad.jvp(keeps_output)(x, out, np.ones(3))
    np.testing.assert_array_equal(out["y"], np.sin(x))  # never a tangent


# ----- a layer object, passed as an argument -----


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.initialized = False

    def forward(self, x):
        if not self.initialized:
            self.n_in = x.shape[1]
            self.initialized = True
        h = np.tanh(x @ self.W + self.b)
        self.cache = (x, h)
        self.last_input = x
        return h


def layer_loss(layer, x):
    out = layer.forward(x)
    return np.sum(out ** 2) + np.sum(layer.cache[1] * x[:, :2])


def test_a_layer_records_what_it_saw_and_is_differentiated():
    W, b = rng.normal(size=(3, 2)), rng.normal(size=2)
    x = rng.normal(size=(4, 3))
    layer = Dense(W.copy(), b.copy())
    gradient = ad.grad(layer_loss, wrt=(0, 1))(layer, x)
    assert layer.initialized is True and layer.n_in == 3
    assert layer.last_input is x
    np.testing.assert_allclose(layer.cache[1], np.tanh(x @ W + b), rtol=1e-15)

    def of_arrays(W, b, x):  # run by Python alone, for the finite differences
        return layer_loss(Dense(W, b), x)

    expected = [ad.numeric_grad(of_arrays, W, b, x, wrt=i) for i in range(3)]
    np.testing.assert_allclose(gradient[0].W, expected[0], rtol=1e-6)
    np.testing.assert_allclose(gradient[0].b, expected[1], rtol=1e-6)
    np.testing.assert_allclose(gradient[1], expected[2], rtol=1e-6)
    # called again (initialized now, its caches there): the same gradient
    again = ad.grad(layer_loss, wrt=(0, 1), jit=True)(layer, x)
    np.testing.assert_allclose(again[0].W, expected[0], rtol=1e-6)
    np.testing.assert_allclose(again[1], expected[2], rtol=1e-6)
    check_against_finite_differences(layer_loss, [layer, x], wrt=1, second_order=True)
    check_with_jit(layer_loss, Dense(W.copy(), b.copy()), x, wrt=(0, 1))


# ----- random state: the mask the derivative uses is the one the function draws -----


def dropout(x, seed):
    np.random.seed(seed)
    mask = np.random.rand(*x.shape) < 0.5
    return np.sum(np.sin(x) * mask) / 0.5


def test_dropout_with_a_seed_against_finite_differences():
    x = rng.normal(size=(3, 4))
    check_against_finite_differences(dropout, [x, 7], wrt=0, second_order=True)
    check_with_jit(dropout, x, 7)
    np.random.seed(7)
    mask = np.random.rand(3, 4) < 0.5
    np.testing.assert_allclose(ad.grad(dropout)(x, 7), 2 * np.cos(x) * mask, rtol=1e-12)


def noisy(x, generator):
    noise = generator.normal(size=x.shape)
    return np.sum(np.exp(x * 0.5) * noise)


def test_a_generator_passed_draws_once_per_call():
    x = rng.normal(size=5)
    gradient = ad.grad(noisy)(x, np.random.default_rng(3))
    expected = ad.numeric_grad(lambda x: noisy(x, np.random.default_rng(3)), x)
    np.testing.assert_allclose(gradient, expected, rtol=1e-7)
    generator = np.random.default_rng(3)
    for derivative in (ad.grad(noisy), ad.grad(noisy, jit=True)):
        derivative(x, generator)
    reference = np.random.default_rng(3)
    reference.normal(size=5), reference.normal(size=5)
    assert generator.normal() == reference.normal()  # two calls, two draws of 5
    value, tangent = ad.jvp(noisy)(x, np.random.default_rng(3), np.ones(5))
    assert tangent == pytest.approx(float(np.sum(expected)), rel=1e-7)


# ----- effects run once per call, in order -----


def logged(x, log, state):
    log.append("start")
    h = np.tanh(x)
    state["calls"] = state["calls"] + 1.0
    log.append(h.shape)
    np.random.seed(int(state["calls"]))
    return np.sum(h ** 2)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "hvp", "jit"])
def test_effects_happen_once_per_call_in_order(transform):
    x = rng.normal(size=3)
    log, state = [], {"calls": np.zeros(())}
    derivative = {"grad": ad.grad(logged), "value_and_grad": ad.value_and_grad(logged),
                  "jvp": ad.jvp(logged), "hvp": ad.hvp(logged),
                  "jit": ad.grad(logged, jit=True)}[transform]
    extra = () if transform in ("grad", "value_and_grad", "jit") else (np.ones(3),)
    for call in range(1, 4):
        derivative(x, log, state, *extra)
        assert log == ["start", (3,)] * call
        assert state["calls"] == call
    np.testing.assert_allclose(ad.grad(logged)(x, [], {"calls": np.zeros(())}),
                               2 * np.tanh(x) * (1 - np.tanh(x) ** 2), rtol=1e-12)


def appended_in_a_loop(x, steps, log):
    h = x
    for t in range(steps):
        h = np.sin(h) + x
        log.append(np.sum(h))
    return np.sum(h ** 2)


def test_appending_to_the_callers_list_in_a_loop_of_run_time_length():
    x = rng.normal(size=3)
    log = []
    ad.grad(appended_in_a_loop)(x, 3, log)
    assert len(log) == 3
    h = x
    for t in range(3):
        h = np.sin(h) + x
        assert log[t] == pytest.approx(np.sum(h), rel=1e-14)
    check_against_finite_differences(lambda x: appended_in_a_loop(x, 3, []), [x],
                                     second_order=True)
    check_with_jit(lambda x: appended_in_a_loop(x, 4, []), x)


# ----- refused: a value carrying a gradient reaching a call that may change it -----


def test_a_gradient_into_a_call_made_for_its_effect_is_refused():
    def shuffles(x):
        np.random.shuffle(x)
        return np.sum(x * np.arange(3.0))

    with pytest.raises(ad.NonDifferentiableError, match="a call made for its effect is "
                       "passed a value that carries a gradient") as info:
        ad.grad(shuffles)(np.ones(3))
    assert info.value.lineno is not None

    def shuffles_own(x):
        order = np.arange(3.0)
        np.random.shuffle(order)
        return np.sum(x * order)

    with pytest.raises(ad.UnsupportedSyntaxError, match="passed an array the function made"):
        ad.grad(shuffles_own)(np.ones(3))


# ----- caches returned beside the output: (out, cache) -----


def rnn(x, W, steps):
    h = x
    caches = []
    for t in range(steps):
        a = h @ W
        h_new = np.tanh(a)
        caches.append((h, a, h_new))
        h = h_new
    return np.sum(h ** 2), caches


def test_caches_built_in_a_loop_of_run_time_length_are_the_aux():
    x, W = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)) * 0.5
    gradient, caches = ad.grad(rnn, wrt=1, has_aux=True)(x, W, 3)
    np.testing.assert_allclose(gradient, ad.numeric_grad(lambda W: rnn(x, W, 3)[0], W),
                               rtol=1e-7)
    expected = rnn(x, W, 3)[1]
    assert type(caches) is list and len(caches) == 3
    for ours, theirs in zip(caches, expected):
        assert len(ours) == 3
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-15)
    (value, aux), again = ad.value_and_grad(rnn, wrt=1, has_aux=True, jit=True)(x, W, 3)
    assert value == pytest.approx(rnn(x, W, 3)[0], rel=1e-14) and len(aux) == 3
    np.testing.assert_allclose(again, gradient, rtol=1e-12)
    check_against_finite_differences(lambda x, W: rnn(x, W, 4)[0], [x, W], wrt=(0, 1),
                                     second_order=True)


def dense_forward(x, W, b):
    a = x @ W + b
    out = np.maximum(a, 0.0)
    cache = (x, W, a)
    return out, cache


def dense_backward(dout, cache):  # the backward pass a course writes by hand
    x, W, a = cache
    da = dout * (a > 0)
    return da @ W.T, x.T @ da, np.sum(da, axis=0)


def test_a_vjp_of_out_and_cache_takes_none_for_the_cache():
    x, W, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=2)
    dout = rng.normal(size=(4, 2))
    ours = ad.vjp(dense_forward, wrt=(0, 1, 2))(x, W, b, (dout, None))
    by_hand = dense_backward(dout, dense_forward(x, W, b)[1])
    for a, b_ in zip(ours, by_hand):
        np.testing.assert_allclose(a, b_, rtol=1e-12)
    jitted = ad.vjp(dense_forward, wrt=(0, 1, 2), jit=True)(x, W, b, (dout, None))
    for a, b_ in zip(jitted, by_hand):
        np.testing.assert_allclose(a, b_, rtol=1e-12)
    # a seed for the cache too weighs it as any output
    seeds = (dout, (np.zeros_like(x), np.ones_like(W), np.zeros((4, 2))))
    weighted = ad.vjp(dense_forward, wrt=1)(x, W, b, seeds)
    np.testing.assert_allclose(weighted, by_hand[1] + 1.0, rtol=1e-12)
    with pytest.raises(ad.AutodiffError, match="returns a tuple of 2 outputs, and was given "
                       "a seed of shape"):
        ad.vjp(dense_forward)(x, W, b, dout)


def test_the_course_layer_gradient_against_finite_differences():
    x, W, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=2)

    def loss(x, W, b):
        out, cache = dense_forward(x, W, b)
        return np.sum(out ** 2) + 0.1 * np.sum(cache[2])

    check_against_finite_differences(loss, [x, W, b], wrt=(0, 1, 2))
    check_with_jit(loss, x, W, b, wrt=(0, 1, 2))
    gradient, cache = ad.grad(lambda x, W, b: (np.sum(dense_forward(x, W, b)[0] ** 2),
                                               dense_forward(x, W, b)[1]), wrt=1,
                              has_aux=True)(x, W, b)
    np.testing.assert_allclose(cache[2], x @ W + b, rtol=1e-15)


def test_the_gradient_of_a_layer_holds_no_forward_value_the_call_recorded():
    layer = Dense(rng.normal(size=(3, 2)), rng.normal(size=2))
    gradient = ad.grad(layer_loss)(layer, rng.normal(size=(4, 3)))
    assert hasattr(layer, "cache") and gradient.cache is None and gradient.n_in is None
    assert gradient.last_input is None and gradient.initialized is None
    assert isinstance(gradient.W, np.ndarray)


# ----- writes under a branch decided when the code runs -----


def written_on_each_path(x, params):
    if np.sum(x) > 0:
        params["kept"] = np.tanh(x)
    else:
        params["kept"] = -x * params["scale"]
    return np.sum(params["kept"] ** 2)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_write_on_each_path_of_a_branch(sign):
    x = sign * rng.uniform(0.5, 1.5, size=3)
    params = {"kept": np.zeros(3), "scale": np.full(3, 2.0)}
    check_against_finite_differences(written_on_each_path, [x, params], wrt=0, second_order=True)
    check_with_jit(written_on_each_path, x, params, wrt=(0, 1))
    ad.grad(written_on_each_path)(x, params)
    expected = np.tanh(x) if sign > 0 else -2.0 * x
    np.testing.assert_allclose(params["kept"], expected, rtol=1e-15)


def test_a_key_written_on_one_path_only_is_read_back_nowhere():
    def one_path(x, params):
        if np.sum(x) > 0:
            params["new"] = np.tanh(x)
        return np.sum(x ** 2)

    def read_after(x, params):
        if np.sum(x) > 0:
            params["new"] = np.tanh(x)
        return np.sum(params["new"])

    params = {}
    np.testing.assert_allclose(ad.grad(one_path)(np.ones(3), params), 2.0 * np.ones(3))
    np.testing.assert_allclose(params["new"], np.tanh(np.ones(3)))
    params = {}
    ad.grad(one_path)(-np.ones(3), params)
    assert params == {}
    with pytest.raises(ad.UnsupportedSyntaxError, match="'params' holds a dict or an object "
                       "with different keys on different paths"):
        ad.grad(read_after)(np.ones(3), {})


# ----- structures inside structures: a model's layers, a dict of dicts -----


class Model:
    def __init__(self, layers):
        self.layers = layers
        self.steps = 0.0

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        self.steps = self.steps + 1.0
        return x


def model_loss(model, x):
    out = model.forward(x)
    return np.sum(out ** 2) + np.sum(model.layers[0].cache[1])


def test_layers_inside_a_model_record_what_they_saw():
    W0, b0 = rng.normal(size=(3, 3)), rng.normal(size=3)
    W1, b1 = rng.normal(size=(3, 2)), rng.normal(size=2)
    x = rng.normal(size=(4, 3))
    model = Model([Dense(W0.copy(), b0.copy()), Dense(W1.copy(), b1.copy())])
    gradient = ad.grad(model_loss)(model, x)
    assert model.steps == 1.0 and model.layers[1].n_in == 3
    np.testing.assert_allclose(model.layers[1].last_input, np.tanh(x @ W0 + b0), rtol=1e-15)
    expected = ad.numeric_grad(
        lambda W: model_loss(Model([Dense(W, b0), Dense(W1, b1)]), x), W0)
    np.testing.assert_allclose(gradient.layers[0].W, expected, rtol=1e-6)
    ad.grad(model_loss, jit=True)(model, x)
    assert model.steps == 2.0
    check_against_finite_differences(model_loss, [model, x], wrt=1, second_order=True)


def nested_state(x, state):
    state["bn"]["mean"] = x.mean(0)
    bn = state["bn"]
    return np.sum((x - bn["mean"]) ** 2)


def test_a_dict_inside_the_callers_dict_is_written_and_read_back():
    x = rng.normal(size=(4, 3))
    state = {"bn": {"mean": np.zeros(3)}}
    gradient = ad.grad(nested_state)(x, state)
    np.testing.assert_allclose(state["bn"]["mean"], x.mean(0), rtol=1e-15)
    np.testing.assert_allclose(gradient, ad.numeric_grad(
        lambda x: nested_state(x, {"bn": {"mean": np.zeros(3)}}), x), rtol=1e-7)
    check_against_finite_differences(nested_state, [x, state], wrt=0, second_order=True)
    check_with_jit(nested_state, x, state)


def test_repeated_effects_are_each_kept_and_read_as_written():
    def twice(x, log, state):
        log.append(1)
        log.append(1)
        np.random.seed(3)
        a = np.random.rand(2)
        np.random.seed(3)
        b = np.random.rand(2)
        state["a"] = 1.0
        return np.sum(x * a * b)

    log, state = [], {}
    derivative = ad.grad(twice)
    gradient = derivative(np.ones(2), log, state)
    np.random.seed(3)
    a = np.random.rand(2)
    np.testing.assert_allclose(gradient, a * a, rtol=1e-15)
    assert log == [1, 1] and state == {"a": 1.0}
    lines = [line.strip() for line in derivative.source_for(np.ones(2), log, state).splitlines()]
    assert lines.count("log.append(1)") == 2 and lines.count("np.random.seed(3)") == 2
    assert "state['a'] = 1.0" in lines and any(
        line.startswith("# line ") and line.endswith('state["a"] = 1.0') for line in lines)
