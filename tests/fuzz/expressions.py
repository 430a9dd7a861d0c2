"""Writing expressions of a given shape over the variables in scope, each with a magnitude bound."""

from __future__ import annotations

import functools
import math
import random
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from hypothesis import strategies as st

from tests.fuzz import tables
from tests.fuzz.shapes import Form, broadcast, producers, reachable
from tests.fuzz.tables import BOUND
from tests.fuzz.text import fill

HELPER_ARGUMENT_BOUND = 2.0  # helpers are written for arguments this small
MAX_INDEX = 5  # largest int any int variable (argument, index, counter) can hold
# Weights of the families of expressions (repeated entries are drawn more often).
FAMILIES = {"atom": 5, "unary": 2, "binary": 3, "reduce": 2, "index": 2, "view": 2, "fancy": 1,
            "difference": 1, "copy": 1, "reshape": 1, "broadcast": 1, "matmul": 2, "stack": 1,
            "call": 3, "comprehension": 1, "scale": 1, "nested": 1, "derivative": 4,
            "element": 3}


@dataclass(eq=False)
class Variable:
    """A name in the function being written, with what the generator knows of its value."""

    name: str
    kind: str  # "array" (a float of any shape, () included), "int", "list", "group" (an
    # argument holding equal arrays: a list, a tuple, a dict, or a list of pairs) or "setting"
    # (a string or None in a dict argument)
    shape: tuple = ()  # an array's shape, a list's or a group's elements' shape
    bound: float = 0.0
    python: bool = False  # may hold a Python float: no methods
    owner: int = 0  # the innermost loop around its assignment; other loops only carry it
    carried: int = 0  # how many loops being written update it: its bound is fixed meanwhile
    used: bool = False
    argument: bool = False
    fresh: bool = False  # the only name of an array the function made: may be updated in place
    pinned: bool = False  # updated in place in an open loop: nothing may share its memory
    axis: int = 0  # a buffer: 0 if the loop writes its rows, -1 its columns
    adds: bool = False  # a buffer: the loop may add to its entries (out[i] += ...)
    frozen: bool = False  # read by a nested function, or a read of a structure: never rebound
    container: str = ""  # a group: "list", "tuple", "dict" or "layers" (a list of pairs)
    length: int = 0  # a group: how many elements
    parts: tuple = ()  # a group of "layers": the shapes of each pair's two arrays
    keys: tuple = ()  # a group that is a dict: its keys
    setting: str = ""  # a setting: "act" (a string) or "bias" (None)

    @property
    def rows(self) -> tuple[int, tuple, str] | None:
        """What a loop over it runs over: (trips, the shape of an element, what to write
        after 'in'); None if the generator does not loop over it this way."""
        if self.kind == "array" and self.shape:
            return self.shape[0], self.shape[1:], self.name
        if self.kind == "group" and self.container != "layers":
            return self.length, self.shape, self.name + ".values()" * (self.container == "dict")
        return None


class Term(NamedTuple):
    """An expression: its text, a bound on its magnitude, and what it may share memory with."""

    text: str
    bound: float
    python: bool = False  # a Python float when its operands are
    aliases: tuple = ()  # variables whose memory the value may be (a view, the variable itself)
    fresh: bool = True  # a new, writable array (or an immutable scalar)


@dataclass
class Helper:
    name: str
    params: list  # (name, shape) with shape None for an int, "default" for a keyword default
    returns: tuple
    bound: float
    lines: list = field(default_factory=list)
    call: str = ""  # what calls write (``lib.cell``), if not the name
    derivative: str = ""  # the name of its gradient made at module level (``dcell``), if any
    nested: bool = False  # defined in ``f``

    @property
    def called(self) -> str:
        return self.call or self.name

    @property
    def loops(self) -> bool:
        return any(re.search(r"\b(for|while)\b", line) for line in self.lines)


@functools.cache
def _below(count: int):
    """The strategy of an index into ``count`` options (built once: drawing is most of the
    generator's time)."""
    return st.integers(0, count - 1)


def constant(text: str, bound: float) -> Term:
    return Term(text, bound, python=True)


class Expressions:
    """Writes expressions over ``scope``; ``draw`` is hypothesis' draw function."""

    def __init__(self, draw, scope: list[Variable], helpers: list[Helper]) -> None:
        self.draw, self.scope, self.helpers = draw, scope, helpers
        self.random: random.Random | None = None  # while writing one expression
        self.comprehensions = 0  # how many comprehensions are open

    # ----- the scope -----

    def arrays(self, shape: tuple | None = None) -> list[Variable]:
        return [v for v in self.scope if v.kind == "array" and (shape is None or v.shape == shape)]

    def ints(self, below: int | None = None) -> list[Variable]:
        """Int variables, those whose values stay under ``below`` if given."""
        return [v for v in self.scope if v.kind == "int" and v.bound <= MAX_INDEX
                and (below is None or v.bound < below)]

    def groups(self) -> list[Variable]:
        return [v for v in self.scope if v.kind == "group"]

    def shapes(self) -> frozenset:
        return frozenset(v.shape for v in self.arrays())

    def pick(self, variables: list[Variable]) -> Variable:
        """One of ``variables``, the most recent ones first."""
        variable = variables[-1 - self.integer(0, len(variables) - 1)]
        variable.used = True
        return variable

    def choose(self, options: list):
        return options[self.integer(0, len(options) - 1)]

    def integer(self, low: int, high: int) -> int:
        """A choice: hypothesis' for statements, and within an expression its own generator's
        (one draw per expression rather than one per choice: drawing dominates the time)."""
        if self.random is not None:
            return self.random.randint(low, high)
        return self.draw(_below(high - low + 1)) + low

    def chance(self, odds: int) -> bool:
        """True once in ``odds``."""
        return self.integer(0, odds - 1) == 0

    # ----- expressions -----

    def expression(self, shape: tuple, depth: int = 2) -> Term:
        """An expression of ``shape``, squashed by tanh where its bound is too large."""
        if self.random is None:
            self.random = random.Random(self.draw(st.integers(0, 2 ** 32 - 1)))
            try:
                return self.expression(shape, depth)
            finally:
                self.random = None
        term = self.unbounded(shape, depth)
        if term.bound > BOUND:
            return Term(f"np.tanh({term.text})", 1.0)
        return term

    def unbounded(self, shape: tuple, depth: int) -> Term:
        families = self.families(shape, depth)
        if not families:  # nothing of this shape in scope: one more level makes it
            depth = max(depth, 1) + 1
            families = self.families(shape, depth)
        family = self.choose([f for f, forms in families.items() for _ in range(FAMILIES[f])])
        forms = families[family]
        if family == "atom":
            variable = self.pick(forms)
            return Term(variable.name, variable.bound, variable.python, (variable,), False)
        if family == "element":
            group, text = self.choose(forms)
            group.used = True
            return Term(text, group.bound, group.python and not text.startswith("np."), (),
                        False)
        if family == "unary":
            return self.unary(shape, depth)
        if family == "scale":
            term = self.expression(shape, depth - 1)
            return Term(fill("0.2 * {i} * {a}", i=self.pick(self.ints()).name, a=term.text),
                        term.bound * 0.2 * MAX_INDEX)
        if family == "call":
            return self.call(self.choose(forms), depth)
        if family == "derivative":
            return self.derivative(self.choose(forms), depth)
        if family == "nested":
            return self.nested_list(shape, depth)
        if family == "comprehension":
            return self.comprehension(shape, self.choose(forms), depth)
        return self.form(self.choose(forms), depth)

    def families(self, shape: tuple, depth: int) -> dict[str, list]:
        """The families that can make ``shape`` at ``depth``, each with its candidates."""
        families: dict[str, list] = {}
        atoms = self.arrays(shape)
        if atoms:
            families["atom"] = atoms
        elements = [(group, text) for group in self.groups()
                    for text in self.elements(group, shape)]
        if elements:
            families["element"] = elements
        if depth <= 0:
            return families
        scope = self.shapes()
        if shape in reachable(scope, depth - 1):
            families["unary"] = [None]
            if self.ints():
                families["scale"] = [None]
        for form in producers(scope, depth, shape):
            families.setdefault(form.family, []).append(form)
        below = reachable(scope, depth - 1)
        calls = [h for h in self.helpers if h.returns == shape
                 and all(s in below for _, s in h.params if isinstance(s, tuple))]
        if calls:
            families["call"] = calls
        # ad.grad of a scalar helper, called in f: the gradient has its first parameter's shape
        # (not of a function nested in f: the compiler refuses to build a derivative of what
        # exists only at run time)
        differentiable = [h for h in self.helpers if h.returns == () and not h.nested
                          and h.params[0][1] == shape
                          and all(s in below for _, s in h.params if isinstance(s, tuple))]
        if differentiable:
            families["derivative"] = differentiable
        if len(shape) == 2 and 2 <= shape[0] <= 3 and 2 <= shape[1] <= 3 and () in below \
                and self.chance(2):
            families["nested"] = [None]
        rows = [v for v in self.arrays() + self.groups() if v.rows and v.rows[0] <= 4
                and shape in ((v.rows[0], *v.rows[1]), v.rows[1], (v.rows[0],))]
        if rows and self.comprehensions < 2:
            families["comprehension"] = rows
        return families

    @staticmethod
    def elements(group: Variable, shape: tuple) -> list[str]:
        """Reads of ``shape`` from a group: an element by a constant index or key
        (``xs[0]``, ``xs[-1]``, ``ws["a"]``, ``layers[1][0]``), or all of them stacked."""
        if group.container == "layers":
            return [f"{group.name}[{i}][{p}]" for p, part in enumerate(group.parts)
                    if part == shape for i in (*range(group.length), -1)]
        if group.container == "dict":
            return [f'{group.name}["{key}"]' for key in group.keys] if group.shape == shape \
                else []
        texts = [f"{group.name}[{i}]" for i in (*range(group.length), -1)] \
            if group.shape == shape else []
        if shape == (group.length, *group.shape):
            texts += [f"np.stack({group.name})", f"np.array({group.name})"]
        return texts

    def unary(self, shape: tuple, depth: int) -> Term:
        term = self.expression(shape, depth - 1)
        table = tables.UNARY + (tables.SCALAR_UNARY if shape == () else [])
        fitting = [entry for entry in table if entry[1](term.bound) <= BOUND]
        template, bound, keeps = self.choose(fitting)
        python = term.python and keeps or template.startswith(("math.", "abs("))
        return Term(fill(template, a=term.text), bound(term.bound), python)

    def operand(self, shape: tuple, depth: int) -> Term:
        if shape == () and self.chance(5):
            return constant(*self.choose(tables.CONSTANTS))
        return self.expression(shape, depth)

    def form(self, form: Form, depth: int) -> Term:
        family = form.family
        if family == "binary":
            a, b = (self.operand(shape, depth - 1) for shape in form.operands)
            table = tables.BINARY + (tables.SCALAR_BINARY if not any(form.operands) else [])
            fitting = [e for e in table if e[1](a.bound, b.bound) <= BOUND
                       and (a.text != b.text or "max" not in e[0] and "min" not in e[0]
                            and "where" not in e[0])] or table[:1]
            template, bound, keeps = self.choose(fitting)
            aliases = a.aliases + b.aliases if template.startswith(("max(", "min(")) else ()
            return Term(fill(template, a=a.text, b=b.text), bound(a.bound, b.bound),
                        a.python and b.python and keeps, aliases, not aliases)
        if family == "matmul":
            a, b = (self.expression(shape, depth - 1) for shape in form.operands)
            choices = [t for t, general in tables.MATMUL
                       if general or max(len(s) for s in form.operands) <= 2]
            template = self.choose(choices)
            return Term(fill(template, a=a.text, b=b.text),
                        form.operands[0][-1] * a.bound * b.bound)
        if family == "stack":
            parts = [self.expression(shape, depth - 1) for shape in form.operands]
            texts = ", ".join(p.text for p in parts)
            template = "np.array([{a}])" if form.operands[0] == () and self.chance(2) \
                else "np.stack([{a}])"
            return Term(template.format(a=texts), max(p.bound for p in parts))
        source = self.expression(form.operands[0], depth - 1)
        if family == "reduce":
            return self.reduction(source, *form.detail)
        text = fill(form.template, a=source.text, i="{i}")
        if family in ("index", "fancy"):
            text = text.replace("{i}", self.index(form.detail, fancy=family == "fancy"))
        if family in ("index", "view", "reshape", "broadcast"):
            # a scalar read from an array is a new NumPy scalar, not a view
            view = family != "index" or len(form.operands[0]) > 1
            aliases = source.aliases if view else ()
            # (and not fresh: the compiler cannot tell a scalar from a view, and so refuses
            # to update either in place)
            return Term(text, source.bound, False, aliases, False)
        return Term(text, source.bound * (2 if family == "difference" else 1))

    def reduction(self, source: Term, args: str, count: int) -> Term:
        # The largest of values that are equal by construction is a kink: not over
        # broadcast or stacked copies, or a buffer whose rows are still zeros.
        ties = re.search(r"broadcast_to|np\.stack|np\.array\(\[", source.text) or any(
            v.pinned for v in source.aliases)
        named = [(n, rule) for n, rule in tables.REDUCTIONS if rule(count, source.bound) <= BOUND
                 and not (ties and n in ("max", "min"))]
        other = [(t, rule) for t, rule in tables.OTHER_REDUCTIONS
                 if rule(count, source.bound) <= BOUND and (count >= 2 or "var" not in t)
                 and not (ties and "amax" in t)]
        if not args and tables.NORM[1](count, source.bound) <= BOUND:
            other.append(tables.NORM)
        choice = self.choose(named + other)
        if choice in other:
            template, rule = choice
            return Term(fill(template, a=source.text, args=", " + args if args else ""),
                        rule(count, source.bound))
        name, rule = choice
        if not source.python and self.chance(2):
            text = fill("{a}." + name + "({args})", a=source.text, args=args)
        else:
            text = f"np.{name}({source.text}{', ' + args if args else ''})"
        return Term(text, rule(count, source.bound))

    def index(self, length: int, fancy: bool = False) -> str:
        """An index into an axis of ``length``: an int variable, ``i - 1`` or a constant."""
        if fancy:
            length, count = length
            return repr([self.integer(-length, length - 1) for _ in range(count)])
        ints = self.ints(below=length)
        choices = ["constant"] + ["variable", "variable"] * bool(ints)
        if self.ints(below=length + 1) and length >= 1:
            choices.append("previous")
        choice = self.choose(choices)
        if choice == "variable":
            return self.pick(ints).name
        if choice == "previous":  # i - 1: -1 (the last element) when i is 0
            return f"{self.pick(self.ints(below=length + 1)).name} - 1"
        return str(self.integer(-length, length - 1))

    # ----- calls and comprehensions -----

    def arguments(self, helper: Helper, depth: int) -> tuple[str, tuple]:
        arguments, aliases = [], ()
        by_name = self.chance(4)  # all but the first argument by keyword
        for position, (name, shape) in enumerate(helper.params):
            keyword = f"{name}=" if by_name and position else ""
            if shape == "default":
                if self.chance(2):
                    value = self.choose(["0.25", "0.75"])
                    arguments.append(value if self.chance(2) else f"{name}={value}")
            elif shape is None:
                ints = [v.name for v in self.ints()]
                arguments.append(keyword + self.choose(ints + ["1", "2"]))
            else:
                term = self.expression(shape, max(depth - 1, 0))
                aliases += term.aliases
                arguments.append(keyword + (term.text if term.bound <= HELPER_ARGUMENT_BOUND
                                            else f"np.tanh({term.text})"))
        return ", ".join(arguments), aliases

    def call(self, helper: Helper, depth: int) -> Term:
        arguments, aliases = self.arguments(helper, depth)
        # What a helper returns may be a read-only view (np.broadcast_to) of its arguments or
        # of the variables it reads: never updated in place.
        return Term(f"{helper.called}({arguments})", helper.bound, False, aliases, False)

    def derivative(self, helper: Helper, depth: int) -> Term:
        """The gradient of a scalar helper, made at module level (``dcell(x)``) or where it
        is called (``ad.grad(cell)(x)``), squashed: nothing bounds a gradient."""
        arguments, _ = self.arguments(helper, depth)
        function = helper.derivative if helper.derivative and self.chance(2) \
            else f"ad.grad({helper.called})"
        return Term(f"np.tanh({function}({arguments}))", 1.0)

    def nested_list(self, shape: tuple, depth: int) -> Term:
        """``np.array([[a, 0.5], [b, c]])``: scalars that carry gradients, and constants."""
        rows, bound, constants = [], 0.0, 0
        for _ in range(shape[0]):
            items = []
            for _ in range(shape[1]):
                if self.chance(4) and constants < shape[0] * shape[1] - 1:
                    text, value = self.choose(tables.CONSTANTS)
                    items.append(self.choose([text, "-" + text]))
                    constants, bound = constants + 1, max(bound, value)
                else:
                    term = self.expression((), max(depth - 1, 0))
                    items.append(term.text)
                    bound = max(bound, term.bound)
            rows.append("[" + ", ".join(items) + "]")
        return Term(f"np.array([{', '.join(rows)}])", bound)

    def comprehension(self, shape: tuple, rows: Variable, depth: int) -> Term:
        """``np.stack([... for r in rows])``, ``np.array([...])`` or ``sum(... for r in rows)``."""
        rows.used = True
        count, element, over = rows.rows
        name = ["r", "row", "item", "r3", "r4", "r5", "r6"][self.comprehensions]
        row = Variable(name, "array", element, rows.bound, python=rows.kind == "group"
                       and rows.python)
        kinds = [k for k, s in [("stack", (count, *element)), ("sum", element),
                                ("np.sum", element), ("np.sum", ()),
                                ("array", (count,))] if s == shape]
        kind = self.choose(kinds)
        self.scope.append(row)
        self.comprehensions += 1
        try:
            partners = [s for s in reachable(self.shapes(), max(depth - 1, 0))
                        if broadcast(s, row.shape) == row.shape]
            other = self.operand(self.choose(partners), max(depth - 1, 0))
            template, bound, _ = self.choose([e for e in tables.BINARY[:5]
                                              if e[1](row.bound, other.bound) <= BOUND])
            body = fill(template, a=row.name, b=other.text)
            bound = bound(row.bound, other.bound)
        finally:
            self.scope.remove(row)
            self.comprehensions -= 1
        loop = f"for {row.name} in {over}"
        if kind == "stack":
            return Term(f"np.stack([{body} {loop}])", bound)
        if kind == "array":
            return Term(f"np.array([np.mean({body}) {loop}])", bound)
        total = bound * count
        text = f"sum({body} {loop})"
        if kind == "np.sum":  # over the whole list, or item by item (axis=0)
            text = f"np.sum([{body} {loop}]{', axis=0' if shape else ''})"
            total = bound * count * (1 if shape else max(1, math.prod(row.shape)))
        return Term(text, total) if total <= BOUND else Term(f"np.tanh({text})", 1.0)
