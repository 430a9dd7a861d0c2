"""Reductions in function and method form, over axis None/int/tuple and keepdims."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

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
for _name in ("var", "std"):  # ddof with keepdims and several axes
    CASES += [
        (f"np.{_name}(x, axis=(0, 2), ddof=1, keepdims=True)", [(2, 3, 4)]),
        (f"np.{_name}(x, axis=(-1, 0), ddof=2)", [(2, 3, 4)]),
        (f"x.{_name}(axis=1, ddof=1, keepdims=True)", [(3, 4)]),
        (f"np.{_name}(x, ddof=1)", [(5,)]),
        (f"np.{_name}(x * y, axis=0, ddof=1) ** 2", [(4, 3), (3,)]),
    ]
for _axis in ("None", "0", "-1", "(0, 2)"):
    for _keepdims in ("False", "True"):
        CASES += [(f"np.{_name}(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)])
                  for _name in ("ptp", "nansum", "nanmean")]
        CASES.append((f"np.average(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]))
        CASES.append((f"np.average(x, axis={_axis}, weights=y, keepdims={_keepdims})",
                      [(2, 3, 4), (2, 3, 4)], "positive"))
CASES += [
    ("np.ptp(x)", [(5,)]), ("np.ptp(x)", [(1,)]), ("np.ptp(x, axis=1)", [(3, 1)]),
    ("np.ptp(np.concatenate((x, x)))", [(3,)]),  # tied extremes
    ("np.nansum(np.where(x > 1.0, np.nan, x), axis=0)", [(4, 3)]),
    ("np.nanmean(np.where(x > 1.0, np.nan, x * x), axis=1)", [(3, 6)]),
    ("np.nansum(x)", [()]), ("np.nanmean(x)", [(5,)]),
    ("np.average(x)", [(5,)]), ("np.average(x, weights=y)", [(5,), (5,)], "positive"),
    ("np.average(x, axis=1, weights=y)", [(3, 4), (4,)], "positive"),
    ("np.average(x, axis=0, weights=y)", [(3, 2, 2), (3,)], "positive"),
    ("np.average(x, axis=-1, weights=y * y, keepdims=True)", [(2, 3), (3,)], "positive"),
    ("np.average(x * y, 0, y)", [(4,), (4,)], "positive"),
]
for _axis in ("None", "0", "-1", "(0, 2)"):
    for _keepdims in ("False", "True"):
        CASES += [
            (f"np.median(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]),
            (f"np.quantile(x, 0.3, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]),
            (f"np.percentile(x, [10.0, 75.0], axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]),
        ]
CASES += [
    ("np.median(x)", [(5,)]), ("np.median(x)", [(4,)]), ("np.median(x)", [(1,)]),
    ("np.median(x * y, axis=1)", [(3, 4), (4,)]),
    ("np.median(np.concatenate((x, x, x[:1])))", [(3,)]),  # ties
    ("np.quantile(x, 1.0, axis=0)", [(3, 2)]), ("np.quantile(x, 0.0)", [(4,)]),
    ("np.quantile(x, np.array([[0.2, 0.45], [0.6, 0.9]]), axis=1)", [(2, 5)]),
    ("np.quantile(x, 0.1 + 0.5 * y * y, axis=0)", [(4, 3), ()], "unit"),
    ("np.quantile(x, 0.1 + 0.5 * y * y, axis=-1, keepdims=True)", [(2, 4), (3,)], "unit"),
    ("np.percentile(x, 10.0 + 50.0 * y * y)", [(6,), (2, 2)], "unit"),
    ("np.percentile(x * x, 30.0 + 40.0 * y, axis=(0, 1))", [(3, 2, 2), ()], "unit"),
]

CASES += [  # positions of extremes: no gradient of their own, read as indices
    ("x[np.argmax(x)] * x", [(5,)]), ("np.argmin(x) + x * x", [(4,)]),
    ("x.argmax(axis=0) * x", [(3, 4)]),
    ("np.take_along_axis(x, np.argmin(x, axis=1, keepdims=True), axis=1) * x", [(3, 4)]),
    ("x[np.argmax(np.concatenate((x, x)))] ** 2", [(3,)]),  # ties: the first
]

# More NaN-skipping reductions: each over axes and keepdims, on arrays with NaNs (the
# NaN elements get no gradient), with ties and with ddof.
for _axis in ("None", "0", "-1", "(0, 2)"):
    for _keepdims in ("False", "True"):
        CASES += [(f"np.{_name}(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)])
                  for _name in ("nanmax", "nanmin", "nanvar", "nanstd", "nanprod")]
for _name in ("nanmax", "nanmin", "nanvar", "nanstd", "nanprod", "nansum"):
    CASES += [(f"np.{_name}(np.where(x > 1.0, np.nan, x), axis=0)", [(4, 3)]),
              (f"np.{_name}(np.where(x > 1.0, np.nan, x * x), axis=1, keepdims=True)", [(3, 6)])]
for _name in ("nancumsum", "nancumprod"):
    CASES += [(f"np.{_name}(x)", [(2, 3)]), (f"np.{_name}(x, axis=0)", [(3, 2)]),
              (f"np.{_name}(np.where(x > 1.0, np.nan, x), axis=-1)", [(3, 5)])]
CASES += [
    ("np.nanmax(x)", [()]), ("np.nanmin(x)", [(5,)]),
    ("np.nanmax(np.concatenate((x, x)))", [(3,)]),  # tied: the gradient shared
    ("np.nanvar(x, ddof=1)", [(5,)]), ("np.nanstd(x, axis=1, ddof=1)", [(3, 4)]),
    ("np.nanvar(np.where(x > 1.0, np.nan, x), axis=0, ddof=1)", [(6, 3)]),
    ("np.nanstd(np.where(x > 1.0, np.nan, x), axis=(0, 1), ddof=2, keepdims=True)", [(4, 3, 2)]),
    ("np.nanstd(x)", [(1,)]), ("np.nanprod(x - 0.5, axis=0)", [(3, 4)]),
]

# NumPy's keywords: where= (a constant mask, or one computed from x), initial= (a
# constant, or a value differentiated), mean= (NumPy 2's, differentiated), correction=.
_MASK = "np.array([[True, False, True, True], [False, True, True, True], [True, True, False, True]])"
_NANS = "x + np.array([[np.nan, 0, 0, 0], [0, 0, 0, 0], [0, np.nan, 0, 0]])"  # none alone in a slice
_NAN_3D = "x + np.array([[[np.nan, 0, 0, 0], [0, 0, 0, 0], [0, 0, np.nan, 0]], [[0] * 4] * 3])"
CASES += [
    ("np.sum(x, where=x > 0.0)", [(3, 4)]), (f"np.sum(x, axis=1, where={_MASK})", [(3, 4)]),
    ("np.sum(x, initial=y)", [(3, 4), ()]), ("x.sum(0, initial=2.0, where=x < 1.0)", [(3, 4)]),
    (f"np.prod(x, axis=0, where={_MASK}, keepdims=True)", [(3, 4)]),
    ("np.prod(x, initial=y * y)", [(2, 3), ()]), ("x.prod(axis=1, initial=0.5)", [(3, 4)]),
    (f"np.max(x, axis=1, where={_MASK}, initial=-1.0)", [(3, 4)]),
    ("np.max(x, initial=y)", [(2, 3), ()]), ("x.max(axis=0, initial=0.0)", [(3, 4)]),
    (f"np.min(x, axis=(0, 1), where={_MASK}, initial=y)", [(3, 4), ()]),
    ("np.amin(x, 0, None, True, 0.5)", [(3, 4)]),  # NumPy's positions: out, keepdims, initial
    (f"np.mean(x, where={_MASK})", [(3, 4)]), (f"x.mean(axis=1, where={_MASK})", [(3, 4)]),
    (f"np.mean(x, axis=0, keepdims=True, where={_MASK})", [(3, 4)]),
    (f"np.var(x, axis=1, where={_MASK})", [(3, 4)]), (f"np.var(x, where={_MASK}, ddof=1)", [(3, 4)]),
    (f"np.std(x, axis=0, where={_MASK}, keepdims=True)", [(3, 4)]),
    (f"x.std(axis=1, ddof=1, where={_MASK})", [(3, 4)]),
    ("np.std(x, axis=0, where=np.array([[True], [False]]))", [(2, 3)]),  # one element kept
    ("np.var(x, 0, None, None, 1)", [(3, 4)]),  # NumPy's positions: dtype, out, ddof
    (f"np.nansum(np.where(x > 1.0, np.nan, x), axis=0, where={_MASK}, initial=y)", [(3, 4), ()]),
    (f"np.nanprod(x, axis=1, where={_MASK})", [(3, 4)]),
    (f"np.nanmax(np.where(x > 1.0, np.nan, x), axis=1, where={_MASK}, initial=-3.0)", [(3, 4)]),
    ("np.nanmin(x, initial=y)", [(3, 4), ()]),
    (f"np.nanmean({_NANS}, axis=0, where={_MASK})", [(3, 4)]),
    (f"np.nanvar(x, axis=1, where={_MASK}, ddof=1)", [(3, 4)]),
    (f"np.nanstd(np.where(x > 1.5, np.nan, x), where={_MASK})", [(3, 4)]),
    *([("np.var(x, axis=1, mean=np.mean(x, axis=1, keepdims=True) + y)", [(3, 4), (3, 1)]),
       ("np.std(x, axis=0, mean=y, keepdims=True)", [(3, 4), (1, 4)]),
       (f"np.nanvar(x, axis=1, where={_MASK}, mean=y, correction=1)", [(3, 4), (3, 1)]),
       ("np.var(x, correction=1)", [(3, 4)])]
      if "mean" in inspect.signature(np.var).parameters else []),
]

# Order statistics skipping NaNs: over axes and keepdims, with NaNs, q differentiated.
for _axis in ("None", "0", "-1", "(0, 2)"):
    for _keepdims in ("False", "True"):
        CASES += [
            (f"np.nanmedian(x, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]),
            (f"np.nanquantile({_NAN_3D}, 0.3, axis={_axis}, keepdims={_keepdims})", [(2, 3, 4)]),
            (f"np.nanpercentile({_NAN_3D}, [10.0, 75.0], axis={_axis}, keepdims={_keepdims})",
             [(2, 3, 4)]),
        ]
CASES += [
    ("np.nanmedian(np.where(x > 1.0, np.nan, x), axis=0)", [(5, 3)]),
    ("np.nanmedian(np.where(x > 1.0, np.nan, x * x), axis=1, keepdims=True)", [(3, 6)]),
    ("np.nanmedian(x)", [(4,)]), ("np.nanmedian(np.concatenate((x, x, x[:1])))", [(3,)]),  # ties
    ("np.nanquantile(x, 1.0, axis=0)", [(3, 2)]), ("np.nanquantile(x, 0.0)", [(4,)]),
    (f"np.nanquantile({_NANS}, np.array([[0.2, 0.45], [0.6, 0.9]]), axis=0)", [(3, 4)]),
    (f"np.nanquantile({_NANS}, 0.1 + 0.5 * y * y, axis=0)", [(3, 4), ()], "unit"),
    ("np.nanquantile(x, 0.1 + 0.5 * y * y, axis=-1, keepdims=True)", [(2, 4), (3,)], "unit"),
    (f"np.nanpercentile({_NANS}, 10.0 + 50.0 * y * y)", [(3, 4), (2, 2)], "unit"),
    (f"np.nanpercentile(2.0 * {_NANS}, 30.0 + 40.0 * y, axis=(0, 1))", [(3, 4), ()], "unit"),
]

test_reduction = table_test(CASES, seed=300)

# SymPy's derivatives of the forms these reductions have (sort-based ones have none).
SYMPY_CASES = [
    ("np.ptp(x * x, axis=0)", [(2, 3)]), ("np.nansum(x * x, axis=1, keepdims=True)", [(2, 3)]),
    ("np.nanmean(x * x, axis=0)", [(3, 2)]),
    ("np.average(x, axis=1, weights=y)", [(2, 3), (3,)], "positive"),
    ("np.average(x * x, weights=y)", [(2, 3), (2, 3)], "positive"),
    ("np.var(x, axis=(0, 1), ddof=1, keepdims=True)", [(2, 3, 2)]),
    ("np.std(x, axis=-1, ddof=1)", [(2, 3)]),
    ("np.nanmax(x * x, axis=0)", [(3, 2)]), ("np.nanmin(x, axis=1, keepdims=True)", [(2, 3)]),
    ("np.nanvar(x, axis=(0, 1), ddof=1, keepdims=True)", [(2, 3, 2)]),
    ("np.nanstd(x, axis=-1, ddof=1)", [(2, 3)]),
    ("np.nanprod(x, axis=0) + np.nancumsum(x * x, axis=1)", [(2, 3)]),
    ("np.nancumprod(x, axis=1)", [(2, 3)]),
    ("np.sum(x * x, axis=1, where=np.array([True, False, True]), initial=y)", [(2, 3), ()]),
    ("np.max(x, axis=0, where=np.array([[True], [False]]), initial=0.5)", [(2, 3)]),
    ("np.var(x, axis=0, where=np.array([[True], [False], [True]]), ddof=1)", [(3, 2)]),
    ("np.std(x, where=np.array([True, False, True]))", [(2, 3)]),
]

test_reduction_against_sympy = table_test(SYMPY_CASES, seed=350, routes=("sympy",))


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


def test_nan_skipping_means_pass_no_gradient_to_nan_elements(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return 2.0 * np.nanmean(x, axis=0).sum() + np.nansum(x)
    """)
    x = np.array([[1.0, np.nan], [3.0, 2.0], [np.nan, 4.0]])
    np.testing.assert_array_equal(ad.grad(mod.f)(x), [[2.0, 0.0], [2.0, 2.0], [0.0, 2.0]])
    _, tangent = ad.jvp(mod.f)(x, np.ones_like(x))
    assert tangent == 2.0 * 2 + 4.0


def test_average_returning_the_weights_sum_is_refused(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.average(x, weights=x, returned=True)[0]
    """)
    with pytest.raises(ad.AutodiffError, match="returned"):
        ad.grad(mod.f)(np.ones(3))


def test_sympy_refuses_nan_skipping_of_elements_nan_for_some_inputs(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.nansum(np.where(x > 1.0, np.nan, x))
    """)
    with pytest.raises(ad.AutodiffError, match="NaN for some inputs"):
        ad.symbolic_grad(mod.f, shapes={"x": (3,)})(np.ones(3))


@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanvar", "nanstd", "nanprod", "nanmedian"])
def test_nan_reductions_pass_no_gradient_to_nan_elements(user_module, name):
    mod = user_module(f"""
        import numpy as np
        def f(x):
            return np.nansum(np.{name}(x, axis=1) * np.array([1.0, 2.0, 3.0]))
    """)
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [2.0, 5.0, np.nan]])
    gradient = ad.grad(mod.f)(x)
    assert np.all(gradient[np.isnan(x)] == 0.0)  # the slice of NaNs alone passes none
    kept = ~np.isnan(x)
    assert np.all(np.isfinite(gradient[kept]))
    _, tangent = ad.jvp(mod.f)(x, np.where(kept, 1.0, 0.0))
    assert tangent == pytest.approx(np.sum(gradient))


@pytest.mark.parametrize(("call", "match"), [
    ("np.max(x, where=x > 0.0)", "needs initial="),
    ("x.min(axis=0, where=x > 0.0)", "needs initial="),
    ("np.sum(x, dtype=np.float32)", "dtype= is not supported"),
    ("np.mean(x, 0, None, np.empty(3))", "out= is not supported"),
])
def test_reduction_keywords_numpy_refuses_or_autodiff_does_not_take_are_errors(user_module, call,
                                                                                match):
    mod = user_module(f"""
        import numpy as np
        def f(x):
            return np.sum({call})
    """)
    with pytest.raises(ad.AutodiffError, match=match):
        ad.grad(mod.f)(np.ones((2, 3)))


def test_a_where_mask_passes_no_gradient_to_the_elements_it_leaves_out(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            mask = np.array([True, False, True])
            return np.sum(x, where=mask) + np.mean(x, where=mask) + np.max(x, where=mask, initial=0.0)
    """)
    np.testing.assert_array_equal(ad.grad(mod.f)(np.array([1.0, 5.0, 3.0])), [1.5, 0.0, 2.5])
