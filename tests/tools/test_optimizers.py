"""ad.optim's optimisers and ad.minimize, the SciPy bridge, over structured parameters.

Each optimiser's update is checked against its formula written out here, leaf by
leaf, for a few steps, on every kind of structure ad.tree reads; both forms (the
functional ``update`` and the in-place ``step``) give the same numbers; training
reaches the closed-form or SciPy answer. The bridge hands SciPy the gradient and
Hessian-vector products of ad.grad and ad.hvp (checked against them and against
central differences of the flattened loss), and gives ``x`` back in the structure.
"""

from __future__ import annotations

import collections
import sys

import numpy as np
import pytest

import autodiff as ad
from autodiff.tools import optimizers
from tests.helpers import Layer, Pair

scipy_optimize = pytest.importorskip("scipy.optimize")

RNG = np.random.default_rng(30)


class Model:
    """An object of the user's class: a structure of its attributes."""

    def __init__(self, W, b, name):
        self.W, self.b, self.name = W, b, name


Settings = collections.namedtuple("Settings", "scale steps")


def structures():
    """(name, params): every kind of structure, with leaves that are not trained (a
    string, an int, None) beside float64, float32 arrays and Python floats."""
    W, b = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    return [
        ("dict", {"W": W, "b": b, "scale": 0.7, "activation": "tanh", "n": 2}),
        ("list", [W, b.astype(np.float32), 1.5]),
        ("nested", {"layers": [(W, b), (W.T.copy(), None)], "settings": Settings(0.3, 4)}),
        ("namedtuple", Pair(W, b)),
        ("object", Model(W, b, "net")),
        ("dataclass", Layer(W, b, "sin")),
        ("array", W),
    ]


STRUCTURES = structures()


def gradient_of(params):
    """A gradient in params' structure that changes with them (None where no leaf is
    trained), written without autodiff: the optimisers take any gradient."""
    return ad.tree.map(lambda p: np.cos(p) + 0.5 * p if optimizers.trained(p) else None, params)


# ----- each optimiser's formula, written out for one leaf -----

def sgd_reference(lr, momentum=0.0, nesterov=False, weight_decay=0.0):
    """torch.optim.SGD's algorithm as its documentation states it (dampening 0): the
    buffer is the gradient itself at the first step."""
    def run(p, steps):
        buffer = None
        for t in range(1, steps + 1):
            g = np.cos(p) + 0.5 * p
            if weight_decay:
                g = g + weight_decay * p
            if momentum:
                buffer = g.copy() if t == 1 else momentum * buffer + g
                g = g + momentum * buffer if nesterov else buffer
            p = p - lr * g
        return p
    return run


def adam_reference(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    """Adam as torch.optim.Adam's implementation arranges it: the step size carries the
    first moment's correction, the denominator the second's."""
    def run(p, steps):
        m = v = 0.0
        for t in range(1, steps + 1):
            g = np.cos(p) + 0.5 * p
            if decoupled:
                p = p - lr * weight_decay * p
            elif weight_decay:
                g = g + weight_decay * p
            m = betas[0] * m + (1 - betas[0]) * g
            v = betas[1] * v + (1 - betas[1]) * g ** 2
            step_size = lr / (1 - betas[0] ** t)
            denominator = np.sqrt(v) / np.sqrt(1 - betas[1] ** t) + eps
            p = p - step_size * m / denominator
        return p
    return run


CASES = [
    ("sgd", lambda: ad.optim.SGD(lr=0.1), sgd_reference(0.1)),
    ("momentum", lambda: ad.optim.SGD(lr=0.1, momentum=0.9), sgd_reference(0.1, 0.9)),
    ("nesterov", lambda: ad.optim.SGD(lr=0.05, momentum=0.8, nesterov=True),
     sgd_reference(0.05, 0.8, nesterov=True)),
    ("sgd-decay", lambda: ad.optim.SGD(lr=0.1, momentum=0.5, weight_decay=0.01),
     sgd_reference(0.1, 0.5, weight_decay=0.01)),
    ("adam", lambda: ad.optim.Adam(lr=0.01), adam_reference(0.01)),
    ("adam-decay", lambda: ad.optim.Adam(lr=0.02, betas=(0.8, 0.99), eps=1e-6,
                                         weight_decay=0.1),
     adam_reference(0.02, (0.8, 0.99), 1e-6, weight_decay=0.1)),
    ("adamw", lambda: ad.optim.AdamW(lr=0.01, weight_decay=0.1),
     adam_reference(0.01, weight_decay=0.1, decoupled=True)),
]
STEPS = 4


def trained_leaves(params):
    return [leaf for leaf in ad.tree.leaves(params) if optimizers.trained(leaf)]


@pytest.mark.parametrize("make, reference", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("name, params", STRUCTURES, ids=[s[0] for s in STRUCTURES])
def test_update_follows_the_formula(name, params, make, reference):
    opt = make()
    state = opt.init(params)
    new = params
    for _ in range(STEPS):
        new, state = opt.update(gradient_of(new), state, new)
    assert state.step == STEPS
    assert ad.tree.structure(new) == ad.tree.structure(params)
    for before, after in zip(ad.tree.leaves(params), ad.tree.leaves(new)):
        if not optimizers.trained(before):
            assert after is before  # carried as it is
            continue
        expected = reference(before, STEPS)
        assert type(after) is type(before) and np.shape(after) == np.shape(before)
        assert np.result_type(after) == np.result_type(before)  # float32 stays float32
        rtol = 1e-5 if np.result_type(before) == np.float32 else 1e-12
        np.testing.assert_allclose(after, expected, rtol=rtol, atol=rtol)
        assert not np.allclose(after, before)


def test_update_changes_nothing_it_was_given():
    params = {"W": RNG.normal(size=(2, 2)), "b": np.zeros(2)}
    copies = ad.tree.map(np.copy, params)
    opt = ad.optim.Adam(lr=0.1)
    state = opt.init(params)
    first = ad.tree.map(np.copy, state.slots["m"])
    opt.update(gradient_of(params), state, params)
    for a, b in zip(ad.tree.leaves(params), ad.tree.leaves(copies)):
        np.testing.assert_array_equal(a, b)
    assert state.step == 0
    np.testing.assert_array_equal(state.slots["m"]["W"], first["W"])


def test_adams_first_step_is_the_learning_rate_along_the_gradients_sign():
    # m_hat = g and v_hat = g**2 at the first step: each entry moves by lr (less eps).
    p = np.array([1.0, -2.0, 3.0])
    g = np.array([0.5, -4.0, 1e-3])
    new, state = ad.optim.Adam(lr=0.1, eps=0.0).update(g, ad.optim.Adam().init(p), p)
    np.testing.assert_allclose(new, p - 0.1 * np.sign(g), rtol=1e-12)
    np.testing.assert_allclose(state.slots["m"], 0.1 * g)
    np.testing.assert_allclose(state.slots["v"], 0.001 * g ** 2)


def test_the_state_has_the_parameters_structure_and_dtypes():
    params = {"W": np.ones((2, 2), np.float32), "s": 2.0, "act": "relu"}
    state = ad.optim.SGD(lr=0.1, momentum=0.9).init(params)
    assert state.step == 0 and set(state.slots) == {"momentum"}
    buffer = state.slots["momentum"]
    assert buffer["W"].dtype == np.float32 and buffer["s"] == 0.0 and buffer["act"] is None
    assert ad.optim.SGD(lr=0.1).init(params).slots == {}
    assert set(ad.optim.AdamW().init(params).slots) == {"m", "v"}


@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_float32_stays_float32_whatever_the_gradients_dtype(make):
    params = {"W": np.ones((2, 2), np.float32), "s": np.float32(0.5)}
    grads = {"W": np.full((2, 2), 0.25), "s": np.float64(0.5)}  # float64 gradients
    opt = make()
    new, state = opt.update(grads, None, params)
    assert new["W"].dtype == np.float32 and type(new["s"]) is np.float32
    assert all(np.result_type(leaf) == np.float32 for leaf in ad.tree.leaves(state.slots))
    W = params["W"]
    opt.step({"W": W}, {"W": grads["W"]})
    assert W.dtype == np.float32
    np.testing.assert_array_equal(W, new["W"])
    with pytest.raises(ad.ArgumentKindError, match=r"params\['s'\] is a NumPy scalar \(float32\)"):
        make().step(params, grads)


def test_a_leaf_without_a_gradient_is_left_as_it_is():
    params = {"W": np.ones(2), "frozen": np.ones(2)}
    grads = {"W": np.ones(2), "frozen": None}
    opt = ad.optim.AdamW(lr=0.1, weight_decay=0.5)  # no decay either, as PyTorch
    new, state = opt.update(grads, opt.init(params), params)
    assert new["frozen"] is params["frozen"]
    np.testing.assert_array_equal(state.slots["m"]["frozen"], 0.0)
    assert not np.allclose(new["W"], 1.0)


def test_a_schedule_gets_the_number_of_updates_made():
    seen = []

    def schedule(count):
        seen.append(count)
        return 0.1 / (1 + count)

    p = np.array([1.0])
    opt = ad.optim.SGD(lr=schedule)
    state = opt.init(p)
    for _ in range(3):
        p, state = opt.update(np.array([1.0]), state, p)
    assert seen == [0, 1, 2]
    np.testing.assert_allclose(p, 1.0 - 0.1 - 0.05 - 0.1 / 3)


# ----- the in-place form -----

@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_step_writes_what_update_returns_into_the_arrays(make):
    params = {"layers": [(RNG.normal(size=(3, 2)), np.zeros(2, np.float32))],
              "model": Model(RNG.normal(size=2), np.ones(1), "m")}
    arrays = trained_leaves(params)
    functional = ad.tree.map(lambda p: p.copy() if isinstance(p, np.ndarray) else p, params)
    opt, state = make(), make().init(params)
    for _ in range(3):
        functional, state = make().update(gradient_of(functional), state, functional)
        assert opt.step(params, gradient_of(params)) is params
    assert opt.state.step == 3 and params["model"].name == "m"
    for leaf, array, expected in zip(trained_leaves(params), arrays, trained_leaves(functional)):
        assert leaf is array  # the same arrays, updated
        assert leaf.dtype == expected.dtype
        np.testing.assert_array_equal(leaf, expected)


def test_step_refuses_a_float_and_writes_nothing():
    params = {"W": np.ones(2), "scale": 1.0}
    opt = ad.optim.SGD(lr=0.1)
    with pytest.raises(ad.ArgumentKindError,
                       match=r"SGD.step updates arrays in place: params\['scale'\] is a float"
                       r"(.|\n)*hint: hold it as a writable array"):
        opt.step(params, {"W": np.ones(2), "scale": 1.0})
    np.testing.assert_array_equal(params["W"], 1.0)
    assert opt.state is None


def test_step_refuses_parameters_of_another_structure_than_at_its_first_step():
    opt = ad.optim.SGD(lr=0.1, momentum=0.9)
    opt.step({"W": np.ones(2)}, {"W": np.ones(2)})
    with pytest.raises(ad.tree.StructureError,
                       match=r"SGD.step: params are \{'V': \*\}, and were \{'W': \*\} at the "
                       r"first step(.|\n)*hint: use one optimiser for each set of parameters"):
        opt.step({"V": np.ones(2)}, {"V": np.ones(2)})
    opt.state = None  # starts again
    opt.step({"V": np.ones(2)}, {"V": np.ones(2)})
    assert opt.state.step == 1


def test_step_refuses_a_read_only_array():
    W = np.ones(2)
    W.flags.writeable = False
    with pytest.raises(ad.ArgumentKindError, match=r"params\[0\] is a read-only array"):
        ad.optim.Adam().step([W], [np.ones(2)])


def test_step_trains_a_model_object_by_its_gradient():
    # The model of examples/model_class.py's kind: an object whose loss is a method.
    class Linear:
        def __init__(self, W, b):
            self.W, self.b, self.name = W, b, "linear"

        def loss(self, x, y):
            return np.mean((x @ self.W + self.b - y) ** 2)

    x = RNG.normal(size=(40, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.25
    model = Linear(np.zeros(3), np.zeros(1))
    W = model.W
    opt = ad.optim.SGD(lr=0.1, momentum=0.9)
    for _ in range(300):
        opt.step(model, ad.grad(Linear.loss)(model, x, y))
    assert model.W is W and model.name == "linear"
    np.testing.assert_allclose(model.W, [1.0, -2.0, 0.5], atol=1e-6)
    np.testing.assert_allclose(model.b, [0.25], atol=1e-6)


# ----- refusals -----

def test_gradients_of_another_structure_are_refused():
    params = [np.ones(2), np.ones(2)]
    opt = ad.optim.SGD(lr=0.1)
    with pytest.raises(ad.tree.StructureError,
                       match=r"SGD.update: the gradients are not in the parameters' structure"
                       r"(.|\n)*a tuple of gradients from wrt=\(0, 1, ...\) goes with a tuple"):
        opt.update((np.ones(2), np.ones(2)), opt.init(params), params)
    with pytest.raises(ad.tree.StructureError,
                       match=r"Adam.update: the state is not in the parameters' structure"):
        ad.optim.Adam().update({"W": np.ones(2)}, ad.optim.Adam().init({"V": np.ones(2)}),
                               {"W": np.ones(2)})


def test_a_gradient_for_a_leaf_that_is_not_trained_is_refused():
    # An integer argument gets a float gradient from ad.grad: its optimiser says so.
    weights = np.arange(3)
    gradient = ad.grad(lambda w: np.sum(w ** 2))(weights)
    with pytest.raises(ad.ArgumentKindError,
                       match=r"params is an int64 array, which an optimiser does not update, "
                       r"but it was given a gradient(.|\n)*np.asarray\(p, dtype=float\)"):
        ad.optim.SGD(lr=0.1).update(gradient, ad.optim.SGD(lr=0.1).init(weights), weights)
    with pytest.raises(ad.ArgumentKindError, match=r"the gradient of params\[1\] is complex, "
                       r"for a real parameter"):
        ad.optim.SGD(lr=0.1).update([1.0, 1j * np.ones(2)], None, [1.0, np.ones(2)])
    with pytest.raises(ad.ArgumentKindError, match=r"the gradient of params\['W'\] has shape "
                       r"\(3,\), the parameter \(2,\)"):
        ad.optim.SGD(lr=0.1).update({"W": np.ones(3)}, ad.optim.SGD(lr=0.1).init({"W": 1}),
                                    {"W": np.ones(2)})


def test_the_namespace_imports_as_pytorchs_does():
    import autodiff.optim
    from autodiff.optim import SGD, Adam, AdamW

    assert autodiff.optim is ad.optim is optimizers
    assert (SGD, Adam, AdamW) == (ad.optim.SGD, ad.optim.Adam, ad.optim.AdamW)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="Nesterov's momentum needs momentum > 0"):
        ad.optim.SGD(lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match=r"Adam: betas must be two numbers in \[0, 1\)"):
        ad.optim.Adam(betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="lr must be a number >= 0"):
        ad.optim.AdamW(lr=-1.0)
    assert repr(ad.optim.AdamW()) == (
        "AdamW(lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01)")
    assert repr(ad.optim.SGD(lr=0.1, momentum=0.9)) == (
        "SGD(lr=0.1, momentum=0.9, nesterov=False, weight_decay=0.0)")


# ----- training to a known answer -----

def least_squares(params, x, y):
    return np.mean((x @ params["w"] + params["b"] - y) ** 2)


def logistic(params, x, y, alpha):
    z = x @ params["w"] + params["b"]
    return np.mean(np.logaddexp(0.0, z) - y * z) + alpha * np.sum(params["w"] ** 2)


def regression_data():
    x = RNG.normal(size=(64, 3))
    y = x @ np.array([0.5, -1.0, 2.0]) + 0.3 + 0.1 * RNG.normal(size=64)
    return x, y


@pytest.mark.parametrize("opt", [ad.optim.SGD(lr=0.1, momentum=0.9),
                                 ad.optim.SGD(lr=0.1, momentum=0.9, nesterov=True),
                                 ad.optim.Adam(lr=lambda count: 0.05 * 0.996 ** count)],
                         ids=["momentum", "nesterov", "adam"])
def test_least_squares_reaches_the_closed_form(opt):
    x, y = regression_data()
    solution = np.linalg.lstsq(np.c_[x, np.ones(len(x))], y, rcond=None)[0]
    params = {"w": np.zeros(3), "b": 0.0}
    state = opt.init(params)
    dloss = ad.grad(least_squares)
    for _ in range(1000):
        params, state = opt.update(dloss(params, x, y), state, params)
    np.testing.assert_allclose(params["w"], solution[:3], atol=1e-5)
    assert abs(params["b"] - solution[3]) < 1e-5 and isinstance(params["b"], float)


def test_logistic_regression_reaches_scipys_answer():
    # data of its own generator, the same whatever ran before it in this process: on
    # some draws BFGS stops at tol=1e-10 with "precision loss" (SciPy's line search)
    rng = np.random.default_rng(44)
    x = rng.normal(size=(64, 3))
    y = (x @ np.array([1.0, -1.0, 0.5]) + 0.2 * rng.normal(size=64) > 0).astype(float)

    def flat_loss(vector):  # the same loss on SciPy's vector, its gradient by hand
        z = x @ vector[:3] + vector[3]
        value = np.mean(np.logaddexp(0.0, z) - y * z) + 0.01 * np.sum(vector[:3] ** 2)
        r = (1 / (1 + np.exp(-z)) - y) / len(y)
        return value, np.r_[x.T @ r + 0.02 * vector[:3], np.sum(r)]

    expected = scipy_optimize.minimize(flat_loss, np.zeros(4), jac=True, method="BFGS",
                                       options={"gtol": 1e-10}).x
    # dogleg needs a positive definite Hessian: a convex loss's
    for method, tol in (("BFGS", 1e-10), ("Newton-CG", 1e-12), ("dogleg", 1e-9)):
        result = ad.minimize(logistic, {"w": np.zeros(3), "b": 0.0}, args=(x, y, 0.01),
                             method=method, tol=tol)
        assert result.success, (method, result.message)
        np.testing.assert_allclose(result.x["w"], expected[:3], atol=1e-5, err_msg=method)
        np.testing.assert_allclose(result.x["b"], expected[3], atol=1e-5, err_msg=method)

    params, opt = {"w": np.zeros(3), "b": 0.0}, ad.optim.Adam(lr=0.05)
    for count in range(2000):
        opt.lr = 0.05 * 0.997 ** count  # changed between steps, as a PyTorch user may
        params, opt.state = opt.update(ad.grad(logistic)(params, x, y, 0.01), opt.state,
                                       params)  # None at the first: init(params)
    np.testing.assert_allclose(params["w"], expected[:3], atol=1e-4)


# ----- the SciPy bridge -----

def rosenbrock(p):
    x = np.concatenate([p["head"], p["tail"]])
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


START = {"head": np.array([1.3, 0.7]), "tail": np.array([0.8, 1.9, 1.2])}


@pytest.mark.parametrize("method", ["L-BFGS-B", "BFGS", "CG", "Newton-CG", "trust-ncg",
                                    "trust-krylov", "trust-exact", "trust-constr"])
def test_minimize_rosenbrock_with_structured_params(method):
    options = {"gtol": 1e-10} if method in ("BFGS", "CG", "trust-constr") else None
    result = ad.minimize(rosenbrock, START, method=method, options=options, tol=1e-12)
    assert set(result.x) == {"head", "tail"}
    np.testing.assert_allclose(result.x["head"], np.ones(2), atol=1e-5)
    np.testing.assert_allclose(result.x["tail"], np.ones(3), atol=1e-5)
    gradient = result.grad if method == "trust-constr" else result.jac
    expected = ad.grad(rosenbrock)(result.x)
    for key in ("head", "tail"):
        np.testing.assert_allclose(gradient[key], expected[key], atol=1e-12)
    if method in ("Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"):
        assert result.nhev > 0  # it took Hessian-vector products
    np.testing.assert_array_equal(START["head"], [1.3, 0.7])  # x0 is not changed


def handed_to_scipy(monkeypatch, fun, x0, args=(), **options):
    """What ad.minimize gives scipy.optimize.minimize: its keyword arguments."""
    given = {}

    def fake_minimize(f, vector, **keywords):
        given.update(keywords, fun=f, x0=vector)
        return scipy_optimize.OptimizeResult(x=vector, jac=f(vector, *keywords["args"])[1])

    monkeypatch.setattr(scipy_optimize, "minimize", fake_minimize)
    result = ad.minimize(fun, x0, args, **options)
    return given, result


def central(f, vector, h=1e-6):
    return np.array([(f(vector + h * e) - f(vector - h * e)) / (2 * h)
                     for e in np.eye(vector.size)])


def test_jac_and_hessp_are_ad_grad_and_ad_hvp(monkeypatch):
    x, y = regression_data()
    params = {"w": RNG.normal(size=3), "b": 0.4, "layer": (RNG.normal(size=(2,)), 1.5)}

    def loss(p, x, y):
        z = np.tanh(x @ p["w"] + p["b"]) * np.sum(p["layer"][0] ** 3)
        return np.mean((z - y) ** 2) + p["layer"][1] ** 4

    given, _ = handed_to_scipy(monkeypatch, loss, params, (x, y), method="trust-ncg")
    assert given["jac"] is True and given["method"] == "trust-ncg"
    vector = given["x0"]
    assert vector.dtype == np.float64 and vector.shape == (7,)
    np.testing.assert_array_equal(vector, np.concatenate(
        [np.ravel(leaf) for leaf in ad.tree.leaves(params)]))
    value, jac = given["fun"](vector, x, y)
    assert value == loss(params, x, y)
    gradient = ad.grad(loss)(params, x, y)
    np.testing.assert_array_equal(jac, np.concatenate(
        [np.ravel(leaf) for leaf in ad.tree.leaves(gradient)]))
    np.testing.assert_allclose(jac, central(lambda v: given["fun"](v, x, y)[0], vector),
                               rtol=1e-6, atol=1e-8)
    direction = RNG.normal(size=7)
    product = given["hessp"](vector, direction, x, y)
    np.testing.assert_allclose(
        product, central(lambda v: given["fun"](v, x, y)[1], vector).T @ direction,
        rtol=1e-5, atol=1e-7)
    assert "hess" not in given


def test_hessp_only_where_a_method_takes_it(monkeypatch):
    given, _ = handed_to_scipy(monkeypatch, rosenbrock, START, method="L-BFGS-B")
    assert "hessp" not in given and "hess" not in given
    given, _ = handed_to_scipy(monkeypatch, rosenbrock, START, method="Newton-CG", hessp=False)
    assert "hessp" not in given
    given, _ = handed_to_scipy(monkeypatch, rosenbrock, START, method="trust-exact")
    hessian = given["hess"](given["x0"])
    np.testing.assert_allclose(hessian, central(lambda v: given["fun"](v)[1], given["x0"]),
                               rtol=1e-5, atol=1e-4)


def test_minimize_keeps_each_leafs_kind_and_dtype():
    def loss(p, target):
        return (np.sum((p["w32"] - target) ** 2) + (p["s"] - 2.0) ** 2
                + np.sum(p["m"] ** 2) * p["n"])

    x0 = {"w32": np.zeros(2, np.float32), "s": 0.0, "m": np.ones((2, 2)), "n": 3,
          "label": "fit"}
    seen = []
    result = ad.minimize(loss, x0, args=(np.array([1.0, -1.0], np.float32),),
                         method="L-BFGS-B", callback=seen.append)
    assert result.success
    assert result.x["w32"].dtype == np.float32 and type(result.x["s"]) is float
    assert result.x["m"].shape == (2, 2) and result.x["n"] == 3 and result.x["label"] == "fit"
    np.testing.assert_allclose(result.x["w32"], [1.0, -1.0], atol=1e-4)
    assert result.jac["n"] is None and result.jac["label"] is None
    assert seen and all(ad.tree.structure(p) == ad.tree.structure(x0) for p in seen)


@pytest.mark.parametrize("method", ["L-BFGS-B", "Newton-CG", "trust-constr"])
def test_a_callback_gets_the_structure_and_may_stop(method):
    seen = []

    def callback(params):
        seen.append(params)
        if len(seen) == 3:
            raise StopIteration

    result = ad.minimize(rosenbrock, START, method=method, callback=callback)
    assert len(seen) == 3 and result.nit == 3 and "StopIteration" in result.message
    assert all(set(p) == {"head", "tail"} and p["tail"].shape == (3,) for p in seen)
    np.testing.assert_array_equal(result.x["head"], seen[-1]["head"])


def test_minimize_takes_a_plain_array_and_bounds_over_the_vector():
    result = ad.minimize(lambda w: np.sum((w - 3.0) ** 2), np.zeros((2, 2)), method="L-BFGS-B",
                         bounds=[(0, 1), (0, 5), (-1, 0), (0, 5)])
    assert result.x.shape == (2, 2)
    np.testing.assert_allclose(result.x, [[1.0, 3.0], [0.0, 3.0]], atol=1e-6)


@ad.custom_grad
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defvjp
def _(g, ans, x):
    return g / (1.0 + np.exp(-x))


def test_hessian_products_ad_hvp_refuses_say_what_minimize_can_do():
    # ad.hvp refuses a function with a custom gradient and no forward-mode rule (the
    # gradient calls it, and forward mode goes through that call): Newton-CG says so,
    # and BFGS, which takes no products, minimises the same loss.
    def loss(pair):
        return np.sum(softplus(pair.W - 2.0) + softplus(2.0 - pair.W)) + (pair.b + 1.0) ** 2

    with pytest.raises(ad.NonDifferentiableError,
                       match=r"'softplus' has no forward-mode \(JVP\) rule(.|\n)*hint: "
                       r"method='Newton-CG' takes Hessian-vector products, from ad.hvp, which "
                       r"refused this: pass hessp=False"):
        ad.minimize(loss, Pair(np.zeros(2), 0.0), method="Newton-CG")
    result = ad.minimize(loss, Pair(np.zeros(2), 0.0), method="BFGS", options={"gtol": 1e-10})
    assert type(result.x) is Pair
    np.testing.assert_allclose(result.x.W, 2.0, atol=1e-6)
    assert abs(result.x.b + 1.0) < 1e-6


def test_minimize_refuses_x0_without_a_floating_leaf():
    with pytest.raises(ad.ArgumentKindError,
                       match=r"minimize: x0 holds no floating leaf to optimise \(its leaves: "
                       r"int, str\)"):
        ad.minimize(lambda p: 0.0, {"n": 1, "label": "x"})


def test_minimize_without_scipy_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"ad.minimize calls scipy.optimize.minimize: "
                       r"install SciPy \(pip install scipy\)"):
        ad.minimize(rosenbrock, START)
