"""Statements with control flow: branches, loops, early exits.

A branch or loop becomes a structured :class:`~autodiff.graph.ir.Region`. Names
the statement rebinds become the region's results: the value after an ``if``
(one per branch), the values a loop carries from one iteration to the next.

``return``, ``break`` and ``continue`` inside compound statements set flags
kept in the environment like variables (``<returned>``, ...). The statements
after a compound statement that may have set one run under ``if not flag:``,
and a loop ends as soon as ``break`` or ``return`` set their flag
(``Region.until``). A function therefore always has a single exit.
"""

from __future__ import annotations

import ast

import numpy as np

from autodiff.frontend.bindings import Deleted, test_moved_into_body
from autodiff.frontend.generators import unrolled_for_a_generator
from autodiff.frontend.scan import (
    BROKE,
    CONTINUED,
    EXIT,
    FLAGS,
    RAISED,
    RESULT,
    RETURNED,
    always_exits,
    appended_names,
    assigned_names,
    item_set_names,
    loop_exits,
    readable_name,
    rebound_names,
    viewed_names,
)
from autodiff.frontend.structures import CallerList, Record
from autodiff.graph.ir import (
    UNDEFINED,
    Block,
    Const,
    Node,
    Operand,
    Region,
    Value,
    defined_values,
)
from autodiff.graph.shapes import DICT, LIST, Token, token_of
from autodiff.ops import OPS
from autodiff.ops.custom import no_grad

FALSE, TRUE = Const(False), Const(True)



class Unbound(Exception):  # noqa: N818 - a signal inside the converter, never seen outside
    """A name bound nowhere, read by code that runs on some paths only (in a branch, a
    loop's body, a try's): Python raises NameError there when that code runs, so the
    statement reading it becomes ``raise NameError(...)``, at its line."""

    def __init__(self, node: ast.AST, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


class Ambiguous:
    """A name bound to different functions or modules on different paths (``what``
    they are, as an error says it)."""

    def __init__(self, name: str, what: str = "names different functions") -> None:
        self.name, self.what = name, what


class Stale:
    """A name whose value is not known on some path: a ``try``'s body assigns it, and an
    exception raised part way through the body may have left it assigned or not.

    ``place`` says where it is read: in the ``"handler"`` of line ``where``, in the
    ``"finally"`` block run for an exception, or ``"after"`` the statement, to which
    the handler of line ``where`` leaves it unknown.
    """

    def __init__(self, name: str, statement: ast.Try, where: int, place: str) -> None:
        self.name = name
        self.statement = statement
        self.where = where
        self.place = place

    def after(self) -> Stale:
        return Stale(self.name, self.statement, self.where, "after")

    def message(self) -> str:
        line = self.statement.lineno
        if self.place == "after":
            seen = (f"after the try statement of line {line}, whose body assigns it part "
                    f"way and whose handler at line {self.where} does not")
        elif self.place == "handler":
            seen = (f"in the handler at line {self.where}, and the body of the try statement "
                    f"of line {line} assigns it")
        else:
            seen = (f"in the finally: block of the try statement of line {line}, which "
                    "assigns it")
        return (f"'{self.name}' is read {seen}: after an exception it holds what the code "
                "left it when the exception was raised, which the derivative cannot follow")


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    return isinstance(a, Const) and isinstance(b, Const) and a == b


def _data(value: object) -> bool:
    """Whether a named constant (``math.pi``, a module's array) is data a branch may
    yield, rather than a function or a module, which only one path may bind."""
    return isinstance(value, (bool, int, float, complex, np.number, np.ndarray))


def _floating(operand: Operand) -> bool:
    if isinstance(operand, Value):
        return operand.floating
    return isinstance(operand, Const) and isinstance(operand.value, float)


def _token(operand: Operand) -> object:
    if operand is UNDEFINED:
        return None
    token = token_of(operand)
    return token if token is not None else Token()


def _true(flag: Operand) -> bool:
    return flag is TRUE or isinstance(flag, Const) and flag.value is True


def _on_a_raising_path(value, before, inside: set[Value]):
    """What a block that always raises yields for a name another path leaves as
    ``value``: the same where that needs no value of its own (the value from before,
    a function, a constant), ``UNDEFINED`` for a value computed ``inside`` the blocks."""
    if _same(value, before):
        return before
    if isinstance(value, Value):
        return UNDEFINED if value in inside else value
    if isinstance(value, tuple):
        return tuple(_on_a_raising_path(item, UNDEFINED, inside) for item in value)
    if isinstance(value, Record):
        return value.changed({key: _on_a_raising_path(item, UNDEFINED, inside)
                              for key, item in value.items.items()})
    return value


def _iterated_names(node: ast.expr) -> set[str]:
    """The names a ``for`` loop over ``node`` reads rows of as it runs (``p`` in
    ``enumerate(p)`` or ``p[1:]``; not the bounds of a ``range``, read once)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    return set().union(*(_iterated_names(child) for child in ast.iter_child_nodes(node)))


class StatementsMixin:
    """Statement conversion for :class:`autodiff.frontend.convert.Converter`."""

    # ----- statement lists and early exits -----

    def body(self, stmts: list[ast.stmt]) -> None:
        """Convert statements until one leaves; guard the rest when one may have left."""
        for index, stmt in enumerate(stmts):
            if self.env.get(RAISED) is TRUE:
                return  # after a raise, as after a return
            left = self.exit_state()
            if left is TRUE:
                return  # unreachable, as in Python
            if left is not FALSE:
                self.guarded(stmt, left, stmts[index:])
                return
            self.at(stmt)
            rest = stmts[index + 1:]
            if isinstance(stmt, ast.If) and rest and (
                    always_exits(stmt.body) or always_exits(stmt.orelse)):
                # 'if c: return a' then more code: the code after is the other branch.
                body, orelse = ((stmt.body, stmt.orelse + rest) if always_exits(stmt.body)
                                else (stmt.body + rest, stmt.orelse))
                self.statement(ast.copy_location(ast.If(stmt.test, body, orelse), stmt), False)
                return
            try:
                self.statement(stmt, first=index == 0 and self.at_function_start)
            except Unbound as unbound:
                self.raise_name_error(unbound)
            self.at_function_start = False

    def exit_state(self) -> Operand:
        """TRUE, FALSE, or a runtime truth value: has a return/break/continue run?"""
        dynamic = []
        for flag in FLAGS:
            value = self.env.get(flag, FALSE)
            if value is TRUE or (isinstance(value, Const) and value.value is True):
                return TRUE
            if isinstance(value, Value):
                dynamic.append(value)
        if not dynamic:
            return FALSE
        left = dynamic[0]
        for value in dynamic[1:]:
            left = self.builder.emit(OPS["truth_or"], (left, value))
        return left

    def guarded(self, stmt: ast.stmt, left: Operand, rest: list[ast.stmt]) -> None:
        def run_rest():
            for flag in FLAGS:
                if flag in self.env:
                    self.env[flag] = FALSE
            self.body(rest)

        cond = self.emit(stmt, "truth_not", (left,))
        self.branch(stmt, cond, run_rest, lambda: None)

    def stmt_Return(self, stmt: ast.Return) -> None:
        if stmt.value is None:
            raise self.error(stmt, "the function returns None; it must return a number")
        self.env[RESULT] = self.expr(stmt.value)
        self.refuse_exception_uses(stmt, "return", (self.env[RESULT],))
        self.env[RETURNED] = TRUE
        self.return_location = self.builder.loc

    def stmt_Break(self, stmt: ast.Break) -> None:
        self.env[BROKE] = TRUE

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        self.env[CONTINUED] = TRUE

    # ----- with ad.no_grad(): -----

    def stmt_With(self, stmt: ast.With) -> None:
        item = stmt.items[0]
        call = item.context_expr
        manager = (self.expr(call.func) if len(stmt.items) == 1 and isinstance(call, ast.Call)
                   and not call.args and not call.keywords and item.optional_vars is None
                   else None)
        if not (isinstance(manager, Const) and manager.value is no_grad):
            raise self.error(stmt, "'with' statements are not supported, except "
                             "'with ad.no_grad():'", hint="move the block out of the function")
        # Every value entering the block is cut from its gradient, so nothing the block
        # computes carries one; names the block leaves alone get their values back.
        cut = {}
        for name, value in self.env.items():
            if isinstance(value, Value) and name.isidentifier():
                cut[name] = self.env[name] = self.emit(stmt, "stop_gradient", (value,))
        self.body(stmt.body)
        for name, stopped in cut.items():
            if self.env.get(name) is stopped:
                self.env[name] = stopped.node.args[0]

    # ----- branches -----

    def stmt_If(self, stmt: ast.If) -> None:
        cond = self.expr(stmt.test)
        self.branch(stmt, cond, lambda: self.body(stmt.body), lambda: self.body(stmt.orelse))

    def branch(self, node: ast.AST, cond: Operand, then, orelse) -> None:
        """Run ``then`` or ``orelse`` (callables converting code) under ``cond``."""
        cond = self.known_truth(node, cond)  # (of a structure: objects.py)
        self.refuse_exception_uses(node, "branch", (cond,))
        if isinstance(cond, Const):
            (then if cond.value else orelse)()
            return
        if isinstance(cond, tuple):
            (then if cond else orelse)()
            return
        before, loc = self.env, self.builder.loc
        blocks, envs = [], []
        for convert in (then, orelse):
            block = Block()
            self.env = dict(before)
            with self.builder.inside(block):
                try:
                    convert()
                except Unbound as unbound:  # (an expression: 'a if c else b')
                    self.raise_name_error(unbound)
            blocks.append(block)
            envs.append(self.env)
        outs = self.merge_paths(before, blocks, envs)
        self.builder.loc = loc
        if outs or any(isinstance(node, Region) or node.op.effect  # (a print in a branch)
                       for block in blocks for node in block.nodes):
            self.builder.nodes.append(Region("if", (cond,), outs, blocks, loc, self.builder.phase))

    def merge_paths(self, before: dict, blocks: list[Block], envs: list[dict]) -> list[Value]:
        """Make ``self.env`` the names after alternative ``blocks`` that left them as
        ``envs`` say (from ``before``); return the values the blocks yield. A block that
        always raises yields nothing anyone reads: the names keep the other paths'
        values, and when every path raises, the code after never runs. So does a name a
        path that returned left unknown (:class:`Stale`): only its result is read."""
        raised = [env.pop(RAISED, FALSE) is TRUE for env in envs]
        self.env = dict(before)
        if all(raised):
            self.env[RAISED] = TRUE
            return []
        returned = [_true(env.get(RETURNED, FALSE)) for env in envs]
        inside = defined_values(blocks)
        outs: list[Value] = []
        for name in dict.fromkeys(n for env, gone in zip(envs, raised) if not gone for n in env):
            unset = FALSE if name in FLAGS else UNDEFINED  # (a loop drops its break flag)
            values = [env.get(name, unset) for env in envs]
            unread = [gone or done and isinstance(value, Stale)
                      for gone, done, value in zip(raised, returned, values)]
            read = [value for value, skip in zip(values, unread) if not skip]
            kept = read[0] if read else next(v for v, gone in zip(values, raised) if not gone)
            values = [_on_a_raising_path(kept, before.get(name, UNDEFINED), inside) if skip
                      else value for value, skip in zip(values, unread)]
            self.env[name] = self.merge(name, values, blocks, outs)
        return outs

    def merge(self, name: str, values: list, blocks: list[Block], outs: list[Value]):
        """The value of ``name`` after alternative blocks that left it ``values``."""
        first = values[0]
        if all(_same(first, v) for v in values[1:]):
            return first
        stale = next((v for v in values if isinstance(v, (Stale, Deleted))), None)
        if stale is not None:
            return stale
        if all(isinstance(v, tuple) and len(v) == len(first) for v in values):
            return tuple(self.merge(name, list(items), blocks, outs) for items in zip(*values))
        if all(self.built_lists.get(id(v)) is v or isinstance(v, Value) and v.shape is LIST
               for v in values):  # [a] on one path, [a, b] on another: built at run time
            values = [self.in_block(block, lambda v=v: self.as_runtime_list(None, v))
                      for block, v in zip(blocks, values)]
        if all(isinstance(v, Record) and (v.kind, v.type) == (first.kind, first.type)
               and list(v.items) == list(first.items) for v in values):
            origins = {id(v.origin) for v in values}
            if len(origins) > 1 and any(v.origin in self.builder.versions for v in values):
                return Ambiguous(name, "holds a dict or an object changed on some paths and "
                                 "another one on others")
            merged = Record(first.kind, first.type,
                            {key: self.merge(name, [v.items[key] for v in values], blocks,
                                             outs) for key in first.items},
                            all(v.caller for v in values),
                            first.whole if all(v.whole is first.whole for v in values) else None,
                            first.origin if len(origins) == 1 else None)
            if len(origins) == 1 and first.origin in self.builder.versions:
                self.builder.versions[first.origin] = merged
            return merged
        if all(isinstance(v, Record) for v in values):  # a key written on one path only
            return Ambiguous(name, "holds a dict or an object with different keys")
        if not all(isinstance(v, (Value, Const)) for v in values) or any(
            isinstance(v, Const) and v.path is not None and not _data(v.value) for v in values
        ):
            return Ambiguous(name)
        out = Value(readable_name(name))
        tokens = [_token(v) for v in values if v is not UNDEFINED]
        out.shape = tokens[0] if tokens and all(t is tokens[0] for t in tokens) else Token()
        out.floating = all(_floating(v) for v in values if v is not UNDEFINED)
        self.builder.sources[out] = list(values)
        for block, value in zip(blocks, values):
            block.results.append(value)
        outs.append(out)
        return out

    def in_block(self, block: Block, convert):
        """What ``convert()`` gives, emitting into ``block`` (a path already converted)."""
        with self.builder.inside(block):
            return convert()

    def expr_IfExp(self, node: ast.IfExp) -> Operand:
        return self.choose(node, self.expr(node.test), node.body, node.orelse)

    def choose(self, node: ast.AST, cond: Operand, then: ast.expr, orelse: ast.expr) -> Operand:
        key = f"<choice {id(node)}>"

        def pick(branch):
            return lambda: self.env.__setitem__(key, self.expr(branch))

        self.branch(node, cond, pick(then), pick(orelse))
        return self.env.pop(key)

    def expr_BoolOp(self, node: ast.BoolOp) -> Operand:
        """``a and b`` is ``b if a else a``; ``b`` is only computed when it is needed."""
        result = self.expr(node.values[0])
        for item in node.values[1:]:
            result = self.short_circuit(node, result, item, isinstance(node.op, ast.And))
        return result

    def short_circuit(self, node: ast.BoolOp, left: Operand, right: ast.expr, is_and: bool):
        if isinstance(left, Const):
            return self.expr(right) if bool(left.value) == is_and else left
        block = Block()
        saved = self.env
        self.env = dict(saved)
        raises = False
        with self.builder.inside(block):
            try:
                value = self.expr(right)
            except Unbound:  # it raises when 'right' runs: a branch, below
                raises = True
        self.env = saved
        if not block.nodes and not raises:  # nothing to skip: a plain 'and' / 'or'
            return self.emit(node, "truth_and" if is_and else "truth_or", (left, value))
        key = f"<choice {id(node)}>"
        taken, other = (lambda: self.env.__setitem__(key, self.expr(right)),
                        lambda: self.env.__setitem__(key, left))
        self.branch(node, left, *((taken, other) if is_and else (other, taken)))
        return self.env.pop(key)

    # ----- loops -----

    def stmt_For(self, stmt: ast.For) -> None:
        saved = self.iterated
        self.iterated = saved | {name for name in _iterated_names(stmt.iter)
                                 if isinstance(self.env.get(name), Value)}
        try:
            exited = self.for_loop(stmt)
        finally:
            self.iterated = saved
        self.loop_else(stmt, exited)

    def loop_else(self, stmt: ast.For | ast.While, exited: Operand) -> None:
        """The ``else`` of a loop: it runs when the loop ended without ``break`` (or
        ``return``), that is when ``exited``, the last step's exit flag, is false."""
        if stmt.orelse:
            self.branch(stmt, exited, lambda: None, lambda: self.body(stmt.orelse))

    def for_loop(self, stmt: ast.For) -> Operand:
        """The loop; returns whether it was left by ``break`` or ``return``."""
        iteration = unrolled_for_a_generator(self.iteration(stmt.iter), stmt.body)
        if iteration[0] == "unroll":
            for item in iteration[1]:
                if self.exit_state() is TRUE:
                    break  # a break or return known while compiling: no more steps
                self.refuse_exit_before_step(stmt)
                self.assign(stmt.target, item)
                self.body(stmt.body)
                self.env.pop(CONTINUED, None)  # 'continue' ends its step only
            exited = self.exit_flags()
            self.env.pop(BROKE, None)  # 'break' ends the loop, not the code after it
            return exited
        if iteration[0] == "guarded":
            self.guarded_steps(stmt, *iteration[1:])
            exited = self.exit_flags()
            self.env.pop(BROKE, None)
            return exited
        _, start, stop, step, reverse, element = iteration

        def bind(index: Value) -> None:
            self.assign(stmt.target, element(index))

        return self.loop(stmt, "for", stmt.body, (start, stop, step, Const(None)), bind=bind,
                         target=stmt.target, reverse=reverse)

    def refuse_exit_before_step(self, stmt: ast.For) -> None:
        """A step of an unrolled loop after one that may have left it: refused."""
        if self.exit_state() is not FALSE:
            raise self.error(stmt, "'break' and 'return' inside a loop over a list or tuple "
                             "known while compiling (unrolled) are supported in its last "
                             "step only", hint="loop over a range")

    def guarded_steps(self, stmt: ast.For, makers: list, length: Operand) -> None:
        """An unrolled loop whose number of steps is known only at run time: step ``i``
        (its items read inside it) runs under ``if i < length``. The lists the body
        appends to are built at run time, as the steps that run may append."""
        for name in appended_names(stmt.body):
            self.env[name] = self.as_runtime_list(stmt, self.env.get(name, UNDEFINED))
        for i, make in enumerate(makers):
            self.refuse_exit_before_step(stmt)

            def step(make=make) -> None:
                self.assign(stmt.target, make())
                self.body(stmt.body)
                self.env.pop(CONTINUED, None)

            runs = self.emit(stmt.iter, "less", (Const(i), length))
            self.branch(stmt, runs, step, lambda: None)

    def stmt_While(self, stmt: ast.While) -> None:
        moved = test_moved_into_body(stmt)  # while (n := ...) > 0: the body reads n
        if moved is not None and stmt.orelse:
            raise self.error(stmt, "a 'while' loop whose test binds a name (:=) and that has "
                             "an 'else:' is not supported", hint="bind the name in the body, "
                             "or move the else: block after the loop")
        if moved is not None:
            stmt = moved
        self.loop_else(stmt, self.loop(stmt, "while", stmt.body, (), test=stmt.test))

    def loop(self, stmt, kind: str, body: list[ast.stmt], header: tuple, *, bind=None,
             target=None, reverse=False, test=None) -> Operand:
        """The loop as a region; returns whether it was left by ``break`` or ``return``
        (the last step's exit flag, false when no step ran)."""
        loc = self.builder.loc
        names = assigned_names(body, target)
        names += [n for n in viewed_names(body)  # (arrays a view the body updates reads)
                  if isinstance(self.env.get(n), Value) and n not in names]
        exits = loop_exits(body)
        appended = appended_names(body)
        for name in appended:
            self.env[name] = self.as_runtime_list(stmt, self.env.get(name, UNDEFINED))
        for name in item_set_names(body):  # a list written out, filled by index: at run time
            current = self.env.get(name)
            if isinstance(current, Record) and current.kind == "dict" and not current.caller:
                self.refuse_shared(stmt, f"the loop setting items of '{name}'", name, current,
                                   f"{name} = dict({name})")
                self.env[name] = self.as_runtime_dict(stmt, name, current)
            if isinstance(current, CallerList):
                raise self.error(stmt, f"the loop sets items of the list '{name}' the caller "
                                 "passed, a number of times known only when the code runs",
                                 hint=f"fill a list of your own (filled = [None] * n) and "
                                 "return it")
            if self.built_lists.get(id(current)) is current and name not in appended:
                self.refuse_shared(stmt, f"the loop filling '{name}' by index", name, current,
                                   f"{name} = list({name})")
                self.env[name] = self.as_runtime_list(stmt, current)
        if exits:
            names = [*names, *(n for n in (RETURNED, RESULT) if n in exits)]
            if RETURNED in exits or BROKE in exits:
                names.append(EXIT)
        # A name a try left unknown on some path (before the loop, or at the end of an
        # iteration) is not carried: the body may assign it before reading it.
        stale = {n: self.env[n] for n in names
                 if isinstance(self.env.get(n), (Stale, Deleted))}  # (or deleted)
        names = [n for n in names if n not in stale]
        init = [self.env.get(n, FALSE if n in (RETURNED, EXIT) else UNDEFINED) for n in names]
        # The caller's dict the body writes keys into (params[f"h{t}"] = h): written as the
        # code runs, not carried; its keys known while compiling stay as they are.
        rebound, item_set = rebound_names(body), item_set_names(body)
        callers = [value.whole for name, value in zip(names, init)
                   if isinstance(value, Record) and value.whole is not None and value.kind ==
                   "dict" and name in item_set and name not in rebound]
        kept = [j for j, v in enumerate(init) if not (isinstance(v, Record) and v.whole
                                                     in callers)]
        names, init = [names[j] for j in kept], [init[j] for j in kept]
        for name, value in zip(names, init):
            if isinstance(value, Record) and value.whole is not None:
                raise self.error(stmt, f"the loop writes into the {value.describe()} "
                                 f"'{name}' the caller passed, a number of times known only "
                                 "when the code runs", hint="compute the value in a name of "
                                 "its own in the loop, and write it after the loop")
            if isinstance(value, Record):
                raise self.error(stmt, f"'{name}' is changed by the loop but holds a "
                                 f"{value.describe()} before it, whose keys and fields "
                                 "are known while compiling, not carried through a loop",
                                 hint="carry the arrays it holds in names of their own "
                                 "through the loop, and put them in it after the loop")
            if isinstance(value, Ambiguous) or not isinstance(value, (Value, Const)):
                raise self.error(stmt, f"'{name}' is changed by the loop but holds a "
                                 "tuple or a function before it", hint="use an array")
        tokens = [LIST if n in appended else _token(v) for n, v in zip(names, init)]
        floating = [_floating(v) for v in init]
        saved, saved_fresh, saved_carried = self.env, self.loop_fresh_names, self.loop_carried
        self.loop_fresh_names = frozenset(n for n, v in zip(names, init) if v is UNDEFINED)
        self.loop_carried = frozenset(names)
        written = self.builder.callers_written_in_loops
        added = [whole for whole in callers if whole not in written]
        # Each pass only forgets facts (a shared shape, floating) or drops a name left
        # unknown: it ends within 3n + 1.
        for _ in range(3 * len(names) + 1):
            written.update(added)
            try:
                blocks, results = self.loop_blocks(kind, names, init, tokens, floating, body,
                                                   bind, test, stale)
            finally:
                written.difference_update(added)
            self.env = saved
            left = {n: r for n, r in zip(names, results) if isinstance(r, (Stale, Deleted))}
            if left:
                stale.update(left)
                kept = [j for j, n in enumerate(names) if n not in left]
                names, init, tokens, floating = ([items[j] for j in kept] for items in (
                    names, init, tokens, floating))
                continue
            changed = False
            for j, result in enumerate(results):
                if result is UNDEFINED or names[j] == EXIT:
                    continue
                if _token(result) is not tokens[j] and tokens[j] is not None:
                    tokens[j] = None
                    changed = True
                if floating[j] and not _floating(result):
                    floating[j], changed = False, True
            if not changed:
                break
        self.loop_fresh_names, self.loop_carried = saved_fresh, saved_carried
        outs = []
        for name, token, is_float, start, result in zip(names, tokens, floating, init, results):
            out = Value(readable_name(name))
            out.shape, out.floating = token if token is not None else Token(), is_float
            self.builder.sources[out] = [start, result]
            outs.append(out)
        self.builder.loc = loc
        region = Region(kind, (*header, *init), outs, blocks, loc, self.builder.phase)
        region.reverse = reverse
        if EXIT in names:
            region.until = names.index(EXIT)
        self.builder.nodes.append(region)
        for name, out in zip(names, outs):
            if name != EXIT:
                self.env[name] = out
        self.env.update(stale)
        for flag in (BROKE, CONTINUED):
            self.env.pop(flag, None)
        return outs[names.index(EXIT)] if EXIT in names else FALSE

    def loop_blocks(self, kind, names, init, tokens, floating, body, bind, test, stale):
        """One conversion of a loop's blocks under assumed shape tokens of the carried
        values (``stale``: names left unknown at the start of an iteration)."""

        def params():
            values = []
            for name, token, is_float, start in zip(names, tokens, floating, init):
                value = Value(readable_name(name))
                value.shape, value.floating = token if token is not None else Token(), is_float
                self.builder.sources[value] = [start]
                values.append(value)
            return values

        def enter(carried):
            self.env = dict(self.env)
            self.env.update(stale)
            for name, value in zip(names, carried):
                if name in (RETURNED, EXIT):
                    continue  # false at the start of every iteration that runs
                self.env[name] = UNDEFINED if name == RESULT else value
            for flag in FLAGS:
                self.env[flag] = FALSE

        blocks = []
        outer = self.env
        if kind == "while":
            carried = params()
            cond_block = Block(carried)
            enter(carried)
            with self.builder.inside(cond_block):
                cond_block.results = [self.expr(test)]
            blocks.append(cond_block)
            self.env = outer
        carried = params()
        index = None
        if kind == "for":
            index = Value("i")
            index.shape = token_of(Const(0))
        block = Block(([index] if index is not None else []) + carried)
        enter(carried)
        with self.builder.inside(block):
            if bind is not None:
                index.hint = ""
                bind(index)  # the loop variable names the index when it is the index
                index.hint = index.hint or "i"
            self.body(body)
            if EXIT in names:
                self.env[EXIT] = self.exit_flags()
            block.results = [self.env.get(name, UNDEFINED) for name in names]
        blocks.append(block)
        return blocks, block.results

    def exit_flags(self) -> Operand:
        """True when ``break`` or ``return`` ran in this iteration."""
        flags = [self.env.get(f, FALSE) for f in (RETURNED, BROKE)]
        dynamic = [f for f in flags if isinstance(f, Value)]
        if any(isinstance(f, Const) and f.value is True for f in flags):
            return TRUE
        if not dynamic:
            return FALSE
        return dynamic[0] if len(dynamic) == 1 else self.builder.emit(
            OPS["truth_or"], tuple(dynamic))

    # ----- what a for loop runs over -----

    def iteration(self, node: ast.expr):
        """``("range", start, stop, step, reverse, element)``, ``("unroll", items)``, or
        ``("guarded", makers, length)``: unrolled steps, step ``i`` running when ``i <
        length`` (a length known only at run time) and reading its item with
        ``makers[i]()`` (``zip`` of a list with an array's rows: Python's zip stops at the
        shorter)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            callee = self.name(node.func) if node.func.id not in self.env else None
            fn = callee.value if isinstance(callee, Const) else None
            if fn is range:
                parts = [self.expr(a) for a in node.args]
                if not 1 <= len(parts) <= 3:
                    raise self.error(node, "range() takes one to three arguments")
                start, stop, step = ([Const(0), parts[0], Const(1)] if len(parts) == 1 else
                                     [*parts, Const(1)] if len(parts) == 2 else parts)
                return "range", start, stop, step, False, lambda index: index
            if fn is reversed and len(node.args) == 1:
                inner = self.iteration(node.args[0])
                if inner[0] == "range" and inner[5](Const(0)) == Const(0):
                    return (*inner[:4], not inner[4], inner[5])
                if inner[0] == "unroll":
                    return "unroll", inner[1][::-1]
                raise self.error(node, "reversed() is supported over range() and arrays")
            if fn is enumerate:
                inner = self.iteration(node.args[0])
                offset = self.expr(node.args[1]) if len(node.args) > 1 else Const(0)
                if inner[0] == "unroll":
                    return "unroll", [(self.emit(node, "add", (Const(i), offset)), item)
                                      for i, item in enumerate(inner[1])]
                if inner[0] == "guarded":
                    return "guarded", [
                        lambda i=i, make=make: (self.emit(node, "add", (Const(i), offset)),
                                                make())
                        for i, make in enumerate(inner[1])], inner[2]
                count, element = self.counted(node.args[0], inner)
                return ("range", Const(0), count, Const(1), False,
                        lambda index: (self.emit(node, "add", (index, offset)), element(index)))
            if fn is zip:
                parts = [self.iteration(a) for a in node.args]
                if all(p[0] == "unroll" for p in parts):
                    return "unroll", list(zip(*(p[1] for p in parts)))
                if any(p[0] != "range" for p in parts):  # a list with an array's rows
                    return self.zip_unrolled(node, parts)
                counted = [self.counted(a, p) for a, p in zip(node.args, parts)]
                count = counted[0][0]
                for other, _ in counted[1:]:
                    count = self.emit(node, "minimum", (count, other))
                return ("range", Const(0), count, Const(1), False,
                        lambda index: tuple(element(index) for _, element in counted))
        iterable = self.expr(node)
        if isinstance(iterable, Record):
            return "unroll", list(self.static_items(node, iterable))
        if isinstance(iterable, Const) and isinstance(iterable.value, (tuple, list)):
            return "unroll", [Const(v) for v in iterable.value]
        if isinstance(iterable, tuple):
            return "unroll", list(iterable)
        if isinstance(iterable, Value) and iterable.shape is DICT:
            raise self.error(node, f"a loop over '{ast.unparse(node)}', a dict whose keys are "
                             "known only when the code runs, is not supported",
                             hint="read its items by key (d[k]), or keep the keys in a list")
        if isinstance(iterable, Value):
            count = self.emit(node, "len", (iterable,))
            op = "list_getitem" if iterable.shape is LIST else "listed_item" if isinstance(
                iterable.node, Node) and iterable.node.op.name == "list_getitem" else "getitem"
            return ("range", Const(0), count, Const(1), False,
                    lambda index: self.emit(node, op, (iterable, index)))
        raise self.error(node, f"cannot loop over '{ast.unparse(node)}'",
                         hint="loop over range(...), an array, a list, enumerate or zip")

    def zip_unrolled(self, node: ast.Call, parts: list) -> tuple:
        """``zip()`` of lists known while compiling with ranges or arrays' rows, unrolled
        over the shortest list. Python's zip stops at the shortest of all: a length
        known now shortens the unrolling; one known only at run time (an array's rows)
        guards the steps, whose items are then read inside them."""
        steps, length, items = None, None, []
        for arg, part in zip(node.args, parts):
            if part[0] == "range":
                span, element = self.counted(arg, part)
                items.append(lambda i, element=element: element(Const(i)))
                if isinstance(span, Const) and type(span.value) is int:
                    steps = span.value if steps is None else min(steps, span.value)
                else:
                    length = span if length is None else self.emit(node, "minimum",
                                                                   (length, span))
                continue
            makers = part[1] if part[0] == "guarded" else [
                lambda item=item: item for item in part[1]]
            steps = len(makers) if steps is None else min(steps, len(makers))
            items.append(lambda i, makers=makers: makers[i]())
            if part[0] == "guarded":
                length = part[2] if length is None else self.emit(node, "minimum",
                                                                  (length, part[2]))
        makers = [lambda i=i: tuple(item(i) for item in items) for i in range(max(steps, 0))]
        if length is None:
            return "unroll", [make() for make in makers]
        return "guarded", makers, length

    def counted(self, node: ast.expr, iteration) -> tuple:
        """``(length, element)`` of a range or array iteration, indexed from 0 (from its
        end for ``reversed(range(...))``)."""
        _, start, stop, step, reverse, element = iteration
        if start == Const(0) and step == Const(1) and not reverse:
            return stop, element
        bounds = (start, stop, step)
        if all(isinstance(b, Const) and type(b.value) is int for b in bounds):
            span = Const(len(range(*(b.value for b in bounds))))  # known now
        else:
            span = self.emit(node, "len", (self.emit(node, "range_of", bounds),))

        def at(index: Operand) -> Operand:
            if reverse:  # the index-th from the end: range's element span - 1 - index
                last = self.emit(node, "subtract", (span, Const(1)))
                index = self.emit(node, "subtract", (last, index))
            return element(self.emit(node, "add", (start, self.emit(node, "multiply",
                                                                     (index, step)))))

        return span, at
