"""Calls to the user's own functions: their bodies are converted in place (inlined).

A module-level helper, a function nested in the differentiated one, or a lambda
is compiled like the caller: its source is read, its parameters are bound to
the caller's operands (defaults filled in), and its nodes join the caller's
graph with comments naming the helper's lines. Recursion cannot be inlined and
is reported.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
import weakref

import numpy as np

from autodiff.errors import AutodiffError, UnsupportedSyntaxError
from autodiff.frontend.generators import as_list_builder, is_generator
from autodiff.frontend.signature import ArrayFacts
from autodiff.frontend.source import read_function
from autodiff.frontend.structures import (
    Record,
    describe,
    is_structure_operand,
    same_nesting,
    spec_of_operand,
    taken_apart,
)
from autodiff.graph.ir import (
    Const,
    Graph,
    Operand,
    Region,
    Value,
    map_operand,
    operand_values,
    walk,
)
from autodiff.graph.scopes import Scope
from autodiff.ops.structures import part_read


class LocalFunction:
    """A ``def`` or ``lambda`` inside the function being converted."""

    def __init__(self, node: ast.FunctionDef | ast.Lambda, defaults: list, kw_defaults: list,
                 parent) -> None:
        self.node = node
        self.defaults = defaults
        self.kw_defaults = kw_defaults
        self.parent = parent
        self.name = getattr(node, "name", "<lambda>")

    def body(self) -> list[ast.stmt]:
        if isinstance(self.node, ast.Lambda):
            return [ast.copy_location(ast.Return(self.node.body), self.node.body)]
        return self.node.body


# The cells array defaults of the user's functions are read through, by function.
_DEFAULT_CELLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# Recursion is unrolled while compiling, up to this depth and this many calls in all.
RECURSION_DEPTH = 50
RECURSIVE_CALLS = 1000


class CallsMixin:
    """Inlining of user functions for :class:`autodiff.frontend.convert.Converter`."""

    def stmt_FunctionDef(self, stmt: ast.FunctionDef) -> None:
        if stmt.decorator_list:
            raise self.error(stmt, "decorated functions inside a differentiated function are "
                             "not supported", hint="define the function at module level")
        self.env[stmt.name] = self.local_function(stmt)

    def expr_Lambda(self, node: ast.Lambda) -> LocalFunction:
        return self.local_function(node)

    def local_function(self, node) -> LocalFunction:
        arguments = node.args
        defaults = [self.expr(d) for d in arguments.defaults]
        kw_defaults = [None if d is None else self.expr(d) for d in arguments.kw_defaults]
        return LocalFunction(node, defaults, kw_defaults, self)

    def call_function(self, node: ast.Call, fn, args: tuple, kwargs: dict,
                      returning: bool = False) -> Operand:
        """The result of calling the user function ``fn``, with its body inlined (with
        ``returning``, a constructor's: what its first parameter holds at its end)."""
        key = fn.node if isinstance(fn, LocalFunction) else getattr(fn, "__code__", fn)
        name = fn.name if isinstance(fn, LocalFunction) else fn.__qualname__
        if not isinstance(fn, LocalFunction) and fn.__code__.co_filename != self.source.filename:
            name = f"{fn.__module__}.{name}"  # comments name lines of another file
        if key in self.calls_in_progress:
            self.unrolling_recursion(node, name, self.calls_in_progress.count(key))
        if isinstance(fn, LocalFunction):
            callee = type(self)(self.builder, self.source, self.globals, self.closure,
                                location=self.fixed_location, rule=self.rule)
            callee.enclosing = fn.parent
            params = self.bind_local(node, fn, args, kwargs)
            body = fn.body()
        else:
            callee, params, body = self.module_function(node, fn, args, kwargs)
        if is_generator(body):  # run to its end, as a function building a list
            body = as_list_builder(body, lambda part, message, hint: callee.error(
                part, message, hint=hint))
        if returning:
            last = body[-1]
            first = ast.copy_location(ast.Name(next(iter(params)), ast.Load()), last)
            body = [*body, ast.copy_location(ast.Return(first), last)]
        callee.function_name = name
        callee.calling = self
        callee.built_lists = self.built_lists
        callee.sequence_kinds, callee.array_values = self.sequence_kinds, self.array_values
        callee.calls_in_progress = (*self.calls_in_progress, key)
        callee.recursive_calls = self.recursive_calls
        callee.env.update(params)
        callee.arguments = self.arguments | {v for v in params.values() if isinstance(v, Value)}
        callee.general_arguments = self.general_arguments
        callee.not_none = self.not_none
        callee.stale_views = self.stale_views
        saved = self.builder.loc
        try:
            result = callee.run(body)
        except RecursionError:  # Python's own stack ran out before RECURSION_DEPTH
            if key not in self.calls_in_progress:
                raise
            raise self.error(node, f"recursive call to '{name}' nested too deep to unroll while "
                             "compiling: autodiff unrolls recursion, which must end where "
                             "arguments known while compiling decide it",
                             hint="write the recursion as a loop") from None
        finally:
            self.builder.loc = saved
        self.returned_from(callee, params, node)
        return result

    def unrolling_recursion(self, node: ast.Call, name: str, depth: int) -> None:
        """A function calling itself is inlined again, as any call is: the recursion is
        unrolled while compiling, and ends where arguments known then decide its base
        case (``power(x, n - 1)`` down to ``n == 0`` for a constant ``n``). A depth
        decided only when the code runs would unroll without end: refused past a depth,
        or past a number of calls (two calls a level double at each)."""
        self.recursive_calls[0] += 1
        if depth < RECURSION_DEPTH and self.recursive_calls[0] <= RECURSIVE_CALLS:
            return
        if depth >= RECURSION_DEPTH:
            reached = f"nested {depth} deep"
            hint = (f"give the depth as a constant or an int argument where '{name}' is "
                    "first called, or write the recursion as a loop")
        else:
            reached = f"made {RECURSIVE_CALLS} times"
            hint = "write the recursion as a loop"
        raise self.error(node, f"recursive call to '{name}' {reached} while compiling: "
                         "autodiff unrolls recursion, which must end where arguments known "
                         "while compiling decide it", hint=hint)

    def call_signature(self, node: ast.Call, fn, arguments: dict) -> tuple[dict, dict]:
        """The specs and facts (``frontend/signature.py``) of the arguments of a call of
        a derivative compiled per call signature: an int a setting, an array's rank and
        dtype known. Refused, so that the code around is compiled per call signature
        too, where they are not known while compiling."""
        specs, known = {}, {}
        for name, value in arguments.items():
            if is_structure_operand(value) or isinstance(value, Const):
                specs[name] = spec_of_operand(value)
                continue
            rank, dtype = self.builder.rank_of(value), self.builder.dtypes.get(value)
            if rank is None or dtype is None:
                error = self.error(node, f"'{fn.__name__}' is compiled for each call's "
                                   f"ranks and dtypes, and those of '{name}' are not known "
                                   "while compiling here", kind=UnsupportedSyntaxError,
                                   hint="pass it an argument of the function itself")
                error.reads_call_facts = True
                raise error
            known[name] = ArrayFacts(rank, dtype)
        return specs, known

    def call_derivative(self, node: ast.Call, fn: types.FunctionType, args: tuple,
                        kwargs: dict) -> Operand:
        """The result of calling a derivative autodiff generated: its graph, inlined."""
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as error:
            raise self.error(node, f"bad call to '{fn.__name__}': {error}") from None
        bound.apply_defaults()
        arguments = {name: value if _is_operand(value) else self.default_operand(
            node, fn, name, value) for name, value in bound.arguments.items()}
        structured = {name: value for name, value in arguments.items()
                      if is_structure_operand(value)}
        by_structure = getattr(fn, "by_structure", None)
        source = fn.graph if isinstance(getattr(fn, "graph", None), Graph) else None
        if source is None and not structured:  # compiled per structure alone
            for value in arguments.values():
                self.read_as_structure(node, value, "a structure")
        complex_values = self.builder.graph.complex
        reads_call_facts = source is not None and source.reads_call_facts
        self.builder.reads_call_facts |= reads_call_facts
        if by_structure is not None and (getattr(by_structure, "per_signature", False) or (
                reads_call_facts and self.builder.fold_constants)):
            # compiled per call signature (or read so while this code is): for this
            # call's ranks, dtypes and settings
            specs, known = self.call_signature(node, fn, arguments)
            fn = by_structure.for_specs(specs, complex_values, known)
            source = self.parts_bound(node, fn.graph, structured)
        elif by_structure is not None and (structured or source is None or complex_values
                                           and not source.complex):
            # the derivative compiled for these structures (and complex values), their
            # parts read here
            fn = by_structure.for_specs({name: spec_of_operand(value)
                                         for name, value in structured.items()},
                                        complex_values=complex_values)
            source = self.parts_bound(node, fn.graph, structured)
        elif structured and any(isinstance(v, Record) for v in structured.values()):
            raise self.error(node, f"'{fn.__name__}' takes arrays, and this call passes a "
                             "dict or an object", kind=UnsupportedSyntaxError)
        if source.complex:
            self.builder.graph.complex = True
        elif by_structure is not None:
            self.builder.inlined_real_derivative = True
        # (rules for real values alone, inlined with it: a derivative of this graph is
        # compiled for complex values apart)
        self.builder.graph.real_values_assumed |= source.real_values_assumed
        bindings = {param: arguments[param.hint] for param in source.params
                    if param.hint in arguments}
        graph, _ = source.copy(bindings, phase="forward")
        for inner in walk(graph.nodes):
            if inner.loc is not None:  # comments name the derivative the line comes from
                inner.loc = dataclasses.replace(inner.loc, function=fn.__name__)
        self.builder.nodes.extend(graph.nodes)
        self.written_by(graph.nodes)  # what it writes into the caller's structures
        outputs = [self.taken_apart(output) for output in graph.outputs]
        # several outputs are what the derivative returns as a tuple
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def parts_bound(self, node: ast.Call, graph: Graph, structured: dict) -> Graph:
        """``graph`` (a derivative compiled for structures) with the reads of its
        structured params' parts bound to the parts of the structures passed here."""
        parts = {param: structured[param.hint] for param in graph.params
                 if param.hint in structured}
        kept, bindings = [], {}
        for inner in graph.nodes:
            found = None if isinstance(inner, Region) else part_read(inner, True)
            checked = None if isinstance(inner, Region) else inner.op.checks_structure
            if checked is not None and inner.args[0] in parts:
                # a vjp's seed passed as a structure: its nesting is known, checked here
                self.check_nesting(node, parts[inner.args[0]], inner.args[checked])
                parts[inner.out] = parts[inner.args[0]]
                continue
            if found is not None and found[0] in parts:
                whole = parts[found[0]]
                part = (whole.items[found[1]] if isinstance(whole, Record)
                        else whole[found[1]] if isinstance(whole, tuple)
                        else Const(whole.value[found[1]]))
                if is_structure_operand(part):
                    parts[inner.out] = part
                bindings[inner.out] = part
                continue
            kept.append(inner)
        # a write into a structure the caller passed writes into it as it is then
        wholes = {v: part.whole for v, part in parts.items()
                  if getattr(part, "whole", None) is not None}
        bindings.update((v, whole) for v, whole in wholes.items() if v in bindings)
        leftover = [v for inner in walk(kept) if isinstance(inner, Region) or not hasattr(
                        inner.op, "spec") for v in operand_values(inner.args)
                    if v in parts and not isinstance(parts[v], Const) and not (
                        v in wholes and not isinstance(inner, Region)
                        and inner.op.nondiff_output)]
        if leftover:
            raise self.error(node, f"this derivative uses '{leftover[0].hint}' as a whole, "
                             "which is a structure here", kind=UnsupportedSyntaxError,
                             hint="pass its arrays one by one")
        trimmed = Graph(graph.name, graph.params, kept, graph.outputs, graph.filename,
                        graph.signature)
        trimmed.complex = graph.complex
        copy, mapping = trimmed.copy(bindings)
        if wholes:
            wholes = {mapping.get(v, v): whole for v, whole in wholes.items()}
            for inner in walk(copy.nodes):
                if not isinstance(inner, Region) and inner.op.nondiff_output:
                    inner.args = tuple(map_operand(a, lambda v: wholes.get(v, v))
                                       for a in inner.args)
        return copy

    def check_nesting(self, node: ast.Call, given: Operand, like: Value) -> None:
        """``given``, a structure passed where one like the structure ``like`` is built
        (a vjp's seed and its output), has its keys and nesting."""
        expected = like.node.op.spec
        if not same_nesting(spec_of_operand(given), expected):
            raise self.error(
                node, f"the seed has the structure {describe(spec_of_operand(given))}, and the "
                f"output it weighs {describe(expected)}",
                hint="pass a seed with the output's keys and nesting")

    def taken_apart(self, output: Operand) -> Operand:
        """A structure a derivative builds (a gradient's dict) as the frontend holds one."""
        return taken_apart(output, self.structure_of)

    def structure_of(self, value: Operand) -> Operand:
        """What the frontend holds for a value: a structure it read the parts of."""
        return value

    def module_function(self, node: ast.Call, fn: types.FunctionType, args: tuple,
                        kwargs: dict):
        try:
            source = read_function(fn)
        except AutodiffError as error:
            raise self.error(node, f"cannot read the source of '{fn.__qualname__}', called "
                             f"here: {error.message}", kind=type(error)) from None
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as error:
            raise self.error(node, f"bad call to '{fn.__qualname__}': {error}") from None
        bound.apply_defaults()
        params = {}
        spec = source.tree.args
        for name, value in bound.arguments.items():
            if spec.vararg is not None and name == spec.vararg.arg:
                params[name] = tuple(value)  # *args: a tuple known while compiling
            elif spec.kwarg is not None and name == spec.kwarg.arg:
                params[name] = Record("dict", dict, dict(value))  # **kwargs: a dict
            else:
                params[name] = value if _is_operand(value) else self.default_operand(
                    node, fn, name, value)
        callee = type(self)(self.builder, source, fn.__globals__, closure_cells(fn),
                            location=self.fixed_location, rule=self.rule)
        return callee, params, source.tree.body

    def default_operand(self, node: ast.Call, fn, name: str, value: object) -> Operand:
        if value is None or isinstance(value, (bool, int, float, str)):
            return Const(value)
        if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
            return Const(value)
        if callable(value) or isinstance(value, types.ModuleType):
            return Const(value, path=None)
        if isinstance(value, (np.ndarray, np.generic, complex)):
            # an array default: read when the derivative runs, as a closure variable is,
            # from a cell holding the function's default object
            cells = _DEFAULT_CELLS.setdefault(fn, {})
            cell = cells.get(name)
            if cell is None or cell.cell_contents is not value:
                cell = cells[name] = types.CellType(value)
            return self.emit(node, "variable", (Const(name), Const(Scope.of_cell(cell, name))),
                             hint="")
        raise self.error(node, f"the default value of '{name}' of '{fn.__qualname__}' is a "
                         f"{type(value).__name__}, which generated code cannot refer to",
                         hint=f"pass {name} explicitly")

    def bind_local(self, node: ast.Call, fn: LocalFunction, args: tuple, kwargs: dict) -> dict:
        spec = fn.node.args
        positional = [a.arg for a in (*spec.posonlyargs, *spec.args)]
        keyword_only = [a.arg for a in spec.kwonlyargs]
        if len(args) > len(positional) and spec.vararg is None:
            raise self.error(node, f"'{fn.name}' takes {len(positional)} positional arguments "
                             f"but {len(args)} were given")
        params = dict(zip(positional, args))
        if spec.vararg is not None:  # *args: the rest, a tuple known while compiling
            params[spec.vararg.arg] = tuple(args[len(positional):])
        extra = {}
        for name, value in kwargs.items():
            if name in params or name not in positional + keyword_only:
                if spec.kwarg is not None and name not in params:
                    extra[name] = value
                    continue
                raise self.error(node, f"bad keyword argument '{name}' in the call to "
                                 f"'{fn.name}'")
            params[name] = value
        if spec.kwarg is not None:  # **kwargs: the other keywords, a dict
            params[spec.kwarg.arg] = Record("dict", dict, extra)
        first_default = len(positional) - len(fn.defaults)
        for index, name in enumerate(positional):
            if name not in params:
                if index < first_default:
                    raise self.error(node, f"missing argument '{name}' in the call to "
                                     f"'{fn.name}'")
                params[name] = fn.defaults[index - first_default]
        for name, default in zip(keyword_only, fn.kw_defaults):
            if name not in params:
                if default is None:
                    raise self.error(node, f"missing argument '{name}' in the call to "
                                     f"'{fn.name}'")
                params[name] = default
        return params


def closure_cells(fn: types.FunctionType) -> dict[str, types.CellType]:
    """The closure cells of ``fn`` by name: their values are read through them, so a
    derivative sees what they hold when it runs."""
    return dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))


def _is_operand(value: object) -> bool:
    from autodiff.frontend.objects import Bound
    from autodiff.graph.ir import SliceSpec

    if isinstance(value, tuple):
        return all(_is_operand(v) for v in value)
    return isinstance(value, (Value, Const, SliceSpec, LocalFunction, Record, Bound))


__all__ = ["CallsMixin", "LocalFunction", "closure_cells"]
