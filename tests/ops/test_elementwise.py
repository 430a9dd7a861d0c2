"""Every elementwise op against central finite differences over a grid of shapes.

Adding an op means adding one line to a table. Functions are written to a real
source file (the compiler reads source), one per table entry.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, random_array
from tests.ops.table import check_routes, shared_module

# (expression in x, domain of x, also valid on Python floats through math)
UNARY = [
    ("-x", "real"), ("+x", "real"), ("abs(x)", "real"), ("np.abs(x)", "real"),
    ("np.sin(x)", "real"), ("np.cos(x)", "real"), ("np.tan(x)", "unit"),
    ("np.arcsin(x)", "unit"), ("np.arccos(x)", "unit"), ("np.arctan(x)", "real"),
    ("np.sinh(x)", "real"), ("np.cosh(x)", "real"), ("np.tanh(x)", "real"),
    ("np.exp(x)", "real"), ("np.expm1(x)", "real"), ("np.log(x)", "positive"),
    ("np.log1p(x)", "positive"), ("np.log2(x)", "positive"), ("np.log10(x)", "positive"),
    ("np.sqrt(x)", "positive"), ("np.square(x)", "real"), ("x ** 3", "real"),
    ("x ** 2.5", "positive"), ("x ** -1", "positive"), ("2.0 ** x", "real"),
    ("1.0 / x", "positive"), ("np.power(x, 3)", "real"), ("np.clip(x, -0.5, 0.7)", "real"),
    ("x.clip(-0.5, None)", "real"), ("np.maximum(x, 0.3)", "real"),
    ("np.minimum(0.3, x)", "real"), ("np.where(x > 0, x * x, -x)", "real"),
    ("np.sign(x) * x", "real"), ("x % 0.7", "positive"), ("x.astype(float) * x", "real"),
    ("np.where(x > 0, 1.0 / x, x * x)", "real"),
    ("np.round(x, 1) * x", "real"), ("np.around(x, decimals=2) * x", "real"),
    ("x.round(2) * x + np.rint(x)", "real"),
    ("np.divmod(x * 5.0, 0.7)[1]", "real"), ("divmod(x, 0.3)[1] * np.divmod(x, 0.3)[0]", "real"),
    ("np.where(np.isinf(1.0 / x) | np.isposinf(x) | np.isneginf(x) | np.signbit(x), x, x * x)",
     "real"),
]
MATH_TWINS = [
    ("math.sin(x)", "real"), ("math.cos(x)", "real"), ("math.tan(x)", "unit"),
    ("math.asin(x)", "unit"), ("math.acos(x)", "unit"), ("math.atan(x)", "real"),
    ("math.sinh(x)", "real"), ("math.cosh(x)", "real"), ("math.tanh(x)", "real"),
    ("math.exp(x)", "real"), ("math.expm1(x)", "real"), ("math.log1p(x)", "positive"),
    ("math.log(x)", "positive"), ("math.log2(x)", "positive"), ("math.log10(x)", "positive"),
    ("math.sqrt(x)", "positive"),
    ("math.pow(x, 3)", "real"), ("math.atan2(x, 1.5)", "real"),
    ("math.hypot(x, 1.5)", "real"), ("max(x, 0.3) * min(x, 0.7)", "real"),
    ("round(x, 2) * x + round(x)", "real"), ("max(x, 0.3, x * x) * min([x, 0.7, -x])", "real"),
    ("divmod(x * 5.0, 0.7)[1] * x", "real"),
]
# (expression in x and y, domain of x, domain of y)
BINARY = [
    ("x + y", "real", "real"), ("x - y", "real", "real"), ("x * y", "real", "real"),
    ("x / y", "real", "positive"), ("x ** y", "positive", "real"),
    ("np.power(x, y)", "positive", "real"), ("np.add(x, y)", "real", "real"),
    ("np.subtract(x, y)", "real", "real"), ("np.multiply(x, y)", "real", "real"),
    ("np.divide(x, y)", "real", "positive"), ("np.maximum(x, y)", "real", "real"),
    ("np.minimum(x, y)", "real", "real"), ("np.arctan2(x, y)", "real", "real"),
    ("np.hypot(x, y)", "real", "real"), ("np.where(x > y, x * y, x - y)", "real", "real"),
    ("np.clip(x, y, y + 1.0)", "real", "real"), ("x % y", "positive", "positive"),
    ("(x + y) * (x - y) / (x * x + 1.0)", "real", "real"),
    ("np.logaddexp(x, y)", "real", "real"),
    ("np.float_power(x, y)", "positive", "real"),
    ("np.divmod(x, y)[1] * np.divmod(x, y)[0]", "positive", "positive"),
    ("divmod(x * 3.0, y)[1]", "real", "positive"),
]
# Checked over the same shapes, and on every route besides: jit=True, SymPy's derivative
# and jit="numba". (expression in x, domain of x) and (expression in x and y, domains).
UNARY_ROUTED = [
    ("np.arcsinh(x)", "real"), ("np.arccosh(x + 1.5)", "positive"), ("np.arctanh(x)", "unit"),
    ("np.fabs(x)", "real"), ("np.reciprocal(x)", "positive"), ("np.reciprocal(-x)", "positive"),
    ("np.cbrt(x)", "real"), ("np.exp2(x)", "real"), ("np.deg2rad(x)", "real"),
    ("np.radians(x) * x", "real"), ("np.rad2deg(x)", "real"), ("np.degrees(x) * x", "real"),
    ("np.heaviside(x, 0.5) * x", "real"), ("np.fmax(x, 0.3)", "real"),
    ("np.fmin(0.3, x)", "real"), ("np.copysign(x, -1.0)", "real"),
    ("np.copysign(x, x - 0.05)", "real"), ("np.copysign(1.5 - x, x)", "real"),
    ("np.sinc(x)", "real"), ("np.sinc(x - x)", "real"), ("np.sinc(x * 1e-3)", "real"),
    ("np.nan_to_num(x)", "real"), ("np.nan_to_num(np.log(x), neginf=-5.0) * x", "positive"),
    ("np.fix(x * 3.0) * x", "real"), ("np.ldexp(x, 3)", "real"), ("np.ldexp(x * x, -2)", "real"),
    ("np.float_power(x, 3)", "real"), ("np.float_power(x, 0.5)", "positive"),
]
MATH_TWINS_ROUTED = [
    ("math.asinh(x)", "real"), ("math.acosh(x + 1.5)", "positive"), ("math.atanh(x)", "unit"),
    ("math.fabs(x)", "real"), ("math.fabs(x) * x", "real"), ("math.radians(x) * x", "real"),
    ("math.degrees(x) * x", "real"), ("math.copysign(x, x - 0.05)", "real"),
    ("math.erf(x)", "real"), ("math.erfc(x) * x", "real"), ("math.fmod(x * 5.0, -0.7)", "real"),
    # Python 3.11's, where it has them
    *[(f"math.{name}(x)", "real") for name in ("cbrt", "exp2") if hasattr(math, name)],
    ("math.ldexp(x, 3) * x", "real"),
]
BINARY_ROUTED = [
    ("np.logaddexp2(x, y)", "real", "real"), ("np.fmax(x, y)", "real", "real"),
    ("np.fmin(x, y)", "real", "real"), ("np.copysign(x, y) * y", "real", "real"),
    ("np.copysign(x * y, y)", "real", "real"), ("np.heaviside(x, y) * x * y", "real", "real"),
    ("np.fmod(x, y)", "real", "positive"), ("np.fmod(x * 3.0, -y) * y", "real", "positive"),
    ("np.ldexp(x, 2) * y", "real", "real"),
]
ROUTES = ("jit", "sympy", "numba")
# jit="numba" refuses (with the user's line) a derivative taking a Python float or a 0-d
# array, for every op alike (np.sin and np.arcsin too): scalar cases leave that route out.
SCALAR_ROUTES = ("jit", "sympy")


def _routes(*shapes):
    return ROUTES if all(shape for shape in shapes) else SCALAR_ROUTES
SHAPES = [None, (), (4,), (2, 3)]
PAIRS = [(None, None), ((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)),
         (None, (2, 3)), ((2, 3), ()), ((4, 1, 3), (2, 1))]


# One function per expression, ``loss_{index}``: unary ones, then their math twins, then
# binary ones (the op tables' module, shared with test_registry.py).
SIGNATURES = tuple([(expr, 1) for expr, *_ in UNARY + MATH_TWINS]
                   + [(expr, 2) for expr, *_ in BINARY]
                   + [(expr, 1) for expr, *_ in UNARY_ROUTED + MATH_TWINS_ROUTED]
                   + [(expr, 2) for expr, *_ in BINARY_ROUTED])
ROUTED_START = len(UNARY) + len(MATH_TWINS) + len(BINARY)


@pytest.fixture(scope="module")
def functions():
    return shared_module(SIGNATURES)


def _weights(rng, *shapes):
    shape = np.broadcast_shapes(*(s or () for s in shapes))
    return random_array(rng, shape) if shape else float(rng.uniform(0.5, 1.5))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("index", range(len(UNARY)), ids=[e for e, _ in UNARY])
def test_unary(functions, index, shape):
    expr, domain = UNARY[index]
    if shape is None and "x." in expr:
        shape = ()  # a method call needs an array, as in NumPy itself
    rng = np.random.default_rng(index)
    x = random_array(rng, shape, domain)
    f = getattr(functions, f"loss_{index}")
    check_against_finite_differences(f, [x, _weights(rng, shape)], second_order=True)


@pytest.mark.parametrize("index", range(len(MATH_TWINS)), ids=[e for e, _ in MATH_TWINS])
def test_math_twin_on_python_floats(functions, index):
    _, domain = MATH_TWINS[index]
    rng = np.random.default_rng(100 + index)
    f = getattr(functions, f"loss_{len(UNARY) + index}")
    gradient = check_against_finite_differences(f, [random_array(rng, None, domain), 1.3],
                                                second_order=True)[0]
    assert type(gradient) is float


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("index", range(len(BINARY)), ids=[e for e, *_ in BINARY])
def test_binary_with_broadcasting(functions, index, shapes):
    _, x_domain, y_domain = BINARY[index]
    rng = np.random.default_rng(200 + index)
    x = random_array(rng, shapes[0], x_domain)
    y = random_array(rng, shapes[1], y_domain)
    f = getattr(functions, f"loss_{len(UNARY) + len(MATH_TWINS) + index}")
    check_against_finite_differences(f, [x, y, _weights(rng, *shapes)], wrt=(0, 1),
                                     second_order=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("index", range(len(UNARY_ROUTED)), ids=[e for e, _ in UNARY_ROUTED])
def test_unary_on_every_route(functions, index, shape):
    _, domain = UNARY_ROUTED[index]
    rng = np.random.default_rng(300 + index)
    args = [random_array(rng, shape, domain), _weights(rng, shape)]
    f = getattr(functions, f"loss_{ROUTED_START + index}")
    ours = check_against_finite_differences(f, args, second_order=True)
    check_routes(f, args, 0, ours, _routes(shape))


@pytest.mark.parametrize("index", range(len(MATH_TWINS_ROUTED)),
                         ids=[e for e, _ in MATH_TWINS_ROUTED])
def test_math_twin_on_every_route(functions, index):
    _, domain = MATH_TWINS_ROUTED[index]
    rng = np.random.default_rng(400 + index)
    args = [random_array(rng, None, domain), 1.3]
    f = getattr(functions, f"loss_{ROUTED_START + len(UNARY_ROUTED) + index}")
    ours = check_against_finite_differences(f, args, second_order=True)
    assert type(ours[0]) is float
    check_routes(f, args, 0, ours, SCALAR_ROUTES)


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("index", range(len(BINARY_ROUTED)), ids=[e for e, *_ in BINARY_ROUTED])
def test_binary_on_every_route(functions, index, shapes):
    _, x_domain, y_domain = BINARY_ROUTED[index]
    rng = np.random.default_rng(500 + index)
    args = [random_array(rng, shapes[0], x_domain), random_array(rng, shapes[1], y_domain),
            _weights(rng, *shapes)]
    f = getattr(functions, f"loss_{ROUTED_START + len(UNARY_ROUTED) + len(MATH_TWINS_ROUTED) + index}")
    ours = check_against_finite_differences(f, args, wrt=(0, 1), second_order=True)
    check_routes(f, args, (0, 1), ours, _routes(*shapes))


def test_maximum_and_minimum_split_ties_evenly(user_module):
    module = user_module("""
        import numpy as np
        def f(x, y):
            return np.sum(np.maximum(x, y) + 2.0 * np.minimum(x, y))
    """)
    x = np.array([1.0, 2.0, 3.0])
    dx, dy = ad.grad(module.f, wrt=(0, 1))(x, np.array([1.0, 0.0, 5.0]))
    np.testing.assert_array_equal(dx, [1.5, 1.0, 2.0])
    np.testing.assert_array_equal(dy, [1.5, 2.0, 1.0])


def test_abs_and_sign_at_zero_give_zero_gradient(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.abs(x) + np.sign(x))
    """)
    np.testing.assert_array_equal(ad.grad(module.f)(np.array([0.0, -2.0, 3.0])), [0.0, -1.0, 1.0])


def test_fabs_is_a_float_and_cbrt_is_real_for_negative_values(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.fabs(x) * np.cbrt(x))
    """)
    x = np.array([-8.0, 0.5, 27.0])
    expected = np.sign(x) * np.cbrt(x) + np.abs(x) / (3 * np.cbrt(x) ** 2)
    np.testing.assert_allclose(ad.grad(module.f)(x), expected, rtol=1e-12)
    assert module.f(np.array([-8.0])) == -16.0
    np.testing.assert_array_equal(np.fabs(np.array([-3, 2])), [3.0, 2.0])
    np.testing.assert_allclose(ad.grad(module.f)(np.array([-1.0])), [4 / 3], rtol=1e-15)


def test_fmax_and_fmin_pass_the_gradient_to_the_number_a_nan_leaves_and_split_ties(user_module):
    module = user_module("""
        import numpy as np
        def f(x, y):
            return np.sum(np.fmax(x, y) + 2.0 * np.fmin(x, y))
    """)
    nan = np.nan
    x = np.array([1.0, 2.0, 3.0, nan, 4.0, nan])
    y = np.array([1.0, 0.0, 5.0, 2.0, nan, nan])
    dx, dy = ad.grad(module.f, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dx, [1.5, 1.0, 2.0, 0.0, 3.0, 3.0])
    np.testing.assert_array_equal(dy, [1.5, 2.0, 1.0, 3.0, 0.0, 0.0])
    tx, ty = np.ones(6), np.full(6, 10.0)
    np.testing.assert_array_equal(ad.jvp(module.f, wrt=(0, 1))(x, y, (tx, ty))[1],
                                  np.sum(dx * tx + dy * ty))


def test_copysign_passes_no_gradient_to_the_sign_it_copies(user_module):
    module = user_module("""
        import numpy as np
        def f(x, y):
            return np.sum(np.copysign(x, y))
    """)
    x, y = np.array([2.0, -3.0, 0.5, 0.0]), np.array([-1.0, -1.0, 4.0, 1.0])
    dx, dy = ad.grad(module.f, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dx, [-1.0, 1.0, 1.0, 0.0])  # abs's sign(0) = 0 at 0
    np.testing.assert_array_equal(dy, 0.0)


def test_sinc_has_exact_derivatives_at_zero_on_every_route(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.sinc(x))
    """)
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(ad.grad(module.f)(x), [0.0, -4 / np.pi], rtol=1e-14)
    np.testing.assert_allclose(ad.hvp(module.f)(x, np.ones(2)),
                               [-np.pi ** 2 / 3, 2 * (8 / np.pi - np.pi)], rtol=1e-12)
    # near 0 the series (numba's form switches to the quotient at 0.0125)
    x = np.array([0.0, 0.5, -1e-5, 0.0125, -0.3, 2.0])
    far = x[3:]
    expected = [0.0, -4 / np.pi, np.pi ** 2 / 3 * 1e-5 - np.pi ** 4 / 30 * 1e-15,
                *((np.cos(np.pi * far) - np.sinc(far)) / far)]
    np.testing.assert_allclose(ad.grad(module.f)(x), expected, rtol=1e-12)
    for jit in (True, "numba"):
        np.testing.assert_allclose(ad.grad(module.f, jit=jit)(x), expected, rtol=1e-12)


def test_nan_to_num_passes_the_gradient_where_x_is_finite_only(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.nan_to_num(x * x, posinf=7.0) * 2.0)
        def copies_not(x):
            return np.sum(np.nan_to_num(x, copy=False))
    """)
    x = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    np.testing.assert_array_equal(module.f(x), 2 * (2.25 + 0 + 7 + 7 + 4))
    np.testing.assert_array_equal(ad.grad(module.f)(x), [6.0, 0.0, 0.0, 0.0, -8.0])
    np.testing.assert_array_equal(ad.jvp(module.f)(x, np.ones(5))[1], -2.0)
    with pytest.raises(ad.AutodiffError, match="copy=False writes into x"):
        ad.grad(module.copies_not)(x)
