"""Derivatives specialised per call signature: ``ad.grad(f, jit=True)`` and ``jit="numba"``.

The first call with new argument kinds, shapes and dtypes specialises the
general derivative to them (:mod:`autodiff.transforms.specialize`), compiles
the result and caches it under that signature; later calls with the same
signature run it directly. With ``jit="numba"`` the specialised source is
compiled by ``numba.njit`` as well (:mod:`autodiff.codegen.numba_backend`).

>>> import numpy as np, autodiff as ad
>>> def f(x):
...     return np.sum(np.tanh(x) ** 2)
>>> g = ad.grad(f, jit=True)  # doctest: +SKIP
>>> print(g.source_for(np.ones(3)))  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable

import numpy as np

from autodiff.transforms.infer import of_argument, signature_key

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
        self._lock = threading.Lock()
        if backend == "numba":
            from autodiff.codegen.numba_backend import require_numba

            require_numba(general)

    def specialized(self, args: tuple, kwargs: dict, key: tuple | None = None) -> Callable:
        """The derivative specialised to arguments like these (compiled on first use)."""
        if key is None:
            key = call_key(args, kwargs)
        with self._lock:  # one compilation per signature, however many threads ask
            function = self.compiled.get(key)
            if function is None:
                function = self._compile(args, kwargs)
                if len(self.compiled) >= MAX_SIGNATURES:  # drop the oldest
                    del self.compiled[next(iter(self.compiled))]
                self.compiled[key] = function
            return function

    def _compile(self, args: tuple, kwargs: dict) -> Callable:
        from autodiff.api import _finish
        from autodiff.transforms.specialize import specialize

        graph = getattr(self.general, "graph", None)
        if graph is None:  # assembled from several products (forward over a loop): as is
            return self.general
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.general.__name__}(): {error}") from None
        bound.apply_defaults()
        graph, _ = graph.copy()
        arguments = [of_argument(bound.arguments.get(p.hint)) for p in graph.params]
        specialize(graph, arguments, backend=self.backend, optimize=self.optimize)
        if self.backend == "numba":
            from autodiff.codegen.numba_backend import compile_numba

            return compile_numba(graph, self.general, args, kwargs)
        return _finish(graph, self.general.original, self.general.original_graph,
                       self.general.where)


_ndarray = np.ndarray


def call_key(args: tuple, kwargs: dict) -> tuple:
    """The signature of a call: kinds, shapes and dtypes (and the value of flags)."""
    if len(args) == 1 and not kwargs:  # the common case, without building a list
        a = args[0]
        return ((a.shape, a.dtype) if a.__class__ is _ndarray
                else float if a.__class__ is float else signature_key(a),)
    key = tuple([(a.shape, a.dtype) if a.__class__ is _ndarray
                 else float if a.__class__ is float else signature_key(a) for a in args])
    if kwargs:
        key += tuple((name, signature_key(v)) for name, v in sorted(kwargs.items()))
    return key


def specialized_derivative(general: Callable, backend: str, optimize: bool) -> Callable:
    """A function that runs ``general`` specialised to each call's signature.

    It carries the general derivative's attributes (``.source``, ``.graph``, ...)
    and ``.source_for(*args)``, the text specialised to arguments like ``args``.
    """
    state = Specialized(general, backend, optimize)
    lookup = state.compiled.get

    def derivative(*args, **kwargs):
        key = call_key(args, kwargs)
        function = lookup(key)
        if function is None:
            function = state.specialized(args, kwargs, key)
        return function(*args, **kwargs)

    for name in ("source", "graph", "original_graph", "original", "where", "seed_name",
                 "tangent_name", "__doc__"):
        if hasattr(general, name):
            setattr(derivative, name, getattr(general, name))
    derivative.__name__ = general.__name__
    derivative.__qualname__ = getattr(general, "__qualname__", general.__name__)
    derivative.__module__ = getattr(general, "__module__", None)
    derivative.__signature__ = state.signature
    derivative.general = general
    derivative.jit = True if backend == "python" else backend
    derivative.specializations = state
    derivative.source_for = lambda *args, **kwargs: state.specialized(args, kwargs).source
    derivative.source_for.__doc__ = "The generated source specialised to arguments like these."
    return derivative
