"""Every elementwise op against central finite differences over a grid of shapes.

Adding an op means adding one line to a table. Functions are written to a real
source file (the compiler reads source), one per table entry.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, random_array
from tests.ops.table import shared_module

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
]
MATH_TWINS = [
    ("math.sin(x)", "real"), ("math.cos(x)", "real"), ("math.tan(x)", "unit"),
    ("math.asin(x)", "unit"), ("math.acos(x)", "unit"), ("math.atan(x)", "real"),
    ("math.sinh(x)", "real"), ("math.cosh(x)", "real"), ("math.tanh(x)", "real"),
    ("math.exp(x)", "real"), ("math.expm1(x)", "real"), ("math.log1p(x)", "positive"),
    ("math.log(x)", "positive"), ("math.log2(x)", "positive"), ("math.log10(x)", "positive"),
    ("math.sqrt(x)", "positive"),
    ("math.fabs(x)", "real"), ("math.pow(x, 3)", "real"), ("math.atan2(x, 1.5)", "real"),
    ("math.hypot(x, 1.5)", "real"), ("max(x, 0.3) * min(x, 0.7)", "real"),
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
]
SHAPES = [None, (), (4,), (2, 3)]
PAIRS = [(None, None), ((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)),
         (None, (2, 3)), ((2, 3), ()), ((4, 1, 3), (2, 1))]


# One function per expression, ``loss_{index}``: unary ones, then their math twins, then
# binary ones (the op tables' module, shared with test_registry.py).
SIGNATURES = tuple([(expr, 1) for expr, *_ in UNARY + MATH_TWINS]
                   + [(expr, 2) for expr, *_ in BINARY])


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
