"""Objects as PyTorch-style code uses them: ``model(x)`` through ``__call__``, a list of
layer objects called in a loop, a loss object given to ``ad.grad``, a method of a
module-level instance, ``getattr``, a dict of lambdas written over several lines,
``functools.partial`` and a helper object constructed in the function. Each is checked
against central differences: reverse mode, forward mode, second order and ``jit=True``.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences, check_with_jit

SOURCE = """
import dataclasses
import functools

import numpy as np

rng = np.random.default_rng(3)


class Linear:
    def __init__(self, n_in, n_out):
        self.W = rng.normal(size=(n_in, n_out)) / n_in
        self.b = rng.normal(size=n_out) * 0.1

    def forward(self, x):
        return x @ self.W + self.b

    def __call__(self, x):
        return self.forward(x)


class Tanh:
    def __call__(self, x):
        return np.tanh(x)


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __len__(self):
        return len(self.layers)

    def __getitem__(self, index):
        return self.layers[index]


class MSE:
    def __call__(self, prediction, target):
        return np.mean((prediction - target) ** 2)


class Model:
    def __init__(self):
        self.net = Sequential([Linear(3, 4), Tanh(), Linear(4, 2)])
        self.loss_fn = MSE()

    def __call__(self, x):
        return self.net(x)

    def loss(self, x, t):
        return self.loss_fn(self(x), t)


class Activation:
    def __init__(self, kind):
        self.kind = kind

    def __call__(self, z):
        return getattr(np, self.kind)(z)


class Gated:
    def __init__(self, branch):
        self.branch = branch
        self.W = rng.normal(size=(3, 3)) / 3

    def sin_branch(self, z):
        return np.sin(z)

    def exp_branch(self, z):
        return np.exp(0.3 * z)

    def __call__(self, x):
        chosen = getattr(self, self.branch + "_branch")
        return chosen(x @ self.W) * (2.0 if hasattr(self, "W") else 1.0)


class Helper:
    def __init__(self, scale, power=2.0):
        self.scale = scale
        self.power = power

    def apply(self, x):
        return self.scale * np.abs(x) ** self.power


class Affine:
    def __init__(self, W):
        self.W = W

    def __call__(self, v):
        return np.sin(v @ self.W)


class Scaler:
    def __init__(self, s):
        self.s = s

    def scale_by(self, k):
        self.s = self.s * k


@dataclasses.dataclass
class Dense:
    W: np.ndarray
    scale: float = 0.5

    def __call__(self, x):
        return np.tanh(x @ self.W) * self.scale


lin = Linear(3, 3)
model = Model()
act = Activation("tanh")
gated = Gated("sin")

ACTIVATIONS = {
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": lambda z: np.tanh(z),
    "softplus": lambda z: np.log1p(
        np.exp(z)),
}
PAIR = {"sin": lambda z: np.sin(z), "cos": lambda z: np.cos(z)}


def method_of_global(x):
    return np.sum(lin.forward(x) ** 2)


def global_called(x):
    return np.sum(lin(x) ** 2)


def sequential_called(x):
    return np.sum(model(x) ** 2)


def sequential_indexed(x):
    net = model.net
    x = net[2](net[1](net[0](x)))
    return np.sum(x ** 2) + np.sum(net[-1].W) * len(net)


def loss_of_global(x, t):
    return model.loss(x, t)


def truth_of_objects(x):
    if model.net:  # its __len__: 3 layers
        x = np.sin(x)
    empty = Sequential([])
    scale = 3.0 if empty else 0.5
    return np.sum(x ** 2) * scale if lin else np.sum(x)


def getattr_of_module(x):
    return np.sum(getattr(np, "tanh")(x) * getattr(np, "missing", np.cos)(x))


def getattr_of_self(x):
    return np.sum(act(x) ** 2) + np.sum(gated(x))


def chosen_lambda(x, name):
    return np.sum(ACTIVATIONS[name](x) ** 2)


def lambdas_on_one_line(x):
    return np.sum(PAIR["sin"](x) * PAIR["cos"](x))


def partial_inside(x):
    f = functools.partial(np.power, 2.0)
    g = functools.partial(Helper(0.5).apply)
    return np.sum(f(x)) + np.sum(g(x))


def powered(x, a):
    return np.sum(np.abs(x) ** a)


cubed = functools.partial(powered, a=3.0)


def partial_of_global(x):
    return cubed(x) + np.sum(np.sin(x))


def helper_made_inside(x):
    return np.sum(Helper(2.0).apply(x)) + np.sum(Helper(0.5, power=3.0).apply(x))


def objects_holding_the_argument(W, x):
    net = Sequential([Affine(W), Tanh(), Affine(W.T)])
    return np.sum(net(x) ** 2)


def passed_whole(x):
    print("layer:", isinstance(lin, Linear), len(lin.W))
    print(lin)
    return np.sum(lin(x) ** 2), lin


def method_passed_on(x):
    forward = lin.forward
    return np.sum(np.tanh(forward(x)))


def changed_after_its_call(x):
    scaler = Scaler(2.0)
    scaler.scale_by(3.0)
    return np.sum(scaler.s * x)


def not_callable(x):
    return np.sum(Scaler(2.0)(x))


def made_and_returned(W, x):
    layer = Dense(W * 2.0)
    helper = Helper(2.0)
    print("made:", helper.scale, layer.scale)
    return np.sum(layer(x) ** 2) + np.sum(helper.apply(x)), (helper, layer)


def iterated(x):
    for layer in model.net:
        x = layer(x)
    return np.sum(x)


def attribute_named_by_the_call(x, name):
    return np.sum(getattr(np, name)(x)) if hasattr(np, name) else np.sum(x)


def attribute_named_at_run_time(x, name):
    return np.sum(getattr(np, name[0:3])(x))


def library_method_on_the_path(x):
    return np.sum(rng.permutation(x))
"""


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("objects"))(SOURCE)


def _normal(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


X = _normal(5, 3)


@pytest.mark.parametrize("name", ["method_of_global", "global_called", "sequential_called",
                                  "sequential_indexed", "truth_of_objects", "getattr_of_module", "getattr_of_self",
                                  "lambdas_on_one_line", "partial_inside",
                                  "partial_of_global", "helper_made_inside",
                                  "method_passed_on"])
def test_objects_called_in_the_function(user, name):
    fn = getattr(user, name)
    check_against_finite_differences(fn, [X], second_order=True)
    check_with_jit(fn, X)


def test_a_module_level_model_and_its_loss_object(user):
    t = _normal(5, 2, seed=1)
    check_against_finite_differences(user.loss_of_global, [X, t], wrt=(0, 1),
                                     second_order=True)
    check_with_jit(user.loss_of_global, X, t, wrt=(0, 1))


def test_a_dict_of_lambdas_written_over_several_lines_chosen_by_a_string(user):
    for name in ("tanh", "softplus", "relu"):
        check_against_finite_differences(user.chosen_lambda, [X, name],
                                         second_order=name != "relu")
        check_with_jit(user.chosen_lambda, X, name)


def test_getattr_of_a_name_the_call_passes(user):
    for name in ("sin", "arctan", "no_such_function"):
        check_against_finite_differences(user.attribute_named_by_the_call, [X, name],
                                         second_order=True)
        check_with_jit(user.attribute_named_by_the_call, X, name)


def test_objects_constructed_around_the_argument(user):
    W = _normal(3, 3, seed=2)
    check_against_finite_differences(user.objects_holding_the_argument, [W, X], wrt=(0, 1),
                                     second_order=True)
    check_with_jit(user.objects_holding_the_argument, W, X, wrt=(0, 1))


def test_objects_constructed_in_the_function_and_returned_beside_the_loss(user, capsys):
    """A dataclass's fields bound as its __init__ binds them; returned (or printed),
    an object made in the function is made by its call when the derivative runs."""
    W = _normal(3, 3, seed=2)
    loss = lambda W, x: user.made_and_returned(W, x)[0]  # noqa: E731
    check_against_finite_differences(loss, [W, X], wrt=(0, 1), second_order=True)
    check_with_jit(loss, W, X, wrt=(0, 1))
    for jit in (False, True):
        (dW, dx), (helper, layer) = ad.grad(user.made_and_returned, wrt=(0, 1), has_aux=True,
                                            jit=jit)(W, X)
        np.testing.assert_allclose(dW, ad.numeric_grad(loss, W, X), rtol=1e-6, atol=1e-9)
        assert type(helper) is user.Helper and helper.scale == 2.0
        np.testing.assert_allclose(layer.W, W * 2.0)
    assert "made: 2.0 0.5" in capsys.readouterr().out


def test_a_global_model_is_read_when_the_derivative_runs(user):
    """An optimiser's step replaces the model's arrays: the derivative reads the arrays
    it holds at each call, never those it held when compiled."""
    fn = user.global_called
    grads = {jit: ad.grad(fn, jit=jit) for jit in (False, True)}
    first = grads[False](X)
    saved = user.lin.W
    try:
        for _ in range(3):
            user.lin.W = user.lin.W - 0.1 * _normal(3, 3, seed=4)
            expected = ad.numeric_grad(fn, X)
            for grad in grads.values():
                np.testing.assert_allclose(grad(X), expected, rtol=1e-6, atol=1e-9)
        assert not np.allclose(grads[False](X), first)
        assert "lin_W = lin.W" in grads[False].source
    finally:
        user.lin.W = saved


def test_a_global_model_passed_whole_is_the_object_itself(user, capsys):
    """Printed, or returned beside the loss, a global model is the object (a global
    carries no gradient), read once: its settings are checked once per call."""
    for jit in (False, True):
        gradient, aux = ad.grad(user.passed_whole, has_aux=True, jit=jit)(X)
        assert aux is user.lin
        np.testing.assert_allclose(gradient, ad.numeric_grad(
            lambda x: user.passed_whole(x)[0], X), rtol=1e-6, atol=1e-9)
    assert "layer: True 3" in capsys.readouterr().out
    source = ad.grad(user.passed_whole, has_aux=True).source
    assert source.count("settings_unchanged(lin, ") == 1 and "print(lin)" in source


def test_a_global_model_whose_settings_change_is_refused(user):
    """Its settings are fixed while compiling: a change is an error, never a gradient
    computed with the settings it no longer holds."""
    grads = {jit: ad.grad(user.getattr_of_self, jit=jit) for jit in (False, True)}
    for grad in grads.values():
        grad(X)
    user.act.kind = "sin"
    try:
        for grad in grads.values():
            with pytest.raises(ad.tree.StructureError, match="'act' holds an object whose "
                               "settings .* changed after this derivative was compiled"):
                grad(X)
        fresh = ad.grad(lambda x: user.getattr_of_self(x))  # compiled for the new ones
        np.testing.assert_allclose(fresh(X), ad.numeric_grad(user.getattr_of_self, X),
                                   rtol=1e-6, atol=1e-9)
    finally:
        user.act.kind = "tanh"
    np.testing.assert_allclose(grads[True](X), grads[False](X))


def _check_callable(fn, args, wrt=0):
    """``fn``, a callable object or a partial: its gradient, JVP, Hessian-vector product
    and its gradient with ``jit=True`` against central differences."""
    expected = ad.numeric_grad(fn, *args, wrt=wrt)
    for jit in (False, True):
        np.testing.assert_allclose(ad.grad(fn, wrt=wrt, jit=jit)(*args), expected,
                                   rtol=1e-6, atol=1e-9)
    direction = _normal(*np.shape(args[wrt]), seed=5)
    push = ad.jvp(fn, wrt=wrt)
    value, along = push(*args, **{push.tangent_name: direction})
    np.testing.assert_allclose(value, fn(*args))
    np.testing.assert_allclose(along, np.sum(expected * direction), rtol=1e-6, atol=1e-9)
    gradient = ad.grad(fn, wrt=wrt)

    def moved(step):
        shifted = list(args)
        shifted[wrt] = args[wrt] + step * direction
        return gradient(*shifted)

    hvp = ad.hvp(fn, wrt=wrt)  # (the direction by its name: a partial's keywords)
    product = hvp(*args, **{hvp.tangent_name: direction})
    np.testing.assert_allclose(product, (moved(1e-5) - moved(-1e-5)) / 2e-5, rtol=1e-5,
                               atol=1e-7)
    report = ad.check_grad(fn, *args, wrt=wrt)
    assert report.passed, report


def test_a_loss_object_is_differentiated_through_its_call(user):
    prediction, target = _normal(4, 2), _normal(4, 2, seed=1)
    loss = user.MSE()
    _check_callable(loss, (prediction, target))
    _check_callable(loss, (prediction, target), wrt=1)
    assert "prediction" in str(ad.check_grad(loss, prediction, target))


def test_a_callable_model_differentiates_its_input_or_its_own_parameters(user):
    """``ad.grad(model)`` is ``ad.grad(model.__call__)``: ``wrt=0`` the first parameter
    after ``self``, ``wrt="self"`` the model, whose gradient holds its arrays'."""
    loss = user.MSE()
    scalar = ad.grad(lambda x: loss(user.model(x), np.zeros((5, 2))))
    np.testing.assert_allclose(scalar(X), ad.numeric_grad(
        lambda x: loss(user.model(x), np.zeros((5, 2))), X), rtol=1e-6, atol=1e-9)
    with pytest.raises(ad.NonScalarOutputError):
        ad.grad(user.model)(X)
    t = _normal(5, 2, seed=1)
    bound = user.model.loss
    by_self = ad.grad(bound, wrt="self")(X, t)
    assert type(by_self) is user.Model and type(by_self.net.layers[0]) is user.Linear
    expected = ad.numeric_grad(user.Model.loss, user.model, X, t)
    np.testing.assert_allclose(by_self.net.layers[0].W, expected.net.layers[0].W,
                               rtol=1e-6, atol=1e-9)
    inner = user.Sequential([user.Linear(3, 1)])
    nested = user.Sequential([inner, user.Tanh()])
    squared = lambda s, x: np.sum(s(x) ** 2)  # noqa: E731
    along_self = ad.grad(squared)(nested, X)
    expected = ad.numeric_grad(squared, nested, X)
    by_model_self = ad.grad(_Summed(nested), wrt="self")(X)
    for got in (along_self, by_model_self.model):
        for name in ("W", "b"):
            np.testing.assert_allclose(getattr(got.layers[0].layers[0], name),
                                       getattr(expected.layers[0].layers[0], name),
                                       rtol=1e-6, atol=1e-9)


class _Summed:
    """A callable object of this test file (the user's): the squared sum of a model."""

    def __init__(self, model):
        self.model = model

    def __call__(self, x):
        return np.sum(self.model(x) ** 2)


def test_partials_given_to_the_tools(user):
    _check_callable(functools.partial(user.powered, a=3.0), (X,))
    _check_callable(functools.partial(user.powered, X), (3.0,))
    report = ad.check_grad(functools.partial(user.powered, a=2.0), X)
    assert report.passed and "jvp" in str(report)


# ----- what is still refused -----


def test_a_method_changing_an_object_its_caller_holds_is_followed(user):
    # Python changes the caller's object: scaler.s is 6.0 after scale_by(3.0)
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(ad.grad(user.changed_after_its_call)(x), [6.0, 6.0])
    assert user.changed_after_its_call(x) == pytest.approx(np.sum(6.0 * x))


def test_calling_an_object_without_a_call_is_refused(user):
    with pytest.raises(ad.UnsupportedSyntaxError, match="is a Scaler object, which is not "
                       "callable") as info:
        ad.grad(user.not_callable)
    assert "np.sum(Scaler(2.0)(x))" in str(info.value)


def test_iterating_an_object_is_refused(user):
    with pytest.raises(ad.UnsupportedSyntaxError, match="'model.net' iterates a Sequential "
                       "object, which differentiated code does not iterate") as info:
        ad.grad(user.iterated)
    assert "for layer in model.net.layers" in str(info.value)


def test_getattr_of_a_name_known_only_at_run_time_is_refused(user):
    with pytest.raises(ad.UnsupportedSyntaxError, match="names an attribute known only when "
                       "the code runs") as info:
        ad.grad(lambda x, n: user.attribute_named_at_run_time(x, n))(X, np.ones(1))
    assert "getattr(np, name[0:3])(x)" in str(info.value)


def test_a_library_objects_method_on_the_gradient_path_is_refused_at_the_users_line(user):
    with pytest.raises(ad.UnknownFunctionError, match=r"\.permutation\(\)' of a library's "
                       "object") as info:
        ad.grad(user.library_method_on_the_path)(_normal(4))
    assert "np.sum(rng.permutation(x))" in str(info.value)
