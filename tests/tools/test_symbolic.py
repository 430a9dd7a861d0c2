"""The SymPy route: ``symbolic_grad`` against ``ad.grad`` on a table of functions, its
errors (each naming the file and line), and the expression swell that CSE undoes."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import sympy as sp

import autodiff as ad
from autodiff.tools.symbolic import SymbolicError, symbolic_grad

SCALE = 0.5  # read from the module when the gradient is built


def scalar_product_and_sine(x, y):
    return x * y + np.sin(x)


def composition(x):
    return np.exp(np.tanh(x) ** 2) / (1.0 + x ** 2) + SCALE * np.arctan(x)


def difference_of_squares(x, y):
    return (x + y) * (x - y)


def tanh_layer(W, x, b):
    return np.sum(np.tanh(W @ x + b) ** 2)


def softmax_cross_entropy(z, y):
    e = np.exp(z - np.max(z))
    return -np.sum(y * np.log(e / np.sum(e)))


def logsumexp_rows(X):
    return np.sum(np.log(np.sum(np.exp(X), axis=1)))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def centred_moments(A):
    centred = A - np.mean(A, axis=0, keepdims=True)
    return np.sum(centred ** 2 * np.mean(A, axis=1, keepdims=True)) + np.var(A) + np.std(A[0])


def indexing(x, A):
    return x[0] * x[-1] + np.sum(x[1:4] ** 3) + np.sum(A[1, ::2] * A[:, 0].sum()) + A[-1][1]


def reshaping(A):
    B = A.reshape(4, 3).T
    return np.sum(np.sin(B @ A.T)) + np.sum(np.squeeze(np.expand_dims(A, 0))[:, 1] ** 2)


def two_layer_network(X, W1, b1, W2, b2, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def elementwise_mix(x):
    a = np.where(x > 0, x ** 2, -x) + np.clip(x, -0.5, 0.5) + np.maximum(x, 0.1) * np.abs(x)
    b = np.logaddexp(x, 1.0) + np.hypot(x, 2.0) + np.arctan2(x, 1.5) + np.sqrt(x ** 2 + 1.0)
    c = np.log1p(x ** 2) + np.expm1(x) + np.arcsin(x) + np.arccos(x) + np.sinh(x) * np.cosh(x)
    steps = np.floor(3.0 * x) * x + np.sign(x) * x  # zero derivative at the steps themselves
    return np.sum(a * b + c + steps + np.tan(x) + np.minimum(x, 0.0) + ad.stop_gradient(x) * x)


def structural_mix(x, A):
    c = np.concatenate([x, x[::-1]])
    s = np.stack([x, 2.0 * x], axis=1)
    v = np.array([x[0], x[1] * x[2]])
    return (np.trace(A @ A.T) + np.linalg.norm(c) + np.sum(s[1:, 0]) + np.prod(x) + np.sum(v)
            + np.sum(np.outer(x, x)) + np.inner(x, x) + np.dot(A, x)[1] + np.max(A, axis=0)[1]
            + np.min(A) + np.sum(np.broadcast_to(x, (2, 3))) + np.einsum("ij,j->i", A, x)[0]
            + np.linalg.det(A[:, :2] + np.eye(2)) + len(x) * x[0])


def static_loops(x, A):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x * s + x[i])
    total = 0.0
    for row in A:
        total = total + np.sum(row ** 2) * s[0]
    return np.sum(s) + total


def updates_and_lists(x):
    out = np.zeros(3)
    parts = []
    for i in range(3):
        out[i] = x[i] ** 2
        parts.append(np.sin(x[i]))
    k = 0
    while k < 2:  # its trip count is a constant: unrolled
        out = out * x
        k = k + 1
    return np.sum(out) + sum(parts)


def with_break(x):
    s = 0.0
    for i in range(5):
        s = s + x * i
        if i == 2:
            break
    return s


# (function, argument shapes, wrt); an argument of shape () is a Python float
CASES = [
    (scalar_product_and_sine, [(), ()], (0, 1)),
    (composition, [()], 0),
    (difference_of_squares, [(), ()], "y"),
    (tanh_layer, [(3, 4), (4,), (3,)], (0, 2)),
    (softmax_cross_entropy, [(5,), (5,)], 0),
    (logsumexp_rows, [(2, 3)], 0),
    (rosenbrock, [(5,)], 0),
    (centred_moments, [(3, 4)], 0),
    (indexing, [(5,), (3, 4)], (0, 1)),
    (reshaping, [(3, 4)], 0),
    (two_layer_network, [(4, 3), (3, 4), (4,), (4, 1), (1,), (4, 1)], ("W1", "b1", "W2", "b2")),
    (elementwise_mix, [(4,)], 0),
    (structural_mix, [(3,), (2, 3)], (0, 1)),
    (static_loops, [(3,), (2, 3)], (0, 1)),
    (updates_and_lists, [(3,)], 0),
    (with_break, [()], 0),
]


def arguments(shapes: list, seed: int = 0) -> list:
    # In (-0.9, 0.9): inside the domain of arcsin and arccos, never on a kink.
    rng = np.random.default_rng(seed)
    return [float(rng.uniform(-0.9, 0.9)) if shape == () else rng.uniform(-0.9, 0.9, size=shape)
            for shape in shapes]


def array_shapes(fn, args: list) -> dict:
    names = list(inspect.signature(fn).parameters)
    return {name: np.shape(arg) for name, arg in zip(names, args) if np.ndim(arg) > 0}


@pytest.mark.parametrize("fn, shapes, wrt", CASES, ids=[case[0].__name__ for case in CASES])
def test_symbolic_gradient_matches_reverse_mode(fn, shapes, wrt):
    args = arguments(shapes)
    symbolic = symbolic_grad(fn, wrt=wrt, shapes=array_shapes(fn, args))
    ours, theirs = ad.grad(fn, wrt=wrt)(*args), symbolic(*args)
    several = isinstance(wrt, tuple)
    assert isinstance(theirs, tuple) == several
    for expected, got in zip(ours if several else (ours,), theirs if several else (theirs,)):
        assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert 0 <= symbolic.operations_cse <= symbolic.operations
    assert symbolic.build_seconds > 0


def test_the_result_shows_its_expressions_and_takes_keywords():
    g = symbolic_grad(scalar_product_and_sine, wrt=(0, 1))
    x, y = sp.symbols("x y", real=True)
    assert g.symbols == {"x": x, "y": y}
    assert g.value_expression == x * y + sp.sin(x)
    assert g.expression == (y + sp.cos(x), x)
    assert g.operations == 2 and g.operations_cse == 2
    assert g(y=2.0, x=1.0) == pytest.approx((2.0 + np.cos(1.0), 1.0), rel=1e-15)
    assert "y + cos(x)" in g.source and "d/dx scalar_product_and_sine(x, y) = y + cos(x)" in repr(g)
    assert list(inspect.signature(g).parameters) == ["x", "y"]

    layer = symbolic_grad(tanh_layer, wrt="x", shapes={"W": (3, 4), "x": (4,), "b": (3,)})
    assert isinstance(layer.expression, sp.Array) and layer.expression.shape == (4,)
    assert layer.symbols["W"].shape == (3, 4) and str(layer.symbols["W"][1, 2]) == "W_1_2"
    assert layer.expression[0].has(layer.symbols["W"][2, 0], layer.symbols["b"][2])


def tower_3(x):
    a = x * np.exp(x)
    b = x * np.exp(a)
    return x * np.exp(b)


def tower_6(x):
    a = x * np.exp(x)
    b = x * np.exp(a)
    c = x * np.exp(b)
    d = x * np.exp(c)
    e = x * np.exp(d)
    return x * np.exp(e)


def sines_6(x):
    return np.sin(np.sin(np.sin(np.sin(np.sin(np.sin(x))))))


def test_a_deep_composition_swells_and_cse_shrinks_it():
    short, deep = symbolic_grad(tower_3), symbolic_grad(tower_6)
    assert deep(0.3) == pytest.approx(ad.grad(tower_6)(0.3), rel=1e-12)
    # Twice the lines, over three times the operations: each level repeats all below it
    # (26 and 89 with SymPy 1.14), quadratic growth.
    assert deep.operations > 3 * short.operations
    assert deep.operations > 10 * 6
    # Shared, the repeated subexpressions count once: growth is linear again (11 and 23).
    assert deep.operations_cse < 2.5 * short.operations_cse
    assert deep.operations_cse < deep.operations / 3
    sines = symbolic_grad(sines_6)
    assert sines.operations_cse < sines.operations  # sin(sin(x)) inside every cos factor


# ----- what the SymPy route cannot take -----


def halving(x):
    while x > 1.0:
        x = x / 2.0
    return x


def relu_by_if(x):
    if x > 0:
        return x * 2.0
    return 0.0 * x


def loop_to_n(x, n):
    s = 0.0
    for _ in range(n):
        s = s + x
    return s


def guarded_square(x):
    try:
        y = x * x
    except ValueError:
        y = x
    return y


def rounded(x):
    return np.round(x) * x


def sum_squared(x):
    return np.sum(x) ** 2


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, text, construct", [
    (halving, "while", "a 'while' loop (its trip count depends on the data)"),
    (relu_by_if, "if x > 0", "an 'if' whose condition depends on the data"),
    (loop_to_n, "for", "a 'for' loop whose range depends on the arguments"),
    (rounded, "return", "'round'"),
    (guarded_square, "try", "a try statement (which path runs depends on what raises)"),
])
def test_what_sympy_cannot_take_is_named_with_its_line(fn, text, construct):
    with pytest.raises(SymbolicError) as caught:
        symbolic_grad(fn)
    line = line_of(fn, text)
    assert str(caught.value).startswith(
        f"test_symbolic.py:{line}: the SymPy route cannot take {construct}")
    assert "ad.grad" in caught.value.hint
    assert isinstance(caught.value, ad.AutodiffError)


def test_arrays_too_big_or_without_a_shape_are_explained():
    with pytest.raises(SymbolicError, match=r"test_symbolic.py:\d+: x has shape \(100, 100\): "
                       r"the SymPy route takes small arrays \(at most 64 elements\)"):
        symbolic_grad(rosenbrock, shapes={"x": (100, 100)})
    with pytest.raises(SymbolicError, match=r"this line makes an array of shape \(10, 10\)"):
        symbolic_grad(structural_mix, shapes={"x": (10,), "A": (2, 10)}, max_elements=64)

    with pytest.raises(SymbolicError) as caught:
        symbolic_grad(tanh_layer, shapes={"x": (4,), "b": (3,)})
    line = line_of(tanh_layer, "W @ x")
    assert str(caught.value).startswith(f"test_symbolic.py:{line}: W is used as an array here")
    assert "shapes={'W': ...}" in caught.value.hint

    # Built for a scalar, called with an array: refused rather than broadcast silently.
    g = symbolic_grad(sum_squared)
    assert g(3.0) == 6.0
    with pytest.raises(SymbolicError, match=r"x has shape \(3,\), but this gradient was built "
                       r"for a scalar") as caught:
        g(np.ones(3))
    assert "shapes={'x': (3,)}" in caught.value.hint
