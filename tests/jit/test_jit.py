"""``jit=True`` (specialised per signature) and ``jit="numba"``: same results as the
general derivative on the whole corpus, a cache per signature, readable specialised
source, and clear errors for what cannot be specialised."""

from __future__ import annotations

import importlib.util
import sys
import threading

import numpy as np
import pytest

import autodiff as ad
from autodiff.jit.infer import Known, Spec, infer, of_argument
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import CORPUS

PROGRAMS = [pytest.param(p, id=p.fn.__name__) for p in CORPUS + CONTROL_FLOW]


def _same(got, want) -> None:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b)
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("program", PROGRAMS)
def test_specialised_equals_general_on_the_corpus(program):
    general = ad.grad(program.fn, wrt=program.wrt)
    specialised = ad.grad(program.fn, wrt=program.wrt, jit=True)
    for seed in (0, 10):
        args = program.make_args(np.random.default_rng(seed))
        frozen = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
        _same(specialised(*args), general(*args))
        for arg, before in zip(args, frozen):  # inputs untouched
            np.testing.assert_array_equal(arg, before)


def net(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def _net_args(batch=32, rng=None):
    rng = rng or np.random.default_rng(0)
    return [rng.normal(size=s) for s in [(3, 8), (8,), (8, 1), (1,), (batch, 3), (batch, 1)]]


def test_specialised_source_has_no_shape_helpers():
    g = ad.grad(net, wrt=(0, 1, 2, 3), jit=True)
    source = g.source_for(*_net_args())
    for helper in ("unbroadcast", "matmul_grad", "np.size", "as_gradient_of", "np.shape"):
        assert helper in g.source or helper in ("np.shape", "np.size")
        assert helper not in source, helper
    assert "*= 0.0625" in source  # 2 / 32 elements, folded
    assert "db2 = np.sum(" in source and ", axis=0)" in source
    assert "np.tanh(h, out=h)" in source  # the forward sweep updates in place
    assert "x.T" in source and "W2.T" in source


def test_one_specialisation_per_signature():
    g = ad.grad(net, wrt=(0, 1, 2, 3), jit=True)
    g(*_net_args(32))
    g(*_net_args(32, np.random.default_rng(1)))
    assert len(g.specializations.compiled) == 1
    g(*_net_args(16))
    assert len(g.specializations.compiled) == 2
    assert "*= 0.125" in g.source_for(*_net_args(16))  # 2 / 16
    g(*[a.astype(np.float32) for a in _net_args(16)])
    assert len(g.specializations.compiled) == 3
    assert ad.grad(net, wrt=(0, 1, 2, 3), jit=True) is g


def test_broadcast_shapes_and_axes():
    def f(a, b, c):
        return np.sum(np.sin(a * b + c) ** 2, axis=1).sum()

    rng = np.random.default_rng(3)
    for shapes in [((4, 3), (3,), (4, 1)), ((2, 4, 3), (1, 3), ()), ((4, 1), (1, 3), (4, 3))]:
        args = [rng.normal(size=s) if s else float(rng.normal()) for s in shapes]
        g = ad.grad(f, wrt=(0, 1, 2), jit=True)
        _same(g(*args), ad.grad(f, wrt=(0, 1, 2))(*args))
        numeric = ad.numeric_grad(f, *args, wrt=(0, 1, 2))
        for got, want in zip(g(*args), numeric):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
        assert "unbroadcast" not in g.source_for(*args)


def test_data_dependent_shapes_stay_general():
    def f(x):
        y = x[x > 0]  # how many elements depends on the values
        return np.sum(y * np.sum(y))

    g = ad.grad(f, jit=True)
    x = np.array([1.0, -2.0, 3.0])
    _same(g(x), ad.grad(f)(x))
    _same(g(-x), ad.grad(f)(-x))  # the same signature, another mask


def test_loop_with_growing_state_is_not_guessed():
    def f(x, n):
        y = x
        for _ in range(n):
            y = np.concatenate([y, x])
        return np.sum(y * y)

    g = ad.grad(f, jit=True)
    x = np.array([1.0, 2.0])
    for n in (0, 1, 3):
        _same(g(x, n), ad.grad(f)(x, n))


def test_flags_pick_their_branch():
    def f(x, squared=True):
        if squared:
            return np.sum(x * x)
        return np.sum(np.abs(x))

    g = ad.grad(f, jit=True)
    x = np.array([1.0, -2.0])
    assert "np.sign" not in g.source_for(x, True)
    assert "np.sign" in g.source_for(x, False)
    _same(g(x, False), ad.grad(f)(x, False))
    _same(g(x, squared=False), ad.grad(f)(x, False))
    _same(g(x), ad.grad(f)(x))
    assert len(g.specializations.compiled) == 2  # however the flag is passed


def test_keyword_only_arguments_and_defaults():
    def f(x, *, scale=2.0, power=2):
        return np.sum(scale * x ** power)

    g = ad.grad(f, jit=True)
    x = np.array([1.0, 2.0])
    _same(g(x), ad.grad(f)(x))
    _same(g(x, scale=3.0, power=3), ad.grad(f)(x, scale=3.0, power=3))
    with pytest.raises(TypeError):
        g(x, 3.0)


def test_inference_is_exact_on_shapes_and_unknown_on_data():
    def f(x, k):
        n = x.shape[0]
        y = x[:k]
        return np.sum(y) * n

    graph = ad.grad(f).original_graph
    env = infer(graph, [of_argument(np.ones(5)), of_argument(2)])
    found = {v.hint: a for v, a in env.items() if v.hint in ("n", "y")}
    assert found["n"] == Known(5)
    assert found["y"] is None  # x[:k] depends on k's value
    assert of_argument(1.5) == Spec(float, (), np.dtype(np.float64))


def test_threads_compile_once_and_agree():
    def f(x):
        return np.sum(np.tanh(x) ** 2)

    g = ad.grad(f, jit=True)
    x = np.linspace(-1, 1, 7)
    want = ad.grad(f)(x)
    results = []
    threads = [threading.Thread(target=lambda: results.append(g(x))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and len(g.specializations.compiled) == 1
    for result in results:
        _same(result, want)


@pytest.mark.parametrize("jit", [False, True])
def test_vjp_never_writes_into_the_callers_seed(jit):
    def f(x):
        y = x + 0.0
        return y * 3.0 + y

    x, seed = np.array([0.5, 1.5]), np.array([1.0, -1.0])
    np.testing.assert_array_equal(ad.vjp(f, jit=jit)(x, seed), [4.0, -4.0])
    np.testing.assert_array_equal(seed, [1.0, -1.0])


def test_bad_jit_argument():
    with pytest.raises(ValueError, match="jit must be"):
        ad.grad(np.sum, jit="fast")


def test_value_and_grad_vjp_and_jvp_take_jit():
    def f(x):
        return np.sin(x) * x

    x = np.array([0.5, 1.5])
    seed = np.array([1.0, -1.0])
    _same(ad.vjp(f, jit=True)(x, seed), ad.vjp(f)(x, seed))
    _same(ad.jvp(f, jit=True)(x, seed), ad.jvp(f)(x, seed))

    def loss(x):
        return np.sum(f(x))

    _same(ad.value_and_grad(loss, jit=True)(x), ad.value_and_grad(loss)(x))


# ----- numba -----

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="jit='numba' needs the optional jit extra")


def test_numba_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # as if it were not installed
    with pytest.raises(ad.AutodiffError, match=r'pip install "autodiff\[jit\]"'):
        ad.grad(lambda x: x * x, jit="numba")


def huber(x):
    total = 0.0
    for i in range(x.shape[0]):
        r = x[i]
        if abs(r) < 1.0:
            total = total + 0.5 * r * r
        else:
            total = total + abs(r) - 0.5
    return total


def recurrence(x, decay):
    s = 0.0
    for i in range(x.shape[0]):
        s = s * decay + np.sin(x[i]) * x[i]
    return s


@needs_numba
@pytest.mark.parametrize("fn, wrt, make", [
    (huber, 0, lambda rng: [rng.normal(scale=2.0, size=40)]),
    (recurrence, (0, 1), lambda rng: [rng.normal(size=30), 0.9]),
    (net, (0, 1, 2, 3), lambda rng: _net_args(8, rng)),
])
def test_numba_matches_numpy_and_finite_differences(fn, wrt, make):
    rng = np.random.default_rng(5)
    args = make(rng)
    fast = ad.grad(fn, wrt=wrt, jit="numba")
    got = fast(*args)
    _same(got, ad.grad(fn, wrt=wrt)(*args))
    numeric = ad.numeric_grad(fn, *args, wrt=wrt)
    for a, b in zip(got if isinstance(got, tuple) else (got,),
                    numeric if isinstance(numeric, tuple) else (numeric,)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    assert "del " not in fast.source_for(*args)


@needs_numba
def test_numba_refuses_shapes_it_cannot_know_with_the_users_line():
    def f(x):
        y = x[x > 0]
        return np.sum(y * np.sum(y))

    g = ad.grad(f, jit="numba")
    with pytest.raises(ad.AutodiffError) as error:
        g(np.array([1.0, -2.0, 3.0]))
    message = str(error.value)
    assert "jit='numba' cannot compile" in message
    assert "test_jit.py" in message and "np.sum(y * np.sum(y))" in message  # the line


@needs_numba
def test_numba_type_errors_point_at_the_users_line():
    def f(x):
        m = np.mean(x, axis=0)  # numba has no mean over an axis
        return np.sum(m * m)

    with pytest.raises(ad.AutodiffError) as error:
        ad.grad(f, jit="numba")(np.ones((3, 2)))
    message = str(error.value)
    assert "numba cannot compile the derivative of f_grad" in message
    assert "generated line: m = np.mean(x, axis=0)" in message
    assert "m = np.mean(x, axis=0)  # numba has no mean over an axis" in message
    assert ad.grad(f, jit=True)(np.ones((3, 2))).shape == (3, 2)  # NumPy takes it


def test_array_defaults_and_annotations():
    WEIGHTS = np.array([1.0, 3.0])

    def f(x: np.ndarray, w: np.ndarray = WEIGHTS) -> float:
        return np.sum(w * np.sin(x))

    g = ad.grad(f, jit=True)
    x = np.array([0.1, 0.2])
    _same(g(x), ad.grad(f)(x))
    _same(g(x, 2 * WEIGHTS), ad.grad(f)(x, 2 * WEIGHTS))


@needs_numba
def test_numba_reshapes_a_transposed_array():
    def f(x, w):
        return np.sum(np.tanh(x.T.reshape(-1)) * w)

    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=12)
    _same(ad.grad(f, wrt=(0, 1), jit="numba")(x, w), ad.grad(f, wrt=(0, 1))(x, w))
    assert "np.ascontiguousarray" in ad.grad(f, wrt=(0, 1), jit="numba").source_for(x, w)


def test_no_op_reshapes_and_broadcasts_disappear():
    def f(x, y):
        z = np.reshape(x * y, x.shape) + np.broadcast_to(y, x.shape)
        return np.sum(z * z)

    g = ad.grad(f, wrt=(0, 1), jit=True)
    x, y = np.ones((2, 3)), np.full((2, 3), 0.5)
    source = g.source_for(x, y)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any("reshape" in line or "broadcast_to" in line for line in code), source
    _same(g(x, y), ad.grad(f, wrt=(0, 1))(x, y))
    y_row = np.array([0.5, 1.0, 1.5])  # here the broadcast is real
    _same(g(x, y_row), ad.grad(f, wrt=(0, 1))(x, y_row))


SCALE = 2.0


def scaled(x):
    return np.sum(np.sin(x) * SCALE)


def test_globals_are_part_of_the_signature():
    global SCALE
    g = ad.grad(scaled, jit=True)
    x = np.array([0.1, 0.2, 0.3])
    _same(g(x), ad.grad(scaled)(x))
    assert "SCALE" in g.source_for(x) and "unbroadcast" not in g.source_for(x)
    try:
        SCALE = np.array([[1.0], [2.0]])  # now the result broadcasts to (2, 3)
        _same(g(x), ad.grad(scaled)(x))
        assert len(g.specializations.compiled) == 2
        SCALE = 3.0  # another float: the first specialisation again, reading the new value
        _same(g(x), ad.grad(scaled)(x))
        assert len(g.specializations.compiled) == 2
    finally:
        SCALE = 2.0


@pytest.mark.parametrize("jit", [False, True])
def test_lambdas_get_valid_names(jit):
    g = ad.grad(lambda x: x * x, jit=jit)
    assert g(3.0) == 6.0 and g.__name__ == "lambda_grad"
    assert "def lambda_grad(x):" in g.source


def _softplus(x):
    return np.where(x > 20.0, x, np.log1p(np.exp(x)))


def _log_or_zero(x):
    return np.where(x > 0.0, np.log(np.abs(x) + (x <= 0.0)), 0.0)


@pytest.mark.parametrize(("fn", "at"), [(_softplus, 800.0), (_softplus, 1.5),
                                        (_log_or_zero, 0.0), (_log_or_zero, 2.0)])
def test_python_floats_give_what_numpy_gives_where_math_would_raise(fn, at):
    """Specialised float code uses ``math``, which raises on overflow and outside its
    domain where NumPy gives inf or nan (in the branch a ``where`` drops)."""
    with np.errstate(all="ignore"):
        expected = ad.grad(fn)(at)
        assert ad.grad(fn, jit=True)(at) == expected
        assert ad.grad(fn, jit=True)(at) == expected  # the specialisation, called again
    assert np.isfinite(expected)


@pytest.mark.parametrize("order", [1, 2, 3, np.inf, -np.inf, 0.5])
def test_specialised_norms_leave_their_argument_untouched(order):
    # the check of a norm's rank hands its argument on: never updated in place after
    def norm(x):
        return np.linalg.norm(x, ord=order) ** 2

    x = np.array([0.3, -1.2, 0.5, 2.0])
    before = x.copy()
    gradient = ad.grad(norm, jit=True)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(gradient, ad.numeric_grad(norm, before), rtol=1e-6)
