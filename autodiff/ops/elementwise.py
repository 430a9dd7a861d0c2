"""Elementwise ops: arithmetic, unary math, comparisons; each with its gradient.

Binary rules route every gradient through ``unbroadcast``, which the compiler
removes where it can prove the shapes already match.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from autodiff.graph.ir import Const, Value
from autodiff.graph.patterns import is_number, keeps_dtype, produced_by
from autodiff.ops import control  # noqa: F401 - defines the zero-keeping forms used below
from autodiff.ops.registry import OPS, RunAsItIs, alias, defop, helper_op
from autodiff.ops.runtime import (
    broadcast_like,
    clipped_high,
    clipped_low,
    larger_share,
    unbroadcast,
    within_bounds,
)
from autodiff.ops.shape_rules import broadcast, shape_like
from autodiff.ops.sympy_forms import cfunctions, decided, elementwise, sp, stop_gradient_function

BINARY = broadcast("x1", "x2")
UNARY = broadcast("x")

# ----- binary arithmetic -----


@defop("add", "x1 + x2", aliases=(np.add, operator.add), diff=("x1", "x2"), shape=BINARY,
       impl=operator.add, zeros="sum", recompute="scalar", sympy=elementwise(operator.add, 2), python_arithmetic=True, update_operator="+")
def add(x1, x2): ...


@add.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(g, x2)


# A tangent has its result's shape: ``t`` alone may be smaller, so it is broadcast.
@add.defjvp("x1")
def _(t, ans, x1, x2):
    return broadcast_like(t, ans)


@add.defjvp("x2")
def _(t, ans, x1, x2):
    return broadcast_like(t, ans)


@add.defrewrite
def _add_rewrite(rewrite, node, a, b, op=None):
    if is_number(b, 0) and keeps_dtype(a, b):
        return a
    if is_number(a, 0) and keeps_dtype(b, a):
        return b
    if node.op is add and node.phase != "forward" and is_number(b) and b.value < 0:
        return rewrite.emit(subtract, a, Const(-b.value))  # dx - 5.0, not dx + -5.0
    return rewrite.spread_scalar(node, op)


# Summing contributions to one adjoint: both have the adjoint's shape, so the
# running total can take the next one in place once nothing else reads it.
@defop("accumulate", "x1 + x2", diff=("x1", "x2"), shape=BINARY, impl=operator.add,
       inplace=lambda named: "x1 += x2", zeros="sum", sympy=elementwise(operator.add, 2))
def accumulate(x1, x2): ...


accumulate.defvjp(add.vjp)
accumulate.defjvp("x1")(add.jvps["x1"])
accumulate.defjvp("x2")(add.jvps["x2"])


# As add: ``total += s`` stays in place, while a broadcast total, which cannot be
# written into, becomes a plain sum.
@accumulate.defrewrite
def _(rewrite, node, a, b):
    spread = rewrite.broadcast_scalar(a) or rewrite.broadcast_array(a)
    replacement = _add_rewrite(rewrite, node, a, b, add if spread else None)
    if replacement is None and not spread:
        negated = _negation_of(rewrite, b)
        if negated is not None:
            return rewrite.emit(accumulate_negated, a, negated)  # total -= s
    return replacement


def _negation_of(rewrite, b):
    """``s`` when ``b``, read once, is ``-s``, or ``(-y) * z`` (then ``s`` is ``y * z``,
    the same number: a product's sign is its factors')."""
    if not rewrite.single_use(b):
        return None
    negated = produced_by(b, negative)
    if negated is not None:
        return negated.args[0]
    product = produced_by(b, multiply)
    if product is None:
        return None
    for position, factor in enumerate(product.args):
        negated = produced_by(factor, negative)
        if negated is not None and rewrite.single_use(factor):
            args = list(product.args)
            args[position] = negated.args[0]
            return rewrite.emit(multiply, *args)
    return None


@defop("subtract", "x1 - x2", aliases=(np.subtract, operator.sub), diff=("x1", "x2"),
       shape=BINARY, impl=operator.sub, zeros="sum", recompute="scalar", sympy=elementwise(operator.sub, 2), python_arithmetic=True, update_operator="-")
def subtract(x1, x2): ...


@subtract.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g, x2)


@subtract.defjvp("x1")
def _(t, ans, x1, x2):
    return broadcast_like(t, ans)


@subtract.defjvp("x2")
def _(t, ans, x1, x2):
    return broadcast_like(-t, ans)


@subtract.defrewrite
def _(rewrite, node, a, b):
    if is_number(b, 0) and keeps_dtype(a, b):
        return a
    return rewrite.spread_scalar(node)


# Taking a contribution off an adjoint, ``total -= s``: the accumulation of ``-s`` that
# the rules of a difference or a negation give, without first negating ``s`` into an
# array of its own (``dk_1 = -d; dk += dk_1``). The same number: IEEE subtraction is
# the addition of the negation.
@defop("accumulate_negated", "x1 - x2", diff=("x1", "x2"), shape=BINARY, impl=operator.sub,
       inplace=lambda named: "x1 -= x2", zeros="sum", sympy=elementwise(operator.sub, 2))
def accumulate_negated(x1, x2): ...


accumulate_negated.defvjp(subtract.vjp)
accumulate_negated.defjvp("x1")(subtract.jvps["x1"])
accumulate_negated.defjvp("x2")(subtract.jvps["x2"])


@defop("multiply", "x1 * x2", aliases=(np.multiply, operator.mul), diff=("x1", "x2"),
       shape=BINARY, impl=operator.mul, zeros="product", recompute="scalar", sympy=elementwise(operator.mul, 2), python_arithmetic=True, update_operator="*", jvp="linear")
def multiply(x1, x2): ...


@multiply.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g * x2, x1), unbroadcast(g * x1, x2)


# x * 1 is x; (-x) * 2 is x * -2.
@multiply.defrewrite
def _(rewrite, node, a, b):
    for x, y in ((a, b), (b, a)):
        if is_number(y, 1) and keeps_dtype(x, y):
            return x
        negated = produced_by(x, negative)
        if negated is not None and is_number(y) and rewrite.single_use(x):
            return rewrite.emit(multiply, negated.args[0], Const(-y.value))
    return rewrite.spread_scalar(node)


@defop("divide", "x1 / x2", aliases=(np.divide, np.true_divide, operator.truediv),
       diff=("x1", "x2"), shape=BINARY, floating="always", impl=operator.truediv,
       zeros="quotient", sympy=elementwise(operator.truediv, 2), python_arithmetic=True, update_operator="/")
def divide(x1, x2): ...


# Downstream of a where's adjoint, products and quotients linear in it take these forms,
# which keep its zeros exact (0 * inf is 0): see reverse._keep_zeros.
multiply.zero_keeping_form = OPS["keep_zeros_multiply"]
divide.zero_keeping_form = OPS["keep_zeros_divide"]


@divide.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g / x2, x1), unbroadcast(-g * ans / x2, x2)


@divide.defjvp("x1")
def _(t, ans, x1, x2):
    return t / x2


@divide.defjvp("x2")
def _(t, ans, x1, x2):
    return -t * ans / x2


@divide.defrewrite
def _(rewrite, node, a, b):
    if is_number(b, 1) and isinstance(a, Value) and a.floating:
        return a
    return rewrite.spread_scalar(node)


@defop("power", "x1 ** x2", aliases=(np.power, operator.pow, builtins.pow, math.pow),
       diff=("x1", "x2"), shape=BINARY, impl=operator.pow, sympy=elementwise(operator.pow, 2), python_arithmetic=True)
def power(x1, x2): ...


# At the edge points the conventions of JAX and autograd: d(x ** y)/dx is 0 where y
# is 0 (x ** -1 is never formed, so x ** 0.0 at 0 has the derivatives 0, 0, ...),
# and d(x ** y)/dy is 0 where x is 0 (ans is 0 there for y > 0; log(0) is not formed).
@power.defvjp
def _(g, ans, x1, x2):
    return (unbroadcast(g * x2 * x1 ** power_exponent_below(x2), x1),
            unbroadcast(g * ans * power_log_base(x1), x2))


@power.defjvp("x1")
def _(t, ans, x1, x2):
    return t * x2 * x1 ** power_exponent_below(x2)


@power.defjvp("x2")
def _(t, ans, x1, x2):
    return t * ans * power_log_base(x1)


# x ** 1 is x; in the backward sweep x ** 2 is x * x (cheaper on Python floats).
@power.defrewrite
def _(rewrite, node, a, b):
    if is_number(b, 1) and (type(b.value) is int or isinstance(a, Value) and a.floating):
        return a
    if node.phase != "forward" and is_number(b, 2) and type(b.value) is int:
        return rewrite.emit(multiply, a, a)
    return None


def power_exponent_below(y):
    """``y - 1``, and ``1`` where ``y`` is 0: the exponent of ``x ** y``'s derivative in
    ``x``, ``y * x ** (y - 1)``, which is 0 where ``y`` is 0 whatever ``x`` (even 0).

    >>> power_exponent_below(3.0), power_exponent_below(0.0)
    (2.0, 1)
    """
    if isinstance(y, (int, float)):
        return y - 1 if y != 0 else 1
    return np.where(y == 0, 1, np.subtract(y, 1))


def power_log_base(x):
    """``np.log(x)``, and 0 where ``x`` is 0: the factor of ``x ** y``'s derivative in
    ``y``, ``x ** y * log(x)``, which is 0 where ``x`` is 0 (for ``y > 0``).

    >>> float(power_log_base(1.0)), float(power_log_base(0.0))
    (0.0, 0.0)
    """
    if isinstance(x, (int, float)):
        return math.log(x) if x > 0 else (0.0 if x == 0 else math.nan)
    return np.log(np.where(x == 0, 1, x))


_exponent_op = helper_op(power_exponent_below, diff=("y",), impl=power_exponent_below,
                         shape=shape_like("y"), fresh=True, jvp="same")
_log_base_op = helper_op(power_log_base, diff=("x",), impl=power_log_base, shape=shape_like("x"),
                         floating="always", jvp="same")


# Its derivative is 1 where y is not 0 (the branch y - 1 is taken), else 0.
@_exponent_op.defvjp
def _(g, ans, y):
    return np.where(y == 0, 0.0, g)


# 1 / x where x is not 0 (log x), else 0 (the constant log 1).
@_log_base_op.defvjp
def _(g, ans, x):
    return np.where(x == 0, 0.0, g / np.where(x == 0, 1.0, x))


def _two_numbers(x1, x2):
    """Python's max(a, b) / min(a, b) on two numbers (one iterable is not supported)."""
    return {"x1": x1, "x2": x2}


@defop("maximum", "np.maximum(x1, x2)", aliases=(np.maximum, (builtins.max, _two_numbers)),
       diff=("x1", "x2"), shape=BINARY, recompute="scalar", gradients_keep_zeros=True,
       sympy=elementwise("Max", 2))
def maximum(x1, x2): ...


@maximum.defvjp
def _(g, ans, x1, x2):
    # Ties split the gradient evenly, as JAX does (larger_share: 1, 1/2 at a tie, 0).
    return (unbroadcast(g * larger_share(x1, x2), x1),
            unbroadcast(g * larger_share(x2, x1), x2))


@maximum.defjvp("x1")
def _(t, ans, x1, x2):
    return t * larger_share(x1, x2)


@maximum.defjvp("x2")
def _(t, ans, x1, x2):
    return t * larger_share(x2, x1)


@defop("minimum", "np.minimum(x1, x2)", aliases=(np.minimum, (builtins.min, _two_numbers)),
       diff=("x1", "x2"), shape=BINARY, recompute="scalar", gradients_keep_zeros=True,
       sympy=elementwise("Min", 2))
def minimum(x1, x2): ...


@minimum.defvjp
def _(g, ans, x1, x2):
    return (unbroadcast(g * larger_share(x2, x1), x1),
            unbroadcast(g * larger_share(x1, x2), x2))


@minimum.defjvp("x1")
def _(t, ans, x1, x2):
    return t * larger_share(x2, x1)


@minimum.defjvp("x2")
def _(t, ans, x1, x2):
    return t * larger_share(x1, x2)


# np.fmax and np.fmin are maximum and minimum ignoring a NaN: the gradient goes to the
# operand taken, x1 where x2 is NaN (and where both are), x2 where x1 alone is; ties
# split it evenly, as for maximum (JAX's convention).
@defop("fmax", "np.fmax(x1, x2)", aliases=(np.fmax,), diff=("x1", "x2"), shape=BINARY,
       gradients_keep_zeros=True, sympy=elementwise("Max", 2))
def fmax(x1, x2): ...


@fmax.defvjp
def _(g, ans, x1, x2):
    return (unbroadcast(g * np.where(np.isnan(x2), 1.0, larger_share(x1, x2)), x1),
            unbroadcast(g * np.where(np.isnan(x2), 0.0,
                                     np.where(np.isnan(x1), 1.0, larger_share(x2, x1))), x2))


@fmax.defjvp("x1")
def _(t, ans, x1, x2):
    return t * np.where(np.isnan(x2), 1.0, larger_share(x1, x2))


@fmax.defjvp("x2")
def _(t, ans, x1, x2):
    return t * np.where(np.isnan(x2), 0.0, np.where(np.isnan(x1), 1.0, larger_share(x2, x1)))


@defop("fmin", "np.fmin(x1, x2)", aliases=(np.fmin,), diff=("x1", "x2"), shape=BINARY,
       gradients_keep_zeros=True, sympy=elementwise("Min", 2))
def fmin(x1, x2): ...


@fmin.defvjp
def _(g, ans, x1, x2):
    return (unbroadcast(g * np.where(np.isnan(x2), 1.0, larger_share(x2, x1)), x1),
            unbroadcast(g * np.where(np.isnan(x2), 0.0,
                                     np.where(np.isnan(x1), 1.0, larger_share(x1, x2))), x2))


@fmin.defjvp("x1")
def _(t, ans, x1, x2):
    return t * np.where(np.isnan(x2), 1.0, larger_share(x2, x1))


@fmin.defjvp("x2")
def _(t, ans, x1, x2):
    return t * np.where(np.isnan(x2), 0.0, np.where(np.isnan(x1), 1.0, larger_share(x1, x2)))


def _sympy_copysign(x1, x2):
    known = decided(x2 >= 0)
    if known is not None:
        return sp.Abs(x1) if known else -sp.Abs(x1)
    return sp.Piecewise((sp.Abs(x1), x2 >= 0), (-sp.Abs(x1), True))


# |x1| with the sign of x2. In x1 the derivative is abs's (0 at 0) times that sign; in x2
# it is 0 wherever it exists (the result is piecewise constant in x2, as np.sign is), so
# x2 takes no gradient, as in JAX.
@defop("copysign", "np.copysign(x1, x2)", aliases=(np.copysign, math.copysign), diff=("x1",),
       shape=BINARY, floating="always", sympy=elementwise(_sympy_copysign, 2))
def copysign(x1, x2): ...


copysign.piecewise_params = ("x2",)  # only its sign is read


@copysign.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g * np.sign(x1) * np.copysign(1.0, x2), x1)


@copysign.defjvp("x1")
def _(t, ans, x1, x2):
    return t * np.sign(x1) * np.copysign(1.0, x2)


@defop("arctan2", "np.arctan2(x1, x2)", aliases=(np.arctan2, math.atan2), diff=("x1", "x2"),
       shape=BINARY, floating="always", sympy=elementwise("atan2", 2))
def arctan2(x1, x2): ...


@arctan2.defvjp
def _(g, ans, x1, x2):
    denominator = x1 * x1 + x2 * x2
    return unbroadcast(g * x2 / denominator, x1), unbroadcast(-g * x1 / denominator, x2)


@arctan2.defjvp("x1")
def _(t, ans, x1, x2):
    return t * x2 / (x1 * x1 + x2 * x2)


@arctan2.defjvp("x2")
def _(t, ans, x1, x2):
    return -t * x1 / (x1 * x1 + x2 * x2)


@defop("hypot", "np.hypot(x1, x2)", aliases=(np.hypot, math.hypot), diff=("x1", "x2"),
       shape=BINARY, floating="always", sympy=elementwise(lambda x1, x2: cfunctions.hypot(x1, x2), 2))
def hypot(x1, x2): ...


@hypot.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g * x1 / ans, x1), unbroadcast(g * x2 / ans, x2)


@hypot.defjvp("x1")
def _(t, ans, x1, x2):
    return t * x1 / ans


@hypot.defjvp("x2")
def _(t, ans, x1, x2):
    return t * x2 / ans


# ----- unary arithmetic -----


@defop("negative", "-x", aliases=(np.negative, operator.neg), diff=("x",), shape=UNARY,
       impl=operator.neg, zeros="first", recompute="scalar", sympy=elementwise(operator.neg), python_arithmetic=True, ufunc_out=True, jvp="same")
def negative(x): ...


@negative.defvjp
def _(g, ans, x):
    return -g


# -(-x) is x; -(x * 2) is x * -2; the negation of a broadcast scalar is the scalar's.
@negative.defrewrite
def _(rewrite, node, a):
    inner = produced_by(a, negative)
    if inner is not None:
        return inner.args[0]
    spread = rewrite.broadcast_scalar(a)
    if spread is not None:
        return rewrite.broadcast(rewrite.emit(negative, spread.args[0]), spread)
    product = produced_by(a, multiply)
    if product is not None and rewrite.single_use(a):
        for x, y in (product.args, product.args[::-1]):
            if is_number(y):
                return rewrite.emit(multiply, x, Const(-y.value))
    return None


@defop("positive", "+x", aliases=(np.positive, operator.pos), diff=("x",), shape=UNARY,
       impl=operator.pos, zeros="first", sympy=elementwise(operator.pos), python_arithmetic=True, jvp="same")
def positive(x): ...


@positive.defvjp
def _(g, ans, x):
    return g


@defop("abs", "np.abs(x)", aliases=(np.abs, np.absolute, builtins.abs), diff=("x",),
       shape=UNARY, impl=builtins.abs, sympy=elementwise("Abs"), math_form="fabs", ufunc_out=True, jvp="same",
       real_rules=True)
def abs_(x): ...


@abs_.defvjp
def _(g, ans, x):
    return g * np.sign(x)


# |z| of a complex z: its gradient is conj(z) / |z| (JAX's and autograd's convention, 0 at
# z = 0), its tangent Re(conj(z) t) / |z|; the adjoint of the real |z| is real.
@abs_.defvjp_complex
def _(g, ans, x):
    return np.real(g) * np.conj(x) / np.where(ans == 0.0, 1.0, ans)


@abs_.defjvp_complex
def _(t, ans, x):
    return np.real(np.conj(x) * t) / np.where(ans == 0.0, 1.0, ans)


@defop("square", "np.square(x)", aliases=(np.square,), diff=("x",), shape=UNARY, sympy=elementwise(lambda x: x ** 2), ufunc_out=True, jvp="same")
def square(x): ...


@square.defvjp
def _(g, ans, x):
    return g * 2 * x


@defop("sqrt", "np.sqrt(x)", aliases=(np.sqrt, math.sqrt), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("sqrt"), math_form="sqrt", ufunc_out=True, jvp="same")
def sqrt(x): ...


@sqrt.defvjp
def _(g, ans, x):
    return g * 0.5 / ans


# As abs, but a float always (np.fabs(3) is 3.0); the same sign(0) = 0 at 0.
@defop("fabs", "np.fabs(x)", aliases=(np.fabs, math.fabs), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("Abs"), math_form="fabs", ufunc_out=True, jvp="same")
def fabs(x): ...


@fabs.defvjp
def _(g, ans, x):
    return g * np.sign(x)


# 1 / x, but an integer stays an integer (np.reciprocal(2) is 0), as NumPy has it.
@defop("reciprocal", "np.reciprocal(x)", aliases=(np.reciprocal,), diff=("x",), shape=UNARY,
       sympy=elementwise(lambda x: 1 / x), ufunc_out=True, jvp="same")
def reciprocal(x): ...


@reciprocal.defvjp
def _(g, ans, x):
    return -(g * ans * ans)


def _sympy_cbrt(x):
    """The real cube root, negative for negative x: SymPy's x ** (1/3) is complex there.
    The sign is a constant factor (its derivative is 0 away from 0)."""
    return stop_gradient_function()(sp.sign(x)) * sp.Abs(x) ** sp.Rational(1, 3)


# The real cube root; its derivative is infinite at 0, as JAX's and autograd's.
@defop("cbrt", "np.cbrt(x)", aliases=(np.cbrt, *((math.cbrt,) if hasattr(math, "cbrt") else ())),
       diff=("x",), shape=UNARY, floating="always", sympy=elementwise(_sympy_cbrt),
       math_form="cbrt" if hasattr(math, "cbrt") else None, ufunc_out=True, jvp="same")
def cbrt(x): ...


@cbrt.defvjp
def _(g, ans, x):
    return g / (3 * ans * ans)


# ----- exponentials and logarithms -----


@defop("logaddexp", "np.logaddexp(x1, x2)", aliases=(np.logaddexp,), diff=("x1", "x2"),
       shape=BINARY, floating="always", sympy=elementwise(lambda x1, x2: sp.log(sp.exp(x1) + sp.exp(x2)), 2))
def logaddexp(x1, x2): ...


@logaddexp.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g * np.exp(x1 - ans), x1), unbroadcast(g * np.exp(x2 - ans), x2)


@logaddexp.defjvp("x1")
def _(t, ans, x1, x2):
    return t * np.exp(x1 - ans)


@logaddexp.defjvp("x2")
def _(t, ans, x1, x2):
    return t * np.exp(x2 - ans)


@defop("logaddexp2", "np.logaddexp2(x1, x2)", aliases=(np.logaddexp2,), diff=("x1", "x2"),
       shape=BINARY, floating="always",
       sympy=elementwise(lambda x1, x2: sp.log(2 ** x1 + 2 ** x2) / sp.log(2), 2))
def logaddexp2(x1, x2): ...


# log2(2 ** x1 + 2 ** x2): its derivative in x1 is 2 ** x1 / 2 ** ans.
@logaddexp2.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g * np.exp2(x1 - ans), x1), unbroadcast(g * np.exp2(x2 - ans), x2)


@logaddexp2.defjvp("x1")
def _(t, ans, x1, x2):
    return t * np.exp2(x1 - ans)


@logaddexp2.defjvp("x2")
def _(t, ans, x1, x2):
    return t * np.exp2(x2 - ans)


@defop("exp", "np.exp(x)", aliases=(np.exp, math.exp), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("exp"), math_form="exp", ufunc_out=True, jvp="same")
def exp(x): ...


@exp.defvjp
def _(g, ans, x):
    return g * ans


@defop("expm1", "np.expm1(x)", aliases=(np.expm1, math.expm1), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: cfunctions.expm1(x)), math_form="expm1", ufunc_out=True, jvp="same")
def expm1(x): ...


@expm1.defvjp
def _(g, ans, x):
    return g * (ans + 1)


@defop("exp2", "np.exp2(x)", aliases=(np.exp2, *((math.exp2,) if hasattr(math, "exp2") else ())),
       diff=("x",), shape=UNARY, floating="always", sympy=elementwise(lambda x: cfunctions.exp2(x)),
       math_form="exp2" if hasattr(math, "exp2") else None, ufunc_out=True, jvp="same")
def exp2(x): ...


@exp2.defvjp
def _(g, ans, x):
    return g * ans * np.log(2.0)


def _math_log(x, base=None):
    if base is not None:
        raise TypeError("math.log(x, base) takes no base here: write math.log(x) / math.log(base)")
    return {"x": x}


@defop("log", "np.log(x)", aliases=(np.log, (math.log, _math_log)), diff=("x",), shape=UNARY,
       floating="always", impl=np.log, sympy=elementwise("log"), math_form="log", ufunc_out=True, jvp="same")
def log(x): ...


@log.defvjp
def _(g, ans, x):
    return g / x


@defop("log1p", "np.log1p(x)", aliases=(np.log1p, math.log1p), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: cfunctions.log1p(x)), math_form="log1p", ufunc_out=True, jvp="same")
def log1p(x): ...


@log1p.defvjp
def _(g, ans, x):
    return g / (1 + x)


@defop("log2", "np.log2(x)", aliases=(np.log2, math.log2), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: cfunctions.log2(x)), math_form="log2", ufunc_out=True, jvp="same")
def log2(x): ...


@log2.defvjp
def _(g, ans, x):
    return g / (x * np.log(2.0))


@defop("log10", "np.log10(x)", aliases=(np.log10, math.log10), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise(lambda x: cfunctions.log10(x)), math_form="log10", ufunc_out=True, jvp="same")
def log10(x): ...


@log10.defvjp
def _(g, ans, x):
    return g / (x * np.log(10.0))


# Python's error functions, on numbers (NumPy has none): d erf(x)/dx = 2 / sqrt(pi) exp(-x**2).
@defop("math_erf", "math.erf(x)", aliases=(math.erf,), diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise("erf"), math_form="erf", jvp="same")
def erf(x): ...


@erf.defvjp
def _(g, ans, x):
    return g * 1.1283791670955126 * np.exp(-(x * x))


@defop("math_erfc", "math.erfc(x)", aliases=(math.erfc,), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("erfc"), math_form="erfc", jvp="same")
def erfc(x): ...


@erfc.defvjp
def _(g, ans, x):
    return -(g * 1.1283791670955126 * np.exp(-(x * x)))


# ----- trigonometric and hyperbolic -----


@defop("sin", "np.sin(x)", aliases=(np.sin, math.sin), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("sin"), math_form="sin", math_total=True,
       ufunc_out=True, jvp="same")
def sin(x): ...


@sin.defvjp
def _(g, ans, x):
    return g * np.cos(x)


@defop("cos", "np.cos(x)", aliases=(np.cos, math.cos), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("cos"), math_form="cos", math_total=True,
       ufunc_out=True, jvp="same")
def cos(x): ...


@cos.defvjp
def _(g, ans, x):
    return -(g * np.sin(x))


@defop("tan", "np.tan(x)", aliases=(np.tan, math.tan), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("tan"), math_form="tan", ufunc_out=True, jvp="same")
def tan(x): ...


@tan.defvjp
def _(g, ans, x):
    return g * (1 + ans * ans)


@defop("arcsin", "np.arcsin(x)", aliases=(np.arcsin, math.asin), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("asin"), math_form="asin", jvp="same")
def arcsin(x): ...


@arcsin.defvjp
def _(g, ans, x):
    return g / np.sqrt(1 - x * x)


@defop("arccos", "np.arccos(x)", aliases=(np.arccos, math.acos), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("acos"), math_form="acos", jvp="same")
def arccos(x): ...


@arccos.defvjp
def _(g, ans, x):
    return -g / np.sqrt(1 - x * x)


@defop("arctan", "np.arctan(x)", aliases=(np.arctan, math.atan), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("atan"), math_form="atan", ufunc_out=True, jvp="same")
def arctan(x): ...


@arctan.defvjp
def _(g, ans, x):
    return g / (1 + x * x)


@defop("sinh", "np.sinh(x)", aliases=(np.sinh, math.sinh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("sinh"), math_form="sinh", ufunc_out=True, jvp="same")
def sinh(x): ...


@sinh.defvjp
def _(g, ans, x):
    return g * np.cosh(x)


@defop("cosh", "np.cosh(x)", aliases=(np.cosh, math.cosh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("cosh"), math_form="cosh", ufunc_out=True, jvp="same")
def cosh(x): ...


@cosh.defvjp
def _(g, ans, x):
    return g * np.sinh(x)


@defop("tanh", "np.tanh(x)", aliases=(np.tanh, math.tanh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("tanh"), math_form="tanh", ufunc_out=True, jvp="same")
def tanh(x): ...


@tanh.defvjp
def _(g, ans, x):
    return g * (1 - ans * ans)


def sinc_derivative(x, k):
    """The ``k``-th derivative (``k >= 1``) of ``np.sinc``, sin(pi x) / (pi x), at ``x``:
    from its Maclaurin series near 0 (exact at 0, where the quotient is 0 / 0), else by
    differentiating x sinc(x) = sin(pi x) / pi ``k`` times:
    x s_k + k s_(k-1) = pi ** (k - 1) sin(pi x + k pi / 2).

    >>> float(sinc_derivative(0.0, 1)), bool(sinc_derivative(0.0, 2) == -np.pi ** 2 / 3)
    (0.0, True)
    """
    a = np.asarray(x, dtype=np.result_type(x, float))  # (complex too: sinc is holomorphic)
    near = np.abs(a) < 0.25
    safe = np.where(near, 1.0, a)
    far = np.sinc(safe)
    for j in range(1, k + 1):
        far = (np.pi ** (j - 1) * np.sin(np.pi * safe + j * np.pi / 2) - j * far) / safe
    series = np.zeros_like(a)
    for n in range((k + 1) // 2, (k + 1) // 2 + 24):  # |pi x| < 0.8: terms fall below 1e-40
        series += ((-1) ** n * np.pi ** (2 * n) * math.factorial(2 * n)
                   / (math.factorial(2 * n - k) * math.factorial(2 * n + 1))) * a ** (2 * n - k)
    result = np.where(near, series, far)
    return result.item() if isinstance(x, (int, float, complex)) else result


_sinc_derivative_op = helper_op(sinc_derivative, diff=("x",), impl=sinc_derivative,
                                shape=shape_like("x"), floating="always", jvp="same")


@_sinc_derivative_op.defvjp
def _(g, ans, x, k):
    return g * sinc_derivative(x, k + 1)


# For numba, which cannot call the helper, the first derivative (the gradient's): near 0
# (|pi x| < 0.04) four terms of its series, elsewhere (cos(pi x) - sinc(x)) / x.
@_sinc_derivative_op.defnumba
def _(rewrite, x, k):
    if not (isinstance(k, Const) and k.value == 1):
        return None

    def times(a, b):
        return rewrite.emit(multiply, a, b)

    def plus(a, b):
        return rewrite.emit(add, a, b)

    square = times(x, x)
    series = Const(math.pi ** 8 / 45360)
    for coefficient in (-math.pi ** 6 / 840, math.pi ** 4 / 30, -math.pi ** 2 / 3):
        series = plus(times(series, square), Const(coefficient))
    series = times(series, x)
    near = rewrite.emit(OPS["less"], rewrite.emit(abs_, x), Const(0.0125))
    safe = rewrite.emit(where, near, Const(1.0), x)
    far = rewrite.emit(divide, rewrite.emit(subtract, rewrite.emit(cos, times(safe, Const(math.pi))),
                                            rewrite.emit(sinc, safe)), safe)
    return rewrite.emit(where, near, series, far)


# The normalised sinc, 1 at 0; its derivatives of every order are exact there too (as
# JAX's), through sinc_derivative.
@defop("sinc", "np.sinc(x)", aliases=(np.sinc,), diff=("x",), shape=UNARY, floating="always",
       sympy=elementwise(lambda x: sp.sinc(sp.pi * x)), jvp="same")
def sinc(x): ...


@sinc.defvjp
def _(g, ans, x):
    return g * sinc_derivative(x, 1)


@defop("deg2rad", "np.deg2rad(x)", aliases=(np.deg2rad, np.radians, math.radians), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: x * sp.pi / 180),
       math_form="radians", ufunc_out=True, jvp="linear")
def deg2rad(x): ...


@deg2rad.defvjp
def _(g, ans, x):
    return np.deg2rad(g)


@defop("rad2deg", "np.rad2deg(x)", aliases=(np.rad2deg, np.degrees, math.degrees), diff=("x",),
       shape=UNARY, floating="always", sympy=elementwise(lambda x: x * 180 / sp.pi),
       math_form="degrees", ufunc_out=True, jvp="linear")
def rad2deg(x): ...


@rad2deg.defvjp
def _(g, ans, x):
    return np.rad2deg(g)


@defop("arcsinh", "np.arcsinh(x)", aliases=(np.arcsinh, math.asinh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("asinh"), math_form="asinh", ufunc_out=True, jvp="same")
def arcsinh(x): ...


@arcsinh.defvjp
def _(g, ans, x):
    return g / np.sqrt(x * x + 1)


# Defined for x >= 1; the product of two roots keeps its precision near 1, where
# x * x - 1 would lose digits.
@defop("arccosh", "np.arccosh(x)", aliases=(np.arccosh, math.acosh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("acosh"), math_form="acosh", ufunc_out=True, jvp="same")
def arccosh(x): ...


@arccosh.defvjp
def _(g, ans, x):
    return g / (np.sqrt(x - 1) * np.sqrt(x + 1))


@defop("arctanh", "np.arctanh(x)", aliases=(np.arctanh, math.atanh), diff=("x",), shape=UNARY,
       floating="always", sympy=elementwise("atanh"), math_form="atanh", ufunc_out=True, jvp="same")
def arctanh(x): ...


@arctanh.defvjp
def _(g, ans, x):
    return g / (1 - x * x)


# ----- selection -----


def _sympy_where(condition, x, y):
    known = decided(condition)
    if known is not None:
        return x if known else y
    return sp.Piecewise((x, condition), (y, True))


def _sympy_clip(a, low, high):
    a = a if low is None else sp.Max(a, low)
    return a if high is None else sp.Min(a, high)



@defop("where", "np.where(condition, x, y)", aliases=(np.where,), diff=("x", "y"),
       shape=broadcast("condition", "x", "y"), zeros="branches", gradients_keep_zeros=True, sympy=elementwise(_sympy_where, 3))
def where(condition, x, y): ...


where.piecewise_params = ("condition",)  # read as true or false


@where.defvjp
def _(g, ans, condition, x, y):
    return (unbroadcast(np.where(condition, g, 0.0), x),
            unbroadcast(np.where(condition, 0.0, g), y))


@where.defjvp("x")
def _(t, ans, condition, x, y):
    return broadcast_like(np.where(condition, t, 0.0), ans)


@where.defjvp("y")
def _(t, ans, condition, x, y):
    return broadcast_like(np.where(condition, 0.0, t), ans)


def _clip_call(a, a_min=None, a_max=None, *, min=None, max=None):
    """np.clip's bounds, spelled a_min/a_max or (NumPy 2) min/max; one may be None."""
    if (min is not None or max is not None) and (a_min is not None or a_max is not None):
        raise TypeError("np.clip takes its bounds as a_min/a_max or as min/max, not both")
    if min is not None or max is not None:
        a_min, a_max = min, max
    return {"a": a, "a_min": a_min, "a_max": a_max}


def _clip_method(a, min=None, max=None):  # ndarray.clip names its bounds min and max
    return {"a": a, "a_min": min, "a_max": max}


@defop("clip", "np.clip(a, a_min, a_max)", aliases=((np.clip, _clip_call),),
       methods=(("clip", _clip_method),),
       diff=("a", "a_min", "a_max"), shape=broadcast("a", "a_min", "a_max"),
       gradients_keep_zeros=True, sympy=elementwise(_sympy_clip, 3))
def clip(a, a_min=None, a_max=None): ...


# np.clip(a, a_min, a_max) is np.minimum(np.maximum(a, a_min), a_max): where a_min
# exceeds a_max the result is a_max, whatever a and a_min are.
@clip.defvjp
def _(g, ans, a, a_min, a_max):
    inside = within_bounds(a, a_min, a_max)
    return (unbroadcast(g * inside, a),
            unbroadcast(g * clipped_low(a, a_min, a_max), a_min),
            unbroadcast(g * clipped_high(a, a_min, a_max), a_max))


for _mask in (clipped_low, clipped_high):
    helper_op(_mask, nondiff_output=True, floating=None, no_gradient="a boolean mask (of np.clip's rule)")


@clip.defjvp("a")
def _(t, ans, a, a_min, a_max):
    return t * within_bounds(a, a_min, a_max)


@clip.defjvp("a_min")
def _(t, ans, a, a_min, a_max):
    return broadcast_like(t * clipped_low(a, a_min, a_max), ans)


@clip.defjvp("a_max")
def _(t, ans, a, a_min, a_max):
    return broadcast_like(t * clipped_high(a, a_min, a_max), ans)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """np.nan_to_num with a copy (copy=False would write into x) and constant replacements
    (a gradient into them is not supported)."""
    if not (copy is True or isinstance(copy, Const) and copy.value is True):
        raise TypeError("copy=False writes into x: write x = np.nan_to_num(x) instead")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if not (value is None or isinstance(value, (int, float, Const))):
            raise TypeError(f"{name}= must be a constant (a gradient into it is not supported)")
    return {"x": x, "nan": nan, "posinf": posinf, "neginf": neginf}


def _sympy_nan_to_num(x, nan, posinf, neginf):
    x, largest = sp.S(x), sp.Float(np.finfo(np.float64).max)
    if x is sp.nan:
        return nan
    if x is sp.oo:
        return largest if posinf is None else posinf
    if x is sp.S.NegativeInfinity:
        return -largest if neginf is None else neginf
    return x


# The gradient passes where x is finite and is exactly 0 where a constant replaced it,
# kept 0 on its way to the inputs (as a where's: 0 * inf is 0 there, see
# reverse._keep_zeros), so that np.nan_to_num(x * x) at x = inf gives 0, not NaN.
@defop("nan_to_num", "np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)",
       aliases=((np.nan_to_num, _nan_to_num),), diff=("x",), shape=shape_like("x"),
       gradients_keep_zeros=True, sympy=elementwise(_sympy_nan_to_num, 4), jvp="same")
def nan_to_num(x, nan=0.0, posinf=None, neginf=None): ...


@nan_to_num.defvjp
def _(g, ans, x, nan, posinf, neginf):
    return np.where(np.isfinite(x), g, 0.0)


# ----- no gradient: piecewise-constant results -----


STEPS = "piecewise constant: its derivative is 0 wherever it has one"
TEST = "a boolean result"


def _nondiff(name: str, kernel: str, *aliases, params: str = "x", reason: str,
             **facts) -> None:
    arity = params.count(",") + 1
    stub = {1: lambda x: None, 2: lambda x1, x2: None}[arity]
    op = defop(name, kernel, aliases=aliases, nondiff_output=True, no_gradient=reason,
               shape=broadcast(*(p.strip() for p in params.split(","))), floating=None,
               **facts)(stub)
    op.truth_values = True if reason == TEST else "operands" if reason == BITWISE else False


BITWISE = "bitwise: integers and booleans"
NO_SYMPY_BITS = "SymPy computes with real numbers, not bits"
_nondiff("sign", "np.sign(x)", np.sign, reason=STEPS, sympy=elementwise("sign"), ufunc_out=True,
         real_rules=True)  # z / |z| of a complex z is no step
_nondiff("floor", "np.floor(x)", np.floor, math.floor, reason=STEPS, sympy=elementwise("floor"))
_nondiff("ceil", "np.ceil(x)", np.ceil, math.ceil, reason=STEPS, sympy=elementwise("ceiling"))
# SymPy leaves Heaviside's derivative in its second argument (the value at 0) unevaluated:
# it is zero wherever it exists, as for the first.
_nondiff("heaviside", "np.heaviside(x1, x2)", np.heaviside, params="x1,x2", reason=STEPS,
         sympy=elementwise(lambda x1, x2: sp.Heaviside(x1, stop_gradient_function()(x2)), 2))


# numba has no np.heaviside: 0 below 0, 1 above, x2 at 0, and NaN (x1 itself) for NaN.
@OPS["heaviside"].defnumba
def _(rewrite, x1, x2):
    at_zero = rewrite.emit(where, rewrite.emit(OPS["equal"], x1, Const(0.0)), x2, x1)
    above = rewrite.emit(where, rewrite.emit(OPS["greater"], x1, Const(0.0)), Const(1.0), at_zero)
    return rewrite.emit(where, rewrite.emit(OPS["less"], x1, Const(0.0)), Const(0.0), above)



def _round_builtin(number, ndigits=None):
    """Python's round(x) and round(x, ndigits) (ndigits None rounds to a whole number)."""
    none = ndigits is None or isinstance(ndigits, Const) and ndigits.value is None
    return {"x": number, "decimals": Const(0) if none else ndigits}


# Rounding to `decimals` places is as piecewise constant as rounding to whole numbers.
@defop("round", "np.round(x, decimals=decimals)", aliases=(
    np.round, np.around, (np.rint, lambda x: {"x": x}), (builtins.round, _round_builtin)),
    methods=("round",), nondiff_output=True, no_gradient=STEPS, shape=broadcast("x"),
    floating=None, no_sympy="NumPy rounds half to even, which no SymPy function does")
def _round(x, decimals=0): ...


_nondiff("isfinite", "np.isfinite(x)", np.isfinite, reason=TEST,
         sympy=elementwise(lambda x: sp.S(x).is_finite is not False))
_nondiff("isnan", "np.isnan(x)", np.isnan, reason=TEST,
         sympy=elementwise(lambda x: sp.S(x) is sp.nan))
_nondiff("isinf", "np.isinf(x)", np.isinf, reason=TEST,
         sympy=elementwise(lambda x: sp.S(x) in (sp.oo, -sp.oo)))
_nondiff("isposinf", "np.isposinf(x)", np.isposinf, reason=TEST,
         sympy=elementwise(lambda x: sp.S(x) == sp.oo))
_nondiff("isneginf", "np.isneginf(x)", np.isneginf, reason=TEST,
         sympy=elementwise(lambda x: sp.S(x) == -sp.oo))
_nondiff("signbit", "np.signbit(x)", np.signbit, reason=TEST,
         no_sympy="SymPy has no negative zero, whose sign bit is set")
_nondiff("logical_not", "np.logical_not(x)", np.logical_not, operator.not_, reason=TEST, recompute="scalar",
         sympy=elementwise("Not"))
_nondiff("invert", "~x", np.invert, operator.invert, reason=BITWISE, no_sympy=NO_SYMPY_BITS)
for _name, _symbol, _ufunc, _operator, _form in [
    ("greater", ">", np.greater, operator.gt, "Gt"),
    ("greater_equal", ">=", np.greater_equal, operator.ge, "Ge"),
    ("less", "<", np.less, operator.lt, "Lt"),
    ("less_equal", "<=", np.less_equal, operator.le, "Le"),
    ("equal", "==", np.equal, operator.eq, "Eq"),
    ("not_equal", "!=", np.not_equal, operator.ne, "Ne"),
]:
    _nondiff(_name, f"x1 {_symbol} x2", _ufunc, _operator, params="x1,x2", reason=TEST,
             recompute="scalar", sympy=elementwise(_form, 2))
    OPS[_name].impl = _operator
for _name, _symbol, _ufunc, _operator in [
    ("bitwise_and", "&", np.bitwise_and, operator.and_),
    ("bitwise_or", "|", np.bitwise_or, operator.or_),
    ("bitwise_xor", "^", np.bitwise_xor, operator.xor),
]:
    _nondiff(_name, f"x1 {_symbol} x2", _ufunc, _operator, params="x1,x2", reason=BITWISE,
             no_sympy=NO_SYMPY_BITS)
    OPS[_name].impl = _operator
for _name, _ufunc, _form in [("logical_and", np.logical_and, "And"),
                             ("logical_or", np.logical_or, "Or")]:
    _nondiff(_name, f"np.{_name}(x1, x2)", _ufunc, params="x1,x2", reason=TEST,
             recompute="scalar", sympy=elementwise(_form, 2))
_nondiff("floor_divide", "x1 // x2", np.floor_divide, operator.floordiv, params="x1,x2",
         reason=STEPS, recompute="scalar", sympy=elementwise(lambda x1, x2: sp.floor(x1 / x2), 2))
OPS["floor_divide"].impl = operator.floordiv


@defop("remainder", "x1 % x2", aliases=(np.remainder, np.mod, operator.mod), diff=("x1", "x2"),
       shape=BINARY, impl=operator.mod, recompute="scalar", sympy=elementwise("Mod", 2))
def remainder(x1, x2): ...


@remainder.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.floor(x1 / x2), x2)


@remainder.defjvp("x1")
def _(t, ans, x1, x2):
    return broadcast_like(t, ans)


@remainder.defjvp("x2")
def _(t, ans, x1, x2):
    return -t * np.floor(x1 / x2)


# np.fmod(x1, x2) = x1 - trunc(x1 / x2) * x2 has the sign of x1 (C's fmod), where x1 % x2
# has the sign of x2: its derivatives are 1 in x1 and -trunc(x1 / x2) in x2, the
# remainder's with the quotient rounded toward zero instead of down (trunc(q) written
# sign(q) * floor(|q|), both piecewise constant). At a jump (x1 a multiple of x2) the
# one-sided derivative is taken, as for np.remainder.
@defop("fmod", "np.fmod(x1, x2)", aliases=(np.fmod, math.fmod), diff=("x1", "x2"), shape=BINARY,
       recompute="scalar", sympy=elementwise(
           lambda x1, x2: sp.Piecewise((x1 - x2 * sp.ceiling(x1 / x2), x1 / x2 < 0),
                                       (x1 - x2 * sp.floor(x1 / x2), True)), 2))
def fmod(x1, x2): ...


@fmod.defvjp
def _(g, ans, x1, x2):
    q = x1 / x2
    return unbroadcast(g, x1), unbroadcast(-g * (np.sign(q) * np.floor(np.abs(q))), x2)


@fmod.defjvp("x1")
def _(t, ans, x1, x2):
    return broadcast_like(t, ans)


@fmod.defjvp("x2")
def _(t, ans, x1, x2):
    q = x1 / x2
    return -t * (np.sign(q) * np.floor(np.abs(q)))


def _where_call(condition, *xy):
    """np.where(condition, x, y); np.where(condition) alone is np.nonzero(condition), the
    indices where it holds, which carry no gradient: that call runs as it is."""
    if not xy:
        raise RunAsItIs
    return [condition, *xy]


alias(np.where, where, _where_call)


# ----- more of NumPy's elementwise functions -----
#
# np.float_power is x1 ** x2 computed in float64: power's rules (and its conventions at
# the edge points, above), written with float_power itself so that they stay in float64
# and are differentiated again.
@defop("float_power", "np.float_power(x1, x2)", aliases=(np.float_power,), diff=("x1", "x2"),
       shape=BINARY, floating="always", sympy=elementwise(operator.pow, 2))
def float_power(x1, x2): ...


@float_power.defvjp
def _(g, ans, x1, x2):
    return (unbroadcast(g * x2 * np.float_power(x1, power_exponent_below(x2)), x1),
            unbroadcast(g * ans * power_log_base(x1), x2))


@float_power.defjvp("x1")
def _(t, ans, x1, x2):
    return t * x2 * np.float_power(x1, power_exponent_below(x2))


@float_power.defjvp("x2")
def _(t, ans, x1, x2):
    return t * ans * power_log_base(x1)


# np.ldexp(x1, x2) is x1 * 2 ** x2 with x2 an integer: linear in x1, whose adjoint is
# the same scaling of g.
@defop("ldexp", "np.ldexp(x1, x2)", aliases=(np.ldexp, math.ldexp), diff=("x1",), shape=BINARY,
       floating="always", jvp="linear", no_gradient="its exponent x2 is an integer",
       sympy=elementwise(lambda x1, x2: x1 * sp.Integer(2) ** x2, 2))
def ldexp(x1, x2): ...


@ldexp.defvjp
def _(g, ans, x1, x2):
    return unbroadcast(np.ldexp(g, x2), x1)


_nondiff("fix", "np.fix(x)", np.fix, reason=STEPS,
         sympy=elementwise(lambda x: sp.sign(x) * sp.floor(sp.Abs(x))))


# numba has no np.fix: rounding toward zero is ceil below 0 and floor elsewhere.
@OPS["fix"].defnumba
def _(rewrite, x):
    below = rewrite.emit(OPS["less"], x, Const(0))
    return rewrite.emit(where, below, rewrite.emit(OPS["ceil"], x), rewrite.emit(OPS["floor"], x))


# np.divmod(x1, x2) and Python's divmod(x1, x2) are (x1 // x2, x1 % x2): built as those
# two ops, so the quotient passes no gradient (it is piecewise constant) and the
# remainder has np.remainder's rules.
def _divmod_form(named, builder):
    x1, x2 = named["x1"], named["x2"]
    return (builder.emit(OPS["floor_divide"], (x1, x2)), builder.emit(remainder, (x1, x2)))


@defop("divmod", "np.divmod(x1, x2)", aliases=(np.divmod, builtins.divmod), diff=("x1", "x2"),
       simplify=_divmod_form, no_gradient="built as floor_divide and remainder",
       no_sympy="built as floor_divide and remainder")
def divmod_(x1, x2): ...


# Batched tangents (transforms/batching.py): a running total not yet batched cannot take
# a batched term in place: their plain sum, elementwise.
@accumulate.defbatch
def _(batch, node, x1, x2):
    return batch.elementwise(node, op=None if batch.batched(x1) else add)
