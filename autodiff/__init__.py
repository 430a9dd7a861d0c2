"""autodiff: automatic differentiation of NumPy code by source transformation.

>>> import numpy as np
>>> import autodiff as ad
>>> def loss(w):
...     return np.sum(np.tanh(w) ** 2)
>>> dloss = ad.grad(loss)
>>> print(dloss.source)  # doctest: +SKIP
"""

import sys as _sys

from autodiff import tree
from autodiff.api import (
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    value_and_grad,
    vjp,
)
from autodiff.errors import (
    ArgumentKindError,
    AutodiffError,
    CheckpointWarning,
    DerivativeError,
    NonDifferentiableError,
    NonFiniteError,
    UndefinedNameError,
    NonScalarOutputError,
    SourceUnavailableError,
    UnknownFunctionError,
    UnsupportedSyntaxError,
    WrtError,
)
from autodiff.ops.custom import custom_grad, no_grad, register_gradient, stop_gradient
from autodiff.tools import optimizers as optim
from autodiff.tools.check import GradientCheckError, GradientCheckWarning, check_grad, numeric_grad
from autodiff.tools.compare import compare
from autodiff.tools.minimize import minimize
from autodiff.version import __version__ as __version__

# ad.optim is autodiff/tools/optimizers.py, importable by that name too, as PyTorch
# users write it: from autodiff.optim import Adam (as os.path is posixpath).
_sys.modules[f"{__name__}.optim"] = optim

# Names JAX users reach for that autodiff spells otherwise.
_JAX_SPELLINGS = {
    "custom_vjp": "ad.custom_grad (attach the rule with @f.defvjp)",
    "custom_jvp": "ad.custom_grad (attach the rule with @f.defjvp)",
    "vmap": "a loop, or NumPy's own broadcasting: autodiff differentiates batched code as it is",
    "tree_map": "ad.tree.map",
    "tree_util": "ad.tree (map, flatten, unflatten, leaves, paths)",
    "linearize": "ad.jvp",
}


def __getattr__(name: str):
    # SymPy takes longer to import than the rest together: load it when first asked for.
    if name in ("SymbolicError", "symbolic_grad"):
        from autodiff.tools import symbolic

        return getattr(symbolic, name)
    if name in _JAX_SPELLINGS:
        raise AttributeError(f"module 'autodiff' has no attribute {name!r}: use "
                             f"{_JAX_SPELLINGS[name]}")
    raise AttributeError(f"module 'autodiff' has no attribute {name!r}")


__all__ = [
    "ArgumentKindError",
    "AutodiffError",
    "CheckpointWarning",
    "DerivativeError",
    "GradientCheckError",
    "GradientCheckWarning",
    "NonDifferentiableError",
    "NonFiniteError",
    "UndefinedNameError",
    "NonScalarOutputError",
    "SourceUnavailableError",
    "SymbolicError",
    "UnknownFunctionError",
    "UnsupportedSyntaxError",
    "WrtError",
    "check_grad",
    "compare",
    "custom_grad",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "minimize",
    "no_grad",
    "numeric_grad",
    "optim",
    "register_gradient",
    "stop_gradient",
    "symbolic_grad",
    "tree",
    "value_and_grad",
    "vjp",
]
