"""Batched tangents (transforms/batching.py) against one call per column, over the op
tables: for every case, the forward-mode Jacobian of the expression, and the Hessian
of its weighted sum (forward mode over the gradient, whose code calls the helpers of
the rules), computed with one batched call agree with those computed column by column
to rounding. Where the product cannot be batched the Jacobian computes its columns one
call each: both ways then agree trivially, and an error is the same error both ways.

The functions are the op tables' own (``tests/ops/table.shared_module``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import NoSecondOrder, random_array
from tests.ops import (
    test_along_axis,
    test_complex,
    test_conversions,
    test_elementwise,
    test_linalg,
    test_numerical,
    test_reduce,
    test_shape,
    test_statistics,
)
from tests.ops.table import shared_module, signatures


def _per_column(jacobian):
    """The same Jacobian, computed one call per column."""
    jacobian = copy.copy(jacobian)
    jacobian._per_column = True
    return jacobian


def _both_ways(jacobian, args: list) -> None:
    try:
        expected = _per_column(jacobian)(*args)
    except Exception as error:  # noqa: BLE001 - the same error the batched way
        with pytest.raises(type(error)):
            jacobian(*args)
        return
    got = jacobian(*args)
    expected_leaves, got_leaves = ad.tree.leaves(expected), ad.tree.leaves(got)
    assert len(expected_leaves) == len(got_leaves)
    for e, g in zip(expected_leaves, got_leaves):
        assert type(g) is type(e) or (isinstance(g, np.ndarray) and isinstance(e, np.ndarray))
        assert np.shape(g) == np.shape(e)
        assert np.result_type(g) == np.result_type(e)
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _check(module, cases, index: int, seed: int, complex_values: bool = False) -> None:
    _, shapes, *rest = cases[index]
    domain = rest[0] if rest else "complex" if complex_values else "real"
    rng = np.random.default_rng(seed + index)
    args = [random_array(rng, shape, domain) for shape in shapes]
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    value = getattr(module, f"value_{index}")
    loss = getattr(module, f"loss_{index}")
    out_shape = np.shape(value(*args))
    weights = rng.uniform(0.5, 1.5, size=out_shape)
    if complex_values:
        weights = weights + 1j * rng.uniform(0.5, 1.5, size=out_shape)
        _both_ways(ad.jacobian(loss, wrt=wrt, mode="fwd"), [*args, weights])
        return
    _both_ways(ad.jacobian(value, wrt=wrt, mode="fwd"), args)
    marker = rest[1] if len(rest) > 1 else True
    if not isinstance(marker, NoSecondOrder):
        _both_ways(ad.hessian(loss, wrt=wrt), [*args, weights])


TABLES = {
    "linalg": (test_linalg.CASES, "", 400),
    "reduce": (test_reduce.CASES, "", 300),
    "along_axis": (test_along_axis.CASES, "", 600),
    "shape": (test_shape.CASES, test_shape.PREAMBLE, 500),
    "numerical": (test_numerical.CASES, "", 1900),
    "conversions": (test_conversions.CASES, "", 1900),
    "statistics": (test_statistics.CASES, "", 2300),
}
PARAMS = [(name, index) for name, (cases, _, _) in TABLES.items() for index in range(len(cases))]


@pytest.mark.parametrize(("table", "index"), PARAMS,
                         ids=[f"{t}-{TABLES[t][0][i][0]}" for t, i in PARAMS])
def test_batched_jacobians_match_per_column_over_the_op_tables(table, index):
    cases, preamble, seed = TABLES[table]
    _check(shared_module(signatures(cases), preamble), cases, index, seed)


@pytest.mark.parametrize("index", range(len(test_complex.CASES)),
                         ids=[c[0] for c in test_complex.CASES])
def test_batched_jacobians_of_complex_arguments_match_per_column(index):
    cases = test_complex.CASES
    _check(shared_module(signatures(cases), "", True), cases, index, 1900, complex_values=True)


ELEMENTWISE = [(expr, [(2, 3)], domain) for expr, domain, *_ in test_elementwise.UNARY] + [
    (expr, [shapes[0] or (), shapes[1] or ()], x_domain)
    for expr, x_domain, y_domain, *_ in test_elementwise.BINARY
    for shapes in (((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2,)))
    if x_domain == y_domain]


@pytest.mark.parametrize("index", range(len(ELEMENTWISE)),
                         ids=[f"{c[0]}-{c[1]}" for c in ELEMENTWISE])
def test_batched_jacobians_of_elementwise_ops_match_per_column(index):
    _check(shared_module(signatures(ELEMENTWISE)), ELEMENTWISE, index, 200)


# ----- the runtime helpers against each example's NumPy -----

RNG = np.random.default_rng(7)


@pytest.mark.parametrize(("a_shape", "b_shape"), [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((4, 2, 3), (3, 2)),
    ((2, 3), (5, 3, 2)), ((4, 2, 3), (4, 3, 2)), ((1, 2, 3), (4, 3, 1)), ((3,), (4, 3, 2))])
@pytest.mark.parametrize("batched", [(True, False), (False, True), (True, True)], ids=str)
def test_batched_matmul_is_each_examples_product(a_shape, b_shape, batched):
    from autodiff.ops.batching import batched_matmul

    n = 5
    a = RNG.normal(size=(n, *a_shape) if batched[0] else a_shape)
    b = RNG.normal(size=(n, *b_shape) if batched[1] else b_shape)
    expected = np.stack([(a[i] if batched[0] else a) @ (b[i] if batched[1] else b)
                         for i in range(n)])
    got = batched_matmul(a, b, *batched)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(("g_shape", "shape"), [
    ((3, 4), (4,)), ((2, 3, 4), (1, 4)), ((2, 3), ()), ((3,), (3,)), ((), (2, 3)),
    ((2, 1), (2, 3)), ((0, 3), (3,)), ((2, 3), (2, 1))])
def test_batched_unbroadcast_is_each_examples(g_shape, shape):
    from autodiff.ops import runtime
    from autodiff.ops.batching import batched_unbroadcast_to

    g = RNG.normal(size=(5, *g_shape))
    expected = np.stack([np.broadcast_to(runtime.unbroadcast_to(g[i], shape), shape)
                         for i in range(5)])
    got = batched_unbroadcast_to(g, shape)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("x", [np.ones((2, 3)), np.ones(3, dtype=np.float32), 2.0,
                               np.float32(1.0), np.arange(3)], ids=repr)
def test_batched_as_gradient_of_is_each_examples(x):
    from autodiff.ops import runtime
    from autodiff.ops.batching import batched_as_gradient_of

    g = RNG.normal(size=(4, *np.shape(x))).astype(np.result_type(x, np.float32))
    expected = [runtime.as_gradient_of(g[i], x) for i in range(4)]
    got = batched_as_gradient_of(g, x)
    assert got.dtype == np.result_type(expected[0])
    np.testing.assert_allclose(got, np.stack(expected), rtol=1e-6)


def test_batch_axes_count_past_the_batch_axis():
    from autodiff.ops.batching import batch_axes

    a = np.ones((4, 2, 3))
    assert batch_axes(None, a) == (1, 2)
    assert batch_axes(0, a) == 1
    assert batch_axes(-1, a) == -1
    assert batch_axes((0, -2), a) == (1, -2)
