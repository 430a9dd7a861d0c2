"""Writing a function's body: assignments, in-place updates, branches, loops, lists and buffers."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import strategies as st

from tests.fuzz.expressions import MAX_INDEX, Expressions, Helper, Term, Variable
from tests.fuzz.shapes import broadcast, matmul, reachable
from tests.fuzz.tables import BOUND
from tests.fuzz.text import fill

MAX_TRIPS = 30  # most runs of any loop body per call
DATA_WHILE_TRIPS = 4  # most trips of a while loop on data
# Temporaries use names users write and names the compiler also generates.
TEMP_NAMES = ["h", "u", "z", "g", "acc", "t1", "dx", "tmp", "p", "val", "state", "s", "a", "q",
              "e", "score", "hidden", "feature", "mid", "ans", "d", "z2", "out2"]
LIST_NAMES, BUFFER_NAMES = ["hs", "states", "ys"], ["out", "buf", "table"]
INDEX_NAMES, COUNTER_NAMES = ["i", "j", "step"], ["count", "it", "tries"]
POSITION_NAMES = ["pos", "idx"]  # what enumerate counts with
TABLE_NAMES = [("rows", "row"), ("grid", "line")]  # lists of lists
ROW_NAMES, TOTAL_NAMES = ["x_t", "col", "xi", "yi"], ["total", "level", "energy"]
PAIR_NAMES = [("Wl", "bl"), ("Wm", "bm")]  # what a loop over a list of pairs unpacks to
AUGMENTED = {"+=": lambda a, b: a + b, "-=": lambda a, b: a + b, "*=": lambda a, b: a * b}


@dataclass
class Condition:
    """A condition on data, whose threshold is placed once the program runs at the test point.

    An ``if`` takes its threshold at ``offset`` from the first value it sees;
    a ``while`` on data makes ``trips`` trips and takes its threshold between
    the values it sees last and next to last.
    """

    expression: str
    operator: str
    offset: float = 0.0
    trips: int | None = None
    values: list = field(default_factory=list)
    threshold: float | None = None


class Writer(Expressions):
    """Writes one function's body, tracking what is in scope and how large it can be."""

    def __init__(self, draw, scope: list[Variable], helpers: list[Helper],
                 conditions: list[Condition], returns: tuple = (), in_helper: bool = False) -> None:
        super().__init__(draw, scope, helpers)
        self.conditions, self.returns, self.in_helper = conditions, returns, in_helper
        self.lines: list[str] = []
        self.indent = 1
        self.loop, self.loop_depth, self.trips = 0, 0, 1
        self.loop_ids = itertools.count(1)
        self.taken = {v.name for v in scope} | {h.name for h in helpers}
        self.pinned: list[Variable] = []
        self.returned = 0.0  # the largest bound of a value an early return gives
        self.iterated: list[Variable] = []  # arrays enclosing loops run over: kept as they are
        self.static = 0  # open loops over groups (unrolled by the compiler: no 'return' inside)

    # ----- bookkeeping -----

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    @contextmanager
    def block(self, header: str):
        """An indented block; names it assigns first go out of scope at its end."""
        self.emit(header)
        saved, self.indent = list(self.scope), self.indent + 1
        yield
        self.scope[:], self.indent = saved, self.indent - 1

    @contextmanager
    def inside_loop(self, trips: int):
        saved = self.loop, self.loop_depth, self.trips
        self.loop, self.loop_depth = next(self.loop_ids), self.loop_depth + 1
        self.trips *= max(trips, 1)
        yield
        self.loop, self.loop_depth, self.trips = saved
        if self.loop_depth == 0:  # no loop left to come back to an in-place update
            for variable in self.pinned:
                variable.pinned = False
            self.pinned = []

    def new(self, kind: str, names: list[str] = TEMP_NAMES, shape: tuple = ()) -> Variable:
        free = [n for n in names if n not in self.taken]
        name = self.choose(free) if free else f"v{len(self.taken)}"
        self.taken.add(name)
        return Variable(name, kind, shape, owner=self.loop)

    def bind(self, variable: Variable, term: Term) -> None:
        """``variable`` now holds ``term``'s value (after a branch or loop: maybe its old one)."""
        if variable in self.scope:
            self.scope.remove(variable)
            bound = max(term.bound, variable.bound)
            python, fresh = variable.python or term.python, variable.fresh and term.fresh
        else:
            bound, python, fresh = term.bound, term.python, term.fresh
        variable.bound, variable.python, variable.used = bound, python, False
        variable.fresh = fresh and not term.aliases
        self.scope.append(variable)

    def settle(self, term: Term, target: Variable | None = None) -> Term:
        """``term`` as a value to store: a copy where it would share memory with a variable an
        open loop updates in place (or store a view into one)."""
        for alias in term.aliases:
            alias.fresh = False
        if any(a.pinned for a in term.aliases) or (target is not None and target.pinned
                                                   and not (term.fresh and not term.aliases)):
            return Term(f"np.copy({term.text})", term.bound)
        return term

    def assign_to(self, target: Variable, term: Term) -> None:
        term = self.settle(term, target)
        self.emit(f"{target.name} = {term.text}")
        self.bind(target, term)

    def target(self, shape: tuple, reads: str = "") -> Variable:
        """A new variable, or one this block may rebind (not one a loop carries).

        An argument is rebound only by an expression that ``reads`` it, so that
        most arguments reach the result.
        """
        own = [v for v in self.arrays(shape) if v.owner == self.loop and not v.carried
               and not v.frozen and (not v.argument or re.search(rf"\b{v.name}\b", reads))]
        if own and self.draw(st.integers(0, 2)) == 0:
            return self.choose(own)
        return self.new("array", shape=shape)

    def target_shape(self) -> tuple:
        """Mostly a shape in scope; sometimes one an operation makes of them."""
        shapes = [v.shape for v in self.arrays()]
        if self.draw(st.integers(0, 3)) == 0:
            return self.choose(sorted(reachable(self.shapes(), 1), key=lambda s: (len(s), s)))
        return self.choose(shapes)

    # ----- statements -----

    def statement(self, nested: bool = False) -> None:
        kinds = ["assign", "assign", "assign", "augment", "branch", "branch", "ternary"]
        if self.loop_depth == 0 and self.indent <= 2:
            kinds = (["for"] * 4 + ["while", "data_while", "table"] if not self.in_helper
                     else ["for"]) + kinds
        if not nested and self.loop_depth == 0 and self.ints():
            kinds.append("return")
        statements = {"assign": self.assign, "augment": self.augment, "branch": self.branch,
                      "ternary": self.ternary, "for": self.for_loop, "while": self.counted_while,
                      "data_while": self.data_while, "return": self.early_return,
                      "table": self.table}
        statements[self.choose(kinds)]()

    def assign(self) -> None:
        shape = self.target_shape()
        term = self.expression(shape, self.choose([1, 2, 2, 3]))
        self.assign_to(self.target(shape, reads=term.text), term)

    def augment(self) -> None:
        """``v += e`` (or ``-=``, ``*=``) on an array only ``v`` names, ``e`` broadcast to it."""
        targets = [v for v in self.arrays() if v.fresh and v.owner == self.loop and not v.carried
                   and not v.pinned and v not in self.iterated]
        if not targets:
            return self.assign()
        target = self.choose(targets)
        shapes = [s for s in reachable(self.shapes(), 1) if broadcast(s, target.shape)
                  == target.shape]
        term = self.expression(self.choose(sorted(shapes, key=lambda s: (len(s), s))), 2)
        operators = [op for op, rule in AUGMENTED.items() if rule(target.bound, term.bound)
                     <= BOUND]
        if not operators:
            return self.assign()
        operator = self.choose(operators)
        self.emit(f"{target.name} {operator} {term.text}")
        target.bound, target.used = AUGMENTED[operator](target.bound, term.bound), False
        target.python = target.python and term.python

    def int_condition(self) -> str:
        ints = self.ints()
        left = self.pick(ints)
        right = self.choose(["0", "1", "2", "3"] + [v.name for v in ints if v is not left])
        operator = self.choose(["==", "<", ">", ">=", "!="])
        if self.draw(st.integers(0, 4)) == 0:  # looks like a condition on data, but is not
            return f"np.sum({self.pick(self.arrays()).name} * 0) + {left.name} {operator} {right}"
        return f"{left.name} {operator} {right}"

    def data_condition(self) -> str:
        term = self.expression((), self.choose([1, 2]))
        offset = self.choose([0.05, 0.1, 0.3, 0.6]) * self.choose([-1, 1])
        self.conditions.append(Condition(term.text, self.choose([">", "<"]), offset))
        return f"@@{len(self.conditions) - 1}@@"

    def setting_condition(self) -> str:
        """A condition on a setting in a dict argument, known while compiling:
        ``params["act"] == "tanh"``, ``params["bias"] is None``."""
        setting = self.choose(self.settings())
        if setting.setting == "bias":
            return f"{setting.name} {self.choose(['is', 'is not'])} None"
        return f'{setting.name} {self.choose(["==", "!="])} "{self.choose(["tanh", "sin"])}"'

    def settings(self) -> list[Variable]:
        return [v for v in self.scope if v.kind == "setting"]

    def condition(self) -> str:
        """A condition on ints, on data, or both joined by ``and``/``or``; or on a setting."""
        if self.settings() and self.draw(st.integers(0, 2)) == 0:
            setting = self.setting_condition()
            if self.ints() and self.draw(st.integers(0, 2)) == 0:
                return f"{setting} and {self.int_condition()}"
            return setting
        if not self.ints() or self.draw(st.integers(0, 2)) == 0:
            return self.data_condition()
        form = self.choose(["int", "int", "int", "and", "or", "not"])
        if form in ("and", "or"):
            return f"{self.int_condition()} {form} {self.data_condition()}"
        return f"not {self.data_condition()}" if form == "not" else self.int_condition()

    def result(self) -> str:
        """What a ``return`` gives: a scalar in ``f``, the declared shape in a helper."""
        term = self.expression(self.returns, 2)
        self.returned = max(self.returned, term.bound)
        return term.text

    def ternary(self) -> None:
        condition = self.condition()
        shape = self.target_shape()
        yes, no = (self.settle(self.expression(shape, 1)) for _ in "ab")
        target = self.target(shape, reads=f"{yes.text} {no.text}")
        term = Term(f"{yes.text} if {condition} else {no.text}", max(yes.bound, no.bound),
                    yes.python and no.python, yes.aliases + no.aliases, yes.fresh and no.fresh)
        self.assign_to(target, term)

    def branch(self) -> None:
        shape = self.target_shape()
        target = self.target(shape)
        has_else = target not in self.scope or self.draw(st.booleans())
        conditions = [self.condition()]
        conditions += [self.condition() for _ in range(self.draw(st.integers(0, 1)))]
        headers = [f"{'el' * (i > 0)}if {c}:" for i, c in enumerate(conditions)]
        terms = []
        for header in headers + ["else:"] * has_else:
            with self.block(header):
                if self.indent <= 3 and self.draw(st.integers(0, 3)) == 0:
                    self.statement(nested=True)
                term = self.settle(self.expression(shape), target)
                self.emit(f"{target.name} = {term.text}")
                terms.append(term)
        self.bind(target, Term("", max(t.bound for t in terms), any(t.python for t in terms),
                               sum((t.aliases for t in terms), ()), all(t.fresh for t in terms)))

    def jump(self) -> None:
        condition = self.condition() if self.draw(st.integers(0, 2)) == 0 or not self.ints() \
            else self.int_condition()
        with self.block(f"if {condition}:"):
            # no 'return' from a loop inside a loop over a group (a compiler limitation)
            word = self.choose(["break", "continue"] + ["return"] * (not self.static))
            self.emit(f"return {self.result()}" if word == "return" else word)

    def early_return(self) -> None:
        with self.block(f"if {self.int_condition()}:"):
            self.emit(f"return {self.result()}")

    # ----- loops -----

    def for_loop(self) -> None:
        budget = MAX_TRIPS // self.trips
        if self.in_helper:
            budget = min(budget, 3)
        ints = [v for v in self.ints() if v.bound <= min(budget, MAX_INDEX)]
        tables = [v for v in self.arrays() if v.shape and v.shape[0] <= budget
                  and not v.carried and not v.pinned]
        forms = ["constant", "start", "reversed", "reversed"] + ["enumerate_range"] * 2 \
            + ["int", "int"] * bool(ints)
        forms += ["rows", "rows", "enumerate", "zip"] + ["zip_range"] * 2 if tables else []
        groups = [v for v in self.groups() if v.length <= budget]
        forms += ["group"] * 6 if groups else []
        form = self.choose(forms)
        if form == "group":
            return self.group_loop(groups)
        if form in ("rows", "enumerate", "zip"):
            return self.rows_loop(form, tables)
        if form == "zip_range":
            return self.zip_range(tables, ints)
        if form == "enumerate_range" and budget >= 1 and self.free_index(POSITION_NAMES):
            return self.enumerate_range(budget, ints)
        if form == "enumerate_range":
            form = "constant"
        if form == "int":
            limit = self.pick(ints)
            arguments, trips, least, last = limit.name, int(limit.bound), 0, limit.bound - 1
        elif form == "start":
            stop = self.draw(st.integers(2, min(5, budget + 1)))
            arguments, trips, least, last = f"1, {stop}", stop - 1, stop - 1, stop - 1
        else:
            stop = self.draw(st.integers(0 if form == "constant" else 1, min(5, budget)))
            arguments, trips, least, last = str(stop), stop, stop, stop - 1
        name = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
        index = Variable(name, "int", (), max(last, 0), owner=-1)
        header = f"for {name} in range({arguments}):"
        if form == "reversed":
            header = self.choose([f"for {name} in reversed(range({arguments})):",
                                  f"for {name} in range({stop - 1}, -1, -1):"])
        self.loop_statement(header, trips, least, bound=[index], fill_at=(name, max(last + 1, 1)))

    def rows_loop(self, form: str, tables: list[Variable]) -> None:
        """``for row in X``, ``for i, row in enumerate(X)`` or ``for a, b in zip(X, Y)``."""
        table = self.pick(tables)
        free = [n for n in ROW_NAMES if n not in self.taken and n not in
                {v.name for v in self.scope}]
        row = Variable(free[0], "array", table.shape[1:], table.bound, owner=-1)
        trips, bound = table.shape[0], [row]
        if form == "enumerate":
            name = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
            bound.append(Variable(name, "int", (), trips - 1, owner=-1))
            header = f"for {name}, {row.name} in enumerate({table.name}):"
        elif form == "zip":
            other = self.pick(tables)
            partner = Variable(free[1], "array", other.shape[1:], other.bound, owner=-1)
            trips = min(trips, other.shape[0])
            bound.append(partner)
            header = f"for {row.name}, {partner.name} in zip({table.name}, {other.name}):"
        else:
            header = f"for {row.name} in {table.name}:"
        fill_at = (bound[1].name, trips) if form == "enumerate" else None
        tables = [table] + ([other] if form == "zip" else [])
        self.iterated += tables
        self.loop_statement(header, trips, trips, bound=bound, fill_at=fill_at)
        del self.iterated[-len(tables):]

    def group_loop(self, groups: list[Variable]) -> None:
        """A loop over an argument that is a list, a tuple or a dict of equal arrays, or a
        list of pairs: ``for v in xs``, ``for i, v in enumerate(xs)``, ``for v in xs[1:]``,
        ``for a, b in zip(xs, xs[1:])``, ``for i in range(len(xs))``, ``for v in
        ws.values()``, ``for key, v in ws.items()``, ``for Wl, bl in layers``..."""
        group = self.pick(groups)
        iterated = []  # an array zipped with the group: kept as it is meanwhile
        used = {v.name for v in self.scope} | self.taken
        free = [n for n in ROW_NAMES if n not in used]
        index = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
        trips, python = group.length, group.python
        if group.container == "layers":
            pair = next(p for p in PAIR_NAMES if not set(p) & used)
            bound = [Variable(n, "array", s, group.bound, owner=-1)
                     for n, s in zip(pair, group.parts)]
            form = self.choose(["plain", "enumerate"])
            header = f"for {pair[0]}, {pair[1]} in {group.name}:" if form == "plain" else \
                f"for {index}, ({pair[0]}, {pair[1]}) in enumerate({group.name}):"
        elif group.container == "dict":
            bound = [Variable(free[0], "array", group.shape, group.bound, python, owner=-1)]
            form = self.choose(["values", "items", "enumerate"])
            header = {"values": f"for {free[0]} in {group.name}.values():",
                      "items": f"for key, {free[0]} in {group.name}.items():",
                      "enumerate": f"for {index}, {free[0]} in "
                                   f"enumerate({group.name}.values()):"}[form]
        else:
            bound = [Variable(free[0], "array", group.shape, group.bound, python, owner=-1)]
            others = [g for g in self.groups() if g.container in ("list", "tuple")]
            forms = ["plain", "enumerate", "length", "zip"] + ["slice", "pairs"] * (trips >= 2)
            form = self.choose(forms)
            if form == "slice":
                header, trips = f"for {free[0]} in {group.name}[1:]:", trips - 1
            elif form == "pairs":  # each element with the next
                bound.append(dataclasses.replace(bound[0], name=free[1]))
                header = f"for {free[0]}, {free[1]} in zip({group.name}, {group.name}[1:]):"
                trips -= 1
            elif form == "zip":
                others += [v for v in self.arrays() if v.shape and not v.carried
                           and not v.pinned]
                other = self.pick(others)
                count, element, _ = other.rows
                bound.append(Variable(free[1], "array", element, other.bound,
                                      other.kind == "group" and other.python, owner=-1))
                trips = min(trips, count)
                iterated += [other] if other.kind == "array" else []
                header = f"for {free[0]}, {free[1]} in zip({group.name}, {other.name}):"
            elif form == "length":  # a range loop: the elements are read by constant indices
                header, bound = f"for {index} in range(len({group.name})):", []
            else:
                header = f"for {free[0]} in {group.name}:" if form == "plain" else \
                    f"for {index}, {free[0]} in enumerate({group.name}):"
        if form in ("enumerate", "length"):
            bound.append(Variable(index, "int", (), trips - 1, owner=-1))
        fill_at = (index, trips) if form in ("enumerate", "length") else None
        if form == "length":  # an ordinary range loop
            return self.loop_statement(header, trips, trips, bound=bound, fill_at=fill_at)
        self.static += 1
        self.iterated += iterated
        try:
            self.loop_statement(header, trips, trips, bound=bound, fill_at=fill_at, jumps=False)
        finally:
            self.static -= 1
            del self.iterated[len(self.iterated) - len(iterated):]

    def free_index(self, names: list[str] = INDEX_NAMES) -> str | None:
        used = {v.name for v in self.scope} | self.taken
        return next((n for n in names if n not in used), None)

    def enumerate_range(self, budget: int, ints: list[Variable]) -> None:
        """``for pos, i in enumerate(range(1, 4))`` (or ``range(n)``)."""
        name = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
        position = self.free_index(POSITION_NAMES)
        if ints and self.draw(st.booleans()):
            limit = self.pick(ints)
            arguments, trips, least, start = limit.name, int(limit.bound), 0, 0
            last = max(limit.bound - 1, 0)
        else:
            start = self.draw(st.sampled_from([1, 1, 0, 2]))
            stop = self.draw(st.integers(start + 1, start + min(4, budget)))
            arguments = f"{start}, {stop}" if start else str(stop)
            trips = least = stop - start
            last = stop - 1
        self.taken.add(position)
        bound = [Variable(name, "int", (), last, owner=-1),
                 Variable(position, "int", (), max(trips - 1, 0), owner=-1)]
        header = f"for {position}, {name} in enumerate(range({arguments})):"
        self.loop_statement(header, trips, least, bound=bound, fill_at=(name, max(last + 1, 1)))

    def zip_range(self, tables: list[Variable], ints: list[Variable]) -> None:
        """``for i, xi in zip(range(n), xs)``: as many trips as the shorter of the two."""
        table = self.pick(tables)
        rows = table.shape[0]
        if ints and self.draw(st.booleans()):
            limit = self.pick(ints)
            text, trips, least = limit.name, min(int(limit.bound), rows), 0
        else:
            stop = self.draw(st.integers(1, 4))
            text, trips = str(stop), min(stop, rows)
            least = trips
        name = next(n for n in INDEX_NAMES if n not in {v.name for v in self.scope})
        free = [n for n in ROW_NAMES if n not in self.taken and n not in
                {v.name for v in self.scope}]
        row = Variable(free[0], "array", table.shape[1:], table.bound, owner=-1)
        index = Variable(name, "int", (), max(trips - 1, 0), owner=-1)
        self.iterated.append(table)
        self.loop_statement(f"for {name}, {row.name} in zip(range({text}), {table.name}):",
                            trips, least, bound=[index, row], fill_at=(name, max(trips, 1)))
        self.iterated.pop()

    def table(self) -> None:
        """A list of lists of scalars built by nested loops, then read as an array::

            rows = []
            for i in range(2):
                row = []
                for j in range(3):
                    row.append(...)
                rows.append(row)
            grid = np.array(rows)
        """
        names = [(a, b) for a, b in TABLE_NAMES if a not in self.taken and b not in self.taken]
        outer_name, inner_name = next(n for n in INDEX_NAMES if n not in
                                      {v.name for v in self.scope}), None
        used = {v.name for v in self.scope} | {outer_name}
        inner_name = next((n for n in INDEX_NAMES if n not in used), None)
        if not names or inner_name is None or MAX_TRIPS // self.trips < 9:
            return self.assign()
        table, row = names[0]
        self.taken |= {table, row}
        count, length = self.draw(st.integers(2, 3)), self.draw(st.integers(2, 3))
        self.emit(f"{table} = []")
        with self.block(f"for {outer_name} in range({count}):"), self.inside_loop(count):
            self.scope.append(Variable(outer_name, "int", (), count - 1, owner=-1))
            self.emit(f"{row} = []")
            with self.block(f"for {inner_name} in range({length}):"), self.inside_loop(length):
                self.scope.append(Variable(inner_name, "int", (), length - 1, owner=-1))
                term = self.settle(self.expression((), self.choose([1, 2])))
                self.emit(f"{row}.append({term.text})")
            self.emit(f"{table}.append({row})")
        reads = [("np.array({t})", (count, length), term.bound),
                 ("np.sum({t}, axis=1)", (count,), term.bound * length)]
        if term.bound * count * length <= BOUND:
            reads.append(("np.sum({t})", (), term.bound * count * length))
        template, shape, bound = self.choose(reads)
        if bound > BOUND:
            template, bound = f"np.tanh({template})", 1.0
        self.assign_to(self.new("array", shape=shape), Term(template.format(t=table), bound))

    def counted_while(self) -> None:
        budget = min(MAX_TRIPS // self.trips, MAX_INDEX)
        ints = [v for v in self.ints() if v.bound <= budget]
        if ints and self.draw(st.booleans()):
            limit = self.pick(ints)
            text, trips, least = limit.name, int(limit.bound), 0
        else:
            trips = least = self.draw(st.integers(1, min(4, budget)))
            text = str(trips)
        counter = self.new("int", COUNTER_NAMES)
        self.emit(f"{counter.name} = 0")
        counter.bound = trips
        self.scope.append(counter)
        step = self.choose([f"{counter.name} = {counter.name} + 1", f"{counter.name} += 1"])
        self.loop_statement(f"while {counter.name} < {text}:", trips, least,
                            fill_at=(f"{counter.name} - 1", max(trips, 1)), first=step)

    def data_while(self) -> None:
        total = self.new("array", TOTAL_NAMES)
        term = self.expression((), 1)
        self.emit(f"{total.name} = {term.text}")
        self.bind(total, term._replace(bound=term.bound + 0.6 * DATA_WHILE_TRIPS))
        step = self.expression((), 1)
        trips = self.draw(st.integers(0, DATA_WHILE_TRIPS))
        self.conditions.append(Condition(total.name, "<", trips=trips))
        self.loop_statement(f"while @@{len(self.conditions) - 1}@@:", DATA_WHILE_TRIPS, 0,
                            first=f"{total.name} = {total.name} + 0.5 + 0.1 * np.tanh({step.text})",
                            jumps=False, exclude=[total])

    def loop_statement(self, header: str, trips: int, least: int, *, bound=(), fill_at=None,
                       first=None, jumps: bool = True, exclude=()) -> None:
        """A loop whose body updates the variables it carries, within their bounds."""
        carried = self.choose_carried(trips, exclude)
        nested = self.loop_depth == 0 and MAX_TRIPS // (self.trips * max(trips, 1)) >= 1 \
            and not self.in_helper
        # Each extra action with a chance of one in ``odds``.
        odds = {"append": 3, "branch": 2, "augment": 3, "fill": 2 if fill_at else 0,
                "jump": 3 if jumps else 0, "nested": 3 if nested else 0}
        extras = [action for action, chance in odds.items()
                  if chance and self.draw(st.integers(0, chance - 1)) == 0]
        temps = ["temp"] * self.draw(st.integers(0, 2))
        actions = self.draw(st.permutations(["update"] * len(carried) + temps + extras))
        collection = self.new_list(empty=least > 0 and "jump" not in actions) \
            if "append" in actions else None
        buffer = self.new_buffer(fill_at[1], trips) if "fill" in actions else None
        updates = iter(carried)
        with self.block(header), self.inside_loop(trips):
            self.scope += list(bound)
            if first:
                self.emit(first)
            for action in actions:
                self.loop_action(action, updates, collection, buffer, fill_at)
        for variable, _ in carried:
            variable.carried -= 1
            variable.used = False
        if buffer is not None:
            buffer.carried -= 1
        if collection:
            self.read_out(collection, trips)

    def loop_action(self, action, updates, collection, buffer, fill_at) -> None:
        if action == "update":
            variable, form = next(updates)
            if self.ints() and self.draw(st.integers(0, 3)) == 0:
                with self.block(f"if {self.int_condition()}:"):
                    self.update(variable, form)
            else:
                self.update(variable, form)
        elif action == "temp":
            self.assign()
        elif action == "augment":
            self.augment()
        elif action == "branch":
            self.choose([self.branch, self.ternary])()
        elif action == "jump":
            self.jump()
        elif action == "nested":
            self.choose([self.for_loop, self.for_loop, self.counted_while])()
        elif action == "append":
            term = self.settle(self.expression(collection.shape))
            collection.bound = max(collection.bound, term.bound)
            self.emit(f"{collection.name}.append({term.text})")
        else:
            self.fill(buffer, fill_at[0])

    def choose_carried(self, trips: int, exclude) -> list[tuple[Variable, tuple]]:
        """Variables the loop will update, each with a form of update that keeps it bounded.

        A variable another loop is carrying may only be updated in a way that
        does not raise its bound, which that loop has already fixed.
        """
        candidates = [v for v in self.arrays() if v not in exclude and not v.pinned
                      and (v.carried or v.owner == self.loop) and not v.argument]
        carried = []
        for _ in range(self.draw(st.integers(1, 2))):
            if candidates and self.draw(st.integers(0, 2)) > 0:
                variable = self.choose(candidates)
                candidates.remove(variable)
            else:
                variable = self.new_accumulator()
            forms = [("mul", variable.bound)]
            if not variable.carried or variable.bound >= 1:
                forms += [(f, max(variable.bound, 1.0)) for f in ("squash", "squash", "mix")]
            if not variable.carried:
                forms += [(("add", c), variable.bound + trips * c) for c in (0.5, 0.2, 0.1)
                          if variable.bound + trips * c <= BOUND]
            form, bound = self.choose(forms)
            variable.bound, variable.carried = bound, variable.carried + 1
            carried.append((variable, form))
        return carried

    def new_accumulator(self) -> Variable:
        shape = self.choose([v.shape for v in self.arrays()])
        variable = self.new("array", shape=shape)
        starts = [Term(f"np.zeros({shape!r})" if shape else "0.0", 0.0, not shape)]
        starts += [Term(f"np.zeros_like({v.name})", 0.0) for v in self.arrays(shape)
                   if shape and not v.python][:1]
        term = self.choose(starts + [self.expression(shape, 1)])
        self.assign_to(variable, term)
        return variable

    def update(self, variable: Variable, form) -> None:
        v, shape = variable.name, variable.shape
        shapes = sorted((s for s in reachable(self.shapes(), 1) if broadcast(s, shape) == shape),
                        key=lambda s: (len(s), s))
        term = self.expression(self.choose(shapes))
        text = term.text
        in_place = variable.fresh and variable not in self.iterated and self.draw(st.booleans())
        if form == "squash":
            own = [v, f"0.5 * {v}"] + [f"{m.name} @ {v}" for m in self.arrays()
                                      if matmul(m.shape, shape) == shape]
            own += [f"{v} @ {m.name}" for m in self.arrays() if matmul(shape, m.shape) == shape]
            squashed = fill("np.tanh({a} + {b})", a=self.choose(own), b=text)
            line, in_place = f"{v} = {squashed}", False
        elif form == "mix":
            line, in_place = f"{v} = 0.5 * {v} + 0.5 * np.sin({text})", False
        elif form == "mul":
            line = f"{v} *= np.cos({text})" if in_place else f"{v} = {v} * np.cos({text})"
        else:
            function = self.choose(["np.tanh", "np.sin"])
            line = f"{v} += {form[1]} * {function}({text})" if in_place else \
                f"{v} = {v} + {form[1]} * {function}({text})"
        self.emit(line)
        if in_place:  # the next trip updates this array again: nothing may keep it meanwhile
            variable.pinned = True
            self.pinned.append(variable)
        variable.used = False

    def new_list(self, empty: bool) -> Variable:
        collection = self.new("list", LIST_NAMES)
        collection.shape = self.choose([v.shape for v in self.arrays()])
        if empty:  # the loop runs and appends at least once
            self.emit(f"{collection.name} = []")
        else:
            term = self.settle(self.expression(collection.shape, 1))
            collection.bound = term.bound
            self.emit(f"{collection.name} = [{term.text}]")
        return collection

    def read_out(self, collection: Variable, trips: int) -> None:
        """Read a list after the loop that appends to it (it holds at least one element)."""
        c, bound, most = collection.name, collection.bound, trips + 1
        readouts = [("np.mean(np.stack({c}), axis=0)", bound, collection.shape),
                    ("np.stack({c})[-1]", bound, collection.shape),
                    ("np.stack({c})[0]", bound, collection.shape),
                    ("np.max(np.stack({c}), axis=0)", bound, collection.shape),
                    ("np.mean(np.sin(np.stack({c})))", 1.0, ())]
        if bound * most <= BOUND:
            readouts += [("sum({c})", bound * most, collection.shape),
                         ("np.sum(np.stack({c}), axis=0)", bound * most, collection.shape),
                         ("np.sum({c}, axis=0)", bound * most, collection.shape)]
        total = bound * most * math.prod(collection.shape)  # of the whole list
        readouts.append(("np.sum({c})", total, ()) if total <= BOUND
                        else ("np.tanh(np.sum({c}))", 1.0, ()))
        if collection.shape == ():
            readouts += [("np.mean(np.array({c}))", bound, ()), ("np.array({c})[-1]", bound, ())]
        template, bound, shape = self.choose(readouts)
        target = self.new("array", shape=shape)
        # np.stack(hs)[-1] is a view (of an array no name holds, but a view)
        self.assign_to(target, Term(template.format(c=c), bound, fresh=not template.endswith("]")))

    def new_buffer(self, length: int, trips: int) -> Variable:
        """``out = np.zeros(...)`` or a copy of an array, for the loop to write rows (or
        columns) of; it may be read in the loop, and is an array like any other after it."""
        shape = self.choose([v.shape for v in self.arrays() if len(v.shape) <= 1] or [()])
        buffer = self.new("array", BUFFER_NAMES)
        copies = [v for v in self.arrays() if v.shape and v.shape[0] >= length
                  and len(v.shape) <= 2]
        if copies and self.draw(st.integers(0, 2)) == 0:
            source = self.pick(copies)
            buffer.shape, bound = source.shape, source.bound
            copy = self.choose(["{a}.copy()", "np.copy({a})"]).format(a=source.name)
            self.emit(f"{buffer.name} = {copy}")
            buffer.axis = 0
        else:
            column = shape and self.draw(st.integers(0, 2)) == 0
            buffer.shape = (*shape, length) if column else (length, *shape)
            bound = 0.0
            self.emit(f"{buffer.name} = np.zeros({buffer.shape!r})")
            buffer.axis = -1 if column else 0
        writes = self.trips * max(trips, 1)
        buffer.adds = max(bound, 1.0) + 0.5 * writes <= BOUND  # the bound bind() gives it
        self.bind(buffer, Term("", max(bound, 1.0) + (0.5 * writes if buffer.adds else 0)))
        buffer.carried += 1
        buffer.pinned = True
        self.pinned.append(buffer)
        return buffer

    def fill(self, buffer: Variable, at: str) -> None:
        row = buffer.shape[1:] if buffer.axis == 0 else buffer.shape[:-1]
        place = f"{buffer.name}[{at}]" if buffer.axis == 0 else f"{buffer.name}[..., {at}]"
        shapes = sorted((s for s in reachable(self.shapes(), 1) if broadcast(s, row) == row),
                        key=lambda s: (len(s), s))
        term = self.expression(self.choose(shapes))
        forms = ["set", "set", "previous"] + ["add"] * buffer.adds
        form = self.choose(forms)
        if form == "add":
            self.emit(f"{place} += 0.5 * np.tanh({term.text})")
        elif form == "previous":  # a recurrence through the buffer
            previous = place.replace(f"[{at}]", f"[{at} - 1]").replace(f", {at}]", f", {at} - 1]")
            self.emit(f"{place} = 0.5 * {previous} + 0.5 * np.sin({term.text})")
        else:
            self.emit(f"{place} = {self.choose(['np.sin', 'np.tanh'])}({term.text})")

    def final(self) -> tuple[str, tuple]:
        """The returned scalar: the last array weighted, plus every value nothing has read;
        and the shape of the weights."""
        arrays = [v for v in self.arrays() if v.shape]
        last = arrays[-1] if arrays else None
        terms = [f"np.sum(WEIGHTS * {last.name})"] if last else []
        for v in self.arrays():
            if not v.used and v is not last:
                terms.append(f"np.mean({v.name})" if v.shape else v.name)
        for group in self.groups():
            if not group.used:
                terms.append(self.read_all(group, self.choose([0, 1])))
        if not terms:
            terms.append(self.expression((), 1).text)
        return " + ".join(terms), last.shape if last else ()

    @staticmethod
    def read_all(group: Variable, form: int) -> str:
        """A group no statement read: the sum of its elements' means, or (``form`` 1) the
        mean of them stacked."""
        if group.container == "layers":
            a, b = PAIR_NAMES[0]
            return f"sum(np.mean({a}) + np.mean({b}) for {a}, {b} in {group.name})"
        _, _, over = group.rows
        if form and group.container != "dict":
            return f"np.mean(np.stack({group.name}))"
        if group.python:
            return f"sum({over})"
        return f"sum(np.mean(v) for v in {over})"
