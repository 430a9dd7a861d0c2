"""Derivatives of functions taking structures: one compiled per structure of the
arguments (:func:`~autodiff.frontend.structures.argument_spec`), as JAX traces per
pytree structure.

``ad.grad(loss)`` is compiled once for arrays and numbers when the code reads
its arguments as arrays. A call passing a dict, a list, a tuple, a namedtuple or
a dataclass (or ``None``, a string, a function) is handed over, by the first
lines of that derivative, to :class:`ByStructure`, which compiles (once per
structure) the derivative whose code reads each leaf by its key and returns
the gradient in the argument's structure. Code that reads an argument as a
structure (``params["W1"]``) has no derivative for arrays: it is compiled per
structure only.

>>> import numpy as np, autodiff as ad
>>> def loss(params, x):
...     return np.sum(np.tanh(x @ params["W"]))
>>> ad.grad(loss)({"W": np.ones((2, 2))}, np.ones(2))["W"].shape  # doctest: +SKIP
(2, 2)
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable

from autodiff.codegen.compile import remember_source
from autodiff.codegen.python import function_name
from autodiff.errors import raised_at_call
from autodiff.frontend.structures import argument_spec, is_structured

# Structures kept per derivative; the oldest is dropped beyond this.
MAX_STRUCTURES = 32


class ByStructure:
    """The derivatives of one transform of one function, compiled per structure of the
    arguments by ``build(specs)`` (``specs``: argument name -> spec)."""

    def __init__(self, name: str, build: Callable[[dict], Callable]) -> None:
        self.name = name
        self.build = build
        self.names: list[str] = []  # the parameters, in the order calls pass them
        self.built: dict[tuple, Callable] = {}
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        return self.derivative_for(args, kwargs)(*args, **kwargs)

    def derivative_for(self, args: tuple, kwargs: dict) -> Callable:
        """The derivative compiled for arguments structured like these."""
        key = tuple(argument_spec(a) for a in args) + tuple(
            (name, argument_spec(value)) for name, value in kwargs.items())
        derivative = self.built.get(key)
        if derivative is None:
            derivative = self._build(key, args, kwargs)
        return derivative

    def _build(self, key: tuple, args: tuple, kwargs: dict) -> Callable:
        with self._lock:
            derivative = self.built.get(key)
            if derivative is not None:
                return derivative
            specs = dict(zip(self.names, (argument_spec(a) for a in args)))
            specs.update((name, argument_spec(value)) for name, value in kwargs.items())
            derivative = self.build({name: spec for name, spec in specs.items()
                                     if is_structured(spec)})
            if len(self.built) >= MAX_STRUCTURES:
                del self.built[next(iter(self.built))]
            self.built[key] = derivative
            return derivative

    def source_for(self, *args, **kwargs) -> str:
        """The generated source of the derivative compiled for arguments like these."""
        return self.derivative_for(args, kwargs).source


def attach(derivative: Callable, by_structure: ByStructure) -> Callable:
    """``derivative`` (whose first lines hand structures to ``by_structure``) with
    ``.source_for(*args)``: the source that runs for arguments like ``args``."""
    signature = inspect.signature(derivative)
    by_structure.names = list(signature.parameters)

    def source_for(*args, **kwargs) -> str:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        if not any(is_structured(argument_spec(v)) for v in values):
            return derivative.source
        args, kwargs = _call_form(signature, bound.arguments)
        return by_structure.source_for(*args, **kwargs)

    derivative.by_structure = by_structure
    derivative.source_for = source_for
    return derivative


def _call_form(signature: inspect.Signature, values: dict) -> tuple[list, dict]:
    """The arguments as the generated code passes them on: every positional one by
    position, the keyword-only ones by name."""
    keyword_only = {name for name, p in signature.parameters.items()
                    if p.kind is p.KEYWORD_ONLY}
    return ([v for n, v in values.items() if n not in keyword_only],
            {n: v for n, v in values.items() if n in keyword_only})


_HANDING_OVER = '''\
def {name}({parameters}):
    """{doc}"""
    return by_structure({call})
'''


def per_structure_only(fn: Callable, name: str, by_structure: ByStructure,
                       reason: Exception) -> Callable:
    """A derivative of ``fn`` compiled for each structure of the arguments alone: its
    code reads an argument as a structure (``reason`` says where), so no derivative
    for arrays exists. ``.source`` says so; ``.source_for(*args)`` shows the code."""
    signature = inspect.signature(fn)
    empty = inspect.Parameter.empty
    bare = signature.replace(parameters=[p.replace(default=empty, annotation=empty)
                                         for p in signature.parameters.values()],
                             return_annotation=empty)
    call = ", ".join(f"{p}={p}" if q.kind is q.KEYWORD_ONLY else p
                     for p, q in signature.parameters.items())
    doc = (f"The derivative of {fn.__name__}, compiled for the structure of each call's "
           "arguments: .source_for(*args) shows the code.")
    text = _HANDING_OVER.format(name=function_name(name), parameters=str(bare)[1:-1],
                                call=call, doc=doc)
    namespace = {"by_structure": by_structure}
    filename = remember_source(text, f"structures of {fn.__name__}")
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - names only, no values
    derivative = namespace[function_name(name)]
    derivative.__defaults__ = fn.__defaults__
    derivative.__kwdefaults__ = fn.__kwdefaults__
    derivative.__qualname__ = name
    derivative.__module__ = getattr(fn, "__module__", None)
    derivative.source = text
    derivative.original = fn
    derivative.reason = reason
    by_structure.names = list(signature.parameters)
    derivative.by_structure = by_structure
    derivative.source_for = raised_at_call(by_structure.source_for)
    return derivative


__all__ = ["MAX_STRUCTURES", "ByStructure", "attach", "per_structure_only"]
