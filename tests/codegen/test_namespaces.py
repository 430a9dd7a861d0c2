"""Every name a derivative reads resolves where the code that reads it was written.

A helper from another module reads its own module's globals; a function or a
gradient rule made by a factory reads its own closure; a derivative of a
function with a closure, called inside another differentiated function, reads
that closure. Each is checked against finite differences, in plain, ``jit=True``
and forward mode, and after the namespace changes (names are read when the
derivative runs, not copied when it is built).
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences

X = np.array([1.0, -2.0, 0.5])


@pytest.fixture
def modules(tmp_path):
    return UserModules(tmp_path)


@pytest.fixture
def helper_and_user(modules):
    helper = modules("""
        import numpy as onp

        k = 2.0
        DTYPE = onp.float64


        def h(x):
            return k * x


        def h_cast(x):
            return x.astype(DTYPE) * k


        def make_scaled(c):
            def scaled(x):
                return c * onp.sin(x)
            return scaled
    """)
    user = modules(f"""
        import numpy as np
        from {helper.__name__} import h, h_cast, make_scaled

        k = 100.0
        scaled_by_3 = make_scaled(3.0)


        def f(x):
            return np.sum(h(x))


        def f_cast(x):
            return np.sum(h_cast(x) * x)


        def f_closure(x):
            return np.sum(scaled_by_3(x) + k * x)
    """)
    return helper, user


@pytest.mark.parametrize("jit", [False, True])
def test_a_helper_reads_its_own_modules_globals(helper_and_user, jit):
    helper, user = helper_and_user
    assert np.allclose(ad.grad(user.f, jit=jit)(X), [2.0, 2.0, 2.0])
    assert np.allclose(ad.grad(user.f_cast, jit=jit)(X), 4.0 * X)
    helper.k = 5.0  # read when the derivative runs, in the helper's module
    assert np.allclose(ad.grad(user.f, jit=jit)(X), [5.0, 5.0, 5.0])
    value, tangent = ad.jvp(user.f, jit=jit)(X, np.ones(3))
    assert np.isclose(value, 5.0 * X.sum()) and np.isclose(tangent, 15.0)
    check_against_finite_differences(user.f_cast, [X])


def test_the_helpers_name_is_written_qualified(helper_and_user):
    helper, user = helper_and_user
    source = ad.grad(user.f).source
    assert f"{helper.__name__}.k" in source, source
    # the comments name the file the helper's lines are in
    assert f"# line 9 (in {helper.__name__}.h): return k * x" in source, source


def test_a_helper_global_missing_from_the_callers_module(modules):
    helper = modules("""
        offset = 0.5

        def shifted(x):
            return (x - offset) ** 2
    """)
    user = modules(f"""
        import numpy as np
        from {helper.__name__} import shifted

        def f(x):
            return np.sum(shifted(x))
    """)
    assert np.allclose(ad.grad(user.f)(X), 2.0 * (X - 0.5))


@pytest.mark.parametrize("jit", [False, True])
def test_a_function_made_by_a_factory_reads_its_own_closure(helper_and_user, jit):
    _, user = helper_and_user
    expected = 3.0 * np.cos(X) + 100.0
    assert np.allclose(ad.grad(user.f_closure, jit=jit)(X), expected)
    check_against_finite_differences(user.f_closure, [X])


def test_two_closures_of_one_name_stay_apart(modules):
    user = modules("""
        import numpy as np

        def make(c):
            def scaled(x):
                return c * x
            return scaled

        twice, thrice = make(2.0), make(3.0)

        def outer(c):
            def f(x):
                return np.sum(twice(x) * thrice(x) + c * x)
            return f

        f = outer(7.0)
    """)
    assert np.allclose(ad.grad(user.f)(X), 12.0 * X + 7.0)
    check_against_finite_differences(user.f, [X])


def test_a_rule_from_another_module_reads_its_own_globals(modules):
    rules = modules("""
        import numpy as np

        SLOPE = 0.25

        def leaky_vjp(g, ans, x):
            return g * np.where(x > 0, 1.0, SLOPE)
    """)
    user = modules(f"""
        import numpy as np
        from {rules.__name__} import leaky_vjp

        SLOPE = 1000.0

        def leaky(x):
            return np.where(x > 0, x, 0.25 * x)

        def loss(x):
            return np.sum(leaky(x))
    """)
    with ad.register_gradient(user.leaky, rules.leaky_vjp):
        assert np.allclose(ad.grad(user.loss)(X), [1.0, 0.25, 1.0])


def test_a_rule_made_by_a_factory_reads_its_closure(modules):
    user = modules("""
        import numpy as np

        def make_rule(scale):
            def rule(g, ans, x):
                return g * scale * np.cos(x)
            return rule

        def wavy(x):
            return 2.0 * np.sin(x)

        def loss(x):
            return np.sum(wavy(x))
    """)
    with ad.register_gradient(user.wavy, user.make_rule(2.0)):
        assert np.allclose(ad.grad(user.loss)(X), 2.0 * np.cos(X))
        assert np.allclose(ad.grad(user.loss, jit=True)(X), 2.0 * np.cos(X))


def test_a_derivative_with_a_closure_called_inside_another(modules):
    user = modules("""
        import numpy as np
        import autodiff as ad

        def make_energy(scale):
            def energy(x):
                return scale * np.sum(x ** 3)
            return energy

        denergy = ad.grad(make_energy(2.0))

        def force_norm(x):
            return np.sum(denergy(x) ** 2)
    """)
    # denergy = 6 x^2, so force_norm = 36 sum x^4 and its gradient is 144 x^3
    assert np.allclose(ad.grad(user.force_norm)(X), 144.0 * X ** 3)
    check_against_finite_differences(user.force_norm, [X])


def test_a_helper_whose_globals_are_no_module(modules, tmp_path):
    """Code run by ``exec`` (as in a notebook) has globals but no module object."""
    text = "k = 3.0\n\ndef helper(x):\n    return k * x ** 2\n"
    path = tmp_path / "exec_text.py"
    path.write_text(text)
    namespace = {"__name__": "exec_text_namespace"}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - the case under test
    user = modules("""
        import numpy as np

        k = 100.0
        helper = None

        def f(x):
            return np.sum(helper(x))
    """)
    user.helper = namespace["helper"]
    assert np.allclose(ad.grad(user.f)(X), 6.0 * X)
    namespace["k"] = 1.0
    assert np.allclose(ad.grad(user.f)(X), 2.0 * X)
    del namespace["k"]
    with pytest.raises(NameError, match="'k'"):
        ad.grad(user.f)(X)


def test_numba_reads_variables_when_it_runs(helper_and_user):
    """numba freezes the globals a function reads when it compiles it: the derivative
    is given them at each call instead."""
    pytest.importorskip("numba")
    helper, user = helper_and_user
    derivative = ad.grad(user.f, jit="numba")
    assert np.allclose(derivative(X), [2.0, 2.0, 2.0])
    helper.k = 5.0
    assert np.allclose(derivative(X), [5.0, 5.0, 5.0])
    closure = ad.grad(user.f_closure, jit="numba")
    assert np.allclose(closure(X), 3.0 * np.cos(X) + 100.0)
    user.k = 1.0
    assert np.allclose(closure(X), 3.0 * np.cos(X) + 1.0)
