"""Conversions of a computed value, as Python and NumPy write them.

- ``float(v)`` is ``ops/shape.py``'s ``float``; ``np.float64(v)``, ``np.float32(v)``
  (a NumPy scalar, or an array of that dtype) and ``v.item()`` (the one element as a
  Python number) pass the gradient as it is, like ``float``;
- ``int(v)``, ``bool(v)``, ``np.int64(v)``, ``np.bool_(v)`` are piecewise constant in
  ``v``: their results carry no gradient in either mode (a comparison's result does
  not either), so code indexing with ``x[int(x[0])]`` or scaling by ``bool(v)``
  differentiates the same way forward and backward.
"""

from __future__ import annotations

import builtins

import numpy as np

from autodiff.graph.ir import Const
from autodiff.ops.registry import defop
from autodiff.ops.shape_rules import scalar_result, shape_like

# ----- a floating NumPy scalar type: the gradient passes -----


def _numpy_type(dtype: str) -> tuple:
    """``np.<dtype>`` as an alias giving the op the dtype's name as a constant."""
    def adapter(x):
        return {"x": x, "dtype": Const(dtype)}
    return getattr(np, dtype), adapter


# np.float64(a) of a float64 array is ``a`` itself, not a copy: never fresh.
@defop("numpy_float", lambda named: f"np.{named['dtype'].value}(x)",
       aliases=tuple(_numpy_type(dtype) for dtype in ("float64", "float32", "float16")),
       diff=("x",), shape=shape_like("x"), floating="always", jvp="linear", fresh=False,
       sympy=lambda x, dtype: x)
def numpy_float(x, dtype): ...


# A cast between floating dtypes is the identity on values: its adjoint is the
# adjoint itself (as astype's), taken back to the argument's dtype where it lands.
@numpy_float.defvjp
def _(g, ans, x, dtype):
    return g


# numba converts numbers with np.float64(s) but arrays with astype only.
@numpy_float.defnumba
def _(rewrite, x, dtype):
    if rewrite.array_shape(x) is None:
        return None
    return rewrite.emit("astype", x, Const(np.dtype(dtype.value)))


@defop("item", "a.item()", methods=("item",), diff=("a",), shape=scalar_result,
       floating="inputs", jvp="linear", sympy=lambda a: np.asarray(a).item())
def item(a): ...


# ``a`` holds one element (any shape of size 1): its adjoint is the scalar's, in a's shape.
@item.defvjp
def _(g, ans, a):
    return np.reshape(g, np.shape(a))


# ----- integers and truth values: piecewise constant, no gradient -----

STEPS = "piecewise constant: its derivative is 0 wherever it has one"
NO_SYMPY = "an integer or a truth value (SymPy computes with real numbers)"
_discrete = {"nondiff_output": True, "floating": None, "no_sympy": NO_SYMPY}


@defop("int", "int(x)", aliases=(builtins.int,), shape=scalar_result,
       no_gradient="an integer: " + STEPS, **_discrete)
def int_(x): ...


@defop("bool", "bool(x)", aliases=(builtins.bool,), shape=scalar_result,
       no_gradient="a truth value: " + STEPS, **_discrete)
def bool_(x): ...


@defop("numpy_discrete", lambda named: f"np.{named['dtype'].value}(x)",
       aliases=tuple(_numpy_type(dtype) for dtype in (
           "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool_")),
       shape=shape_like("x"), fresh=False, no_gradient="a cast to integers or booleans: " + STEPS,
       **_discrete)
def numpy_discrete(x, dtype): ...
