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
import dataclasses
import hashlib
import math
import re
import sys
import types
from dataclasses import dataclass

import numpy as np
from hypothesis import event, reject
from hypothesis import strategies as st

import autodiff as ad
from tests.fuzz.expressions import HELPER_ARGUMENT_BOUND, Helper, Variable
from tests.fuzz.statements import MAX_INDEX, Condition, Writer
from tests.fuzz.structures import class_text, draw_group, draw_packing
from tests.fuzz.tables import BOUND
from tests.fuzz.text import fill

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
LIBRARY = "@@LIBRARY@@"  # the second module's name, known once its text is
# Scales named SCALE in both modules: a helper must read its own module's.
LIBRARY_SCALES, MAIN_SCALES = [0.6, 0.8, 0.9], [1.1, 1.3]
FACTORY_VALUES = ["0.7", "-0.4", "1.2", "0.5"]  # what factories' closure variables hold
# Helpers with a gradient rule registered in the library: (function, VJP, JVP, bound for
# arguments within HELPER_ARGUMENT_BOUND). The rules read the library's SCALE.
CUSTOM = [
    ("return SCALE * np.log(1 + np.exp(h))", "return g * SCALE / (1 + np.exp(-h))",
     "return t * SCALE / (1 + np.exp(-h))", 2.2),
    ("return np.tanh(SCALE * h)", "return g * SCALE * (1 - ans ** 2)",
     "return t * SCALE * (1 - ans ** 2)", 1.0),
    ("return h * np.sin(SCALE * h)", "return g * (np.sin(SCALE * h) + SCALE * h * np.cos(SCALE * h))",
     "return t * (np.sin(SCALE * h) + SCALE * h * np.cos(SCALE * h))", 2.0),
]
# Transforms of transforms checked on some programs (``tests/fuzz/checks.py``).
COMPOSITIONS = ["jvp of jvp", "vjp of jvp", "grad of value_and_grad"]


@dataclass
class Program:
    """A generated module, the arguments of its ``f`` and which of them to differentiate."""

    source: str
    params: list[str]
    args: list
    wrt: tuple
    library: str = ""  # the text of a second module the first imports, if any
    library_name: str = ""
    composition: str | None = None  # one of COMPOSITIONS (``f2`` for grad of value_and_grad)

    def arguments(self, dtype=np.float64) -> list:
        """Fresh copies of the arguments (structures too), their arrays of ``dtype``."""
        return [ad.tree.map(lambda a: a.astype(dtype) if isinstance(a, np.ndarray) else a, arg)
                for arg in self.args]

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        values = [f"{p} = {_literal(a)}" for p, a in zip(self.params, self.args)]
        classes = sorted({class_text("namedtuple" if hasattr(type(v), "_fields")
                                     else "dataclass", _fields(v))
                          for a in self.args for v in _nodes(a) if _fields(v)})
        library = [f"# {self.library_name}.py:", self.library, f"# {'-' * 40}"] \
            if self.library else []
        return "\n".join(["", *library, self.source, "# at", *(f"# {c}" for c in classes),
                          *values, f"# wrt={self.wrt}",
                          f"# also: {self.composition}" if self.composition else "", ""])

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))


def _fields(value) -> tuple:
    """The fields of a namedtuple or a dataclass, () for anything else."""
    if hasattr(type(value), "_fields"):
        return tuple(type(value)._fields)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple(f.name for f in dataclasses.fields(value))
    return ()


def _nodes(value):
    """``value`` and every structure and leaf inside it."""
    yield value
    for _, child in ad.tree.items(value) or ():
        yield from _nodes(child)


def _literal(value) -> str:
    """An argument as code that makes it: arrays as ``np.array([...])``, structures spelled
    out (``Layer(W=..., b=...)`` for a namedtuple or dataclass)."""
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    fields = _fields(value)
    if fields:
        return f"{type(value).__name__}(" + ", ".join(
            f"{f}={_literal(getattr(value, f))}" for f in fields) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else \
            f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


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


class _RecordingAutodiff:
    """What ``ad`` is in the recording run: gradients by central differences of the watched
    function (which watches its kinks at every point it runs), and rules ignored."""

    @staticmethod
    def grad(function, wrt=0):
        assert wrt == 0

        def gradient(h, *args, **kwargs):
            point = np.array(h, dtype=float)
            result = np.zeros_like(point)
            for index in np.ndindex(point.shape):
                up, down = point.copy(), point.copy()
                up[index] += 1e-6
                down[index] -= 1e-6
                result[index] = (function(up if point.shape else float(up), *args, **kwargs)
                                 - function(down if point.shape else float(down), *args,
                                            **kwargs)) / 2e-6
            return result if isinstance(h, np.ndarray) else float(result)
        return gradient

    @staticmethod
    def register_gradient(*args, **kwargs) -> None:
        return None


_RECORDING_LIBRARY = "_random_library_recording"


def _watched(text: str, filename: str, namespace: dict) -> dict:
    tree = _Watched().visit(ast.parse(text.replace("import autodiff as ad\n", "")))
    namespace["ad"] = _RecordingAutodiff
    exec(compile(ast.fix_missing_locations(tree), filename, "exec"), namespace)  # noqa: S102
    return namespace


def _record(template: str, conditions: list[Condition], args: list, library: str = "") -> None:
    """Run the program at the test point: place thresholds, watch kinks and bounds."""
    watch = Watch(conditions)
    if library:
        module = types.ModuleType(_RECORDING_LIBRARY)
        module.__dict__["_watch"] = watch
        _watched(_render(library, conditions, True), "<recording library>", module.__dict__)
        sys.modules[_RECORDING_LIBRARY] = module
    try:
        namespace = _watched(_render(template, conditions, True).replace(
            LIBRARY, _RECORDING_LIBRARY), "<recording>", {"_watch": watch})
        try:
            value = namespace["f"](*args)
        except NearKink as near:
            event("rejected: near a kink", str(near))
            reject()
    finally:
        sys.modules.pop(_RECORDING_LIBRARY, None)
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
            conditions: list[Condition], closure: list[Variable] = (),
            scale: float | None = None) -> Helper:
    """A helper ``f`` may call: ``h`` and maybe an array, a scalar, an int or a default;
    a function nested in ``f`` also reads the ``closure`` variables of ``f``. A helper in
    the library scales what it returns by the library's ``SCALE``; a helper may be made by
    a factory, reading the factory's parameters."""
    extra = draw(st.sampled_from([[], ["array"], ["scalar"], ["int"], ["array", "int"],
                                  ["default"]]))
    params = [("h", draw(st.sampled_from(shapes)))]
    params += [{"array": ("v", draw(st.sampled_from(shapes))), "scalar": ("c", ()),
                "int": ("m", None), "default": ("scale", "default")}[kind] for kind in extra]
    factory = not closure and draw(st.integers(0, 3)) == 0
    if factory:
        closure = [Variable(p, "array", (), 1.2, python=True) for p in ("gain", "offset")]
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
    text = result.text
    if scale is not None:
        text, bound = fill("SCALE * {a}", a=text), bound * scale
    signature = ", ".join(f"{p}=0.5" if s == "default" else p for p, s in params)
    if not writer.lines and draw(st.integers(0, 2)) == 0:
        lines = [f"{name} = lambda {signature}: {text}"]
        if factory:
            lines = [f"return lambda {signature}: {text}"]
    else:
        lines = [f"def {name}({signature}):", *writer.lines, f"    return {text}"]
        if factory:
            lines += [f"return {name}"]
    if factory:
        values = [draw(st.sampled_from(FACTORY_VALUES)) for _ in closure]
        lines = [f"def make_{name}({', '.join(v.name for v in closure)}):",
                 *("    " + line for line in lines), "", "",
                 f"{name} = make_{name}({', '.join(values)})"]
    return Helper(name, params, returns, bound, lines)


def _custom(draw, shapes: list[tuple]) -> Helper:
    """An elementwise helper in the library, with its VJP and JVP registered there."""
    function, vjp, jvp, bound = draw(st.sampled_from(CUSTOM))
    name = draw(st.sampled_from(["smooth", "soft"]))
    shape = draw(st.sampled_from(shapes))
    lines = [f"def {name}(h):", f"    {function}", "", "",
             f"def {name}_vjp(g, ans, h):", f"    {vjp}", "", "",
             f"def {name}_jvp(t, ans, h):", f"    {jvp}", "", "",
             f"ad.register_gradient({name}, {name}_vjp, jvp={name}_jvp)"]
    return Helper(name, [("h", shape)], shape, bound, lines)


def _module(lines: list[str], helpers: list[Helper], body: list[str]) -> str:
    for helper in helpers:
        lines += [*helper.lines, "", ""]
    return "\n".join(lines + body)


@st.composite
def programs(draw, structured: bool = False) -> Program:
    """A program; with ``structured``, one that packs arguments into a structure and takes a
    group (where the group's elements fit)."""
    floats = _argument_shapes(draw)
    ints = [("n", None)] + [("k", None)] * draw(st.booleans())
    order = draw(st.permutations(floats + ints))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    # Some arguments in a structure (a dict, a tuple, a namedtuple...), and maybe a group
    # of equal arrays (a list, a dict, a list of pairs) too.
    packing = draw_packing(draw, floats, ints, structured)
    used = sum(1 if s is None else math.prod(s) for _, s in floats)
    group = draw_group(draw, floats, MAX_ELEMENTS - used, packing, structured)
    group_shapes = group.leaf_shapes() if group else []
    drawn = _inputs(rng, [s for _, s in floats] + group_shapes)
    values = dict(zip([p for p, _ in floats], drawn))
    values.update({p: draw(st.integers(0, MAX_INT)) for p, _ in ints})
    group_value = group.value(drawn[len(floats):]) if group else None
    event("structured arguments", " and ".join(
        ([packing.kind] if packing else []) + ([f"a group ({group.container})"] if group
                                               else [])) or "none")
    array_shapes = [() if s is None else s for _, s in floats]
    conditions: list[Condition] = []
    # Helpers: in the library (a second module, read as 'lib.cell' or imported by name) or
    # in f's module; f sees both.
    library = draw(st.booleans())
    qualified = library and draw(st.booleans())  # 'import ... as lib' or 'from ... import'
    library_scale, main_scale = (draw(st.sampled_from(LIBRARY_SCALES)),
                                 draw(st.sampled_from(MAIN_SCALES)))
    in_library: list[Helper] = []  # as the library sees them
    own: list[Helper] = []  # f's module's
    helpers: list[Helper] = []  # as f's module sees them

    def imported(helper: Helper) -> Helper:
        in_library.append(helper)
        return dataclasses.replace(helper, call=f"lib.{helper.name}") if qualified else helper

    if library and draw(st.booleans()):
        helpers.append(imported(_custom(draw, array_shapes)))
    for name in HELPER_NAMES[:draw(st.sampled_from([2, 1, 0]))]:  # helpers first
        if library and draw(st.booleans()):
            helpers.append(imported(_helper(draw, name, array_shapes, in_library,
                                            conditions, scale=library_scale)))
        else:
            own.append(_helper(draw, name, array_shapes, helpers, conditions))
            helpers.append(own[-1])
    library = library and bool(in_library)
    derivatives = []
    for index, helper in enumerate(helpers):  # dcell = ad.grad(cell), for f to call
        if helper.returns == () and draw(st.integers(0, 2)) > 0:
            helpers[index] = dataclasses.replace(helper, derivative=f"d{helper.name}")
            derivatives.append(f"d{helper.name} = ad.grad({helper.called})")
    # f's parameters: the plain ones, the packing in the place of its first member, the group
    packed = set(packing.members) | {packing.int_name} if packing else set()
    signature, args, scope, top = [], [], [], []
    for p, s in order:
        if p not in packed:
            signature.append(p)
            args.append(values[p])
            scope.append(Variable(p, "int", (), MAX_INT, argument=True) if (p, s) in ints
                          else Variable(p, "array", () if s is None else s, ARGUMENT_BOUND,
                                        python=s is None, argument=True))
        elif packing.name not in signature:
            signature.append(packing.name)
            args.append(packing.value(values, group, group_value))
            variables, top = packing.scope(dict(floats), ARGUMENT_BOUND, MAX_INT)
            scope += variables
    if group is not None:
        text = f'{packing.name}["{group.name}"]' if group.inside else group.name
        if not group.inside:
            at = draw(st.integers(0, len(signature)))
            signature.insert(at, group.name)
            args.insert(at, group_value)
        scope.append(group.variable(text, ARGUMENT_BOUND))
    nested = None
    if draw(st.integers(0, 3)) == 0:  # a function defined in f, reading f's arguments
        closure = [v for v in scope if v.kind == "array"]
        for variable in closure:
            variable.frozen = True
        nested = dataclasses.replace(
            _helper(draw, "inner", array_shapes, helpers, conditions, closure), nested=True)
        helpers.append(nested)
    writer = Writer(draw, scope, helpers, conditions)
    writer.taken |= set(signature)
    for line in top:  # W = params["W"], W, b = pair
        writer.emit(line)
    if nested is not None:
        writer.lines += ["    " + line for line in nested.lines]
    for _ in range(0 if group is None else 2 if structured else draw(st.integers(0, 1))):
        writer.group_loop(writer.groups())  # loops over the group first
    for _ in range(draw(st.integers(2, 6))):
        writer.statement()
    if not any(line.startswith(("    for ", "    while ")) for line in writer.lines) and draw(
            st.integers(0, 5)) < 5:  # most programs have a loop
        writer.for_loop()
    result, weights_shape = writer.final()
    if library:
        result = f"SCALE * {result}" if " + " not in result else f"SCALE * ({result})"
    writer.emit(f"return {result}")
    weights = np.round(rng.uniform(0.5, 1.5, weights_shape), 2)
    body = [f"def f({', '.join(signature)}):", *writer.lines, ""]
    lines = ["import math", "", "import numpy as np", ""]
    written = [*body, *(line for h in own for line in h.lines),
               *(c.expression for c in conditions)]  # conditions are placeholders yet
    uses_ad = re.search(r"\bad\.", "\n".join(written)) or derivatives
    if uses_ad:
        lines += ["import autodiff as ad"]
    if library:
        lines += [f"import {LIBRARY} as lib" if qualified
                  else f"from {LIBRARY} import {', '.join(h.name for h in in_library)}"]
    lines += ["" if uses_ad or library else None, f"WEIGHTS = np.array({weights.tolist()!r})"]
    lines = [line for line in lines if line is not None]
    if library:
        lines += [f"SCALE = {main_scale}"]
    lines += ["", ""]
    template = _module(lines, own, ([*derivatives, "", ""] if derivatives else []) + body)
    library_template = _module(["import math", "", "import numpy as np", "",
                                "import autodiff as ad", "", f"SCALE = {library_scale}", "", ""],
                               in_library, []).rstrip("\n") + "\n" if library else ""
    _record(template, conditions, [ad.tree.map(
        lambda a: a.copy() if isinstance(a, np.ndarray) else a, arg) for arg in args],
        library_template)
    differentiable = tuple(i for i, p in enumerate(signature) if p not in {q for q, _ in ints})
    wrt = differentiable
    if len(differentiable) > 1 and draw(st.integers(0, 3)) == 0:
        wrt = tuple(sorted(draw(st.sets(st.sampled_from(differentiable), min_size=1))))
    source = _render(template, conditions, False)
    library_source = _render(library_template, conditions, False)
    name = ""
    if library:
        name = "random_library_" + hashlib.sha1(library_source.encode()).hexdigest()[:12]
        source = source.replace(LIBRARY, name)
    composition = draw(st.sampled_from([None, None, *COMPOSITIONS]))
    looping = "|".join(h.name for h in helpers if h.loops and not h.nested)
    if composition in ("vjp of jvp", "grad of value_and_grad") and looping and re.search(
            rf"ad\.grad\((lib\.)?({looping})\)|\bd({looping})\(", source + library_source):
        # reverse mode over the derivative of a helper that loops: refused, by design (f's
        # gradient is then forward mode over it, which grad of f2 cannot read)
        composition = "jvp of jvp"
    if composition == "grad of value_and_grad":
        params = ", ".join(signature)
        # the gradient of a structure: each of its float leaves, read by its path
        reads = [f"np.sum(np.sin({path}))" for path, leaf in ad.tree.paths(args[wrt[0]],
                                                                            "gradient")
                 if isinstance(leaf, (float, np.ndarray))]
        if "import autodiff as ad" not in source:
            source = source.replace("import numpy as np\n", "import numpy as np\n\n"
                                    "import autodiff as ad\n", 1)
        source += "\n".join([
            "", "", f"f_value_and_grad = ad.value_and_grad(f, wrt={wrt[0]})", "", "",
            f"def f2({params}):", f"    value, gradient = f_value_and_grad({params})",
            f"    return value + {' + '.join(reads)}", ""])
    return Program(source, signature, args, wrt, library_source, name, composition)
