"""Zeros that stay exact through the rules that follow them.

An op with ``gradients_keep_zeros`` (``where``, ``select``, ``maximum``/``minimum``,
``clip``, the NaN-skipping reductions ``nansum``, ``nanmean``, ``nanmax``, ...) gives
gradients that are exactly zero where it did not select an operand, which may be
infinite or NaN there: ``np.nansum(r ** 2)`` skips a NaN of ``r``, ``np.maximum(np.log(x),
-5.0)`` an ``-inf``. The chain rule through such a zero multiplies it by that value:
``0 * nan`` would make the whole gradient NaN although the function and its true
gradient are finite. Reverse mode rewrites the products and quotients of the rules
linear in such an adjoint (``transforms/reverse.py``), forward mode those of the op's
own JVP, linear in a tangent that may be NaN where the op does not select it
(``transforms/forward.py``): a zero factor then gives zero (``keep_zeros_multiply``,
``keep_zeros_divide`` of ``ops/control.py``). Code without such an op is unchanged.
"""

from __future__ import annotations

import math

from autodiff.graph.ir import Const, Region, Value


def keep_zeros(nodes: list, g: Value) -> set[Value]:
    """Rewrite the products and quotients of an inlined rule that are linear in its
    adjoint (or tangent) ``g`` so that a zero of ``g`` gives a zero, even times
    infinity, and a zero of the other factor gives a zero, even times a NaN of ``g``;
    return the values linear in ``g`` (the contributions among them keep zeros too).

    ``g`` is zero where a ``where`` did not select this branch, which may be
    infinite or NaN there (``np.log1p(np.exp(800.0))``): ``0 * inf`` would turn the
    gradient NaN although the function is finite.
    """
    linear = {g}

    def is_linear(operand) -> bool:
        return isinstance(operand, Value) and operand in linear

    def finite(operand) -> bool:
        return isinstance(operand, Const) and isinstance(operand.value, (int, float)) and (
            math.isfinite(operand.value))

    def zero(operand) -> bool:
        return isinstance(operand, Const) and isinstance(operand.value, (int, float)) and (
            operand.value == 0)

    for node in nodes:
        if isinstance(node, Region):
            continue
        zeros, args = node.op.zeros, node.args
        if zeros == "product" and (is_linear(args[0]) or is_linear(args[1])):
            other = args[1] if is_linear(args[0]) else args[0]
            if not finite(other):  # (a finite number times zero is zero)
                node.op = node.op.zero_keeping_form
                node.args = (args[0], args[1]) if is_linear(args[0]) else (args[1], args[0])
        elif zeros == "quotient" and is_linear(args[0]):
            if not (finite(args[1]) and args[1].value != 0):
                node.op = node.op.zero_keeping_form
        elif not ((zeros == "first" and is_linear(args[0]))
                  or (zeros == "sum" and all(is_linear(a) or zero(a) for a in args))
                  or (zeros == "branches" and all(is_linear(a) or zero(a) for a in args[1:]))):
            continue
        linear.add(node.out)
    return linear
