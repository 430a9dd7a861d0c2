"""Random modules (helpers and ``f``), run once at the test point before they are used.

Central differences need a function that is smooth at the test point. Every
intermediate has a magnitude bound, and nothing turns on a kink or a branch
under a small step: the generator runs the program at the test point with
every condition on data and every kink watched (``abs``, ``maximum``, ``max``,
``where``, ``clip``, ``norm``). A condition takes its threshold from the first
value it sees, and any later value it sees must be ``COND_MARGIN`` away from
it; a kink must be ``KINK_MARGIN`` away; otherwise the program is rejected.
The same run checks every assigned value against its bound.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import numpy as np
from hypothesis import event, reject
from hypothesis import strategies as st

from tests.fuzz.expressions import HELPER_ARGUMENT_BOUND, Helper, Variable
from tests.fuzz.statements import MAX_INDEX, Condition, Writer
from tests.fuzz.tables import BOUND

MAX_INT = 3  # int arguments take values 0..MAX_INT
MAX_ELEMENTS = 40  # float elements of all arguments together
COND_MARGIN = 0.01  # distance of a value a condition sees from its threshold
KINK_MARGIN = 2e-3  # distance of a value from a kink (|x| from 0, the two largest of a max...)
MARGIN = 0.5  # distance of a while loop's threshold from the values it sees
HELPER_NAMES = ["cell", "mix"]
FLOAT_NAMES = ["x", "W", "xs", "y", "b", "c"]
# A grid with an offset: no value near 0, no two near each other or each other's negation.
GRID = np.array([v for v in np.arange(-24, 25) * 0.05 + 0.0137 if abs(v) > 0.04])
ARGUMENT_BOUND = 1.25


@dataclass
class Program:
    """A generated module, the arguments of its ``f`` and which of them to differentiate."""

    source: str
    params: list[str]
    args: list
    wrt: tuple

    def arguments(self, dtype=np.float64) -> list:
        return [a.astype(dtype) if isinstance(a, np.ndarray) else a for a in self.args]

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        values = [f"{p} = {a!r}" if not isinstance(a, np.ndarray)
                  else f"{p} = np.array({a.tolist()!r})" for p, a in zip(self.params, self.args)]
        return "\n".join(["", self.source, "# at", *values, f"# wrt={self.wrt}", ""])

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))


class NearKink(Exception):
    """The program runs too close to a kink or a threshold at the test point."""


def _gap(a, axis, largest: bool) -> float:
    """The smallest difference between the two largest (or smallest) values along ``axis``."""
    a = np.asarray(a, dtype=float)
    axes = tuple(range(a.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    a = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    a = a.reshape(a.shape[:a.ndim - len(axes)] + (-1,))
    if a.shape[-1] < 2:
        return math.inf
    ordered = np.sort(a, axis=-1)
    return float(np.min(ordered[..., -1] - ordered[..., -2] if largest
                        else ordered[..., 1] - ordered[..., 0]))


class Watch:
    """What the recording run calls in place of kinks, conditions and assignments."""

    def __init__(self, conditions: list[Condition]) -> None:
        self.conditions = conditions

    @staticmethod
    def far(distance, what: str) -> None:
        if np.min(np.abs(distance)) < KINK_MARGIN:
            raise NearKink(what)

    def zero(self, function, a):
        self.far(a, "abs")
        return function(a)

    def pair(self, function, a, b):
        self.far(np.subtract(a, b), "maximum")
        return function(a, b)

    def extreme(self, function, a, axis=None, keepdims=False):
        name = getattr(function, "__name__", "")
        if _gap(a, axis, largest=name in ("max", "amax")) < KINK_MARGIN:
            raise NearKink("max")
        return function(a, axis=axis, keepdims=keepdims)

    def method(self, a, name: str, axis=None, keepdims=False):
        if _gap(a, axis, largest=name == "max") < KINK_MARGIN:
            raise NearKink("max")
        return getattr(a, name)(axis=axis, keepdims=keepdims)

    def apart(self, a, b):
        self.far(np.subtract(a, b), "where")
        return a

    def clip(self, function, a, low, high):
        self.far(np.subtract(a, low), "clip")
        self.far(np.subtract(a, high), "clip")
        return function(a, low, high)

    def norm(self, function, a):
        value = function(a)
        self.far(value, "norm")
        return value

    def bounded(self, value, line: int):
        if isinstance(value, (float, np.floating, np.ndarray)) and np.size(value):
            assert np.max(np.abs(value)) <= BOUND * (1 + 1e-9), (
                f"line {line}: a value of magnitude {np.max(np.abs(value))} exceeds {BOUND}")
        return value

    def test(self, index: int, value) -> bool:
        condition, value = self.conditions[index], float(value)
        condition.values.append(value)
        if condition.trips is not None:
            return len(condition.values) <= condition.trips
        if condition.threshold is None:
            condition.threshold = round(value + condition.offset, 3)
        if abs(value - condition.threshold) < COND_MARGIN:
            raise NearKink("condition")
        return value > condition.threshold if condition.operator == ">" \
            else value < condition.threshold


_KINDS = {"np.abs": "zero", "abs": "zero", "np.maximum": "pair", "np.minimum": "pair",
          "max": "pair", "min": "pair", "np.max": "extreme", "np.min": "extreme",
          "np.amax": "extreme", "np.amin": "extreme", "np.clip": "clip",
          "np.linalg.norm": "norm"}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Watched(ast.NodeTransformer):
    """The program as the recording run executes it: kinks, conditions and assignments
    go through ``_watch``."""

    @staticmethod
    def watch(name: str, *args: ast.expr, keywords=()) -> ast.Call:
        function = ast.Attribute(ast.Name("_watch", ast.Load()), name, ast.Load())
        return ast.Call(function, list(args), list(keywords))

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = _dotted(node.func)
        if name == "np.where" and isinstance(node.args[0], ast.Compare):
            compare = node.args[0]
            compare.left = self.watch("apart", compare.left, compare.comparators[0])
            return node
        if name in _KINDS and (name not in ("max", "min") or len(node.args) == 2):
            return self.watch(_KINDS[name], node.func, *node.args, keywords=node.keywords)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("max", "min"):
            receiver = node.func.value
            return self.watch("method", receiver, ast.Constant(node.func.attr),
                              *node.args, keywords=node.keywords)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        node.value = self.watch("bounded", node.value, ast.Constant(node.lineno))
        return node


def _render(template: str, conditions: list[Condition], recording: bool) -> str:
    for i, c in enumerate(conditions):
        threshold = c.threshold if c.threshold is not None else 0.0
        text = (f"_watch.test({i}, {c.expression})" if recording
                else f"{c.expression} {c.operator} {threshold:.3f}")
        template = template.replace(f"@@{i}@@", text)
    return template


def _settle_while(condition: Condition) -> None:
    """A threshold between the last two values a ``while`` on data saw (which grow by 0.4 or
    more a trip), or past the last one if a ``return`` left the loop before its last test."""
    v, trips = condition.values, condition.trips
    if len(v) > trips:
        condition.threshold = v[0] - MARGIN if trips == 0 else (v[trips - 1] + v[trips]) / 2
    elif v:
        condition.threshold = v[-1] + MARGIN


def _record(template: str, conditions: list[Condition], args: list) -> None:
    """Run the program at the test point: place thresholds, watch kinks and bounds."""
    tree = _Watched().visit(ast.parse(_render(template, conditions, True)))
    namespace = {"_watch": Watch(conditions)}
    exec(compile(ast.fix_missing_locations(tree), "<recording>", "exec"), namespace)  # noqa: S102
    try:
        value = namespace["f"](*args)
    except NearKink as near:
        event("rejected: near a kink", str(near))
        reject()
    if not np.all(np.isfinite(value)):
        event("rejected: not finite")
        reject()
    for condition in conditions:
        if condition.trips is not None:
            _settle_while(condition)


def _inputs(rng: np.random.Generator, shapes: list) -> list:
    """Float arguments from the grid with a small jitter (``None``: a Python float)."""
    sizes = [1 if s is None else math.prod(s) for s in shapes]
    values = rng.choice(GRID, size=sum(sizes), replace=False)
    values = values + rng.uniform(-0.003, 0.003, size=values.shape)
    args, start = [], 0
    for shape, size in zip(shapes, sizes):
        chunk = values[start:start + size]
        args.append(float(chunk[0]) if shape is None else chunk.reshape(shape))
        start += size
    return args


def _argument_shapes(draw) -> list[tuple[str, tuple | None]]:
    """The float arguments: ``x`` always, others sometimes, with shapes that broadcast."""
    m, n = draw(st.sampled_from([2, 3, 4])), draw(st.sampled_from([2, 3]))
    shapes = {"vector": (n,), "row": (1, n), "matrix": (m, n), "batch": (m, 1, n),
              "square": (n, n), "column": (m, 1), "0-d": (), "float": None}
    kinds = ["vector", "matrix", "0-d", "row", "float", "batch", "vector", "square", "matrix",
             "column"]
    chosen = [("x", shapes[draw(st.sampled_from([k for k in kinds if "0" not in k
                                                 and k != "float"]))])]
    for name in FLOAT_NAMES[1:]:
        if draw(st.integers(0, 2)) == 0:
            chosen.append((name, shapes[draw(st.sampled_from(kinds))]))
    while sum(1 if s is None else math.prod(s) for _, s in chosen) > MAX_ELEMENTS:
        chosen.pop()
    return chosen


def _helper(draw, name: str, shapes: list[tuple], helpers: list[Helper],
            conditions: list[Condition], closure: list[Variable] = ()) -> Helper:
    """A helper ``f`` may call: ``h`` and maybe an array, a scalar, an int or a default;
    a function nested in ``f`` also reads the ``closure`` variables of ``f``."""
    extra = draw(st.sampled_from([[], ["array"], ["scalar"], ["int"], ["array", "int"],
                                  ["default"]]))
    params = [("h", draw(st.sampled_from(shapes)))]
    params += [{"array": ("v", draw(st.sampled_from(shapes))), "scalar": ("c", ()),
                "int": ("m", None), "default": ("scale", "default")}[kind] for kind in extra]
    scope = [Variable(p, "int", (), MAX_INDEX, argument=True) if s is None else
             Variable(p, "array", (), 0.75, python=True, argument=True) if s == "default" else
             Variable(p, "array", s, HELPER_ARGUMENT_BOUND, python=s == (), argument=True)
             for p, s in params]
    scope += [Variable(v.name, "array", v.shape, v.bound, v.python, argument=True, frozen=True)
              for v in closure if v.name not in {p for p, _ in params}]
    returns = draw(st.sampled_from([params[0][1], params[0][1], ()]))
    writer = Writer(draw, scope, list(helpers), conditions, returns=returns, in_helper=True)
    statements = draw(st.integers(0, 2))
    for _ in range(statements):
        writer.statement()
    result = writer.expression(returns, 2)
    bound = max(result.bound, writer.returned)
    signature = ", ".join(f"{p}=0.5" if s == "default" else p for p, s in params)
    if not writer.lines and draw(st.integers(0, 2)) == 0:
        lines = [f"{name} = lambda {signature}: {result.text}"]
    else:
        lines = [f"def {name}({signature}):", *writer.lines, f"    return {result.text}"]
    return Helper(name, params, returns, bound, lines)


@st.composite
def programs(draw) -> Program:
    floats = _argument_shapes(draw)
    ints = [("n", None)] + [("k", None)] * draw(st.booleans())
    order = draw(st.permutations(floats + ints))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    values = dict(zip([p for p, _ in floats], _inputs(rng, [s for _, s in floats])))
    values.update({p: draw(st.integers(0, MAX_INT)) for p, _ in ints})
    array_shapes = [() if s is None else s for _, s in floats]
    conditions: list[Condition] = []
    helpers: list[Helper] = []
    for name in HELPER_NAMES[:draw(st.sampled_from([2, 1, 0]))]:  # helpers first
        helpers.append(_helper(draw, name, array_shapes, helpers, conditions))
    scope = [Variable(p, "int", (), MAX_INT, argument=True) if s is None and (p, s) in ints
             else Variable(p, "array", () if s is None else s, ARGUMENT_BOUND,
                           python=s is None, argument=True) for p, s in order]
    nested = None
    if draw(st.integers(0, 3)) == 0:  # a function defined in f, reading f's arguments
        closure = [v for v in scope if v.kind == "array"]
        for variable in closure:
            variable.frozen = True
        nested = _helper(draw, "inner", array_shapes, helpers, conditions, closure)
        helpers.append(nested)
    writer = Writer(draw, scope, helpers, conditions)
    if nested is not None:
        writer.lines += ["    " + line for line in nested.lines]
    for _ in range(draw(st.integers(2, 6))):
        writer.statement()
    if not any(line.startswith(("    for ", "    while ")) for line in writer.lines) and draw(
            st.integers(0, 5)) < 5:  # most programs have a loop
        writer.for_loop()
    result, weights_shape = writer.final()
    writer.emit(f"return {result}")
    weights = np.round(rng.uniform(0.5, 1.5, weights_shape), 2)
    lines = ["import math", "", "import numpy as np", "",
             f"WEIGHTS = np.array({weights.tolist()!r})", "", ""]
    for helper in helpers:
        lines += [*helper.lines, "", ""] if helper is not nested else []
    lines += [f"def f({', '.join(p for p, _ in order)}):", *writer.lines, ""]
    template = "\n".join(lines)
    args = [values[p] for p, _ in order]
    _record(template, conditions, [a.copy() if isinstance(a, np.ndarray) else a for a in args])
    differentiable = tuple(i for i, (p, s) in enumerate(order) if (p, s) not in ints)
    wrt = differentiable
    if len(differentiable) > 1 and draw(st.integers(0, 3)) == 0:
        wrt = tuple(sorted(draw(st.sets(st.sampled_from(differentiable), min_size=1))))
    return Program(_render(template, conditions, False), [p for p, _ in order], args, wrt)
