"""Statements there for their side effects: ``print(...)``, ``logger.info(...)``,
``warnings.warn(...)`` and ``assert``, run in the forward sweep where the user wrote
them and never differentiated; and the strings they print, f-strings, ``%`` and
``str.format``, written into the generated code as the user wrote them.

A call made as a statement runs where the user wrote it, in the forward sweep, once
per call: print, logging and warnings, which only read what they are passed; the
user's own function (whose body is compiled, with the same rule); a library's
function or a method of a library's object (``np.random.seed(s)``, ``rng.shuffle(order)``),
which may change what it is passed in place: an array the function made (which the
graph holds as a value) is refused, and so is a value carrying a gradient
(``transforms/activity``), the derivative not following such a change. In a
``try``'s body, a function autodiff has as an op is kept too, for the exception it
may raise (``np.linalg.cholesky(A)``). A method of an array as a statement
(``x.sort()``) is refused. ``np.add.at(K, idx, v)`` on an array the function created
is an element update (``frontend/updates.py``).
"""

from __future__ import annotations

import ast
import builtins
import logging
import types
import warnings

import numpy as np

from autodiff.frontend.functions import LocalFunction
from autodiff.frontend.structures import Record, contains_record
from autodiff.graph.ir import Const, Node, Operand, Region, Value
from autodiff.graph.scopes import MISSING
from autodiff.graph.shapes import SCALAR, token_of
from autodiff.ops import registry
from autodiff.ops.calls import WARNING, assertion_op, effect_call_op, formatted_op
from autodiff.user_code import is_library_code

# Builtins giving a string to print: str(loss), repr(x), format(loss, ".3f").
TEXT_BUILTINS = frozenset({builtins.str, builtins.repr, builtins.ascii, builtins.format})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical",
                          "exception", "log"})
_MODULE_FUNCTIONS = frozenset({builtins.print, warnings.warn, warnings.warn_explicit,
                               *(getattr(logging, name) for name in _LOG_METHODS
                                 if hasattr(logging, name))})


_USERS = object()  # a method of the user's own object, compiled like any function of theirs

# Unbuffered updates of an array the function created: differentiated as element updates.
_UNBUFFERED = (np.add.at, np.subtract.at)


def _is(value, fn) -> bool:
    """Whether ``value`` is ``fn``, a method of a NumPy ufunc (read anew at each access,
    equal to the others)."""
    return type(value) is type(fn) and value == fn


def _users_function(fn, filename: str) -> bool:
    """Whether ``fn`` is a function of the user's (compiled, never run as it is) or a
    derivative autodiff generated."""
    if not isinstance(fn, types.FunctionType) or registry.callable_binding(fn) is not None:
        return False  # (a function with a rule of its own is called as it is)
    return getattr(fn, "original", None) is not None or not is_library_code(fn, filename)


def for_its_effects(fn) -> bool:
    """Whether ``fn`` is called for its side effects alone: ``print``, ``warnings.warn``,
    ``logging.info`` and a logger's ``.info(...)`` (any level)."""
    try:
        if fn in _MODULE_FUNCTIONS:
            return True
    except TypeError:  # an unhashable callable
        return False
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, (logging.Logger, logging.LoggerAdapter)) and (
        getattr(fn, "__name__", "") in _LOG_METHODS)


def is_text(operand: Operand) -> bool:
    """Whether an operand is a string: a constant, or one the code formatted."""
    if isinstance(operand, Const):
        return isinstance(operand.value, str)
    node = operand.node if isinstance(operand, Value) else None
    return isinstance(node, Node) and node.op.name == "formatted"


class _Placeholders(ast.NodeTransformer):
    """An f-string with each value it formats replaced by ``a0``, ``a1``, ...; the
    replaced expressions in ``values``."""

    def __init__(self) -> None:
        self.values: list[ast.expr] = []

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.FormattedValue:
        self.values.append(node.value)
        node.value = ast.Name(f"a{len(self.values) - 1}", ast.Load())
        if node.format_spec is not None:
            node.format_spec = self.visit(node.format_spec)
        return node


class EffectsMixin:
    """Side-effect statements and formatted strings, for
    :class:`autodiff.frontend.convert.Converter`."""

    def effect_statement(self, stmt: ast.Expr) -> None:
        """A call written as a statement: kept if made for its side effects, or the
        user's own function; refused otherwise."""
        call = stmt.value
        if not isinstance(call, ast.Call):
            raise self.error(stmt, "expression statements are not supported in "
                             "differentiated code (the result would be discarded)",
                             hint="assign the value, or remove the line")
        callee = self.effect_callee(call.func)
        if isinstance(callee, Const) and any(_is(callee.value, fn) for fn in _UNBUFFERED):
            self.unbuffered_add(call, subtract=_is(callee.value, np.subtract.at))
            return
        method, changes = None, False
        if isinstance(callee, tuple):  # a method of a global object: logger.info
            callee, method, changes = callee
        elif self.guarding and isinstance(callee, Const) and (
                registry.callable_binding(callee.value) is not None):
            self.expr(call)  # a check a try guards: np.linalg.cholesky(A), for its exception
            return
        elif isinstance(callee, Const) and for_its_effects(callee.value):
            if callee.path is None:
                raise self.error(call, f"cannot call '{ast.unparse(call.func)}' here: it has "
                                 "no name generated code can refer to",
                                 hint="call it through a global name")
        elif isinstance(callee, Const) and callee.path is not None and callable(
                callee.value) and registry.callable_binding(callee.value) is None and not (
                _users_function(callee.value, self.source.filename)):
            changes = True  # a library's function, for its effect: np.random.seed(s)
        else:
            callee = self.users_call(stmt, call, callee)
        if isinstance(callee, Const) and callee.value is warnings.warn:
            args, kwargs = self.passed_whole(call, *self.call_arguments(call))
            try:  # warned where the user's code warns (not the generated code's line)
                _, canonical = registry.bind_call(WARNING, None, args, kwargs)
            except TypeError as error:
                raise self.error(call, f"unsupported arguments in the call to "
                                 f"{ast.unparse(call.func)}: {error}") from None
            self.emit(call, WARNING, canonical)
            return
        if callee is not None:
            args, kwargs = self.passed_whole(call, *self.call_arguments(call))
            if changes:
                self.refuse_own_arrays(call, (*args, *kwargs.values()))
            op = effect_call_op(len(args), tuple(kwargs), method, changes)
            self.emit(call, op, (callee, *args, *kwargs.values()))

    def refuse_own_arrays(self, call: ast.Call, operands: tuple) -> None:
        """An array the function made, passed to a call made for its effect, which may
        change it in place: the graph, holding values, would not see the change."""
        for operand in operands:
            for value in (operand if isinstance(operand, tuple) else (operand,)):
                node = value.node if isinstance(value, Value) else None
                if isinstance(node, Node) and node.op.fresh and not node.op.query and (
                        token_of(value) is not SCALAR):
                    raise self.error(call, f"'{ast.unparse(call)}' is called for its effect "
                                     "and is passed an array the function made, which it may "
                                     "change in place: differentiated code does not follow "
                                     "such a change", hint="assign what it returns, or call "
                                     "it on a copy the code does not read again")

    def users_call(self, stmt: ast.Expr, call: ast.Call, callee) -> None:
        """A call of the user's own function as a statement (compiled, its result
        unused); any other call is refused."""
        if callee is _USERS or isinstance(callee, LocalFunction) or isinstance(
                callee, Const) and _users_function(callee.value, self.source.filename):
            self.expr(call)  # the user's function: its body compiled, its result unused
            return
        raise self.error(stmt, f"'{ast.unparse(call)}' is called for its effect, which "
                         "differentiated code does not follow for a method of a value it "
                         "computes (it may change an array in place)",
                         hint="assign what it returns (y = f(x)), or move the call out of "
                         "the differentiated function; print, logging and warnings.warn "
                         "calls are kept, and so are a library's functions called for "
                         "their effect")

    def effect_callee(self, func: ast.expr):
        """What a call made as a statement calls: a function known while compiling;
        ``(obj, name)`` for a method for its effects of a global object (``logger.info``,
        read when the derivative runs); ``_USERS`` for a method of the user's object
        (``self.log(...)``); None for a method of a value the code computes."""
        if not isinstance(func, ast.Attribute):
            return self.expr(func)
        base = self.expr(func.value)
        if isinstance(base, Const) and base.path is not None:
            return self.attribute_of(func, base)
        node = base.node if isinstance(base, Value) else None
        if isinstance(node, Node) and node.op.name == "variable":
            scope, name = node.args[1].value, node.args[0].value
            current = scope.read(name) if scope is not None else None
            if for_its_effects(getattr(current, func.attr, None)):
                return base, func.attr, False
        if isinstance(base, Value) and library_object(base, self.builder):
            return base, func.attr, True  # rng.shuffle(order), a generator passed or made
        self.read_as_structure(func, base, "an object")  # stats.update(h): per structure
        return _USERS if isinstance(base, Record) and base.kind == "fields" else None

    def assert_statement(self, stmt: ast.Assert) -> None:
        """``assert condition, message``, checked where it was written."""
        condition = self.expr(stmt.test)
        if isinstance(condition, Const) and not contains_record(condition) and (
                condition.path is None and bool(condition.value)):
            return  # true while compiling: nothing to check
        if stmt.msg is None:
            self.emit(stmt, assertion_op(False), (condition,))
            return
        message = self.expr(stmt.msg)
        self.emit(stmt, assertion_op(True), (condition, message))

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Operand:
        """``f"{loss:.3f} at {step}"``: the same f-string, over the values it formats."""
        placeholders = _Placeholders()
        template = placeholders.visit(ast.parse(ast.unparse(node), mode="eval").body)
        operands = [self.expr(value) for value in placeholders.values]
        return self.formatted(node, ast.unparse(template), operands)

    def percent_formatted(self, node: ast.BinOp, text: Operand) -> Operand:
        """``"loss %.3f" % loss`` and ``"%s: %s" % (name, value)`` (``text``: the string
        formatted, a constant or one formatted before, ``f"..." % x``)."""
        right = node.right
        items = right.elts if isinstance(right, ast.Tuple) else [right]
        operands = [self.expr(item) for item in items]
        if isinstance(text, Const):
            template, first = repr(text.value), 0
        else:
            template, first = "a0", 1
            operands.insert(0, text)
        names = ", ".join(f"a{i}" for i in range(first, len(operands)))
        tuple_text = f"({names},)" if len(operands) - first == 1 else f"({names})"
        return self.formatted(node, f"{template} % {tuple_text}", operands)

    def str_formatted(self, node: ast.Call, text: str) -> Operand:
        """``"loss {:.3f}".format(loss)``."""
        args, kwargs = self.call_arguments(node)
        operands = [*args, *kwargs.values()]
        if all(isinstance(o, Const) and o.path is None for o in operands):
            try:  # of constants (a dict's key, a setting): a constant, made now
                return Const(text.format(*(a.value for a in args),
                                         **{k: v.value for k, v in kwargs.items()}))
            except (IndexError, KeyError, ValueError, TypeError, AttributeError):
                pass  # the call raises where the code runs
        names = [f"a{i}" for i in range(len(args))] + [
            f"{key}=a{len(args) + i}" for i, key in enumerate(kwargs)]
        return self.formatted(node, f"{text!r}.format({', '.join(names)})", operands)

    def as_text(self, node: ast.Call, fn, args: tuple, kwargs: dict) -> Operand:
        """``str(loss)``, ``repr(x)``, ``format(loss, ".3f")``: a string, for printing."""
        operands = [*args, *kwargs.values()]
        names = [f"a{i}" for i in range(len(args))] + [
            f"{key}=a{len(args) + i}" for i, key in enumerate(kwargs)]
        return self.formatted(node, f"{fn.__name__}({', '.join(names)})", operands)

    def formatted(self, node: ast.AST, template: str, operands: list[Operand]) -> Operand:
        _, kwargs = self.passed_whole(node, (), {f"a{i}": o for i, o in enumerate(operands)})
        return self.emit(node, formatted_op(template, len(operands)), tuple(kwargs.values()))



def library_object(value: Value, builder) -> bool:
    """Whether ``value`` is an object of a library's (a random generator), neither an
    array nor a structure: what a function run as it is returned (``np.random.default_rng
    (seed)``) or an attribute of one, an argument passed such an object, or a global or
    closure variable holding one now."""
    if value in builder.library_objects:
        return True
    node = value.node
    if node is None or isinstance(node, Region):
        return False
    if node.op.opaque and node.op.name in ("call", "attribute"):
        return True
    if node.op.name != "variable":
        return False
    name, scope = (arg.value for arg in node.args)
    obj = scope.read(name)
    return obj is not MISSING and not isinstance(
        obj, (np.ndarray, np.generic, int, float, complex, bool, str, list, tuple, dict))



__all__ = ["TEXT_BUILTINS", "EffectsMixin", "for_its_effects", "is_text", "library_object"]
