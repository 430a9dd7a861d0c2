"""A name bound nowhere is Python's NameError, never a zero gradient: while compiling
(at the first call, so a global defined later is found), or, in code that runs on some
paths only, where Python would raise it, when that code runs."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences


@pytest.fixture
def modules(tmp_path):
    return UserModules(tmp_path)


def test_a_misspelt_name_is_a_name_error_at_the_users_line(modules):
    module = modules("""\
        import numpy as np

        def misspelt(w, X, y):
            z = X @ W          # only w exists
            return np.sum((z - y) ** 2)
    """)
    args = (np.ones(3), np.ones((4, 3)), np.zeros(4))
    for transform in (lambda f: ad.grad(f), lambda f: ad.grad(f, jit=True),
                      lambda f: ad.value_and_grad(f), lambda f: ad.hessian(f)):
        with pytest.raises(NameError, match=r"\.py:4: name 'W' is not defined") as info:
            transform(module.misspelt)(*args)
        assert isinstance(info.value, ad.UndefinedNameError)
        assert isinstance(info.value, ad.AutodiffError)
        assert "z = X @ W" in str(info.value)
    with pytest.raises(ad.UndefinedNameError, match="name 'W' is not defined"):
        ad.jvp(module.misspelt)(*args, np.ones(3))


def test_a_name_error_in_code_reading_structures(modules):
    module = modules("""\
        import numpy as np

        def loss(params, x):
            return np.sum(params["w"] * x * scael)
    """)
    with pytest.raises(ad.UndefinedNameError, match=r":4: name 'scael' is not defined"):
        ad.grad(module.loss)({"w": np.ones(2)}, np.ones(2))


def test_a_helper_in_another_module_reads_its_own_globals(modules):
    helpers = modules("""\
        import numpy as np

        def scaled(x):
            return x * SCALE_UNDEFINED
    """)
    module = modules(f"""\
        import numpy as np
        from {helpers.__name__} import scaled

        def f(x):
            return np.sum(scaled(x))
    """)
    with pytest.raises(ad.UndefinedNameError, match=r":4: name 'SCALE_UNDEFINED'"):
        ad.grad(module.f)(np.ones(2))


def test_a_global_defined_after_the_derivative_is_made_is_read_at_the_first_call(modules):
    module = modules("""\
        import numpy as np

        def f(x):
            return np.sum(x * LATER)
    """)
    gradient = ad.grad(module.f)  # LATER does not exist yet
    jvp = ad.jvp(module.f)
    module.LATER = 3.0
    np.testing.assert_allclose(gradient(np.ones(2)), [3.0, 3.0])
    np.testing.assert_allclose(jvp(np.ones(2), np.ones(2))[1], 6.0)
    check_against_finite_differences(module.f, [np.array([0.5, -1.0])])


def test_a_name_still_missing_at_the_first_call_is_an_error_at_each_call(modules):
    module = modules("""\
        import numpy as np

        def f(x):
            return np.sum(x * LATER)
    """)
    gradient = ad.grad(module.f)
    with pytest.raises(ad.UndefinedNameError):
        gradient(np.ones(2))
    module.LATER = 2.0  # defined now: the next call compiles
    np.testing.assert_allclose(gradient(np.ones(2)), [2.0, 2.0])


def test_a_closure_cell_not_yet_assigned(modules):
    module = modules("""\
        import numpy as np
        import autodiff as ad

        def make():
            def inner(x):
                return np.sum(x * later)
            gradient = ad.grad(inner)
            try:
                gradient(np.ones(2))
            except NameError as error:
                first = error
            later = 2.0
            return first, gradient(np.ones(2))
    """)
    error, gradient = module.make()
    assert isinstance(error, ad.UndefinedNameError)
    assert "free variable 'later'" in str(error)
    np.testing.assert_allclose(gradient, [2.0, 2.0])


def test_builtins_resolve(modules):
    module = modules("""\
        import numpy as np

        def f(x):
            return np.sum(x) * abs(-2.0) + len(x) + max(1.0, 2.0)
    """)
    check_against_finite_differences(module.f, [np.array([0.5, -1.0])])


def test_a_branch_not_taken_raises_nothing_and_a_branch_taken_raises(modules):
    module = modules("""\
        import numpy as np

        DEBUG = False

        def f(x):
            if DEBUG:                      # a global: read when the derivative runs
                return np.sum(x * Undefined)
            return np.sum(x ** 2)
    """)
    x = np.array([0.5, -1.0])
    check_against_finite_differences(module.f, [x])
    np.testing.assert_allclose(ad.grad(module.f, jit=True)(x), 2 * x)
    module.DEBUG = True
    for gradient in (ad.grad(module.f), ad.grad(module.f, jit=True)):
        with pytest.raises(NameError, match=r":7: NameError while computing this line: "
                                            r"name 'Undefined' is not defined"):
            gradient(x)


def test_a_loop_that_runs_no_step_raises_nothing(modules):
    module = modules("""\
        import numpy as np

        def f(x, n):
            s = 0.0
            for i in range(n):
                s = s + np.sum(x * Nope)
            return s + np.sum(x ** 2)
    """)
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(ad.grad(module.f)(x, 0), 2 * x)
    np.testing.assert_allclose(ad.jvp(module.f)(x, 0, np.ones(2))[1], np.sum(2 * x))
    with pytest.raises(NameError, match="name 'Nope' is not defined"):
        ad.grad(module.f)(x, 2)


def test_a_conditional_expression_and_a_short_circuit(modules):
    module = modules("""\
        import numpy as np

        def choose(x, c):
            return np.sum(x ** 2) if c > 0 else np.sum(x * Nope)

        def either(x, c):
            return (c > 0 or Nope) and np.sum(x ** 2)
    """)
    x = np.array([0.5, -1.0])
    for f in (module.choose, module.either):
        np.testing.assert_allclose(ad.grad(f)(x, 1.0), 2 * x)
        with pytest.raises(NameError, match="name 'Nope' is not defined"):
            ad.grad(f)(x, -1.0)


def test_a_handler_catches_the_name_error(modules):
    module = modules("""\
        import numpy as np

        def f(x):
            try:
                return np.sum(x * Nope)
            except NameError:
                return np.sum(x ** 2)
    """)
    x = np.array([0.5, -1.0])
    check_against_finite_differences(module.f, [x])


def test_a_helpers_branch_and_a_while_loop_raise_where_python_would(modules):
    module = modules("""\
        import numpy as np

        def helper(x, c):
            if c > 0:
                return x * 2.0
            return x * Missing

        def f(x, c):
            return np.sum(helper(x, c) ** 2)

        def w(x, n):
            i = 0
            while i < n:
                x = x * Missing
                i += 1
            return np.sum(x ** 2)
    """)
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(ad.grad(module.f)(x, 1.0), 8 * x)
    np.testing.assert_allclose(ad.jvp(module.f)(x, 1.0, np.ones(2))[1], np.sum(8 * x))
    assert "raise NameError(\"name 'Missing' is not defined\")" in ad.grad(module.f).source
    with pytest.raises(NameError, match=r":6: NameError while computing this line"):
        ad.grad(module.f)(x, -1.0)
    np.testing.assert_allclose(ad.grad(module.w)(x, 0), 2 * x)
    with pytest.raises(NameError, match=r":14: NameError while computing this line"):
        ad.grad(module.w)(x, 2)
