"""``try``/``except``/``else``/``finally`` and ``raise`` in differentiated code.

A ``try`` statement becomes a ``try`` region (see :class:`autodiff.graph.nodes.Region`):
its body and one block per handler, each yielding the names after the statement,
as the branches of an ``if`` do. The derivative runs the user's ``try`` as it is
and differentiates the path it took.

An exception raised part way through the body leaves the names the body assigned
before it as they were then, which the graph cannot know: such a name (see
:func:`autodiff.frontend.scan.assigned_part_way`) is :class:`Stale` in a handler,
and after the statement when a handler leaves it so; reading it there is refused.

``finally:`` runs twice in the graph: after the statement, and, for an exception
leaving it, in a handler of every exception (``except:``) that runs the block
and raises the exception again. ``else:`` runs at the end of the body, past the part
the handlers guard (a ``try_else`` node marks where).

``raise`` is a statement of the forward sweep; nothing after it in its block runs,
and a path that always raises is merged with no other (as after ``return``).
``except E as e:`` binds ``e`` to a ``caught`` node, which reaches statements run for
their effect alone (``print``, logging, warnings, ``raise ... from e``).
"""

from __future__ import annotations

import ast

from autodiff.frontend.scan import FLAGS, RAISED, assigned_names, assigned_part_way, leaves_early
from autodiff.frontend.statements import FALSE, TRUE, Stale
from autodiff.graph.ir import UNDEFINED, Block, Const, Node, Operand, Region, Value
from autodiff.ops.exceptions import CAUGHT, TRY_ELSE, raise_op

# The ops an exception a handler caught may reach: statements run for their effect and
# the strings they print.
READS_EXCEPTIONS = frozenset({"effect_call", "warning", "assertion", "raise", "formatted"})

# How to give a name a value on every path through a try.
STALE_HINT = ("assign it in every handler (and before reading it there), or let the try's "
              "body assign it only in its last statement")


class ExceptionsMixin:
    """``try`` and ``raise``, for :class:`autodiff.frontend.convert.Converter`."""

    # ----- raise -----

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        cause = () if stmt.cause is None else (self.expr(stmt.cause),)
        if stmt.exc is None:
            if not self.handling:
                raise self.error(stmt, "'raise' with no exception re-raises the one being "
                                 "handled, and is supported inside an except block only",
                                 hint="name the exception to raise")
            self.emit(stmt, raise_op("again"), ())
        elif isinstance(stmt.exc, ast.Call) and _exception_class(self.expr(stmt.exc.func)):
            call = stmt.exc
            args, kwargs = self.passed_whole(call, *self.call_arguments(call))
            op = raise_op("new", len(args), tuple(kwargs), bool(cause))
            self.emit(stmt, op, (self.expr(call.func), *args, *kwargs.values(), *cause))
        else:
            exception = self.expr(stmt.exc)
            if not (_exception_class(exception) or self.holds_exception(exception)):
                raise self.error(stmt, f"'raise {ast.unparse(stmt.exc)}' raises what is not "
                                 "an exception autodiff can follow",
                                 hint="raise an exception class, called with its message "
                                 "(raise ValueError(...)), or the one an except block caught")
            self.emit(stmt, raise_op("object", cause=bool(cause)), (exception, *cause))
        self.env[RAISED] = TRUE

    def raise_name_error(self, unbound) -> None:
        """Python's NameError where code that may not run reads a name bound nowhere
        (:class:`autodiff.frontend.statements.Unbound`): the path raises when it runs."""
        self.emit(unbound.node, raise_op("new", 1), (Const(NameError, path="NameError"), Const(unbound.message)))
        self.env[RAISED] = TRUE

    # ----- try -----

    def stmt_Try(self, stmt: ast.Try) -> None:
        if not stmt.finalbody:
            self.try_except(stmt)
            return
        early = leaves_early(stmt.finalbody)
        if early is not None:
            raise self.error(early, f"'{ast.unparse(early).split()[0]}' inside a finally: "
                             "block is not supported (it would drop the exception leaving "
                             "the try)", hint="move it after the try statement")
        before, loc = self.env, self.builder.loc
        # The statement without its finally:, guarded by a handler of every exception
        # that runs the finally: block and raises the exception again.
        guarded = Block()
        self.env = dict(before)
        with self.builder.inside(guarded):
            if stmt.handlers:
                self.try_except(stmt)
            else:
                self.body(stmt.body)
        paths, envs = [guarded], [self.env]
        assigned = (assigned_part_way(stmt.body) if not stmt.handlers else assigned_names(
            [*stmt.body, *stmt.orelse, *(s for h in stmt.handlers for s in h.body)]))
        cleanup = Block()
        self.env = self.unknown_after(before, assigned, stmt, stmt.finalbody[0], "finally")
        with self.builder.inside(cleanup):
            self.at(stmt.finalbody[0])
            self.body(stmt.finalbody)
            if self.env.get(RAISED) is not TRUE:
                self.emit(stmt, raise_op("again"), ())
                self.env[RAISED] = TRUE
        paths.append(cleanup)
        envs.append(self.env)
        outs = self.merge_paths(before, paths, envs)
        self.builder.loc = loc
        self.builder.nodes.append(Region("try", (Const(None),), outs, paths, loc,
                                         self.builder.phase))
        # and the finally: block on the way out, whether the statement left early or not
        flags = {flag: self.env[flag] for flag in FLAGS if flag in self.env}
        self.env.update(dict.fromkeys(flags, FALSE))
        self.body(stmt.finalbody)
        self.env.update(flags)

    def try_except(self, stmt: ast.Try) -> None:
        """``try``/``except``/``else``, as a ``try`` region."""
        before, loc = self.env, self.builder.loc
        catches = tuple(self.caught_classes(handler) for handler in stmt.handlers)
        body = Block()
        self.env = dict(before)
        with self.builder.inside(body):
            self.guarding += 1
            self.body(stmt.body)
            self.guarding -= 1
            if stmt.orelse and self.env.get(RAISED) is not TRUE:
                self.emit(stmt, TRY_ELSE, ())
                self.body(stmt.orelse)
        paths, envs = [body], [self.env]
        part_way = assigned_part_way(stmt.body)
        for handler in stmt.handlers:
            block = Block()
            self.env = self.unknown_after(before, part_way, stmt, handler, "handler")
            self.handling += 1
            with self.builder.inside(block):
                self.at(handler)
                if handler.name is not None:
                    self.env[handler.name] = self.emit(handler, CAUGHT, (), hint=handler.name)
                    self.builder.caught = True
                self.body(handler.body)
                if handler.name is not None:
                    self.env[handler.name] = UNDEFINED  # (Python unbinds it at the end)
            self.handling -= 1
            paths.append(block)
            envs.append(self.env)
        outs = self.merge_paths(before, paths, envs)
        for name, value in self.env.items():  # read after the statement: another place
            if isinstance(value, Stale) and value.statement is stmt:
                self.env[name] = value.after()
        self.builder.loc = loc
        self.builder.nodes.append(Region("try", catches, outs, paths, loc, self.builder.phase))

    def unknown_after(self, before: dict, names: list[str], stmt: ast.Try, where: ast.AST,
                      place: str) -> dict:
        """The names as a handler (or a finally: block run for an exception) sees them:
        ``names`` may hold what the body left them part way."""
        env = dict(before)
        for name in names:
            env[name] = Stale(name, stmt, where.lineno, place)
        return env

    def caught_classes(self, handler: ast.ExceptHandler) -> Operand:
        """The exception classes ``handler`` catches: a constant naming a class, a tuple
        of them (or a global tuple of them, by its name), or ``Const(None)`` for a bare
        ``except:``."""
        if handler.type is None:
            return Const(None)
        classes = self.expr(handler.type)
        if isinstance(handler.type, ast.Name) and not self.binds(handler.type.id) and (
                isinstance(classes, tuple) and all(_exception_class(c) for c in classes)):
            # a global tuple of classes (RETRIED = (ValueError, ...)), read by its name
            return Const(tuple(item.value for item in classes), path=handler.type.id,
                         scope=self.scope_of(handler.type.id))
        items = classes if isinstance(classes, tuple) else (classes,)
        if not all(_exception_class(item) and item.path is not None for item in items):
            raise self.error(handler, f"'except {ast.unparse(handler.type)}' needs exception "
                             "classes known while compiling, by their names",
                             hint="name the classes in the except clause (except "
                             "(ValueError, np.linalg.LinAlgError):), or a global tuple of "
                             "them")
        return classes

    # ----- the exception a handler caught -----

    def holds_exception(self, operand: Operand) -> bool:
        """Whether ``operand`` is (on some path) an exception a handler caught, or a
        string made of one (``str(e)``, ``f"{e}"``)."""
        seen: set[Value] = set()
        todo = list(_values(operand))
        while todo:
            value = todo.pop()
            if value in seen:
                continue
            seen.add(value)
            node = value.node
            if isinstance(node, Node) and node.op is CAUGHT:
                return True
            if isinstance(node, Node) and node.op.name == "formatted":
                todo.extend(node.inputs())
            todo.extend(v for source in self.builder.sources.get(value, ())
                        for v in _values(source))
        return False

    def refuse_exception_uses(self, node: ast.AST, op_name: str, operands) -> None:
        """An exception a handler caught reaching anything but an effect statement."""
        if op_name in READS_EXCEPTIONS or not self.builder.caught:
            return
        if any(self.holds_exception(operand) for operand in operands):
            raise self.error(node, f"'{ast.unparse(node).splitlines()[0]}' uses the exception an "
                             "except block caught, which differentiated code only prints, "
                             "logs, warns or raises",
                             hint="compute from the values you have, not from the exception")


def _exception_class(operand: Operand) -> bool:
    return isinstance(operand, Const) and isinstance(operand.value, type) and issubclass(
        operand.value, BaseException)


def _values(operand: Operand):
    if isinstance(operand, Value):
        yield operand
    elif isinstance(operand, tuple):
        for item in operand:
            yield from _values(item)


__all__ = ["READS_EXCEPTIONS", "STALE_HINT", "ExceptionsMixin"]
