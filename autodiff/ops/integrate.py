"""``scipy.integrate``'s ODE solvers, differentiated by the adjoint method; ``quad`` run as
it is, with why a gradient reaching it is refused.

``odeint(func, y0, t, args=(...))`` and ``solve_ivp(fun, t_span, y0, t_eval=...,
args=(...))`` are ops. Generated code calls SciPy's solver as the user's code does; the
rules differentiate the *continuous* problem, solved by the same solver with the same
tolerances:

- reverse mode, by the adjoint method (as autograd's and JAX's ``odeint``): from the last
  output time back to the first, the augmented system ``y' = f``, ``a' = -a f_y``,
  ``p' = -a f_p`` is solved backwards, the adjoint ``a`` jumping by the output's
  adjoint at each output time; ``a`` at the initial time is the initial state's
  gradient, ``p`` the parameters', ``g_i . f(y_i, t_i)`` the output time ``t_i``'s and
  ``-a . f(y_0, t_0)`` the initial time's;
- forward mode, by the forward sensitivity equations: ``s' = f_y s + f_p p_dot`` beside
  ``y' = f``, from ``s = y0_dot - f(y0, t0) t0_dot``, plus ``f(y_i, t_i) t_i_dot`` at each
  output time.

The products ``a f_y``, ``a f_p`` and ``f_y s + f_p p_dot`` are autodiff's own
derivatives of the model function (``ad.vjp`` and ``ad.jvp`` of it, compiled once and
kept on it), which must therefore be a function autodiff reads the source of: one of
the user's module, or one defined in the differentiated code, made a function of its
own taking the values it reads from the code after ``args`` (``frontend/lifted.py``,
``op.lifts_functions``). The gradient is the exact derivative of the continuous
solution, solved to the tolerances given: it differs from the derivative of the numbers
the solver returned by about those tolerances. The helpers running the backward and
forward solves have no rules of their own: a second derivative is refused, naming them.

``quad`` chooses its points as it runs: a gradient reaching it is refused at the
user's call, with what to write instead (``registry.defer_without_rule``).

Registered when SciPy is installed; named once the user's code imports
``scipy.integrate`` (``registry.defer_alias``).
"""

from __future__ import annotations

import collections
import functools

import numpy as np
import scipy

from autodiff import tree
from autodiff.errors import AutodiffError, NonDifferentiableError
from autodiff.graph.ir import Const, Value
from autodiff.ops.registry import (
    OPS,
    TRANSFORMS,
    Lifted,
    NamedResults,
    Op,
    RunAsItIs,
    defer_alias,
    defer_without_rule,
    defop,
    helper_op,
    stub_taking,
)
from autodiff.ops.structures import field

# What generated code reads to call SciPy's solvers (scipy.integrate is imported by the
# user's code before a call reaches one of these ops).
SCIPY = {"scipy": scipy}

# ----- the problem a helper solves: the model, its arguments, the solver -----


def _is_number(value, integers: bool) -> bool:
    """Whether an argument of the model is one of its parameters: a float (an int too,
    which a differentiated argument may be, unless ``integers`` is false)."""
    dtype = np.asarray(value).dtype
    return np.issubdtype(dtype, np.inexact) or integers and (
        np.issubdtype(dtype, np.integer) and not isinstance(value, (bool, np.bool_)))


class _Model:
    """The user's model function, called as its solver calls it (``func(y, t, *args)``,
    or ``(t, y, *args)``), with the derivatives the rules need: the arguments of floats
    among ``args`` are its parameters."""

    def __init__(self, func, y_first: bool, args: tuple, integers: bool = True) -> None:
        self.func, self.y_first, self.args = func, y_first, tuple(args)
        self.params = [i for i, a in enumerate(self.args) if _is_number(a, integers)]
        self.integer_params = integers and any(
            not _is_number(self.args[i], False) for i in self.params)
        self.sizes = [np.size(self.args[i]) for i in self.params]
        self.wrt = (0 if y_first else 1, *(2 + i for i in self.params))

    @functools.cached_property
    def pull(self):
        """The model's VJP (compiled once, and kept on the function by autodiff)."""
        return TRANSFORMS["vjp"](self.func, wrt=self.wrt, jit=True)

    @functools.cached_property
    def push(self):
        """The model's JVP."""
        return TRANSFORMS["jvp"](self.func, wrt=self.wrt, jit=True)

    def arguments(self, y, t) -> tuple:
        return (y, t, *self.args) if self.y_first else (t, y, *self.args)

    def __call__(self, y, t) -> np.ndarray:
        return _flat(self.func(*self.arguments(y, t)))

    def products(self, y, t, a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``f(y, t)``, ``a f_y`` and ``a f_p`` (the parameters' parts flattened, joined)."""
        value = self.func(*self.arguments(y, t))
        grads = self.pull(*self.arguments(y, t), _like(value, a))
        grads = grads if isinstance(grads, tuple) else (grads,)
        return (_flat(value), _flat_like(grads[0], np.size(y)),
                _joined(grads[1:], self.sizes))

    def tangent(self, y, t, s, params_dot: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``f(y, t)`` and ``f_y s + f_p p_dot``."""
        value, derivative = self.push(*self.arguments(y, t), (s, *params_dot))
        return _flat(value), _flat_like(derivative, np.size(y))

    def gradients(self, joined: np.ndarray) -> tuple:
        """The parameters' gradients, in their shapes, from their parts joined; None for
        an argument that is no parameter."""
        out, start = [None] * len(self.args), 0
        for i, size in zip(self.params, self.sizes):
            part = joined[start:start + size]
            out[i] = part.reshape(np.shape(self.args[i])) if np.ndim(self.args[i]) else (
                float(part[0]))
            start += size
        return tuple(out)

    def without_integer_params(self) -> _Model:
        """The model whose parameters are its float arguments alone (an int it reads as
        a setting, a count, cannot be differentiated: its gradient is then None, which
        the derivative refuses where the int carries a gradient)."""
        return _Model(self.func, self.y_first, self.args, integers=False)

    def params_dot(self, args_dot) -> tuple:
        """The tangents of the parameters (zeros for none)."""
        args_dot = (None,) * len(self.args) if args_dot is None else tuple(args_dot)
        return tuple(np.zeros(np.shape(self.args[i])) if args_dot[i] is None
                     else np.asarray(args_dot[i], dtype=float) + np.zeros(np.shape(self.args[i]))
                     for i in self.params)


def _flat(value) -> np.ndarray:
    if isinstance(value, (np.ndarray, float, np.floating)):  # (most models: quickly)
        return np.ravel(np.asarray(value, dtype=float))
    leaves = tree.leaves(value)
    if len(leaves) == 1:
        return np.ravel(np.asarray(leaves[0], dtype=float))
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for leaf in leaves])


def _flat_like(value, size: int) -> np.ndarray:
    """A gradient or a tangent flattened, ``size`` long (a zero one may come as 0.0)."""
    flat = _flat(value) if value is not None else np.zeros(0)
    return flat if flat.size == size else np.broadcast_to(flat, (size,)).copy()


def _joined(parts, sizes) -> np.ndarray:
    if not sizes:
        return np.zeros(0)
    return np.concatenate([_flat_like(p, size) for p, size in zip(parts, sizes)])


def _like(value, flat: np.ndarray):
    """``flat`` in the structure and shapes of the model's result (an array, or a list
    such as ``[y[1], -y[0]]``): the seed of its VJP."""
    if isinstance(value, np.ndarray):
        return flat.reshape(value.shape)
    leaves, structure = tree.flatten(value)
    parts, start = [], 0
    for leaf in leaves:
        size = np.size(leaf)
        parts.append(flat[start:start + size].reshape(np.shape(leaf)))
        start += size
    return tree.unflatten(structure, parts)


class _Solver:
    """One of SciPy's solvers with the user's settings, for the rules' solves: between two
    times (the adjoint's intervals), and from one time to a sequence of them (the
    sensitivities). ``rtol`` and ``atol`` given per component of the state are widened to
    the larger state (``blocks``: how many copies of the state it holds, and how many
    more components)."""

    def __init__(self, kind: str, settings: dict) -> None:
        self.kind, self.settings = kind, settings

    def _options(self, blocks: int, extra: int) -> dict:
        options = {k: v for k, v in self.settings.items() if v is not None}
        for name in ("rtol", "atol"):
            if name in options and np.ndim(options[name]):
                per = np.asarray(options[name], dtype=float)
                options[name] = np.concatenate([*(per,) * blocks, np.full(extra, per.min())])
        return options

    def between(self, rhs, state, t0, t1, blocks: int, extra: int) -> np.ndarray:
        options = self._options(blocks, extra)
        if self.kind == "odeint":
            return scipy.integrate.odeint(rhs, state, [t0, t1], tfirst=True, **options)[-1]
        solution = scipy.integrate.solve_ivp(rhs, (t0, t1), state, **options)
        _check_success(solution)
        return solution.y[:, -1]

    def at(self, rhs, state, t0, times, blocks: int) -> np.ndarray:
        """The state at each of ``times`` (the first is ``t0`` for odeint), by rows."""
        options = self._options(blocks, 0)
        if self.kind == "odeint":
            return scipy.integrate.odeint(rhs, state, times, tfirst=True, **options)
        if len(times) == 0:
            return np.zeros((0, np.size(state)))
        solution = scipy.integrate.solve_ivp(rhs, (t0, times[-1]), state, t_eval=times,
                                             **options)
        _check_success(solution)
        return solution.y.T


def _check_success(solution) -> None:
    if not solution.success:
        raise AutodiffError(f"solve_ivp failed while differentiating: {solution.message}",
                            hint="loosen rtol/atol, or try another method= (BDF, Radau "
                            "or LSODA for a stiff problem)")


# ----- the adjoint and the sensitivities, shared by odeint and solve_ivp -----


def _with_settings(solve):
    """``solve(model, ...)``, again without the model's int parameters when autodiff
    cannot differentiate the model in them (an int it reads as a setting)."""

    @functools.wraps(solve)
    def solved(model: _Model, *args):
        try:
            return solve(model, *args)
        except AutodiffError:
            if not model.integer_params:
                raise
            return solve(model.without_integer_params(), *args)

    return solved


@_with_settings
def _adjoint(model: _Model, solver: _Solver, g, ys, times, t0, y0) -> tuple:
    """``(y0's, the output times', t0's, the parameters' gradients)`` of the outputs
    ``ys[i] = y(times[i])`` (by rows) receiving the adjoints ``g`` (rows alike)."""
    ys = np.asarray(ys, dtype=float).reshape(len(times), -1)
    g = np.broadcast_to(np.asarray(g, dtype=float).reshape(ys.shape) if np.size(g) == ys.size
                        else np.asarray(g, dtype=float), ys.shape)
    n, extra = ys.shape[1], sum(model.sizes)

    def rhs(t, state):
        f, a_fy, a_fp = model.products(state[:n], t, state[n:2 * n])
        return np.concatenate([f, -a_fy, -a_fp])

    a, joined = np.zeros(n), np.zeros(extra)
    times_bar = np.zeros(len(times))
    for i in range(len(times) - 1, -1, -1):
        a = a + g[i]
        times_bar[i] = g[i] @ model(ys[i], times[i])
        earlier = times[i - 1] if i else t0
        if times[i] != earlier:
            state = solver.between(rhs, np.concatenate([ys[i], a, joined]), times[i],
                                   earlier, 2, extra)
            a, joined = state[n:2 * n], state[2 * n:]
    y0 = np.ravel(np.asarray(y0, dtype=float))
    t0_bar = -(a @ model(y0, t0))
    return a, times_bar, t0_bar, model.gradients(joined)


@_with_settings
def _tangent(model: _Model, solver: _Solver, ys, times, t0, y0, y0_dot, times_dot, t0_dot,
             args_dot) -> np.ndarray:
    """The outputs' tangent (rows at ``times``) for these tangents of the initial state,
    the output times, the initial time and the arguments (None: zero)."""
    ys = np.asarray(ys, dtype=float).reshape(len(times), -1)
    n = ys.shape[1]
    y0 = np.ravel(np.asarray(y0, dtype=float))
    s0 = np.zeros(n) if y0_dot is None else np.ravel(np.asarray(y0_dot, dtype=float)) + (
        np.zeros(n))
    if t0_dot is not None:
        s0 = s0 - model(y0, t0) * t0_dot
    params_dot = model.params_dot(args_dot)

    def rhs(t, state):
        f, derivative = model.tangent(state[:n], t, state[n:], params_dot)
        return np.concatenate([f, derivative])

    rows = solver.at(rhs, np.concatenate([y0, s0]), t0, times, 2)[:, n:]
    if times_dot is not None:
        times_dot = np.broadcast_to(np.asarray(times_dot, dtype=float), (len(times),))
        rows = rows + np.array([model(ys[i], times[i]) * times_dot[i]
                                for i in range(len(times))]).reshape(rows.shape)
    return rows


# ----- odeint -----

_SECOND = ("it runs the solves of a derivative of an ODE solution (the adjoint or the "
           "sensitivities), which autodiff does not differentiate again: a second "
           "derivative through odeint or solve_ivp is not supported")


def _odeint_problem(func, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst):
    settings = {"rtol": rtol, "atol": atol, "mxstep": mxstep, "h0": h0, "hmax": hmax,
                "hmin": hmin}
    return _Model(func, not tfirst, args), _Solver("odeint", settings)


def odeint_adjoint(g, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin,
                   tfirst):
    """The gradients of odeint's ``y0``, ``t`` and ``args`` (by the adjoint method)."""
    model, solver = _odeint_problem(func, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst)
    times = np.asarray(times, dtype=float)
    y0_bar, times_bar, t0_bar, args_bar = _adjoint(model, solver, g, ans, times, times[0],
                                                   y0)
    times_bar[0] += t0_bar
    return (y0_bar.reshape(np.shape(y0)) if np.ndim(y0) else float(y0_bar[0]),
            times_bar.reshape(np.shape(times)), args_bar)


def odeint_tangent(ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst,
                   y0_dot, times_dot, args_dot):
    """The tangent of odeint's result for these tangents (None: zero), by the forward
    sensitivity equations."""
    model, solver = _odeint_problem(func, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst)
    times = np.asarray(times, dtype=float)
    t0_dot = None if times_dot is None else np.ravel(np.broadcast_to(
        np.asarray(times_dot, dtype=float), times.shape))[0]
    rows = _tangent(model, solver, ans, times, times[0], y0, y0_dot, times_dot, t0_dot,
                    args_dot)
    return rows.reshape(np.shape(ans))


def _second_derivative(named: dict, where: dict, name: str) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"'{name}' is not differentiated: {_SECOND}", **where,
        hint="differentiate the solution once; for higher derivatives write the integration "
        "as fixed steps in the code (RK4 in a for loop), which autodiff differentiates to "
        "any order")


def _solves(helper, values: tuple[str, ...]) -> None:
    """``helper`` as an op generated code calls: ``values`` are the parameters a gradient
    may reach (a second derivative), which it refuses with the reason (never a zero)."""
    op = helper_op(helper, diff=values, no_gradient=_SECOND, fresh=True, floating="always",
                   no_sympy="it runs a solver step by step: SymPy has no form of its result")
    op.opaque = True  # it calls the user's model: never run while compiling
    op.missing_rule = functools.partial(_second_derivative, name=helper.__name__)
    op.outside_tables = "written by the rules of odeint and solve_ivp"


_solves(odeint_adjoint, ("g", "ans", "y0", "times", "args"))
_solves(odeint_tangent, ("ans", "y0", "times", "args", "y0_dot", "times_dot", "args_dot"))


_ODEINT_FORMS = ("odeint is differentiated (by the adjoint method) when called with func, "
                 "y0, t, args= (a tuple), rtol=, atol=, mxstep=, h0=, hmax=, hmin= and "
                 "tfirst= alone; this call gives {}")


def _constant_default(value, default) -> bool:
    return value is default or isinstance(value, Const) and (
        type(value.value) is type(default) and value.value == default)


def _model_operand(func, args) -> tuple:
    """The model and the arguments the solver passes it: a function known while
    compiling, or one defined in the differentiated code (``Lifted``), which takes the
    values it reads from the code after ``args``."""
    args = _args_operand(args)
    if isinstance(func, Lifted):
        return func.function, (*args, *func.extras)
    if isinstance(func, Const) and callable(func.value):
        return func, args
    raise RunAsItIs  # a function known only when the code runs: called as it is


def _args_operand(args):
    if isinstance(args, Const) and isinstance(args.value, tuple):
        return tuple(Const(a) for a in args.value)
    if isinstance(args, Const) and args.value is None:
        return ()
    if not isinstance(args, tuple):
        raise RunAsItIs  # (odeint's args is a tuple)
    return args


def _odeint_call(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
                 mu=None, rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0,
                 ixpr=0, mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    others = {"Dfun": (Dfun, None), "col_deriv": (col_deriv, 0),
              "full_output": (full_output, 0), "ml": (ml, None), "mu": (mu, None),
              "tcrit": (tcrit, None), "ixpr": (ixpr, 0), "mxhnil": (mxhnil, 0),
              "mxordn": (mxordn, 12), "mxords": (mxords, 5), "printmessg": (printmessg, 0)}
    if any(not _constant_default(value, default) for value, default in others.values()):
        raise RunAsItIs  # (the reason stated for odeint says which forms have rules)
    func, args = _model_operand(func, args)
    return {"func": func, "y0": y0, "times": t, "args": args, "rtol": rtol,
            "atol": atol, "mxstep": mxstep, "h0": h0, "hmax": hmax, "hmin": hmin,
            "tfirst": tfirst}


@defop("odeint", "scipy.integrate.odeint(func, y0, times, args=args, rtol=rtol, atol=atol, "
       "mxstep=mxstep, h0=h0, hmax=hmax, hmin=hmin, tfirst=tfirst)",
       diff=("y0", "times", "args"), fresh=True, floating="always",
       no_sympy="a solver run step by step: SymPy has no form of its solution")
def odeint(func, y0, times, args=(), rtol=None, atol=None, mxstep=0, h0=0.0, hmax=0.0,
           hmin=0.0, tfirst=False): ...


odeint.runtime = SCIPY
odeint.lifts_functions = True
odeint.opaque = True  # it calls the user's model: never run while compiling
odeint.outside_tables = ("checked by the table of tests/ops/test_integrate_adjoint.py, "
                         "whose second derivatives are refused (the walk of test_registry.py "
                         "builds them)")


@odeint.defvjp
def _(g, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst):
    return odeint_adjoint(g, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin,
                          tfirst)


@odeint.defjvp("y0")
def _(t, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst):
    return odeint_tangent(ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin,
                          tfirst, t, None, None)


@odeint.defjvp("times")
def _(t, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst):
    return odeint_tangent(ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin,
                          tfirst, None, t, None)


@odeint.defjvp("args")
def _(t, ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin, tfirst):
    return odeint_tangent(ans, func, y0, times, args, rtol, atol, mxstep, h0, hmax, hmin,
                          tfirst, None, None, t)


defer_alias("scipy.integrate", "odeint", odeint, _odeint_call)
defer_without_rule("scipy.integrate", "odeint", _ODEINT_FORMS.format(
    "another of its arguments (full_output=, Dfun=, ...), or args= that is not a tuple"),
    "call odeint with those arguments alone where a gradient reaches it (the Jacobian "
    "Dfun= only helps the solver)")


# ----- solve_ivp -----

# What solve_ivp returns, as the code reads it (sol.y, sol.t, sol.success, ...).
OdeResult = collections.namedtuple(
    "OdeResult", "t y sol t_events y_events nfev njev nlu status message success")

_IVP_SETTINGS = ("method", "t_eval", "dense_output", "events", "vectorized", "args", "rtol",
                 "atol", "first_step", "max_step", "min_step")
_IVP_DEFAULTS = {"method": "RK45", "t_eval": None, "dense_output": False, "events": None,
                 "vectorized": False, "args": (), "rtol": None, "atol": None,
                 "first_step": None, "max_step": None, "min_step": None}
_IVP_PARAMS = ("fun", "t_span", "y0", *_IVP_SETTINGS)
_IVP_KERNEL = ("scipy.integrate.solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, "
               "dense_output=dense_output, events=events, vectorized=vectorized, args=args, "
               "rtol=rtol, atol=atol, first_step=first_step, max_step=max_step, "
               "min_step=min_step)")


def _ivp_stub(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=(), rtol=None, atol=None, first_step=None,
              max_step=None, min_step=None): ...


def _ivp_parts(named, builder):
    """solve_ivp's call: one node running the solver, which passes no gradient, and the
    fields the code reads from its result, ``y`` by an op with rules."""
    operands = tuple(named[p] for p in _IVP_PARAMS)
    solved = builder.emit(OPS["solve_ivp_routine"], operands)
    fields = {name: builder.emit(field(name), (solved,)) for name in
              ("nfev", "njev", "nlu", "status", "message", "success")}
    fields["y"] = builder.emit(OPS["solve_ivp_y"], (solved, *operands))
    t_eval = named["t_eval"]
    fields["t"] = (builder.emit(field("t"), (solved,)) if isinstance(t_eval, Const)
                   else builder.emit(OPS["asarray_cast"], (t_eval, Const(np.dtype(np.float64)))))
    for name in ("sol", "t_events", "y_events"):
        fields[name] = builder.emit(_undifferentiated(name), (solved, *operands))
    return NamedResults(tuple(fields[name] for name in OdeResult._fields), OdeResult)


_IVP_ITSELF = ("solve_ivp's call is built as a node running the solver and ops reading its "
               "result (sol.y carries the gradient)")


@defop("solve_ivp", _IVP_KERNEL, diff=("t_span", "y0", "t_eval", "args"),
       simplify=_ivp_parts, no_gradient=_IVP_ITSELF, no_sympy=_IVP_ITSELF)
def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=(), rtol=None, atol=None, first_step=None,
              max_step=None, min_step=None): ...


solve_ivp.outside_tables = "built as solve_ivp_routine and the ops reading its result"
solve_ivp.lifts_functions = True


@defop("solve_ivp_routine", _IVP_KERNEL, nondiff_output=True, fresh=True, floating=None,
       no_gradient="runs solve_ivp for the ops reading its result, which carry the gradient "
       "by their own rules", no_sympy="a solver run step by step")
def solve_ivp_routine(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                      events=None, vectorized=False, args=(), rtol=None, atol=None,
                      first_step=None, max_step=None, min_step=None): ...


solve_ivp_routine.runtime = SCIPY
solve_ivp_routine.opaque = True


def _ivp_refusal(named) -> str | None:
    """Why the rules of sol.y do not cover this call, or None."""
    for name, why in (("events", "the times of events= move with what is differentiated"),
                      ("vectorized", "the model is differentiated as it takes one state "
                                     "(vectorized=False)")):
        if not _constant_default(named[name], _IVP_DEFAULTS[name]):
            return f"solve_ivp is not differentiated with {name}=: {why}"
    if _constant_default(named["t_eval"], None):
        return ("solve_ivp is differentiated at the times t_eval= gives: without it, sol.y "
                "is at the times the solver chose as it ran")
    return None


_IVP_Y_KERNEL = "solution.y"


@defop("solve_ivp_y", _IVP_Y_KERNEL, diff=("t_span", "y0", "t_eval", "args"), fresh=False,
       floating="always", no_sympy="a solver run step by step: SymPy has no form of its "
       "solution")
def solve_ivp_y(solution, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                events=None, vectorized=False, args=(), rtol=None, atol=None,
                first_step=None, max_step=None, min_step=None): ...


solve_ivp_y.vjp_check = _ivp_refusal
solve_ivp_y.outside_tables = odeint.outside_tables


def _ivp_problem(fun, args, method, rtol, atol, first_step, max_step, min_step):
    # (first_step is the forward solve's: each of the rules' solves chooses its own)
    settings = {"method": method, "rtol": rtol, "atol": atol, "max_step": max_step,
                "min_step": min_step}
    return _Model(fun, False, args), _Solver("solve_ivp", settings)


def solve_ivp_adjoint(g, ans, fun, t_span, y0, t_eval, args, method, rtol, atol, first_step,
                      max_step, min_step):
    """The gradients of solve_ivp's ``t_span``, ``y0``, ``t_eval`` and ``args`` (by the
    adjoint method), from the adjoint ``g`` of ``sol.y`` (``ans``)."""
    model, solver = _ivp_problem(fun, args, method, rtol, atol, first_step, max_step,
                                 min_step)
    times = np.asarray(t_eval, dtype=float)
    t0 = float(t_span[0])
    y0_bar, times_bar, t0_bar, args_bar = _adjoint(
        model, solver, np.asarray(g, dtype=float).T, np.asarray(ans).T, times, t0, y0)
    return ((t0_bar, 0.0), y0_bar.reshape(np.shape(y0)) if np.ndim(y0) else float(y0_bar[0]),
            times_bar.reshape(np.shape(t_eval)), args_bar)


def solve_ivp_tangent(ans, fun, t_span, y0, t_eval, args, method, rtol, atol, first_step,
                      max_step, min_step, t_span_dot, y0_dot, t_eval_dot, args_dot):
    """The tangent of ``sol.y`` for these tangents (None: zero), by the forward
    sensitivity equations."""
    model, solver = _ivp_problem(fun, args, method, rtol, atol, first_step, max_step,
                                 min_step)
    times = np.asarray(t_eval, dtype=float)
    t0_dot = None if t_span_dot is None else float(np.asarray(t_span_dot[0]))
    rows = _tangent(model, solver, np.asarray(ans).T, times, float(t_span[0]), y0, y0_dot,
                    t_eval_dot, t0_dot, args_dot)
    return rows.T.reshape(np.shape(ans))


_solves(solve_ivp_adjoint, ("g", "ans", "t_span", "y0", "t_eval", "args"))
_solves(solve_ivp_tangent, ("ans", "t_span", "y0", "t_eval", "args", "t_span_dot", "y0_dot",
                            "t_eval_dot", "args_dot"))


@solve_ivp_y.defvjp
def _(g, ans, solution, fun, t_span, y0, method, t_eval, dense_output, events, vectorized,
      args, rtol, atol, first_step, max_step, min_step):
    return solve_ivp_adjoint(g, ans, fun, t_span, y0, t_eval, args, method, rtol, atol,
                             first_step, max_step, min_step)


@solve_ivp_y.defjvp("t_span")
def _(t, ans, solution, fun, t_span, y0, method, t_eval, dense_output, events, vectorized,
      args, rtol, atol, first_step, max_step, min_step):
    return solve_ivp_tangent(ans, fun, t_span, y0, t_eval, args, method, rtol, atol,
                             first_step, max_step, min_step, t, None, None, None)


@solve_ivp_y.defjvp("y0")
def _(t, ans, solution, fun, t_span, y0, method, t_eval, dense_output, events, vectorized,
      args, rtol, atol, first_step, max_step, min_step):
    return solve_ivp_tangent(ans, fun, t_span, y0, t_eval, args, method, rtol, atol,
                             first_step, max_step, min_step, None, t, None, None)


@solve_ivp_y.defjvp("t_eval")
def _(t, ans, solution, fun, t_span, y0, method, t_eval, dense_output, events, vectorized,
      args, rtol, atol, first_step, max_step, min_step):
    return solve_ivp_tangent(ans, fun, t_span, y0, t_eval, args, method, rtol, atol,
                             first_step, max_step, min_step, None, None, t, None)


@solve_ivp_y.defjvp("args")
def _(t, ans, solution, fun, t_span, y0, method, t_eval, dense_output, events, vectorized,
      args, rtol, atol, first_step, max_step, min_step):
    return solve_ivp_tangent(ans, fun, t_span, y0, t_eval, args, method, rtol, atol,
                             first_step, max_step, min_step, None, None, None, t)


@functools.cache
def _undifferentiated(name: str) -> Op:
    """``sol.NAME`` of a field that moves with what is differentiated but has no rule
    (the dense output ``sol.sol``, the events): a gradient reaching it is refused."""
    op = Op(f"solve_ivp_{name}", stub_taking(["solution", *_IVP_PARAMS]), f"solution.{name}",
            diff=("t_span", "y0", "t_eval", "args"), fresh=False, floating=None,
            no_gradient=f"sol.{name} of solve_ivp is not differentiated (only sol.y, at "
            "the times t_eval= gives, is)",
            no_sympy="a solver run step by step")
    op.outside_tables = "built for a field of solve_ivp's result"
    return op


def _solve_ivp_call(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                    events=None, vectorized=False, args=None, **options):
    if set(options) - {"rtol", "atol", "first_step", "max_step", "min_step"}:
        raise RunAsItIs  # (jac=, lband=, ...: the reason stated for solve_ivp says so)
    if isinstance(events, Lifted) or isinstance(events, tuple) and any(
            isinstance(e, Lifted) for e in events):
        raise TypeError("an event function defined inside the differentiated function is "
                        "not supported: define it at module level")
    fun, args = _model_operand(fun, args if args is not None else Const(None))
    return {"fun": fun, "t_span": t_span, "y0": y0, "method": method, "t_eval": t_eval,
            "dense_output": dense_output, "events": events, "vectorized": vectorized,
            "args": args, **options}


defer_alias("scipy.integrate", "solve_ivp", solve_ivp, _solve_ivp_call)
defer_without_rule("scipy.integrate", "solve_ivp", "solve_ivp is differentiated (by the "
                   "adjoint method) when called with fun, t_span, y0, method=, t_eval=, "
                   "args= (a tuple), rtol=, atol=, first_step=, max_step=, min_step= alone; "
                   "this call gives another of its options (jac=, ...), or args= that is "
                   "not a tuple", "call solve_ivp with those arguments alone where a "
                   "gradient reaches it")
defer_without_rule("scipy.integrate", "quad", "its points are chosen as it runs, which "
                   "autodiff cannot see", "sum the integrand over fixed points in the code "
                   "(np.trapezoid(f(t), t) is differentiated)")
