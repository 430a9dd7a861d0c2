"""Random straight-line programs, differentiated and checked against finite differences.

Hypothesis draws a program over one to three arguments (arrays of
broadcast-compatible shapes, 0-d arrays or Python floats): several assignments
built from a table of unary, binary, reduction and shape operations, reusing
earlier variables (fan-out), rebinding names (including the arguments' and
names the compiler generates, such as ``dx`` and ``t1``) and augmenting in
place. The program is written to a real module file; every argument's gradient
is compared with central differences in float64, and the value returned by
``value_and_grad`` with the function's own.

Inputs come from a grid with a small jitter, so no input is near 0 and no two
inputs are near each other or each other's negation: kinks of ``abs``,
``maximum``, ``where`` and ``max`` stay away from the evaluation point. Each
intermediate has a magnitude bound, and operations that would exceed it are
not drawn, so finite differences stay accurate.

CI runs 60 examples. For a long run, set ``AUTODIFF_FUZZ_EXAMPLES``::

    AUTODIFF_FUZZ_EXAMPLES=2000 python -m pytest -q tests/test_random_programs.py
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences

EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "60"))
BOUND = 10.0  # largest magnitude any intermediate may reach
BASE_SHAPES = [(2, 3), (3,), (4,), (3, 2), (2, 2, 3), (2, 1, 3)]
ARG_NAMES = ["x", "y", "w"]
# Temporaries use names users write and names the compiler also generates.
TEMP_NAMES = ["h", "u", "out", "t1", "dx", "g", "ans", "tmp", "d", "z2", "acc"]
CONSTANTS = ["0.5", "1.5"]

# (template, bound of the result given the operands' bounds)
UNARY = [
    ("np.sin({a})", lambda a: min(a, 1.0)),
    ("np.cos({a})", lambda a: 1.0),
    ("np.tanh({a})", lambda a: min(a, 1.0)),
    ("np.exp(np.tanh({a}))", lambda a: math.e),
    ("np.log(1 + {a} * {a})", lambda a: math.log1p(a * a)),
    ("np.sqrt(1 + {a} * {a})", lambda a: math.sqrt(1 + a * a)),
    ("np.abs({a})", lambda a: a),
    ("np.square({a})", lambda a: a * a),
    ("{a} ** 2", lambda a: a * a),
    ("-{a}", lambda a: a),
]
BINARY = [
    ("{a} + {b}", lambda a, b: a + b),
    ("{a} - {b}", lambda a, b: a + b),
    ("{a} * {b}", lambda a, b: a * b),
    ("{a} / (1 + {b} * {b})", lambda a, b: a),
    ("{a} / (2.5 + np.sin({b}))", lambda a, b: a / 1.5),
    ("np.maximum({a}, {b})", max),
    ("np.minimum({a}, {b})", max),
    ("np.where({a} > {b}, {a}, 2.0 * {b})", lambda a, b: max(a, 2 * b)),
    ("np.where({a} < 0.3, {b}, {a} * 0.5)", max),
]
REDUCTIONS = ["np.sum({a}{args})", "{a}.sum({args})", "np.mean({a}{args})",
              "{a}.mean({args})", "np.max({a}{args})", "{a}.max({args})", "np.min({a}{args})"]
AUGMENTED = ["+=", "-=", "*="]


@dataclass
class Variable:
    """A name in the program being built, with what the generator knows of its value."""

    name: str
    shape: tuple | None  # None: a float scalar (Python or NumPy)
    bound: float
    fresh: bool = False  # a new array no other variable views: safe to augment in place
    used: bool = False
    value: object = None  # its value at a sample point, which tells its shape

    @property
    def ndim(self) -> int:
        return 0 if self.shape is None else len(self.shape)


@dataclass
class Program:
    """A generated program: its source text and its arguments' shapes."""

    source: str
    arg_shapes: list
    seed: int


def _argument_shape(draw, base: tuple):
    """A shape that broadcasts to ``base`` (mostly ``base`` itself), or None for a Python float."""
    kind = draw(st.sampled_from(["array"] * 6 + ["float", "0-d"]))
    if kind != "array":
        return None if kind == "float" else ()
    rank = len(base) - draw(st.sampled_from([0, 0, 0, *range(1, len(base))]))
    return tuple(1 if draw(st.integers(0, 3)) == 3 else n for n in base[len(base) - rank:])


def _pick(draw, variables: list):
    """One of ``variables``, the most recent ones first (so that programs grow deep)."""
    return variables[-1 - draw(st.integers(0, len(variables) - 1))]


def _evaluate(expression: str, variables: list[Variable]):
    return eval(expression, {"np": np}, {v.name: v.value for v in variables})  # our own text


def _shape_of(expression: str, variables: list[Variable]):
    value = _evaluate(expression, variables)
    return None if isinstance(value, float) else np.shape(value)


def _sample(shape, rng: np.random.Generator):
    return float(rng.uniform(-2, 2)) if shape is None else rng.uniform(-2, 2, size=shape)


def _compatible(a: Variable, others: list[Variable]) -> list[Variable]:
    def fits(b: Variable) -> bool:
        try:
            np.broadcast_shapes(a.shape or (), b.shape or ())
        except ValueError:
            return False
        return True
    return [b for b in others if fits(b)]


def _reduction_arguments(draw, a: Variable) -> str:
    axes = [None, *range(-a.ndim, a.ndim)] + ([(0, a.ndim - 1)] if a.ndim >= 2 else [])
    axis = draw(st.sampled_from(axes))
    keepdims = draw(st.booleans())
    parts = ([] if axis is None else [f"axis={axis}"]) + (["keepdims=True"] if keepdims else [])
    return ", ".join(parts)


def _expression(draw, a: Variable, pool: list[Variable]) -> tuple[str, float, bool, list]:
    """One right-hand side using ``a``: (text, bound, fresh, operands)."""
    kinds = ["binary", "unary", "binary"] + (["reduce", "shape", "reduce"] if a.ndim >= 1 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "unary":
        template, bound = draw(st.sampled_from([u for u in UNARY if u[1](a.bound) <= BOUND]))
        return template.format(a=a.name), bound(a.bound), True, [a]
    if kind == "binary":
        constants = [Variable(c, None, float(c)) for c in CONSTANTS]
        partners = _compatible(a, pool)
        broadcasting = [b for b in partners if b.shape != a.shape]
        if broadcasting and draw(st.booleans()):
            partners = broadcasting  # make broadcasting common, not just possible
        b = draw(st.sampled_from(constants)) if draw(st.integers(0, 4)) == 4 else _pick(
            draw, partners)
        if draw(st.booleans()):
            a, b = b, a  # a constant may come first too
        choices = [t for t in BINARY if t[1](a.bound, b.bound) <= BOUND]
        template, bound = draw(st.sampled_from(choices))
        operands = [v for v in (a, b) if v not in constants]
        return template.format(a=a.name, b=b.name), bound(a.bound, b.bound), True, operands
    if kind == "reduce":
        args = _reduction_arguments(draw, a)
        count = math.prod(a.shape) // math.prod(_shape_of(f"np.sum({a.name}, {args})", pool) or ())
        template = draw(st.sampled_from(
            [t for t in REDUCTIONS if "sum" not in t or a.bound * count <= BOUND]))
        bound = a.bound * (count if "sum" in template else 1)
        args = args if template.startswith("{a}.") or not args else ", " + args
        return template.format(a=a.name, args=args), bound, True, [a]
    views = ["{a}.reshape(-1)", "np.ravel({a})"]
    views += ["{a}.T", "np.transpose({a})"] if a.ndim >= 2 else []
    views += ["{a}[1:]", "{a}[:-1]"] if a.shape[0] >= 2 else []
    views += ["{a}[0]"] if a.ndim >= 2 else []
    return draw(st.sampled_from(views)).format(a=a.name), a.bound, False, [a]


def _augment(draw, target: Variable, pool: list[Variable]) -> str | None:
    """``target op= b`` when ``b`` keeps ``target``'s shape and the bound allows it."""
    same = [b for b in _compatible(target, pool) if b is not target and b.bound <= BOUND
            and _shape_of(f"{target.name} + {b.name}", pool) == target.shape]
    if not same:
        return None
    b = draw(st.sampled_from(same))
    bounds = {"+=": target.bound + b.bound, "-=": target.bound + b.bound,
              "*=": target.bound * b.bound}
    operators = [op for op in AUGMENTED if bounds[op] <= BOUND]
    if not operators:
        return None
    operator = draw(st.sampled_from(operators))
    b.used = True
    target.bound = bounds[operator]
    target.value = _evaluate(f"{target.name} {operator[0]} {b.name}", pool)
    return f"{target.name} {operator} {b.name}"


@st.composite
def programs(draw) -> Program:
    base = draw(st.sampled_from(BASE_SHAPES))
    n_args = draw(st.integers(1, 3))
    shapes = [_argument_shape(draw, base) for _ in range(n_args)]
    sampler = np.random.default_rng(0)
    pool = [Variable(name, shape, 2.5, value=_sample(shape, sampler))
            for name, shape in zip(ARG_NAMES, shapes)]
    params = [v.name for v in pool]
    body = []
    for _ in range(draw(st.integers(3, 8))):
        fresh_temps = [v for v in pool if v.fresh and v.name not in params]
        if fresh_temps and draw(st.integers(0, 4)) == 4:
            statement = _augment(draw, draw(st.sampled_from(fresh_temps)), pool)
            if statement is not None:
                body.append(statement)
                continue
        a = _pick(draw, pool)
        text, bound, fresh, operands = _expression(draw, a, pool)
        for operand in operands:
            operand.used = True
            if not fresh:
                operand.fresh = False  # it now has a view: augmenting it would change the view
        name = draw(st.sampled_from(TEMP_NAMES + params))
        value = _evaluate(text, pool)
        shape = None if isinstance(value, float) else np.shape(value)
        pool = [v for v in pool if v.name != name]
        pool.append(Variable(name, shape, bound, fresh=fresh, value=value))
        body.append(f"{name} = {text}")
    last, *rest = reversed(pool)
    terms = [f"np.sum(WEIGHTS * {last.name})"]
    terms += [f"np.mean({v.name})" for v in rest if not v.used and v.name not in params]
    seed = draw(st.integers(0, 2 ** 32 - 1))
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, size=last.shape or ())
    lines = ["import numpy as np", "",
             f"WEIGHTS = np.array({weights.tolist()!r})", "", "",
             f"def f({', '.join(params)}):", *[f"    {s}" for s in body],
             f"    return {' + '.join(terms)}", ""]
    return Program("\n".join(lines), shapes, seed)


def _inputs(program: Program) -> list:
    """Arguments from a grid with jitter: away from 0, from each other and their negations."""
    rng = np.random.default_rng(program.seed)
    grid = np.arange(-24, 24) * 0.1 + 0.037
    grid = grid[np.abs(grid) > 0.1]
    sizes = [1 if s is None else math.prod(s) for s in program.arg_shapes]
    values = rng.choice(grid, size=sum(sizes), replace=False)
    values = values + rng.uniform(-0.01, 0.01, size=values.shape)
    args, start = [], 0
    for shape, size in zip(program.arg_shapes, sizes):
        chunk = values[start:start + size]
        args.append(float(chunk[0]) if shape is None else chunk.reshape(shape))
        start += size
    return args


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("random_programs"))


def test_generator_reaches_every_kind_of_statement():
    # The generator itself: a sample of programs uses every family of the tables.
    sources = []

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(programs())
    def collect(program):
        sources.append(program.source)

    collect()
    text = "\n".join(sources)
    for fragment in ["np.sin(", "np.exp(np.tanh(", "np.log(1 + ", "np.maximum(", "np.minimum(",
                     "np.where(", "/ (1 + ", "np.sum(", ".mean(", "np.max(", ".T", "[1:]",
                     "reshape(-1)", "keepdims=True", " += ", " *= ", "dx = ", "t1 = "]:
        assert fragment in text, fragment


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
def test_random_program_gradients_match_finite_differences(modules, program):
    note(program.source)
    note(f"args = {_inputs(program)!r}")
    _check(modules, program)


def _check(modules, program: Program) -> None:
    module = modules(program.source)
    args = _inputs(program)
    wrt = tuple(range(len(args)))
    value, _ = ad.value_and_grad(module.f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, module.f(*args), rtol=1e-12, atol=1e-12)
    check_against_finite_differences(module.f, args, wrt=wrt, rtol=1e-5, atol=1e-6)


# Found by this test: two equal expressions were built as one value, so 'h += x'
# looked like an update of an array that 'u' also names and was rejected.
SAME_EXPRESSION_TWICE = Program("""import numpy as np

WEIGHTS = np.array([0.6, 1.1, 1.4])


def f(x):
    h = np.sin(x)
    u = np.sin(x)
    h += x
    return np.sum(WEIGHTS * u) + np.mean(h)
""", [(3,)], 0)


def test_same_expression_twice_then_augmented(modules):
    _check(modules, SAME_EXPRESSION_TWICE)
