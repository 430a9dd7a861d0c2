"""np.cov, np.corrcoef and np.bincount against finite differences: rows or columns as
variables, a second sample y, bias and ddof, frequency and analytic weights (the
analytic ones differentiated), bins with and without minlength."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import OPS
from tests.ops.table import ops_reached, table_test

_BINS = "np.array([0, 2, 2, 1, 4, 0])"
CASES = [
    # np.cov
    ("np.cov(x)", [(3, 5)]), ("np.cov(x)", [(6,)]), ("np.cov(x, rowvar=False)", [(5, 3)]),
    ("np.cov(x, rowvar=False)", [(2, 4)]), ("np.cov(x, y, rowvar=False)", [(3, 2), (1, 3)]),
    ("np.cov(x, y)", [(2, 5), (5,)]), ("np.cov(x, y, rowvar=False)", [(5, 2), (5, 3)]),
    ("np.cov(x, bias=True)", [(3, 4)]), ("np.cov(x, ddof=2)", [(2, 6)]),
    ("np.cov(x, ddof=0, bias=False)", [(2, 4)]),
    ("np.cov(x, aweights=y)", [(3, 5), (5,)], "positive"),
    ("np.cov(x, aweights=y, ddof=0)", [(3, 5), (5,)], "positive"),
    ("np.cov(x, fweights=np.array([1, 3, 2, 1]))", [(2, 4)]),
    ("np.cov(x, fweights=np.array([1, 3, 2, 1]), bias=True)", [(2, 4)]),
    ("np.cov(x, rowvar=False, fweights=np.array([2, 1, 1, 3]), aweights=y * y)",
     [(4, 3), (4,)], "positive"),
    ("np.cov(x * x, y, aweights=np.array([0.5, 1.0, 2.0, 1.5]))", [(4,), (4,)]),
    # np.corrcoef
    ("np.corrcoef(x)", [(3, 5)]), ("np.corrcoef(x, rowvar=False)", [(6, 2)]),
    ("np.corrcoef(x, y)", [(5,), (5,)]), ("np.corrcoef(x, y, rowvar=False)", [(4, 2), (4,)]),
    ("np.corrcoef(x)", [(4,)]),  # one variable: 1 whatever x
    # np.bincount, its gradient into the weights
    (f"np.bincount({_BINS}, weights=x)", [(6,)]),
    (f"np.bincount({_BINS}, x, minlength=7)", [(6,)]),
    (f"np.bincount({_BINS}, weights=x * y)[{_BINS}] * y", [(6,), (6,)]),
    ("np.bincount(np.array([3, 1]), weights=np.sin(x)) ** 2", [(2,)]),
    (f"np.bincount({_BINS}) * np.sum(x)", [(3,)]),  # counts: no gradient of their own
]

test_statistics = table_test(CASES, seed=2300, routes=("sympy",))


def test_every_statistics_op_is_checked_by_the_table():
    """As tests/ops/test_registry.py, for this module's ops: each op with rules is
    reached by a case, and the ops built from others leave none of their own."""
    seen = ops_reached(CASES)
    with_rules = {"bincount", "cov_rows", "cov_rows_transpose"}
    assert not with_rules - seen, f"statistics ops no case goes through: {sorted(with_rules - seen)}"
    assert all(OPS[name].vjp is not None for name in with_rules)
    assert not {"cov", "corrcoef"} & seen  # built from other ops


@pytest.fixture
def statistics(user_module):
    return user_module("""
        import numpy as np


        def covariance(x, w):
            return np.cov(x, rowvar=False, aweights=w)


        def correlation(x):
            return np.corrcoef(x)


        def typed(x):
            return np.sum(np.cov(x, dtype=np.float32))


        def counts(w):
            return np.bincount(np.array([1, 1, 3]), weights=w, minlength=5)
    """)


def test_values_are_numpys(statistics):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(6, 3)), rng.uniform(0.5, 1.5, size=6)
    value, _ = ad.jvp(statistics.covariance)(x, w, np.ones_like(x))
    np.testing.assert_allclose(value, np.cov(x, rowvar=False, aweights=w), rtol=1e-13)
    value, _ = ad.jvp(statistics.correlation)(x, np.ones_like(x))
    np.testing.assert_allclose(value, np.corrcoef(x), rtol=1e-13)
    assert np.all(np.abs(value) <= 1.0)


@pytest.mark.parametrize("jit", [False, True])
def test_bincount_gives_each_weight_its_bins_adjoint(statistics, jit):
    w = np.array([1.0, 2.0, 4.0])
    value, _ = ad.jvp(statistics.counts, jit=jit)(w, np.ones(3))
    np.testing.assert_array_equal(value, [0.0, 3.0, 0.0, 4.0, 0.0])
    np.testing.assert_array_equal(ad.vjp(statistics.counts, jit=jit)(w, np.arange(10.0, 60.0, 10.0)),
                                  [20.0, 20.0, 40.0])


def test_a_covariance_with_a_dtype_is_refused_with_the_reason(statistics):
    with pytest.raises(ad.AutodiffError, match="constant rowvar, bias and ddof and no dtype"):
        ad.grad(statistics.typed)(np.ones((2, 3)))
