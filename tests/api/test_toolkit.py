"""The derivative toolkit beyond ``grad``: vjp with a seed, custom and registered
gradients, stop_gradient and no_grad, auxiliary outputs, derivatives of derivatives.

Jacobians and Hessians against finite differences are in tests/api/test_jacobians.py
and tests/api/test_higher_order.py; the dot-product test of jvp against vjp on
every corpus function is in tests/corpus/test_corpus.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import UserModules, central_difference

SOURCE = '''
import math
import numpy as np
import autodiff as ad


def doubling(x):
    y = 2 * x
    while np.linalg.norm(y) < 1000:
        y = 2 * y
    return y


def layer_and_penalty(x, W):
    return np.tanh(W @ x), np.sum(x ** 2)


def scalar(x):
    return np.sum(np.sin(x) * x)


@ad.custom_grad
def round_ste(x):
    return np.round(x)


@round_ste.defvjp
def _(g, ans, x):
    return g


@round_ste.defjvp
def _(t, ans, x):
    return t


def quantised_loss(x, w):
    return np.sum((round_ste(x * w) - 0.3) ** 2)


@ad.custom_grad
def opaque_softplus(x):
    # The compiler cannot read this body (try/except, a method call on a float).
    try:
        return np.log1p(np.exp(x))
    except FloatingPointError:
        return x.copy()


@opaque_softplus.defvjp
def _(g, ans, x):
    return g / (1.0 + np.exp(-x))


def uses_opaque(x):
    return np.sum(opaque_softplus(x) * x)


@ad.custom_grad
def scaled(a, b):
    return a * b


@scaled.defvjp
def _(g, ans, a, b):
    return g * b, None  # no gradient for b, on purpose


def uses_scaled(a, b):
    return np.sum(scaled(a, b))


def softplus(x):
    return np.log1p(np.exp(x))


def uses_softplus(x):
    return np.sum(softplus(x) ** 2)


def uses_tanh(x):
    return np.sum(np.tanh(x))


def uses_dawsn(x):
    return np.sum(dawsn(x) * x)


def detached(x):
    return np.sum(x * ad.stop_gradient(x))


def normalised(x):
    with ad.no_grad():
        scale = np.max(np.abs(x))
        shift = np.mean(x)
    return np.sum((x - shift) / scale)


def no_grad_keeps_untouched_names(x, y):
    with ad.no_grad():
        z = x * y
    return np.sum(z * x + y)


def no_grad_loop(x):
    total = 0.0
    for i in range(3):
        with ad.no_grad():
            w = np.sum(x) * i
        total = total + w * np.sum(x ** 2)
    return total


def no_grad_return(x):
    if np.sum(x) > 100.0:
        with ad.no_grad():
            return np.sum(x ** 2)
    return np.sum(x ** 3)


def with_aux(x, W):
    h = np.tanh(W @ x)
    return np.sum(h ** 2), h


def cubic(x):
    return x * x * x


def looped(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x * s + x)
    return s


def other_with(x):
    with open("f") as handle:
        return x


def aux_not_pair(x):
    return x * 2.0
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    module = UserModules(tmp_path_factory.mktemp("toolkit"))(SOURCE, "toolkit_functions")
    try:
        from scipy.special import dawsn
    except ImportError:
        dawsn = None
    module.dawsn = dawsn
    return module


def fd_grad(f, args, index):
    return central_difference(f, list(args), index)


# ----- vjp -----


def test_vjp_of_the_doubling_loop_gives_seed_times_two_to_the_k(mod):
    x = np.array([0.3, -0.2, 0.1])
    seed = np.array([0.1, 1.0, 0.0001])
    k = 1
    while np.linalg.norm(x * 2 ** k) < 1000:
        k += 1
    np.testing.assert_allclose(ad.vjp(mod.doubling)(x, seed), seed * 2.0 ** k, rtol=1e-15)
    assert "vjp_seed(seed, y" in ad.vjp(mod.doubling).source
    # the seed is the derivative's parameter, not the function's
    assert str(ad.vjp(mod.doubling).original_graph).startswith("graph doubling(x):")


def test_vjp_with_a_tuple_output_takes_a_tuple_seed(mod):
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=3), rng.normal(size=(4, 3))
    seed = (rng.normal(size=4), 0.7)
    gx, gW = ad.vjp(mod.layer_and_penalty, wrt=(0, 1))(x, W, seed)

    def weighted(x, W):
        h, p = mod.layer_and_penalty(x, W)
        return np.sum(seed[0] * h) + seed[1] * p

    np.testing.assert_allclose(gx, fd_grad(weighted, (x, W), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gW, fd_grad(weighted, (x, W), 1), rtol=1e-6, atol=1e-8)


def test_vjp_without_a_seed_is_grad_and_checks_the_seed_shape(mod):
    x = np.array([0.5, -1.0])
    np.testing.assert_array_equal(ad.vjp(mod.scalar)(x), ad.grad(mod.scalar)(x))
    with pytest.raises(ad.NonScalarOutputError, match="vjp without a seed needs a scalar"):
        ad.vjp(mod.doubling)(x)
    with pytest.raises(ad.AutodiffError, match=r"seed has shape \(3,\).*has shape \(2,\)"):
        ad.vjp(mod.doubling)(x, np.ones(3))


# ----- custom gradients -----


def test_a_straight_through_estimator_is_honoured_in_both_modes(mod):
    x, w = np.array([0.4, 1.6, -2.2]), np.array([1.1, 0.9, 1.3])
    gx, gw = ad.grad(mod.quantised_loss, wrt=(0, 1))(x, w)
    # The rule says d round(u)/du = 1: the true gradient (zero almost everywhere) is ignored.
    residual = 2 * (np.round(x * w) - 0.3)
    np.testing.assert_allclose(gx, residual * w)
    np.testing.assert_allclose(gw, residual * x)
    u = np.array([0.2, -0.5, 1.0])
    _, slope = ad.jvp(mod.quantised_loss)(x, w, u)
    np.testing.assert_allclose(slope, np.sum(residual * w * u))
    source = ad.grad(mod.quantised_loss).source
    assert "round_ste(" in source  # called as it is, never read


def test_custom_grad_works_on_a_body_the_compiler_cannot_read(mod):
    x = np.array([0.3, -1.2, 2.0])
    ours = ad.grad(mod.uses_opaque)(x)
    np.testing.assert_allclose(ours, fd_grad(mod.uses_opaque, (x,), 0), rtol=1e-7)
    assert mod.opaque_softplus(0.0) == pytest.approx(np.log(2.0))  # still a plain function


def test_a_custom_rule_may_return_none_for_no_gradient(mod):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    ga, gb = ad.grad(mod.uses_scaled, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b)
    np.testing.assert_allclose(gb, 0.0)


def test_forward_mode_through_a_custom_grad_without_jvp_is_a_clear_error(mod):
    with pytest.raises(ad.NonDifferentiableError, match="no forward-mode .JVP. rule"):
        ad.jvp(mod.uses_opaque)


# ----- register_gradient -----


def test_register_gradient_for_a_user_function_is_scoped(mod):
    x = np.array([0.3, -1.2, 2.0])
    calls = []

    def softplus_vjp(g, ans, x):
        return g / (1.0 + np.exp(-x))

    plain = ad.grad(mod.uses_softplus)
    assert "log1p" in plain.source  # inlined from its source
    with ad.register_gradient(mod.softplus, softplus_vjp) as registration:
        registered = ad.grad(mod.uses_softplus)
        assert "softplus(x)" in registered.source and "log1p" not in registered.source
        np.testing.assert_allclose(registered(x), fd_grad(mod.uses_softplus, (x,), 0),
                                   rtol=1e-7)
        calls.append(registration.active)
    assert calls == [True] and not registration.active
    assert ad.grad(mod.uses_softplus).source == plain.source  # gone again


def test_register_gradient_overrides_a_built_in_rule_and_restores_it(mod):
    x = np.array([0.3, -0.7])

    def doubled(g, ans, x):
        return 2.0 * g * (1 - ans * ans)

    registration = ad.register_gradient(np.tanh, doubled)
    try:
        np.testing.assert_allclose(ad.grad(mod.uses_tanh)(x), 2.0 * (1 - np.tanh(x) ** 2))
        with pytest.raises(ad.NonDifferentiableError, match="no forward-mode"):
            ad.jvp(mod.uses_tanh)  # the old forward rule would disagree: set aside
    finally:
        registration.remove()
    np.testing.assert_allclose(ad.grad(mod.uses_tanh)(x), 1 - np.tanh(x) ** 2)
    registration.remove()  # a second time does nothing


def test_register_gradient_for_a_scipy_function(mod):
    special = pytest.importorskip("scipy.special")
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(ad.UnknownFunctionError, match="'dawsn' is not a function autodiff"):
        ad.grad(mod.uses_dawsn)

    def dawsn_vjp(g, ans, x):  # the Dawson integral: D'(x) = 1 - 2 x D(x)
        return g * (1.0 - 2.0 * x * ans)

    def dawsn_jvp(t, ans, x):
        return t * (1.0 - 2.0 * x * ans)

    with ad.register_gradient(special.dawsn, dawsn_vjp, jvp=dawsn_jvp):
        ours = ad.grad(mod.uses_dawsn)(x)
        np.testing.assert_allclose(ours, fd_grad(mod.uses_dawsn, (x,), 0), rtol=1e-7)
        u = np.array([1.0, 0.5, -2.0])
        _, slope = ad.jvp(mod.uses_dawsn)(x, u)
        np.testing.assert_allclose(slope, np.sum(ours * u))


# ----- stop_gradient and no_grad -----


def test_stop_gradient_passes_the_value_and_cuts_the_gradient(mod):
    x = np.array([1.5, -2.0])
    np.testing.assert_allclose(ad.grad(mod.detached)(x), x)
    assert ad.stop_gradient(x) is x


def test_no_grad_makes_the_block_constant(mod):
    x = np.array([1.5, -2.0, 0.5])
    scale = np.max(np.abs(x))
    np.testing.assert_allclose(ad.grad(mod.normalised)(x), np.full(3, 1.0 / scale))
    y = np.array([0.1, 0.2, 0.3])
    gx, gy = ad.grad(mod.no_grad_keeps_untouched_names, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, x * y)  # z is a constant, x itself is not
    np.testing.assert_allclose(gy, np.ones(3))
    expected = sum(np.sum(x) * i * 2 * x for i in range(3))
    np.testing.assert_allclose(ad.grad(mod.no_grad_loop)(x), expected)
    np.testing.assert_allclose(ad.grad(mod.no_grad_return)(x), 3 * x ** 2)
    np.testing.assert_allclose(ad.grad(mod.no_grad_return)(x + 100.0), 0.0)


def test_other_with_statements_are_still_rejected(mod):
    with pytest.raises(ad.UnsupportedSyntaxError,
                       match=r"toolkit_functions.py:\d+: 'with' statements are not supported, "
                             r"except 'with ad.no_grad\(\):'"):
        ad.grad(mod.other_with)


# ----- has_aux -----


def test_has_aux_returns_the_auxiliary_value_untouched(mod):
    rng = np.random.default_rng(1)
    x, W = rng.normal(size=3), rng.normal(size=(2, 3))
    gradient, h = ad.grad(mod.with_aux, has_aux=True)(x, W)
    np.testing.assert_allclose(h, np.tanh(W @ x))
    np.testing.assert_allclose(gradient, fd_grad(lambda x, W: mod.with_aux(x, W)[0], (x, W), 0),
                               rtol=1e-7)
    (loss, h2), gradient2 = ad.value_and_grad(mod.with_aux, has_aux=True)(x, W)
    assert loss == pytest.approx(np.sum(h ** 2))
    np.testing.assert_allclose(h2, h)
    np.testing.assert_allclose(gradient2, gradient)
    with pytest.raises(ad.AutodiffError, match=r"has_aux=True needs a function returning "
                                              r"\(loss, aux\)"):
        ad.grad(mod.aux_not_pair, has_aux=True)


# ----- derivatives of derivatives -----


def test_grad_of_grad_and_calling_a_derivative_inside_a_function(mod, tmp_path):
    second = ad.grad(ad.grad(mod.cubic))
    assert second(2.0) == pytest.approx(12.0)
    third = ad.grad(second)
    assert third(2.0) == pytest.approx(6.0)
    assert "def cubic_grad_grad(x)" in second.source
    user = UserModules(tmp_path)(
        "import numpy as np\nimport autodiff as ad\n\n"
        "def f(x):\n    return np.sum(x * x * x)\n\n"
        "df = ad.grad(f)\n\n"
        "def g(x):\n    return np.sum(df(x) * x)\n")
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(ad.grad(user.g)(x), 9 * x ** 2)
    assert "(in f_grad)" in ad.grad(user.g).source


def test_grad_of_a_looping_derivative_uses_forward_mode_over_it(mod):
    first = ad.grad(mod.looped)
    second = ad.grad(first)
    h = 1e-5
    expected = (first(0.7 + h) - first(0.7 - h)) / (2 * h)
    assert second(0.7) == pytest.approx(expected, rel=1e-6)
    assert "mode='fwd'" in second.source
