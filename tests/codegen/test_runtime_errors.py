"""Errors met while a derivative runs, and ``check_finite=True``.

A shape or index error inside generated code becomes a DerivativeError at the
user's line (still the built-in kind); ``check_finite=True`` names the first
statement that produced NaN or infinity; an argument that cannot be
differentiated is named. The bookkeeping behind it (in-memory source, the
line tables, the per-function cache) goes when the derivative goes.
"""

from __future__ import annotations

import gc
import linecache
import warnings
import weakref

import numpy as np
import pytest

import autodiff as ad
from autodiff.codegen import origins
from autodiff.derivatives import cache
from tests.corpus import programs as corpus
from tests.helpers import check_against_finite_differences

# ----- errors at run time, at the user's line -----


def test_an_error_inside_a_helper_and_a_loop_names_the_helper_line(user_module):
    module = user_module("""
        import numpy as np

        def step(h, W):
            return np.tanh(h @ W)

        def f(h, Ws):
            for W in Ws:
                h = step(h, W)
            return np.sum(h)
    """)
    Ws = [np.ones((3, 3)), np.ones((2, 3))]  # the second step does not fit
    for jit in (False, True):
        with pytest.raises(ValueError) as info:
            ad.grad(module.f, jit=jit)(np.ones(3), Ws)
        assert info.value.lineno == 5, jit
        assert "return np.tanh(h @ W)" in str(info.value)
        # the list's leaves are read at the top, named by their place in it
        assert "Ws_1: float64 array of shape (2, 3)" in info.value.hint


def test_errors_from_the_users_own_exceptions_are_not_rewrapped():
    class Mine(ValueError):
        pass

    error = Mine("mine")
    assert origins.at_user_line(error) is error  # not raised in generated code
    try:
        raise Mine("inside")
    except Mine as raised:
        assert origins.at_user_line(raised) is raised


def test_a_user_variable_named_like_the_handlers_name_is_kept(user_module):
    module = user_module("""
        import numpy as np

        error = 2.0

        def f(x):
            return np.sum(x * error)
    """)
    g = ad.grad(module.f)
    np.testing.assert_allclose(g(np.ones(3)), 2.0 * np.ones(3))
    assert "except Exception as error_:" in g.source


# ----- arguments that cannot be differentiated -----


@pytest.mark.parametrize("value, kind", [
    ("sum", "a str"), (None, "a NoneType"), (True, "a bool"),
    (np.array([True, False]), "a bool array"), (np.array(["a"]), "a <U1 array"),
    (np.array([1.0, None]), "a object array"),
])
@pytest.mark.parametrize("jit", [False, True])
def test_a_non_numeric_argument_is_refused_by_name(user_module, value, kind, jit):
    module = user_module("""
        import numpy as np

        def f(x, scale):
            return np.sum(x) * 2.0
    """)
    with pytest.raises(ad.ArgumentKindError) as info:
        ad.grad(module.f, wrt=1, jit=jit)(np.ones(2), value)
    assert f"with respect to 'scale', {kind}" in str(info.value)
    assert info.value.lineno == 4 and isinstance(info.value, TypeError)


def test_ints_and_numpy_scalars_get_gradients_of_their_kind(user_module):
    module = user_module("""
        import numpy as np

        def f(x, n):
            return np.sum(np.asarray(x) ** 2) * n
    """)
    g = ad.grad(module.f, wrt=(0, 1))
    dx, dn = g(np.array([1, 2]), 3)
    assert type(dx) is np.ndarray and dx.dtype == np.float64 and type(dn) is float
    np.testing.assert_allclose(dx, [6.0, 12.0])
    assert dn == 5.0
    dx, dn = g([1.0, 2.0], 3)  # a list: a list of gradients, as JAX gives
    assert dx == [6.0, 12.0] and type(dx[0]) is float and dn == 5.0
    dx, dn = g(np.float32(2.0), np.int64(2))
    assert type(dx) is np.float32 and type(dn) is np.float64


# ----- check_finite=True -----


def _quiet():
    return warnings.catch_warnings()


def test_check_finite_names_the_first_non_finite_statement_in_a_loop(user_module):
    module = user_module("""
        import numpy as np

        def f(x, n):
            for i in range(n):
                x = x * 10.0
                x = x - 1.0
            h = np.exp(x)
            return np.sum(h)
    """)
    g = ad.grad(module.f, check_finite=True)
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(g(x, 1), np.exp(x * 10 - 1) * 10)  # finite: no complaint
    with _quiet():
        warnings.simplefilter("ignore")
        with pytest.raises(ad.NonFiniteError) as info:
            g(x, 3)  # exp(889) overflows in the forward sweep, before any gradient
    assert info.value.lineno == 8 and "this line produced inf (1 of 2 values) in 'h'" in str(
        info.value)
    assert "h = np.exp(x" in info.value.hint
    assert isinstance(info.value, FloatingPointError)


@pytest.mark.parametrize("jit", [False, True])
def test_check_finite_in_the_backward_sweep_and_with_python_floats(user_module, jit):
    module = user_module("""
        import numpy as np

        def f(x, y):
            r = np.sqrt(x) + y
            return np.sum(r * r)
    """)
    g = ad.grad(module.f, wrt=(0, 1), check_finite=True, jit=jit)
    assert g(4.0, 1.0) == pytest.approx((1.5, 6.0))
    with _quiet():
        warnings.simplefilter("ignore")
        with pytest.raises(ad.NonFiniteError) as info:
            g(np.array([0.0, 4.0]), 1.0)
    assert info.value.lineno == 5
    assert "the gradient of this line produced inf (1 of 2 values) in 'dx'" in str(info.value)
    # Specialised code computes on scalars with `math` and Python's own arithmetic,
    # which raise where NumPy gives inf: the general derivative answers then.
    with _quiet():
        warnings.simplefilter("ignore")
        with pytest.raises(ad.NonFiniteError) as info:
            g(0.0, 1.0)
    assert info.value.lineno == 5
    assert info.value.__context__ is None


def test_check_finite_on_vjp_jvp_and_value_and_grad(user_module):
    module = user_module("""
        import numpy as np

        def f(x):
            return np.log(x)

        def loss(x):
            return np.sum(np.log(x))
    """)
    x = np.array([1.0, 0.0])
    calls = {"vjp": lambda: ad.vjp(module.f, check_finite=True)(x, np.ones(2)),
             "jvp": lambda: ad.jvp(module.f, check_finite=True)(x, np.ones(2)),
             "value_and_grad": lambda: ad.value_and_grad(module.loss, check_finite=True)(x)}
    with _quiet():
        warnings.simplefilter("ignore")
        for name, call in calls.items():
            with pytest.raises(ad.NonFiniteError, match="produced -inf") as info:
                call()
            assert info.value.lineno in (5, 8), name


def test_check_finite_changes_no_result_on_the_corpus():
    """Every corpus program: the checked derivative returns what the plain one does."""
    rng = np.random.default_rng(0)
    for program in corpus.CORPUS:
        args = program.make_args(rng)
        plain = ad.value_and_grad(program.fn, wrt=program.wrt)(*args)
        checked = ad.value_and_grad(program.fn, wrt=program.wrt, check_finite=True)(*args)
        np.testing.assert_equal(checked, plain, err_msg=program.fn.__name__)


def test_check_finite_is_refused_with_numba():
    with pytest.raises(ValueError, match="check_finite=True runs in Python"):
        ad.grad(corpus.rosenbrock, jit="numba", check_finite=True)


def test_finite_differences_agree_through_the_guarded_body():
    rng = np.random.default_rng(1)
    check_against_finite_differences(corpus.mlp_relu, wrt=(0, 1),
                                     args=[rng.normal(size=s) for s in
                                           [(3, 4), (4,), (4, 2), (2,), (5, 3), (5, 2)]])


# ----- bookkeeping: caches keyed by function, bounded, and freed -----


def _make(scale):
    def loss(x):
        return np.sum(x ** 2) * scale
    return loss


def test_derivatives_go_with_their_function_and_free_their_source():
    refs, names = [], []
    for k in range(20):
        f = _make(k)
        g = ad.grad(f)
        ad.grad(f, jit=True)(np.ones(2))
        np.testing.assert_allclose(g(np.ones(2)), 2.0 * k * np.ones(2))
        refs.append(weakref.ref(f))
        names.append(g.__code__.co_filename)
    del f, g
    gc.collect()
    assert all(r() is None for r in refs), "a function is kept alive by its derivatives"
    assert not set(names) & origins.generated_files()
    assert not set(names) & set(linecache.cache)


def test_the_cache_is_bounded_per_function(monkeypatch):
    monkeypatch.setattr(cache, "MAX_PER_FUNCTION", 3)
    f = _make(2.0)
    derivatives = [ad.grad(f, wrt=0, optimize=o, has_aux=False, check_finite=c)
                   for o in (True, False) for c in (True, False)]
    assert len(vars(f)[cache.CACHE][1]) == 3
    assert ad.grad(f, optimize=False, check_finite=False) is derivatives[-1]  # the newest stay


def test_a_wrapper_does_not_take_its_wrapped_functions_derivatives(user_module):
    module = user_module("""
        import numpy as np

        def f(x):
            return np.sum(x ** 2)

        def twice(x):
            return np.sum(x ** 2) * 2.0
    """)
    g = ad.grad(module.f)
    # what functools.wraps does besides __wrapped__ (which autodiff follows on purpose)
    wrapper = module.twice
    wrapper.__dict__.update(module.f.__dict__)
    assert cache.CACHE in vars(wrapper)
    np.testing.assert_allclose(ad.grad(wrapper)(np.ones(2)), 4.0 * np.ones(2))
    assert ad.grad(module.f) is g

