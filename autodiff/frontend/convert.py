"""From a function's AST to graph nodes: name resolution and normalisation.

The converter walks the statements of a ``def`` and emits one node per
operation through a :class:`GraphBuilder`. Local names map to operands (SSA:
rebinding a name just points it at a new value); globals, closure variables
and builtins are resolved to the Python objects they hold. The same converter
inlines gradient rules, which are plain NumPy functions too.

Anything outside the supported subset is rejected with the file, the line and
the construct.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import operator
import types

import numpy as np

from autodiff.errors import (
    AutodiffError,
    UndefinedNameError,
    UnknownFunctionError,
    UnsupportedSyntaxError,
)
from autodiff.frontend.bindings import BindingsMixin, Deleted
from autodiff.frontend.builder import GraphBuilder, literal
from autodiff.frontend.constants import constant_attribute, is_constant_method
from autodiff.frontend.effects import (
    TEXT_BUILTINS,
    EffectsMixin,
    is_text,
    library_object,
)
from autodiff.frontend.exceptions import STALE_HINT, ExceptionsMixin
from autodiff.frontend.frozen import Frozen, FrozenMixin, frozen_call
from autodiff.frontend.functions import CallsMixin, LocalFunction
from autodiff.frontend.lifted import lifted
from autodiff.frontend.objects import Bound, ObjectsMixin, holds_user_objects, user_object
from autodiff.frontend.generators import NEXT_HINT, NEXT_REFUSED
from autodiff.frontend.kinds import KindsMixin, ListOrTuple, array_may_be
from autodiff.frontend.records import StructuresMixin
from autodiff.frontend.scan import is_list_append, named_in
from autodiff.frontend.source import FunctionSource
from autodiff.frontend.state import StateMixin
from autodiff.frontend.signature import ConstantRead, foldable
from autodiff.frontend.statements import (
    FALSE,
    RESULT,
    RETURNED,
    Ambiguous,
    Stale,
    StatementsMixin,
    Unbound,
    assigned_names,
)
from autodiff.frontend.structures import (
    NeedsStructure,
    Record,
    contains_record,
)
from autodiff.frontend.updates import UpdatesMixin, list_items, makes_new_array
from autodiff.graph.ir import (
    UNDEFINED,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    Region,
    SliceSpec,
    Value,
)
from autodiff.graph.scopes import MISSING, Scope
from autodiff.graph.shapes import DICT, LIST, SCALAR
from autodiff.line_names import line_name
from autodiff.ops import OPS, registry
from autodiff.ops.calls import attribute_op, call_op
from autodiff.user_code import is_library_code

# Python's operators as the functions of ``operator`` they call; the op each is an
# alias of (``operator.add`` of ``add``) is the op the syntax becomes.
BINARY_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
UNARY_OPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
             ast.Invert: operator.invert}
COMPARE_OPS = {
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def operator_op(fn) -> registry.Op:
    """The op Python's operator ``fn`` is an alias of."""
    return registry.callable_binding(fn)[0]

# Comparisons of Python objects, decided while compiling: both sides must be constants.
STATIC_COMPARE_OPS = {
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}

# Python's builtins that compute on their arguments alone: on constants they run
# while compiling (``max(axes)``, ``len(shape)``, ``sorted(axes)``), as the rest of
# the rule or function would with those values.
PURE_BUILTINS = frozenset({
    builtins.abs, builtins.all, builtins.any, builtins.bool, builtins.divmod, builtins.float,
    builtins.int, builtins.isinstance, builtins.len, builtins.max, builtins.min, builtins.round,
    builtins.sorted, builtins.str, builtins.sum, builtins.tuple, builtins.type,
})

# Builtins that take a structure known while compiling apart (see structural_builtin).
STRUCTURAL_BUILTINS = (dict, len, list, tuple, sorted, isinstance, type)
# Builtins calling a function on each item of one (see functional_builtin).
FUNCTIONAL_BUILTINS = (map, filter, functools.reduce)
# (by identity: a callee is one of them when it is the very function)
_STRUCTURAL_IDS = frozenset(map(id, STRUCTURAL_BUILTINS))
_FUNCTIONAL_IDS = frozenset(map(id, FUNCTIONAL_BUILTINS))
_TEXT_IDS = frozenset(map(id, TEXT_BUILTINS))

# Methods of a dict (or a namedtuple) that code reading an argument as one calls.
DICT_METHODS = frozenset({"items", "keys", "values", "get", "copy", "_replace"})

# Statements and expressions outside the subset, with the words the error uses.
UNSUPPORTED_STATEMENTS = {
    ast.With: "'with' statements",
    ast.Global: "'global' declarations", ast.Nonlocal: "'nonlocal' declarations",
    ast.Import: "'import' statements", ast.ImportFrom: "'import' statements",
    ast.ClassDef: "class definitions",
    ast.AsyncFunctionDef: "'async def'", ast.AsyncFor: "'async for'", ast.AsyncWith: "'async with'",
}
if hasattr(ast, "Match"):
    UNSUPPORTED_STATEMENTS[ast.Match] = "'match' statements"
if hasattr(ast, "TryStar"):
    UNSUPPORTED_STATEMENTS[ast.TryStar] = "'except*' clauses (exception groups)"
UNSUPPORTED_EXPRESSIONS = {
    ast.SetComp: "set comprehensions", ast.DictComp: "dict comprehensions",
    ast.Dict: "dict displays", ast.Set: "set displays",
    ast.Await: "'await' expressions", ast.Yield: "'yield' expressions",
    ast.YieldFrom: "'yield from' expressions",
    ast.Starred: "star arguments (*args)",
}

# The ops a dict whose keys are known only when the code runs may be given.
_RUNTIME_DICT_OPS = frozenset({
    "dict_setitem", "dict_getitem", "len", "formatted", "call", "effect_call", "warning",
    "list_append", "list_setitem", "store_item", "append_item", "structure",
})


def _is_list(operand: Operand) -> bool:
    """Whether an operand is a Python list the function writes out or builds."""
    return isinstance(operand, tuple) or (isinstance(operand, Value) and operand.shape is LIST)


def _flat(operands):
    """The operands inside nested tuples, one by one."""
    for operand in operands:
        if isinstance(operand, tuple):
            yield from _flat(operand)
        else:
            yield operand


class Converter(StatementsMixin, ExceptionsMixin, UpdatesMixin, StructuresMixin, CallsMixin,
                EffectsMixin, FrozenMixin, ObjectsMixin, BindingsMixin,
                KindsMixin, StateMixin):
    """Converts one function body; ``env`` maps local names to operands."""

    def __init__(
        self,
        builder: GraphBuilder,
        source: FunctionSource,
        globals_: dict,
        closure: dict[str, types.CellType] | None = None,
        *,
        location: Location | None = None,
        rule: bool = False,
    ) -> None:
        self.builder = builder
        self.source = source
        self.globals = globals_
        self.closure = closure or {}  # free variable name -> its cell
        self.scope = Scope.of_globals(globals_)
        # A rule's nodes (and those of functions it calls) take the line of the user's
        # call that brought it in, or none (the epilogue's rules): never autodiff's own.
        self.fixed_location = location
        self.rule = rule or location is not None
        self.env: dict[str, Operand] = {}
        self.return_location: Location | None = None
        self.function_name = ""  # set for inlined callees, shown in comments
        self.enclosing: Converter | None = None  # for functions defined inside another
        self.calling: Converter | None = None  # the caller, while this function is inlined
        self.built_lists: dict[int, Operand] = {}  # lists written out ([a, b]), by identity
        self.calls_in_progress: tuple = ()  # the user's functions being inlined, outermost first
        self.recursive_calls = [0]  # recursive calls unrolled so far, shared with callees
        self.arguments: set[Value] = set()  # values the caller owns: never updated in place
        self.iterated: frozenset[str] = frozenset()  # names of arrays enclosing loops run over
        self.at_function_start = True
        # The arguments of a derivative built once for arrays: code reading one as a
        # structure (params["W1"]) is compiled per structure instead (NeedsStructure).
        self.general_arguments: frozenset[Value] = frozenset()
        # The lists and tuples the caller passed (never appended to).
        self.caller_sequences: set[int] = set()
        # The kind (list or tuple) of each sequence an argument passes, by identity, and
        # the arguments' leaves known to be arrays (see KindsMixin).
        self.sequence_kinds: dict[int, tuple] = {}
        self.array_values: set[Value] = set()
        # Arguments (and their leaves) a derivative compiled per structure knows are
        # not None (None is a setting of the structure): ``b is None`` is decided.
        self.not_none: set[Value] = set()
        # Values that may be views of an array updated since (see UpdatesMixin), by the
        # name that held one, the array's name and the update's line; and, in a loop
        # body, the names it binds afresh on each trip (None outside loops).
        self.stale_views: dict[Value, tuple[str, str, int]] = {}
        self.loop_fresh_names: frozenset[str] | None = None
        self.handling = 0  # except blocks around the code converted now (for 'raise')
        self.guarding = 0  # try bodies around it (a call there may be made for its error)

    # ----- errors -----

    def error(self, node: ast.AST, message: str, hint: str | None = None,
              kind: type[AutodiffError] = UnsupportedSyntaxError) -> AutodiffError:
        lineno = getattr(node, "lineno", None) or 0
        call = self.fixed_location
        if call is not None:  # in a gradient rule: name the rule's line, and the user's call
            message += (f" (in the gradient rule {self.source.tree.name!r}, brought in by "
                        f"{line_name(call.filename, call.lineno)}: {call.text.strip()})")
        return kind(message, filename=self.source.filename, lineno=lineno,
                    source_line=self.source.line(lineno), hint=hint)

    def emit(self, node: ast.AST, op_name: str | registry.Op, args: tuple,
             hint: str = "") -> Operand:
        op = op_name if isinstance(op_name, registry.Op) else OPS[op_name]
        op_name = op.name
        self.refuse_records(node, args)
        self.refuse_runtime_dicts(node, op_name, args)
        self.refuse_exception_uses(node, op_name, args)
        self.refuse_frozen(node, args)
        if any(isinstance(item, (LocalFunction, Bound)) or isinstance(item, Const)
               and isinstance(item.value, LocalFunction) for item in _flat(args)):
            raise self.error(node, f"'{ast.unparse(node)}' uses a function defined in the "
                             "code as a value; differentiated code calls such functions, or "
                             "passes them to map, filter, functools.reduce and your own "
                             "functions", kind=UnsupportedSyntaxError,
                             hint="call the function here, or pass what it returns")
        try:
            return self.builder.emit(op, args, hint)
        except AutodiffError:
            raise
        except Exception as error:  # noqa: BLE001 - report it at the user's line
            raise self.error(node, f"cannot build {op_name}: {error}") from None

    def refuse_runtime_dicts(self, node: ast.AST, op_name: str, operands) -> None:
        """A dict whose keys are known only when the code runs (``grads[f"W{i}"] = g``)
        is read by key, measured with ``len``, printed, returned, passed to a library's
        function or held by a list: given to any other op (NumPy's, ``sum``, a loop over
        it), its Python meaning would be lost."""
        if op_name in _RUNTIME_DICT_OPS or not any(
                isinstance(item, Value) and item.shape is DICT for item in _flat(operands)):
            return
        raise self.error(node, f"'{ast.unparse(node)}' uses a dict whose keys are known only "
                         "when the code runs: differentiated code reads its items by key, "
                         "takes its len(), and returns or prints it",
                         kind=UnsupportedSyntaxError, hint="read its items by key (d[k]), or "
                         "keep what you need in a list (acc.append(v))")

    def refuse_records(self, node: ast.AST, operands) -> None:
        """A dict or an object given to an op, which takes arrays and numbers."""
        for operand in operands:
            if contains_record(operand):
                what = operand.describe() if isinstance(operand, Record) else "dict or object"
                raise self.error(node, f"'{ast.unparse(node)}' passes a {what} where autodiff "
                                 "needs an array or a number",
                                 hint="pass the arrays it holds: params['W'], not params")

    def passed_whole(self, node: ast.AST, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments of a call that takes a structure as it is (a function with a
        rule of its own, or one called as it is): each dict built as generated code."""
        use = (f"passing to '{ast.unparse(node.func)}'" if isinstance(node, ast.Call)
               else f"formatting in '{ast.unparse(node)}'")
        return (tuple(self.built_structure(node, a, use) if contains_record(a) else a
                      for a in args),
                {k: self.built_structure(node, v, use) if contains_record(v) else v
                 for k, v in kwargs.items()})

    def read_as_structure(self, node: ast.AST, value: Operand, what: str) -> None:
        """In a derivative built once for arrays, ``value`` (an argument, part of one, or
        the gradient of one a derivative called here returns, which has its structure)
        is read as a structure: compile per structure instead."""
        whose = "the argument"
        while isinstance(value, Value) and isinstance(value.node, Node) and (
                value.node.op in (OPS["getitem"], OPS["as_gradient_of"], OPS["copy"])):
            if value.node.op is OPS["as_gradient_of"]:
                whose = "the gradient of the argument"
            # (an argument the code updates is copied at the top: state["h"] = v)
            value = value.node.args[1 if value.node.op is OPS["as_gradient_of"] else 0]
        if isinstance(value, Value) and value in self.general_arguments:
            raise NeedsStructure(
                f"'{ast.unparse(node)}' reads {whose} '{value.hint}' as {what}, "
                "which autodiff compiles for the structure a call passes",
                filename=self.source.filename, lineno=getattr(node, "lineno", 0),
                source_line=self.source.line(getattr(node, "lineno", 0)),
                hint="call the derivative with the structure (a dict, list, tuple, "
                "namedtuple or dataclass of arrays)")

    # ----- statements -----

    def run(self, body: list[ast.stmt]) -> Operand:
        """Convert the statements of a function body; return the operand it returns."""
        self.env.setdefault(RETURNED, FALSE)
        if body is self.source.tree.body:
            if self.source.local_names is None:
                self.source.local_names = assigned_names(body)
            local_names = self.source.local_names
        else:
            local_names = assigned_names(body)
        for name in local_names:  # local names, unbound until assigned (as in Python)
            self.env.setdefault(name, UNDEFINED)
        self.at_function_start = True
        self.body(body)
        if self.env[RETURNED] is FALSE or self.env[RETURNED] == FALSE:
            if self.calls_in_progress and not self.rule:  # a helper of the user's: None
                return Const(None)
            raise self.error(body[-1] if body else self.source.tree,
                             "the function has no 'return' statement at its end")
        result = self.env[RESULT]
        if isinstance(result, (Ambiguous, LocalFunction, Frozen, Bound)) or result is UNDEFINED:
            raise self.error(body[-1], "the function must return a number or an array")
        return result

    def returned(self, node: ast.AST, result: Operand) -> Operand:
        """What the differentiated function returns, its dicts built by generated code."""
        return self.built_structure(node, result)

    def at(self, stmt: ast.stmt) -> None:
        """Make ``stmt`` the location of the nodes emitted next."""
        if not self.rule:
            self.builder.loc = Location(self.source.filename, stmt.lineno,
                                        self.source.line(stmt.lineno), self.function_name)

    def statement(self, stmt: ast.stmt, first: bool) -> None:
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is not None:
            method(stmt)
        elif isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value)
            for target in stmt.targets:
                self.assign(target, value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.expr(stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Subscript):
                if isinstance(stmt.target.value, ast.Name) and isinstance(
                        self.env.get(stmt.target.value.id), Record):  # d["k"] += v
                    value = self.binary(stmt, stmt.op, self.expr(stmt.target),
                                        self.expr(stmt.value))
                    self.set_item(stmt.target, value)
                    return
                if self.is_built_list(stmt.target):  # parts[0] += v on a list written out
                    self.set_list_item(stmt.target, self.expr(stmt.value), stmt.op)
                    return
                self.update_element(stmt)
                return
            if isinstance(stmt.target, ast.Attribute):
                updated = self.binary(stmt, stmt.op, self.expr(stmt.target),
                                      self.expr(stmt.value))
                if (self.set_constructed_field(stmt.target, updated)
                        or self.set_field(stmt.target, updated)):
                    return  # self.count += 1 on an object made here, or the caller's
                self.refuse_setting_a_field(stmt.target)
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, f"augmented assignment to {_describe_target(stmt.target)}"
                                 " is not supported", hint=_INPLACE_HINT)
            current = self.name(stmt.target)
            if self.augmented_view(stmt):  # s += v on a view of the function's own array
                return
            self.check_rebinding_is_safe(stmt, stmt.target.id, current)
            value = self.binary(stmt, stmt.op, current, self.expr(stmt.value))
            self.assign(stmt.target, value)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and (first or stmt.value.value is Ellipsis):
                return  # docstring or '...'
            call = stmt.value
            if isinstance(call, (ast.Yield, ast.YieldFrom, ast.Await)):
                self.expr(call)  # reports the construct
            if is_list_append(stmt) and call.func.value.id in self.env:
                self.append_to_list(call, call.func.value.id)
                return
            if self.append_to_callers_part(call):  # obj.norms.append(v), state["h"].append(v)
                return
            if self.dict_update(call):
                return
            self.effect_statement(stmt)
        elif isinstance(stmt, ast.Assert):
            self.assert_statement(stmt)
        elif isinstance(stmt, ast.Pass):
            return
        else:
            what = UNSUPPORTED_STATEMENTS.get(type(stmt), f"'{type(stmt).__name__}' statements")
            raise self.error(stmt, f"{what} are not supported in differentiated code")

    def check_rebinding_is_safe(self, stmt: ast.AugAssign, name: str, current: Operand) -> None:
        """``z += v`` updates an array in place; compiling it as ``z = z + v`` is only
        right when no other name can see the old array."""
        if not isinstance(current, Value):
            return
        self.check_not_iterated(stmt, name)
        others = [n for n, v in self.env.items() if v is current and n != name]
        view = isinstance(current.node, Node) and not makes_new_array(current.node)
        if others or view:
            seen_by = f"also named '{others[0]}'" if others else "possibly a view of another array"
            raise self.error(
                stmt, f"in-place update of '{name}', which is {seen_by}: NumPy would change "
                "both, which differentiated code does not support",
                hint=f"write '{name} = {ast.unparse(stmt.target)} "
                f"{_OPERATOR_SYMBOLS.get(type(stmt.op), '?')} ...' to make a new array")

    def assign(self, target: ast.expr, value: Operand) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Value) and not value.hint and value.adjoint_of is None and (
                    not target.id.startswith("<")):  # (a name of the converter's own)
                value.hint = target.id
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if starred:  # first, *rest = items: of items known while compiling
                self.read_as_structure(target, value, "a list or a tuple")
                if not isinstance(value, (tuple, Record)) and not (
                        isinstance(value, Const) and isinstance(value.value, tuple)):
                    raise self.error(target, "starred assignment targets are supported for "
                                     "lists and tuples known while compiling")
                items = list(self.static_items(target, value))
                star, after = starred[0], len(target.elts) - starred[0] - 1
                if len(items) < len(target.elts) - 1:
                    raise self.error(target, f"cannot unpack {len(items)} values into "
                                     f"{len(target.elts) - 1} or more names")
                middle = tuple(items[star:len(items) - after])
                parts = [*items[:star], middle, *items[len(items) - after:]]
                for sub, part in zip(target.elts, parts):
                    self.assign(sub.value if isinstance(sub, ast.Starred) else sub, part)
                return
            parts = self.unpack(target, value, len(target.elts))
            for sub, part in zip(target.elts, parts):
                self.assign(sub, part)
        elif isinstance(target, ast.Subscript):
            if not (self.set_item(target, value) or self.set_list_item(target, value)):
                self.assign_element(target, value)
        else:
            if isinstance(target, ast.Attribute):
                if (self.set_constructed_field(target, value)  # of an object the code constructs
                        or self.set_field(target, value)):  # of one the caller passed
                    return
                self.refuse_setting_a_field(target)
            raise self.error(target, f"assignment to {_describe_target(target)} is not supported",
                             hint=_INPLACE_HINT)

    def unpack(self, node: ast.AST, value: Operand, count: int) -> list[Operand]:
        if isinstance(value, Record):
            value = self.static_items(node, value)
        if isinstance(value, Const) and isinstance(value.value, tuple):
            value = tuple(Const(v) for v in value.value)
        if isinstance(value, tuple):
            if len(value) != count:
                raise self.error(node, f"cannot unpack {len(value)} values into {count} names")
            return list(value)
        if isinstance(value, Value):  # a list's items may differ in shape: list_getitem
            op = "list_getitem" if value.shape is LIST else "listed_item" if isinstance(
                value.node, Node) and value.node.op.name == "list_getitem" else "getitem"
            return [self.emit(node, op, (value, Const(i))) for i in range(count)]
        raise self.error(node, "cannot unpack this value")

    # ----- expressions -----

    def expr(self, node: ast.expr) -> Operand:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            what = UNSUPPORTED_EXPRESSIONS.get(type(node), f"'{type(node).__name__}' expressions")
            raise self.error(node, f"{what} are not supported in differentiated code")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Operand:
        return Const(node.value)

    def expr_ListComp(self, node: ast.ListComp | ast.GeneratorExp) -> Operand:
        """``[e for x in it if c]`` is a loop appending to a new list."""
        key = f"<list {id(node)}>"
        statement: ast.stmt = ast.Expr(ast.Call(
            ast.Attribute(ast.Name(key, ast.Load()), "append", ast.Load()), [node.elt], []))
        for generator in reversed(node.generators):
            if generator.is_async:
                raise self.error(node, "async comprehensions are not supported")
            if generator.ifs:
                test = (generator.ifs[0] if len(generator.ifs) == 1
                        else ast.BoolOp(ast.And(), generator.ifs))
                statement = ast.If(test, [statement], [])
            statement = ast.For(generator.target, generator.iter, [statement], [])
        for part in ast.walk(statement):
            if "lineno" in part._attributes and not hasattr(part, "lineno"):
                ast.copy_location(part, node)
        saved = self.env
        self.env = dict(saved)
        self.env[key] = Const(())
        self.body([statement])
        result = self.env[key]
        for name in named_in(node):  # (n := e) in a comprehension binds n around it
            saved[name] = self.env[name]
        self.env = saved
        return result

    expr_GeneratorExp = expr_ListComp

    def expr_Name(self, node: ast.Name) -> Operand:
        return self.name(node)

    def expr_Tuple(self, node: ast.Tuple | ast.List) -> Operand:
        items = tuple(item for e in node.elts for item in self.display_items(e))
        if all(isinstance(i, Const) and i.path is None for i in items):
            return Const(tuple(i.value for i in items))
        self.sequence_kinds[id(items)] = (items, tuple)  # (a list's is set by built_list)
        return items

    def display_items(self, node: ast.expr) -> tuple:
        """The items an element of a tuple or list display gives: itself, or those of a
        sequence known while compiling it unpacks (``(1, *x.shape)``, its rank known)."""
        if not isinstance(node, ast.Starred):
            return (self.expr(node),)
        value = self.expr(node.value)
        if isinstance(value, (tuple, Record)) or (
                isinstance(value, Const) and isinstance(value.value, (tuple, list))):
            return tuple(self.static_items(node, value))
        self.read_as_structure(node, value, "a sequence")
        raise self.error(node, f"'{ast.unparse(node)}' unpacks a value known only when the "
                         "code runs", hint="unpack a list or tuple known while compiling, or "
                         "index the array (x[0], x[1])")

    def expr_List(self, node: ast.List) -> Operand:
        """``[a, b]``: its items known while compiling, and settable (``parts[0] = v``)."""
        return self.built_list(self.expr_Tuple(node))

    def expr_BinOp(self, node: ast.BinOp) -> Operand:
        left = self.expr(node.left)
        if isinstance(node.op, ast.Mod) and is_text(left):
            return self.percent_formatted(node, left)
        return self.binary(node, node.op, left, self.expr(node.right))

    def binary(self, node: ast.AST, op: ast.operator, left: Operand, right: Operand) -> Operand:
        fn = BINARY_OPS.get(type(op))
        if fn is None:
            raise self.error(node, f"the operator {type(op).__name__} is not supported")
        if _is_list(left) or _is_list(right) or self.repeats_a_list(op, left, right):
            return self.list_arithmetic(node, op, left, right)
        result = self.emit(node, operator_op(fn), (left, right))
        if isinstance(op, ast.Mult) and isinstance(result, Value) and any(
                isinstance(side, Const) and type(side.value) is tuple for side in (left, right)):
            self.builder.repeated_lists.add(result)  # [None] * T: a tuple when it runs
        return result

    def repeats_a_list(self, op: ast.operator, left: Operand, right: Operand) -> bool:
        """Whether ``left * right`` repeats a list written out (``[None] * T``, ``[0.0] *
        3``) rather than multiplying NumPy's array of it (``[1.0, 2.0] * x``)."""
        if not isinstance(op, ast.Mult):
            return False
        for items, count in ((left, right), (right, left)):
            if self.built_lists.get(id(items)) is not items:
                continue
            if isinstance(count, Const) and type(count.value) is int or isinstance(
                    count, Value) and count.shape is SCALAR and not count.floating:
                return True  # a count surely an int
            numbers = any(isinstance(item.value, (int, float, complex, np.generic))
                          for item in list_items(items) if isinstance(item, Const))
            if not numbers and isinstance(count, Value) and count.shape not in (LIST, DICT):
                return True  # [None] * n: no NumPy arithmetic (checked an int when it runs)
        return False

    def list_arithmetic(self, node: ast.AST, op: ast.operator, left: Operand,
                        right: Operand) -> Operand:
        """``[a, b] + [c]``, ``acc + [v]`` and ``[a] * 3``: Python's list operations, not
        NumPy's arithmetic."""
        items = [list_items(side) for side in (left, right)]
        if isinstance(op, ast.Add) and None not in items:
            if any(self.built_lists.get(id(side)) is side for side in (left, right)):
                return self.built_list(items[0] + items[1])  # a list, as Python's
            return items[0] + items[1]
        if isinstance(op, ast.Add) and items[1] is not None and items[0] is None and isinstance(
                left, Value) and left.shape is LIST:  # acc + [v]: a new list, v appended
            result = left
            for item in items[1]:
                result = self.emit(node, "list_append", (result, item))
            return result
        if isinstance(op, ast.Add) and all(
                side is not None or isinstance(value, Value) and value.shape is LIST
                for side, value in zip(items, (left, right))):  # [h0] + [None] * T
            return self.emit(node, "list_concat", tuple(
                self.as_runtime_list(node, side) for side in (left, right)))
        if isinstance(op, ast.Mult):
            count = right if items[0] is not None else left
            repeated = items[0] if items[0] is not None else items[1]
            if repeated is not None and isinstance(count, Const) and type(count.value) is int:
                result = repeated * count.value
                return self.built_list(result) if any(
                    self.built_lists.get(id(side)) is side for side in (left, right)) else result
            if repeated is not None and isinstance(count, Value) and count.shape is not LIST and (
                    not count.floating):  # [None] * T, T known when the code runs
                return self.emit(node, "list_repeat", (tuple(repeated), count))
        raise self.error(node, f"'{ast.unparse(node)}' combines lists in a way differentiated "
                         "code does not support", kind=UnsupportedSyntaxError,
                         hint="build one list with append() (acc.append(v)), or write the "
                         "items out ([a, b] + [c], [a] * 3)")

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Operand:
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.Not) and isinstance(operand, Const) and (
                operand.path is None and not isinstance(operand.value, np.ndarray)):
            return Const(not operand.value)  # if not self.initialized: a setting
        return self.emit(node, operator_op(UNARY_OPS[type(node.op)]), (operand,))

    def expr_Compare(self, node: ast.Compare) -> Operand:
        result = None
        left = self.expr(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            if type(op) in STATIC_COMPARE_OPS:
                part = self.static_comparison(node, op, left, right)
            else:
                part = self.emit(node, operator_op(COMPARE_OPS[type(op)]), (left, right))
            result = part if result is None else self.emit(node, "logical_and", (result, part))
            left = right
        return result

    def static_comparison(self, node: ast.Compare, op: ast.cmpop, left: Operand,
                          right: Operand) -> Operand:
        """``a is None``, ``axis in (0, 1)``: decided now, on constants only; ``type(x) is
        np.ndarray`` when the code runs."""
        word = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}[type(op)]
        if isinstance(right, Record) and isinstance(op, (ast.In, ast.NotIn)):
            right = Const(tuple(k.value for k in self.static_items(node, right)))
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, Const) and (
                right.value is None) and (isinstance(left, (Record, tuple)) or (
                    isinstance(left, Value) and left in self.not_none)):
            return Const(isinstance(op, ast.IsNot))  # a structure or an array is not None
        if isinstance(right, tuple) and all(isinstance(i, Const) for i in right):
            right = Const(tuple(i.value for i in right))  # (list, tuple): named classes
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, Const) and isinstance(
                right.value, tuple):  # type(t) in (list, tuple)
            kind = left.value if isinstance(left, Const) and isinstance(left.value, type) else (
                _type_of(left))
            decided = None if kind is None else self.type_in(node, kind, right.value,
                                                             isinstance(op, ast.NotIn))
            if decided is not None:
                return decided
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(left, Const) and (
                left.value is ListOrTuple) and isinstance(right, Const):
            return Const(self.kind_is(node, left.value, right.value).value != isinstance(
                op, ast.IsNot))
        tested = _type_of(left) if isinstance(right, Const) and isinstance(right.value, type) else (
            _type_of(right) if isinstance(left, Const) and isinstance(left.value, type) else None)
        if tested is not None and self.known_array(tested) and not array_may_be(
                (right if isinstance(right, Const) else left).value):
            return Const(isinstance(op, (ast.IsNot, ast.NotIn)))  # an array is no list
        if tested is not None and isinstance(op, (ast.Is, ast.IsNot)):
            # type(x) is np.ndarray: tested when the code runs, as the kind of x is known then
            kind = right if isinstance(right, Const) else left
            return self.emit(node, "type_is", (tested, kind, Const(isinstance(op, ast.IsNot))))
        if not (isinstance(left, Const) and isinstance(right, Const)):
            if isinstance(right, Const):  # b is None: b may be None when called
                self.read_as_structure(node, left, "a setting known while compiling")
            raise self.error(
                node, f"'{word}' is decided while compiling, and one side of "
                f"'{ast.unparse(node)}' is a value known only when the function runs",
                hint="compare values with ==, or pass a constant (None, a number, a tuple) "
                "on both sides")
        try:
            return Const(bool(STATIC_COMPARE_OPS[type(op)](left.value, right.value)))
        except TypeError as exc:
            raise self.error(node, f"'{ast.unparse(node)}' failed: {exc}") from None

    def expr_Attribute(self, node: ast.Attribute) -> Operand:
        return self.attribute_of(node, self.expr(node.value))

    def attribute_of(self, node: ast.Attribute, base: Operand) -> Operand:
        if isinstance(base, Const) and base.path is not None:
            if _runs_user_code(base.value, node.attr):
                raise self.error(
                    node, f"'{ast.unparse(node)}' is computed by the object's own code (a "
                    "property or descriptor), which autodiff does not run while compiling",
                    hint=f"read it before the call and pass it as an argument, or assign it "
                    f"to a global: {node.attr} = {ast.unparse(node)}",
                    kind=UnknownFunctionError)
            try:
                obj = getattr(base.value, node.attr)
            except AttributeError:
                raise self.error(node, f"'{ast.unparse(node)}' does not exist",
                                 kind=UnknownFunctionError) from None
            if isinstance(base.value, types.ModuleType) and user_object(obj):  # model.net
                held = self.global_object(node, node.attr, Scope.of_globals(
                    vars(base.value)), obj)
                if held is not None:
                    return held
            return Const(obj, path=f"{base.path}.{node.attr}", scope=base.scope)
        if isinstance(base, Record):
            return self.field_of(node, base)
        if isinstance(base, Value):
            op = registry.attribute_op(node.attr)
            if (op is None or not hasattr(np.ndarray, node.attr)) and library_object(
                    base, self.builder):  # np.finfo(x.dtype).eps, read as it is
                return self.emit(node, attribute_op(node.attr), (base,))
            if op is None:
                if not hasattr(np.ndarray, node.attr):
                    self.read_as_structure(node, base, "an object")
                raise self.error(node, f"the attribute '.{node.attr}' is not supported",
                                 kind=UnknownFunctionError)
            return self.emit(node, op.name, op.bind((base,), {}))
        found = constant_attribute(base, node.attr) if isinstance(base, Const) else None
        if found is not None:  # k.startswith, "_".join: run while compiling (when called)
            return found
        raise self.error(node, f"the attribute '.{node.attr}' of a constant is not supported")

    def expr_Subscript(self, node: ast.Subscript) -> Operand:
        base = self.expr(node.value)
        index = self.index(node.slice)
        if isinstance(base, Record):
            return self.item_of(node, base, index)
        if isinstance(base, Const) and isinstance(base.value, tuple):
            base = tuple(Const(v) for v in base.value)
        if isinstance(base, Const) and isinstance(base.value, str) and base.path is None:
            constant = _constant_index(index)  # "abcdefgh"[:x.ndim], its rank known
            if constant is not None:
                try:
                    return Const(base.value[constant])
                except IndexError:
                    pass  # raised where the code runs
        if isinstance(base, tuple):
            if isinstance(index, Const) and isinstance(index.value, int):
                if not -len(base) <= index.value < len(base):
                    raise self.error(node, f"'{ast.unparse(node)}': index {index.value} is out "
                                     f"of range for {len(base)} items")
                return base[index.value]
            if isinstance(index, SliceSpec) and all(
                    isinstance(p, Const) and (p.value is None or type(p.value) is int)
                    for p in (index.start, index.stop, index.step)):
                return base[slice(index.start.value, index.stop.value, index.step.value)]
            if isinstance(index, Value):
                return self.item_chosen_at_run_time(node, base, index)
            raise self.error(node, "only integer indices and constant slices into a tuple or "
                             "list are supported", hint="loop over it (for item in items), "
                             "or slice it with constants")
        if isinstance(index, Const) and isinstance(index.value, str):
            self.read_as_structure(node, base, "a dict")
        if isinstance(base, Value) and base.shape is LIST:
            return self.emit(node, "list_getitem", (base, index))
        if isinstance(base, Value) and isinstance(base.node, Node) and (
                base.node.op.name == "list_getitem"):  # (a tuple it holds, or an array)
            return self.emit(node, "listed_item", (base, index))
        if isinstance(base, Value) and base.shape is DICT:
            return self.emit(node, "dict_getitem", (base, index))
        return self.emit(node, "getitem", (base, index))

    def item_chosen_at_run_time(self, node: ast.Subscript, items: tuple, index: Value) -> Value:
        """``(a, b, c)[i]``, ``weights[i]``: the item of a tuple or list the code holds
        that an integer known only when the code runs chooses (the gradient reaches that
        item alone). Its items must be values: arrays or numbers, not structures."""
        if items and all(isinstance(item, Value) and item.shape is not LIST or isinstance(
                item, Const) and item.path is None and not isinstance(item.value, tuple)
                for item in items):
            return self.emit(node, "select_item", (items, index))
        functions = any(isinstance(item, Const) and callable(item.value) for item in items)
        raise self.error(node, f"'{ast.unparse(node)}' chooses an item known only when the "
                         "code runs from a list of lists, structures or functions: only an "
                         "array or a number can be chosen at run time", hint="pass the function itself as an "
                         "argument, or choose it with if/else on the index" if functions else
                         f"loop over it (for item in {ast.unparse(node.value)}), or index it "
                         "with a constant or an int argument")

    def index(self, node: ast.expr) -> Operand:
        if isinstance(node, ast.Slice):
            parts = [Const(None) if p is None else self.expr(p)
                     for p in (node.lower, node.upper, node.step)]
            return SliceSpec(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e) for e in node.elts)
        if isinstance(node, ast.List):  # x[[0, 2]] takes rows 0 and 2, x[0, 2] one element
            items = self.expr_Tuple(node)
            if isinstance(items, Const):
                return self.emit(node, "array", (items, Const(None)))
            return self.emit(node, "stack", (items, Const(0)))
        return self.expr(node)

    def call_arguments(self, node: ast.Call, unpacked_when_run: bool = False
                       ) -> tuple[tuple, dict]:
        """The arguments of a call, ``*xs`` and ``**kw`` taken apart while compiling (a
        list, tuple or dict the code holds: its items are known then); given
        ``unpacked_when_run``, ``*xs`` of a value known only then is
        :class:`UnpackedWhenRun` (a call run as it is unpacks it)."""
        args: list[Operand] = []
        for arg in node.args:
            if not isinstance(arg, ast.Starred):
                args.append(self.expr(arg))
                continue
            value = self.expr(arg.value)
            if unpacked_when_run and isinstance(value, Value):
                args.append(UnpackedWhenRun(value))
                continue
            if not isinstance(value, (tuple, Record)) and not (
                    isinstance(value, Const) and isinstance(value.value, (tuple, list))):
                self.read_as_structure(arg, value, "a sequence")
                raise self.error(arg, f"'{ast.unparse(arg)}' unpacks a value known only when "
                                 "the code runs", hint="unpack a list or tuple of arrays "
                                 "(f(*[a, b])), or index the array (f(x[0], x[1]))")
            args.extend(self.static_items(arg, value))
        kwargs: dict[str, Operand] = {}
        for keyword in node.keywords:
            value = self.expr(keyword.value)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
                continue
            if not (isinstance(value, Record) and value.kind == "dict" and all(
                    isinstance(key, str) for key in value.items)):
                self.read_as_structure(keyword.value, value, "a dict")
                raise self.error(node, f"'**{ast.unparse(keyword.value)}' needs a dict with "
                                 "string keys known while compiling")
            kwargs.update(value.items)
        return tuple(args), kwargs

    def expr_Call(self, node: ast.Call) -> Operand:
        func = node.func
        receiver = callee = None
        record = None
        if isinstance(func, ast.Attribute):
            base = self.expr(func.value)
            if func.attr == "format" and isinstance(base, Const) and isinstance(base.value, str):
                return self.str_formatted(node, base.value)
            if isinstance(base, Frozen):  # norm(mu, sigma).logpdf(x)
                return self.frozen_method(node, base, func.attr, *self.call_arguments(node))
            if isinstance(base, Value):
                receiver = base
            elif isinstance(base, Record) and (base.kind == "dict" or func.attr not in base.items):
                record = base
            else:
                callee = self.attribute_of(func, base)
        else:
            callee = self.expr(func)
        if runs_as_it_is(callee, self.source.filename):  # np.random.rand(*x.shape)
            args, kwargs = self.call_arguments(node, unpacked_when_run=True)
            if any(isinstance(arg, UnpackedWhenRun) for arg in args):
                return self.call_as_it_is(node, callee, args, kwargs)
        else:
            args, kwargs = self.call_arguments(node)
        if record is not None:
            return self.record_method(node, record, func.attr, args, kwargs)
        if receiver is not None:
            return self.method_call(node, receiver, func.attr, args, kwargs)
        return self.call_value(node, callee, args, kwargs, ast.unparse(func))

    def call_value(self, node: ast.Call, callee: Operand, args: tuple, kwargs: dict,
                   text: str) -> Operand:
        """The result of calling ``callee`` (what the code's ``text`` names) with these
        arguments: a structural or functional builtin, a user's function or lambda, a
        derivative, an op, or a function run as it is."""
        resolved = self.object_call(node, callee, args, kwargs, text)  # objects.py
        if resolved is not None:
            return resolved
        if isinstance(callee, Const) and id(callee.value) in _STRUCTURAL_IDS:
            structural = self.structural_builtin(node, callee.value, args, kwargs)
            if structural is not None:
                return structural
        if isinstance(callee, Const) and id(callee.value) in _FUNCTIONAL_IDS:
            return self.functional_builtin(node, callee.value, args, kwargs)
        if isinstance(callee, LocalFunction):
            return self.call_function(node, callee, args, kwargs)
        if isinstance(callee, Const) and getattr(callee.value, "builds_derivative", False):
            return self.build_derivative(node, callee, args, kwargs)
        if isinstance(callee, Const) and id(callee.value) in _TEXT_IDS and not all(
                isinstance(a, Const) for a in (*args, *kwargs.values())):
            return self.as_text(node, callee.value, args, kwargs)
        if isinstance(callee, Const) and callee.value is builtins.slice and (
                not kwargs and 1 <= len(args) <= 3):  # slice(a, b): the a:b of an index
            return SliceSpec(*((Const(None), args[0], Const(None)) if len(args) == 1
                               else (*args, Const(None))[:3]))
        if isinstance(callee, Const) and callee.value is builtins.range and not kwargs:
            folded = _folded_call(_range_items, args, kwargs)  # tuple(range(1, x.ndim))
            if folded is not None:
                return folded
        if isinstance(callee, Const) and _is_pure_builtin(callee.value):
            folded = _folded_call(callee.value, args, kwargs)
            if folded is not None:
                return folded
        if isinstance(callee, Const) and is_constant_method(callee.value):
            folded = _folded_call(callee.value, args, kwargs)
            if folded is None:
                raise self.error(node, f"'{ast.unparse(node)}' calls a method of a constant, "
                                 "which runs while compiling, with arguments known only when "
                                 "the code runs (or it raised, or gave no constant)",
                                 hint="pass it constants (strings, numbers, tuples)")
            return folded
        if isinstance(callee, Const) and callee.value is builtins.next and args and (
                isinstance(args[0], tuple) or isinstance(args[0], Value)
                and args[0].shape is LIST):
            raise self.error(node, NEXT_REFUSED.format(call=ast.unparse(node)), hint=NEXT_HINT)
        if isinstance(callee, Const) and callee.value is builtins.sum:
            return self.builtin_sum(node, args, kwargs)
        if isinstance(callee, Const) and (callee.value is builtins.max
                                          or callee.value is builtins.min):
            return self.builtin_extremum(node, callee.value, args, kwargs)
        if isinstance(callee, Const) and callable(getattr(callee.value, "derivative_for", None)):
            # a derivative of a function with *args/**kwargs: the one for this call's form
            callee = Const(callee.value.derivative_for(*args, **kwargs), path=callee.path,
                           scope=callee.scope)
        if (isinstance(callee, Const) and isinstance(callee.value, types.FunctionType)
                and registry.callable_binding(callee.value) is None):
            if getattr(callee.value, "original", None) is not None and (isinstance(
                    getattr(callee.value, "graph", None), Graph) or getattr(
                    callee.value, "by_structure", None) is not None):  # a derivative of ours
                return self.call_derivative(node, callee.value, args, kwargs)
            if not is_library_code(callee.value, self.source.filename):
                return self.call_function(node, callee.value, args, kwargs)
        binding = self.callable_binding(node, callee, text)
        if binding is None:
            frozen = frozen_call(callee, args, kwargs, ast.unparse(node))
            if frozen is not None:
                return frozen
            return self.call_as_it_is(node, callee, args, kwargs)
        try:
            return self.call_op(node, binding, args, kwargs, text)
        except registry.RunAsItIs:  # a form of the call that is no op (np.where(condition))
            return self.call_as_it_is(node, callee, args, kwargs)

    def method_call(self, node: ast.Call, receiver: Value, name: str, args: tuple,
                    kwargs: dict) -> Operand:
        """``x.sum(axis=0)``: the op the method names, with ``x`` first."""
        if receiver.shape is DICT:
            raise self.error(node, f"the method '.{name}()' of a dict whose keys are known only "
                             "when the code runs is not supported: differentiated code reads "
                             "its items by key, takes its len(), and returns or prints it",
                             kind=UnsupportedSyntaxError, hint="read its items by key (d[k]), "
                             "or keep what you need in a list (acc.append(v))")
        binding = registry.method_binding(name)
        if binding is None:
            if library_object(receiver, self.builder) and not hasattr(np.ndarray, name):
                # a method of a library's object (a random generator's rng.normal): run as it
                # is, as a library's function is
                op = call_op(len(args), tuple(kwargs), method=name)
                args, kwargs = self.passed_whole(node, args, kwargs)
                return self.emit(node, op, (receiver, *args, *kwargs.values()))
            if name in DICT_METHODS or not hasattr(np.ndarray, name):
                self.read_as_structure(node, receiver, "a dict or an object")
            raise self.error(node, f"the method '.{name}()' is not supported",
                             hint=_method_hint(name), kind=UnknownFunctionError)
        return self.call_op(node, binding, (receiver, *args), kwargs, ast.unparse(node.func))

    def call_op(self, node: ast.Call, binding: tuple, args: tuple, kwargs: dict,
                text: str) -> Operand:
        op, adapter = binding
        if op.lifts_functions:  # (odeint's model: a function of its own, see lifted.py)
            args = tuple(lifted(self, node, a) if isinstance(a, LocalFunction) else a
                         for a in args)
            kwargs = {k: lifted(self, node, v) if isinstance(v, LocalFunction) else v
                      for k, v in kwargs.items()}
        if op.takes_structures:  # a function with a rule of its own: it gets the dict
            args, kwargs = self.passed_whole(node, args, kwargs)
        else:
            self.refuse_records(node, (*args, *kwargs.values()))
        try:
            op, canonical = registry.bind_call(op, adapter, args, kwargs)
        except TypeError as error:
            raise self.error(node, f"unsupported arguments in the call to {text}: {error}") from None
        result = self.emit(node, op, canonical)
        if isinstance(result, registry.NamedResults):  # np.linalg.eigh's (eigenvalues, ...)
            return Record("namedtuple", result.kind, dict(zip(result.kind._fields, result)))
        return result

    def functional_builtin(self, node: ast.Call, fn, args: tuple, kwargs: dict) -> Operand:
        """``map(f, xs)``, ``filter(f, xs)`` and ``functools.reduce(f, xs, start)`` over
        lists, tuples and dicts known while compiling: unrolled, ``f`` called on each
        item as the code would call it (a lambda, a function of the user's, an op)."""
        name = "functools.reduce" if fn is functools.reduce else fn.__name__
        if kwargs or len(args) < 2 or (fn is not functools.reduce and fn is not map
                                       and len(args) != 2) or len(args) > 3 and fn is not map:
            raise self.error(node, f"unsupported arguments in the call to {name}")
        function, iterables = args[0], args[1:]
        if fn is functools.reduce:
            iterables = iterables[:1]
        columns = [self.static_items(node, iterable) for iterable in iterables]
        text = ast.unparse(node.args[0])
        if fn is map:
            return tuple(self.call_value(node, function, items, {}, text)
                         for items in zip(*columns))
        if fn is filter:
            kept = []
            for item in columns[0]:
                keep = item if function == Const(None) else self.call_value(
                    node, function, (item,), {}, text)
                if not isinstance(keep, Const):
                    raise self.error(node, f"'{ast.unparse(node)}' keeps items by a test "
                                     "known only when the code runs, but the items of a list "
                                     "are fixed while compiling",
                                     hint="compute every item and select with np.where")
                if keep.value:
                    kept.append(item)
            return tuple(kept)
        items = list(columns[0])
        if len(args) == 3:
            total = args[2]
        elif items:
            total = items.pop(0)
        else:
            raise self.error(node, "functools.reduce() of an empty sequence with no initial "
                             "value")
        for item in items:
            total = self.call_value(node, function, (total, item), {}, text)
        return total

    def structural_builtin(self, node: ast.Call, fn, args: tuple, kwargs: dict):
        """``dict(...)``, and ``len``, ``list``, ``tuple``, ``sorted``, ``isinstance`` and
        ``type`` of structures known while compiling; None for any other call."""
        if fn is dict:
            return self.dict_call(node, args, kwargs)
        if fn is type and len(args) == 1 and isinstance(args[0], tuple):
            return Const(self.sequence_type(args[0]))  # list, tuple, or either
        if fn is type:
            return Const(args[0].type) if len(args) == 1 and isinstance(args[0], Record) else None
        kinds = args[1] if len(args) == 2 else None
        if isinstance(kinds, tuple) and all(isinstance(k, Const) for k in kinds):
            kinds = Const(tuple(k.value for k in kinds))  # (list, tuple): named classes
        if fn is isinstance and isinstance(kinds, Const) and not kwargs:
            decided = self.instance_of(node, args[0], kinds.value)
            if decided is not None:
                return decided
        if fn is isinstance and len(args) == 2 and isinstance(args[0], Record) and (
                isinstance(args[1], Const)):
            try:
                return Const(issubclass(args[0].type, args[1].value))
            except TypeError as error:
                raise self.error(node, f"'{ast.unparse(node)}' failed: {error}") from None
        if fn in (list, tuple) and len(args) == 1 and not kwargs and isinstance(
                args[0], Value) and args[0].shape is LIST:
            return args[0]  # list(items) of a list built at run time: the same items
        if kwargs or len(args) != 1 or not isinstance(args[0], (tuple, Record)):
            return None
        items = self.static_items(node, args[0])
        if fn is len:
            return Const(len(items))
        if fn is sorted:  # of a dict's keys
            if not all(isinstance(item, Const) for item in items):
                return None
            return Const(tuple(sorted(item.value for item in items)))
        if fn is list:  # a new list, whose items the code may set (out[t] = v)
            return self.built_list(tuple(items))
        return items if fn is not isinstance else None

    def builtin_sum(self, node: ast.Call, args: tuple, kwargs: dict) -> Operand:
        """Python's ``sum``: over a list of operands, a list built at run time, or an
        array's first axis."""
        if len(args) not in (1, 2) or set(kwargs) - {"start"}:
            raise self.error(node, "sum() takes an iterable and an optional start")
        items, start = args[0], args[1] if len(args) > 1 else kwargs.get("start", Const(0))
        if isinstance(items, Const) and isinstance(items.value, tuple):
            items = tuple(Const(v) for v in items.value)
        if isinstance(items, tuple):
            total = start
            for item in items:
                total = self.emit(node, "add", (total, item))
            return total
        if isinstance(items, Value) and items.shape is LIST:
            total = self.emit(node, "list_sum", (items,))
        else:
            total = self.emit(node, "sum", (items, Const(0), Const(False)))
        if start == Const(0):
            return total
        return self.emit(node, "add", (start, total))

    def builtin_extremum(self, node: ast.Call, fn, args: tuple, kwargs: dict) -> Operand:
        """Python's ``max``/``min`` of several operands (``max(a, b, c)``) or of one list
        or tuple known while compiling (``max([a, b, c])``, ``default=`` for an empty
        one): ``np.maximum``/``np.minimum`` folded from the left, so a tie between two
        operands splits the gradient evenly, as for ``max(a, b)`` (and a tie of three
        gives the last operand half, the first two a quarter each)."""
        name = fn.__name__
        if "key" in kwargs:
            raise self.error(node, f"{name}() with key= is not supported in differentiated "
                             "code", hint=f"compute the keys and select with np.where, or "
                             f"call {name} over the values themselves")
        if set(kwargs) - {"default"}:
            raise self.error(node, f"unsupported arguments in the call to {name}: "
                             f"{', '.join(sorted(set(kwargs) - {'default'}))}")
        if not args:
            raise self.error(node, f"{name} expected at least 1 argument, got 0")
        if len(args) == 1:
            sequence = args[0]
            if isinstance(sequence, Value):
                self.read_as_structure(node.args[0], sequence, "a sequence")
                which = "largest" if fn is builtins.max else "smallest"
                raise self.error(node, f"'{ast.unparse(node)}' iterates a value known only "
                                 "when the code runs", hint=f"np.{name}(x) for the {which} "
                                 "element of an array, or a list written out: "
                                 f"{name}([a, b, c])")
            items = self.static_items(node.args[0] if node.args else node, sequence)
            if not items:
                if "default" in kwargs:
                    return kwargs["default"]
                raise self.error(node, f"{name}() of an empty sequence", hint="pass default=")
        elif "default" in kwargs:
            raise self.error(node, f"{name}() takes default= only with a single iterable "
                             "argument")
        else:
            items = args
        self.refuse_records(node, items)
        result = items[0]
        for item in items[1:]:
            result = self.emit(node, "maximum" if fn is builtins.max else "minimum",
                               (result, item))
        return result

    def callable_binding(self, node: ast.Call, callee: Operand | None, text: str):
        if not isinstance(callee, Const):
            # an argument compiled as an array is a function the call passes (act=np.tanh):
            # compiled per structure, where it is a setting known while compiling
            self.read_as_structure(node.func, callee, "a function")
            raise self.error(node, f"cannot call '{text}': only functions known when the code "
                             "is compiled can be called", kind=UnknownFunctionError,
                             hint="call a function by its name, or pass it as an argument "
                             "(a derivative is compiled for each function passed)")
        return registry.callable_binding(callee.value)

    def build_derivative(self, node: ast.Call, callee: Const, args: tuple,
                         kwargs: dict) -> Const:
        """``ad.grad(f, wrt=1)`` inside the code: the derivative, built now, is a constant
        (called next, its graph is inlined like any derivative's)."""
        operands = [*args, *kwargs.values()]
        if not all(isinstance(o, Const) for o in operands):
            raise self.error(node, f"'{ast.unparse(node)}' builds a derivative from values "
                             "known only when the code runs", kind=UnknownFunctionError,
                             hint="build it outside the function (at module level) from a "
                             "function defined there, and call it here")
        try:
            built = callee.value(*(a.value for a in args),
                                 **{k: v.value for k, v in kwargs.items()})
        except AutodiffError:
            raise
        except Exception as error:  # noqa: BLE001 - a bad call: report it at the user's line
            raise self.error(node, f"cannot build {ast.unparse(node)}: {error}") from None
        return Const(built)

    def call_as_it_is(self, node: ast.Call, callee: Const, args: tuple, kwargs: dict) -> Operand:
        """A call of a function with no rule that is not the user's own code: the
        derivative makes it as it is (see :mod:`autodiff.ops.calls`)."""
        if callee.path is None:
            raise self.error(node, f"cannot call '{ast.unparse(node.func)}' here: it has no "
                             "name generated code can refer to", kind=UnknownFunctionError,
                             hint="call it through a global name")
        stated = registry.without_rule(callee.value)
        if stated is not None and any(isinstance(item, LocalFunction) or isinstance(
                item, Const) and isinstance(item.value, LocalFunction)
                for item in _flat((*args, *kwargs.values()))):
            # (a function defined in the code never reaches it: say why it has no rule)
            raise self.error(node, f"'{ast.unparse(node.func)}' is not differentiated, and "
                             f"takes no function defined in the code: {stated[0]}",
                             hint=stated[1], kind=UnknownFunctionError)
        starred = tuple(i for i, arg in enumerate(args) if isinstance(arg, UnpackedWhenRun))
        args = tuple(arg.value if isinstance(arg, UnpackedWhenRun) else arg for arg in args)
        op = call_op(len(args), tuple(kwargs), starred=starred)
        args, kwargs = self.passed_whole(node, args, kwargs)
        return self.emit(node, op, (callee, *args, *kwargs.values()))

    # ----- names -----

    def binds(self, name: str) -> bool:
        """Whether ``name`` is a local of this function or of one it is defined in."""
        scope = self
        while scope is not None and name not in scope.env:
            scope = scope.enclosing
        return scope is not None

    def name(self, node: ast.Name) -> Operand:
        name = node.id
        scope = self
        while scope is not None:
            if name in scope.env:
                value = scope.env[name]
                if value is UNDEFINED:
                    raise self.error(node, f"'{name}' is used before it is given a value",
                                     hint="assign it first on every path that reaches here")
                if isinstance(value, Ambiguous):
                    raise self.error(node, f"'{name}' {value.what} on different paths "
                                     "through the code")
                if isinstance(value, Stale):
                    raise self.error(node, value.message(), hint=STALE_HINT)
                if isinstance(value, Deleted):
                    raise self.error(node, value.message(), hint="assign it again before "
                                     "reading it, or delete it after its last read")
                self.refuse_stale_view(node, value)
                return value
            scope = scope.enclosing
        outer = self.scope_of(name)
        if outer is None:
            return Const(getattr(builtins, name), path=name)
        return self.outer(node, outer)

    def scope_of(self, name: str) -> Scope | None:
        """The namespace a name no local binds is read in (None for a builtin)."""
        if name in self.closure:
            return Scope.of_cell(self.closure[name], name)
        if name in self.globals or not hasattr(builtins, name):
            return self.scope
        return None

    def outer(self, node: ast.Name, scope: Scope) -> Operand:
        """A name of the module or closure of the code being converted (which may be a
        helper's or a rule's, not the differentiated function's): static if it names
        code, else a read at call time. (Its type decides, never its attributes: a lazy
        proxy is not loaded.)"""
        obj = scope.read(node.id)
        if obj is MISSING:
            message, hint = _undefined(node.id, scope)
            if self.builder.in_block:  # Python raises when (if) this code runs
                raise Unbound(node, message)
            raise self.error(node, message, hint=hint, kind=UndefinedNameError)
        if user_object(obj) or holds_user_objects(obj):  # a model: its arrays read per call
            held = self.global_object(node, node.id, scope, obj)
            if held is not None:
                return held
        if issubclass(type(obj), types.ModuleType) or callable(obj) or obj is None:
            return Const(obj, path=node.id, scope=scope)
        if _holds_functions(obj):
            return _functions_held(obj)
        if not self.rule and foldable(obj):  # a setting: compiled in per call signature
            if self.builder.fold_constants:
                self.builder.constants_read.append(ConstantRead(scope, node.id, obj))
                return Const(obj)
            self.builder.reads_call_facts = True
        return self.emit(node, "variable", (Const(node.id), Const(scope)), hint="")



def _undefined(name: str, scope: Scope) -> tuple[str, str]:
    """Python's NameError for a name bound nowhere, and a hint. The derivative raises it
    while compiling (or, for code that runs on some paths only, where that code runs):
    it may never need the value, and must not run as if it had one."""
    if scope.kind == "closure":
        return (f"cannot access free variable '{name}' where it is not associated with a "
                "value in enclosing scope",
                "assign it in the enclosing function before calling the derivative")
    return (f"name '{name}' is not defined",
            "define it before the derivative is first called, or correct its spelling")


def _method_hint(name: str) -> str:
    """What to write instead of ``x.name(...)``, an array's method no op is bound to: the
    NumPy function of that name where autodiff knows one, never one that does not exist."""
    function = getattr(np, name, None)
    if function is not None and registry.callable_binding(function) is not None:
        return (f"call the NumPy function (np.{name}(x, ...)), which autodiff knows, or "
                "compute it from supported operations")
    if hasattr(np.ndarray, name):
        return (f"compute what x.{name}() gives from NumPy operations autodiff knows, or "
                "wrap x in ad.stop_gradient if no gradient should flow through it")
    return (f"NumPy arrays have no method '.{name}()': compute it from NumPy operations "
            "autodiff knows; a method of another object (a random generator's) is run as it "
            "is when the object is a global: else compute its values outside the function "
            "and pass them in")


def _type_of(operand: Operand) -> Operand | None:
    """``x`` for ``operand``, the result of ``type(x)``, else None."""
    node = operand.node if isinstance(operand, Value) else None
    if node is None or isinstance(node, Region) or node.op.name != "type_of":
        return None
    return node.args[0]


def _holds_functions(obj: object) -> bool:
    """Whether ``obj`` is a list, tuple or dict of functions (names may sit beside them:
    ``[("tanh", np.tanh), ...]``): code calling one of them (``ACTIVATIONS[name](x)``,
    ``for f in LAYERS: x = f(x)``) is compiled like code calling a function by its
    name, resolved while compiling. (Exact types only: a subclass may run code.)"""
    functions, seen, todo = False, set(), [obj]
    while todo:
        item = todo.pop()
        if type(item) in (list, tuple, dict):
            if id(item) in seen:  # a container holding itself
                return False
            seen.add(id(item))
            if type(item) is dict and not all(type(key) in (str, int) for key in item):
                return False
            todo.extend(item.values() if type(item) is dict else item)
        elif callable(item) and not isinstance(item, (list, tuple, dict)):
            functions = True
        elif type(item) is not str:
            return False  # data: read when the derivative runs
    return functions


def _functions_held(obj: object) -> Operand:
    """The container of functions ``obj`` as the frontend holds one written in the code:
    a tuple of operands for a list or tuple, a :class:`Record` for a dict."""
    if type(obj) is dict:
        return Record("dict", dict, {key: _functions_held(value) for key, value in obj.items()})
    if type(obj) in (list, tuple):
        return tuple(_functions_held(item) for item in obj)
    return Const(obj)


def _runs_user_code(obj: object, attr: str) -> bool:
    """Whether reading ``obj.attr`` would run code of the user's (a property, a
    descriptor, ``__getattr__``) rather than look up a function, method or value.
    Modules and classes are read as they are: that is how ``np.linalg.norm`` resolves."""
    if issubclass(type(obj), (types.ModuleType, type)):
        return False
    try:
        found = inspect.getattr_static(obj, attr)
    except AttributeError:
        return hasattr(type(obj), "__getattr__")
    if isinstance(found, (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType,
                          types.MethodDescriptorType, types.WrapperDescriptorType)):
        return False
    return hasattr(type(found), "__get__") and not callable(found)


_OPERATOR_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
                     ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%"}
_INPLACE_HINT = ("build a new array instead, e.g. with np.where, np.concatenate or "
                 "arithmetic; arrays cannot be updated in place in differentiated code yet")


def _describe_target(target: ast.expr) -> str:
    if isinstance(target, ast.Subscript):
        return f"an array element ({ast.unparse(target)} = ...)"
    if isinstance(target, ast.Attribute):
        return f"an attribute ({ast.unparse(target)} = ...)"
    return f"'{ast.unparse(target)}'"


class UnpackedWhenRun:
    """``*xs`` of a value known only when the code runs (``*x.shape``), passed to a call
    run as it is, which unpacks it then."""

    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value


def runs_as_it_is(callee, filename: str) -> bool:
    """Whether a call of ``callee`` runs as it is whatever its arguments: a library's
    function (not a builtin the frontend decides, not an op, not the user's code)."""
    if not isinstance(callee, Const) or callee.path is None or not callable(callee.value):
        return False
    fn = callee.value
    if getattr(fn, "__module__", None) == "builtins" or isinstance(fn, type) or getattr(
            fn, "builds_derivative", False) or registry.callable_binding(fn) is not None:
        return False
    return isinstance(fn, types.FunctionType) and is_library_code(fn, filename) or not (
        isinstance(fn, types.FunctionType))


def _is_pure_builtin(fn) -> bool:
    try:
        return fn in PURE_BUILTINS
    except TypeError:  # an unhashable callable
        return False


def _constant(operand):
    """The Python value of a constant operand (a tuple of them too), or raise KeyError.
    (A constant with a path is a module, function or class the code names.)"""
    if isinstance(operand, Const):
        return operand.value
    if isinstance(operand, tuple):
        return tuple(_constant(item) for item in operand)
    raise KeyError(operand)


# The longest range of constants read as the tuple of its items while compiling.
MAX_FOLDED_RANGE = 1024


def _range_items(*bounds: int) -> tuple | None:
    """The items of ``range(*bounds)`` as a tuple (None past ``MAX_FOLDED_RANGE``)."""
    items = range(*bounds)
    return tuple(items) if len(items) <= MAX_FOLDED_RANGE else None


def _constant_index(index) -> int | slice | None:
    """An index of constants (an int, or a slice of ints) as Python's, else None."""
    if isinstance(index, Const) and type(index.value) is int and index.path is None:
        return index.value
    if isinstance(index, SliceSpec) and all(
            isinstance(p, Const) and p.path is None and (p.value is None or type(p.value) is int)
            for p in (index.start, index.stop, index.step)):
        return slice(index.start.value, index.stop.value, index.step.value)
    return None


def _folded_call(fn, args: tuple, kwargs: dict) -> Const | None:
    """``fn(*args, **kwargs)`` run now, when every argument is a constant and the result
    one too; None otherwise (the call is then compiled, or refused, as any other)."""
    try:
        values = [_constant(a) for a in args]
        named = {k: _constant(v) for k, v in kwargs.items()}
    except KeyError:
        return None
    try:
        result = fn(*values, **named)
    except Exception:  # noqa: BLE001 - the compiled call raises it where the user sees it
        return None
    if isinstance(result, list):
        result = tuple(result)  # sorted(...): a constant reads the same; updating it is refused
    return Const(result) if literal(result) else None
