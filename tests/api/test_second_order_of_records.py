"""Second derivatives with respect to namedtuples, dataclasses (frozen and plain) and
objects of the user's classes, which hold settings (a string, an int) beside their
arrays, an OrderedDict, and a dict holding a namedtuple.

A gradient of such a structure is a copy of it (``p._replace(W=dp_W, b=dp_b)``,
``with_fields(self, ...)``): differentiated again, that copy reads only the settings
of ``p``, since it replaces every array. ``ad.hvp``, ``ad.hessian``, ``ad.jacobian``
of the gradient (either mode), ``ad.jvp`` of the gradient, the gradient of a function
of the gradient (reverse over reverse) and ``ad.jvp`` of ``ad.jvp`` (forward over
forward) are each checked against central differences of the gradient, with
``jit=True`` where the transform takes it; ``ad.minimize``'s Newton methods, which
take ``ad.hvp``'s products, reach L-BFGS-B's answer.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import autodiff as ad
from autodiff.derivatives import build
from autodiff.errors import ArgumentKindError
from autodiff.frontend import structures
from autodiff.graph.ir import Graph, Location, Node, Value
from autodiff.ops import structures as structure_ops
from tests.helpers import check_with_jit

Record = collections.namedtuple("Record", "W b")
Masked = collections.namedtuple("Masked", "W b mask label")  # an int array, a string
Outer = collections.namedtuple("Outer", "inner c")


@dataclasses.dataclass(frozen=True)
class FrozenLayer:
    W: np.ndarray
    b: np.ndarray
    act: str = "tanh"
    depth: int = 2


@dataclasses.dataclass
class PlainLayer:
    W: np.ndarray
    b: np.ndarray
    act: str = "sin"
    depth: int = 1


class Net:
    """An object of the user's class: two arrays, a string and an int setting."""

    def __init__(self, W, b, act="tanh", depth=2):
        self.W, self.b, self.act, self.depth = W, b, act, depth

    def forward(self, x):
        h = x @ self.W + self.b
        h = np.tanh(h) if self.act == "tanh" else np.sin(h)
        if self.depth == 2:
            h = np.tanh(h @ self.W + self.b)
        return h

    def loss(self, x):
        return np.sum(self.forward(x) ** 2) + 0.1 * np.sum(self.b ** 4)


@dataclasses.dataclass
class Head:
    W: np.ndarray
    scale: float  # a float field: a leaf with a gradient
    note: object = None


class Deep:
    """An object holding a list of namedtuples, a dataclass, a float and a string."""

    def __init__(self, layers, head):
        self.layers, self.head, self.scale, self.name = layers, head, 1.5, "deep"

    def loss(self, x):
        h = x
        for W, b in self.layers:
            h = np.tanh(h @ W + b)
        return self.scale * self.head.scale * np.sum(np.sin(h @ self.head.W) ** 2)


def masked_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2 * p.mask) + np.sum(p.b ** 3)


def outer_loss(o, x):
    return np.sum(np.tanh(x @ o.inner.W + o.inner.b) ** 2) + np.sum(o.c ** 3 * o.inner.b)


def ordered_loss(p, x):
    return np.sum(np.tanh(x @ p["W"] + p["b"]) ** 2) + np.sum(p["b"] ** 4)


def record_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2) + np.sum(np.sin(p.W) * p.b) + np.sum(p.b ** 4)


def layer_loss(layer, x):
    h = x @ layer.W + layer.b
    h = np.tanh(h) if layer.act == "tanh" else np.sin(h)
    if layer.depth == 2:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h ** 2) + 0.1 * np.sum(layer.W ** 4)


def nested_loss(tree, x):
    layer = tree["layer"]
    return tree["scale"] ** 2 * record_loss(layer, x) + np.sum(layer.W * tree["shift"])


rng = np.random.default_rng(30)


def _normal(*shape):
    return rng.normal(size=shape)


CASES = {
    "namedtuple": (record_loss, lambda: Record(_normal(3, 3) / 2, _normal(3))),
    "frozen dataclass": (layer_loss, lambda: FrozenLayer(_normal(3, 3) / 2, _normal(3))),
    "plain dataclass": (layer_loss, lambda: PlainLayer(_normal(3, 3) / 2, _normal(3))),
    "object": (Net.loss, lambda: Net(_normal(3, 3) / 2, _normal(3))),
    "object, other settings": (Net.loss, lambda: Net(_normal(3, 3) / 2, _normal(3), "sin", 1)),
    "dict of a namedtuple": (nested_loss, lambda: {
        "layer": Record(_normal(3, 3) / 2, _normal(3)), "scale": 0.8, "shift": _normal(3, 3)}),
    "namedtuple with a mask and a label": (masked_loss, lambda: Masked(
        _normal(3, 3) / 2, _normal(3), np.array([1, 0, 1]), "masked")),
    "OrderedDict": (ordered_loss, lambda: collections.OrderedDict(
        W=_normal(3, 3) / 2, b=_normal(3), act="tanh")),
    "namedtuple in a namedtuple": (outer_loss, lambda: Outer(
        Record(_normal(3, 3) / 2, _normal(3)), _normal(3))),
    "object of namedtuples and a dataclass": (Deep.loss, lambda: Deep(
        [Record(_normal(3, 3) / 2, _normal(3)) for _ in range(2)], Head(_normal(3, 2), 0.7))),
}


def _trained(leaf) -> bool:
    return isinstance(leaf, float) or isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f"


def _float_paths(tree, path=()) -> list[tuple]:
    """The keys leading to each floating leaf of ``tree``."""
    items = ad.tree.items(tree)
    if items is None:
        return [path] if _trained(tree) else []
    return [found for key, child in items for found in _float_paths(child, (*path, key))]


def _direction(params):
    """A random direction in the structure of ``params`` (None at its settings)."""
    return ad.tree.map(lambda leaf: (rng.uniform(-1, 1, np.shape(leaf)) if isinstance(
        leaf, np.ndarray) else float(rng.uniform(-1, 1))) if _trained(leaf) else None, params)


def _moved(params, direction, step):
    return ad.tree.map(lambda leaf, d: leaf if d is None else leaf + step * d, params,
                       direction)


def _hessian_along(fn, params, x, v, eps=1e-6):
    """``H v``: central differences of ``ad.grad(fn)`` along ``v``, in float64."""
    gradient = ad.grad(fn)
    high, low = gradient(_moved(params, v, eps), x), gradient(_moved(params, v, -eps), x)
    return ad.tree.map(lambda a, b: None if a is None else (a - b) / (2 * eps), high, low)


def _leaf_by_leaf(got, expected, rtol=1e-5, atol=1e-7):
    """The same structure, the same kinds, a leaf without a gradient None in both, the
    others close."""
    assert type(got) is type(expected)
    got_paths, expected_paths = ad.tree.paths(got, "p"), ad.tree.paths(expected, "p")
    assert [p for p, _ in got_paths] == [p for p, _ in expected_paths]
    for (path, leaf), (_, want) in zip(got_paths, expected_paths):
        assert (leaf is None) == (want is None), path
        if want is not None:
            assert np.shape(leaf) == np.shape(want), path
            np.testing.assert_allclose(leaf, want, rtol=rtol, atol=atol, err_msg=path)


def _inner(a, b) -> float:
    paths = _float_paths(a)
    return sum(float(np.sum(np.asarray(ad.tree.part(a, p)) * ad.tree.part(b, p)))
               for p in paths)


@pytest.fixture(params=list(CASES))
def case(request):
    fn, make = CASES[request.param]
    params = make()
    return fn, params, _normal(4, 3), _direction(params)


def test_hvp_and_forward_over_reverse(case):
    fn, params, x, v = case
    expected = _hessian_along(fn, params, x, v)
    _leaf_by_leaf(ad.hvp(fn)(params, x, v), expected)
    for jit in (False, True):
        gradient, product = ad.jvp(ad.grad(fn), jit=jit)(params, x, v)
        _leaf_by_leaf(gradient, ad.grad(fn)(params, x), rtol=1e-12, atol=1e-12)
        _leaf_by_leaf(product, expected)


def test_hessian_and_the_jacobians_of_the_gradient(case):
    fn, params, x, v = case
    expected = _hessian_along(fn, params, x, v)
    paths = _float_paths(params)
    for hessian in (ad.hessian(fn)(params, x), ad.jacobian(ad.grad(fn), mode="fwd")(params, x),
                    ad.jacobian(ad.grad(fn), mode="rev")(params, x)):
        assert type(hessian) is type(params)
        for row in paths:  # block [row][column]: d gradient[row] / d params[column]
            blocks = ad.tree.part(hessian, row)
            assert type(blocks) is type(params)
            along = sum(np.tensordot(ad.tree.part(blocks, column), ad.tree.part(v, column),
                                     axes=np.ndim(ad.tree.part(v, column)))
                        for column in paths)
            np.testing.assert_allclose(along, ad.tree.part(expected, row), rtol=1e-5,
                                       atol=1e-7, err_msg=str(row))


# Reverse over reverse: the gradient of <v, gradient>, a function calling the gradient.
grad_record, grad_layer = ad.grad(record_loss), ad.grad(layer_loss)
grad_net, grad_nested = ad.grad(Net.loss), ad.grad(nested_loss)
grad_masked, grad_outer, grad_deep = ad.grad(masked_loss), ad.grad(outer_loss), ad.grad(Deep.loss)
grad_ordered = ad.grad(ordered_loss)


def along_record(p, x, v):
    g = grad_record(p, x)
    return np.sum(g.W * v.W) + np.sum(g.b * v.b)


def along_layer(layer, x, v):
    g = grad_layer(layer, x)
    return np.sum(g.W * v.W) + np.sum(g.b * v.b)


def along_net(net, x, v):
    g = grad_net(net, x)
    return np.sum(g.W * v.W) + np.sum(g.b * v.b)


def along_nested(tree, x, v):
    g = grad_nested(tree, x)
    layer, direction = g["layer"], v["layer"]
    return (np.sum(layer.W * direction.W) + np.sum(layer.b * direction.b)
            + g["scale"] * v["scale"] + np.sum(g["shift"] * v["shift"]))


def along_masked(p, x, v):
    g = grad_masked(p, x)
    return np.sum(g.W * v.W) + np.sum(g.b * v.b)


def along_ordered(p, x, v):
    g = grad_ordered(p, x)
    return np.sum(g["W"] * v["W"]) + np.sum(g["b"] * v["b"])


def along_outer(o, x, v):
    g = grad_outer(o, x)
    return np.sum(g.inner.W * v.inner.W) + np.sum(g.inner.b * v.inner.b) + np.sum(g.c * v.c)


def along_deep(net, x, v):
    g = grad_deep(net, x)
    total = g.scale * v.scale + g.head.scale * v.head.scale + np.sum(g.head.W * v.head.W)
    for (gW, gb), (vW, vb) in zip(g.layers, v.layers):
        total = total + np.sum(gW * vW) + np.sum(gb * vb)
    return total


ALONG = {record_loss: along_record, layer_loss: along_layer, Net.loss: along_net,
         nested_loss: along_nested, masked_loss: along_masked, outer_loss: along_outer,
         Deep.loss: along_deep, ordered_loss: along_ordered}


def test_reverse_over_reverse(case):
    fn, params, x, v = case
    along = ALONG[fn]
    np.testing.assert_allclose(along(params, x, v), _inner(ad.grad(fn)(params, x), v),
                               rtol=1e-12)
    expected = _hessian_along(fn, params, x, v)
    for jit in (False, True):
        _leaf_by_leaf(ad.grad(along, jit=jit)(params, x, v), expected)
    # and against central differences of <v, gradient> itself, its jvp too, jit or not
    check_with_jit(along, params, x, v)


def test_forward_over_forward(case):
    fn, params, x, v = case
    u, s = _direction(params), _direction(params)
    expected = _hessian_along(fn, params, x, v)
    gradient = ad.grad(fn)(params, x)
    for jit in (False, True):
        push = ad.jvp(ad.jvp(fn), wrt=(0, "tangent"), jit=jit)
        (value, derivative), (value_dot, derivative_dot) = push(params, x, v, (u, s))
        np.testing.assert_allclose(value, fn(params, x), rtol=1e-12)
        np.testing.assert_allclose(derivative, _inner(gradient, v), rtol=1e-10)
        np.testing.assert_allclose(value_dot, _inner(gradient, u), rtol=1e-10)
        np.testing.assert_allclose(derivative_dot, _inner(expected, u) + _inner(gradient, s),
                                   rtol=1e-5, atol=1e-7)


def test_a_part_of_a_dict_holding_a_namedtuple():
    tree, x = CASES["dict of a namedtuple"][1](), _normal(4, 3)
    v = _direction(tree["layer"])
    product = ad.hvp(nested_loss, wrt="tree['layer']")(tree, x, v)

    def gradient_of_layer(layer):
        return ad.grad(nested_loss, wrt="tree['layer']")({**tree, "layer": layer}, x)

    eps = 1e-6
    high, low = gradient_of_layer(_moved(tree["layer"], v, eps)), gradient_of_layer(
        _moved(tree["layer"], v, -eps))
    _leaf_by_leaf(product, ad.tree.map(lambda a, b: (a - b) / (2 * eps), high, low))


# ----- ad.minimize: Newton methods take ad.hvp's products -----


def fit_loss(params, x, t):
    """Smooth and strictly convex: log-cosh residuals and a ridge term."""
    residual = x @ params.W + params.b - t
    return np.sum(np.log(np.cosh(residual))) + 0.05 * np.sum(params.W ** 2)


@pytest.mark.parametrize("make", [
    lambda: FrozenLayer(np.zeros((3, 2)), np.zeros(2), "fit", 3),
    lambda: PlainLayer(np.zeros((3, 2)), np.zeros(2)),
    lambda: Net(np.zeros((3, 2)), np.zeros(2), "fit", 1),
], ids=["frozen dataclass", "plain dataclass", "object"])
@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg"])
def test_minimize_by_newton_methods_over_records(make, method):
    x, t = _normal(20, 3), _normal(20, 2)
    x0 = make()
    reference = ad.minimize(fit_loss, x0, args=(x, t), method="L-BFGS-B",
                            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000})
    options = {"xtol": 1e-12} if method == "Newton-CG" else {"gtol": 1e-7}
    result = ad.minimize(fit_loss, x0, args=(x, t), method=method, options=options)
    assert result.success, result.message
    assert type(result.x) is type(x0)
    assert (result.x.act, result.x.depth) == (x0.act, x0.depth)  # settings as they were
    assert result.nhev > 0  # it took Hessian-vector products
    np.testing.assert_allclose(result.x.W, reference.x.W, atol=1e-6)
    np.testing.assert_allclose(result.x.b, reference.x.b, atol=1e-6)
    assert np.abs(reference.x.W).max() > 0.1  # (far from the start)
    assert result.fun <= reference.fun + 1e-10


# ----- what is still refused -----


def test_a_copy_keeping_an_array_of_the_structure_is_refused():
    # A structure built as a copy of a namedtuple that replaces W but keeps b would pass
    # b on to its result without its gradient: the derivative is refused, naming b.
    Partial = collections.namedtuple("Partial", "W")
    held = ("namedtuple", Record, (structures.ARRAY, structures.ARRAY))
    p = Value("p")
    graph = Graph("f_grad", [p])
    binder = structures.Binder(lambda op, args, hint: _emit(graph, op, args, hint))
    binder.bind(held, p, "p")
    kept = structure_ops.structure("like._replace(W=a0)", 1, True,
                                   ("namedtuple", Partial, (structures.ARRAY,)))
    out = Value("dp")
    graph.nodes.append(Node(kept, (p, graph.nodes[0].out), out, None, "backward"))
    graph.outputs = [out]
    where = Location("loss.py", 3, "def loss(p):")
    reads = {node.out for node in graph.nodes[:2]}  # p.W and p.b, read once each
    with pytest.raises(ArgumentKindError, match=r"loss.py:3: cannot differentiate this "
                       r"derivative with respect to 'p': the structure it builds as a copy "
                       r"of it keeps its array p.b as it is, whose gradient would not be "
                       r"counted"):
        build._only_read_by_parts(graph, binder.containers, reads, where)
    # replacing both, it reads only what carries no gradient
    both = structure_ops.structure("like._replace(W=a0, b=a1)", 2, True, held)
    graph.nodes[-1] = Node(both, (p, graph.nodes[0].out, graph.nodes[1].out), out, None,
                           "backward")
    build._only_read_by_parts(graph, binder.containers, reads, where)


def _emit(graph, op, args, hint):
    out = Value(hint)
    graph.nodes.append(Node(op, tuple(args), out, None, "forward"))
    return out


def test_kept_from_like_names_the_arrays_a_copy_keeps():
    inner = ("namedtuple", Record, (structures.ARRAY, structures.ARRAY))
    held = ("dict", dict, ("layer", "n"), (inner, ("static", 3)))
    assert structures.kept_from_like(held, held, "p") == []
    partial = ("dict", dict, ("layer",), (
        ("namedtuple", collections.namedtuple("Partial", "b"), (structures.ARRAY,)),))
    assert structures.kept_from_like(partial, held, "p") == ["p['layer'].W"]
    # a dict is written whole: a key it leaves out is not kept
    assert structures.kept_from_like(("dict", dict, (), ()), held, "p") == []


def test_the_gradient_of_a_record_differentiated_with_respect_to_the_data(case):
    # d/dx of the gradient of the record: the copy it is built as reads the record's
    # settings while the data varies
    fn, params, x, _ = case
    direction, eps = _normal(*x.shape), 1e-6
    gradient = ad.grad(fn)
    expected = ad.tree.map(lambda a, b: None if a is None else (a - b) / (2 * eps),
                           gradient(params, x + eps * direction),
                           gradient(params, x - eps * direction))
    for jit in (False, True):
        _, along = ad.jvp(gradient, wrt=1, jit=jit)(params, x, direction)
        _leaf_by_leaf(along, expected)
