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

__all__ = ["OPS", "Op", "defop"]
