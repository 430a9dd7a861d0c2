"""Reversal, running sums and products, differences along an axis: flip, cumsum, cumprod, diff."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences
from tests.ops.table import check_routes, table_test

NUMBA_CASES = [
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

test_along_axis = table_test(NUMBA_CASES, seed=600, routes=("sympy", "numba"))

# The running product's rules run a recurrence (suffix_scan) numba does not compile:
# jit="numba" refuses them (test_cumprod_under_numba_is_refused_with_the_users_line).
SCAN_CASES = [
    ("np.cumprod(x)", [(5,)]), ("np.cumprod(x)", [(2, 3)]), ("np.cumprod(x, axis=0)", [(2, 3, 4)]),
    ("np.cumprod(x, 1)", [(2, 3, 4)]), ("x.cumprod(axis=-1)", [(2, 3)]), ("np.cumprod(x)", [(1,)]),
    ("np.cumprod(x)", [()]), ("np.cumprod(x, axis=0)", [(0, 3)]), ("x.cumprod()", [(3, 2)]),
    ("np.cumprod(x * y, axis=1) ** 2", [(2, 3), (3,)]),
]

test_running_product = table_test(SCAN_CASES, seed=650, routes=("sympy",))

# Sorting: the elements move by a permutation of the values, which numba's and SymPy's
# routes do not take (no numba form, no SymPy form).
ORDER_CASES = [
    ("np.sort(x)", [(5,)]), ("np.sort(x)", [(3, 4)]), ("np.sort(x, axis=0)", [(3, 4)]),
    ("np.sort(x, 1)", [(2, 3, 4)]), ("np.sort(x, axis=None)", [(2, 3)]), ("np.sort(x)[2]", [(4,)]),
    ("np.sort(x * y, axis=-2)[:, 1] ** 2", [(3, 2), (2,)]), ("np.sort(x, axis=0)", [(0, 3)]),
    ("np.sort(np.concatenate((x, x)), axis=None)", [(2, 3)]),  # ties moving together
    ("np.partition(x, 2)", [(5,)]), ("np.partition(x, 1, axis=0)", [(3, 4)]),
    ("np.partition(x, (0, 2), axis=-1)[..., 2]", [(2, 4)]), ("np.partition(x, 3, axis=None)", [(2, 3)]),
    ("np.partition(x * x, 0)[0]", [(4,)]),
    ("x[np.argsort(x)] * np.arange(5.0)", [(5,)]), ("x.argsort() * x", [(4,)]),
    ("np.take_along_axis(x, np.argsort(x * x, axis=0), axis=0) * y", [(3, 4), (4,)]),
]

test_order = table_test(ORDER_CASES, seed=680)
CASES = NUMBA_CASES + SCAN_CASES + ORDER_CASES  # every case (tests/ops/test_registry.py)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumprod_is_exact_with_zeros_to_second_order(user_module, axis):
    # Dividing by the element would give nan or inf where it is 0; the zeros sit first,
    # inside and last along each axis, one and two in a row.
    module = user_module(f"""
        import numpy as np
        def f(x, w):
            return np.sum(w * np.cumprod(x, axis={axis}))
    """)
    x = np.array([[0.0, 1.5, -0.7, 2.0], [1.2, 0.0, 0.0, -1.1], [0.8, -1.3, 0.0, 0.5]])
    weights = np.linspace(0.5, 1.5, 12).reshape(np.shape(np.cumprod(x, axis=axis)))
    check_against_finite_differences(module.f, [x, weights], second_order=True)
    check_routes(module.f, [x, weights], 0, (ad.grad(module.f)(x, weights),), ("jit", "sympy"))


def test_cumprod_under_numba_is_refused_with_the_users_line(user_module):
    pytest.importorskip("numba")
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.cumprod(x))
    """)
    with pytest.raises(ad.AutodiffError, match="np.cumprod"):
        ad.grad(module.f, jit="numba")(np.ones(3))



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


def test_sort_of_tied_elements_keeps_their_order_as_jax_does(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sort(x)[2] + 10.0 * np.partition(x, 0)[0]
    """)
    # Sorted, x is [x[1], x[3], x[0], x[2]]: the first of the tied 3.0s is third.
    np.testing.assert_array_equal(ad.grad(module.f)(np.array([3.0, 1.0, 3.0, 2.0])),
                                  [1.0, 10.0, 0.0, 0.0])
    _, tangent = ad.jvp(module.f)(np.array([3.0, 1.0, 3.0, 2.0]), np.array([1.0, 0.0, 0.0, 0.0]))
    assert tangent == 1.0
