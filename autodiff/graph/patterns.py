"""Questions rewrites ask of an operand: is it the number 1, a tuple of ints, the
result of a given op. The rewrites themselves are in the ops' blocks.

>>> is_number(Const(1.0), 1), is_number(Const("1")), constant_tuple(Const((0, 2)))
(True, False, (0, 2))
"""

from __future__ import annotations

import math

from autodiff.graph.ir import Const, Node, Operand, Value
from autodiff.graph.shapes import SCALAR


def is_number(operand: Operand, number: float | None = None) -> bool:
    """A literal Python int or float (equal to ``number`` when given)."""
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) in (int, float)
            and (number is None or operand.value == number))


def is_finite_number(operand: Operand) -> bool:
    return is_number(operand) and math.isfinite(operand.value)


def is_scalar(operand: Operand) -> bool:
    """A literal number, or a value known to be 0-d."""
    return is_number(operand) or isinstance(operand, Value) and operand.shape is SCALAR


def is_none(operand: Operand) -> bool:
    return isinstance(operand, Const) and operand.value is None


def is_false(operand: Operand) -> bool:
    return isinstance(operand, Const) and operand.value is False


def keeps_dtype(kept: Operand, dropped: Const) -> bool:
    """Whether ``kept op dropped`` has ``kept``'s dtype (Python ints are weak)."""
    if isinstance(kept, Value) and kept.floating:
        return True
    return type(dropped.value) is int


def produced_by(operand: Operand, op) -> Node | None:
    """The node of ``op`` (an :class:`~autodiff.ops.registry.Op`) computing ``operand``."""
    if isinstance(operand, Value) and isinstance(operand.node, Node) and operand.node.op is op:
        return operand.node
    return None


def constant_tuple(operand: Operand) -> tuple | None:
    """The value of a tuple of int constants (one constant, or a tuple of them)."""
    if isinstance(operand, Const) and operand.path is None:
        items = operand.value
    elif isinstance(operand, tuple) and all(isinstance(item, Const) for item in operand):
        items = tuple(item.value for item in operand)
    else:
        return None
    if isinstance(items, tuple) and all(type(item) is int for item in items):
        return items
    return None


__all__ = ["constant_tuple", "is_false", "is_finite_number", "is_none", "is_number",
           "is_scalar", "keeps_dtype", "produced_by"]
