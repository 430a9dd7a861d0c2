"""try/except/else/finally and raise in differentiated code.

The derivative runs the user's ``try`` as it is and differentiates the path it took:
each function below is checked against central differences on every path it has,
in reverse and forward mode and to second order, and with ``jit=True`` against the
general derivative. What the graph cannot follow (a name an exception may leave
half assigned, the exception used as a value) is refused at the user's line.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import autodiff as ad
from tests.codegen.corpus import robust_solve
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(3)


def _positive_definite(n: int) -> np.ndarray:
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


SPD = _positive_definite(3)
INDEFINITE = np.array([[1.0, 2.0, 0.5], [2.0, 1.0, 0.3], [0.5, 0.3, -2.0]])
B = rng.normal(size=3)


@pytest.mark.parametrize("A", [SPD, INDEFINITE], ids=["body completes", "body raises"])
def test_the_derivative_follows_the_path_the_exception_chose(A):
    check_against_finite_differences(robust_solve, [A, B], wrt=(0, 1), second_order=True)
    check_with_jit(robust_solve, A, B, wrt=(0, 1))
    source = ad.grad(robust_solve, wrt=(0, 1)).source
    assert "try:" in source and "except np.linalg.LinAlgError:" in source
    assert "if caught == 0:" in source  # the backward sweep of the path taken


def checked_solve(A, b):
    try:
        np.linalg.cholesky(A)  # only for the error it raises
        L = np.linalg.cholesky(A + np.eye(3))  # noqa: F841 - read by nothing, it raises all the same
        x = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        x = b * 0.5
    return np.sum(x ** 2)


@pytest.mark.parametrize("A", [SPD, INDEFINITE], ids=["body completes", "body raises"])
def test_what_the_body_only_computes_for_its_error_stays(A):
    check_against_finite_differences(checked_solve, [A, B], wrt=(0, 1), second_order=True)
    lines = ad.grad(checked_solve, wrt=(0, 1)).source.splitlines()
    assert sum("np.linalg.cholesky(" in line and not line.strip().startswith("#")
               for line in lines) == 2


def clipped_roots(x, w):
    total = 0.0
    for i in range(4):
        try:
            if x[i] < 0.0:
                raise ValueError("negative")
            v = np.sqrt(x[i]) * w
        except ValueError:
            v = x[i] * w * 2.0
        total = total + v * v
    return total


def test_a_try_in_a_loop_takes_its_path_each_iteration():
    x = np.array([0.5, -0.3, 1.2, -2.0])
    check_against_finite_differences(clipped_roots, [x, 1.3], wrt=(0, 1), second_order=True)
    check_with_jit(clipped_roots, x, 1.3, wrt=(0, 1))


def inverse_or_double(z):
    try:
        s = np.linalg.inv(z)
    except np.linalg.LinAlgError:
        s = z * 2.0
    return s


def through_a_helper(A, B):
    return np.sum(inverse_or_double(A) ** 2) + np.sum(inverse_or_double(B) * A)


def test_a_try_in_a_helper_function():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    singular[:, 1] = 0.0  # stays singular whatever the differences move
    regular = np.array([[2.0, 1.0], [0.5, 3.0]])
    check_against_finite_differences(through_a_helper, [regular, regular + 1.0], wrt=(0, 1),
                                     second_order=True)
    check_against_finite_differences(through_a_helper, [regular, np.zeros((2, 2))],
                                     wrt=0, second_order=True)


def nested(x):
    try:
        try:
            if x[0] > 1.0:
                raise ZeroDivisionError("first")
            y = np.sin(x)
        except ZeroDivisionError:
            if x[1] > 0.0:
                raise ValueError("second")
            y = np.cos(x)
    except ValueError:
        y = x ** 3
    return np.sum(y * x)


@pytest.mark.parametrize("x", [[0.5, 0.3], [1.5, -0.3], [1.5, 0.3]],
                         ids=["inner body", "inner handler", "outer handler"])
def test_nested_tries(x):
    check_against_finite_differences(nested, [np.array(x)], second_order=True)
    check_with_jit(nested, np.array(x))


def test_bare_except_and_except_exception(user_module):
    # (past the length of the module the checks write, which warn_explicit once read)
    module = user_module("\n" * 60 + """
        import warnings
        import numpy as np

        def catch_all(x):
            try:
                y = np.log(x)
                if np.any(np.isnan(y)):
                    raise RuntimeError("nan")
            except:
                warnings.warn("falling back")
                y = x * 2.0
            return np.sum(y)

        def catch_exception(x):
            try:
                y = np.linalg.inv(np.diag(x))
            except Exception as e:
                warnings.warn(f"singular: {e}")
                y = np.diag(x) * 3.0
            return np.sum(y)
    """)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in ([0.8, 0.4], [-0.2, 0.3]):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                check_against_finite_differences(module.catch_all, [np.array(x)],
                                                 second_order=True)
            assert all(w.lineno == 71 for w in caught if w.category is UserWarning)
            assert bool(caught) == (x[0] < 0)
        check_against_finite_differences(module.catch_exception, [np.array([0.8, 0.4])],
                                         second_order=True)
        with pytest.warns(UserWarning, match="singular: Singular matrix"):
            np.testing.assert_allclose(
                ad.grad(module.catch_exception)(np.array([0.0, 0.4])), [3.0, 3.0])


def several_handlers(x):
    try:
        if x > 1.0:
            raise ZeroDivisionError("high")
        if x < -1.0:
            raise KeyError("low")
        y = x ** 2
    except (ZeroDivisionError, ValueError):
        y = x * 3.0
    except KeyError:
        y = np.sin(x)
    return y


@pytest.mark.parametrize("x", [0.5, 1.5, -1.5])
def test_several_handlers_and_a_tuple_of_classes(x):
    check_against_finite_differences(several_handlers, [x], second_order=True)


def exp_or_tanh(x):
    try:
        y = np.exp(x)
        if np.sum(x) > 2.0:
            raise ValueError("too large")
    except ValueError as error:
        print("falling back:", error)
        y = np.tanh(x)
    else:
        y = y * x
    finally:
        print("done")
    return np.sum(y)


@pytest.mark.parametrize("x, printed", [([0.5, 0.3], "done\n"),
                                        ([1.5, 0.9], "falling back: too large\ndone\n")])
def test_else_runs_when_the_body_completes_and_finally_on_every_path(capsys, x, printed):
    value, gradient = ad.value_and_grad(exp_or_tanh)(np.array(x))
    assert capsys.readouterr().out == printed
    assert value == exp_or_tanh(np.array(x))
    capsys.readouterr()
    check_against_finite_differences(exp_or_tanh, [np.array(x)], second_order=True)
    np.testing.assert_allclose(ad.grad(exp_or_tanh, jit=True)(np.array(x)), gradient)


def rebinds_the_exception_name(x):
    try:
        y = np.log(x)
        if np.any(np.isnan(y)):
            raise ValueError("nan")
    except ValueError as e:
        print(e)
        e = np.tanh(x)
        y = e * 3.0
    return np.sum(y * y)


def test_the_variable_of_except_as_holds_nothing_else(capsys):
    """Python unbinds it when the handler ends: a value the backward sweep reads after
    the handler must live in another variable."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_against_finite_differences(rebinds_the_exception_name, [np.array([-0.5, 0.3])],
                                         second_order=True)
    assert "e_1 = np.tanh(x)" in ad.grad(rebinds_the_exception_name).source


def finally_on_the_way_out(x):
    try:
        y = np.log(x)
        if np.any(np.isnan(y)):
            raise ValueError("log of a negative number")
    finally:
        print("leaving")
    return np.sum(y)


def test_finally_runs_before_the_exception_leaves(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="log of a negative number") as info:
            ad.grad(finally_on_the_way_out)(np.array([-1.0, 2.0]))
    assert capsys.readouterr().out == "leaving\n"
    assert info.value.lineno == finally_on_the_way_out.__code__.co_firstlineno + 4
    assert ad.grad(finally_on_the_way_out)(np.array([1.0, 2.0]))[1] == 0.5


def returns_through_finally(x):
    try:
        if np.sum(x) > 1.0:
            return np.sum(x ** 2)
        y = np.sin(x)
    finally:
        print("finally")
    return np.sum(y)


@pytest.mark.parametrize("x", [[0.8, 0.4], [0.2, 0.3]], ids=["returns", "continues"])
def test_finally_runs_when_the_body_returns(capsys, x):
    ad.grad(returns_through_finally)(np.array(x))
    assert capsys.readouterr().out == "finally\n"
    check_against_finite_differences(returns_through_finally, [np.array(x)],
                                     second_order=True)


def returns_inside(x):
    try:
        if np.sum(x) > 1.0:
            return np.sum(np.sin(x))
        y = np.log(x)
        if np.any(np.isnan(y)):
            raise FloatingPointError("nan")
    except FloatingPointError:
        return np.sum(x ** 3)
    return np.sum(y * x)


@pytest.mark.parametrize("x", [[0.3, 0.4], [0.8, 0.4], [0.3, -0.4]],
                         ids=["after", "in the body", "in the handler"])
def test_return_inside_the_body_or_a_handler(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_against_finite_differences(returns_inside, [np.array(x)], second_order=True)


def grown_until_it_fails(x):
    s = x
    for i in range(5):
        try:
            t = s * 0.9 + np.sin(s)
            if np.sum(t) > 3.0:
                raise ValueError("grown")
            if i == 1:
                continue
            s = t
        except ValueError:
            break
    return np.sum(s ** 2)


@pytest.mark.parametrize("x", [[0.3, 0.2], [0.6, 0.7], [1.5, 1.2]])
def test_break_in_a_handler_and_continue_in_the_body(x):
    check_against_finite_differences(grown_until_it_fails, [np.array(x)], second_order=True)
    check_with_jit(grown_until_it_fails, np.array(x))


def unrolled_until_saturated(x):
    total = 0.0
    for k in range(3):
        try:
            h = x * (k + 1.0)
            for i in range(3):
                h = np.tanh(h) + 0.5 * h
                if k == 1 and i == 1:
                    raise ArithmeticError("diverged")
        except ArithmeticError:
            h = x * 0.5
        total = total + np.sum(h ** 2)
    return total


def test_a_loop_inside_a_try_inside_a_loop():
    """The inner loop stores values for the backward sweep; the iteration that raised
    part way takes back what it stored, or the iterations before would read them."""
    x = np.array([0.3, -0.2])
    check_against_finite_differences(unrolled_until_saturated, [x], second_order=True)
    check_with_jit(unrolled_until_saturated, x)
    assert "del tape[pushed:]" in ad.grad(unrolled_until_saturated).source


def saturating_loop(x, n):
    try:
        h = x
        for _ in range(n):
            h = np.tanh(h * 1.5)
            if np.max(h) > 0.9:
                raise ArithmeticError("saturated")
    except ArithmeticError:
        h = x * 0.5
    return np.sum(h ** 2)


@pytest.mark.parametrize("x", [[0.3, 0.2], [0.3, 1.2]], ids=["completes", "saturates"])
def test_a_loop_inside_a_try(x):
    check_against_finite_differences(saturating_loop, [np.array(x), 3], second_order=True)


def python_division(x, y):
    try:
        scale = 1.0 / y
    except ZeroDivisionError:
        scale = 1e3
    return scale * x * x


def test_zero_division_of_python_floats():
    check_against_finite_differences(python_division, [0.7, 0.0], second_order=True)
    check_against_finite_differences(python_division, [0.7, 0.3], wrt=(0, 1),
                                     second_order=True)


def log_or_shift(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x - 1.0
    return np.sum(y * x)


def root_or_identity(x):
    try:
        y = np.sqrt(x)
    except FloatingPointError:
        y = x
    return np.sum(y)


def test_floating_point_errors_raised_by_numpy():
    with np.errstate(all="raise"):
        check_against_finite_differences(log_or_shift, [np.array([0.5, 2.0])],
                                         second_order=True)
        check_against_finite_differences(log_or_shift, [np.array([-0.5, 2.0])],
                                         second_order=True)
        # The tangent of sqrt at 0 divides by zero: forward mode computes tangents after
        # the try, so that error is the caller's, never taken for one the handler catches.
        with pytest.raises(FloatingPointError):
            ad.jvp(root_or_identity)(np.array([0.0, 4.0]), np.ones(2))


def test_classes_of_another_module_and_a_global_tuple_of_them(user_module):
    user_module("""
        import numpy as np

        class Diverged(ArithmeticError):
            pass

        RETRIED = (Diverged, np.linalg.LinAlgError)

        def settle(x):
            try:
                y = np.tanh(x) * 3.0
                if np.max(np.abs(y)) > 2.5:
                    raise Diverged("too far")
            except RETRIED:
                y = x * 0.1
            return y

        def settle_locally(x):
            retried = (Diverged, ValueError)
            try:
                y = np.tanh(x) * 3.0
                if np.max(np.abs(y)) > 2.5:
                    raise Diverged("too far")
            except retried:
                y = x * 0.1
            return np.sum(y)
    """, name="settling")
    module = user_module("""
        import numpy as np
        from settling import settle

        def loss(x):
            return np.sum(settle(x) ** 2)
    """)
    source = ad.grad(module.loss).source
    assert "raise settling.Diverged('too far')" in source and "except settling.RETRIED:" in source
    for x in ([3.0, 2.0], [0.3, 0.2]):
        check_against_finite_differences(module.loss, [np.array(x)], second_order=True)
    settling = sys.modules["settling"]
    assert "except (Diverged, ValueError):" in ad.grad(settling.settle_locally).source
    check_against_finite_differences(settling.settle_locally, [np.array([3.0, 2.0])])


def validated(x):
    if np.any(x < -5.0):
        raise ValueError(f"x too small: {np.min(x)}")
    return np.sum(x ** 2)


@pytest.mark.parametrize("jit", [False, True])
def test_a_raise_reaches_the_caller_as_its_class_at_the_users_line(jit):
    derivative = ad.grad(validated, jit=jit)
    np.testing.assert_allclose(derivative(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match="x too small: -6.0") as info:
        derivative(np.array([-6.0, 1.0]))
    assert isinstance(info.value, ad.errors.DerivativeError)
    assert info.value.lineno == validated.__code__.co_firstlineno + 2
    assert info.value.filename == __file__
    check_against_finite_differences(validated, [np.array([1.0, 2.0])], second_order=True)


class SolverError(RuntimeError):
    def __init__(self, code: int) -> None:
        super().__init__(f"solver failed with code {code}")
        self.code = code


def cholesky_or_fail(A):
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        print("not positive definite")
        raise
    return np.sum(L)


def cholesky_or_value_error(A):
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError as error:
        raise ValueError("A must be positive definite") from error
    return np.sum(L)


def fails_with_its_own_class(x):
    if np.sum(x) < 0.0:
        raise SolverError(3)
    return np.sum(x)


def test_re_raised_and_chained_exceptions_keep_their_classes(capsys):
    with pytest.raises(np.linalg.LinAlgError) as info:
        ad.grad(cholesky_or_fail)(INDEFINITE)
    assert capsys.readouterr().out == "not positive definite\n"
    assert info.value.lineno == cholesky_or_fail.__code__.co_firstlineno + 2  # (where raised)
    with pytest.raises(ValueError, match="A must be positive definite") as info:
        ad.grad(cholesky_or_value_error)(INDEFINITE)
    assert isinstance(info.value.__cause__.__cause__, np.linalg.LinAlgError)
    with pytest.raises(SolverError) as info:
        ad.grad(fails_with_its_own_class)(np.array([-1.0]))
    assert type(info.value) is SolverError and info.value.code == 3  # the user's own object
    if sys.version_info >= (3, 11):
        line = fails_with_its_own_class.__code__.co_firstlineno + 2
        assert info.value.__notes__ == [f"raised at test_try.py:{line}: raise SolverError(3)"]


# ----- refused: what the graph cannot follow -----


def _error(user_module, body: str, **options) -> ad.AutodiffError:
    module = user_module("import numpy as np\n\n\ndef f(x):\n" + body, name="model")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f, **options)(np.array([0.5, 2.0]))
    return info.value


def _located(error: ad.AutodiffError, line: int, *words: str) -> None:
    assert error.filename.endswith("model.py") and error.lineno == line, str(error)
    for word in words:
        assert word in str(error), str(error)


REFUSED = [
    ("read after the try", """\
    try:
        y = np.sin(x)
        z = np.log(y)
    except ValueError:
        z = x
    return np.sum(y + z)
""", 10, ("'y' is read after the try statement of line 5, whose body assigns it part way "
          "and whose handler at line 8 does not"), "hint: assign it in every handler"),
    ("read in a handler", """\
    y = x
    try:
        y = np.sin(x)
        z = np.log(y)
    except ValueError:
        z = y * 2.0
    return np.sum(z)
""", 10, ("'y' is read in the handler at line 9, and the body of the try statement of "
          "line 6 assigns it")),
    ("read in finally", """\
    try:
        y = np.sin(x)
        z = np.log(y)
    finally:
        print(y)
    return np.sum(z)
""", 9, "'y' is read in the finally: block of the try statement of line 5"),
    ("carried by a loop", """\
    for i in range(3):
        try:
            L = np.sin(x)
            z = np.log(L)
        except ValueError:
            z = x
        x = z + L
    return np.sum(x)
""", 11, "'L' is read after the try statement of line 6"),
    ("the exception computed with", """\
    try:
        z = np.log(x)
    except ValueError as e:
        z = x * len(str(e))
    return np.sum(z)
""", 8, ("'len(str(e))' uses the exception an except block caught, which differentiated "
         "code only prints, logs, warns or raises")),
    ("the exception returned", """\
    try:
        z = np.log(x)
    except ValueError as e:
        return e
    return np.sum(z)
""", 8, "'return e' uses the exception"),
    ("classes computed at run time", """\
    try:
        z = np.log(x)
    except type(x):
        z = x
    return np.sum(z)
""", 7, "'except type(x)' needs exception classes known while compiling"),
    ("raising an array", """\
    if np.sum(x) > 0:
        raise x
    return np.sum(x)
""", 6, "'raise x' raises what is not an exception"),
    ("return in finally", """\
    try:
        z = np.log(x)
    finally:
        return np.sum(x)
""", 8, "'return' inside a finally: block is not supported"),
]


@pytest.mark.parametrize("body, line, words", [case[1:3] + (case[3:],) for case in REFUSED],
                         ids=[case[0] for case in REFUSED])
def test_what_the_graph_cannot_follow_is_refused_at_its_line(user_module, body, line, words):
    error = _error(user_module, body)
    assert isinstance(error, ad.UnsupportedSyntaxError)
    _located(error, line, *words)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11's")
def test_exception_groups_are_refused(user_module):
    error = _error(user_module, """\
    try:
        z = np.log(x)
    except* ValueError:
        z = x
    return np.sum(z)
""")
    _located(error, 5, "'except*' clauses (exception groups) are not supported")


def test_numba_refuses_a_try_and_a_raise_it_cannot_make(user_module):
    pytest.importorskip("numba")
    error = _error(user_module, """\
    try:
        z = np.log(x)
    except ValueError:
        z = x
    return np.sum(z)
""", jit="numba")
    _located(error, 5, "jit='numba' cannot compile a try statement", "hint: use jit=True")
    error = _error(user_module, """\
    if np.sum(x) < 0.0:
        raise ValueError(f"negative: {np.sum(x)}")
    return np.sum(x)
""", jit="numba")
    _located(error, 6, "jit='numba' raises an exception made of constants only")


def test_numba_raises_an_exception_of_constants_at_the_users_line():
    pytest.importorskip("numba")
    derivative = ad.grad(fails_with_its_own_class, jit="numba")
    np.testing.assert_allclose(derivative(np.array([1.0, 2.0])), [1.0, 1.0])
    derivative = ad.grad(validated_plainly, jit="numba")
    np.testing.assert_allclose(derivative(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match="x must not be negative") as info:
        derivative(np.array([-1.0, 2.0]))
    assert info.value.lineno == validated_plainly.__code__.co_firstlineno + 2


def validated_plainly(x):
    if np.min(x) < 0.0:
        raise ValueError("x must not be negative")
    return np.sum(x ** 2)


def log_or_linear(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x * 5.0
    return np.sum(y * y)


def test_check_finite_never_changes_the_path_a_try_takes():
    """Its error is a FloatingPointError: raised inside the body, the handler would take
    it. The body's values are checked as the statement gives them (y here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ad.NonFiniteError) as info:
            ad.grad(log_or_linear, check_finite=True)(np.array([-1.0, 2.0]))
    assert info.value.lineno == log_or_linear.__code__.co_firstlineno + 1  # the try
    np.testing.assert_allclose(
        ad.grad(log_or_linear, check_finite=True)(np.array([1.0, 2.0])), [0.0, np.log(2.0)])
