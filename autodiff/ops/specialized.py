"""Ops only specialised derivatives use (see :mod:`autodiff.jit.specialize`).

Once shapes, dtypes and kinds are known, two things a general kernel must not
assume become safe:

- **Python floats**: ``math.sin(x)`` instead of ``np.sin(x)``. A NumPy ufunc on
  a float costs about a microsecond, the ``math`` function tens of
  nanoseconds. Like any arithmetic on Python floats, they raise
  (``ValueError: math domain error``, ``OverflowError``) where NumPy would
  return ``nan`` or ``inf`` with a warning.
- **Updates in place**: ``y *= 2`` and ``np.tanh(t, out=t)`` where the result has
  its operand's shape and dtype. Codegen writes the in-place form only when
  the operand is an array the derivative owns and nothing reads it afterwards
  (:mod:`autodiff.codegen.memory`); otherwise ``y * 2`` as usual.
"""

from __future__ import annotations

from autodiff.ops.registry import defop
from autodiff.ops.shape_rules import scalar_result, shape_like

# Specialised derivatives are never differentiated (a derivative of one differentiates
# the general graph): their params are in diff so that a gradient reaching them by
# mistake is an error, not a zero.
SPECIALISED = ("specialised derivatives only (jit.specialize), which are never "
               "differentiated")

# An op's ``math_form``: its function of Python's ``math``, for a Python float.
@defop("math", lambda named: f"math.{named['function'].value}(x)", shape=scalar_result,
       floating="always", diff=("x",), no_gradient=SPECIALISED)
def math_function(function, x): ...


# An op's ``update_operator``: ``x1 += x2``.
@defop("update", lambda named: f"x1 {named['operator'].value} x2", shape=shape_like("x1"),
       inplace=lambda named: f"x1 {named['operator'].value}= x2", diff=("x1", "x2"),
       no_gradient=SPECIALISED)
def update(x1, x2, operator): ...


# An op with ``ufunc_out``: ``np.tanh(x, out=x)``.
@defop("ufunc_update", lambda named: f"np.{named['function'].value}(x)", shape=shape_like("x"),
       inplace=lambda named: f"np.{named['function'].value}(x, out=x)", diff=("x",),
       no_gradient=SPECIALISED)
def ufunc_update(x, function): ...


# numba reshapes only contiguous arrays.
@defop("contiguous", "np.ascontiguousarray(a)", shape=shape_like("a"), fresh=False, diff=("a",),
       no_gradient=SPECIALISED)
def contiguous(a): ...


# numba holds a Python float as a float64, which makes a float32 array it meets
# float64, where NumPy keeps float32: ``np.float32(s)``.
@defop("precision", lambda named: f"np.{named['dtype'].value}(x)", shape=scalar_result,
       floating="always", diff=("x",), no_gradient=SPECIALISED)
def precision(x, dtype): ...
