"""Methods and attributes of constants, run while compiling.

A string, number or tuple the code holds while compiling (a dict's key, a setting,
a shape) is an immutable Python value: its methods compute on it alone
(``k.startswith("W")``, ``name.split("_")``, ``"-".join(parts)``, ``shape.index(3)``,
``n.bit_length()``), so they run now, on constant arguments, and give a constant,
as the code would with those values.
"""

from __future__ import annotations

import types

from autodiff.graph.ir import Const

# Immutable values whose methods depend on the value and their arguments alone.
CONSTANT_TYPES = (str, bytes, bool, int, float, complex, tuple, frozenset)


def constant_attribute(base: Const, attr: str) -> Const | None:
    """``base.attr`` for a constant of :data:`CONSTANT_TYPES` (a method bound to it, or
    a value such as ``(2.0).real``), or None when it is no such constant or has no
    such attribute (a private one is never read)."""
    if base.path is not None or type(base.value) not in CONSTANT_TYPES or attr.startswith("_"):
        return None
    try:
        found = getattr(base.value, attr)
    except AttributeError:
        return None
    if is_constant_method(found) or isinstance(found, CONSTANT_TYPES):
        return Const(found)
    return None


def is_constant_method(fn: object) -> bool:
    """Whether ``fn`` is a method bound to a constant of :data:`CONSTANT_TYPES`."""
    return isinstance(fn, types.BuiltinMethodType) and type(
        getattr(fn, "__self__", None)) in CONSTANT_TYPES


__all__ = ["CONSTANT_TYPES", "constant_attribute", "is_constant_method"]
