"""Reversal, running sums and differences along an axis: flip, cumsum, diff."""

from __future__ import annotations

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

