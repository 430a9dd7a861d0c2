"""``scipy.integrate``'s solvers: run as they are, with no rule, and why.

An ODE solver (``odeint``, ``solve_ivp``) chooses its steps by the error it estimates
as it runs, and a quadrature (``quad``) its points: autodiff cannot see those steps,
and builds no adjoint of them. A gradient reaching one is refused at the user's call,
with what to write instead: the integration as fixed steps in the differentiated
code (Euler, RK4), which autodiff differentiates exactly, step by step. Registered
when SciPy is installed; named once the user's code imports ``scipy.integrate``.
"""

from __future__ import annotations

from autodiff.ops.registry import defer_without_rule

_STEPS = ("its steps are chosen by the error it estimates as it runs, which autodiff "
          "cannot see: it builds no adjoint of them")
_FIXED_STEPS = ("integrate with fixed steps written in the code, which autodiff "
                "differentiates exactly: y = y + h * f(y, t) (Euler), or RK4's four stages, "
                "in a for loop over the times")

defer_without_rule("scipy.integrate", "odeint", _STEPS, _FIXED_STEPS)
defer_without_rule("scipy.integrate", "solve_ivp", _STEPS, _FIXED_STEPS)
defer_without_rule("scipy.integrate", "quad", "its points are chosen as it runs, which "
                   "autodiff cannot see", "sum the integrand over fixed points in the code "
                   "(np.trapezoid(f(t), t) is differentiated)")
