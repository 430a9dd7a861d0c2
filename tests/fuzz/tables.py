"""The operations programs are written with, each with a bound on the magnitude of its result.

A bound rule takes the operands' bounds (and, for reductions, how many
elements go into each result) and returns the result's. Kinks (``abs``,
``maximum``, ``max``, ``where``, ``clip``, ``norm``) are welcome: the program is
run at the test point first and thrown away if any of them is close to its kink.
"""

from __future__ import annotations

import math

BOUND = 10.0  # largest magnitude any float intermediate may reach

# (template, bound of the result given the operand's bound, keeps a Python float a float)
UNARY = [
    ("np.tanh({a})", lambda a: min(a, 1.0), False),
    ("np.sin({a})", lambda a: min(a, 1.0), False),
    ("np.cos({a})", lambda a: 1.0, False),
    ("np.exp(0.3 * {a})", lambda a: math.exp(0.3 * a), False),
    ("np.exp(np.tanh({a}))", lambda a: math.e, False),
    ("np.log(1 + {a} * {a})", lambda a: math.log1p(a * a), False),
    ("np.sqrt(1 + {a} ** 2)", lambda a: math.sqrt(1 + a * a), False),
    ("np.arctan({a})", lambda a: min(a, math.pi / 2), False),
    ("np.abs({a})", lambda a: a, False),
    ("np.clip({a}, -0.8, 0.8)", lambda a: min(a, 0.8), False),
    ("np.square({a})", lambda a: a * a, False),
    ("0.5 * {a}", lambda a: 0.5 * a, True),
    ("{a} ** 2", lambda a: a * a, True),
    ("-{a}", lambda a: a, True),
]
# Only for scalars: the math module and Python's abs.
SCALAR_UNARY = [
    ("math.sin({a})", lambda a: min(a, 1.0), True),
    ("math.tanh({a})", lambda a: min(a, 1.0), True),
    ("math.exp(0.3 * {a})", lambda a: math.exp(0.3 * a), True),
    ("abs({a})", lambda a: a, True),
]
# (template, bound given the operands' bounds, keeps two Python floats a float)
BINARY = [
    ("{a} + {b}", lambda a, b: a + b, True),
    ("{a} - {b}", lambda a, b: a + b, True),
    ("{a} * {b}", lambda a, b: a * b, True),
    ("{a} / (1.5 + np.sin({b}))", lambda a, b: 2 * a, False),
    ("{a} / (1 + {b} * {b})", lambda a, b: a, True),
    ("np.maximum({a}, {b})", max, False),
    ("np.minimum({a}, {b})", max, False),
    ("np.where({a} > {b}, {a}, 2.0 * {b})", lambda a, b: max(a, 2 * b), False),
    ("np.logaddexp({a}, {b})", lambda a, b: max(a, b) + math.log(2), False),
    ("np.arctan2({a}, 2.0 + np.cos({b}))", lambda a, b: math.pi / 2, False),
]
SCALAR_BINARY = [
    ("max({a}, {b})", max, True),
    ("min({a}, {b})", max, True),
]
CONSTANTS = [("0.5", 0.5), ("1.5", 1.5), ("2.0", 2.0)]
# (template, bound given the reduced count and the operand's bound, has a method form)
REDUCTIONS = [
    ("sum", lambda n, a: n * a),
    ("mean", lambda n, a: a),
    ("max", lambda n, a: a),
    ("min", lambda n, a: a),
]
# Reductions with only a function form: (template, bound given count and operand bound)
OTHER_REDUCTIONS = [
    ("np.prod(1 + 0.5 * np.sin({a}){args})", lambda n, a: 1.5 ** n),
    ("np.var({a}{args})", lambda n, a: a * a),
    ("np.amax({a}{args})", lambda n, a: a),
]
NORM = ("np.linalg.norm({a})", lambda n, a: math.sqrt(n) * a)
# (template, whether both operands may have any number of dimensions)
MATMUL = [("{a} @ {b}", True), ("np.matmul({a}, {b})", True), ("np.dot({a}, {b})", False)]
