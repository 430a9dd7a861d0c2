"""Derivatives of bound methods and ``functools.partial`` objects.

``ad.grad(model.loss)`` is the derivative of ``Model.loss`` with ``self`` given:
``wrt`` counts the method's own parameters, as ``inspect.signature(model.loss)``
does (``wrt=0`` is ``x`` in ``loss(self, x, t)``), and ``wrt="self"`` names the
object, whose gradient is a copy of it holding the gradients of its arrays. The
object is read when the derivative is called, so it sees the arrays it holds
then. ``ad.grad(functools.partial(loss, params))`` likewise differentiates
``loss`` with ``params`` given.

``ad.grad(model)`` of a callable object of the user's class (a model, a loss object)
is ``ad.grad(model.__call__)``: the derivative of its class's ``__call__`` with
``self`` given, ``wrt=0`` the first parameter after ``self`` and ``wrt="self"`` the
object, whose arrays (the model's parameters) are read when the derivative is called.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable

from autodiff.derivatives.cache import Assembled
from autodiff.derivatives.wrt import Wrt
from autodiff.user_code import is_user_class


def unbound(fn) -> tuple[Callable, tuple, dict, str | None] | None:
    """``(function, leading arguments, keywords, name of self)`` of a bound method, a
    partial of a Python function or a callable object of the user's class; None for
    anything else."""
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        first = next(iter(inspect.signature(fn.__func__).parameters), None)
        return fn.__func__, (fn.__self__,), {}, first
    call = _call_of(fn)
    if call is not None:
        first = next(iter(inspect.signature(call).parameters), None)
        return call, (fn,), {}, first
    if isinstance(fn, functools.partial):
        inner = unbound(fn.func)
        if inner is not None:
            function, leading, keywords, self_name = inner
            return function, (*leading, *fn.args), {**keywords, **fn.keywords}, self_name
        if isinstance(fn.func, types.FunctionType):
            return fn.func, tuple(fn.args), dict(fn.keywords), None
    return None


def _call_of(obj) -> Callable | None:
    """The ``__call__`` of ``obj``'s class when ``obj`` is an object of the user's class
    whose ``__call__`` is a Python function (read without running the object's code)."""
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType,
                        functools.partial)) or not is_user_class(type(obj)):
        return None
    call = inspect.getattr_static(type(obj), "__call__", None)
    return call if isinstance(call, types.FunctionType) else None


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

    def __getattr__(self, name: str):
        """What the derivative says of itself (``tangent_name``, ``graph``, ...)."""
        if name.startswith("__") or name in ("derivative", "leading", "keywords"):
            raise AttributeError(name)
        return getattr(self.derivative, name)

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
