"""Python structure around the NumPy calls: assignment forms, names read from the
module or a closure at call time, signatures, argument kinds and dtypes, what the
derivative returns (types, shapes, no aliasing), ``wrt`` and caching.

Gradients are checked against central finite differences in float64.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import central_difference, check_against_finite_differences, random_array

SOURCE = '''
import numpy as np


def unpack(x):
    a, b = x * 2, x + 1
    return np.sum(a * b)


def unpack_shape(X):
    n, m = X.shape
    return np.sum(X ** 2) / (n * m) + m * np.sum(X[0])


def reassign(X, w):
    h = X @ w
    h = np.tanh(h)
    h = h * h
    return np.sum(h)


def augmented(x, y):
    z = x * 1.0
    z += y
    z -= 0.5 * x
    z *= x
    z /= 1.0 + y * y
    z **= 2
    return np.sum(z)


def augmented_alias(x):
    z = x
    z *= 2.0
    return np.sum(z * x)


def fan_out(x):
    return np.sum(x * x * x + np.sin(x) * x)


def int_and_bool(x, n, axis, flag):
    s = np.sum(x ** n, axis=axis)
    return np.sum(s * (1.0 + flag)) + n * np.sum(x)


def two(x, W):
    return np.sum(np.tanh(x @ W)) + np.sum(x * x)


def unused(x, y):
    return np.sum(x * 2.0)


def square_sum(x):
    return np.sum(x ** 2)


def keywords(x, scale=2.0, *, shift=1.0):
    return np.sum(scale * np.sin(x + shift))


def product(x, W):
    return np.sum(x * W)


def plus(x, y):
    return np.sum(x + y)


def tutorial_mean(x):
    return np.mean(3 * (x + 2) ** 2)


def tutorial_product(x, y):
    return (x + y) * (x - y)


def tutorial_sum(a, b):
    return np.sum(a * b + b)


def size_one_same(x):
    return np.sin(x) * 3.0


def size_one_other(W, x):
    return W @ x
'''


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    from tests.helpers import UserModules

    return UserModules(tmp_path_factory.mktemp("structure"))(SOURCE)


def _rand(seed: int, *shapes):
    """Random float64 arrays of ``shapes`` (``None``: a Python float), values in [-2, 2]."""
    rng = np.random.default_rng(seed)
    return [random_array(rng, shape) for shape in shapes]


FD_CASES = [
    ("unpack", [(3,)], 0),
    ("unpack_shape", [(2, 3)], 0),
    ("reassign", [(4, 3), (3,)], (0, 1)),
    ("augmented", [(3,), (3,)], (0, 1)),
    ("fan_out", [(5,)], 0),
    ("fan_out", [None], 0),
]


@pytest.mark.parametrize("name, shapes, wrt", FD_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in FD_CASES])
def test_assignment_forms_match_finite_differences(m, name, shapes, wrt):
    check_against_finite_differences(getattr(m, name), _rand(len(name), *shapes), wrt)


@pytest.mark.parametrize("n, axis, flag", [(2, 0, True), (3, 1, False), (2, -1, False)])
def test_int_and_bool_arguments_take_no_gradient(m, n, axis, flag):
    (x,) = _rand(1, (2, 3))
    expected = central_difference(m.int_and_bool, [x, n, axis, flag], 0)
    np.testing.assert_allclose(ad.grad(m.int_and_bool)(x, n, axis, flag), expected, rtol=1e-6)
    # the same through a tuple wrt, with the int and bool arguments passed by keyword
    (gradient,) = ad.grad(m.int_and_bool, wrt=("x",))(x, n=n, axis=axis, flag=flag)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6)


def test_in_place_update_through_an_alias(m):
    """``z = x; z *= 2.0`` doubles the caller's array x too, as NumPy does, so the
    function is sum(4 x**2): the gradient must be 8x, or the compiler must refuse
    the statement; a silent 4x (the gradient if ``z *= 2.0`` were ``z = z * 2.0``)
    is wrong."""
    (x,) = _rand(2, (3,))
    expected = central_difference(m.augmented_alias, [x], 0)
    np.testing.assert_allclose(expected, 8.0 * x, rtol=1e-6)
    try:
        gradient = ad.grad(m.augmented_alias)
    except ad.UnsupportedSyntaxError as error:
        assert str(error).startswith(f"{m.__name__}.py:")
        return
    np.testing.assert_allclose(gradient(x.copy()), expected, rtol=1e-6)


@pytest.mark.parametrize("y, dtype", [
    (np.ones((2, 3)), np.float64), (np.ones(4, dtype=np.float32), np.float32),
    (np.arange(3), np.float64), (np.array(2.0), np.float64), (2.5, float), (2, float),
], ids=["float64", "float32", "int array", "0-d", "float", "int"])
def test_unused_argument_gets_zero_gradient(m, y, dtype):
    (x,) = _rand(0, (3,))
    gx, gy = ad.grad(m.unused, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2.0)
    alone = ad.grad(m.unused, wrt="y")(x, y)  # the output does not depend on y at all
    assert type(alone) is type(gy) and np.shape(alone) == np.shape(y) and np.all(alone == 0.0)
    assert type(gy) is (float if dtype is float else np.ndarray)
    assert np.shape(gy) == np.shape(y) and np.all(np.asarray(gy) == 0.0)
    if dtype is not float:
        assert gy.dtype == dtype


@pytest.mark.parametrize("x, kind, dtype", [
    (3, float, None), (2.5, float, None),
    (np.arange(3), np.ndarray, np.float64),
    (np.array([1.5, -2.0], dtype=np.float32), np.ndarray, np.float32),
    (np.array(1.5), np.ndarray, np.float64),
    (np.array([[1.5]]), np.ndarray, np.float64),
], ids=["int", "float", "int array", "float32", "0-d", "1x1"])
def test_gradient_has_the_argument_kind_shape_and_float_dtype(m, x, kind, dtype):
    gradient = ad.grad(m.square_sum)(x)
    assert type(gradient) is kind
    assert np.shape(gradient) == np.shape(x)
    if dtype is not None:
        assert gradient.dtype == dtype
    np.testing.assert_allclose(gradient, 2.0 * np.asarray(x, dtype=np.float64), rtol=1e-6)


@pytest.mark.parametrize("name, shapes", [
    ("size_one_same", [(1,)]), ("size_one_same", [(1, 1)]),
    ("size_one_other", [(1, 3), (3,)]), ("size_one_other", [(1, 3), (3, 1)]),
], ids=["(1,) like x", "(1,1) like x", "(1,) from W @ x", "(1,1) from W @ x"])
def test_size_one_outputs_are_scalars(m, name, shapes):
    args = _rand(7, *shapes)
    for wrt in range(len(args)):
        check_against_finite_differences(getattr(m, name), args, wrt)


# ----- names read at call time -----


def test_module_globals_are_read_at_call_time(user_module):
    module = user_module("""
        import numpy as np

        SCALE = 2.0
        WEIGHTS = np.array([1.0, 2.0, 3.0])


        def f(x):
            return np.sum(SCALE * WEIGHTS * x ** 2)
    """)
    gradient = ad.grad(module.f)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(gradient(x), 2.0 * 2.0 * module.WEIGHTS * x)
    module.SCALE, module.WEIGHTS = 5.0, np.array([-1.0, 0.5, 4.0])
    assert ad.grad(module.f) is gradient
    np.testing.assert_allclose(gradient(x), 2.0 * 5.0 * module.WEIGHTS * x)


def test_closure_variables_are_read_at_call_time(user_module):
    module = user_module("""
        import numpy as np


        def make(scale):
            offset = np.zeros(2)

            def f(x):
                return np.sum(scale * np.sin(x + offset))

            def set_state(new_scale, new_offset):
                nonlocal scale, offset
                scale, offset = new_scale, new_offset
            return f, set_state
    """)
    f, set_state = module.make(2.0)
    gradient = ad.grad(f)
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(gradient(x), 2.0 * np.cos(x))
    set_state(-3.0, np.array([1.0, 0.5]))
    np.testing.assert_allclose(gradient(x), -3.0 * np.cos(x + np.array([1.0, 0.5])))
    check_against_finite_differences(f, [x])


# ----- signature, keywords, defaults -----


@pytest.mark.parametrize("kwargs", [{}, {"scale": 3.0}, {"shift": -0.5},
                                    {"scale": 0.5, "shift": 2.0}], ids=repr)
def test_keyword_arguments_and_defaults(m, kwargs):
    (x,) = _rand(3, (4,))
    full = {"scale": 2.0, "shift": 1.0} | kwargs

    def at(x, scale, shift):
        return m.keywords(x, scale, shift=shift)

    args = [x, full["scale"], full["shift"]]
    gx, gscale, gshift = ad.grad(m.keywords, wrt=("x", "scale", "shift"))(x, **kwargs)
    np.testing.assert_allclose(gx, central_difference(at, args, 0), rtol=1e-6)
    assert type(gscale) is float and type(gshift) is float
    assert gscale == pytest.approx(central_difference(at, args, 1), rel=1e-6)
    assert gshift == pytest.approx(central_difference(at, args, 2), rel=1e-6)
    rest = {k: v for k, v in kwargs.items() if k != "scale"}
    np.testing.assert_allclose(ad.grad(m.keywords)(x, full["scale"], **rest), gx)  # positional


def test_derivative_keeps_the_signature(m):
    for derivative in (ad.grad(m.keywords), ad.value_and_grad(m.keywords, wrt=(0, "shift"))):
        assert inspect.signature(derivative) == inspect.signature(m.keywords)
        assert derivative.original is m.keywords
        assert isinstance(derivative.source, str) and "def " in derivative.source


# ----- what the derivative returns -----


def test_gradients_never_alias_inputs_or_each_other(m):
    x, W = _rand(4, (3,), (3,))
    kept = W.copy()
    gx = ad.grad(m.product)(x, W)
    assert gx is not W and not np.shares_memory(gx, W)
    np.testing.assert_array_equal(gx, W)
    gx[...] = 0.0
    np.testing.assert_array_equal(W, kept)
    gx, gy = ad.grad(m.plus, wrt=(0, 1))(x, W)
    assert gx is not gy and not np.shares_memory(gx, gy)
    assert not np.shares_memory(gx, x) and not np.shares_memory(gy, W)
    gx += 1.0
    np.testing.assert_array_equal(gy, np.ones(3))


def test_global_array_is_not_returned_as_gradient(user_module):
    module = user_module("""
        import numpy as np

        W = np.array([1.0, 2.0, 3.0])


        def f(x):
            return np.sum(x * W)
    """)
    gradient = ad.grad(module.f)(np.ones(3))
    assert gradient is not module.W and not np.shares_memory(gradient, module.W)
    gradient[0] = 99.0
    np.testing.assert_array_equal(module.W, [1.0, 2.0, 3.0])


def test_read_only_inputs_work_and_are_left_alone(m):
    x, W = _rand(5, (2, 3), (3, 4))
    kept = x.copy(), W.copy()
    for array in (x, W):
        array.setflags(write=False)
    gradients = ad.grad(m.two, wrt=(0, 1))(x, W)
    for gradient, array, original in zip(gradients, (x, W), kept):
        np.testing.assert_array_equal(array, original)
        assert gradient.flags.writeable and not np.shares_memory(gradient, array)
    check_against_finite_differences(m.two, [x, W], (0, 1))


def test_value_and_grad(m):
    x, W = _rand(6, (2, 3), (3, 4))
    value, (gx, gw) = ad.value_and_grad(m.two, wrt=(0, 1))(x, W)
    assert value == pytest.approx(m.two(x, W), rel=1e-12)
    expected = ad.grad(m.two, wrt=(0, 1))(x, W)
    np.testing.assert_allclose(gx, expected[0])
    np.testing.assert_allclose(gw, expected[1])
    value, gradient = ad.value_and_grad(m.tutorial_product)(2.0, 3.0)
    assert value == pytest.approx(-5.0) and gradient == pytest.approx(4.0)


@pytest.mark.parametrize("wrt, positions", [
    (0, 0), ("x", 0), (1, 1), ("W", 1), (-1, 1), (-2, 0),
    ((0, "W"), (0, 1)), (("W", "x"), (1, 0)), ((-1, 0), (1, 0)), ([0, 1], (0, 1)),
], ids=repr)
def test_wrt_forms(m, wrt, positions):
    x, W = _rand(8, (2, 3), (3, 4))
    ours = ad.grad(m.two, wrt=wrt)(x, W)
    several = isinstance(positions, tuple)
    assert isinstance(ours, tuple) == several
    for position, gradient in zip(positions if several else (positions,),
                                  ours if several else (ours,)):
        expected = central_difference(m.two, [x, W], position)
        np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-7)


def test_derivatives_are_cached(m):
    assert ad.grad(m.two) is ad.grad(m.two)
    assert ad.grad(m.two, wrt=(0, "W")) is ad.grad(m.two, wrt=(0, "W"))
    assert ad.value_and_grad(m.two) is ad.value_and_grad(m.two)
    assert ad.grad(m.two, wrt=1) is not ad.grad(m.two)
    assert ad.value_and_grad(m.two) is not ad.grad(m.two)
    assert ad.grad(m.two, optimize=False) is not ad.grad(m.two)


@pytest.mark.parametrize("first", [1, (1,)], ids=["int first", "tuple first"])
def test_wrt_index_and_one_tuple_are_cached_apart(user_module, first):
    module = user_module("import numpy as np\n\n\ndef f(x, y):\n    return np.sum(x * y)\n")
    x, y = _rand(10, (2,), (2,))
    ad.grad(module.f, wrt=first)  # whichever is compiled first must not answer for the other
    assert ad.grad(module.f, wrt=1) is not ad.grad(module.f, wrt=(1,))
    assert isinstance(ad.grad(module.f, wrt=(1,))(x, y), tuple)
    assert isinstance(ad.grad(module.f, wrt=1)(x, y), np.ndarray)


# ----- the classic tutorial results -----


def test_tutorial_results(m):
    np.testing.assert_allclose(ad.grad(m.tutorial_mean)(np.ones((2, 2))), np.full((2, 2), 4.5))
    gx, gy = ad.grad(m.tutorial_product, wrt=(0, 1))(2.0, 3.0)
    assert (gx, gy) == (4.0, -6.0) and type(gx) is float and type(gy) is float
    ga, gb = ad.grad(m.tutorial_sum, wrt=(0, 1))(np.array([3.0, 4.0]), np.array([5.0, 6.0]))
    np.testing.assert_array_equal(ga, [5.0, 6.0])
    np.testing.assert_array_equal(gb, [4.0, 5.0])


def test_optimize_false_gives_the_same_gradients(m):
    x, W = _rand(9, (2, 3), (3, 4))
    fast = ad.grad(m.two, wrt=(0, 1))(x, W)
    plain = ad.grad(m.two, wrt=(0, 1), optimize=False)(x, W)
    for a, b in zip(fast, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12)

