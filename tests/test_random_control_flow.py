"""Random programs with control flow, differentiated and checked against finite differences.

Hypothesis draws a module: up to two helper functions and ``f``. The arguments
of ``f`` are small float64 arrays (``x`` always; ``W``, ``xs`` and ``y``
sometimes; 12 elements at most) and small ints (``n`` always, ``k`` sometimes,
0 to 3). ``f`` mixes NumPy arithmetic with if/elif/else, ``a if c else b``,
``for`` over ``range`` (constant or argument bounds, zero trips included,
nested, with at most 30 trips in all), counted ``while`` loops, ``while`` loops
on data, ``break``/``continue``/``return`` inside loops, calls to the helpers,
list append then ``np.stack``, and ``out[i] = ...`` into ``np.zeros`` arrays.

Central differences need a function that is smooth at the test point. Every
operation is smooth, every intermediate has a magnitude bound, and no branch
flips under a small step: a condition on ints does not see the step, and a
condition on data gets its threshold after the generator has run the program
at the test point, 0.5 away from the value it sees (a ``while`` on data adds at
least 0.4 a trip, so its threshold falls halfway between two of its values).

Each example checks every float argument's gradient against central
differences, the value from ``value_and_grad``, ``optimize=False`` against
``optimize=True``, that the inputs are left untouched, and that two modules
holding the same text compile to the same generated source.

CI runs 40 examples. For a long run, set ``AUTODIFF_FUZZ_EXAMPLES``::

    AUTODIFF_FUZZ_EXAMPLES=2000 python -m pytest -q tests/test_random_control_flow.py
"""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import autodiff as ad
from tests.helpers import UserModules, check_against_finite_differences

EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "40"))
BOUND = 10.0  # largest magnitude any float intermediate may reach
HELPER_ARGUMENT_BOUND = 2.0  # helpers are written for arguments this small
MAX_INT = 3  # int arguments take values 0..MAX_INT
MAX_INDEX = 5  # largest int any int variable (argument, index, counter) can hold
MAX_TRIPS = 30  # most runs of any loop body per call
DATA_WHILE_TRIPS = 4  # most trips of a while loop on data
MARGIN = 0.5  # distance of a condition on data from its threshold
# Temporaries use names users write and names the compiler also generates.
TEMP_NAMES = ["h", "u", "z", "g", "acc", "t1", "dx", "tmp", "p", "r", "val", "state", "s", "a",
              "q", "e", "score", "hidden", "feature", "mid"]
LIST_NAMES, BUFFER_NAMES = ["hs", "states", "ys"], ["out", "buf", "table"]
INDEX_NAMES, COUNTER_NAMES = ["i", "j", "step"], ["count", "it", "tries"]
TOTAL_NAMES = ["total", "level", "energy"]
HELPER_NAMES = ["cell", "mix"]

# (template, bound of the result given the operands' bounds)
UNARY = [
    ("np.tanh({a})", lambda a: min(a, 1.0)),
    ("np.sin({a})", lambda a: min(a, 1.0)),
    ("np.cos({a})", lambda a: 1.0),
    ("np.exp(0.3 * {a})", lambda a: math.exp(0.3 * a)),
    ("np.exp(np.tanh({a}))", lambda a: math.e),
    ("0.5 * {a}", lambda a: 0.5 * a),
    ("{a} ** 2", lambda a: a * a),
    ("-{a}", lambda a: a),
]
BINARY = [
    ("{a} + {b}", lambda a, b: a + b),
    ("{a} - {b}", lambda a, b: a + b),
    ("{a} * {b}", lambda a, b: a * b),
    ("{a} / (1.5 + np.sin({b}))", lambda a, b: 2 * a),
]
# (template, bound given the vector length and the operands' bounds)
REDUCTIONS = [
    ("np.sum({a})", lambda n, a, b: n * a),
    ("np.mean({a})", lambda n, a, b: a),
    ("np.sum({a} * {b})", lambda n, a, b: n * a * b),
    ("{a} @ {b}", lambda n, a, b: n * a * b),
    ("np.prod(1 + 0.5 * np.sin({a}))", lambda n, a, b: 1.5 ** n),
]
# Reading out a list after the loop that appends to it: (template, kind of the result)
LIST_READOUTS = {
    "vector": [("np.mean(np.stack({c}), axis=0)", "vector"), ("np.stack({c})[-1]", "vector"),
               ("np.mean(np.sin(np.stack({c})))", "scalar")],
    "scalar": [("np.mean(np.stack({c}))", "scalar"), ("np.stack({c})[0]", "scalar")],
}
# Reading out a zeros array after the loop that fills it: (template, kind, bound given rows)
BUFFER_READOUTS = {
    "scalar": [("np.sum({o})", "scalar", lambda m, n: m), ("{o} @ {o}", "scalar", lambda m, n: m),
               ("np.mean(np.sin({o}))", "scalar", lambda m, n: 1.0)],
    "vector": [("np.sum({o}, axis=0)", "vector", lambda m, n: m),
               ("np.mean({o}, axis=0)", "vector", lambda m, n: 1.0),
               ("np.sum(np.tanh({o}))", "scalar", lambda m, n: m * n)],
}


@dataclass(eq=False)
class Variable:
    """A name in the function being written, with a bound on its magnitude."""

    name: str
    kind: str  # "vector" (n,), "scalar", "matrix" (n, n), "rows" (rows, n), "int", "list"
    bound: float
    owner: int = 0  # the innermost loop around its assignment; other loops only carry it
    carried: int = 0  # how many loops being written update it: its bound is fixed meanwhile
    used: bool = False
    element: str = ""  # for a list: the kind of its elements
    argument: bool = False


@dataclass
class Helper:
    name: str
    params: list[str]  # their kinds
    returns: str
    lines: list[str]


@dataclass
class Condition:
    """A condition on data; its threshold is set once the program has run at the test point."""

    expression: str
    operator: str
    taken: bool = True  # for an if: whether the branch runs at the test point
    trips: int | None = None  # for a while: how many trips it makes at the test point
    values: list = field(default_factory=list)
    threshold: float = 0.0  # stays 0.0 where the test point never reaches the condition

    def decide(self, value) -> bool:
        self.values.append(float(value))
        return len(self.values) <= self.trips if self.trips is not None else self.taken

    def settle(self) -> None:
        v = self.values
        if self.trips is not None:  # 'while total < threshold' and total grows by 0.4 or more
            if len(v) > self.trips:
                self.threshold = v[0] - MARGIN if self.trips == 0 else (
                    v[self.trips - 1] + v[self.trips]) / 2
            elif v:  # a return inside the loop left it before its last test
                self.threshold = v[-1] + MARGIN
        elif v:
            above = (self.operator == ">") == self.taken
            self.threshold = v[0] - MARGIN if above else v[0] + MARGIN


@dataclass
class Program:
    """A generated module, the arguments of its ``f`` and which of them are floats."""

    source: str
    params: list[str]
    args: list
    wrt: tuple

    def arguments(self) -> list:
        return [a.copy() if isinstance(a, np.ndarray) else a for a in self.args]

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        values = [f"{p} = {a if isinstance(a, int) else f'np.array({a.tolist()!r})'}"
                  for p, a in zip(self.params, self.args)]
        return "\n".join(["", self.source, "# at", *values, f"# wrt={self.wrt}", ""])

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))


def _looseness(text: str) -> int:
    """How tightly ``text`` binds: 1 for a sum, 2 a product, 3 a negation, 4 a power, 5 atoms."""
    levels = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "**": 4}
    depth, level = 0, 5
    for i, character in enumerate(text):
        depth += (character in "([") - (character in ")]")
        if depth == 0 and character == " " and text[i + 1:].split(" ")[0] in levels:
            level = min(level, levels[text[i + 1:].split(" ")[0]])
    return min(level, 3) if text.startswith("-") else level


def _needs(template: str, name: str) -> int:
    """How tightly an operand must bind to sit in ``template``'s slot ``name`` as it is."""
    before, after = template.split("{" + name + "}")
    if after.startswith(" **"):
        return 5
    if before.endswith("-"):
        return 4 if not before.endswith(" - ") else 2
    if before.endswith(("* ", "/ ", "@ ")):
        return 3
    return 2 if after.startswith((" *", " /", " @")) else 0


def _fill(template: str, **operands: str) -> str:
    """``template`` with its slots filled, adding parentheses only where precedence needs them."""
    return template.format(**{name: text if _looseness(text) >= _needs(template, name)
                              else f"({text})" for name, text in operands.items()
                              if "{" + name + "}" in template})


class _Writer:
    """Writes one function's body, tracking what is in scope and how large it can be."""

    def __init__(self, draw, size: int, rows: int, scope: list[Variable], helpers: list[Helper],
                 conditions: list[Condition] | None, returns: str) -> None:
        self.draw, self.size, self.rows = draw, size, rows
        self.scope, self.helpers, self.returns = scope, helpers, returns
        self.conditions = conditions  # None: no conditions on data in this function
        self.lines: list[str] = []
        self.indent = 1
        self.loop, self.loop_depth, self.trips = 0, 0, 1
        self.loop_ids = itertools.count(1)
        self.taken = {v.name for v in scope} | {h.name for h in helpers}

    # ----- bookkeeping -----

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    @contextmanager
    def block(self, header: str):
        """An indented block; names it assigns first go out of scope at its end."""
        self.emit(header)
        saved, self.indent = list(self.scope), self.indent + 1
        yield
        self.scope, self.indent = saved, self.indent - 1

    @contextmanager
    def inside_loop(self, trips: int):
        saved = self.loop, self.loop_depth, self.trips
        self.loop, self.loop_depth = next(self.loop_ids), self.loop_depth + 1
        self.trips *= max(trips, 1)
        yield
        self.loop, self.loop_depth, self.trips = saved

    def of_kind(self, kind: str) -> list[Variable]:
        return [v for v in self.scope if v.kind == kind]

    def pick(self, variables: list[Variable]) -> Variable:
        """One of ``variables``, the most recent ones first."""
        variable = variables[-1 - self.draw(st.integers(0, len(variables) - 1))]
        variable.used = True
        return variable

    def new(self, kind: str, names: list[str] = TEMP_NAMES) -> Variable:
        free = [n for n in names if n not in self.taken]
        name = self.draw(st.sampled_from(free)) if free else f"v{len(self.taken)}"
        self.taken.add(name)
        return Variable(name, kind, 0.0, owner=self.loop)

    def bind(self, variable: Variable, bound: float) -> None:
        if variable in self.scope:
            self.scope.remove(variable)
            bound = max(bound, variable.bound)  # loops and branches: either value may be live
        variable.bound, variable.used = bound, False
        self.scope.append(variable)

    def target(self, kind: str, reads: str = "") -> Variable:
        """A new variable, or one this block may rebind (not one a loop carries).

        An argument is rebound only by an expression that ``reads`` it, so that
        most arguments reach the result.
        """
        own = [v for v in self.of_kind(kind) if v.owner == self.loop and not v.carried
               and (not v.argument or re.search(rf"\b{v.name}\b", reads))]
        if own and self.draw(st.integers(0, 2)) == 0:
            return self.draw(st.sampled_from(own))
        return self.new(kind)

    # ----- expressions -----

    def expression(self, kind: str, depth: int = 2) -> tuple[str, float]:
        text, bound = (self.vector if kind == "vector" else self.scalar)(depth)
        return (f"np.tanh({text})", 1.0) if bound > BOUND else (text, bound)

    def apply(self, table: list, *operands: tuple[str, float]) -> tuple[str, float]:
        bounds = [b for _, b in operands]
        fitting = [entry for entry in table if entry[1](*bounds) <= BOUND] or table
        template, bound = self.draw(st.sampled_from(fitting))
        texts = dict(zip("ab", (t for t, _ in operands)))
        return _fill(template, **texts), bound(*bounds)

    def vector(self, depth: int) -> tuple[str, float]:
        forms = ["atom"]
        if depth:
            forms += ["unary", "unary", "binary", "binary", "scale"]
            forms += ["matmul", "matmul"] if self.of_kind("matrix") else []
            forms += ["call"] if self.callable("vector") else []
        form = self.draw(st.sampled_from(forms))
        if form == "atom":
            return self.vector_atom()
        if form == "unary":
            return self.apply(UNARY, self.expression("vector", depth - 1))
        if form == "binary":
            return self.apply(BINARY, *(self.expression("vector", depth - 1) for _ in "ab"))
        if form == "scale":
            text, bound = self.expression("vector", depth - 1)
            ints = [v for v in self.of_kind("int") if v.bound <= MAX_INDEX]
            if ints and self.draw(st.booleans()):
                return _fill("0.2 * {i} * {a}", i=self.pick(ints).name, a=text), bound
            factor, factor_bound = self.expression("scalar", depth - 1)
            return _fill("{a} * {b}", a=factor, b=text), factor_bound * bound
        if form == "matmul":
            matrix, (text, bound) = self.pick(self.of_kind("matrix")), self.expression(
                "vector", depth - 1)
            template = self.draw(st.sampled_from(["{m} @ {a}", "{a} @ {m}"]))
            return _fill(template, m=matrix.name, a=text), matrix.bound * self.size * bound
        return self.call("vector")

    def vector_atom(self) -> tuple[str, float]:
        tables = self.of_kind("rows")
        indices = [v for v in self.of_kind("int") if v.bound < self.rows]
        if tables and indices and self.draw(st.booleans()):
            table = self.pick(tables)
            return f"{table.name}[{self.pick(indices).name}]", table.bound
        vector = self.pick(self.of_kind("vector"))
        return vector.name, vector.bound

    def scalar(self, depth: int) -> tuple[str, float]:
        forms = ["reduce", "reduce"] + ["atom", "atom"] * bool(self.of_kind("scalar"))
        forms += ["unary", "binary"] if depth else []
        forms += ["table"] if self.of_kind("rows") or self.of_kind("matrix") else []
        forms += ["call"] if depth and self.callable("scalar") else []
        form = self.draw(st.sampled_from(forms))
        inner = max(depth - 1, 0)
        if form == "atom":
            variable = self.pick(self.of_kind("scalar"))
            return variable.name, variable.bound
        if form == "unary":
            return self.apply(UNARY, self.expression("scalar", inner))
        if form == "binary":
            return self.apply(BINARY[:3], *(self.expression("scalar", inner) for _ in "ab"))
        if form == "reduce":
            operands = [self.expression("vector", inner) for _ in "ab"]
            table = [(t, lambda a, b, f=f: f(self.size, a, b)) for t, f in REDUCTIONS]
            return self.apply(table, *operands)
        if form == "table":
            table = self.pick(self.of_kind("rows") + self.of_kind("matrix"))
            text, bound = self.expression("vector", inner)
            choices = [(_fill("np.mean({t} @ {a})", t=table.name, a=text),
                        self.size * table.bound * bound),
                       (f"np.mean(np.sin({table.name}))", 1.0)]
            return self.draw(st.sampled_from(choices))
        return self.call("scalar")

    def callable(self, kind: str) -> list[Helper]:
        return [h for h in self.helpers if h.returns == kind
                and ("matrix" not in h.params or self.of_kind("matrix"))]

    def call(self, kind: str) -> tuple[str, float]:
        helper = self.draw(st.sampled_from(self.callable(kind)))
        arguments = []
        for param in helper.params:
            if param in ("vector", "scalar"):
                text, bound = self.expression(param, 1)
                arguments.append(text if bound <= HELPER_ARGUMENT_BOUND else f"np.tanh({text})")
            elif param == "matrix":
                arguments.append(self.pick(self.of_kind("matrix")).name)
            else:
                ints = [v.name for v in self.of_kind("int") if v.bound <= MAX_INDEX]
                arguments.append(self.draw(st.sampled_from(ints + ["1", "2"])))
        return f"{helper.name}({', '.join(arguments)})", 1.0

    def int_condition(self) -> str:
        ints = self.of_kind("int")
        left = self.pick(ints)
        right = self.draw(st.sampled_from(["0", "1", "2", "3"] + [v.name for v in ints
                                                                 if v is not left]))
        operator = self.draw(st.sampled_from(["==", "<", ">", ">=", "!="]))
        if self.draw(st.integers(0, 4)) == 0:  # looks like a condition on data, but is not
            return f"np.sum({self.pick(self.of_kind('vector')).name} * 0) + {left.name} " \
                   f"{operator} {right}"
        return f"{left.name} {operator} {right}"

    def condition(self) -> str | None:
        """A condition on ints, or on data where it runs at most once per call."""
        on_data = self.conditions is not None and self.loop_depth == 0
        if on_data and (not self.of_kind("int") or self.draw(st.integers(0, 2)) == 0):
            text, _ = self.expression("scalar", 1)
            operator = self.draw(st.sampled_from([">", "<"]))
            self.conditions.append(Condition(text, operator, taken=self.draw(st.booleans())))
            return f"@@{len(self.conditions) - 1}@@"
        return self.int_condition() if self.of_kind("int") else None

    def result(self) -> str:
        text, _ = self.expression(self.returns)
        return text if self.conditions is not None else f"np.tanh({text})"

    # ----- statements -----

    def statement(self, nested: bool = False) -> None:
        kinds = ["assign", "assign", "branch", "branch", "ternary"]
        if self.loop_depth == 0 and self.indent <= 2:
            kinds += ["for", "for", "for", "while"]
            kinds += ["data_while"] if self.conditions is not None else []
        if not nested and self.loop_depth == 0 and self.of_kind("int"):
            kinds.append("return")
        statements = {"assign": self.assign, "branch": self.branch, "ternary": self.ternary,
                      "for": self.for_loop, "while": self.counted_while,
                      "data_while": self.data_while, "return": self.early_return}
        statements[self.draw(st.sampled_from(kinds))]()

    def assign(self) -> None:
        kind = self.draw(st.sampled_from(["vector", "scalar"]))
        text, bound = self.expression(kind)
        target = self.target(kind, reads=text)
        self.emit(f"{target.name} = {text}")
        self.bind(target, bound)

    def ternary(self) -> None:
        condition = self.condition()
        if condition is None:
            return self.assign()
        kind = self.draw(st.sampled_from(["vector", "scalar"]))
        (yes, yes_bound), (no, no_bound) = (self.expression(kind, 1) for _ in "ab")
        target = self.target(kind, reads=f"{yes} {no}")
        self.emit(f"{target.name} = {yes} if {condition} else {no}")
        self.bind(target, max(yes_bound, no_bound))

    def branch(self) -> None:
        kind = self.draw(st.sampled_from(["vector", "scalar"]))
        target = self.target(kind)
        has_else = target not in self.scope or self.draw(st.booleans())
        conditions = [self.condition()]
        if conditions[0] is None:
            return self.assign()
        if "@@" not in conditions[0]:
            conditions += [self.int_condition() for _ in range(self.draw(st.integers(0, 1)))]
        headers = [f"{'el' * (i > 0)}if {c}:" for i, c in enumerate(conditions)]
        bounds = []
        for header in headers + ["else:"] * has_else:
            with self.block(header):
                if self.indent <= 3 and self.draw(st.integers(0, 3)) == 0:
                    self.statement(nested=True)
                text, bound = self.expression(kind)
                self.emit(f"{target.name} = {text}")
                bounds.append(bound)
        self.bind(target, max(bounds))

    def jump(self) -> None:
        with self.block(f"if {self.int_condition()}:"):
            word = self.draw(st.sampled_from(["break", "continue", "return"]))
            self.emit(f"return {self.result()}" if word == "return" else word)

    def early_return(self) -> None:
        with self.block(f"if {self.int_condition()}:"):
            self.emit(f"return {self.result()}")

    # ----- loops -----

    def for_loop(self) -> None:
        budget = MAX_TRIPS // self.trips
        ints = [v for v in self.of_kind("int") if v.bound <= min(budget, MAX_INDEX)]
        form = self.draw(st.sampled_from(["constant", "start", "int", "int"] if ints
                                         else ["constant", "start"]))
        if form == "int":
            limit = self.pick(ints)
            arguments, trips, least, last = limit.name, int(limit.bound), 0, limit.bound - 1
        elif form == "start":
            stop = self.draw(st.integers(2, min(5, budget + 1)))
            arguments, trips, least, last = f"1, {stop}", stop - 1, stop - 1, stop - 1
        else:
            stop = self.draw(st.integers(0, min(5, budget)))
            arguments, trips, least, last = str(stop), stop, stop, stop - 1
        name = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
        index = Variable(name, "int", max(last, 0), owner=-1)
        self.loop_statement(f"for {name} in range({arguments}):", trips, least,
                            index=index, fill_at=(name, max(last + 1, 1)))

    def counted_while(self) -> None:
        budget = min(MAX_TRIPS // self.trips, MAX_INDEX)
        ints = [v for v in self.of_kind("int") if v.bound <= budget]
        if ints and self.draw(st.booleans()):
            limit = self.pick(ints)
            text, trips, least = limit.name, int(limit.bound), 0
        else:
            trips = least = self.draw(st.integers(1, min(4, budget)))
            text = str(trips)
        counter = self.new("int", COUNTER_NAMES)
        self.emit(f"{counter.name} = 0")
        self.bind(counter, trips)
        self.loop_statement(f"while {counter.name} < {text}:", trips, least,
                            fill_at=(f"{counter.name} - 1", max(trips, 1)),
                            first=f"{counter.name} = {counter.name} + 1")

    def data_while(self) -> None:
        total = self.new("scalar", TOTAL_NAMES)
        text, bound = self.expression("scalar", 1)
        self.emit(f"{total.name} = {text}")
        self.bind(total, bound + 0.6 * DATA_WHILE_TRIPS)
        step, _ = self.expression("scalar", 1)
        trips = self.draw(st.integers(0, DATA_WHILE_TRIPS))
        self.conditions.append(Condition(total.name, "<", trips=trips))
        self.loop_statement(f"while @@{len(self.conditions) - 1}@@:", DATA_WHILE_TRIPS, 0,
                            first=f"{total.name} = {total.name} + 0.5 + 0.1 * np.tanh({step})",
                            jumps=False, exclude=[total])

    def loop_statement(self, header: str, trips: int, least: int, *, index=None, fill_at=None,
                       first=None, jumps: bool = True, exclude=()) -> None:
        """A loop whose body updates the variables it carries, within their bounds."""
        carried = self.choose_carried(trips, exclude)
        extras = ["append", "branch"] + ["fill"] * bool(fill_at) + ["jump"] * jumps
        extras += ["nested"] if self.loop_depth == 0 and MAX_TRIPS // (
            self.trips * max(trips, 1)) >= 1 else []
        extras = self.draw(st.lists(st.sampled_from(extras), unique=True, max_size=3))
        temps = ["temp"] * self.draw(st.integers(0, 2))
        actions = self.draw(st.permutations(["update"] * len(carried) + temps + extras))
        collection = self.new_list(empty=least > 0 and "jump" not in actions) \
            if "append" in actions else None
        buffer = self.new_buffer(fill_at[1]) if "fill" in actions else None
        updates = iter(carried)
        with self.block(header), self.inside_loop(trips):
            self.scope += [index] if index else []
            if first:
                self.emit(first)
            for action in actions:
                self.loop_action(action, updates, collection, buffer, fill_at)
        for variable, _ in carried:
            variable.carried -= 1
            variable.used = False
        if collection:
            self.read_out(collection.name, LIST_READOUTS[collection.element], collection.bound)
        if buffer:
            self.read_out(buffer.name, BUFFER_READOUTS[buffer.element], buffer.bound)

    def loop_action(self, action, updates, collection, buffer, fill_at) -> None:
        if action == "update":
            variable, form = next(updates)
            if self.of_kind("int") and self.draw(st.integers(0, 3)) == 0:
                with self.block(f"if {self.int_condition()}:"):
                    self.update(variable, form)
            else:
                self.update(variable, form)
        elif action == "temp":
            self.assign()
        elif action == "branch":
            self.draw(st.sampled_from([self.branch, self.ternary]))()
        elif action == "jump":
            self.jump()
        elif action == "nested":
            self.draw(st.sampled_from([self.for_loop, self.for_loop, self.counted_while]))()
        elif action == "append":
            text, bound = self.expression(collection.element)
            collection.bound = max(collection.bound, bound)
            self.emit(f"{collection.name}.append({text})")
        else:
            text, _ = self.expression(buffer.element)
            function = self.draw(st.sampled_from(["np.sin", "np.tanh"]))
            self.emit(f"{buffer.name}[{fill_at[0]}] = {function}({text})")

    def choose_carried(self, trips: int, exclude) -> list[tuple[Variable, tuple]]:
        """Variables the loop will update, each with a form of update that keeps it bounded.

        A variable another loop is carrying may only be updated in a way that
        does not raise its bound, which that loop has already fixed.
        """
        candidates = [v for v in self.scope if v.kind in ("vector", "scalar")
                      and v not in exclude and (v.carried or v.owner == self.loop)]
        carried = []
        for _ in range(self.draw(st.integers(1, 2))):
            if candidates and self.draw(st.integers(0, 2)) > 0:
                variable = self.draw(st.sampled_from(candidates))
                candidates.remove(variable)
            else:
                variable = self.new_accumulator()
            forms = [("mul", variable.bound)]
            if not variable.carried or variable.bound >= 1:
                forms += [(f, max(variable.bound, 1.0)) for f in ("squash", "squash", "mix")]
            if not variable.carried:
                forms += [(("add", c), variable.bound + trips * c) for c in (0.5, 0.2, 0.1)
                          if variable.bound + trips * c <= BOUND]
            form, bound = self.draw(st.sampled_from(forms))
            variable.bound, variable.carried = bound, variable.carried + 1
            carried.append((variable, form))
        return carried

    def new_accumulator(self) -> Variable:
        kind = self.draw(st.sampled_from(["vector", "scalar"]))
        variable = self.new(kind)
        starts = [(f"np.zeros({self.size})", 0.0)] if kind == "vector" else [("0.0", 0.0)]
        text, bound = self.draw(st.sampled_from(starts + [self.expression(kind, 1)]))
        self.emit(f"{variable.name} = {text}")
        self.bind(variable, bound)
        return variable

    def update(self, variable: Variable, form) -> None:
        v, kind = variable.name, variable.kind
        tables = self.of_kind("rows") if kind == "vector" else []
        indices = [i for i in self.of_kind("int") if i.bound < self.rows]
        if form == "squash" and tables and indices and self.draw(st.booleans()):
            text = f"{self.pick(tables).name}[{self.pick(indices).name}]"  # an RNN step
        else:
            text, _ = self.expression(kind)
        if form == "squash":
            own = [v, f"0.5 * {v}"] + [f"{m.name} @ {v}" for m in self.of_kind("matrix")
                                      if kind == "vector"]
            text = _fill("np.tanh({a} + {b})", a=self.draw(st.sampled_from(own)), b=text)
        elif form == "mix":
            text = f"0.5 * {v} + 0.5 * np.sin({text})"
        elif form == "mul":
            text = f"{v} * np.cos({text})"
        else:
            function = self.draw(st.sampled_from(["np.tanh", "np.sin"]))
            text = f"{v} + {form[1]} * {function}({text})"
        self.emit(f"{v} = {text}")
        variable.used = False

    def new_list(self, empty: bool) -> Variable:
        collection = self.new("list", LIST_NAMES)
        collection.element = self.draw(st.sampled_from(["vector", "vector", "scalar"]))
        if empty:  # the loop runs and appends at least once
            self.emit(f"{collection.name} = []")
        else:
            text, collection.bound = self.expression(collection.element, 1)
            self.emit(f"{collection.name} = [{text}]")
        return collection

    def new_buffer(self, length: int) -> Variable:
        buffer = self.new("list", BUFFER_NAMES)
        buffer.element = self.draw(st.sampled_from(["vector", "scalar"]))
        shape = str(length) if buffer.element == "scalar" else f"({length}, {self.size})"
        self.emit(f"{buffer.name} = np.zeros({shape})")
        buffer.bound = length  # the rows it has; each entry is at most 1
        return buffer

    def read_out(self, name: str, readouts: list, bound: float) -> None:
        template, kind, *rule = self.draw(st.sampled_from(readouts))
        bound = rule[0](bound, self.size) if rule else bound
        target = self.new(kind)
        text = template.format(c=name, o=name)
        self.emit(f"{target.name} = {text if bound <= BOUND else f'np.tanh({text})'}")
        self.bind(target, min(bound, BOUND))

    def final(self) -> str:
        """The returned scalar: the last vector, plus every value nothing has read."""
        last = self.of_kind("vector")[-1]
        terms = [f"np.sum(WEIGHTS * {last.name})"]
        for v in self.scope:
            if not v.used and v is not last and v.kind in ("vector", "matrix", "rows"):
                terms.append(f"np.mean({v.name})")
            elif not v.used and v.kind == "scalar":
                terms.append(v.name)
        return " + ".join(terms)


def _helper(draw, size: int, rows: int, name: str, helpers: list[Helper],
            has_matrix: bool) -> Helper:
    extra = draw(st.sampled_from([[], ["vector"], ["scalar"], ["int"], ["vector", "int"]]
                                 + [["matrix"]] * has_matrix))
    names = {"vector": "v", "scalar": "c", "int": "m", "matrix": "A"}
    bounds = {"vector": HELPER_ARGUMENT_BOUND, "scalar": HELPER_ARGUMENT_BOUND,
              "int": MAX_INDEX, "matrix": 1.0}
    scope = [Variable("h", "vector", HELPER_ARGUMENT_BOUND, argument=True)]
    scope += [Variable(names[kind], kind, bounds[kind], argument=True) for kind in extra]
    returns = draw(st.sampled_from(["vector", "vector", "scalar"]))
    writer = _Writer(draw, size, rows, list(scope), list(helpers), None, returns)
    for _ in range(draw(st.integers(0, 2))):
        writer.statement()
    writer.emit(f"return {writer.result()}")
    header = f"def {name}({', '.join(v.name for v in scope)}):"
    return Helper(name, ["vector", *extra], returns, [header, *writer.lines])


def _render(template: str, conditions: list[Condition], recording: bool) -> str:
    for i, c in enumerate(conditions):
        text = (f"_decide({i}, {c.expression})" if recording
                else f"{c.expression} {c.operator} {c.threshold:.3f}")
        template = template.replace(f"@@{i}@@", text)
    return template


def _set_thresholds(template: str, conditions: list[Condition], args: list) -> None:
    """Run the program at the test point, letting each condition on data take its drawn way."""
    if conditions:
        namespace = {"_decide": lambda i, value: conditions[i].decide(value)}
        exec(compile(_render(template, conditions, True), "<recording>", "exec"), namespace)  # noqa: S102
        namespace["f"](*args)
        for condition in conditions:
            condition.settle()


@st.composite
def programs(draw) -> Program:
    size = draw(st.sampled_from([2, 3]))
    rows = draw(st.integers(3, 12 // size))
    floats = [("x", "vector")] + [p for p in [("W", "matrix"), ("xs", "rows"), ("y", "vector")]
                                  if draw(st.booleans())]
    params = draw(st.permutations(floats + [("n", "int")] + [("k", "int")] * draw(st.booleans())))
    ints = {name: draw(st.integers(0, MAX_INT)) for name, kind in params if kind == "int"}
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    shapes = {"vector": (size,), "matrix": (size, size), "rows": (rows, size)}
    args = [ints[name] if kind == "int" else rng.uniform(-1, 1, shapes[kind])
            for name, kind in params]
    helpers: list[Helper] = []
    for name in HELPER_NAMES[:draw(st.integers(0, 2))]:
        helpers.append(_helper(draw, size, rows, name, helpers, ("W", "matrix") in params))
    scope = [Variable(name, kind, MAX_INT if kind == "int" else 1.0, argument=True)
             for name, kind in params]
    conditions: list[Condition] = []
    writer = _Writer(draw, size, rows, scope, helpers, conditions, "scalar")
    for _ in range(draw(st.integers(2, 6))):
        writer.statement()
    writer.emit(f"return {writer.final()}")
    weights = np.round(rng.uniform(0.5, 1.5, size), 2).tolist()
    lines = ["import numpy as np", "", f"WEIGHTS = np.array({weights!r})", "", ""]
    for helper in helpers:
        lines += [*helper.lines, "", ""]
    lines += [f"def f({', '.join(name for name, _ in params)}):", *writer.lines, ""]
    template = "\n".join(lines)
    _set_thresholds(template, conditions, [a.copy() if isinstance(a, np.ndarray) else a
                                           for a in args])
    wrt = tuple(i for i, (_, kind) in enumerate(params) if kind != "int")
    return Program(_render(template, conditions, False), [n for n, _ in params], args, wrt)


def _loop_nesting(source: str) -> int:
    """How deep for/while loops nest in ``source``."""
    deepest, open_loops = 0, []
    for line in source.splitlines():
        indent = len(line) - len(line.lstrip())
        while open_loops and line.strip() and indent <= open_loops[-1]:
            open_loops.pop()
        if re.match(r"\s*(for|while) ", line):
            open_loops.append(indent)
            deepest = max(deepest, len(open_loops))
    return deepest


def test_generator_reaches_every_construct():
    # The generator itself: a sample of programs uses every construct it can write.
    sources = []

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(programs())
    def collect(program):
        sources.append(program.source)

    collect()
    text = "\n".join(sources)
    patterns = [r"for i in range\(0\)", r"for \w+ in range\([nk]\)", r"range\(1, \d\)",
                r"while \w+ < [nk\d]:", r"while \w+ < -?\d+\.\d{3}:", r"if .* [<>] -?\d+\.\d{3}:",
                r"\n {12,}break", r"\n {12,}continue", r"\n {12,}return ", r"\n {8}return ",
                r"elif ", r"= .+ if .+ else ", r"np\.sum\(\w+ \* 0\) \+ ", r"\.append\(",
                r"np\.stack\(", r"\w+\[\w+( - 1)?\] = ", r"np\.zeros\(\(", r"\w+ @ \w+",
                r"np\.exp\(", r"xs\[\w+\]", r"def cell\(h, m\)", r"(?<!def )mix\(", r"dx = "]
    for pattern in patterns:
        assert re.search(pattern, text), pattern
    assert max(_loop_nesting(s) for s in sources) >= 2


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("random_control_flow"))


_module_ids = itertools.count()


# One failure is shrunk, not each distinct one: every run compiles four derivatives.
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=programs())
def test_random_control_flow_gradients_match_finite_differences(modules, program):
    names = [f"control_flow_{next(_module_ids)}_{copy}" for copy in "ab"]
    first, second = (modules(program.source, name) for name in names)
    value = first.f(*program.arguments())
    assume(np.all(np.isfinite(value)))
    try:
        _check(program, first, second, names, value)
    except Exception as error:
        error.add_note(f"the program:{program!r}")
        raise


def _check(program: Program, first, second, names: list[str], expected) -> None:
    wrt, args = program.wrt, program.arguments()
    computed, _ = ad.value_and_grad(first.f, wrt=wrt)(*args)
    np.testing.assert_allclose(computed, expected, rtol=1e-12, atol=1e-12,
                               err_msg="value_and_grad's value")
    ours = check_against_finite_differences(first.f, args, wrt=wrt, rtol=1e-5, atol=1e-6)
    plain = ad.grad(first.f, wrt=wrt, optimize=False)(*args)
    for position, optimized, unoptimized in zip(wrt, ours, plain):
        np.testing.assert_allclose(unoptimized, optimized, rtol=1e-9, atol=1e-12,
                                   err_msg=f"optimize=False, argument {position}")
    for arg, original in zip(args, program.args):
        np.testing.assert_array_equal(arg, original, err_msg="an input was changed")
    texts = [ad.grad(module.f, wrt=wrt).source.replace(name, "<module>")
             for module, name in zip((first, second), names)]
    assert texts[0] == texts[1], "the same source compiled twice to different code:\n" + "\n".join(
        difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(), lineterm=""))
