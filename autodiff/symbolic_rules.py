"""The SymPy form of each op, for ``autodiff.symbolic``: one rule per op name.

A rule takes the op's inputs evaluated on SymPy values (expressions, or NumPy
object arrays of them) and returns its output the same way. Structural ops go
through NumPy on object arrays; elementwise ones through ``np.frompyfunc``.

>>> import sympy as sp
>>> RULES["sin"](sp.Symbol("x"))
sin(x)
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import expm1, hypot, log1p, log2, log10


class _Unsupported(Exception):
    """Raised by a rule; the evaluator adds the user's line and turns it into SymbolicError."""


class _Shape(tuple):
    """``np.shape(a)`` remembering ``a``: indexing ``()`` means ``a`` should have had a shape."""

    of: object = None


def _scalar_symbols(value) -> set:
    if isinstance(value, _Shape) and value == ():
        value = value.of
    if isinstance(value, tuple):
        return set().union(*map(_scalar_symbols, value)) if value else set()
    return set(value.free_symbols) if isinstance(value, sp.Basic) else set()


def _decided(value) -> bool | None:
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


def _integer(value) -> int | None:
    if isinstance(value, (int, np.integer, sp.Integer)):
        return int(value)
    return None


# ----- the rules: one SymPy form per op -----


def _elementwise(fn: Callable, arity: int = 1) -> Callable:
    return np.frompyfunc(fn, arity, 1)


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=object)


def _fold(fn: Callable, a, axis, keepdims: bool):
    """Reduce with ``fn`` (Max, Min) one axis at a time: object ufuncs take one per call."""
    a, pairwise = _array(a), np.frompyfunc(fn, 2, 1)
    axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = tuple(sorted(ax % a.ndim for ax in axes))
    for ax in axes:
        a = pairwise.reduce(a, axis=ax, keepdims=True)
    return a if keepdims else np.squeeze(a, axis=axes)


def _variance(a, axis, ddof, keepdims):
    a = _array(a)
    mean = np.mean(a, axis=axis, keepdims=True)
    centred = _SUBTRACT(a, mean)
    count = a.size // max(mean.size, 1)
    return np.sum(_MULTIPLY(centred, centred), axis=axis, keepdims=keepdims) / (count - ddof)


def _norm(x, ord, axis, keepdims):
    x = _array(x)
    if not (ord in (None, "fro") or (ord == 2 and (x.ndim == 1 or isinstance(axis, int)))):
        raise _Unsupported(f"np.linalg.norm with ord={ord!r} (the 2-norm of vectors and the "
                           "Frobenius norm are supported)")
    return _SQRT(np.sum(_MULTIPLY(x, x), axis=axis, keepdims=keepdims))


def _matrix(a) -> sp.Matrix:
    a = _array(a)
    if a.ndim != 2:
        raise _Unsupported("np.linalg on stacks of matrices (one matrix at a time is supported)")
    return sp.Matrix(a.tolist())


def _solve(a, b):
    b = _array(b)
    solution = _matrix(a).LUsolve(sp.Matrix(b.reshape(len(b), -1).tolist()))
    return _array(solution.tolist()).reshape(b.shape)


def _index(index):
    """An index with every part a Python int, slice or constant array; else unsupported."""
    if isinstance(index, tuple):
        return tuple(_index(i) for i in index)
    if isinstance(index, slice):
        return slice(*(_index(p) for p in (index.start, index.stop, index.step)))
    if isinstance(index, sp.Integer):
        return int(index)
    if isinstance(index, sp.Basic) or (isinstance(index, np.ndarray) and index.dtype == object):
        raise _Unsupported("an index or mask that depends on the data")
    return index


def _setitem(a, index, value):
    out = np.array(a, dtype=object)
    out[_index(index)] = value
    return out


def _cast(a, dtype=None):
    if not (isinstance(a, sp.Basic) or (isinstance(a, np.ndarray) and a.dtype == object)):
        return np.array(a, dtype=dtype)  # a constant: NumPy casts it
    if dtype is not None and not np.issubdtype(np.dtype(dtype), np.floating):
        raise _Unsupported(f"a cast to {np.dtype(dtype)} (SymPy computes with real numbers)")
    return np.array(a, dtype=object) if isinstance(a, np.ndarray) else a


def _shape(a) -> _Shape:
    shape = _Shape(np.shape(a))
    shape.of = a
    return shape


def _where(condition, x, y):
    decided = _decided(condition)
    if decided is not None:
        return x if decided else y
    return sp.Piecewise((x, condition), (y, True))


def _clip(a, low, high):
    a = a if low is None else sp.Max(a, low)
    return a if high is None else sp.Min(a, high)


def _truth(combine: Callable, python: Callable) -> Callable:
    def rule(*values):
        decided = [_decided(v) for v in values]
        return python(*decided) if None not in decided else combine(*values)
    return rule


class _StopGradient(sp.Function):
    """``ad.stop_gradient(x)``: the value of ``x``, with a derivative of zero."""

    def fdiff(self, argindex: int = 1):
        return sp.S.Zero

    @classmethod
    def eval(cls, x):
        return x if isinstance(x, (int, float, sp.Number)) else None


_StopGradient.__name__ = "stop_gradient"  # lambdify calls it by this name: the identity

_ADD = _elementwise(operator.add, 2)
_SUBTRACT = _elementwise(operator.sub, 2)
_MULTIPLY = _elementwise(operator.mul, 2)
_SQRT = _elementwise(sp.sqrt)

RULES: dict[str, Callable] = {
    # ----- arithmetic -----
    "add": _ADD, "accumulate": _ADD, "subtract": _SUBTRACT, "multiply": _MULTIPLY,
    "divide": _elementwise(operator.truediv, 2), "power": _elementwise(operator.pow, 2),
    "negative": _elementwise(operator.neg), "positive": _elementwise(operator.pos),
    "square": _elementwise(lambda x: x ** 2),
    # ----- elementwise functions -----
    "sin": _elementwise(sp.sin), "cos": _elementwise(sp.cos), "tan": _elementwise(sp.tan),
    "arcsin": _elementwise(sp.asin), "arccos": _elementwise(sp.acos),
    "arctan": _elementwise(sp.atan), "sinh": _elementwise(sp.sinh),
    "cosh": _elementwise(sp.cosh), "tanh": _elementwise(sp.tanh), "exp": _elementwise(sp.exp),
    "log": _elementwise(sp.log), "sqrt": _SQRT, "abs": _elementwise(sp.Abs),
    # The C99 forms keep lambdify's code as accurate as NumPy's own log1p and expm1.
    "log1p": _elementwise(log1p), "expm1": _elementwise(expm1), "log2": _elementwise(log2),
    "log10": _elementwise(log10), "hypot": _elementwise(hypot, 2),
    "arctan2": _elementwise(sp.atan2, 2), "maximum": _elementwise(sp.Max, 2),
    "minimum": _elementwise(sp.Min, 2),
    "logaddexp": _elementwise(lambda a, b: sp.log(sp.exp(a) + sp.exp(b)), 2),
    "where": _elementwise(_where, 3), "clip": _elementwise(_clip, 3),
    "sign": _elementwise(sp.sign), "floor": _elementwise(sp.floor),
    "ceil": _elementwise(sp.ceiling), "stop_gradient": _elementwise(_StopGradient),
    # ----- comparisons and truth values -----
    "greater": _elementwise(sp.Gt, 2), "greater_equal": _elementwise(sp.Ge, 2),
    "less": _elementwise(sp.Lt, 2), "less_equal": _elementwise(sp.Le, 2),
    "equal": _elementwise(sp.Eq, 2), "not_equal": _elementwise(sp.Ne, 2),
    "logical_and": _elementwise(sp.And, 2), "logical_or": _elementwise(sp.Or, 2),
    "logical_not": _elementwise(sp.Not),
    "truth_not": _truth(sp.Not, operator.not_),
    "truth_and": _truth(sp.And, lambda a, b: a and b),
    "truth_or": _truth(sp.Or, lambda a, b: a or b),
    # ----- reductions -----
    "sum": lambda a, axis, keepdims: np.sum(_array(a), axis=axis, keepdims=keepdims),
    "mean": lambda a, axis, keepdims: np.mean(_array(a), axis=axis, keepdims=keepdims),
    "prod": lambda a, axis, keepdims: np.prod(_array(a), axis=axis, keepdims=keepdims),
    "max": lambda a, axis, keepdims: _fold(sp.Max, a, axis, keepdims),
    "min": lambda a, axis, keepdims: _fold(sp.Min, a, axis, keepdims),
    "var": _variance,
    "std": lambda a, axis, ddof, keepdims: _SQRT(_variance(a, axis, ddof, keepdims)),
    # ----- linear algebra -----
    "matmul": lambda a, b: np.matmul(_array(a), _array(b)),
    "dot": lambda a, b: np.dot(_array(a), _array(b)),
    "inner": lambda a, b: np.inner(_array(a), _array(b)),
    "outer": lambda a, b: np.outer(_array(a), _array(b)),
    "trace": lambda a, offset, axis1, axis2: np.trace(_array(a), offset, axis1, axis2),
    "norm": _norm,
    "einsum": lambda subscripts, operands: np.einsum(subscripts, *map(_array, operands)),
    "det": lambda a: _matrix(a).det(), "inv": lambda a: _array(_matrix(a).inv().tolist()),
    "solve": _solve,
    # ----- shapes and indexing -----
    "reshape": lambda a, shape, order: np.reshape(_array(a), shape, order=order),
    "ravel": lambda a: np.ravel(_array(a)),
    "squeeze": lambda a, axis: np.squeeze(_array(a), axis=axis),
    "expand_dims": lambda a, axis: np.expand_dims(_array(a), axis),
    "transpose": lambda a, axes: np.transpose(_array(a), axes),
    "swapaxes": lambda a, axis1, axis2: np.swapaxes(_array(a), axis1, axis2),
    "moveaxis": lambda a, source, destination: np.moveaxis(_array(a), source, destination),
    "broadcast_to": lambda array, shape: np.broadcast_to(_array(array), shape),
    "concatenate": lambda arrays, axis: np.concatenate([_array(a) for a in arrays], axis=axis),
    "stack": lambda arrays, axis: np.stack([_array(a) for a in arrays], axis=axis),
    "array_of_list": lambda items: (np.stack([_array(a) for a in items]) if items
                                    else np.array([])),
    "array": _cast, "astype": _cast, "asarray": lambda a: a,
    "float": lambda x: x.item() if isinstance(x, np.ndarray) else x,
    "getitem": lambda a, index: a[_index(index)], "setitem": _setitem,
    "shape": _shape, "len": len, "ndim": np.ndim, "size": np.size,
    "result_type": lambda a: np.dtype(float), "range_of": lambda *bounds: range(*bounds),
    # ----- constructors (their arguments are constants, or NumPy says why not) -----
    "zeros": lambda shape, dtype: np.zeros(shape, dtype=dtype),
    "ones": lambda shape, dtype: np.ones(shape, dtype=dtype),
    "full": lambda shape, fill_value, dtype: np.full(shape, fill_value, dtype=(
        object if isinstance(fill_value, sp.Basic) else dtype)),
    "zeros_like": lambda a, dtype: np.zeros(np.shape(a), dtype=dtype),
    "ones_like": lambda a, dtype: np.ones(np.shape(a), dtype=dtype),
    "full_like": lambda a, fill_value, dtype: np.full(np.shape(a), fill_value, dtype=(
        object if isinstance(fill_value, sp.Basic) else dtype)),
    "eye": lambda N, M, k, dtype: np.eye(N, M, k, dtype=dtype),
    "arange": lambda start, stop, step, dtype: np.arange(start, stop, step, dtype=dtype),
    "linspace": lambda start, stop, num, endpoint, dtype, axis: np.linspace(
        start, stop, num, endpoint, dtype=dtype, axis=axis),
    # ----- Python lists the function builds -----
    "list_new": list, "list_append": lambda lst, item: [*lst, item],
    "list_getitem": lambda lst, index: lst[_index(index)],
    "list_sum": lambda items: functools.reduce(_ADD, items, 0),
}
