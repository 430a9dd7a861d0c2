"""scipy.special's ops (and math.gamma, math.lgamma) against finite differences.

Each case keeps its inputs inside the function's domain: ``"unit"`` draws from
(-0.9, 0.9), so ``0.5 + 0.5 * x`` is in (0.05, 0.95) for logit and ndtri and
``1.0 + x`` in (0.1, 1.9) for erfcinv; ``"positive"`` draws from (0.5, 2.5), away
from the poles of the gamma function.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import OPS, Op
from tests.helpers import check_against_finite_differences, random_array
from tests.ops.table import case_ids, ops_reached, shared_module, signatures, table_test

special = pytest.importorskip("scipy.special")

PREAMBLE = "import scipy.special"

CASES = [
    ("scipy.special.expit(x)", [(2, 3)]),
    ("scipy.special.expit(x)", [()]),
    ("scipy.special.logit(0.5 + 0.5 * x)", [(4,)], "unit"),
    ("scipy.special.erf(x)", [(2, 3)]),
    ("scipy.special.erfc(x)", [(4,)]),
    ("scipy.special.erfinv(x)", [(4,)], "unit"),
    ("scipy.special.erfcinv(1.0 + x)", [(4,)], "unit"),
    ("scipy.special.ndtr(x)", [(4,)]),
    ("scipy.special.log_ndtr(x)", [(2, 3)]),
    ("scipy.special.ndtri(0.5 + 0.5 * x)", [(4,)], "unit"),
    ("scipy.special.gammaln(x)", [(2, 3)], "positive"),
    ("scipy.special.gamma(x)", [(2, 3)], "positive"),
    # between the poles -3 and -2, where gamma is positive and gammaln is log|gamma|
    ("scipy.special.gammaln(0.4 * x - 2.5)", [(4,)], "unit"),
    ("scipy.special.gamma(0.4 * x - 2.5) + scipy.special.rgamma(0.4 * x - 1.5)", [(4,)], "unit"),
    ("scipy.special.digamma(x)", [(4,)], "positive"),
    ("scipy.special.psi(x)", [()], "positive"),
    ("scipy.special.polygamma(2, x)", [(4,)], "positive"),
    ("scipy.special.polygamma(np.array([0, 1, 3]), x)", [(2, 3)], "positive"),
    ("scipy.special.polygamma(1, x)", [(2, 1)], "positive"),
    ("scipy.special.polygamma(np.array([[0], [2]]), x)", [(3,)], "positive"),
    ("scipy.special.rgamma(x)", [(4,)], "positive"),
    ("scipy.special.multigammaln(x + 1.5, 3)", [(4,)], "positive"),
    ("scipy.special.multigammaln(x, 1)", [()], "positive"),
    ("scipy.special.multigammaln(x + 1.0, 2)", [None], "positive"),
    ("scipy.special.beta(x, y)", [(2, 3), (3,)], "positive"),
    ("scipy.special.betaln(x, y)", [(3,), (2, 3)], "positive"),
    ("scipy.special.xlogy(x, y)", [(2, 3), (3,)], "positive"),
    ("scipy.special.xlog1py(x, y)", [(3,), (2, 3)], "positive"),
    ("scipy.special.entr(x)", [(4,)], "positive"),
    ("scipy.special.kl_div(x, y)", [(2, 3), (3,)], "positive"),
    ("scipy.special.i0(x)", [(4,)]),
    ("scipy.special.i1(x)", [(2, 3)]),
    ("scipy.special.i0e(x)", [(4,)]),
    ("scipy.special.i1e(x)", [(2, 3)]),
    ("scipy.special.logsumexp(x)", [(5,)]),
    ("scipy.special.logsumexp(x, axis=1)", [(2, 3, 4)]),
    ("scipy.special.logsumexp(x, axis=(0, 2), keepdims=True)", [(2, 3, 4)]),
    ("scipy.special.logsumexp(x, -1, keepdims=True)", [(3, 4)]),
    ("scipy.special.logsumexp(x, axis=0, b=y)", [(3, 4), (4,)], "positive"),
    ("scipy.special.logsumexp(x, b=y, keepdims=True)", [(3,), (2, 3)], "positive"),
    ("scipy.special.logsumexp(x, axis=1, b=2.0 + x)", [(2, 3)]),
    ("scipy.special.softmax(x)", [(5,)]),
    ("scipy.special.softmax(x, axis=1)", [(2, 3, 4)]),
    ("scipy.special.softmax(x, axis=(0, 2))", [(2, 3, 4)]),
    ("scipy.special.log_softmax(x)", [(5,)]),
    ("scipy.special.log_softmax(x, axis=-1)", [(3, 4)]),
    ("scipy.special.log_softmax(x, axis=(0, 1))", [(2, 3, 2)]),
    # Python floats, and the math twins
    ("math.gamma(x)", [None], "positive"),
    ("math.lgamma(x)", [None], "positive"),
    ("scipy.special.gammaln(x) * scipy.special.expit(y)", [None, None], "positive"),
    # Bessel functions: integer orders over negative x too, others for x > 0
    ("scipy.special.j0(x)", [(2, 3)]),
    ("scipy.special.j1(x)", [(4,)]),
    ("scipy.special.jn(np.array([0, 1, 3]), x)", [(2, 3)]),
    ("scipy.special.jv(2.5, x)", [(4,)], "positive"),
    ("scipy.special.jv(np.array([[0.5], [1.5]]), x)", [(3,)], "positive"),
    ("scipy.special.y0(x)", [(4,)], "positive"),
    ("scipy.special.y1(x)", [(2, 3)], "positive"),
    ("scipy.special.yn(2, x)", [(4,)], "positive"),
    ("scipy.special.yn(np.array([0, 1, 3]), x)", [(2, 3)], "positive"),
    ("scipy.special.yv(1.5, x)", [(4,)], "positive"),
    ("scipy.special.iv(np.array([0, 1, 2]), x)", [(2, 3)]),
    ("scipy.special.iv(0.5, x)", [(4,)], "positive"),
    ("scipy.special.ive(np.array([0, 1, 2]), x)", [(2, 3)]),
    ("scipy.special.ive(1.5, x)", [(4,)], "positive"),
    ("scipy.special.k0(x)", [(4,)], "positive"),
    ("scipy.special.k1(x)", [(2, 3)], "positive"),
    ("scipy.special.kn(np.array([0, 1, 3]), x)", [(2, 3)], "positive"),
    ("scipy.special.kv(0.5, x)", [(4,)], "positive"),
    ("scipy.special.kv(np.array([[0.0], [2.5]]), x)", [(3,)], "positive"),
    ("scipy.special.k0e(x)", [(4,)], "positive"),
    ("scipy.special.k1e(x)", [(2, 3)], "positive"),
    ("scipy.special.kve(np.array([0.5, 1.0, 2.0]), x)", [(2, 3)], "positive"),
    # incomplete gamma and beta functions, in x
    ("scipy.special.gammainc(2.5, x)", [(4,)], "positive"),
    ("scipy.special.gammainc(np.array([[0.5], [1.0], [3.0]]), x)", [(4,)], "positive"),
    ("scipy.special.gammaincc(np.array([0.5, 1.5, 4.0]), x)", [(2, 3)], "positive"),
    ("scipy.special.betainc(2.0, 3.5, 0.5 + 0.5 * x)", [(4,)], "unit"),
    ("scipy.special.betainc(np.array([0.5, 1.0, 2.5]), np.array([[1.5], [0.7]]), 0.5 + 0.5 * x)",
     [(3,)], "unit"),
    ("scipy.special.rel_entr(x, y)", [(2, 3), (3,)], "positive"),
    ("scipy.special.softplus(x)", [(2, 3)]),
    ("scipy.special.log_expit(x)", [(4,)]),
    ("scipy.special.log1p(x) * scipy.special.expm1(x)", [(2, 3)], "positive"),
    ("scipy.special.jv(1, x) * scipy.special.k0(y) + scipy.special.gammainc(2.0, x)",
     [None, None], "positive"),
    ("scipy.special.erfcx(x)", [(2, 3)]), ("scipy.special.erfcx(3.0 * x)", [()]),
    ("scipy.special.erfcx(x)", [None], "positive"),
    ("np.i0(x)", [(2, 3)]), ("np.i0(x - x)", [(3,)]),  # NumPy's i0, its rule SciPy's i1
]


test_special = table_test(CASES, seed=900, preamble=PREAMBLE)


def _module():
    return shared_module(signatures(CASES), PREAMBLE)


# The SymPy route of tests/ops/table.py, with SymPy's derivative turned into code by
# SciPy's printer (ad.symbolic_grad's own code is NumPy's, which has no erfinv, gamma,
# polygamma or Bessel functions).
@pytest.mark.parametrize("index", range(len(CASES)), ids=case_ids(CASES))
def test_sympy_forms(index):
    sp = pytest.importorskip("sympy")
    _, shapes, *rest = CASES[index]
    rng = np.random.default_rng(900 + index)
    args = [random_array(rng, shape, rest[0] if rest else "real") for shape in shapes]
    loss = getattr(_module(), f"loss_{index}")
    weights = rng.uniform(0.5, 1.5, size=np.shape(getattr(_module(), f"value_{index}")(*args)))
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    names = ["x", "y"][:len(args)] + ["w"]
    shapes = {n: np.shape(a) for n, a in zip(names, [*args, weights]) if np.ndim(a)}
    symbolic = ad.symbolic_grad(loss, wrt=wrt, shapes=shapes)
    elements = [e for g in symbolic.gradients for e in np.ravel(np.asarray(g, dtype=object))]
    symbols = [np.asarray(symbolic.symbols[n], dtype=object).tolist() for n in names]
    values = [np.asarray(a).tolist() for a in [*args, weights]]
    theirs = np.array(sp.lambdify(symbols, elements, modules=["scipy", "numpy"])(*values),
                      dtype=float)
    ours = ad.grad(loss, wrt=wrt)(*args, weights)
    ours = np.concatenate([np.ravel(g) for g in (ours if isinstance(wrt, tuple) else (ours,))])
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-12)


def test_every_special_op_is_checked_by_the_table():
    """As tests/ops/test_registry.py, for this module's ops: each is reached by a case,
    its rules by the derivatives the checks build, and each has a SymPy form."""
    from autodiff.ops import special as module

    ours = {op.name for op in vars(module).values() if isinstance(op, Op)}
    seen = ops_reached(CASES, PREAMBLE)
    assert len(ours) == 53
    assert not ours - seen, f"special ops no case goes through: {sorted(ours - seen)}"
    assert all(OPS[name].sympy is not None for name in ours)


@pytest.fixture
def user(user_module):
    return user_module("""
        import numpy as np
        import scipy.special


        def entropy(x, y):
            return np.sum(scipy.special.xlogy(x, y) + scipy.special.xlog1py(x, y))


        def signed(x):
            return scipy.special.logsumexp(x, return_sign=True)[0]


        def normal(x):
            return np.sum(scipy.special.log_ndtr(x))
    """)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_xlogy_takes_no_gradient_in_y_where_x_is_0(user):
    x = np.array([0.0, 0.0, 2.0])
    y = np.array([0.0, 1.5, 0.5])
    dx, dy = ad.grad(user.entropy, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dy, [0.0, 0.0, 2.0 / 0.5 + 2.0 / 1.5])
    np.testing.assert_allclose(dx[1:], [np.log(1.5) + np.log(2.5), np.log(0.5) + np.log(1.5)])
    _, slope = ad.jvp(user.entropy, wrt=1)(x, y, np.ones(3))
    assert slope == dy.sum()


def test_log_ndtr_stays_finite_in_the_left_tail(user):
    x = np.array([-30.0, -10.0, 0.0])
    gradient = ad.grad(user.normal)(x)
    # phi(x) / Phi(x): directly where Phi(x) is a float64, else -x - 1/x + 2/x**3 + ...
    direct = np.exp(-0.5 * x[1:] ** 2) / np.sqrt(2 * np.pi) / special.ndtr(x[1:])
    np.testing.assert_allclose(gradient[1:], direct, rtol=1e-12)
    np.testing.assert_allclose(gradient[0], 30.0 + 1 / 30.0 - 2 / 30.0 ** 3, rtol=1e-7)


def test_logsumexp_and_the_softmax_are_stable_for_large_inputs(user_module):
    module = user_module("""
        import numpy as np
        import scipy.special


        def f(x):
            c = np.array([0.3, -0.7])
            return (scipy.special.logsumexp(x) + np.sum(scipy.special.softmax(x) * c)
                    + np.sum(scipy.special.log_softmax(x) * c))


        def g(x):
            return scipy.special.logsumexp(x) + scipy.special.softmax(x)[0]
    """)
    # Each term's derivatives are the same at x and at x - 1000, where nothing overflows.
    x = np.array([1000.0, 1001.0])
    np.testing.assert_allclose(ad.grad(module.f)(x), ad.numeric_grad(module.f, x - 1000.0),
                               rtol=1e-7)
    np.testing.assert_allclose(ad.hvp(module.f)(x, np.array([1.0, -0.5])),
                               ad.hvp(module.f)(x - 1000.0, np.array([1.0, -0.5])), rtol=1e-9)
    # a masked entry (-inf) takes no gradient through logsumexp and the softmax
    masked = ad.grad(module.g)(np.array([0.5, -1.0, -np.inf]))
    assert np.all(np.isfinite(masked)) and masked[2] == 0.0


def test_logsumexp_with_return_sign_is_refused_at_the_users_line(user):
    with pytest.raises(ad.AutodiffError, match="return_sign=True") as raised:
        ad.grad(user.signed)(np.array([1.0, 2.0]))
    assert raised.value.filename == user.__file__ and raised.value.lineno == 11


def test_numba_refuses_scipy_at_the_users_line(user):
    pytest.importorskip("numba")
    with pytest.raises(ad.AutodiffError, match=r"jit='numba' cannot compile the call to "
                       r"scipy\.special\.log_ndtr .*not SciPy's") as raised:
        ad.grad(user.normal, jit="numba")(np.array([0.5, -1.0]))
    assert raised.value.filename == user.__file__ and raised.value.lineno == 15


def test_without_scipy_autodiff_works_and_has_no_scipy_ops(tmp_path):
    script = tmp_path / "without_scipy.py"
    script.write_text(textwrap.dedent("""
        import sys
        sys.modules["scipy"] = None  # as if SciPy were not installed
        import numpy as np
        import autodiff as ad
        from autodiff.ops import OPS


        def f(x):
            return np.tanh(x) * x


        assert not {"erf", "logsumexp", "gamma", "softmax"} & set(OPS)
        assert "scipy" not in sys.modules or sys.modules["scipy"] is None
        assert ad.grad(f)(0.5) == np.tanh(0.5) + 0.5 * (1 - np.tanh(0.5) ** 2)
        print("ok")
    """))
    root = Path(__file__).resolve().parents[2]  # this checkout's autodiff, not another
    done = subprocess.run([sys.executable, str(script)], check=False, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_gradient_reaching_a_parameter_without_a_rule_is_refused():
    # polygamma has a rule for x only; an order carrying a gradient would drop it
    def order_from_x(x):
        return np.sum(special.polygamma(np.exp(x[0] - 0.5), x))  # an order 1.0, from x

    with pytest.raises(ad.NonDifferentiableError, match="'polygamma' passes no gradient to "
                       "its argument 'n'") as info:
        ad.grad(order_from_x)(np.array([0.5, 1.5]))
    assert "special.polygamma" in info.value.source_line
    assert "ad.stop_gradient" in info.value.hint
    with pytest.raises(ad.NonDifferentiableError, match="'polygamma' passes no gradient"):
        ad.jvp(order_from_x)(np.array([0.5, 1.5]), np.ones(2))


def test_the_symbolic_route_evaluates_scipy_functions():
    # SymPy writes the derivatives with polygamma, besseli, erfinv, ...: ad.symbolic_grad
    # evaluates them with SciPy, and agrees with autodiff's own
    def composite(x):
        return np.sum(special.gammaln(x) + special.erfinv(x / 4.0) + special.i0(x)
                      + special.beta(x, 2.0) * special.digamma(x + 1.0))

    x = np.array([0.5, 1.5, 2.5])
    np.testing.assert_allclose(ad.symbolic_grad(composite, shapes={"x": (3,)})(x),
                               ad.grad(composite)(x), rtol=1e-10)


def test_bessel_functions_at_zero_and_far_out(user_module):
    module = user_module("""
        import numpy as np
        import scipy.special


        def near_zero(x, w):
            orders = np.array([0, 1, 2])
            return np.sum(w * (scipy.special.j0(x) + scipy.special.j1(x) * scipy.special.i1(x)
                               + scipy.special.jv(orders, x) + scipy.special.iv(orders, x)
                               + scipy.special.ive(orders + 1, x)))


        def far_out(x, w):
            return np.sum(w * (scipy.special.ive(1.5, x) + scipy.special.kve(0.5, x)
                               + scipy.special.k0e(x) * scipy.special.k1e(x)
                               + scipy.special.ive(np.array([0, 1, 2]), -x)))
    """)
    # x = 0 exactly, where J_v' = J_{v-1} - v J_v / x would be 0 / 0
    zero = np.zeros(3)
    gradient = check_against_finite_differences(module.near_zero, [zero, np.ones(3)],
                                                second_order=True)[0]
    # at 0, J0' = (J1 I1)' = 0, J_v' = I_v' = (0, 1/2, 0) and Ie_{v+1}' = (1/2, 0, 0)
    np.testing.assert_allclose(gradient, [0.5, 1.0, 0.0], atol=1e-15)
    # far out, where iv overflows and kv underflows, the scaled forms' derivatives stay finite
    x = np.array([50.0, 700.0, 2000.0])
    gradient = check_against_finite_differences(module.far_out, [x, np.ones(3)],
                                                second_order=True)[0]
    assert np.all(np.isfinite(gradient))


def test_a_gradient_reaching_a_bessel_order_is_refused():
    def order_from_x(x):
        return np.sum(special.jv(x[0], x))

    with pytest.raises(ad.NonDifferentiableError, match=r"'jv' passes no gradient to its "
                       r"argument 'v' \(the order of a Bessel function takes no gradient"):
        ad.grad(order_from_x)(np.array([0.5, 1.5]))
    with pytest.raises(ad.NonDifferentiableError, match="'jv' passes no gradient"):
        ad.jvp(order_from_x)(np.array([0.5, 1.5]), np.ones(2))
    # a constant order, or one with its gradient stopped, is fine
    assert np.isfinite(ad.grad(lambda x: np.sum(special.jv(ad.stop_gradient(x[0]), x)))(
        np.array([0.5, 1.5]))).all()


def test_incomplete_gamma_and_beta_at_the_ends_of_their_domains():
    def gamma_tails(x):
        return np.sum(special.gammainc(np.array([1.0, 2.0, 0.5]), x)
                      + 2.0 * special.gammaincc(np.array([1.0, 3.0, 1.0]), x))

    def beta_ends(x):
        return np.sum(special.betainc(np.array([1.0, 2.5]), np.array([3.0, 1.0]), x))

    # P(1, x) = 1 - exp(-x): its density is 1 at 0 (x^0, not 0 * log(0)); P(2, x)'s is 0
    # there; P(0.5, x)'s is infinite
    np.testing.assert_array_equal(ad.grad(gamma_tails)(np.zeros(3)), [1.0 - 2.0, 0.0, np.inf])
    # I_x(1, 3) = 1 - (1 - x)^3 has slope 3 at 0; I_x(2.5, 1) = x^2.5 has slope 2.5 at 1
    np.testing.assert_allclose(ad.grad(beta_ends)(np.array([0.0, 1.0])), [3.0, 2.5])
    _, slope = ad.jvp(beta_ends)(np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(slope, 5.5)


def test_a_gradient_reaching_an_incomplete_functions_shape_is_refused():
    def shape_from_x(x):
        return np.sum(special.gammainc(x[0], x) + special.betainc(2.0, 3.0, x / 4.0))

    def beta_shape_from_x(x):
        return np.sum(special.betainc(2.0, x[1], x / 4.0))

    for fn, name, param in ((shape_from_x, "gammainc", "a"), (beta_shape_from_x, "betainc", "b")):
        with pytest.raises(ad.NonDifferentiableError, match=rf"'{name}' passes no gradient to "
                           rf"its argument '{param}' \(the shape parameters take no gradient"):
            ad.grad(fn)(np.array([0.5, 1.5]))
        with pytest.raises(ad.NonDifferentiableError, match=f"'{name}' passes no gradient"):
            ad.jvp(fn)(np.array([0.5, 1.5]), np.ones(2))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_rel_entr_takes_no_gradient_in_y_where_x_is_0_and_the_logistic_tails_are_finite():
    def relative(x, y):
        return np.sum(special.rel_entr(x, y))

    def tails(x):
        return np.sum(special.softplus(x) + special.log_expit(x))

    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.5, 0.5])
    dx, dy = ad.grad(relative, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dy, [0.0, 0.0, -4.0])
    assert dx[1] == -np.inf and dx[2] == np.log(4.0) + 1
    # far in either tail the slope of softplus + log_expit is 1
    np.testing.assert_array_equal(ad.grad(tails)(np.array([-800.0, 800.0])), [1.0, 1.0])
    np.testing.assert_array_equal(ad.hvp(tails)(np.array([-800.0, 800.0]), np.ones(2)), [0, 0])


def test_the_symbolic_route_evaluates_bessel_and_incomplete_functions():
    # SymPy's besselj, bessely, besselk, lowergamma, betainc_regularized, ... are SciPy's
    def composite(x):
        return np.sum(special.j0(x) + special.jv(1.5, x) + special.yn(2, x) + special.ive(1, x)
                      + special.kve(2, x) + special.k1(x) + special.gammainc(2.5, x)
                      + special.gammaincc(1.5, x) + special.betainc(2.0, 3.0, x / 4.0)
                      + special.rel_entr(x, 2.0) + special.softplus(x) + special.log_expit(x))

    x = np.array([0.5, 1.5, 2.5])
    np.testing.assert_allclose(ad.symbolic_grad(composite, shapes={"x": (3,)})(x),
                               ad.grad(composite)(x), rtol=1e-10)
