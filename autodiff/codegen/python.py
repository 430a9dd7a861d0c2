"""Graph to Python source: one statement per node, rendered with astor.

Each op's kernel is a template over its parameter names (``"np.sum(a,
axis=axis, keepdims=keepdims)"``); codegen substitutes the operands, leaves
out keyword arguments that hold their default, and names the results (see
:mod:`autodiff.graph.names`). A comment before each block names the user's
source line it comes from.
"""

from __future__ import annotations

import ast
import copy
import functools
import keyword
import math
import re
import symtable
from dataclasses import dataclass, field

import numpy as np

from autodiff.codegen import origins
from autodiff.codegen.memory import InPlace, releases
from autodiff.codegen.text import statement_text
from autodiff.errors import UnsupportedSyntaxError
from autodiff.frontend.structures import ARRAY_KINDS
from autodiff.graph.ir import (
    UNDEFINED,
    Block,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    Region,
    SliceSpec,
    Undefined,
    Value,
    operand_values,
    walk,
)
from autodiff.graph.names import Layout, assign_names
from autodiff.graph.printing import PHASE_PREFIX
from autodiff.graph.scopes import Home, Scope
from autodiff.ops import runtime
from autodiff.ops.control import variable as variable_op
from autodiff.ops.exceptions import CAUGHT

# What generated code may call besides the user's own names: bound as closure cells.
RUNTIME_NAMES: dict[str, object] = {"np": np, "math": math} | {
    name: getattr(runtime, name) for name in dir(runtime)
    if callable(getattr(runtime, name)) and not name.startswith("_")
    and getattr(getattr(runtime, name), "__module__", "") == runtime.__name__
} | {"at_user_line": origins.at_user_line, "check_finite": origins.check_finite,
     "warn_at_user_line": origins.warn_at_user_line}
_BUILTINS_USED = frozenset({"complex", "float", "len", "slice"})
_SINGLE_PRECISION = (np.dtype(np.float32), np.dtype(np.complex64))


@dataclass
class GeneratedSource:
    """The text of a generated function and the names it may read from outside.

    ``runtime``, ``closure_names`` and ``foreign`` are those it does read, found in
    its text by :func:`names_read` when first asked for; a caller that compiles
    the text learns them from the compiled code instead, and gives them as ``reads``
    (see :func:`autodiff.codegen.compile.compile_generated`)."""

    text: str
    name: str
    # every name standing for something outside that the text may read, by kind: a
    # runtime helper (its name -> the object), a closure variable of the user's, and a
    # name standing for the namespace of code from elsewhere (a helper's module, a
    # rule's closure cell) -> the scope it stands for
    helpers: dict[str, object] = field(default_factory=dict)
    closure_candidates: set[str] = field(default_factory=set)
    foreign_candidates: dict[str, Scope] = field(default_factory=dict)
    # numba: keyword-only parameters holding the variables read, (name, scope) each
    variables: dict[str, tuple[str, Scope]] = field(default_factory=dict)
    # line of each source comment in ``text`` (the ``def`` is line 1) -> (location, phase)
    marks: dict[int, tuple[Location | None, str]] = field(default_factory=dict)
    reads: set[str] | None = None  # those of the names above the text reads, once known

    def candidates(self) -> set[str]:
        """Every name above: what the text may read from outside."""
        return (set(self.helpers) | self.closure_candidates
                | set(self.foreign_candidates))

    def read(self) -> set[str]:
        if self.reads is None:
            self.reads = names_read(self.text) & self.candidates()
        return self.reads

    @property
    def runtime(self) -> dict[str, object]:
        """The runtime helpers the text calls: name -> object."""
        read = self.read()
        return {name: helper for name, helper in self.helpers.items() if name in read}

    @property
    def closure_names(self) -> set[str]:
        """The user's closure variables the text reads."""
        return {name for name in self.read() if name in self.closure_candidates}

    @property
    def foreign(self) -> dict[str, Scope]:
        """The names the text reads standing for other code's namespaces -> the scope."""
        read = self.read()
        return {name: scope for name, scope in self.foreign_candidates.items()
                if name in read}


@functools.cache
def _parse_template(template: str, statement: bool = False) -> ast.AST:
    if statement:
        return ast.parse(template).body[0]
    return ast.parse(template, mode="eval").body


class _Renderer:
    def __init__(self, names: dict[Value, str], aliases: dict[str, str],
                 outer: dict[tuple[str, Scope | None], str]) -> None:
        self.names = names
        self.aliases = aliases  # runtime helpers renamed away from the user's names
        self.outer = outer  # how each name read from outside is written (see _outer_names)
        self.expressions: dict[Value, ast.expr] = {}  # values written as expressions

    def operand(self, operand: Operand, in_subscript: bool = False) -> ast.expr:
        if isinstance(operand, Value) and operand in self.expressions:
            return copy.deepcopy(self.expressions[operand])
        if isinstance(operand, Value):
            if operand.node is not None and operand.node.op.inline:
                return self.node_expr(operand.node)
            return ast.Name(self.names[operand], ast.Load())
        if isinstance(operand, Const):
            return self.constant(operand)
        if isinstance(operand, SliceSpec):
            parts = [None if isinstance(p, Const) and p.value is None else self.operand(p)
                     for p in (operand.start, operand.stop, operand.step)]
            if in_subscript:
                return ast.Slice(*parts)
            return ast.Call(ast.Name("slice", ast.Load()),
                            [p or ast.Constant(None) for p in parts], [])
        if isinstance(operand, tuple):
            return ast.Tuple([self.operand(item, in_subscript) for item in operand], ast.Load())
        raise TypeError(f"cannot render operand {operand!r}")

    def constant(self, const: Const) -> ast.expr:
        if const.path is not None:
            root, dot, rest = const.path.partition(".")
            return _parse_template(self.outer.get((root, const.scope), root) + dot + rest)
        value = const.value
        if isinstance(value, tuple):
            return ast.Tuple([self.constant(Const(v)) for v in value], ast.Load())
        if isinstance(value, np.dtype) and getattr(np, value.name, None) is value.type:
            return _parse_template(f"np.{value.name}")
        if isinstance(value, np.generic):
            if value.dtype in _SINGLE_PRECISION:  # np.float32(0.5): its own precision
                return _parse_template(f"np.{value.dtype.name}({value.item()!r})")
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return _parse_template(f"float('{value}')")
        if isinstance(value, complex):  # 1j, (1+2j); complex(float('nan'), 1.0)
            if math.isfinite(value.real) and math.isfinite(value.imag):
                return ast.Constant(value)
            return ast.Call(ast.Name("complex", ast.Load()), [
                self.constant(Const(value.real)), self.constant(Const(value.imag))], [])
        if isinstance(value, Undefined):
            return ast.Constant(None)
        if value is None or value is Ellipsis or isinstance(value, (bool, int, float, str)):
            return ast.Constant(value)
        raise TypeError(f"cannot write the constant {value!r} in generated code")

    def template(self, named: dict, defaults: dict, template: str,
                 statement: bool = False) -> ast.AST:
        return self._filled(_parse_template(template, statement), named, defaults)

    def _filled(self, node: ast.AST, named: dict, defaults: dict) -> ast.AST:
        """A copy of the template ``node`` with its parameters' names replaced by their
        operands, keyword arguments holding their default left out, and ``f(*operands)``
        or ``[*operands]`` of a known tuple spread out (``f(a, b)``)."""
        kind = type(node)
        if kind is ast.Name:
            if node.id in named:
                return self.operand(named[node.id])
            copied = _copy_node(node)
            copied.id = self.aliases.get(node.id, node.id)
            return copied
        if kind is ast.Subscript and isinstance(node.slice, ast.Name) and node.slice.id in named:
            copied = _copy_node(node)
            copied.value = self._filled(node.value, named, defaults)
            copied.slice = self.operand(named[node.slice.id], in_subscript=True)
            return copied
        copied = _copy_node(node)
        if kind is ast.Call:
            copied.keywords = [k for k in node.keywords
                               if not _holds_default(k, named, defaults)]
        for field, value in copied.__dict__.items():
            if isinstance(value, ast.AST):
                setattr(copied, field, self._filled(value, named, defaults))
            elif isinstance(value, list):
                setattr(copied, field, [self._filled(item, named, defaults)
                                        if isinstance(item, ast.AST) else item
                                        for item in value])
        if kind is ast.Call:
            copied.args = _spread(copied.args)
        elif kind is ast.List:
            copied.elts = _spread(copied.elts)
        return copied

    def node_expr(self, node: Node) -> ast.expr:
        if node.op is variable_op:  # the user's own name, never a helper's alias
            name, scope = node.args[0].value, node.args[1].value
            return _parse_template(self.outer.get((name, scope), name))
        kernel = node.op.kernel
        text = kernel(node.named_args) if callable(kernel) else kernel
        return self.template(node.named_args, node.op.defaults, text)


class Expressions:
    """Nodes and operands written as Python expressions outside a generated function
    (the reads and the building of structures around a numba kernel): each value
    named as ``names`` says, or, once :meth:`inline` was given its node, written as
    that node's expression in its place.

    >>> from autodiff.graph.ir import Const, Node, Value
    >>> from autodiff.ops.structures import item
    >>> params = Value("params")
    >>> read = Node(item, (params, Const("W")), Value("params_W"), None, "forward")
    >>> Expressions({params: "params"}).of_node(read)
    "params['W']"
    """

    def __init__(self, names: dict[Value, str],
                 outer: dict[tuple[str, Scope], str] | None = None) -> None:
        # (``outer``: how a global or closure variable read is written, by default its name)
        self._render = _Renderer(names, {}, outer or {})

    def inline(self, node: Node) -> None:
        self._render.expressions[node.out] = self._render.node_expr(node)

    def of_node(self, node: Node) -> str:
        return statement_text(ast.Expr(self._render.node_expr(node)))

    def of_operand(self, operand: Operand) -> str:
        return statement_text(ast.Expr(self._render.operand(operand)))


def _copy_node(node: ast.AST) -> ast.AST:
    """A shallow copy of an AST node: its fields and positions, the same children."""
    copied = type(node).__new__(type(node))
    copied.__dict__.update(node.__dict__)
    return copied


def _spread(items: list[ast.expr]) -> list[ast.expr]:
    """``*operands`` of a known tuple of operands written out as the operands."""
    return [item for elt in items for item in (
        elt.value.elts if isinstance(elt, ast.Starred) and isinstance(elt.value, ast.Tuple)
        else [elt])]


def _holds_default(keyword: ast.keyword, named: dict, defaults: dict) -> bool:
    if not isinstance(keyword.value, ast.Name) or keyword.value.id not in defaults:
        return False
    operand = named.get(keyword.value.id)
    default = defaults[keyword.value.id]
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) is type(default) and operand.value == default)


def _comment(node) -> str | None:
    if node.loc is None:
        return "# the gradients, with the shapes and dtypes of the arguments" if (
            node.phase == "backward") else None
    prefix = PHASE_PREFIX.get(node.phase, "")
    where = f" (in {node.loc.function})" if node.loc.function else ""
    return f"# {prefix}line {node.loc.lineno}{where}: {node.loc.text}"


def generate(graph: Graph, home: Home, reserved: frozenset[str] = frozenset(),
             numba: bool = False, check_finite: bool = False,
             by_structure: object = None, complex_arguments: bool = False,
             guarded: bool = True) -> GeneratedSource:
    """Python source of a function computing ``graph``'s outputs from its params, to run
    in the namespace ``home``: names the graph reads from elsewhere are qualified.

    The body runs inside ``try``: an error raised in it is pointed at the
    user's line by ``at_user_line`` (:mod:`autodiff.codegen.origins`).
    ``check_finite=True`` checks the arguments and every statement's result for
    NaN and infinity. ``numba=True`` writes the forms ``numba.njit`` takes: no
    ``try``, no ``del`` (numba frees values itself) and reversed ranges as
    ``range(stop - 1, start - 1, -1)``.

    ``by_structure``, when given, takes calls whose arguments are not all arrays and
    numbers (a dict of parameters): the function starts by handing them over, and
    with ``complex_arguments`` the calls with a complex argument too (its rules are
    for real values: see ``transforms.complex_values``). ``guarded=False`` leaves the
    body outside ``try`` (an exported derivative, which runs without autodiff).
    """
    helpers = dict(RUNTIME_NAMES)
    if by_structure is not None:
        helpers.update(by_structure=by_structure, array_kinds=ARRAY_KINDS)
    for node in walk(graph.nodes):  # functions with rules of their own, called by name
        if not isinstance(node, Region):
            helpers.update(node.op.runtime)
    outside = _Outside(graph, home, set(helpers) | reserved, numba)
    user_names = outside.names
    # (a name of the user's holding the helper itself, numpy as np, needs no alias)
    aliases = _helper_aliases({name for name in user_names if name not in helpers
                               or outside.home_values.get(name) is not helpers[name]}, helpers)
    taken = reserved | set(helpers) | set(aliases.values()) | _BUILTINS_USED | user_names
    layout = Layout(graph)
    in_place = InPlace(graph, layout)
    names, _ = assign_names(graph, frozenset(taken), reuse_dead=True, shares_name_with=in_place,
                            layout=layout)
    render = _Renderer(names, aliases, outside.written)
    writer = _Writer(graph, names, layout, in_place, render)
    if numba:
        writer.releases, writer.numba = {}, True
    if check_finite:
        writer.check = aliases.get("check_finite", "check_finite")
    lines = writer.block(graph.nodes, top=True)
    if check_finite:
        lines[:0] = [f"{writer.check}({names[p]})" for p in graph.params if p in names]
    outputs = [render.operand(o) for o in graph.outputs]
    result = outputs[0] if len(outputs) == 1 else ast.Tuple(outputs, ast.Load())
    lines.append(statement_text(ast.Return(result)))
    if guarded and not numba:
        lines = _guarded(lines, aliases.get("at_user_line", "at_user_line"),
                         _free_name("error", taken | set(names.values())))
    if by_structure is not None:
        lines[:0] = _handing_over(graph, names, aliases, complex_arguments)

    name = function_name(graph.name)
    text = _function_text(graph, lines, name, list(outside.variables))
    marks = {number: writer.locations[line.strip()]
             for number, line in enumerate(text.splitlines(), 1)
             if line.strip() in writer.locations}
    return GeneratedSource(
        text=text, name=name,
        helpers={aliases.get(name, name): helper for name, helper in helpers.items()},
        closure_candidates=outside.closure_names,
        foreign_candidates=outside.foreign,
        variables=outside.variables,
        marks=marks,
    )


def _handing_over(graph: Graph, names: dict, aliases: dict, complex_arguments: bool
                  ) -> list[str]:
    """``if type(x) not in array_kinds ...: return by_structure(x, ...)``: a call with a
    structure among its arguments runs the derivative compiled for that structure, and
    with ``complex_arguments`` (``or complex_values(x, ...)``) one with a complex
    argument the derivative compiled for complex values. (``type()``, not
    ``.__class__``, which loads a lazy proxy the call may never use.)"""
    kinds = aliases.get("array_kinds", "array_kinds")
    params = [names.get(p, p.hint) for p in graph.params]
    tests = [f"type({name}) not in {kinds}" for name in params]
    if complex_arguments:
        tests.append(f"{aliases.get('complex_values', 'complex_values')}({', '.join(params)})")
    lines, line = [], "if "
    for i, test in enumerate(tests):
        part = test + (" or" if i < len(tests) - 1 else ":")
        if len(line) + len(part) > 88 and line.strip() not in ("if", "if ("):
            lines.append(line.rstrip())
            line = "        "
        line += part + " "
    lines.append(line.rstrip())
    if len(lines) > 1:
        lines[0] = lines[0].replace("if ", "if (", 1)
        lines[-1] = lines[-1][:-1] + "):"
    keyword_only = set(graph.signature.keyword_only)
    call = ", ".join(f"{name}={name}" if p.hint in keyword_only else name
                     for p, name in zip(graph.params, params))
    by_structure = aliases.get("by_structure", "by_structure")
    return [*lines, f"    return {by_structure}({call})"]


def _guarded(lines: list[str], handler: str, error: str) -> list[str]:
    """``lines`` inside ``try``, errors pointed at the user's line by ``handler``."""
    return ["try:", *_indent(lines), f"except Exception as {error}:",
            f"    raise {handler}({error})"]


def _free_name(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    return name


class _Writer:
    """Statements of nodes and regions, one indented line list per block."""

    def __init__(self, graph: Graph, names, layout: Layout, in_place: InPlace,
                 render: _Renderer) -> None:
        self.graph = graph
        self.names = names
        self.layout = layout
        self.in_place = in_place
        self.render = render
        self.previous_comment: str | None = None
        self.releases = releases(graph, names, in_place, layout)
        self.numba = False
        self.check: str | None = None  # the name of check_finite, when checking
        self.locations: dict[str, tuple[Location | None, str]] = {}  # comment -> origin

    def block(self, nodes: list, top: bool = False) -> list[str]:
        lines: list[str] = []
        for node in nodes:
            if not isinstance(node, Region) and node.op.inline:
                continue
            comment = _comment(node)
            if comment and comment != self.previous_comment:
                lines.append(comment)
                self.previous_comment = comment
                self.locations[comment] = (node.loc, node.phase)
            if isinstance(node, Region):
                lines.extend(self.region(node))
            elif (node.op.effect and not node.op.statement and node.op.inplace is None
                  and self.layout.last.get(node.out, -1) < 0):  # kept for its error alone
                lines.append(statement_text(ast.Expr(self.render.node_expr(node))))
            else:
                base = self.in_place(node)
                lines.extend(_statements(node, self.names[node.out], base is not None,
                                         self.render, self.names.get(base)))
                if self.check and not node.op.statement:
                    lines.append(f"{self.check}({self.names[node.out]})")
            if self.releases.get(node):
                lines.append(f"del {', '.join(self.releases[node])}")
        return lines

    def nested(self, nodes: list, extra: list[str]) -> list[str]:
        return _indent(self.block(nodes) + extra)

    def copies(self, targets: list[Value], values: list[Operand]) -> list[str]:
        """``name = value`` for each result not already in its variable, all at once."""
        # A name with no value on this path gets None, so that code reading it on
        # paths that cannot happen (a zero adjoint of it) still runs.
        pairs = [(self.names[t], v) for t, v in zip(targets, values)
                 if not (isinstance(v, Value) and self.names.get(v) == self.names[t])]
        if not pairs:
            return []
        if len(pairs) == 1:
            target: ast.expr = ast.Name(pairs[0][0], ast.Store())
            value = self.render.operand(pairs[0][1])
        else:
            target = ast.Tuple([ast.Name(n, ast.Store()) for n, _ in pairs], ast.Store())
            value = ast.Tuple([self.render.operand(v) for _, v in pairs], ast.Load())
        return [statement_text(ast.Assign([target], value, lineno=0))]

    def ending(self, block: Block, outs: list[Value]) -> list[str]:
        """The copies that end a block of a branching region: none after a ``raise``, nor
        in a block with nothing to do and no value to give (the backward sweep of a path
        that raised), whose outs nothing reads on its path."""
        if block.raises() or not block.nodes and all(r is UNDEFINED for r in block.results):
            return []
        return self.copies(outs, block.results)

    def region(self, region: Region) -> list[str]:
        if region.kind == "if":
            return self.branch(region)
        if region.kind == "switch":
            return self.switch(region)
        if region.kind == "try":
            return self.try_statement(region)
        carried = region.carried()
        lines = self.copies(carried, list(region.init))
        body = region.body
        ending = self.copies(carried, body.results)
        if region.until is not None:
            flag = ast.Name(self.names[carried[region.until]], ast.Load())
            ending.append(statement_text(ast.If(flag, [ast.Break()], [])))
        if region.kind == "for":
            index = body.params[0]
            name = self.names[index] if self.layout.last.get(index, -1) >= 0 else "_"
            header = f"for {name} in {self.range_text(region)}:"
            return [*lines, header, *self.nested(body.nodes, ending)]
        cond = region.blocks[0]
        test = self.expression(cond)
        if test is not None:
            return [*lines, f"while {ast.unparse(test)}:", *self.nested(body.nodes, ending)]
        stop = ast.If(ast.UnaryOp(ast.Not(), self.render.operand(cond.results[0])),
                      [ast.Break()], [])
        inner = _indent(self.block(cond.nodes) + [statement_text(stop)])
        return [*lines, "while True:", *inner, *self.nested(body.nodes, ending)]

    def range_text(self, region: Region) -> str:
        start, stop, step, count = (self.render.operand(a) for a in region.args[:4])
        parts = [start, stop, step]
        if _is_literal(region.args[2], 1):
            parts = [start, stop] if not _is_literal(region.args[0], 0) else [stop]
        if self.numba and region.reverse:
            return self.numba_reversed(region, start, stop)
        text = f"range({', '.join(ast.unparse(p) for p in parts)})"
        if not (isinstance(region.args[3], Const) and region.args[3].value is None):
            text += f"[:{ast.unparse(count)}]"
        return f"reversed({text})" if region.reverse else text

    def numba_reversed(self, region: Region, start: ast.expr, stop: ast.expr) -> str:
        if not (_is_literal(region.args[2], 1) and isinstance(region.args[3], Const)
                and region.args[3].value is None):
            raise UnsupportedSyntaxError(
                "jit='numba' takes reversed loops over range(start, stop) only",
                **Location.error_fields(region.loc))
        first = ast.unparse(ast.BinOp(stop, ast.Sub(), ast.Constant(1)))
        end = "-1" if _is_literal(region.args[0], 0) else ast.unparse(
            ast.BinOp(start, ast.Sub(), ast.Constant(1)))
        return f"range({first}, {end}, -1)"

    def branch(self, region: Region) -> list[str]:
        then, orelse = region.blocks
        cond = self.render.operand(region.args[0])
        then_lines = self.block(then.nodes) + self.ending(then, region.outs)
        else_lines = self.block(orelse.nodes) + self.ending(orelse, region.outs)
        if not then_lines:
            negated = ast.unparse(ast.UnaryOp(ast.Not(), cond))
            return [f"if {negated}:", *_indent(else_lines)]
        lines = [f"if {ast.unparse(cond)}:", *_indent(then_lines)]
        if else_lines:
            lines += ["else:", *_indent(else_lines)]
        return lines

    def switch(self, region: Region) -> list[str]:
        """``if caught == 0: ... elif caught == 1: ...``: the blocks that do something."""
        selector = ast.unparse(self.render.operand(region.args[0]))
        cases = [(k, self.block(block.nodes) + self.ending(block, region.outs))
                 for k, block in enumerate(region.blocks)]
        cases = [(k, lines) for k, lines in cases if lines]
        lines: list[str] = []
        for position, (k, case) in enumerate(cases):
            if position == 0:
                lines.append(f"if {selector} == {k}:")
            elif position == len(cases) - 1 == len(region.blocks) - 1:
                lines.append("else:")
            else:
                lines.append(f"elif {selector} == {k}:")
            lines.extend(_indent(case))
        return lines

    def try_statement(self, region: Region) -> list[str]:
        """The user's ``try``: its body, a clause per handler (``except E as e:``, the
        name bound when something reads the exception), and its ``else:``."""
        body, *handlers = region.blocks
        guarded = region.guarded()
        rest = body.nodes[len(guarded) + 1:]  # (after the try_else node)
        ending = self.ending(body, region.outs)
        # check_finite's error is a FloatingPointError, which the user's handler would
        # catch: the guarded part is checked through the values the statement gives
        check, self.check = self.check, None
        lines = ["try:", *_indent(self.block(guarded) + ([] if rest else ending))]
        self.check = check
        for classes, handler in zip(region.args, handlers):
            caught = next((node for node in handler.nodes
                           if isinstance(node, Node) and node.op is CAUGHT), None)
            clause = "except" if isinstance(classes, Const) and classes.value is None else (
                f"except {ast.unparse(self.render.operand(classes))}")
            clause += f" as {self.names[caught.out]}:" if caught is not None else ":"
            nodes = [node for node in handler.nodes if node is not caught]
            lines += [clause, *_indent(self.block(nodes) + self.ending(handler, region.outs))]
        if rest:
            lines += ["else:", *_indent(self.block(rest) + ending)]
        self.previous_comment = None  # (the next line's comment, after the clauses)
        if self.check and region.outs:
            comment = _comment(region)
            if comment:
                lines.append(comment)
                self.previous_comment = comment
                self.locations[comment] = (region.loc, region.phase)
            lines += [f"{self.check}({self.names[out]})" for out in region.outs]
        return lines

    def expression(self, block: Block) -> ast.expr | None:
        """The block's one result as a single expression, when its nodes form a tree."""
        nodes = block.nodes
        if any(isinstance(n, Region) or n.op.effect or n.op.statement for n in nodes):
            return None
        uses: dict[Value, int] = {}
        for node in nodes:
            for value in node.inputs():
                uses[value] = uses.get(value, 0) + 1
        for value in operand_values(block.results[0]):
            uses[value] = uses.get(value, 0) + 1
        if any(uses.get(node.out, 0) != 1 or self.layout.last.get(node.out, 0)
               > self.layout.block_end[id(block)] for node in nodes if not node.op.inline):
            return None
        saved = dict(self.render.expressions)
        for node in nodes:
            if not node.op.inline:
                self.render.expressions[node.out] = self.render.node_expr(node)
        test = self.render.operand(block.results[0])
        self.render.expressions = saved
        return test


def _indent(lines: list[str]) -> list[str]:
    """A block's lines one level in (``pass`` for an empty block)."""
    return ["    " + line for chunk in (lines or ["pass"]) for line in chunk.splitlines()]


def _is_literal(operand: Operand, number: int) -> bool:
    return isinstance(operand, Const) and type(operand.value) is int and operand.value == number


class _Outside:
    """The names a graph reads from outside (global and closure variables, the first
    names of modules and functions it refers to) and how the generated code writes
    each: plainly when ``home`` holds it, through a name standing for its scope when
    it belongs to other code (``helpers.k``, a foreign cell), or, for numba, which
    freezes globals when it compiles, as a keyword-only parameter given at each call.
    """

    def __init__(self, graph: Graph, home: Home, taken: set[str], numba: bool) -> None:
        variables, paths = set(), set()
        for node in walk(graph.nodes):
            if isinstance(node, Region):  # (the classes a try catches)
                paths |= {(c.path.split(".")[0], c.scope) for c in _constants(node.args)
                          if c.path}
                continue
            if node.op is variable_op:
                variables.add((node.args[0].value, node.args[1].value))
            paths |= {(c.path.split(".")[0], c.scope) for c in _constants(node.args) if c.path}
        reads = variables | paths
        own = {name for name, scope in reads if scope is not None and home.holds(name, scope)}
        own |= {p.hint for p in graph.params}
        if own & _BUILTINS_USED:
            raise UnsupportedSyntaxError(
                f"the variable '{min(own & _BUILTINS_USED)}' shadows a Python builtin "
                "that the generated derivative needs", filename=graph.filename, hint="rename it")
        builtins_read = {name for name, scope in reads if scope is None}
        self.closure_names = {name for name, scope in reads if scope is not None
                              and scope.kind == "closure" and home.holds(name, scope)}
        taken = taken | own | builtins_read | _BUILTINS_USED
        # name -> (name read, scope) for numba's parameters; name -> scope for the others
        self.variables = _parameter_names(variables, home, taken) if numba else {}
        self.foreign = _scope_names(reads - set(self.variables.values()), home,
                                    taken | set(self.variables))
        self.names = own | builtins_read | set(self.variables) | set(self.foreign)
        self.home_values = {name: scope.read(name) for name, scope in reads
                            if scope is not None and home.holds(name, scope)}
        self.written = {read: name for name, read in self.variables.items()}
        alias_of = {scope: alias for alias, scope in self.foreign.items()}
        for name, scope in reads:
            if scope in alias_of:  # a foreign cell by its name, a module's global qualified
                alias = alias_of[scope]
                self.written[(name, scope)] = alias if scope.kind == "closure" else (
                    f"{alias}.{name}")


def _constants(operands) -> list[Const]:
    found = []
    for operand in operands:
        if isinstance(operand, Const):
            found.append(operand)
        elif isinstance(operand, tuple):
            found.extend(_constants(operand))
        elif isinstance(operand, SliceSpec):
            found.extend(_constants((operand.start, operand.stop, operand.step)))
    return found


def _scope_names(reads: set, home: Home, taken: set[str]) -> dict[str, Scope]:
    """A name for each scope other than ``home``'s that the graph reads from: a module's
    short name (``helpers.k``), or a closure variable's own name (``scale``)."""
    named: dict[str, Scope] = {}
    for name, scope in sorted(reads, key=lambda read: (read[0], repr(read[1]))):
        if home.holds(name, scope) or scope in named.values():
            continue
        base = name if scope.kind == "closure" else re.sub(r"\W", "_", scope.label.split(".")[-1])
        named[_free_name(base if base.isidentifier() else "_" + base, taken | set(named))] = scope
    return named


def _parameter_names(variables: set, home: Home, taken: set[str]) -> dict[str, tuple]:
    """A keyword-only parameter for each variable read (numba): a variable of ``home``
    keeps its own name, another gets a new one."""
    named: dict[str, tuple] = {}
    for name, scope in sorted(variables, key=lambda read: (read[0], repr(read[1]))):
        own = home.holds(name, scope)
        named[name if own else _free_name(name, taken | set(named))] = (name, scope)
    return named


def _helper_aliases(user_names: set[str], helpers: dict[str, object]) -> dict[str, str]:
    """New names for the runtime helpers the user's own names would shadow."""
    aliases = {}
    for name in sorted(set(helpers) & user_names):  # the user's name wins
        alias = name + "_"
        while alias in user_names or alias in helpers:
            alias += "_"
        aliases[name] = alias
    return aliases


def function_name(name: str) -> str:
    """A valid Python name for a derivative: ``<lambda>_grad`` is ``lambda_grad``."""
    name = re.sub(r"\W", "_", name.replace("<lambda>", "lambda"))
    if keyword.iskeyword(name):
        return name + "_"  # (a lambda itself: lambda_)
    return name if name.isidentifier() else "_" + name


def _function_text(graph: Graph, lines: list[str], name: str,
                   keyword_only: list[str] = ()) -> str:
    header = f"def {name}({graph.signature.text(keyword_only)}):"
    body = [line for chunk in lines for line in chunk.splitlines()]
    return header + "\n" + "\n".join("    " + line for line in body) + "\n"


def _statements(node: Node, name: str, in_place: bool, render: _Renderer,
                base: str | None = None) -> list[str]:
    if node.op.statement:  # a call (tape.append(value)) or a statement (assert condition)
        kernel = node.op.kernel
        text = kernel(node.named_args) if callable(kernel) else kernel
        return [statement_text(render.template(node.named_args, node.op.defaults, text, True))]
    target = ast.Name(name, ast.Store())
    if node.op.inplace is None or not in_place and node.op.inplace_copy is None:
        return [statement_text(ast.Assign([target], render.node_expr(node), lineno=0))]
    lines = []
    if in_place and base is not None and base != name:  # the storage gets a new name
        lines.append(f"{name} = {base}")
    if not in_place:  # the input is still needed: start from a copy
        start = render.template(node.named_args, {}, node.op.inplace_copy)
        lines.append(statement_text(ast.Assign([target], start, lineno=0)))
    named = dict(node.named_args, **{node.op.params[0]: node.out})
    kernel = node.op.inplace(node.named_args)
    lines.append(statement_text(render.template(named, node.op.defaults, kernel, True)))
    return lines


def free_names(text: str) -> set[str]:
    """Names a function's (or a class's) definition reads and never binds itself: its
    globals and closure."""
    tree = ast.parse(text)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not tree.body[0]:
                bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return read - bound


def names_read(text: str) -> set[str]:
    """:func:`free_names` of a generated function, found by Python's symbol table
    without building the AST (a long derivative's AST costs more than its compilation).

    The two agree on code without classes (a method calling ``super()`` reads
    ``__class__`` here) and without ``match`` statements (whose captured names bind
    here): codegen writes neither.
    """
    module = symtable.symtable(text, "<generated>", "exec")
    bound, read = set(), set()
    tables = [module]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            if symbol.is_referenced():
                read.add(symbol.get_name())
            if table is module and symbol.is_namespace():
                continue  # the definition's own name, bound outside it
            if symbol.is_assigned() or symbol.is_parameter() or symbol.is_imported():
                bound.add(symbol.get_name())
    return read - bound
