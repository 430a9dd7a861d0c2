"""Conversions of computed values: ``np.float64(v)``, ``np.float32(v)`` and ``v.item()``
pass the gradient; ``int(v)``, ``bool(v)``, ``np.int64(v)`` pass none, in either mode."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.ops.table import table_test

# Conversions that pass the gradient, checked with SymPy and numba as well.
FLOAT_CASES = [
    ("np.float64(x) * x", [(3,)]), ("np.float64(x[1]) * x", [(2, 3)]),
    ("np.sin(np.float64(x))", [(2, 2)]),
    ("x[1:2].item() * x", [(3,)]), ("np.sum(x * x).item() * x", [(2, 2)]),
    ("x[0, 1].item() + np.float64(x[1, 0]) * x", [(2, 2)]),
]

# Integers and truth values of computed values: piecewise constant, no gradient (and
# such an integer choosing an item of a tuple: the gradient reaches that item).
DISCRETE_CASES = [
    ("x[int(x[0] > 0)] * x", [(3,)]), ("int(x[0] * 3.0) * x", [(3,)]),
    ("bool(x[0] > 0) * x + bool(x[1]) * x", [(3,)]), ("np.int64(x * 3.0) * x", [(2, 3)]),
    ("np.bool_(x > 0) * x", [(4,)]), ("x[np.int32(abs(x[0]) * 2.0) % 3] * np.sin(x)", [(3,)]),
    ("np.float64(x) * int(x) + np.float64(x) * x", [None]),
    ("(x, np.sin(x), 2.0)[int(x[0] > 0) + int(x[1] > 0)] * x", [(3,)]),
    ("(x, y * y)[np.int64(x[0] > 0)] * y", [(2,), (2,)]),
]

CASES = FLOAT_CASES + DISCRETE_CASES

test_float_conversion = table_test(FLOAT_CASES, seed=1900, routes=("sympy",))
test_discrete_conversion = table_test(DISCRETE_CASES, seed=1950)


def _float32_product(x):
    return np.sum(np.float32(x) * np.float32(x[0]))


def test_float32_passes_the_gradient_at_its_precision():
    # Finite differences cannot resolve a function rounded to float32: the gradient is
    # checked against its formula instead, d/dx sum(x * x[0]) = x[0] + e0 * sum(x),
    # to float32's precision, in both modes.
    x = np.array([0.7, -1.3, 0.4])
    expected = x[0] + np.array([np.sum(x), 0.0, 0.0])
    np.testing.assert_allclose(ad.grad(_float32_product)(x), expected, rtol=1e-6)
    tangent = np.array([0.2, 0.5, -1.0])
    _, derivative = ad.jvp(_float32_product)(x, tangent)
    np.testing.assert_allclose(derivative, expected @ tangent, rtol=1e-6)


def _item_of_many(x):
    return x.item(1) * x[0]


def test_item_with_an_index_is_refused_at_the_users_line():
    with pytest.raises(ad.AutodiffError, match="unsupported arguments in the call to x.item"):
        ad.grad(_item_of_many)(np.ones(3))
