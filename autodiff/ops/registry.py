"""The three registries: ops, their kernels, their gradient rules.

An :class:`Op` is a name in the graph with a parameter list (taken from a stub
function's signature), a kernel (a Python expression template over the
parameter names, emitted by codegen) and optionally a VJP rule: a plain NumPy
function ``rule(g, ans, *params)`` returning one gradient per differentiable
parameter. Rules are parsed by the frontend and inlined into the derivative.

Python callables reach ops through aliases: ``np.sin`` and ``math.sin`` both
name ``sin``; ``x.sum(axis=1)`` is a method alias of ``sum``; ``x.T`` an
attribute alias of ``transpose``. A bound method is an alias too
(``scipy.stats.norm.logpdf``): each read of it makes a new method object, so it is
known by its object and its function (see :func:`callable_key`).

>>> from autodiff.ops import registry
>>> registry.callable_binding(__import__("numpy").tanh)[0].name
'tanh'
"""

from __future__ import annotations

import copy
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

from autodiff.graph.nodes import Const as _Const
from autodiff.graph.nodes import SliceSpec as _SliceSpec
from autodiff.graph.nodes import Value as _Value
from autodiff.ops.shape_rules import ShapeRule, broadcast

_OPERANDS = (_Value, _Const, _SliceSpec)  # what a call's arguments are while compiling

_EMPTY = inspect.Parameter.empty


class Lifted:
    """A function defined in the differentiated code, passed to an op that calls it when
    the derivative runs (``op.lifts_functions``): ``function``, a constant, is a Python
    function of its own that takes ``extras``, the operands of the values it reads from
    the code, after its own parameters (see ``frontend/lifted.py``)."""

    __slots__ = ("extras", "function")

    def __init__(self, function: Any, extras: tuple) -> None:
        self.function, self.extras = function, extras


class NamedResults(tuple):
    """Several results an op's ``simplify`` gives for one call (``np.linalg.eigh``), read
    as the named tuple NumPy returns (``kind``: ``EighResult``): ``w, v = ...``,
    ``result.eigenvalues``."""

    def __new__(cls, results: tuple, kind: type) -> NamedResults:  # noqa: PYI034
        made = super().__new__(cls, results)
        made.kind = kind
        return made


class Op:
    """One primitive: signature, kernel, gradient rule and a few static facts.

    - ``diff``: parameters a gradient flows into (the rule returns one per entry);
    - ``nondiff_output``: the result never carries a gradient (comparisons, shapes);
    - ``no_gradient``: why no gradient flows through the op, stated where it is defined:
      required of an op with parameters that has no ``diff`` (or ``nondiff_output``),
      and of one missing a rule for a ``diff`` parameter (a gradient reaching that
      parameter is then an error, which gives this reason); see tests/ops/test_registry.py;
      an op with every rule may state it to say why its parameters outside ``diff`` take
      none (the order of a Bessel function), the reason a gradient reaching one is refused;
    - ``fresh``: the result is a new array that aliases none of the inputs;
    - ``shape``: how the result's shape follows from the inputs' (a rule of
      ``ops.shape_rules``: ``shape_like("a")``, ``broadcast("x1", "x2")``, ...);
    - ``floating``: ``"always"``, ``"inputs"`` (floating if an input is) or ``None``;
    - ``simplify``: ``fn(named_args) -> operand | None``, a rewrite tried at build time;
    - ``impl``: a Python callable used to fold the op when every input is constant;
    - ``zeros``: how an adjoint that is exactly zero somewhere (a ``where``'s, for the
      branch it did not select) passes through the op in the backward sweep:
      ``"first"`` (linear in its first operand, moving or summing its elements),
      ``"sum"`` (a sum of its operands), ``"branches"`` (a where of its last two),
      ``"product"``/``"quotient"`` (rewritten to ``keep_zeros`` then, so ``0 * inf``
      stays 0); see reverse._keep_zeros;
    - ``gradients_keep_zeros``: its VJP's gradients are exactly zero where it did not
      select an operand (``where``; ``select``, whose choices' gradients are items of
      the list its rule gives; ``maximum``, ``clip``; the NaN-skipping reductions at the
      NaNs they skip) or where its adjoint is zero (the zero-keeping ops), or a
      function of its named operands saying when (``getitem``: for a mask); see
      ``transforms/zeros.py``;
    - ``truth_values``: its result holds truth values (``np.isnan``, ``a < b``), or, for
      ``"operands"``, does when its operands do (``~mask``, ``m1 & m2``): indexing by
      it is a mask;
    - ``list_adjoints``: its rules give a list operand's adjoint as a list already;
    - ``jvp``: ``"same"`` when its JVP is its VJP with the tangent for the adjoint (an
      elementwise op of one operand: both are ``g * f'(x)``); ``"linear"`` when it is
      linear in each differentiable parameter, so that the JVP of one is the op itself
      applied to that parameter's tangent (autograd's ``def_linear``); ``"lockstep"``
      for an op on a list or a tape: forward mode runs the op itself on the tangents
      of its operands beside it, step by step (a tangent list grows as the list does);
      ``"structure"`` for an op building a dict, a list or an object of its operands:
      its tangent is the same structure of their tangents (``None`` stays ``None``,
      and ``like``, the argument it copies kinds from, stays itself);
    - ``sympy``: its SymPy form, ``fn(*params) -> value`` on SymPy values (see
      ``ops.sympy_forms``), or ``no_sympy``: why it has none;
    - ``math_form``: its name in Python's ``math``, used on Python floats by
      specialised code; ``math_total``: that function gives a number for every finite
      float (``math.cos``; not ``math.sqrt``, ``math.exp``, which raise where NumPy's
      gives nan or inf), so a rule of an op the user called through ``math`` calls it
      through ``math`` too (``math.sin``'s adjoint is ``g * math.cos(x)``): a loop over
      Python floats keeps Python floats, not NumPy scalars; ``update_operator``: the
      augmented assignment (``"+"`` for ``x1 += x2``) specialised code may use;
      ``ufunc_out``: a unary ufunc that can write into its operand
      (``np.tanh(t, out=t)``);
    - ``recompute``: ``"always"`` or ``"scalar"`` (when its result is a scalar): cheap
      enough to recompute in the backward sweep rather than store;
    - ``shape_params``: parameters read for their shape alone; ``query``: its result
      depends on its operands' shapes and dtypes alone;
    - ``real_rules``: its rules hold for real operands alone (``np.abs``, ``np.var``,
      ``np.correlate``, which NumPy conjugates for complex ones). A derivative compiled
      for real values that inlines those rules hands calls with complex arguments to the
      one compiled for complex values, which uses its complex rules (``defvjp_complex``,
      ``defjvp_complex``) or, without them, checks when it runs that its operands are
      real. Every other op's rules hold for complex values too, in the convention of
      JAX and autograd (holomorphic and linear ops: ``g * f'(z)``, transposes without
      conjugation);
    - ``makes_complex``: its result is complex whatever its operands (``np.fft.fft``),
      or its rules make complex values (``np.fft.irfft``'s): a graph holding it computes
      with complex values from the start;
    - ``python_arithmetic``: an operator that gives a Python float on Python floats;
    - ``holds``: the parameter it keeps a reference to (a list or a tape holds the item);
      ``updates``: the parameter its result is an updated version of (``out[i] = v``);
    - ``from_shape``: the op giving its result from the shape of its ``shape_params``
      instead of the array (``unbroadcast(g, x)`` is ``unbroadcast_to(g, x.shape)``);
    - ``ndarray``: its result is always a NumPy array (``np.asarray`` of it is itself);
    - ``per_call``: its result may differ from one call to the next (a tape, a list,
      a global read when called): specialised code never makes it a constant;
    - ``taped``: the parameter whose values travel through a tape (or a list's end),
      where reverse mode would lose their gradient: reverse mode over it is refused;
    - ``batching``: how the op runs on operands carrying a leading batch axis (see
      ``transforms/batching.py``): ``"elementwise"`` (derived from a ``broadcast``
      shape rule), ``"reduce"`` (its ``axis`` counts the batch axis past), ``"container"``
      (a list, a tape or a structure holding batched items: derived from
      ``jvp="lockstep"`` and ``jvp="structure"``), or None: its own rule
      (``defbatch``), else run once per example and stacked.

    Attached after the block's ``defop``: ``defvjp``, ``defjvp``, and the op's own
    rewrites: ``defrewrite`` (algebraic, made by the optimiser), ``defspecialize``
    (made for one signature, when shapes and kinds are known) and ``defnumba`` (its
    form where numba compiles NumPy's call differently or not at all).
    """

    def __init__(
        self,
        name: str,
        stub: Callable,
        kernel: str | Callable,
        *,
        diff: tuple[str, ...] = (),
        nondiff_output: bool = False,
        no_gradient: str | None = None,
        fresh: bool = True,
        shape: ShapeRule | None = None,
        floating: str | None = "inputs",
        simplify: Callable | None = None,
        impl: Callable | None = None,
        inplace: Callable | None = None,
        zeros: str | None = None,
        gradients_keep_zeros: bool | Callable[[dict], bool] = False,
        list_adjoints: bool = False,
        jvp: str | None = None,
        sympy: Callable | None = None,
        no_sympy: str | None = None,
        math_form: str | None = None,
        math_total: bool = False,
        update_operator: str | None = None,
        ufunc_out: bool = False,
        recompute: str | None = None,
        shape_params: tuple[str, ...] = (),
        query: bool = False,
        python_arithmetic: bool = False,
        holds: str | None = None,
        updates: str | None = None,
        ndarray: bool = False,
        per_call: bool = False,
        taped: str | None = None,
        real_rules: bool = False,
        makes_complex: bool = False,
        batching: str | None = None,
    ) -> None:
        self.name = name
        self.signature = inspect.signature(stub)
        self.params: list[str] = list(self.signature.parameters)
        # every parameter positional (no *args, **kwargs, keyword-only): a call giving
        # each one in order binds as it is (see bind)
        self._positional = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               for p in self.signature.parameters.values())
        self.defaults: dict[str, Any] = {
            p.name: p.default
            for p in self.signature.parameters.values()
            if p.default is not _EMPTY
        }
        self.kernel = kernel
        self.diff = diff
        self.nondiff_output = nondiff_output
        self.no_gradient = no_gradient
        self.fresh = fresh
        if shape is not None and not isinstance(shape, ShapeRule):
            raise TypeError(f"{name}: shape must be a rule of ops.shape_rules, not {shape!r}")
        self.shape = shape
        self.floating = floating
        self.simplify = simplify
        self.impl = impl
        self.zeros = zeros
        self.gradients_keep_zeros = gradients_keep_zeros
        self.truth_values: bool | str = False
        self.list_adjoints = list_adjoints
        if jvp not in (None, "same", "linear", "lockstep", "structure"):
            raise ValueError(f"{name}: jvp= is 'same', 'linear', 'lockstep' or 'structure', "
                             f"not {jvp!r}")
        if jvp == "same" and len(diff) != 1:
            raise ValueError(f"{name}: jvp='same' is for ops of one differentiable parameter")
        self.jvp = jvp
        self.sympy = sympy
        self.no_sympy = no_sympy
        self.math_form = math_form
        self.math_total = math_total
        # The op of the same function as Python's ``math`` runs it (``math_sin`` for
        # ``sin``), made by math_functions_as_python_runs_them; ``python_math`` on that
        # op says it is one.
        self.math_twin: Op | None = None
        self.python_math = False
        self.update_operator = update_operator
        self.ufunc_out = ufunc_out
        if recompute not in (None, "always", "scalar"):
            raise ValueError(f"{name}: recompute= is 'always' or 'scalar', not {recompute!r}")
        self.recompute = recompute
        self.shape_params = shape_params
        self.query = query
        self.python_arithmetic = python_arithmetic
        self.holds = holds
        self.updates = updates
        self.from_shape: Op | None = None
        self.ndarray = ndarray
        self.per_call = per_call
        self.taped = taped
        self.zero_keeping_form: Op | None = None  # for zeros="product"/"quotient"
        self.inplace = inplace
        self.vjp: Callable | None = None
        # JVP rules, one per differentiable parameter: ``rule(t, ans, *params)`` gives
        # the part of the result's tangent due to that parameter's tangent ``t``.
        self.jvps: dict[str, Callable] = {}
        # fn(named_args) -> message when the rule cannot handle these arguments.
        self.vjp_check: Callable | None = None
        # The op has an effect beyond its result (it may raise): never removed.
        self.effect = False
        # Codegen writes the expression at each use instead of assigning it.
        self.inline = False
        # For ops with an in-place kernel: how to start when the input must be kept.
        self.inplace_copy: str | None = None
        # Whether the in-place kernel writes into its first input (else it only rebinds).
        self.inplace_mutates = True
        # Codegen writes the kernel as a statement of its own; the result is never read.
        self.statement = False
        # The statement always raises (``raise``): nothing after it in its block runs.
        self.raises = False
        # Each call makes a new mutable object (a list): two calls are never one value.
        self.distinct = False
        # For jvp="lockstep": the parameters forward mode passes as they are to the op it
        # runs on the tangents (an index, a count), not their tangents.
        self.lockstep_kept: tuple[str, ...] = ()
        # Python objects the kernel calls by name (a user's function with its own rule).
        self.runtime: dict[str, Any] = {}
        # The kernel runs code autodiff does not know (see ops.calls): never run it while
        # compiling, not even on stand-in values.
        self.opaque = False
        # Why no op-table case (tests/ops) can go through the op, when none can: it is
        # built by an API or around a user's rule, never written in code.
        self.outside_tables: str | None = None
        # An adjoint of a product in one operand summed over a loop's steps in one product
        # after the loop (transforms/accumulations.py): ``(the op summing it over lists of
        # the steps' operands, the parameter fixed across the steps, the one that
        # changes)``; the summing op's ``per_step`` is this op.
        self.over_steps: tuple[Op, str, str] | None = None
        self.per_step: Op | None = None
        # Parameters read for their shape, dtype or kind alone, never their values (the
        # x of as_gradient_of(g, x)): a gradient reaching one has nothing to lose there.
        self.kind_params: tuple[str, ...] = ()
        # The Python callables that are names for it (set by defop).
        self.aliases: tuple = ()
        # Why no gradient flows into a parameter outside ``diff``, by parameter (a count:
        # poisson.logpmf's k), given by the error refusing a gradient that reaches it.
        self.no_gradient_to: dict[str, str] = {}
        # The hint of the error refusing a value carrying a gradient that reaches a
        # parameter outside ``diff`` (transforms/activity), when the op knows a better one.
        self.no_gradient_hint: str | None = None
        # Its rules hold for real operands only (np.abs, np.var, eigh); the rules for
        # complex values, where it has them, are these (a derivative that sees complex
        # values uses them: see ``rules_for``).
        self.real_rules = real_rules
        self.complex_vjp: Callable | None = None
        self.complex_jvps: dict[str, Callable] = {}
        self.makes_complex = makes_complex
        if batching not in (None, "elementwise", "reduce", "container"):
            raise ValueError(f"{name}: batching= is 'elementwise', 'reduce' or 'container', "
                             f"not {batching!r}")
        self.batching = batching
        # fn(batch, node, *operands) -> operand: the op on batched operands (defbatch).
        self.batch_rule: Callable | None = None
        # Parameters the result is piecewise constant in (an index, a condition, a sign):
        # their gradient is zero almost everywhere, and none is passed to them.
        self.piecewise_params: tuple[str, ...] = ()
        # A dict, list or tuple of arrays passed to it is built and passed as it is (a
        # user's function with a rule of its own, whose rule reads the dict's parts).
        self.takes_structures = False
        # A query of its operand that a call signature answers while compiling (code
        # compiled per call signature, frontend/builder.py): "rank" (x.ndim), "dtype"
        # (x.dtype), "itemsize", or "sizes" (x.shape, a tuple of sizes read at run time).
        self.signature_answer: str | None = None
        # A constructor whose result has the dtype its ``dtype`` asks for: float64 when
        # none is asked, or, with an operand ``a``, a's (np.zeros, np.ones_like).
        self.dtype_as_asked = False
        # The operand (by position) whose structure a structure passed as its first
        # operand must have, checked while compiling where it is known then.
        self.checks_structure: int | None = None
        # fn(named_args, where) -> the error for a gradient reaching it with no rule.
        self.missing_rule: Callable[[dict, dict], Exception] | None = None
        # The names code uses for it: ``x.sum()``, ``x.shape`` (set by defop).
        self.method_names: tuple[str, ...] = ()
        self.attribute_names: tuple[str, ...] = ()
        # fn(rewrite, ...) -> operand | None: see defrewrite, defspecialize, defnumba.
        self.rewrite: Callable | None = None
        self.specialized_form: Callable | None = None
        self.specialize_after_optimizing = False
        self.numba_form: Callable | None = None
        # The result's shape depends on the values of an integer array operand (the bins
        # of np.bincount), which shape inference never guesses from stand-ins.
        self.values_decide_shape = False
        # A function defined in the differentiated code, passed to it, is called when the
        # derivative runs (an ODE model): the frontend passes it as ``Lifted``.
        self.lifts_functions = False

    def keeps_zeros(self, named: dict) -> bool:
        """Whether its gradients, for these operands, are exactly zero where it did not
        select an operand (``gradients_keep_zeros``)."""
        keeps = self.gradients_keep_zeros
        return bool(keeps(named) if callable(keeps) else keeps)

    @property
    def helps_derivatives(self) -> bool:
        """Whether the op is one of autodiff's own helpers, which derivatives call (its
        only names are functions of autodiff), rather than one user code writes."""
        return bool(self.aliases) and all(
            (getattr(fn, "__module__", None) or "").startswith("autodiff.")
            for fn in self.aliases)

    def defvjp(self, rule: Callable) -> Callable:
        """Attach ``rule(g, ans, *params)`` as this op's VJP; usable as a decorator.

        The first two names are free (an op whose parameter is itself called
        ``g`` takes ``(gg, ans, g, ...)``); the others are the op's parameters.
        """
        self.vjp = _checked_rule(self, rule, "VJP", "g")
        if self.jvp == "same":  # (its first parameter binds the tangent instead)
            self.jvps[self.diff[0]] = self.vjp
        changed()
        return rule

    def defjvp(self, param: str | Callable) -> Callable:
        """Attach a JVP rule ``rule(t, ans, *params)`` for one differentiable parameter.

        ``@op.defjvp`` on an op with one differentiable parameter, else
        ``@op.defjvp("x2")``. The rule returns the result's tangent due to the
        tangent ``t`` of that parameter alone, in the result's shape; the
        forward-mode transform sums the parts of every varied parameter.
        """
        if callable(param):
            if len(self.diff) != 1:
                raise TypeError(f"{self.name} has several differentiable parameters: "
                                f"name one, @{self.name}.defjvp('{self.diff[0]}')")
            return self.defjvp(self.diff[0])(param)
        if param not in self.diff:
            raise TypeError(f"'{param}' is not a differentiable parameter of {self.name}")

        def attach(rule: Callable) -> Callable:
            self.jvps[param] = _checked_rule(self, rule, "JVP", "t")
            changed()
            return rule

        return attach

    def defvjp_complex(self, rule: Callable) -> Callable:
        """Attach the VJP for complex operands of an op with ``real_rules``, in the
        convention of JAX and autograd (the gradient of a real function of z = x + iy
        is df/dx - i df/dy); it holds for real operands too. A derivative that sees
        complex values uses it in place of the real one."""
        self.complex_vjp = _checked_rule(self, rule, "VJP", "g")
        if self.jvp == "same":
            self.complex_jvps[self.diff[0]] = self.complex_vjp
        changed()
        return rule

    def defjvp_complex(self, param: str | Callable) -> Callable:
        """Attach the JVP for complex operands of one differentiable parameter of an op
        with ``real_rules`` (as :meth:`defjvp`); a real operand's tangent gives a real
        result's tangent."""
        if callable(param):
            return self.defjvp_complex(self.diff[0])(param)

        def attach(rule: Callable) -> Callable:
            self.complex_jvps[param] = _checked_rule(self, rule, "JVP", "t")
            changed()
            return rule

        return attach

    def rules_for(self, complex_values: bool) -> tuple[Callable | None, dict[str, Callable]]:
        """The VJP and the JVPs a derivative uses: for one that sees complex values, the
        complex rules of an op with ``real_rules`` where it has them."""
        if complex_values and self.real_rules:
            return (self.complex_vjp or self.vjp, {**self.jvps, **self.complex_jvps})
        return self.vjp, self.jvps

    def checks_real_operands(self, complex_values: bool, param: str | None = None) -> bool:
        """Whether a derivative that sees complex values must check, when it runs, that
        the operands of this op are real: its rules (of ``param``'s JVP, or its VJP)
        hold for real values alone."""
        if not (complex_values and self.real_rules):
            return False
        if param is None:
            return self.complex_vjp is None
        # (an op linear in it computes its own tangent, right for complex values too)
        return param not in self.complex_jvps and (param in self.jvps or self.jvp != "linear")

    def defrewrite(self, rule: Callable) -> Callable:
        """Attach ``rule(rewrite, node, *operands)``, an algebraic rewrite the optimiser
        makes; usable as a decorator. It returns the operand standing for the node's
        result (``rewrite.emit(op, *operands)`` appends nodes), or None to keep the
        node, and never changes the result's value, shape, dtype or kind (see
        ``transforms.optimize.rewrites`` for what ``rewrite`` offers)."""
        self.rewrite = rule
        changed()
        return rule

    def defspecialize(self, form: Callable | None = None, *, after_optimizing: bool = False):
        """Attach ``form(rewrite, *operands)``, this op rewritten for one signature, where
        ``rewrite`` knows each operand's shape and kind (see ``jit.specialize``); usable
        as a decorator. ``after_optimizing``: made again once the graph is optimised
        (``rewrite.final`` is then true)."""
        def attach(form: Callable) -> Callable:
            self.specialized_form = form
            self.specialize_after_optimizing = after_optimizing
            changed()
            return form

        return attach(form) if form is not None else attach

    def defbatch(self, rule: Callable) -> Callable:
        """Attach ``rule(batch, node, *operands)``, the op on operands of which some carry
        a leading batch axis (``batch.batched(operand)`` says which; see
        ``transforms/batching.py`` for what ``batch`` offers): it returns the operand
        standing for the batched result, or None to run the op once per example."""
        self.batch_rule = rule
        changed()
        return rule

    @property
    def batch_family(self) -> str | None:
        """``batching``, or the family the op's other facts imply."""
        if self.batching is not None:
            return self.batching
        if self.jvp in ("lockstep", "structure"):
            return "container"
        if isinstance(self.shape, broadcast):
            return "elementwise"
        return None

    def defnumba(self, form: Callable) -> Callable:
        """Attach ``form(rewrite, *operands)``, this op written as ops numba compiles;
        usable as a decorator. It runs on specialised graphs, where ``rewrite.shape(v)``
        is an operand's static shape (None when not known) and ``rewrite.emit(op,
        *operands)`` appends a node; it returns the new result, or None to keep the op
        (numba then compiles NumPy's call, or refuses it naming the user's line)."""
        self.numba_form = form
        changed()
        return form

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """Canonical argument tuple for a call ``op(*args, **kwargs)``; TypeError if invalid."""
        if not kwargs and self._positional and len(args) == len(self.params) and all(
                isinstance(arg, _OPERANDS) for arg in args):
            return (*args,)  # (what binding them gives: each operand, in order)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(_as_operand(bound.arguments[name]) for name in self.params)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def _checked_rule(op: Op, rule: Callable, kind: str, first: str) -> Callable:
    got = list(inspect.signature(rule).parameters)
    if got[2:] != op.params or len(got) != len(set(got)):
        raise TypeError(f"{kind} rule for {op.name} must take ({first}, ans, "
                        f"{', '.join(op.params)}), takes ({', '.join(got)})")
    return rule


def _as_operand(value: Any) -> Any:
    """Defaults filled in by binding are plain Python values: make them constants."""
    from autodiff.graph.ir import Const, SliceSpec, Value

    if isinstance(value, (Value, Const, SliceSpec)):
        return value
    if isinstance(value, tuple) and any(isinstance(v, (Value, Const, SliceSpec, tuple))
                                        for v in value):
        return tuple(_as_operand(v) for v in value)
    return Const(value)


OPS: dict[str, Op] = {}
_CALLABLES: dict[int | tuple[int, int], tuple[Any, Op, Callable | None]] = {}
_METHODS: dict[str, tuple[Op, Callable | None]] = {}
_ATTRIBUTES: dict[str, Op] = {}


def defop(name: str, kernel: str | Callable, *, aliases: tuple = (), methods: tuple = (),
          attributes: tuple = (), **facts: Any) -> Callable[[Callable], Op]:
    """Decorator turning a signature stub into a registered :class:`Op`.

    >>> import numpy as np
    >>> @defop("my_sinc", "np.sinc(x)", aliases=(np.sinc,))  # doctest: +SKIP
    ... def my_sinc(x): ...
    """

    def register(stub: Callable) -> Op:
        if name in OPS:  # rules and passes find an op by its name: one op per name
            raise ValueError(f"two ops are named {name!r}")
        op = Op(name, stub, kernel, **facts)
        OPS[name] = op
        op.aliases = tuple(a[0] if isinstance(a, tuple) else a for a in aliases)
        op.method_names = tuple(m[0] if isinstance(m, tuple) else m for m in methods)
        op.attribute_names = tuple(attributes)
        for alias in aliases:
            fn, adapter = alias if isinstance(alias, tuple) else (alias, None)
            _CALLABLES[callable_key(fn)] = (fn, op, adapter)
        for method in methods:
            method_name, adapter = method if isinstance(method, tuple) else (method, None)
            _METHODS[method_name] = (op, adapter)
        for attribute in attributes:
            _ATTRIBUTES[attribute] = op
        return op

    return register


def stub_taking(params: list[str]) -> Callable:
    """A function that does nothing, whose signature takes ``params``: the stub of an op
    made for one use (a call of so many arguments, a statement)."""
    def stub(*operands): ...

    stub.__signature__ = inspect.Signature([
        inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
    return stub


def helper_op(fn: Callable, *, name: str | None = None, params: list[str] | None = None,
              register: bool = True, **facts: Any) -> Op:
    """The plain function ``fn`` as an op that generated code calls by name: ``name``
    (``fn``'s own by default), with the parameters ``params`` (``fn``'s by default).
    Registered, it is ``OPS[name]`` and ``fn`` a name for it, so rules can call it;
    unregistered (a user's function with a rule of its own), the caller binds it."""
    name = name or fn.__name__
    if params is None:
        stub = fn
        params = list(inspect.signature(fn).parameters)
    else:
        stub = stub_taking(params)
    kernel = f"{name}({', '.join(params)})"
    if register:
        op = defop(name, kernel, aliases=(fn,), **facts)(stub)
    else:
        op = Op(name, stub, kernel, **facts)
    op.runtime = {name: fn}
    return op


def math_functions_as_python_runs_them() -> None:
    """Give each function of Python's ``math`` that names an op of NumPy's function
    (``math.sqrt`` for ``np.sqrt``) an op of its own: the same rules and facts, but a
    kernel calling the ``math`` function (``math.sqrt(x)``). The derivative then runs
    the user's call as Python does: ``math.sqrt(-1.0)`` raises ValueError, and
    ``math.exp(1000.0)`` OverflowError, where NumPy's function gives nan or inf; an
    array that is not one number is a TypeError. Its name is ``math_`` and the
    function's (an op written as a ``math`` call already is left as it is)."""
    for op in list(OPS.values()):
        if isinstance(op.kernel, str) and op.kernel.startswith("math."):
            continue
        for fn in op.aliases:
            if getattr(fn, "__module__", None) != "math" or not callable(fn):
                continue
            _, _, adapter = _CALLABLES[callable_key(fn)]
            twin = copy.copy(op)
            twin.name = f"math_{fn.__name__}"
            if twin.name in OPS:
                raise ValueError(f"two ops are named {twin.name!r}")
            twin.kernel = f"math.{fn.__name__}({', '.join(op.params)})"
            twin.impl = fn
            twin.aliases, twin.method_names, twin.attribute_names = (fn,), (), ()
            # NumPy's forms and rewrites would lose Python's errors (its kernel is the
            # math form specialised code writes for a Python float already)
            twin.simplify = twin.rewrite = twin.specialized_form = twin.numba_form = None
            twin.ufunc_out, twin.update_operator, twin.math_form = False, None, None
            twin.math_twin, twin.python_math = None, True
            op.math_twin = twin
            twin.effect = True  # kept where nothing reads it: it may raise
            OPS[twin.name] = twin
            _CALLABLES[callable_key(fn)] = (fn, twin, adapter)
            op.aliases = tuple(a for a in op.aliases if a is not fn)
    changed()


def in_python_math(op: Op, nodes: list) -> None:
    """The nodes a rule of ``op`` inlined, when the user called ``op`` through Python's
    ``math`` (``math.sin``): each of them calling a NumPy function whose ``math`` form is
    defined for every float (``np.cos``) calls that form instead (``math.cos``). The
    operands are the user's numbers, for which ``math`` gave a value already, and the
    result stays a Python float where NumPy's function would give a NumPy scalar, which
    makes every later operation in a loop over floats several times slower."""
    if not op.python_math:
        return
    for node in nodes:
        twin = getattr(node.op, "math_twin", None)
        if twin is not None and node.op.math_total:
            node.op = twin


def alias(fn: Any, op: Op, adapter: Callable | None = None) -> None:
    """Make the Python callable ``fn`` a name for ``op``."""
    _CALLABLES[callable_key(fn)] = (fn, op, adapter)
    changed()


def unalias(fn: Any) -> None:
    """Forget ``fn`` as a name of an op (undoes :func:`alias`)."""
    _CALLABLES.pop(callable_key(fn), None)
    changed()


# Bumped whenever a rule or an alias changes: derivatives built before are stale.
generation = 0


def changed() -> None:
    global generation
    generation += 1


def callable_key(fn: Any) -> int | tuple[int, int]:
    """What an alias is known by: the callable's identity, or for a bound method the
    identities of its object and its function. Reading ``scipy.stats.norm.logpdf``
    makes a new method object each time, equal to the others (the same ``__self__``
    and ``__func__``), so the alias is that pair: ``norm.logpdf`` and ``t.logpdf``,
    one function bound to two objects, are two names."""
    if isinstance(fn, types.MethodType):
        return id(fn.__self__), id(fn.__func__)
    return id(fn)


def _same_callable(known: Any, fn: Any) -> bool:
    if isinstance(fn, types.MethodType):  # (the alias holds its object: the ids stay its)
        return (isinstance(known, types.MethodType) and known.__self__ is fn.__self__
                and known.__func__ is fn.__func__)
    return known is fn


def callable_binding(fn: Any) -> tuple[Op, Callable | None] | None:
    """``(op, adapter)`` for a Python callable, or None if it is no known op."""
    if _DEFERRED:
        _bind_deferred()
    entry = _CALLABLES.get(callable_key(fn))
    if entry is None or not _same_callable(entry[0], fn):
        return None
    return entry[1], entry[2]


def has_bound_ops(obj: Any) -> bool:
    """Whether a method of ``obj`` is a name for an op (``scipy.stats.norm``, whose
    ``norm.logpdf`` is one): calling ``obj`` freezes arguments for those methods."""
    if _DEFERRED:
        _bind_deferred()
    return any(isinstance(key, tuple) and key[0] == id(obj)
               and entry[0].__self__ is obj for key, entry in _CALLABLES.items())


def callables_of(op: Op) -> list[Any]:
    """The Python callables that are names for ``op``."""
    if _DEFERRED:
        _bind_deferred()
    return [fn for fn, bound, _ in _CALLABLES.values() if bound is op]


def method_binding(name: str) -> tuple[Op, Callable | None] | None:
    return _METHODS.get(name)


def attribute_op(name: str) -> Op | None:
    return _ATTRIBUTES.get(name)


class RunAsItIs(Exception):
    """Raised by an alias's adapter for a form of the call that is no op: the call then
    runs as it is, as a function with no rule (``np.where(condition)``, the indices
    ``np.nonzero`` gives, which carry no gradient)."""


def bind_call(op: Op, adapter: Callable | None, args: tuple, kwargs: dict) -> tuple[Op, tuple]:
    """``(op, canonical arguments)`` of a call through an alias; TypeError if invalid.

    An adapter may redirect the call to another op (``np.array([a, b])`` is a stack),
    and gives the arguments by name (a dict) or in order (a list); it raises
    :class:`RunAsItIs` for a form of the call that is no op.
    """
    if adapter is not None:
        canonical = adapter(*args, **kwargs)
        if isinstance(canonical, tuple):
            op, canonical = canonical
        if isinstance(canonical, list):
            return op, op.bind(tuple(canonical), {})
        return op, op.bind((), canonical)
    return op, op.bind(args, kwargs)


# ----- the public transforms, for helpers that differentiate a function passed to them -----

# ``vjp`` and ``jvp`` of autodiff/api.py, which gives them when it is imported: a runtime
# helper that differentiates a function the user passes (the model of
# ``scipy.integrate.odeint``, whose adjoint needs its vector-Jacobian products) reads them
# here, as ops sit below the transforms and import none of them.
TRANSFORMS: dict[str, Callable] = {}


# ----- names in modules autodiff does not import itself -----

_DEFERRED: list[tuple[str, str, Op, Callable | None]] = []
_DEFERRED_MODULES: set[str] = set()  # the modules of those names, looked up at each call


def defer_alias(module: str, name: str, op: Op, adapter: Callable | None = None) -> None:
    """Make ``module.name`` a name for ``op`` once ``module`` is imported (``name`` may
    be dotted: ``norm.logpdf``): a module slow to import (``scipy.signal``,
    ``scipy.stats``) is imported by the code that calls it, never by
    autodiff. A call to it is resolved after that import, so no derivative built
    before could have met the name."""
    _DEFERRED.append((module, name, op, adapter))
    _DEFERRED_MODULES.add(module)


# Library functions run as they are (no op), which know why a gradient reaching them is
# refused: by the identity of the function, (reason, hint).
_WITHOUT_RULES: dict[int | tuple[int, int], tuple[Any, str, str]] = {}
_DEFERRED_WITHOUT_RULES: list[tuple[str, str, str, str]] = []


def defer_without_rule(module: str, name: str, reason: str, hint: str) -> None:
    """Say why ``module.name``, a library's function called as it is, has no rule
    (``scipy.integrate.odeint``: adaptive steps autodiff cannot see), once ``module`` is
    imported: the error for a gradient reaching it gives ``reason`` and ``hint``."""
    _DEFERRED_WITHOUT_RULES.append((module, name, reason, hint))


def without_rule(fn: Any) -> tuple[str, str] | None:
    """``(reason, hint)`` for a library function stated to have no rule, else None."""
    for entry in list(_DEFERRED_WITHOUT_RULES):
        module, name, reason, hint = entry
        if module in sys.modules:
            _DEFERRED_WITHOUT_RULES.remove(entry)
            found = getattr(sys.modules[module], name)
            _WITHOUT_RULES[callable_key(found)] = (found, reason, hint)
    entry = _WITHOUT_RULES.get(callable_key(fn))
    return None if entry is None or not _same_callable(entry[0], fn) else entry[1:]


def _bind_deferred() -> None:
    if not any(module in sys.modules for module in _DEFERRED_MODULES):
        return  # (a few modules to look up, not every name)
    for entry in list(_DEFERRED):
        module, name, op, adapter = entry
        if module in sys.modules:
            _DEFERRED.remove(entry)
            fn = sys.modules[module]
            for part in name.split("."):  # "norm.logpdf": a method of a module's object
                fn = getattr(fn, part)
            _CALLABLES[callable_key(fn)] = (fn, op, adapter)
            op.aliases = (*op.aliases, fn)
    _DEFERRED_MODULES.intersection_update(entry[0] for entry in _DEFERRED)
