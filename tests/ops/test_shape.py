"""Shape ops and indexing: reshape, ravel, squeeze, expand_dims, concatenate, stack, slices."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import NonDifferentiableError
from tests.ops import test_assembly
from tests.ops.table import table_test

SHAPE_CASES = [
    ("np.reshape(x, (3, 2))", [(2, 3)]), ("x.reshape(6)", [(2, 3)]),
    ("x.reshape(3, -1)", [(2, 3)]), ("x.reshape((1, 6))", [(2, 3)]),
    ("np.ravel(x)", [(2, 3)]), ("x.ravel()", [(2, 3)]), ("x.flatten()", [(2, 3)]),
    ("np.squeeze(x)", [(2, 1, 3)]), ("x.squeeze(axis=1)", [(2, 1, 3)]),
    ("np.expand_dims(x, 0)", [(2, 3)]), ("np.expand_dims(x, -1)", [(2, 3)]),
    ("np.concatenate([x, y])", [(2, 3), (4, 3)]),
    ("np.concatenate((x, y), axis=1)", [(2, 3), (2, 1)]),
    ("np.concatenate([x, y, x], axis=-1)", [(2, 3), (2, 2)]),
    ("np.concatenate([x, y], axis=None)", [(2, 3), (4,)]),
    ("np.stack([x, y])", [(2, 3), (2, 3)]), ("np.stack((x, y, x), axis=1)", [(2, 3), (2, 3)]),
    ("np.stack([x, y], axis=-1)", [(3,), (3,)]), ("np.array([x, y, x * y])", [None, None]),
    ("np.array([x, 2.0 * x])", [(3,)]),
    ("np.array([np.sin(r) * y for r in x])", [(3, 2), (2,)]),
    ("np.array([x[i] ** 2 for i in range(3)]) + y", [(4, 2), (3, 2)]),
    ("x[0]", [(3, 4)]), ("x[1:-1]", [(5,)]), ("x[:, 2]", [(3, 4)]), ("x[::2]", [(5, 2)]),
    ("x[None]", [(3,)]), ("x[..., 1]", [(2, 3, 4)]), ("x[1:, None, ::-1]", [(3, 4)]),
    ("x[-1, 1:3]", [(3, 4)]), ("x[1:] * x[:-1]", [(6,)]), ("x[0] + x[0] * x[1]", [(3, 2)]),
    ("x[x > 0]", [(6,)]),
    ("np.broadcast_to(x, (4, 3))", [(3,)]), ("np.broadcast_to(x, (2, 3))", [(2, 1)]),
    ("np.array(x)", [(3,)]), ("x.copy()", [(3,)]), ("np.copy(x)", [(2, 3)]),
    ("np.asarray(x)", [(2,)]),
    ("np.zeros_like(x) + x * np.ones(x.shape)", [(2, 3)]),
    ("x * x.shape[0] / x.size + x.ndim", [(2, 3)]),
    ("x * len(x)", [(4,)]),
    ("np.array([[x, 2.0 * y], [x * y, np.ones(3)]])", [(3,), (3,)]),
    ("np.array([[[x, 1.0]], [[y, x * y]]])", [None, None]),
    ("np.r_[x, 2.0 * x]", [(3,)]), ("np.r_[x, y, 1:3]", [(2,), (3,)]),
    ("np.r_[x, y, 3.0]", [None, (2,)]), ("np.r_[x, y]", [(2, 3), (1, 3)]),
    ("np.r_['1', x, y]", [(2, 3), (2, 2)]), ("np.r_['0,2', x, y]", [(3,), (3,)]),
    ("np.r_[x, [y, 2.0 * y]]", [(2,), None]),
    ("np.c_[x, y]", [(3,), (3,)]), ("np.c_[x, y * x[:, 0]]", [(3, 2), (3,)]),
    ("np.linspace(x, y, 5)", [None, None]), ("np.linspace(x, y, 4, endpoint=False)", [(3,), (3,)]),
    ("np.linspace(x, y, 3, axis=-1)", [(2,), (3, 1)]), ("np.linspace(x, 2.0, 4, axis=1)", [(2, 3)]),
    ("np.linspace(-x, x, 2, endpoint=False, axis=0)", [(2, 2)]),
    ("x.astype(int) * x", [(2, 3)]), ("np.array(x, dtype=np.int32) * x", [(3,)]),
    ("x.astype(bool) + x", [(3,)]),
    ("np.asarray(x, dtype=float) * np.asarray(y, dtype=np.float64)", [(2, 3), (3,)]),
    ("np.asarray(x, dtype=np.int32) * x + np.asanyarray(x, dtype=None)", [(3,)]),
    ("np.full((2, 3), x) * x", [None]), ("np.full(x.shape, y) * x", [(2, 3), (3,)]),
    ("np.full_like(x, y, dtype=float) * x", [(2, 3), (3,)]),
    ("float(x) * x", [None]), ("float(x[1]) * x", [(3,)]),
    ("sum([np.sin(r) * y for r in x])", [(3,), (2,)]),
    ("filled(x) * y", [(4,), (4,)]),
    # a repeated index writes an element several times: the last write is kept
    ("overwritten(x, y) * y", [(3,), (4,)]),
    ("x[slice(1, None)] * x[slice(2)][0]", [(3,)]),
    # np.where(condition) alone: np.nonzero's indices, which carry no gradient
    ("x[np.where(x > 0.0)] ** 2", [(6,)]), ("x[np.where(x > -0.3)] * x.sum()", [(2, 3)]),
    ("x[np.where(x > -0.3)[1], np.where(x > -0.3)[0]] * y", [(3, 3), ()]),
    # order F: the adjoint read back in the same order
    ("np.ravel(x, order='F') * y", [(2, 3), (6,)]), ("x.ravel('F')", [(2, 3, 2)]),
    ("x.flatten('F') * x.flatten()", [(3, 2)]), ("x.reshape(2, 3, order='F')", [(3, 2)]),
    ("np.reshape(x, (3, -1), order='F') * y", [(2, 3, 1), (2,)]),
    ("np.reshape(x.T, 6, order='F') * x.ravel(order='C')", [(2, 3)]),
    # positions among sorted values: integers, with no gradient, scaling values that have one
    ("x * np.searchsorted(np.array([-0.5, 0.0, 0.5]), x)", [(4,)]),
    ("x * np.searchsorted(np.sort(y), x, side='right')", [(3,), (4,)]),
    ("x * np.sort(x).searchsorted(0.1) + np.digitize(x, np.array([-0.5, 0.5]), right=True) * x", [(5,)]),
    ("np.digitize(x, np.array([0.5, 0.0, -0.5])) * x", [(2, 3)]),
    # lists of run-time length filled by index (list_setitem, list_repeat, list_concat)
    ("filled_by_index(x, y)", [(3, 2), (2,)]), ("repeated_then_set(x, y)", [(4, 2), (2,)]),
]

# Functions the cases call: element updates need statements.
SHAPE_PREAMBLE = """
def filled(x):
    out = np.zeros(np.shape(x))
    for i in range(len(x)):
        out[i] = x[i] * x[-1 - i]
    return out


def filled_by_index(x, y):
    hs = [y] + [None] * len(x)
    for i in range(len(x)):
        hs[i + 1] = np.sin(hs[i]) * x[i]
    return hs[-1] * hs[1]


def repeated_then_set(x, y):
    hs = [y * 2.0] * len(x)
    for i in range(len(x)):
        hs[i] = hs[i] * x[i] + hs[i - 1]
    return hs[0] * hs[-1]


def overwritten(x, y):
    out = y.copy()
    out[[0, 0, 2]] = x
    out[[1, 1, 3]] += x * x[0]
    return out
"""


test_shape_op = table_test(SHAPE_CASES, seed=500, preamble=SHAPE_PREAMBLE)

# Order F on every route (numba's is C order over the reversed axes).
ORDER_CASES = [
    ("np.ravel(x, order='F') * y", [(2, 3), (6,)]), ("x.flatten('F')", [(2, 3, 2)]),
    ("x.T.reshape(2, 3, order='F') * y", [(2, 3), (3,)]),
    ("np.reshape(x[:, ::2], (3, 2), order='F')", [(2, 6)]),
]
test_order_f = table_test(ORDER_CASES, seed=550, routes=("sympy", "numba"))

# Every case of the family, the assembly ops' (checked with SymPy too, in
# test_assembly.py) included: the cases tests/ops/test_registry.py walks.
CASES = SHAPE_CASES + test_assembly.CASES
PREAMBLE = SHAPE_PREAMBLE + test_assembly.PREAMBLE


def test_index_by_an_integer_argument(user_module):
    mod = user_module("""
        import numpy as np
        def f(x, i):
            return np.sum(np.sin(x[i]) * x[i + 1])
    """)
    x = np.random.default_rng(0).normal(size=(4, 3))
    gradient = ad.grad(mod.f)(x, 1)
    expected = np.zeros_like(x)
    expected[1] = np.cos(x[1]) * x[2]
    expected[2] = np.sin(x[1])
    np.testing.assert_allclose(gradient, expected)


def test_integer_array_index_accumulates_repeats(user_module):
    mod = user_module("""
        import numpy as np
        def f(x, idx):
            return np.sum(x[idx] ** 2)
    """)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ad.grad(mod.f)(x, np.array([0, 2, 2])), [2.0, 0.0, 12.0])


def test_arange_refuses_a_gradient_through_its_bounds(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.arange(x, 5.0) * x)
    """)
    for derivative in (lambda x: ad.grad(mod.f)(x), lambda x: ad.jvp(mod.f)(x, 1.0)):
        with pytest.raises(NonDifferentiableError, match="np.arange has no gradient rule"):
            derivative(1.5)


def test_full_like_refuses_a_gradient_without_a_floating_dtype(user_module):
    mod = user_module("""
        import numpy as np
        def f(x, y):
            return np.sum(np.full_like(x, y) * y)
    """)
    with pytest.raises(NonDifferentiableError, match="give dtype=float"):
        ad.grad(mod.f, wrt=1)(np.ones(3), 1.5)


def test_order_a_or_k_follows_the_memory_layout_and_is_refused(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.sum(x.ravel('A') * np.arange(6.0))
        def g(x):
            return np.sum(np.reshape(x, (3, 2), order='A') ** 2)
    """)
    for fn in (mod.f, mod.g):
        with pytest.raises(ad.AutodiffError, match="order 'A' or 'K'"):
            ad.grad(fn)(np.ones((2, 3)))
