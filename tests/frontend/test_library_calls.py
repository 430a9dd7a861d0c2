"""Functions autodiff has no rule for, and code that is not the user's own.

Such a function is called as it is: its result is a constant of the
derivative while no argument carries a gradient; when one does, the error
names the user's call and suggests a rule. A library's Python source is never
compiled.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences

scipy_special = pytest.importorskip("scipy.special")


@pytest.fixture
def user(tmp_path):
    return UserModules(tmp_path)("""
        import numpy as np
        import scipy.signal
        import scipy.special
        import autodiff as ad


        def lse(x):
            return np.sum(scipy.special.dawsn(x))


        def attention(x):
            T = x.shape[0]
            mask = np.tril(np.ones((T, T)))
            return np.sum(np.tanh(mask @ x))


        def windowed(x):
            window = scipy.signal.get_window("hann", x.shape[0])
            return np.sum(window * x ** 2)


        def cut(x):
            with ad.no_grad():
                scale = scipy.special.logsumexp(x)
            return np.sum(x * scale)


        def noisy(x):
            a = np.random.rand(3)
            b = np.random.rand(3)
            return np.sum(x * (a - b))


        def conv(x, k):
            return np.sum(scipy.signal.detrend(x) ** 2) * k[0]


        def solved(A, b):
            return np.sum(np.linalg.solve(A, b) ** 2)


        def gradient_norm(A, b):
            return np.sum(ad.grad(solved, wrt=(0, 1))(A, b)[0] ** 2)


        def built_from_a_value(x):
            scale = 2.0 * x
            return ad.grad(np.sin, wrt=scale)(x)
    """)


X = np.array([0.3, -1.2, 0.8, 2.0])


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_a_gradient_into_a_function_without_a_rule_is_refused_at_the_call(user, transform):
    with pytest.raises(ad.UnknownFunctionError) as raised:  # while compiling
        ad.grad(user.lse) if transform == "grad" else ad.jvp(user.lse)
    error = raised.value
    assert error.filename == user.__file__ and error.lineno == 9
    assert "'scipy.special.dawsn' is not a function autodiff knows" in error.message
    assert "ad.register_gradient(scipy.special.dawsn, vjp)" in str(error)


def test_a_rule_makes_the_same_call_differentiable(user):
    def dawsn_vjp(g, ans, x):  # the Dawson integral: D'(x) = 1 - 2 x D(x)
        return g * (1.0 - 2.0 * x * ans)

    with ad.register_gradient(scipy_special.dawsn, dawsn_vjp):
        check_against_finite_differences(user.lse, [X], forward=False)


def test_a_library_function_is_never_compiled(user):
    # scipy.signal.detrend is Python code in SciPy: the error names the user's line,
    # not a line of SciPy's source
    with pytest.raises(ad.UnknownFunctionError) as raised:
        ad.grad(user.conv)(X, np.ones(2))
    assert raised.value.filename == user.__file__
    assert "scipy.signal.detrend" in raised.value.message
    source = ad.grad(user.windowed).source
    assert "scipy.signal.get_window(" in source


@pytest.mark.parametrize("jit", [False, True])
def test_functions_of_constants_just_run(user, jit):
    mask = np.tril(np.ones((4, 4)))
    expected = mask.T @ (1.0 - np.tanh(mask @ X) ** 2)
    assert np.allclose(ad.grad(user.attention, jit=jit)(X), expected)
    check_against_finite_differences(user.attention, [X])
    check_against_finite_differences(user.windowed, [X])


def test_no_grad_makes_any_function_a_constant(user):
    expected = np.full(4, scipy_special.logsumexp(X))
    assert np.allclose(ad.grad(user.cut)(X), expected)


def test_calls_are_never_merged_or_run_while_compiling(user):
    np.random.seed(0)
    a, b = np.random.rand(3), np.random.rand(3)
    derivative = ad.grad(user.noisy, jit=True)
    np.random.seed(0)
    got = derivative(np.ones(3))  # compiling first: it must draw nothing itself
    assert np.allclose(got, a - b)
    assert not np.allclose(got, 0.0)


def test_a_derivative_built_inside_the_differentiated_function(user):
    A = np.array([[2.0, 0.3], [0.1, 1.5]])
    b = np.array([1.0, -2.0])
    check_against_finite_differences(user.gradient_norm, [A, b], wrt=(0, 1))
    with pytest.raises(ad.UnknownFunctionError, match="known only when the code runs"):
        ad.grad(user.built_from_a_value)


# ----- methods of a library's objects -----

RNG_CODE = """
    import numpy as np

    RNG = np.random.default_rng(0)


    def reparameterised(mu, log_sigma, seed):
        rng = np.random.default_rng(seed)
        eps = rng.normal(size=mu.shape)
        z = mu + np.exp(log_sigma) * eps
        return np.sum(z ** 2) + 0.1 * np.sum(rng.uniform(0.0, 1.0, size=3))


    def dropout(x):
        keep = RNG.random(x.shape) > 0.5
        return np.sum(np.tanh(x) * keep)


    def noise_of_x(mu):
        return np.sum(np.random.default_rng(0).normal(loc=mu))


    def sorted_in_place(x):
        y = x * 2.0
        y.sort()
        return np.sum(y)


    def swapped(x):
        return np.sum(RNG.normal(size=2) * (x * 2.0).byteswap())
"""


def test_a_random_generators_methods_run_as_they_are(tmp_path):
    code = UserModules(tmp_path)(RNG_CODE)
    mu, log_sigma = np.array([0.5, -1.0]), np.array([0.1, 0.3])
    check_against_finite_differences(code.reparameterised, [mu, log_sigma, 7], wrt=(0, 1),
                                     second_order=True)
    assert "rng.normal(size=" in ad.grad(code.reparameterised).source
    x = np.linspace(-1.0, 1.0, 6)
    code.RNG = np.random.default_rng(3)  # the generator the code reads, when it runs
    gradient = ad.grad(code.dropout)(x)
    keep = np.random.default_rng(3).random(x.shape) > 0.5
    np.testing.assert_allclose(gradient, (1 - np.tanh(x) ** 2) * keep)


def test_a_gradient_into_a_library_method_or_an_unknown_array_method_is_refused(tmp_path):
    code = UserModules(tmp_path)(RNG_CODE)
    with pytest.raises(ad.UnknownFunctionError, match="normal") as raised:
        ad.grad(code.noise_of_x)(np.ones(2))
    assert raised.value.lineno == code.noise_of_x.__code__.co_firstlineno + 1
    # an array's own methods are never run as they are: they may change it in place
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"'y.sort\(\)' is called for its "
                       "effect"):
        ad.grad(code.sorted_in_place)(np.ones(2))
    with pytest.raises(ad.UnknownFunctionError, match=r"the method '\.byteswap\(\)' is not "
                       "supported"):
        ad.grad(code.swapped)(np.ones(2))


ODE_CODE = """
    import numpy as np
    import scipy.integrate


    def decay(y, t, k):
        return -k * y


    def integrand(t, k):
        return np.exp(-k * t)


    def integrated(k):
        return scipy.integrate.quad(integrand, 0.0, 1.0, args=(k,))[0]


    def rk4(k, y0):
        h = 0.05
        y, t = y0, 0.0
        for _ in range(20):
            k1 = decay(y, t, k)
            k2 = decay(y + h / 2 * k1, t + h / 2, k)
            k3 = decay(y + h / 2 * k2, t + h / 2, k)
            k4 = decay(y + h * k3, t + h, k)
            y, t = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + h
        return np.sum(y)
"""


def test_a_quadrature_is_refused_with_the_fixed_points_that_replace_it(tmp_path):
    # (odeint and solve_ivp are differentiated: tests/ops/test_integrate_adjoint.py)
    code = UserModules(tmp_path)(ODE_CODE)
    with pytest.raises(ad.UnknownFunctionError, match="is not differentiated: its points are "
                       r"chosen .*\n.*\n  path: k → .*\n  hint: sum the integrand over "
                       "fixed points"):
        ad.grad(code.integrated)(0.5)
    # the alternative: RK4 in the code, differentiated step by step; y(1) = y0 exp(-k)
    y0 = np.array([1.0, 2.0])
    check_against_finite_differences(code.rk4, [0.5, y0], wrt=(0, 1), second_order=True)
    np.testing.assert_allclose(ad.grad(code.rk4)(0.5, y0), -np.sum(y0) * np.exp(-0.5),
                               rtol=1e-6)
