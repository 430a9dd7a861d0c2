"""Kernels for Python floats: ``math.sin(x)`` where NumPy's ``np.sin(x)`` would be called.

A NumPy ufunc on a Python float costs about a microsecond; the ``math`` function
a few tens of nanoseconds. Derivatives specialised to float arguments (see
:mod:`autodiff.transforms.specialize`) call these instead. Like any arithmetic
on Python floats, they raise (``ValueError: math domain error``,
``OverflowError``) where NumPy would return ``nan`` or ``inf`` with a warning.
"""

from __future__ import annotations

from autodiff.ops.registry import defop

# NumPy's name of each function -> its name in ``math``.
MATH_NAMES = {
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp",
    "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
    "sqrt": "sqrt", "abs": "fabs",
}


@defop("math", lambda named: f"math.{named['function'].value}(x)", shape="scalar",
       floating="always")
def math_function(function, x): ...
