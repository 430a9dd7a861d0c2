"""The op registry and every family of primitives (importing this registers them all)."""

from autodiff.ops import (  # noqa: F401
    along_axis,
    calls,
    control,
    custom,
    elementwise,
    helpers,
    linalg,
    reduce,
    shape,
    specialized,
)
from autodiff.ops.registry import OPS, Op, defop

try:  # scipy.special's ops, when SciPy is installed (autodiff needs no SciPy)
    import scipy.special  # noqa: F401
except ImportError:
    pass
else:
    import autodiff.ops.scipy_linalg  # noqa: F401
    from autodiff.ops import special  # noqa: F401

__all__ = ["OPS", "Op", "defop"]
