"""Reversal, running sums and differences along an axis: flip, cumsum, diff."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.ops.table import table_test

CASES = [
    ("np.flip(x)", [(2, 3)]), ("np.flip(x, 1)", [(2, 3, 4)]),
    ("np.flip(x, axis=(0, -1))", [(2, 3, 4)]), ("np.flip(x, -1) * x", [(4,)]),
    ("np.flip(x)", [(1,)]),
    ("np.cumsum(x)", [(5,)]), ("np.cumsum(x)", [(2, 3)]), ("np.cumsum(x, axis=0)", [(2, 3, 4)]),
    ("np.cumsum(x, 1)", [(2, 3, 4)]), ("x.cumsum(axis=-1)", [(2, 3)]), ("np.cumsum(x)", [(1,)]),
    ("np.cumsum(x * y, axis=1) ** 2", [(2, 3), (3,)]),
    ("np.diff(x)", [(5,)]), ("np.diff(x, axis=0)", [(3, 4)]), ("np.diff(x, n=2, axis=1)", [(2, 5, 3)]),
    ("np.diff(x, 3)", [(2, 6)]), ("np.diff(x, n=0)", [(3,)]), ("np.diff(x)", [(1,)]),
    ("np.diff(x * x, axis=-2) ** 2", [(3, 2)]),
]

test_along_axis = table_test(CASES, seed=600, routes=("sympy", "numba"))



@pytest.mark.parametrize("jit", [False, True, "numba"])
def test_diff_over_no_single_axis_is_an_error_in_every_route(user_module, jit):
    # np.diff takes one int axis: axis=None or a tuple must raise, never difference
    # along some axis the numba form picked.
    if jit == "numba":
        pytest.importorskip("numba")
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.diff(x, axis=(0,)) ** 2) + np.sum(np.diff(x, axis=None))
    """)
    with pytest.raises((ad.AutodiffError, TypeError)):
        ad.grad(module.f, jit=jit)(np.ones((3, 4)))
