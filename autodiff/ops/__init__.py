"""The op registry and every family of primitives (importing this registers them all)."""

from autodiff.ops import control, elementwise, helpers, linalg, reduce, scalar, shape  # noqa: F401
from autodiff.ops.registry import OPS, Op, defop

__all__ = ["OPS", "Op", "defop"]
