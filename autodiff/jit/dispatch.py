"""Derivatives specialised per call signature: ``ad.grad(f, jit=True)`` and ``jit="numba"``.

The first call with new argument kinds, shapes and dtypes specialises the
general derivative to them (:mod:`autodiff.jit.specialize`), compiles
the result and caches it under that signature; later calls with the same
signature run it directly. With ``jit="numba"`` the specialised source is
compiled by ``numba.njit`` as well (:mod:`autodiff.jit.numba_backend`).

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.tanh(x) ** 2)
>>> g = ad.grad(f, jit=True)  # doctest: +SKIP
>>> print(g.source_for(np.ones(3)))  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable

import numpy as np

from autodiff.codegen import origins
from autodiff.codegen.compile import remember_source
from autodiff.codegen.derivative import compiling, finish
from autodiff.codegen.display import latest_compiled_html
from autodiff.codegen.python import function_name
from autodiff.errors import raised_at_call
from autodiff.frontend.structures import argument_spec, is_container, is_structured
from autodiff.graph.ir import Region, walk
from autodiff.graph.scopes import Scope
from autodiff.jit.infer import infer, of_argument, signature_key
from autodiff.jit.numba_backend import compile_numba, require_numba
from autodiff.jit.specialize import runs_unknown_code, specialize
from autodiff.ops.control import variable as variable_op
from autodiff.ops.runtime import complex_among

BACKENDS = ("python", "numba")
# Signatures kept per derivative; the least recently compiled is dropped beyond this.
MAX_SIGNATURES = 64


def backend_of(jit: bool | str) -> str | None:
    """``None`` (no specialisation), ``"python"`` or ``"numba"`` for a ``jit=`` argument."""
    if jit is False or jit is None:
        return None
    if jit is True:
        return "python"
    if jit in BACKENDS:
        return jit
    raise ValueError(f"jit must be False, True or 'numba', not {jit!r}")


class Specialized:
    """The compiled specialisations of one derivative, one per call signature."""

    def __init__(self, general: Callable, backend: str, optimize: bool) -> None:
        self.general = general
        self.backend = backend
        self.optimize = optimize
        self.signature = inspect.signature(general)
        self.compiled: dict[tuple, Callable] = {}
        # The specialisations the general derivative must never run after (their code
        # has effects, which happen once per call: see specialize.runs_unknown_code).
        self.once: set[Callable] = set()
        self._lock = threading.Lock()
        self.variables = _variables_read(general)
        self.by_structure = getattr(general, "by_structure", None)
        if backend == "numba":
            require_numba(general)

    def specialized(self, args: tuple, kwargs: dict) -> Callable:
        """The derivative specialised to arguments like these (compiled on first use)."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.general.__name__}(): {error}") from None
        bound.apply_defaults()
        values = bound.arguments
        return self.for_values(values, self.key_of(values))

    def key_of(self, values: dict) -> tuple:
        """The key of the specialisation for arguments named ``values``."""
        args, kwargs = self._split(values)
        return (tuple(value_key(v) for v in values.values()) + self.variables.keys()
                + self.per_call(*args, **kwargs))

    def per_call(self, *args, **kwargs) -> tuple:
        """For a derivative compiled per call signature (an int's value, a global
        number, a rank deciding its code: ``derivatives/structured.py``), the
        derivative for this call, which the specialisation specialises: a part of the
        key. Nothing for others."""
        by_structure = self.by_structure
        if by_structure is None or not by_structure.per_signature:
            return ()
        return (by_structure.for_call(args, kwargs),)

    def for_values(self, values: dict, key: tuple) -> Callable:
        """The specialisation for arguments named ``values`` (compiled on first use)."""
        with self._lock:  # one compilation per signature, however many threads ask
            function = self.compiled.get(key)
            if function is None:
                function, once = self._compile(values)
                if len(self.compiled) >= MAX_SIGNATURES:  # drop the oldest
                    self.once.discard(self.compiled.pop(next(iter(self.compiled))))
                self.compiled[key] = function
                if once:
                    self.once.add(function)
            return function

    def _compile(self, values: dict) -> tuple[Callable, bool]:
        """The specialisation, and whether it must run once per call (never followed by
        the general derivative, when it raises)."""
        # One compilation at a time in the process, like building derivatives.
        with compiling:
            return self._compile_now(values)

    def _compile_now(self, values: dict) -> tuple[Callable, bool]:
        general = self.general
        by_structure = getattr(general, "by_structure", None)
        specs = [argument_spec(v) for v in values.values()]
        containers = any(is_container(spec) for spec in specs)
        graph = getattr(general, "graph", None)
        complex_values = complex_among(tuple(values.values())) and not (
            graph is not None and graph.complex)
        if by_structure is not None and (containers or complex_values or graph is None
                                         and any(map(is_structured, specs))
                                         or by_structure.per_signature):
            # the derivative for this structure, or for complex values
            args, kwargs = self._split(values)
            general = by_structure.derivative_for(tuple(args), kwargs)
        graph = getattr(general, "graph", None)
        if graph is None:  # assembled from several products (forward over a loop): as is
            return general, True
        graph, _ = graph.copy()
        once = runs_unknown_code(graph)
        arguments = [of_argument(values.get(p.hint)) for p in graph.params]
        variables = _variables_read(general).abstract()
        specialize(graph, arguments, backend=self.backend, optimize=self.optimize,
                   variables=variables)
        if self.backend == "numba":
            args, kwargs = self._split(values)
            return compile_numba(graph, general, args, kwargs, values,
                                 infer(graph, arguments, variables)), once
        return finish(graph, general.original, general.original_graph,
                      general.where, getattr(general, "check_finite", False)), once

    def _split(self, values: dict) -> tuple[tuple, dict]:
        args, kwargs = [], {}
        for name, param in self.signature.parameters.items():
            if param.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[name] = values[name]
            else:
                args.append(values[name])
        return tuple(args), kwargs


_ndarray = np.ndarray
class _Variables:
    """The global and closure variables a derivative reads at call time, each in the
    namespace of the code that reads it: their kinds and shapes are part of the
    signature, read at each call."""

    def __init__(self, names: list[tuple[str, Scope]]) -> None:
        self.names = names

    def keys(self) -> tuple:
        return tuple(value_key(scope.read(name)) for name, scope in self.names)

    def abstract(self) -> dict:
        return {(name, scope): of_argument(scope.read(name)) for name, scope in self.names}


def _variables_read(general: Callable) -> _Variables:
    graph = getattr(general, "graph", None)
    found = dict.fromkeys(
        (node.args[0].value, node.args[1].value) for node in walk(graph.nodes if graph else [])
        if not isinstance(node, Region) and node.op is variable_op)
    return _Variables(list(found))


def value_key(a) -> object:
    """What a specialisation assumes of one argument: its kind, shape and dtype; of a
    structure, its structure and its leaves'."""
    kind = type(a)
    if kind is _ndarray:
        return (a.shape, a.dtype)
    if kind is float:
        return float
    if kind is dict or kind is list or kind is tuple:  # of arrays and floats: quickly
        parts = a.values() if kind is dict else a
        leaves = tuple((p.shape, p.dtype) if type(p) is _ndarray else float
                       if type(p) is float else None for p in parts)
        if None not in leaves:
            return (kind, tuple(a) if kind is dict else len(a), leaves)
    return signature_key(a)


# The dispatcher has the derivative's own parameters, so a call costs one
# dictionary lookup more than calling the specialised code directly.
# Specialised code computes Python floats with Python's arithmetic and ``math``, which
# raise (math.exp(800.0), 1.0 / 0.0) where NumPy gives inf or nan, as in the branch a
# ``where`` does not take: then the general derivative, in NumPy, answers the call;
# but never after code with effects (a print, an append: ``once``), which ran already.
_DISPATCHER = """\
def {name}({parameters}):
    _jit_function_ = _jit_lookup_(({keys}){variables}{per_call})
    if _jit_function_ is None:
        _jit_function_ = _jit_compile_({{{values}}})
    try:
        return _jit_function_({call})
    except (ArithmeticError, ValueError):
        if _jit_function_ in _jit_once_:
            raise
    return _jit_general_({call})
"""


def _dispatcher(state: Specialized) -> Callable:
    general = state.general
    params = list(state.signature.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        def derivative(*args, **kwargs):
            function = state.specialized(args, kwargs)
            try:
                return function(*args, **kwargs)
            except (ArithmeticError, ValueError):
                if function in state.once:
                    raise
            return general(*args, **kwargs)

        return derivative
    names = [p.name for p in params]
    # type(), not .__class__, which loads a lazy proxy the call may never use.
    key = ("(({0}.shape, {0}.dtype) if type({0}) is _jit_ndarray_ else float "
           "if type({0}) is float else _jit_key_({0}))")
    name = function_name(general.__name__)
    call = ", ".join(name if p.kind is not p.KEYWORD_ONLY else f"{name}={name}"
                     for name, p in zip(names, params))
    text = _DISPATCHER.format(
        name=name,
        parameters=_without_defaults(state.signature),
        keys="".join(key.format(name) + ", " for name in names),
        variables=" + _jit_variables_()" if state.variables.names else "",
        per_call=f" + (_jit_per_call_({call}) if _jit_by_structure_.per_signature else ())"
        if state.by_structure is not None else "",
        values=", ".join(f"{name!r}: {name}" for name in names),
        call=call)
    namespace = {"_jit_lookup_": state.compiled.get, "_jit_ndarray_": _ndarray,
                 "_jit_key_": value_key, "_jit_general_": general,
                 "_jit_variables_": state.variables.keys, "_jit_once_": state.once,
                 "_jit_per_call_": raised_at_call(state.per_call),
                 "_jit_by_structure_": state.by_structure,
                 "_jit_compile_": raised_at_call(lambda values: state.for_values(
                     values, state.key_of(values)))}
    filename = remember_source(text, f"dispatcher of {general.__name__}")
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - names only, no values
    derivative = namespace[name]
    origins.register(derivative, filename, None)
    derivative.__defaults__ = general.__defaults__
    derivative.__kwdefaults__ = general.__kwdefaults__
    return derivative


def _without_defaults(signature: inspect.Signature) -> str:
    """The parameter list as text, defaults left to ``__defaults__`` (a default's
    repr need not be valid source)."""
    empty = inspect.Parameter.empty
    bare = signature.replace(parameters=[p.replace(default=empty, annotation=empty)
                                         for p in signature.parameters.values()],
                             return_annotation=empty)
    return str(bare)[1:-1]


def specialized_derivative(general: Callable, backend: str, optimize: bool) -> Callable:
    """A function that runs ``general`` specialised to each call's signature.

    It carries the general derivative's attributes (``.source``, ``.graph``, ...)
    and ``.source_for(*args)``, the text specialised to arguments like ``args``.
    """
    state = Specialized(general, backend, optimize)
    derivative = _dispatcher(state)
    for name in ("source", "graph", "original_graph", "original", "where", "seed_name",
                 "tangent_name", "__doc__"):
        if hasattr(general, name):
            setattr(derivative, name, getattr(general, name))
    derivative.__qualname__ = getattr(general, "__qualname__", general.__name__)
    derivative.__module__ = getattr(general, "__module__", None)
    derivative.general = general
    derivative.jit = True if backend == "python" else backend
    derivative.specializations = state
    derivative.source_for = lambda *args, **kwargs: state.specialized(args, kwargs).source
    derivative.source_for.__doc__ = "The generated source specialised to arguments like these."
    derivative._repr_html_ = functools.partial(_specialized_html, derivative)
    return derivative


def _specialized_html(derivative: Callable) -> str:
    """What a notebook shows of a derivative specialised per signature: the code of the
    latest signature called, or, before any call, the general code it starts from."""
    how = "numba" if derivative.jit == "numba" else "jit=True"
    return latest_compiled_html(
        derivative, list(derivative.specializations.compiled.values()), "signature",
        f"Specialised ({how}) to the kinds, shapes and dtypes of each new signature of "
        "arguments at its first call; until then, the general code it starts from:",
        general=True)
