"""The SymPy route: a function's graph as SymPy expressions, differentiated by SymPy.

``symbolic_grad(f)`` evaluates the graph ``ad.grad(f).original_graph`` prints on
SymPy symbols instead of numbers: an argument is a real symbol, or, given a
shape in ``shapes``, a NumPy object array of symbols (``x_0``, ``x_1``, ``W_0_1``).
Structural ops (sums, products of matrices, reshapes, indexing, stacking) work
on object arrays through NumPy itself; elementwise functions go through
``np.frompyfunc`` over their SymPy counterparts. SymPy then differentiates the
one scalar expression, and ``sympy.lambdify`` turns the derivative into NumPy code.

It is the third way to a derivative, beside finite differences and ours, and
shows what ours avoids: the expression of a deep composition swells
(``.operations``) until common subexpressions are shared (``.operations_cse``).
Control flow is taken only where it is fixed before the data is seen: loops
over constant ranges are unrolled, an ``if`` on a constant picks its branch.

>>> import numpy as np, autodiff as ad
>>> def f(x, y):
...     return x * y + np.sin(x)
>>> g = ad.symbolic_grad(f)  # doctest: +SKIP
>>> g.expression, g(1.0, 2.0)  # doctest: +SKIP
(y + cos(x), 2.5403023058681398)
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from autodiff.derivatives.build import parameters, primal
from autodiff.derivatives.wrt import Wrt
from autodiff.errors import AutodiffError, NonScalarOutputError
from autodiff.graph.ir import UNDEFINED, Graph, Location, Region, SliceSpec, Value
from autodiff.graph.scopes import MISSING, Scope
from autodiff.ops.control import variable as variable_op
from autodiff.ops.runtime import as_gradient_of
from autodiff.ops.sympy_forms import Unsupported, decided, integer, scalar_symbols

# Unrolling more iterations than this makes expressions no one could read or count.
MAX_ITERATIONS = 1000
# A derivative's LaTeX longer than this is shown as text: typesetting it takes too long.
MAX_LATEX = 20000


class SymbolicError(AutodiffError):
    """The SymPy route cannot take this function (data-dependent control flow, big arrays...)."""


def symbolic_grad(fn: Callable, wrt: Wrt = 0, shapes: dict | None = None,
                  max_elements: int = 64) -> SymbolicGradient:
    """The gradient of the scalar ``fn`` by SymPy, as a callable with ``fn``'s signature.

    ``wrt`` means what it means in :func:`autodiff.grad`; ``shapes`` maps argument
    names to array shapes (arguments not named are scalars), each at most
    ``max_elements`` elements. The result returns what ``ad.grad(fn, wrt=wrt)``
    returns, and shows ``.expression``, ``.operations`` and ``.operations_cse``.

    >>> import numpy as np, autodiff as ad
    >>> def loss(x):
    ...     return np.sum(np.tanh(x) ** 2)
    >>> ad.symbolic_grad(loss, shapes={"x": (2,)})(np.ones(2))  # doctest: +ELLIPSIS
    array([0.6397..., 0.6397...])
    """
    started = time.perf_counter()
    graph, where = primal(fn)
    indices, several = parameters(graph, wrt, where)
    arguments = _argument_symbols(graph, dict(shapes or {}), max_elements, where)
    if isinstance(graph.outputs[0], tuple):
        loc = graph.return_location
        raise NonScalarOutputError("grad needs a function returning one scalar, but this one "
                                   "returns a tuple", **(Location.error_fields(loc) or Location.error_fields(where)))
    evaluator = _Evaluator(fn, graph, where, arguments, max_elements)
    value = evaluator.value()
    return SymbolicGradient(fn, graph.name, where, arguments, indices, several, value, started)


@dataclass
class _Argument:
    name: str
    shape: tuple
    symbols: object  # a Symbol, or an object array of them
    shaped: bool  # given in ``shapes`` (else a scalar by default)


def _argument_symbols(graph: Graph, shapes: dict, max_elements: int,
                      where: Location) -> list[_Argument]:
    names = [p.hint for p in graph.params]
    for name in shapes:
        if name not in names:
            raise SymbolicError(f"shapes names {name!r}, which is not an argument of "
                                f"{graph.name}({', '.join(names)})", **Location.error_fields(where))
    taken: set[str] = set()

    def symbol(name: str) -> sp.Symbol:
        while name in taken:  # x_0 the argument and x_0 the element of x stay apart
            name += "_"
        taken.add(name)
        return sp.Symbol(name, real=True)

    arguments = []
    for name in names:
        shape = shapes.get(name, ())
        shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
        size = int(np.prod(shape))
        if size > max_elements:
            raise SymbolicError(f"{name} has shape {shape}: the SymPy route takes small arrays "
                                f"(at most {max_elements} elements)", **Location.error_fields(where),
                                hint="use ad.grad, or pass a larger max_elements")
        symbols: object = symbol(name)
        if shape:
            symbols = _object_array([symbol("_".join([name, *map(str, i)]))
                                     for i in np.ndindex(*shape)], shape)
        arguments.append(_Argument(name, shape, symbols, name in shapes))
    return arguments


# ----- the result -----


class SymbolicGradient:
    """The derivative SymPy found: call it like ``ad.grad(f)``, or read its expressions."""

    def __init__(self, fn: Callable, name: str, where: Location, arguments: list[_Argument],
                 indices: list[int], several: bool, value: sp.Expr, started: float) -> None:
        self.fn, self.name, self.where = fn, name, where
        self.arguments, self.indices, self.several = arguments, indices, several
        self.value_expression = value
        self.gradients = [_differentiate(value, arguments[i].symbols, where) for i in indices]
        self.symbols = {a.name: a.symbols for a in arguments}
        lambdify_args = [_nested(a.symbols) for a in arguments]
        self._function = sp.lambdify(lambdify_args, self._elements(), cse=True,
                                     modules=[{"stop_gradient": _identity, **_scipy_names()},
                                              "numpy"],
                                     printer=_Printer(_PRINTER_SETTINGS))
        try:
            self.__signature__ = inspect.signature(fn)
        except (TypeError, ValueError):
            self.__signature__ = None
        self.__name__ = f"{name}_symbolic_grad"
        self.build_seconds = time.perf_counter() - started

    def _elements(self) -> list:
        return [e for g in self.gradients for e in np.ravel(np.asarray(g, dtype=object))]

    @property
    def expression(self):
        """The derivative: an expression per scalar argument, a ``sympy.Array`` per array."""
        parts = tuple(g if not isinstance(g, np.ndarray) else sp.Array(g.tolist())
                      for g in self.gradients)
        return parts if self.several else parts[0]

    @functools.cached_property
    def operations(self) -> int:
        """``sympy.count_ops`` of the derivative, every element counted, nothing shared."""
        return int(sum(sp.count_ops(e) for e in self._elements()))

    @functools.cached_property
    def operations_cse(self) -> int:
        """Operations once ``sympy.cse`` shares common subexpressions (replacements included)."""
        replacements, reduced = sp.cse(self._elements())
        return int(sum(sp.count_ops(e) for _, e in replacements)
                   + sum(sp.count_ops(e) for e in reduced))

    @property
    def source(self) -> str:
        """The NumPy code ``sympy.lambdify`` wrote (with its common subexpressions)."""
        return inspect.getsource(self._function)

    def __call__(self, *args, **kwargs):
        values = self._bind(args, kwargs)
        flat = self._function(*values)
        gradients, start = [], 0
        for index in self.indices:
            shape = self.arguments[index].shape
            size = int(np.prod(shape))
            part = np.array(flat[start:start + size], dtype=float).reshape(shape)
            gradients.append(as_gradient_of(part, values[index]))
            start += size
        return tuple(gradients) if self.several else gradients[0]

    def _bind(self, args: tuple, kwargs: dict) -> list:
        if self.__signature__ is not None:
            bound = self.__signature__.bind(*args, **kwargs)
            bound.apply_defaults()
            values = [bound.arguments[a.name] for a in self.arguments]
        else:
            values = list(args)
        for argument, value in zip(self.arguments, values):
            if np.iscomplexobj(value):
                raise SymbolicError(f"{argument.name} is complex, and this gradient's symbols "
                                    "are real ones", **Location.error_fields(self.where),
                                    hint="check a function of complex values against finite "
                                    "differences (ad.check_grad)")
            if np.shape(value) != argument.shape:
                built = f"shape {argument.shape}" if argument.shape else "a scalar"
                raise SymbolicError(f"{argument.name} has shape {np.shape(value)}, but this "
                                    f"gradient was built for {built}", **Location.error_fields(self.where),
                                    hint=f"build it with shapes={{{argument.name!r}: "
                                    f"{np.shape(value)}}}")
        return values

    def __repr__(self) -> str:
        names = ", ".join(a.name for a in self.arguments)
        lines = [f"d/d{self.arguments[i].name} {self.name}({names}) = {g}"
                 for i, g in zip(self.indices, self.gradients)]
        text = "\n".join(lines)
        return text if len(text) < 4000 else text[:4000] + " ..."

    def _repr_latex_(self) -> str | None:
        """The derivative as a notebook shows it, in LaTeX (SymPy's ``latex``); None (the
        text above) for an expression too long to typeset."""
        names = ", ".join(_tt(a.name) for a in self.arguments)
        parts = self.expression if self.several else (self.expression,)
        lines = [rf"\frac{{\partial}}{{\partial {_tt(self.arguments[i].name)}}}\, "
                 rf"{_tt(self.name)}({names}) &= {sp.latex(part)}"
                 for i, part in zip(self.indices, parts)]
        latex = r" \\ ".join(lines)
        if len(latex) > MAX_LATEX:
            return None
        return rf"$\displaystyle \begin{{aligned}} {latex} \end{{aligned}}$"


def _tt(name: str) -> str:
    """A Python name in LaTeX, in a typewriter face (its underscores are no subscripts)."""
    return r"\mathtt{" + name.replace("_", r"\_") + "}"


def _differentiate(value: sp.Expr, symbols, where: Location):
    if isinstance(symbols, np.ndarray):
        return _object_array([_differentiate(value, s, where) for s in symbols.flat],
                             symbols.shape)
    # Steps (sign, floor, ceil, Heaviside) have derivative zero wherever it is defined, as in
    # ad.grad; SymPy writes a Dirac delta, or leaves the derivative of floor unevaluated.
    derivative = sp.diff(value, symbols).replace(sp.DiracDelta, lambda *args: sp.S.Zero)
    steps = derivative.atoms(sp.Subs, sp.Derivative)
    derivative = derivative.xreplace({e: sp.S.Zero for e in steps if _is_step_derivative(e)})
    if derivative.has(sp.Derivative):
        raise SymbolicError(f"SymPy cannot differentiate {value} with respect to {symbols}",
                            **Location.error_fields(where), hint="use ad.grad")
    return derivative


def _is_step_derivative(expr) -> bool:
    inner = expr.expr if isinstance(expr, (sp.Subs, sp.Derivative)) else None
    if isinstance(inner, sp.Derivative):
        inner = inner.expr
    return isinstance(inner, (sp.floor, sp.ceiling))


def _object_array(items: list, shape: tuple) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = items  # element by element: NumPy must not look inside SymPy objects
    return array.reshape(shape)


def _nested(symbols):
    return symbols.tolist() if isinstance(symbols, np.ndarray) else symbols


def _identity(value):
    return value


class _Printer(NumPyPrinter):
    """NumPy's printer, writing Heaviside as ``np.heaviside``: SymPy would turn it into a
    Piecewise and simplify its conditions, which takes seconds when it holds a Max."""

    def _print_Heaviside(self, expr) -> str:
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"{self._module_format('numpy.heaviside')}({self._print(expr.args[0])}, {at_zero})"


def _scipy_names() -> dict:
    """SciPy's functions by the names SymPy prints them with (``polygamma(0, x)``,
    ``besseli(1, x)``), for derivatives of ``scipy.special``'s ops; none without SciPy."""
    try:
        from scipy import special
    except ImportError:
        return {}
    return {"polygamma": special.polygamma, "digamma": special.digamma,
            "gamma": special.gamma, "loggamma": special.gammaln, "beta": special.beta,
            "erf": special.erf, "erfc": special.erfc, "erfinv": special.erfinv,
            "erfcinv": special.erfcinv, "besseli": special.iv, "besselj": special.jv,
            "bessely": special.yv, "besselk": special.kv}


# What lambdify gives the printer it makes itself when it is given none.
_PRINTER_SETTINGS = {"fully_qualified_modules": False, "inline": True,
                     "allow_unknown_functions": True,
                     "user_functions": {"stop_gradient": "stop_gradient"}}


# ----- evaluating the graph on symbols -----


class _Evaluator:
    """Runs a graph with SymPy expressions and object arrays in place of numbers."""

    def __init__(self, fn: Callable, graph: Graph, where: Location, arguments: list[_Argument],
                 max_elements: int) -> None:
        self.fn, self.graph, self.where, self.max_elements = fn, graph, where, max_elements
        self.env: dict[Value, object] = {p: a.symbols for p, a in zip(graph.params, arguments)}
        # Which symbols stand for arguments taken as scalars only because no shape was given.
        self.unshaped = {a.symbols: a.name for a in arguments if not a.shaped}

    def value(self) -> sp.Expr:
        self.run(self.graph.nodes)
        value = self.operand(self.graph.outputs[0])
        if isinstance(value, np.ndarray):
            if value.size != 1:
                loc = self.graph.return_location
                raise NonScalarOutputError(f"grad needs a scalar output, but {self.graph.name} "
                                           f"returns an array of shape {value.shape}",
                                           **(Location.error_fields(loc) or Location.error_fields(self.where)))
            value = value.item()
        value = sp.sympify(value)
        if not isinstance(value, sp.Expr):
            raise SymbolicError(f"{self.graph.name} returns a {type(value).__name__}, not a "
                                "number", **Location.error_fields(self.where))
        return value

    def run(self, nodes: list) -> None:
        for node in nodes:
            if isinstance(node, Region):
                self.region(node)
            else:
                self.node(node)

    def operand(self, operand):
        if isinstance(operand, Value):
            return self.env[operand]
        if isinstance(operand, SliceSpec):
            return slice(*(self.operand(p) for p in (operand.start, operand.stop, operand.step)))
        if isinstance(operand, tuple):
            return tuple(self.operand(item) for item in operand)
        return None if operand == UNDEFINED else operand.value

    def error(self, node, message: str, hint: str | None = None) -> SymbolicError:
        fields = Location.error_fields(node.loc) or Location.error_fields(self.where)
        hint = hint or f"use ad.grad({self.graph.name}), which takes it"
        return SymbolicError(message, **fields, hint=hint)

    def node(self, node) -> None:
        args = [self.operand(a) for a in node.args]
        try:
            if node.op is variable_op:
                result = self.variable(*args)
            elif node.op.sympy is not None:
                result = node.op.sympy(*args)
            else:
                why = f": {node.op.no_sympy}" if node.op.no_sympy else ""
                raise Unsupported(f"'{node.op.name}' (it has no SymPy form{why})")
        except Unsupported as unsupported:
            raise self.error(node, f"the SymPy route cannot take {unsupported}") from None
        except Exception as failure:  # noqa: BLE001 - any failure becomes the user's line
            raise self.failure(node, args, failure) from None
        if isinstance(result, np.ndarray) and result.ndim == 0:
            result = result.item()
        too_big = isinstance(result, np.ndarray) and result.size > self.max_elements
        if too_big and result.dtype == object:  # constants may be big: they stay numbers
            raise self.error(node, f"this line makes an array of shape {result.shape}: the "
                             f"SymPy route takes small arrays (at most {self.max_elements} "
                             "elements)", hint="use ad.grad, or pass a larger max_elements")
        self.env[node.out] = result

    def failure(self, node, args: list, failure: Exception) -> SymbolicError:
        """Explain a rule that raised: most often an argument taken as a scalar is an array."""
        names = [name for symbol, name in self.unshaped.items()
                 if any(symbol in scalar_symbols(a) for a in args)]
        if names:
            shown = ", ".join(f"{n!r}: ..." for n in names)
            return self.error(node, f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'}"
                              " used as an array here, but the SymPy route takes an argument as "
                              "a scalar unless given its shape",
                              hint=f"pass the shape: symbolic_grad({self.graph.name}, "
                              f"shapes={{{shown}}})")
        return self.error(node, f"the SymPy route cannot evaluate '{node.op.name}' here "
                          f"({type(failure).__name__}: {failure})",
                          hint="check that the function runs on arrays of these shapes")

    def variable(self, name: str, scope: Scope):
        # Read once, when the gradient is built: the expression holds its value.
        value = scope.read(name)
        if value is MISSING:
            raise Unsupported(f"'{name}' (it has no value yet)")
        return value

    # ----- regions: taken only where the data cannot change the path -----

    def region(self, region: Region) -> None:
        handlers = {"if": self.branch, "for": self.for_loop, "while": self.while_loop,
                    "try": self.try_statement}
        outs = handlers[region.kind](region)
        for out, value in zip(region.outs, outs):
            self.env[out] = value

    def block(self, block, values: list) -> list:
        for param, value in zip(block.params, values):
            self.env[param] = value
        self.run(block.nodes)
        return [self.operand(r) for r in block.results]

    def decide(self, region: Region, value, construct: str, hint: str | None = None) -> bool:
        known = decided(value)
        if known is None:
            raise self.error(region, f"the SymPy route cannot take {construct}", hint)
        return known

    def branch(self, region: Region) -> list:
        condition = self.operand(region.args[0])
        taken = self.decide(region, condition, "an 'if' whose condition depends on the data",
                            hint="choose elementwise with np.where (a Piecewise to SymPy), or "
                            f"use ad.grad({self.graph.name})")
        return self.block(region.blocks[0 if taken else 1], [])

    def try_statement(self, region: Region) -> list:
        raise self.error(region, "the SymPy route cannot take a try statement (which path "
                         "runs depends on what raises)", hint=f"use ad.grad({self.graph.name})")

    def for_loop(self, region: Region) -> list:
        start, stop, step, count = (self.operand(a) for a in region.args[:4])
        bounds = [integer(v) for v in (start, stop, step)]
        if any(b is None for b in bounds):
            raise self.error(region, "the SymPy route cannot take a 'for' loop whose range "
                             "depends on the arguments (its trip count must be a constant)")
        indices = list(range(*bounds))
        if count is not None:
            indices = indices[:integer(count)]
        return self.iterate(region, indices[::-1] if region.reverse else indices)

    def while_loop(self, region: Region) -> list:
        carried = [self.operand(a) for a in region.init]
        for _ in range(MAX_ITERATIONS + 1):
            condition = self.block(region.blocks[0], carried)[0]
            if not self.decide(region, condition, "a 'while' loop (its trip count depends on "
                               "the data)"):
                return carried
            carried = self.block(region.body, carried)
            if region.until is not None and self.decide(
                    region, carried[region.until], "a 'break' or 'return' that depends on "
                    "the data"):
                return carried
        raise self.error(region, f"the SymPy route unrolls at most {MAX_ITERATIONS} iterations")

    def iterate(self, region: Region, indices: list) -> list:
        if len(indices) > MAX_ITERATIONS:
            raise self.error(region, f"this loop runs {len(indices)} times: the SymPy route "
                             f"unrolls at most {MAX_ITERATIONS} iterations")
        carried = [self.operand(a) for a in region.init]
        for index in indices:
            carried = self.block(region.body, [index, *carried])
            if region.until is not None and self.decide(
                    region, carried[region.until], "a 'break' or 'return' that depends on "
                    "the data"):
                break
        return carried


