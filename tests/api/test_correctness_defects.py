"""Defects a new user meets first: a derivative specialised with ``jit=True`` that runs
the user's code twice when it raises, and ``math`` functions that give nan where Python
raises."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences


@pytest.fixture
def modules(tmp_path):
    return UserModules(tmp_path)


# ----- jit=True runs the code once -----


def test_jit_runs_code_that_prints_and_raises_once(modules, capsys):
    module = modules("""\
        import numpy as np

        def f(x):
            print("running")
            if np.sum(x) < 0:
                raise ValueError("negative")
            return np.sum(x ** 2)
    """)
    gradient = ad.grad(module.f, jit=True)
    np.testing.assert_allclose(gradient(np.ones(2)), [2.0, 2.0])
    assert capsys.readouterr().out == "running\n"
    with pytest.raises(ValueError, match="negative"):
        gradient(-np.ones(2))
    assert capsys.readouterr().out == "running\n"  # once, not again by the general code
    with pytest.raises(ValueError, match="negative"):  # and once more at the next call
        gradient(-np.ones(2))
    assert capsys.readouterr().out == "running\n"


def test_jit_code_with_effects_keeps_numpys_functions_of_a_float(modules, capsys):
    # specialised code would write math.exp(s), which raises for s = 1000.0 where the
    # general code gives inf: with a print, which must not run twice, it keeps np.exp
    module = modules("""\
        import numpy as np

        def f(x, s):
            print("running")
            return np.sum(x) * np.exp(s)
    """)
    gradient = ad.grad(module.f, jit=True)
    np.testing.assert_allclose(gradient(np.ones(2), 1.0), [math.e, math.e])
    assert "np.exp(s)" in gradient.source_for(np.ones(2), 1.0)
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.all(np.isinf(gradient(np.ones(2), 1000.0)))
        assert np.all(np.isinf(ad.grad(module.f)(np.ones(2), 1000.0)))  # as the general
    assert capsys.readouterr().out == "running\nrunning\n"


def test_jit_code_without_effects_still_answers_from_the_general_code(modules):
    module = modules("""\
        import numpy as np

        def f(x, s):
            return np.sum(x) * np.exp(s)
    """)
    gradient = ad.grad(module.f, jit=True)
    assert "math.exp(s)" in gradient.source_for(np.ones(2), 1.0)  # Python floats, fast
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.all(np.isinf(gradient(np.ones(2), 1000.0)))


def test_jit_with_effects_succeeds_and_matches_finite_differences(modules, capsys):
    module = modules("""\
        import numpy as np

        def f(x, s):
            print("step", s)
            return np.sum(np.tanh(x) * np.exp(s))
    """)
    x = np.array([0.3, -0.7])
    expected = ad.numeric_grad(module.f, x, 0.5)
    capsys.readouterr()
    np.testing.assert_allclose(ad.grad(module.f, jit=True)(x, 0.5), expected, rtol=1e-7)
    assert capsys.readouterr().out == "step 0.5\n"


# ----- math keeps Python's semantics -----

DOMAIN_ERRORS = [
    ("math.sqrt(a)", -1.0, ValueError), ("math.log(a)", 0.0, ValueError),
    ("math.log(a)", -1.0, ValueError), ("math.acos(a)", 2.0, ValueError),
    ("math.asin(a)", 2.0, ValueError), ("math.log10(a)", -1.0, ValueError),
    ("math.log2(a)", -1.0, ValueError), ("math.log1p(a)", -1.0, ValueError),
    ("math.pow(a, 0.5)", -1.0, ValueError), ("math.exp(a)", 1000.0, OverflowError),
    ("math.pow(a, 2.0)", 1e300, OverflowError), ("math.cosh(a)", 1000.0, OverflowError),
    ("math.sin(a)", math.inf, ValueError), ("math.atanh(a)", 1.0, ValueError),
]


@pytest.mark.parametrize(("expression", "value", "error"), DOMAIN_ERRORS,
                         ids=[f"{e}-{v}" for e, v, _ in DOMAIN_ERRORS])
def test_a_math_domain_error_is_raised_as_python_raises_it(modules, expression, value,
                                                            error):
    module = modules(f"""\
        import math

        def f(a):
            b = {expression}
            return b * 3.0
    """)
    with pytest.raises(error):  # Python's own
        module.f(value)
    message = "math domain error" if error is ValueError else "math range error"
    transforms = [ad.grad(module.f), ad.grad(module.f, jit=True), ad.value_and_grad(module.f),
                  lambda a: ad.jvp(module.f)(a, 1.0), ad.grad(ad.grad(module.f))]
    for transform in transforms:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no nan with a RuntimeWarning
            with pytest.raises(error, match=rf"\.py:4: {error.__name__} while computing "
                                            rf"this line: {message}"):
                transform(value)


def test_math_gradients_in_their_domain(modules):
    module = modules("""\
        import math

        def f(a):
            return (math.sqrt(a) * math.log(a) + math.acos(a / 4.0) + math.log1p(a)
                    + math.pow(a, 1.5) + math.exp(a) * math.log10(a) + math.log2(a))
    """)
    check_against_finite_differences(module.f, [1.3], second_order=True)
    np.testing.assert_allclose(ad.grad(module.f, jit=True)(1.3), ad.grad(module.f)(1.3))


def test_generated_code_calls_math_as_the_user_wrote_it(modules):
    module = modules("""\
        import math

        def f(a):
            return math.log(a) * 3.0
    """)
    source = ad.grad(module.f).source
    # the value nothing reads is computed for the error it raises, as a statement
    assert "\n        math.log(a)\n" in source
    assert "np.log" not in source


def test_math_of_an_array_is_pythons_type_error(modules):
    module = modules("""\
        import math
        import numpy as np

        def f(x):
            return math.sqrt(x) + np.sum(x)
    """)
    with pytest.raises(TypeError):
        module.f(np.ones(3))
    with pytest.raises(TypeError):
        ad.grad(module.f)(np.ones(3))


def test_numpys_functions_keep_numpys_semantics(modules):
    module = modules("""\
        import numpy as np

        def f(a):
            return np.sqrt(a) * 2.0
    """)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(ad.grad(module.f)(-1.0))


# ----- zeros that stay zero: NaN-skipping reductions, masks, maximum, clip, where -----

NAN_SKIPPING = """\
import numpy as np

def nansum(x, y):
    return np.nansum((x - y) ** 2)

def nanmean(x, y):
    return np.nanmean((x - y) ** 2)

def nanmax(x, y):
    return np.nanmax((x - y) ** 3)

def nanmin(x, y):
    return np.nanmin((x - y) ** 3)

def nanvar(x, y):
    return np.nanvar((x - y) ** 2)

def nanstd(x, y):
    return np.nanstd((x - y) ** 2)

def nanprod(x, y):
    return np.nanprod((x - y) ** 2)

def nancumsum(x, y):
    return np.sum(np.nancumsum((x - y) ** 2) * np.array([1.0, 2.0, 3.0]))

def nancumprod(x, y):
    return np.sum(np.nancumprod((x - y) ** 2))

def nanmedian(x, y):
    return np.nanmedian((x - y) ** 3)

def nanquantile(x, y):
    return np.nanquantile((x - y) ** 3, 0.3)

def nanpercentile(x, y):
    return np.nanpercentile((x - y) ** 3, 30.0)

def mask(x, y):
    return np.sum(((x - y) ** 2)[~np.isnan(y)])

def mask_of_two_tests(x, y):
    r = (x - y) ** 2
    return np.sum(r[np.isfinite(y) & (x > 0.0)])

def where(x, y):
    return np.sum(np.where(np.isnan(y), 0.0, (x - y) ** 2))

def nansum_of_a_quotient(x, y):
    return np.nansum(x / (y + 1.0) + np.exp(y) * x)
"""

# the masked operand is infinite where it is not taken (np.log(0.0) = -inf)
MASKED_INFINITY = """\
import numpy as np

def maximum(x, y):
    return np.sum(np.maximum(np.log(y) * x, -5.0))

def minimum(x, y):
    return np.sum(np.minimum(-np.log(y) * x, 5.0))

def fmax(x, y):
    return np.sum(np.fmax(np.log(y) * x, -5.0))

def fmin(x, y):
    return np.sum(np.fmin(-np.log(y) * x, 5.0))

def clip(x, y):
    return np.sum(np.clip(np.log(y) * x, -5.0, 5.0))

def where(x, y):
    return np.sum(np.where(y > 0.0, np.log(y) * x, 0.0))

def relu_of_log(x, y):
    return np.sum(np.maximum(np.log(y * x), 0.0) ** 2)
"""

X = np.array([1.0, 1.5, 2.7])
WITH_NAN = np.array([0.0, np.nan, 1.0])
WITH_ZERO = np.array([0.5, 0.0, 2.0])


def _functions(source: str) -> list[str]:
    return [line[4:line.index("(")] for line in source.splitlines() if line.startswith("def ")]


@pytest.fixture(scope="module")
def zero_keeping(tmp_path_factory):
    modules = UserModules(tmp_path_factory.mktemp("zeros"))
    return modules(NAN_SKIPPING), modules(MASKED_INFINITY)


def _check(f, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the function's own log(0), nan
        ours = check_against_finite_differences(f, [X.copy(), y])[0]
        assert np.all(np.isfinite(ours)), ours
        assert ours[1] == 0.0  # the skipped entry: the function does not depend on it
        np.testing.assert_allclose(ad.grad(f, jit=True)(X.copy(), y), ours, rtol=1e-12)


@pytest.mark.parametrize("name", _functions(NAN_SKIPPING))
def test_a_nan_skipped_entry_has_a_zero_gradient(zero_keeping, name):
    _check(getattr(zero_keeping[0], name), WITH_NAN)


@pytest.mark.parametrize("name", _functions(MASKED_INFINITY))
def test_an_infinite_entry_not_taken_has_a_zero_gradient(zero_keeping, name):
    _check(getattr(zero_keeping[1], name), WITH_ZERO)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "mask", "where", "nanvar"])
def test_second_order_through_kept_zeros(zero_keeping, name):
    f = getattr(zero_keeping[0], name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        hessian = ad.hessian(f)(X.copy(), WITH_NAN)
    assert np.all(np.isfinite(hessian)), hessian
    step = 1e-5
    for i in range(3):
        e = np.zeros(3)
        e[i] = step
        column = (ad.grad(f)(X + e, WITH_NAN) - ad.grad(f)(X - e, WITH_NAN)) / (2 * step)
        np.testing.assert_allclose(hessian[:, i], column, rtol=1e-6, atol=1e-6)


def test_the_issues_example(modules):
    module = modules("""\
        import numpy as np

        def loss(x, y):
            r = x - y
            return np.nansum(r ** 2)
    """)
    gradient = ad.grad(module.loss)(np.array([1.0, -1.0, 2.0]), np.array([0.0, np.nan, 1.0]))
    np.testing.assert_array_equal(gradient, [2.0, 0.0, 2.0])


def test_an_index_that_is_no_mask_keeps_plain_products(modules):
    module = modules("""\
        import numpy as np

        def f(x, i):
            return np.sum((x * x)[i])
    """)
    np.testing.assert_allclose(ad.grad(module.f)(np.ones(3), np.array([0, 2])), [2, 0, 2])
    assert "keep_zeros" not in ad.grad(module.f).source
