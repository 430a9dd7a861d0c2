"""Reductions in function and method form, over axis None/int/tuple and keepdims."""

from __future__ import annotations

import numpy as np

import autodiff as ad
from tests.ops.table import table_test

CASES = []
for _name in ("sum", "mean", "prod", "max", "min"):
    for _axis in ("None", "0", "1", "-1", "(0, 2)", "(-1, 0)"):
        for _keepdims in ("False", "True"):
            CASES.append((f"np.{_name}(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]))
    CASES += [
        (f"np.{_name}(x)", [(5,)]),
        (f"np.{_name}(x)", [()]),
        (f"x.{_name}()", [(2, 3)]),
        (f"x.{_name}(axis=1)", [(2, 3)]),
        (f"x.{_name}(0, keepdims=True)", [(2, 3)]),
        (f"np.{_name}(x * x, 1) * np.{_name}(x)", [(3, 2)]),
    ]
for _name in ("var", "std"):
    CASES += [
        (f"np.{_name}(x)", [(5,)]), (f"np.{_name}(x, axis=1)", [(3, 4)]),
        (f"np.{_name}(x, axis=(0, 2), keepdims=True)", [(2, 3, 4)]),
        (f"x.{_name}(ddof=1)", [(2, 3)]), (f"np.{_name}(x, 0, ddof=1)", [(4, 2)]),
    ]
CASES += [
    ("np.amax(x, axis=1)", [(3, 4)]),
    ("np.amin(x, axis=0)", [(3, 4)]),
    ("np.prod(x - 0.5, axis=0)", [(3, 4)]),
]


test_reduction = table_test(CASES, seed=300)


def test_max_shares_gradient_among_tied_elements(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.max(x, axis=1).sum()
    """)
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    np.testing.assert_array_equal(ad.grad(mod.f)(x), [[0, 0.5, 0.5], [1, 0, 0]])


def test_prod_is_exact_with_zeros(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.prod(x)
    """)
    np.testing.assert_array_equal(ad.grad(mod.f)(np.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(ad.grad(mod.f)(np.array([0.0, 0.0, 3.0])), [0.0, 0.0, 0.0])
