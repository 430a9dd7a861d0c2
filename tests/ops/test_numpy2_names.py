"""NumPy 2's names (the array API's) against finite differences: np.linalg.vector_norm
and matrix_norm of every order, np.linalg's outer, vecdot, matmul, diagonal, trace,
cross and matrix_transpose, np.vecdot, np.matvec, np.vecmat, np.matrix_transpose and
x.mT, np.cumulative_sum and np.cumulative_prod, np.unstack, np.astype, and the names of
existing ops (np.pow, np.acos, np.concat, np.permute_dims, ...).

Each is registered only when NumPy has it: a case skips where NumPy lacks its function.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from autodiff.ops import OPS
from tests.ops.table import ops_reached, table_test

CASES = [
    # norms: every axis, one, several; every order
    ("np.linalg.vector_norm(x)", [(2, 3)]), ("np.linalg.vector_norm(x, axis=1)", [(2, 3)]),
    ("np.linalg.vector_norm(x, ord=1, axis=(0, 2), keepdims=True)", [(2, 3, 2)]),
    ("np.linalg.vector_norm(x, ord=np.inf)", [(2, 3)]), ("np.linalg.vector_norm(x, ord=3, axis=1)", [(2, 3)]),
    ("np.linalg.vector_norm(x, axis=(0, 1, 2))", [(2, 3, 2)]), ("np.linalg.vector_norm(x, ord=2, axis=(1, 0))", [(2, 3)]),
    ("np.linalg.vector_norm(x, ord=-np.inf, axis=None, keepdims=True)", [(2, 3)]),
    ("np.linalg.vector_norm(x, ord=0.5, axis=(-1,))", [(3, 2)]),
    ("np.linalg.matrix_norm(x)", [(2, 3, 3)]),
    ("np.linalg.matrix_norm(x, ord=1)", [(3, 4)]), ("np.linalg.matrix_norm(x, ord=-np.inf)", [(2, 3, 4)]),
    # products
    ("np.linalg.outer(x, y)", [(3,), (4,)]), ("np.linalg.vecdot(x, y)", [(2, 3), (3,)]),
    ("np.vecdot(x, y, axis=0)", [(3, 2), (3, 2)]), ("np.vecdot(x, y)", [(2, 1, 3), (4, 3)]),
    ("np.linalg.matmul(x, y)", [(2, 3), (3, 4)]), ("np.linalg.cross(x, y)", [(2, 3), (3,)]),
    ("np.linalg.cross(x, y, axis=0)", [(3, 2), (3, 2)]),
    # matrices of a stack: the last two axes
    ("np.linalg.diagonal(x, offset=1)", [(2, 3, 4)]), ("np.linalg.diagonal(x)", [(3, 3)]),
    ("np.linalg.trace(x)", [(2, 3, 3)]), ("np.linalg.trace(x, offset=-1)", [(3, 4)]),
    ("np.linalg.matrix_transpose(x) @ y", [(2, 3), (2, 4)]), ("np.matrix_transpose(x)", [(2, 3, 4)]),
    ("x.mT * y", [(2, 3, 4), (3,)]),
    # running sums and products, from their initial value or not
    ("np.cumulative_sum(x)", [(4,)]), ("np.cumulative_sum(x, include_initial=True)", [(4,)]),
    ("np.cumulative_sum(x, axis=1, include_initial=True)", [(2, 3)]),
    ("np.cumulative_sum(x, axis=-2)", [(3, 2)]),
    ("np.cumulative_prod(x)", [(4,)]), ("np.cumulative_prod(x, include_initial=True)", [(3,)]),
    ("np.cumulative_prod(x, axis=0, include_initial=True)", [(3, 2)]),
    ("np.cumulative_prod(x * np.array([1.0, 0.0, 1.0, 1.0]), axis=-1)", [(2, 4)]),
    # slices of an array as a list; a cast
    ("np.unstack(x)[1] * np.unstack(x, axis=-1)[0]", [(2, 2)]),
    ("np.stack(np.unstack(x, axis=1), axis=0) * y", [(2, 3), (2,)]),
    ("np.astype(x * y, np.float64)", [(3,), (3,)]), ("np.astype(x, 'float64', copy=False)", [(2,)]),
    # names of existing ops
    ("np.pow(x, y)", [(3,), (3,)], "positive"), ("np.acos(x) + np.asin(x) * np.atan(x)", [(3,)], "unit"),
    ("np.atan2(x, y) + np.asinh(x) * np.acosh(y + 2.0)", [(3,), (3,)], "positive"),
    ("np.atanh(x)", [(4,)], "unit"), ("np.concat([x, y], axis=0)", [(2, 3), (1, 3)]),
    ("np.permute_dims(x, (2, 0, 1))", [(2, 3, 4)]),
]


def _missing(expr: str) -> str | None:
    """The NumPy function a case calls that this NumPy lacks, if any."""
    for name in re.findall(r"np\.([\w.]+)\(", expr):
        owner = np
        for part in name.split("."):
            owner = getattr(owner, part, None)
        if owner is None:
            return f"np.{name}"
    if ".mT" in expr and not hasattr(np, "matrix_transpose"):
        return "x.mT"
    return None


# Through the singular values, which SymPy has no closed form of: no SymPy route.
SINGULAR_CASES = [
    ("np.linalg.matrix_norm(x, ord='nuc', keepdims=True)", [(3, 4)]),
    ("np.linalg.matrix_norm(x, ord=2)", [(3, 2)]), ("np.linalg.matrix_norm(x, ord=-2)", [(2, 3, 3)]),
]

AVAILABLE = [case for case in CASES if _missing(case[0]) is None]
SINGULAR = [case for case in SINGULAR_CASES if _missing(case[0]) is None]
LACKING = [case for case in CASES + SINGULAR_CASES if _missing(case[0]) is not None]

test_numpy2_name = table_test(AVAILABLE, seed=2300, routes=("sympy",))
test_numpy2_singular = table_test(SINGULAR, seed=2350)


@pytest.mark.parametrize("case", LACKING, ids=[f"{c[0]}-{c[1]}" for c in LACKING])
def test_numpy2_name_this_numpy_lacks(case):
    pytest.skip(f"this NumPy has no {_missing(case[0])}")


def test_every_numpy2_op_is_checked_by_the_table():
    """Each op of NumPy 2's names with rules of its own is reached by a case, its rules by
    the derivatives the checks build (the others are built from ops with rules)."""
    ours = {name for name in ("cumulative_sum", "cumulative_prod", "unstack_array") if name in OPS}
    seen = ops_reached(AVAILABLE)
    assert not ours - seen, f"ops no case goes through: {sorted(ours - seen)}"
