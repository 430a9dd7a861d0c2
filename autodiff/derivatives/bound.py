"""Derivatives of bound methods and ``functools.partial`` objects.

``ad.grad(model.loss)`` is the derivative of ``Model.loss`` with ``self`` given:
``wrt`` counts the method's own parameters, as ``inspect.signature(model.loss)``
does (``wrt=0`` is ``x`` in ``loss(self, x, t)``), and ``wrt="self"`` names the
object, whose gradient is a copy of it holding the gradients of its arrays. The
object is read when the derivative is called, so it sees the arrays it holds
then. ``ad.grad(functools.partial(loss, params))`` likewise differentiates
``loss`` with ``params`` given.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable

from autodiff.derivatives.cache import Assembled
from autodiff.derivatives.wrt import Wrt


def unbound(fn) -> tuple[Callable, tuple, dict, str | None] | None:
    """``(function, leading arguments, keywords, name of self)`` of a bound method or
    a partial of a Python function; None for anything else."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        first = next(iter(inspect.signature(fn.__func__).parameters), None)
        return fn.__func__, (fn.__self__,), {}, first
    if isinstance(fn, functools.partial):
        inner = unbound(fn.func)
        if inner is not None:
            function, leading, keywords, self_name = inner
            return function, (*leading, *fn.args), {**keywords, **fn.keywords}, self_name
        if isinstance(fn.func, types.FunctionType):
            return fn.func, tuple(fn.args), dict(fn.keywords), None
    return None


def shifted_wrt(wrt: Wrt, given: int, self_name: str | None) -> Wrt:
    """``wrt`` of the bound callable as ``wrt`` of its function, whose first ``given``
    parameters are given: positions move by ``given``; ``"self"`` is the object."""
    if isinstance(wrt, (tuple, list)):
        return type(wrt)(shifted_wrt(item, given, self_name) for item in wrt)
    if isinstance(wrt, bool) or not isinstance(wrt, int):
        return 0 if self_name is not None and wrt == "self" else wrt
    return wrt + given if wrt >= 0 else wrt


class BoundDerivative(Assembled):
    """A derivative of a function with its first arguments given (see the module doc)."""

    def __init__(self, derivative: Callable, leading: tuple, keywords: dict) -> None:
        self.derivative, self.leading, self.keywords = derivative, leading, keywords
        self.__name__ = getattr(derivative, "__name__", "derivative")
        self.__doc__ = getattr(derivative, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self.derivative(*self.leading, *args, **{**self.keywords, **kwargs})

    @property
    def source(self) -> str:
        return self.derivative.source

    def source_for(self, *args, **kwargs) -> str:
        """The generated source that runs for arguments like these."""
        source_for = getattr(self.derivative, "source_for", None)
        if source_for is None:
            return self.source
        return source_for(*self.leading, *args, **{**self.keywords, **kwargs})

    def _repr_html_(self) -> str | None:
        """The derivative's own display in a notebook (None, plain text, if it has none)."""
        display = getattr(self.derivative, "_repr_html_", None)
        return display() if display is not None else None


__all__ = ["BoundDerivative", "shifted_wrt", "unbound"]
