"""scipy.stats's distributions, as users call them, against finite differences.

Each case keeps its inputs inside the distribution's support and its parameters
inside their domain: ``"positive"`` draws from (0.5, 2.5) (scales, shapes, degrees
of freedom, rates), ``"unit"`` from (-0.9, 0.9) (so ``0.5 + 0.5 * x`` is in (0.05,
0.95), inside beta's support). Several parameters come from one input ``y`` by
indexing (``y[:4]`` a location of shape (4,), ``1.0 + y[4] ** 2`` a scalar scale),
so that x of shape (3, 4) broadcasts against both.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import OPS, Op
from tests.ops.table import ops_reached, shared_module, signatures, table_test

stats = pytest.importorskip("scipy.stats")

PREAMBLE = """import scipy.special
import scipy.stats
from scipy import stats
from scipy.stats import multivariate_normal, norm


def spd(a):
    return a @ np.transpose(a) + np.eye(np.shape(a)[0])
"""

CASES = [
    # norm, every method, with loc and scale as SciPy takes them
    ("scipy.stats.norm.logpdf(x)", [(2, 3)]),
    ("norm.logpdf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("stats.norm.logpdf(x, loc=y, scale=1.5)", [(3, 4), (4,)]),
    ("norm.logpdf(1.5, loc=x, scale=y)", [(3,), (3,)], "positive"),
    ("norm.pdf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("norm.pdf(x, scale=y)", [(), (2,)], "positive"),
    ("norm.cdf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("norm.logcdf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("norm.sf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("norm.logsf(x, y[:4], 1.0 + y[4] ** 2)", [(3, 4), (5,)]),
    ("norm.logcdf(x, scale=y) + norm.cdf(y, x)", [(3,), (3,)], "positive"),
    # t, in x, df, loc and scale
    ("stats.t.logpdf(x, 3.0 + y[0] ** 2, y[1:5], 0.5 + y[5] ** 2)", [(3, 4), (6,)]),
    ("stats.t.pdf(x, 3.0 + y[0] ** 2, y[1:5], 0.5 + y[5] ** 2)", [(3, 4), (6,)]),
    ("stats.t.logpdf(x, df=y, loc=0.5, scale=2.0) + stats.t.pdf(y, x)", [(3,), (3,)],
     "positive"),
    # gamma and chi2 on x > loc, beta on loc < x < loc + scale
    ("stats.gamma.logpdf(x + 1.0, y[:4], 0.5 * y[4] - 0.5, y[5])", [(3, 4), (6,)], "positive"),
    ("stats.gamma.pdf(x + 1.0, y[:4], 0.5 * y[4] - 0.5, y[5])", [(3, 4), (6,)], "positive"),
    ("stats.gamma.logpdf(x, a=y) + stats.gamma.pdf(y, x, scale=2.0)", [(3,), (3,)], "positive"),
    ("stats.chi2.logpdf(x + 1.0, y[:4], 0.5 * y[4] - 0.5, y[5])", [(3, 4), (6,)], "positive"),
    ("stats.chi2.pdf(x + 1.0, y[:4], 0.5 * y[4] - 0.5, y[5])", [(3, 4), (6,)], "positive"),
    ("stats.chi2.logpdf(x, df=y) + stats.chi2.pdf(y, x)", [(3,), (3,)], "positive"),
    ("stats.beta.logpdf(0.5 + 0.5 * x, 1.0 + y[:4] ** 2, 1.5 + y[4] ** 2)", [(3, 4), (5,)],
     "unit"),
    ("stats.beta.pdf(x, 1.5 + y[0], 1.0 + y[1], 0.5 * y[2] - 1.5, 0.5 * y[3] + 3.5)",
     [(3,), (4,)], "unit"),
    ("stats.beta.logpdf(0.25 * x, a=y, b=1.5) + stats.beta.pdf(0.5, x, y)", [(3,), (3,)],
     "positive"),
    # the CDFs of t, gamma, chi2 and beta in x, loc and scale (their shapes are constants)
    ("stats.t.cdf(x, 3.5, y[:4], 0.5 + y[4] ** 2)", [(3, 4), (5,)]),
    ("stats.t.cdf(x, df=np.array([2.0, 5.0, 9.0]), loc=0.5, scale=2.0) + stats.t.cdf(y, 4.0, x)",
     [(3,), (3,)]),
    ("stats.gamma.cdf(x + 1.0, np.array([0.5, 1.5, 2.0, 3.0]), 0.5 * y[0] - 0.5, y[1])",
     [(3, 4), (2,)], "positive"),
    ("stats.chi2.cdf(x + 1.0, 3.0, 0.5 * y[0] - 0.5, y[1]) + stats.chi2.cdf(y[2], df=2.5)",
     [(3, 4), (3,)], "positive"),
    ("stats.beta.cdf(x, 1.5, 2.5, 0.5 * y[0] - 1.5, 0.5 * y[1] + 3.5)", [(3,), (2,)], "unit"),
    # poisson in its rate, counts given as integer arrays (0 among them) and numbers
    ("stats.poisson.logpmf(np.array([[0, 1, 2, 5], [3, 0, 1, 2], [7, 4, 0, 1]]), x)",
     [(3, 4)], "positive"),
    ("stats.poisson.pmf(np.array([0, 2, 3]), x, loc=1) + stats.poisson.logpmf(2, mu=x)",
     [(3,)], "positive"),
    ("stats.poisson.pmf(np.array([[0], [2]]), x)", [(3,)], "positive"),
    # multivariate_normal: n points or one, with a mean or none; spd(a) is a @ a.T + I,
    # and a matrix that is not symmetric is read through its lower triangle, as SciPy does
    ("multivariate_normal.logpdf(x, y[:3], spd(np.reshape(y[3:], (3, 3))))",
     [(4, 3), (12,)]),
    ("multivariate_normal.logpdf(x[0], x[1], 3.0 * np.eye(3) + y)", [(2, 3), (3, 3)], "unit"),
    ("multivariate_normal.pdf(x, mean=y[:, 0], cov=spd(y))", [(4, 2), (2, 2)]),
    ("multivariate_normal.pdf(x, cov=spd(y))", [(2, 3), (3, 3)], "unit"),
    ("multivariate_normal.logpdf(x, cov=3.0 * np.eye(2) + y)", [(1, 2), (2, 2)], "unit"),
    ("scipy.stats.multivariate_normal.logpdf(x, y[:1], spd(np.reshape(y[1:], (1, 1))))",
     [(3, 1), (2,)]),
    # dirichlet, x on the simplex (its components along the first axis) by a softmax
    ("stats.dirichlet.logpdf(scipy.special.softmax(x), y)", [(3,), (3,)], "positive"),
    ("stats.dirichlet.logpdf(scipy.special.softmax(x, axis=0), 0.5 + y * y)", [(3, 4), (3,)]),
    ("stats.dirichlet.pdf(scipy.special.softmax(x, axis=0), y)", [(3, 2), (3,)], "positive"),
    ("stats.dirichlet.pdf(scipy.special.softmax(x, axis=0), alpha=y)", [(2, 1), (2,)],
     "positive"),
]


test_stats = table_test(CASES, seed=1900, preamble=PREAMBLE, routes=("sympy",))


def _module():
    return shared_module(signatures(CASES), PREAMBLE)


def test_every_stats_op_is_checked_by_the_table():
    """As tests/ops/test_registry.py, for this module's ops: each is reached by a case,
    its rules by the derivatives the checks build, and each has a SymPy form or says
    why it has none."""
    from autodiff.ops import stats as module

    ours = {op.name for op in vars(module).values() if isinstance(op, Op)}
    seen = ops_reached(CASES, PREAMBLE)
    assert len(ours) == 28
    assert not ours - seen, f"stats ops no case goes through: {sorted(ours - seen)}"
    assert all(OPS[name].sympy is not None or OPS[name].no_sympy for name in ours)


def test_a_bound_method_is_one_alias_however_often_it_is_read():
    from autodiff.ops import registry

    assert stats.norm.logpdf is not stats.norm.logpdf  # a new method object at each read
    assert registry.callable_binding(stats.norm.logpdf)[0] is OPS["norm_logpdf"]
    # the same function bound to another object is another name (or none)
    other = type(stats.norm)(name="other")
    assert other.logpdf.__func__ is stats.norm.logpdf.__func__
    assert registry.callable_binding(other.logpdf) is None
    assert registry.callable_binding(stats.norm.pdf)[0] is OPS["norm_pdf"]


def test_a_gradient_reaching_poisson_counts_is_refused_with_the_reason(user_module):
    module = user_module("""
        import numpy as np
        from scipy.stats import poisson


        def f(x, mu):
            return np.sum(poisson.logpmf(2.0 * x, mu, loc=0))


        def shifted(x, mu):
            return np.sum(poisson.pmf(3, mu, loc=x))
    """)
    x, mu = np.array([1.0, 1.5]), np.array([0.5, 2.0])
    for fn, name in ((module.f, "k"), (module.shifted, "loc")):
        message = (rf"passes no gradient to its argument '{name}' \(the count k - loc is an "
                   "integer")
        with pytest.raises(ad.NonDifferentiableError, match=message) as info:
            ad.grad(fn)(x, mu)
        assert info.value.filename == module.__file__
        assert info.value.lineno == (7 if name == "k" else 11)
        with pytest.raises(ad.NonDifferentiableError, match=message):
            ad.jvp(fn, wrt=0)(x, mu, np.ones(2))
    # in the rate alone, the counts carrying no gradient, it is differentiable
    ad.check_grad(module.f, x, mu, wrt=1)


@pytest.fixture
def gaussian(user_module):
    return user_module("""
        import numpy as np
        from scipy.stats import multivariate_normal


        def diagonal(x, variances):
            return np.sum(multivariate_normal.logpdf(x, np.zeros(2), variances))


        def singular(x, cov):
            return multivariate_normal.logpdf(x, cov=cov, allow_singular=True)
    """)


def test_multivariate_normal_takes_a_covariance_matrix_and_says_so(gaussian):
    # SciPy takes a vector of variances too; the gradient is given for a matrix only,
    # and the call says how to write one (the value itself is SciPy's, as ever)
    x, variances = np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([1.5, 2.0])
    with pytest.raises(ValueError, match=r"pass cov as a matrix \(np.diag\(variances\)") as info:
        ad.grad(gaussian.diagonal, wrt=1)(x, variances)
    assert info.value.filename == gaussian.__file__ and info.value.lineno == 7
    with pytest.raises(ValueError, match="a covariance matrix of shape"):
        ad.jvp(gaussian.diagonal, wrt=1)(x, variances, np.ones(2))


def test_multivariate_normal_with_allow_singular_is_refused(gaussian):
    with pytest.raises(ad.AutodiffError, match="allow_singular=True is not supported") as info:
        ad.grad(gaussian.singular, wrt=1)(np.ones(2), np.eye(2))
    assert info.value.filename == gaussian.__file__ and info.value.lineno == 11


def test_dirichlet_takes_every_component_and_says_so(user_module):
    module = user_module("""
        import numpy as np
        from scipy.stats import dirichlet


        def f(x, alpha):
            return dirichlet.logpdf(x, alpha)
    """)
    x, alpha = np.array([0.2, 0.5]), np.array([1.5, 2.0, 3.0])  # SciPy's K - 1 components
    assert np.isclose(module.f(x, alpha), stats.dirichlet.logpdf(np.array([0.2, 0.5, 0.3]), alpha))
    with pytest.raises(ValueError, match="pass every component of x, the last one too") as info:
        ad.grad(module.f, wrt=1)(x, alpha)
    assert info.value.filename == module.__file__ and info.value.lineno == 7


def test_a_gaussian_negative_log_likelihood_of_parameters_in_a_dict(user_module):
    module = user_module("""
        import numpy as np
        from scipy import stats
        from scipy.stats import norm


        def nll(params, x, y):
            mean = x @ params["w"] + params["b"]
            sigma = np.exp(params["log_sigma"])
            fit = -np.sum(norm.logpdf(y, loc=mean, scale=sigma))
            prior = -np.sum(stats.t.logpdf(params["w"], df=params["df"], scale=2.0))
            return fit + prior
    """)
    rng = np.random.default_rng(19)
    x = rng.normal(size=(20, 3))
    y = x @ np.array([0.5, -1.0, 2.0]) + 0.3 * rng.normal(size=20)
    params = {"w": rng.normal(size=3), "b": 0.1, "log_sigma": np.log(0.5), "df": 4.0}
    report = ad.check_grad(module.nll, params, x, y)
    assert report.passed
    assert {"params['w']", "params['b']", "params['log_sigma']", "params['df']"} <= {
        row.name for row in report.rows}, [row.name for row in report.rows]
    gradient = ad.grad(module.nll)(params, x, y)
    # the gradient in the mean is the sum of the standardised residuals over sigma
    residual = (y - x @ params["w"] - params["b"]) / 0.5
    np.testing.assert_allclose(gradient["b"], -np.sum(residual) / 0.5, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(module.nll, jit=True)(params, x, y)["log_sigma"],
                               gradient["log_sigma"], rtol=1e-12)


def test_numba_refuses_scipy_stats_at_the_users_line(user_module):
    pytest.importorskip("numba")
    module = user_module("""
        import numpy as np
        from scipy.stats import norm


        def f(x):
            return np.sum(norm.logcdf(x, 0.5, 2.0))
    """)
    with pytest.raises(ad.AutodiffError, match="jit='numba' cannot compile") as raised:
        ad.grad(module.f, jit="numba")(np.array([0.5, -1.0]))
    assert raised.value.filename == module.__file__ and raised.value.lineno == 7


@pytest.mark.parametrize("call", ["stats.t.cdf(x, x)", "stats.gamma.cdf(1.0, x)",
                                  "stats.chi2.cdf(2.0, df=x)", "stats.beta.cdf(0.5, 2.0, x)"])
def test_a_gradient_reaching_the_shape_of_a_cdf_is_refused(user_module, call):
    module = user_module(f"""
        import numpy as np
        from scipy import stats


        def f(x):
            return np.sum({call})
    """)
    x = np.array([2.0, 3.0])
    with pytest.raises(ad.NonDifferentiableError, match="shape has no closed form") as info:
        ad.grad(module.f)(x)
    assert (info.value.filename, info.value.lineno) == (module.__file__, 7)
    with pytest.raises(ad.NonDifferentiableError, match="shape has no closed form"):
        ad.jvp(module.f)(x, np.ones(2))


def test_a_distribution_frozen_in_the_code_calls_the_ops_of_its_methods(user_module):
    module = user_module("""
        import numpy as np
        from scipy import stats
        from scipy.stats import multivariate_normal, norm


        def nll(params, x):
            dist = norm(params["mu"], np.exp(params["log_sigma"]))
            prior = stats.t(3.0, loc=0.0)
            return (-np.sum(dist.logpdf(x)) - prior.logpdf(params["mu"])
                    + np.sum(norm(0.0, scale=2.0).cdf(x * params["mu"])))


        def mvn(mean, root):
            cov = root @ root.T + np.eye(2)
            return np.sum(multivariate_normal(mean, cov).logpdf(np.array([[0.1, 0.2], [0.3, -0.4]])))


        def sampled(x):
            return np.sum(norm(x, 1.0).rvs(3) * x)


        def returned(x):
            return norm(x, 1.0)
    """)
    params, x = {"mu": 0.3, "log_sigma": -0.2}, np.array([0.1, 0.5, -0.7])
    ad.check_grad(module.nll, params, x, wrt=0)
    expected = ad.grad(module.nll)(params, x)
    for name, value in ad.grad(module.nll, jit=True)(params, x).items():
        np.testing.assert_allclose(value, expected[name])
    ad.check_grad(module.mvn, np.array([0.2, 0.1]), np.array([[1.0, 0.0], [0.3, 0.8]]),
                  wrt=(0, 1))
    with pytest.raises(ad.AutodiffError, match=r"'norm\(x, 1.0\).rvs\(\)' on the distribution"
                       ) as info:
        ad.grad(module.sampled)(0.5)
    assert (info.value.filename, info.value.lineno) == (module.__file__, 20)
    with pytest.raises(ad.AutodiffError, match="must return a number or an array"):
        ad.grad(module.returned)(0.5)
