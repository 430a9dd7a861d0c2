"""autodiff: automatic differentiation of NumPy code by source transformation.

>>> import numpy as np
>>> import autodiff as ad
>>> def loss(w):
...     return np.sum(np.tanh(w) ** 2)
>>> dloss = ad.grad(loss)
>>> print(dloss.source)  # doctest: +SKIP
"""

from autodiff.api import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp
from autodiff.custom import custom_grad, no_grad, register_gradient, stop_gradient
from autodiff.errors import (
    AutodiffError,
    NonDifferentiableError,
    NonScalarOutputError,
    SourceUnavailableError,
    UnknownFunctionError,
    UnsupportedSyntaxError,
    WrtError,
)

__version__ = "0.1.0"

__all__ = [
    "AutodiffError",
    "NonDifferentiableError",
    "NonScalarOutputError",
    "SourceUnavailableError",
    "UnknownFunctionError",
    "UnsupportedSyntaxError",
    "WrtError",
    "custom_grad",
    "grad",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "no_grad",
    "register_gradient",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]
