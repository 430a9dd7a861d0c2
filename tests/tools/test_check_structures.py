"""numeric_grad and check_grad on structured arguments: dicts, nested lists of tuples,
namedtuples and dataclasses, compared leaf by leaf and reported by each leaf's path."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.tools import check
from tests.helpers import Layer, Pair, list_mlp, optional_bias

RNG = np.random.default_rng(11)


# ----- the functions checked -----


def dict_mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"] + params["b2"]) ** 2) * params["scale"]


def pair_loss(pair, x):
    return np.sum(np.sin(x @ pair.W) * pair.b)


def dataclass_layers(layers, x):
    for layer in layers:
        z = x @ layer.W + layer.b
        x = np.tanh(z) if layer.activation == "tanh" else np.sin(z)
    return np.sum(x ** 2)


def mixed_leaves(p):
    return (p["scale"] * np.sum(p["w"] ** 2) + np.sum(np.sin(p["w32"])) * p["k"]
            + p["g"] ** 3 + np.sum(p["pair"].W))


def array_output(params, x):
    return np.tanh(x @ params["W"])


@ad.custom_grad
def off_square(x):
    return x ** 2


@off_square.defvjp
def _(g, ans, x):
    # 1% too large at flat element 1 only
    return g * 2.0 * x * np.where(np.arange(x.size).reshape(x.shape) == 1, 1.01, 1.0)


@off_square.defjvp
def _(t, ans, x):
    return t * 2.0 * x


def list_with_a_wrong_rule(layers, x):
    (W0, b0), (W1, b1) = layers
    h = np.tanh(x @ W0 + b0)
    return np.sum(h @ W1) + np.sum(off_square(b1))


def dataclass_with_a_wrong_rule(layer, x):
    return np.sum(np.tanh(x @ layer.W) * off_square(layer.b))


# ----- arguments -----


def _normal(*shape):
    return RNG.normal(size=shape)


def _dict_params():
    return {"W1": _normal(3, 4), "b1": _normal(4), "W2": _normal(4, 2) / 2, "b2": _normal(2),
            "scale": 0.7}


def _layers():
    return [(_normal(3, 3) / 2, _normal(3)), (_normal(3, 2), 0.5)]  # a float bias


def _dataclass_layers():
    return [Layer(_normal(3, 3) / 2, _normal(3)), Layer(_normal(3, 2), _normal(2), "sin")]


def _paths_with_gradients(argument, name):
    return [path for path, leaf in ad.tree.paths(argument, name)
            if isinstance(leaf, float) or isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f"]


def _leaf_rows(report):
    """The rows of the leaves; the forward mode's row, or the note saying it was not
    checked (ad.jvp taking the structure or not), checked apart."""
    names = [row.name for row in report.rows]
    if names[-1] == "jvp":
        assert report.rows[-1].passed
        return names[:-1]
    assert any(note.startswith("forward mode not checked: ad.jvp failed with the structured "
                               "argument") for note in report.notes)
    return names


CASES = [
    (dict_mlp, lambda: (_dict_params(), _normal(5, 3))),
    (list_mlp, lambda: (_layers(), _normal(4, 3))),
    (pair_loss, lambda: (Pair(_normal(3, 2), _normal(2)), _normal(4, 3))),
    (dataclass_layers, lambda: (_dataclass_layers(), _normal(4, 3))),
    (optional_bias, lambda: ({"W": _normal(3, 2), "b": None, "n": 3}, _normal(4, 3))),
]


# ----- numeric_grad -----


@pytest.mark.parametrize("f,make", CASES, ids=lambda p: getattr(p, "__name__", ""))
def test_numeric_grad_has_the_structure_and_leaves_of_ad_grad(f, make):
    args = make()
    before = ad.tree.leaves(args[0])
    copies = [leaf.copy() if isinstance(leaf, np.ndarray) else leaf for leaf in before]
    estimate = ad.numeric_grad(f, *args)
    exact = ad.grad(f)(*args)
    assert ad.tree.structure(estimate) == ad.tree.structure(exact)
    pairs = []
    ad.tree.map(lambda leaf, e, g: pairs.append((leaf, e, g)), args[0], estimate, exact)
    for (path, _), (leaf, e, g) in zip(ad.tree.paths(args[0], "arg"), pairs, strict=True):
        assert (e is None) == (g is None), path
        if e is not None:
            assert type(e) is type(leaf) and np.shape(e) == np.shape(leaf), path
            np.testing.assert_allclose(e, g, rtol=1e-7, atol=1e-9, err_msg=path)
    for leaf, kept, copy in zip(ad.tree.leaves(args[0]), before, copies):  # left alone
        assert leaf is kept
        np.testing.assert_array_equal(leaf, copy)


def test_numeric_grad_leaf_kinds_methods_and_refusals():
    p = {"w": np.array([1.0, -2.0]), "w32": np.array([0.5], dtype=np.float32), "scale": 3.0,
         "g": np.float32(2.0), "k": 2, "flag": True, "mode": "l2", "none": None,
         "pair": Pair(np.ones(1), "tag")}
    exact = {"w": 6.0 * p["w"], "scale": 5.0, "g": 12.0, "w32": 2 * np.cos(p["w32"])}
    # (the float32 leaves make the complex step's output complex64)
    for method, rtol in (("central", 1e-8), ("forward", 1e-5), ("complex", 1e-6)):
        g = ad.numeric_grad(mixed_leaves, p, method=method)
        assert type(g) is dict and list(g) == list(p)
        assert g["k"] is g["flag"] is g["mode"] is g["none"] is None
        assert type(g["pair"]) is Pair and g["pair"].b is None
        np.testing.assert_allclose(g["pair"].W, [1.0], rtol=1e-5)
        assert type(g["scale"]) is float and type(g["g"]) is np.float32
        assert g["w32"].dtype == np.float32 and g["w"].dtype == np.float64
        for key in ("w", "scale"):
            np.testing.assert_allclose(g[key], exact[key], rtol=rtol, err_msg=method)
        for key in ("g", "w32"):  # float32: a float32 step
            np.testing.assert_allclose(g[key], exact[key], rtol=1e-2, err_msg=method)
    both = ad.numeric_grad(list_mlp, _layers(), _normal(4, 3), wrt=(0, "x"))
    assert type(both) is tuple and type(both[0]) is list and type(both[0][1][1]) is float
    assert both[1].shape == (4, 3)
    with pytest.raises(ad.AutodiffError, match=r"to return a complex number for a complex "
                       r"params\['unused'\]; it returned float64\n  hint: .* a leaf the function "
                       r"never reads has none"):
        ad.numeric_grad(optional_bias, {"W": _normal(3, 2), "b": None, "n": 3,
                                        "unused": np.ones(2)}, _normal(4, 3), method="complex")
    with pytest.raises(ad.ArgumentKindError, match=r"with respect to 'x', a NoneType") as info:
        ad.numeric_grad(dataclass_layers, _dataclass_layers(), None, wrt=1)
    assert info.value.lineno is not None


# ----- check_grad -----


@pytest.mark.parametrize("f,make", CASES, ids=lambda p: getattr(p, "__name__", ""))
def test_check_grad_passes_leaf_by_leaf(f, make):
    args = make()
    name = check.argument_names(f, 1)[0]
    report = ad.check_grad(f, *args)
    assert report.passed and report.dtype == "float64"
    assert _leaf_rows(report) == _paths_with_gradients(args[0], name)
    for row in report.rows:
        assert row.max_abs_error < 1e-6 and row.max_rel_error < 1e-5
    text = str(report)
    assert "passed" in text and "FAILED" not in text
    for path in _leaf_rows(report):
        assert f"\n{path} " in text


def test_check_grad_names_of_nested_leaves():
    report = ad.check_grad(list_mlp, _layers(), _normal(4, 3))
    assert _leaf_rows(report) == ["layers[0][0]", "layers[0][1]", "layers[1][0]",
                                  "layers[1][1]"]
    assert report.rows[3].shape == () and report.rows[3].worst_index == ()
    report = ad.check_grad(dataclass_layers, _dataclass_layers(), _normal(4, 3))
    assert _leaf_rows(report) == ["layers[0].W", "layers[0].b", "layers[1].W", "layers[1].b"]
    report = ad.check_grad(optional_bias, {"W": _normal(3, 2), "b": None, "n": 3},
                           _normal(4, 3))
    assert _leaf_rows(report) == ["params['W']"]


@pytest.mark.parametrize("f,args,path,worst", [
    (list_with_a_wrong_rule, ([(_normal(3, 3), _normal(3)), (_normal(3, 2), _normal(2))],
                              _normal(4, 3)), "layers[1][1]", (1,)),
    (dataclass_with_a_wrong_rule, (Layer(_normal(3, 2), _normal(2, 2)), _normal(2, 3)),
     "layer.b", (0, 1)),
], ids=["nested-list", "dataclass"])
def test_check_grad_fails_at_the_leaf_with_the_wrong_gradient(f, args, path, worst):
    with pytest.raises(ad.GradientCheckError) as caught:
        ad.check_grad(f, *args)
    report = caught.value.report
    [failure] = report.failures
    assert failure.name == path and failure.worst_index == worst
    assert failure.ours == pytest.approx(failure.numeric * 1.01, rel=1e-6)
    assert all(row.passed for row in report.rows if row.name != path)
    message = str(caught.value)
    assert message.startswith("test_check_structures.py:")
    assert f"gradient check failed for {path}:" in message
    assert f"\n{path} " in message and "FAILED" in message and str(worst) in message


def test_check_grad_fails_where_a_gradient_is_missing_or_misshapen(monkeypatch):
    params, x = _dict_params(), _normal(5, 3)
    right = ad.grad(dict_mlp)(params, x)

    def returning(gradient):
        monkeypatch.setattr(check, "grad", lambda f, wrt: lambda *args: gradient)

    returning(dict(right, b1=None))
    with pytest.raises(ad.GradientCheckError, match=r"gradient check failed for "
                       r"params\['b1'\]:") as caught:
        ad.check_grad(dict_mlp, params, x)
    assert "params['b1']: autodiff gives no gradient, finite differences give one" in (
        caught.value.report.notes)
    returning(dict(right, b1=right["b1"][:2]))
    with pytest.raises(ad.GradientCheckError, match=r"failed for params\['b1'\]:"):
        ad.check_grad(dict_mlp, params, x)
    returning([right["W1"]])
    with pytest.raises(ad.GradientCheckError, match=r"failed for params:") as caught:
        ad.check_grad(dict_mlp, params, x)
    assert any(note.startswith("params: autodiff's gradient is not in the argument's "
                               "structure") for note in caught.value.report.notes)


def test_check_grad_of_a_structure_and_an_array_together():
    params, x = _dict_params(), _normal(5, 3)
    report = ad.check_grad(dict_mlp, params, x, wrt=("x", "params"))
    assert report.passed
    assert _leaf_rows(report) == ["x", "params['W1']", "params['b1']", "params['W2']",
                                  "params['b2']", "params['scale']"]
    layers = [(_normal(3, 3), _normal(3)), (_normal(3, 2), _normal(2))]
    with pytest.raises(ad.GradientCheckError, match=r"failed for layers\[1\]\[1\]:") as caught:
        ad.check_grad(list_with_a_wrong_rule, layers, _normal(4, 3), wrt=(1, 0))
    assert [row.name for row in caught.value.report.failures] == ["layers[1][1]"]
    assert _leaf_rows(caught.value.report)[0] == "x"

    low = ad.tree.map(lambda leaf: leaf.astype(np.float32) if isinstance(leaf, np.ndarray)
                      else leaf, params)
    with pytest.warns(ad.GradientCheckWarning, match="float64 is the right precision"):
        report = ad.check_grad(dict_mlp, low, x)
    assert report.passed and (report.rtol, report.atol) == (1e-2, 1e-3)
    assert report.dtype == "float32, float64"  # the arrays, then the float


def test_check_grad_of_an_array_output_goes_through_vjp():
    params, x = {"W": _normal(3, 2)}, _normal(4, 3)
    try:
        report = ad.check_grad(array_output, params, x)
    except ad.AutodiffError as error:  # ad.vjp taking no structure: said in check_grad's words
        assert not isinstance(error, ad.GradientCheckError)
        assert error.message.startswith("checking array_output, which returns an array, takes "
                                        "ad.vjp with the structured argument 'params'")
        assert "np.sum(seed * f(...))" in error.hint
    else:
        assert report.passed and _leaf_rows(report) == ["params['W']"]
