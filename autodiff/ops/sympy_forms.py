"""What the SymPy forms of ops are written with (each op's form is in its own block).

An op's ``sympy`` form takes its inputs evaluated on SymPy values (expressions,
or NumPy object arrays of them) and returns its output the same way;
``autodiff.tools.symbolic`` evaluates a graph with them. Structural ops go
through NumPy on object arrays, elementwise ones through ``np.frompyfunc``
(:func:`elementwise`). SymPy is imported the first time a form runs, never when
autodiff is imported.

>>> elementwise("sin")(sp.Symbol("x"))
sin(x)
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

import numpy as np


class _LazyModule:
    """A module imported on first use: ``sp.sin`` imports SymPy then."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        return getattr(importlib.import_module(self._name), attribute)


sp = _LazyModule("sympy")
cfunctions = _LazyModule("sympy.codegen.cfunctions")  # C99 forms: log1p, expm1, hypot, ...


class Unsupported(Exception):
    """Raised by a form; the evaluator adds the user's line and makes it a SymbolicError."""


def elementwise(fn: Callable | str, arity: int = 1) -> Callable:
    """The form of an elementwise op applying ``fn`` (or SymPy's function of that name)
    to each element."""
    if isinstance(fn, str):
        name = fn

        def fn(*args):
            return getattr(sp, name)(*args)

    return np.frompyfunc(fn, arity, 1)


def objects(value) -> np.ndarray:
    """``value`` as a NumPy array of objects."""
    return np.asarray(value, dtype=object)


def fold(fn: Callable, a, axis, keepdims: bool):
    """Reduce with ``fn`` (Max, Min) one axis at a time: object ufuncs take one per call."""
    a, pairwise = objects(a), np.frompyfunc(fn, 2, 1)
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = tuple(sorted(ax % a.ndim for ax in axes))
    for ax in axes:
        a = pairwise.reduce(a, axis=ax, keepdims=True)
    return a if keepdims else np.squeeze(a, axis=axes)


def matrix(a):
    """One matrix as a ``sympy.Matrix`` (np.linalg on a stack is not supported)."""
    a = objects(a)
    if a.ndim != 2:
        raise Unsupported("np.linalg on stacks of matrices (one matrix at a time is supported)")
    return sp.Matrix(a.tolist())


def index(key):
    """An index with every part a Python int, slice or constant array; else unsupported."""
    if isinstance(key, tuple):
        return tuple(index(i) for i in key)
    if isinstance(key, slice):
        return slice(*(index(p) for p in (key.start, key.stop, key.step)))
    if isinstance(key, sp.Integer):
        return int(key)
    if isinstance(key, sp.Basic) or (isinstance(key, np.ndarray) and key.dtype == object):
        raise Unsupported("an index or mask that depends on the data")
    return key


def cast(a, dtype=None):
    """``np.array(a, dtype)``: real numbers stay SymPy values; other dtypes are refused."""
    if not (isinstance(a, sp.Basic) or (isinstance(a, np.ndarray) and a.dtype == object)):
        return np.array(a, dtype=dtype)  # a constant: NumPy casts it
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.floating):
        raise Unsupported(f"a cast to {np.dtype(dtype)} (SymPy computes with real numbers)")
    return np.array(a, dtype=object) if isinstance(a, np.ndarray) else a


class Shape(tuple):
    """``np.shape(a)`` remembering ``a``: indexing ``()`` means ``a`` should have had a shape."""

    of: object = None


def shape_of(a) -> Shape:
    shape = Shape(np.shape(a))
    shape.of = a
    return shape


def scalar_symbols(value) -> set:
    """The symbols a value (or a shape of one, or a tuple of them) depends on."""
    if isinstance(value, Shape) and value == ():
        value = value.of
    if isinstance(value, tuple):
        return set().union(*map(scalar_symbols, value)) if value else set()
    return set(value.free_symbols) if isinstance(value, sp.Basic) else set()


def decided(value) -> bool | None:
    """The truth of a condition known before the data is seen, else None."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            return None
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, np.bool_, np.number)):
        return bool(value)
    if isinstance(value, sp.logic.boolalg.BooleanAtom):
        return bool(value)
    if isinstance(value, sp.Expr) and value.is_number:
        return not value.is_zero
    return None


def integer(value) -> int | None:
    if isinstance(value, (int, np.integer, sp.Integer)):
        return int(value)
    return None


def truth(combine: str, python: Callable) -> Callable:
    """A truth op (``not``, ``and``, ``or``): Python's when every value is decided, else
    SymPy's ``combine`` (Not, And, Or)."""

    def form(*values):
        known = [decided(v) for v in values]
        return python(*known) if None not in known else getattr(sp, combine)(*values)

    return form


@functools.cache
def stop_gradient_function():
    """``ad.stop_gradient`` as a SymPy function: the value of ``x``, derivative zero."""

    class StopGradient(sp.Function):
        def fdiff(self, argindex: int = 1):
            return sp.S.Zero

        @classmethod
        def eval(cls, x):
            return x if isinstance(x, (int, float, sp.Number)) else None

    StopGradient.__name__ = "stop_gradient"  # lambdify calls it by this name: the identity
    return StopGradient


__all__ = ["Shape", "Unsupported", "cast", "cfunctions", "decided", "elementwise", "fold",
           "index", "integer", "matrix", "objects", "scalar_symbols", "shape_of", "sp",
           "stop_gradient_function", "truth"]
