"""scipy.integrate's odeint and solve_ivp, differentiated by the adjoint method (reverse
mode) and the forward sensitivity equations (forward mode), against central differences
in float64 and closed forms.

The solves are tight (rtol = atol = 1e-10, or 1e-12), so that the derivative of the
continuous problem the rules compute and the central differences of the solver's
numbers agree to about 1e-7. The table checks reverse and forward mode, jit=True and
that the second derivative is refused; the tests after it the closed form of
exponential decay, every output time, each of solve_ivp's methods, a stiff problem,
the tolerances reaching the backward solve, and the refusals.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.graph.ir import walk
from autodiff.ops import OPS
from tests.helpers import NoSecondOrder, check_against_finite_differences, check_with_jit
from tests.ops.table import shared_module, signatures, table_test

integrate = pytest.importorskip("scipy.integrate")

PREAMBLE = """import numpy as np
from scipy.integrate import odeint, solve_ivp
import scipy.integrate

T = np.linspace(0.0, 1.5, 6)


def decay(y, t, k):
    return -k * y


def forced(t, y, a, b):
    return np.array([y[1], -a * y[0] - b * y[1] + np.sin(t)])


def lotka_volterra(y, t, p):
    return [p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]]
"""

_SECOND = NoSecondOrder("is not differentiated: it runs the solves of a derivative of an "
                        "ODE solution")

TIGHT = "rtol=1e-10, atol=1e-10"

CASES = [
    # every output time, in y0, the parameters passed through args= and the times
    (f"odeint(decay, x, T, args=(1.0 + y ** 2,), {TIGHT})", [(3,), None], "real", _SECOND),
    (f"odeint(decay, x[0], np.cumsum(y), args=(1.5,), {TIGHT})", [(1,), (4,)], "positive",
     _SECOND),
    (f"odeint(lotka_volterra, x, T, args=(y,), {TIGHT})", [(2,), (4,)], "positive", _SECOND),
    (f"odeint(forced, x, T, args=(y[0], y[1]), tfirst=True, {TIGHT})", [(2,), (2,)],
     "positive", _SECOND),
    # sol.y at t_eval, in y0, args, t_eval and t_span's start
    (f"solve_ivp(forced, (0.0, 2.0), x, t_eval=T, args=(y[0], y[1]), {TIGHT}).y",
     [(2,), (2,)], "positive", _SECOND),
    ("solve_ivp(forced, (x[0] - 2.0, 3.0), x, t_eval=np.sort(y), args=(1.0, 0.5), "
     f"method='DOP853', {TIGHT}).y", [(2,), (3,)], "positive", _SECOND),
]

test_integrate = table_test(CASES, seed=3000, preamble=PREAMBLE)


def test_every_integrate_op_is_checked_by_the_table():
    """Each op of ops/integrate.py is in a derivative the table's checks build (its
    second derivatives are refused, so tests/ops/test_registry.py's walk over every
    derivative of a case is not for this table)."""
    module = shared_module(signatures(CASES), PREAMBLE)
    seen = set()
    for index, (_, arity) in enumerate(signatures(CASES)):
        loss = getattr(module, f"loss_{index}")
        for derivative in (ad.grad(loss, wrt=(0, 1)), ad.jvp(loss, wrt=(0, 1))):
            seen.update(node.op.name for graph in (derivative.original_graph,
                                                   derivative.graph)
                        for node in walk(graph.nodes) if hasattr(node, "op"))
    for name in ("odeint", "odeint_adjoint", "odeint_tangent", "solve_ivp_routine",
                 "solve_ivp_y", "solve_ivp_adjoint", "solve_ivp_tangent"):
        assert name in seen, name
        assert OPS[name].no_sympy


MODELS = PREAMBLE + """

def decay_loss(y0, k, t):
    return np.sum(odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10) ** 2)


def oscillator(t, y, w, c):
    return np.array([y[1], -w ** 2 * y[0] - c * y[1]])


def ivp_loss(y0, p, t_eval, t0, method):
    sol = solve_ivp(oscillator, (t0, 3.0), y0, method=method, t_eval=t_eval,
                    args=(p[0], p[1]), rtol=1e-10, atol=1e-12)
    return np.sum(np.cos(sol.y)) + np.sum(sol.t)


def stiff(t, y, a):
    return -a * (y - np.cos(t))


def stiff_loss(y0, a, t_eval):
    sol = solve_ivp(stiff, (0.0, 1.0), y0, method="BDF", t_eval=t_eval, args=(a,),
                    rtol=1e-10, atol=1e-12)
    return np.sum(sol.y ** 2)


def weighted_by_times(y0, t_eval):
    sol = solve_ivp(stiff, (0.0, 1.0), y0, t_eval=t_eval, args=(2.0,), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y * sol.t)
"""


@pytest.fixture
def models(user_module):
    return user_module(MODELS)


def test_exponential_decay_matches_its_closed_form_at_every_output_time(models):
    # y(t) = y0 exp(-k t): the loss sums y0^2 exp(-2 k t) over all output times
    y0, k, t = np.array([1.0, -2.0]), 0.7, np.array([0.0, 0.4, 1.0, 1.7])
    dy0, dk, dt = ad.grad(models.decay_loss, wrt=(0, 1, 2))(y0, k, t)
    e = np.exp(-2 * k * t)
    s = np.sum(y0 ** 2)
    np.testing.assert_allclose(dy0, 2 * y0 * np.sum(e), rtol=1e-8)
    np.testing.assert_allclose(dk, -2 * s * np.sum(t * e), rtol=1e-8)
    # each output time's own derivative; the first is also the initial time
    np.testing.assert_allclose(dt[1:], -2 * k * s * e[1:], rtol=1e-8)
    np.testing.assert_allclose(dt[0], 2 * k * s * np.sum(e[1:]), rtol=1e-8)
    check_against_finite_differences(models.decay_loss, [y0, k, t], wrt=(0, 1, 2))


@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA", "BDF", "Radau"])
def test_solve_ivp_with_each_method(models, method):
    y0, p = np.array([1.0, 0.5]), np.array([1.3, 0.2])
    t_eval = np.linspace(0.5, 2.5, 5)
    check_against_finite_differences(
        lambda y0, p, t_eval, t0: models.ivp_loss(y0, p, t_eval, t0, method),
        [y0, p, t_eval, 0.1], wrt=(0, 1, 2, 3), rtol=1e-5, atol=1e-6)


def test_a_stiff_problem_with_bdf(models):
    args = [np.array([2.0]), 800.0, np.linspace(0.1, 0.9, 4)]
    check_against_finite_differences(models.stiff_loss, args, wrt=(0, 1, 2), rtol=1e-5,
                                     atol=1e-7)


def test_sol_t_is_t_eval_and_carries_its_gradient(models):
    args = [np.array([1.0]), np.array([0.2, 0.6, 0.9])]
    check_against_finite_differences(models.weighted_by_times, args, wrt=(0, 1))


def test_parameters_that_are_ints_and_ints_that_are_settings(user_module):
    module = user_module(PREAMBLE + """

def first(y, t, k, n):
    return -k * np.sum(y[:n]) * np.ones(len(y))


def loss(k, y0):
    return np.sum(odeint(decay, y0, T, args=(k,), rtol=1e-10, atol=1e-10))


def with_setting(k, y0):
    return np.sum(odeint(first, y0, T, args=(k, 2), rtol=1e-10, atol=1e-10))
""")
    # an int argument differentiated (a float gradient), an int the model reads as a count
    y0 = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(ad.grad(module.loss)(2, y0),
                               ad.numeric_grad(module.loss, 2.0, y0), rtol=1e-6)
    check_against_finite_differences(module.with_setting, [0.5, y0], wrt=(0, 1))


def test_jit_runs_the_solver_as_it_is(models):
    check_with_jit(models.decay_loss, np.array([1.0, 2.0]), 0.5, np.linspace(0.0, 1.0, 4),
                   wrt=(0, 1, 2))
    with pytest.raises(ad.AutodiffError, match="jit='numba' cannot compile the call to "
                       "scipy.integrate.odeint"):
        ad.grad(models.decay_loss, jit="numba")(np.array([1.0]), 0.5, np.linspace(0, 1, 3))


def test_the_solver_and_its_settings_reach_the_backward_solves(user_module, monkeypatch):
    module = user_module(PREAMBLE + """

def solved(y0, k):
    return np.sum(odeint(decay, y0, T, args=(k,), rtol=1e-9, atol=1e-11, mxstep=700))


def stiff_decay(t, y, k):
    return -k * y


def ivp(y0, k):
    sol = solve_ivp(stiff_decay, (0.0, 2.0), y0, method="Radau", t_eval=T, args=(k,),
                    rtol=1e-9, atol=1e-11)
    return np.sum(sol.y)
""")
    y0 = np.array([1.0])
    derivatives = [(ad.grad(module.solved, wrt=(0, 1)), "odeint"),
                   (ad.jvp(module.solved, wrt=(0, 1)), "odeint"),
                   (ad.grad(module.ivp, wrt=(0, 1)), "solve_ivp"),
                   (ad.jvp(module.ivp, wrt=(0, 1)), "solve_ivp")]
    for derivative, name in derivatives:
        arguments = (y0, 0.5) if "grad" in derivative.__name__ else (y0, 0.5, (y0, 1.0))
        derivative(*arguments)  # compiled (and the solver bound) before the spy
        calls = []
        solve = getattr(integrate, name)

        def spy(*args, solve=solve, calls=calls, **kwargs):
            calls.append(kwargs)
            return solve(*args, **kwargs)

        monkeypatch.setattr(integrate, name, spy)
        derivative(*arguments)
        monkeypatch.undo()
        assert len(calls) > 1, "the derivative's own solves"
        settings = {"rtol": 1e-9, "atol": 1e-11}
        settings.update({"mxstep": 700} if name == "odeint" else {"method": "Radau"})
        for call in calls:
            assert {k: call.get(k) for k in settings} == settings, call


def test_the_gradient_is_the_continuous_problems_to_the_tolerance_given(user_module):
    # with loose tolerances, the gradient is the continuous problem's to about rtol
    module = user_module(PREAMBLE + """

def loose(k):
    return np.sum(odeint(decay, 1.0, T, args=(k,), rtol=1e-4, atol=1e-6))
""")
    k, t = 0.8, np.linspace(0.0, 1.5, 6)
    exact = -np.sum(t * np.exp(-k * t))
    np.testing.assert_allclose(ad.grad(module.loose)(k), exact, rtol=1e-3)


def test_a_model_defined_in_the_differentiated_function_takes_what_it_reads(user_module):
    # the values it reads from the code become its last parameters, passed with args=,
    # so they get their gradients (never a zero for k)
    module = user_module(PREAMBLE + """

def closure(k, y0):
    return np.sum(odeint(lambda y, t: -k * y, y0, T, rtol=1e-10, atol=1e-10) ** 2)


def nested(a, b, y0):
    c = a * b

    def rhs(t, y, w):
        z = -c * y + w * np.sin(t)
        return z

    sol = solve_ivp(rhs, (0.0, 2.0), y0, t_eval=T, args=(b,), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y ** 2)


def with_args(k):
    return np.sum(odeint(lambda y, t, k: -k * y, 1.0, T, args=(k,), rtol=1e-10,
                         atol=1e-10))


def reads_a_dict(params):
    return np.sum(odeint(lambda y, t: -params["k"] * y, 1.0, T))
""")
    y0, t = np.array([1.0, 2.0]), module.T
    dk, _ = check_against_finite_differences(module.closure, [0.5, y0], wrt=(0, 1))
    np.testing.assert_allclose(dk, -2 * np.sum(y0 ** 2) * np.sum(t * np.exp(-t)), rtol=1e-8)
    check_against_finite_differences(module.nested, [0.5, 0.8, y0], wrt=(0, 1, 2))
    check_against_finite_differences(module.with_args, [0.5])
    assert "odeint(model, y0, T, args=(k,)" in ad.grad(module.closure).source
    # a lambda passed to a helper of another module that calls the solver: its names are
    # its own module's (SCALE) and its function's (k)
    user_module("""
        from scipy.integrate import odeint
        SCALE = 2.0

        def solve_with(f, y0, t):
            return odeint(f, y0, t, rtol=1e-10, atol=1e-10)
    """, name="ode_helpers")
    caller = user_module(PREAMBLE + """
from ode_helpers import solve_with

SCALE = 3.0


def loss(k, y0):
    return np.sum(solve_with(lambda y, t: -k * SCALE * y, y0, T))
""")
    dk = check_against_finite_differences(caller.loss, [0.5, y0], wrt=(0, 1))[0]
    np.testing.assert_allclose(dk, -3.0 * np.sum(y0) * np.sum(t * np.exp(-1.5 * t)),
                               rtol=1e-8)
    with pytest.raises(ad.AutodiffError, match=r"passed to 'odeint' reads 'params', a dict, "
                       r"an object or a function of the code(.|\n)*read the arrays out of"):
        ad.grad(module.reads_a_dict)({"k": 0.5})


def test_the_forms_without_rules_are_refused_on_the_gradient_path(user_module):
    module = user_module(PREAMBLE + """


def off_the_path(k):
    y = odeint(decay, 1.0, T, args=(2.0,), full_output=True)[0]
    return k * np.sum(y)


def full(k):
    y, info = odeint(decay, 1.0, T, args=(k,), full_output=True)
    return np.sum(y)


def no_t_eval(k):
    return np.sum(solve_ivp(forced, (0.0, 1.0), np.ones(2), args=(k, 1.0)).y)


def crossing(t, y, a, b):
    return y[0]


def events(k):
    sol = solve_ivp(forced, (0.0, 1.0), np.ones(2), t_eval=T[:3], args=(k, 1.0),
                    events=crossing)
    return np.sum(sol.y)


def dense(k):
    sol = solve_ivp(forced, (0.0, 1.0), np.ones(2), t_eval=T[:3], args=(k, 1.0),
                    dense_output=True)
    return np.sum(sol.sol(0.5))


def dense_y(k):
    sol = solve_ivp(forced, (0.0, 1.0), np.ones(2), t_eval=T[:3], args=(k, 1.0),
                    dense_output=True, rtol=1e-10, atol=1e-10)
    return np.sum(sol.y) * sol.success
""")
    # off the gradient path, any form runs as it is
    np.testing.assert_allclose(ad.grad(module.off_the_path)(0.5),
                               np.sum(np.exp(-2.0 * np.linspace(0.0, 1.5, 6))), rtol=1e-6)
    with pytest.raises(ad.UnknownFunctionError, match="'odeint' is not differentiated: "
                       r"odeint is differentiated \(by the adjoint method\) when called"):
        ad.grad(module.full)(0.5)
    for mode in (ad.grad, lambda f: lambda k: ad.jvp(f)(k, 1.0)):
        with pytest.raises(ad.NonDifferentiableError, match="differentiated at the times "
                           "t_eval= gives"):
            mode(module.no_t_eval)(0.5)
    with pytest.raises(ad.NonDifferentiableError, match="not differentiated with events="):
        ad.grad(module.events)(0.5)
    with pytest.raises(ad.AutodiffError, match="sol.sol"):
        ad.grad(module.dense)(0.5)
    check_against_finite_differences(module.dense_y, [0.5])
