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
import math
from dataclasses import dataclass, field

import astor
import numpy as np

from autodiff.errors import UnsupportedSyntaxError
from autodiff.graph.ir import Const, Graph, Node, Operand, SliceSpec, Value
from autodiff.graph.names import assign_names, last_uses
from autodiff.graph.shapes import SCALAR
from autodiff.ops import runtime

# What generated code may call besides the user's own names: bound as closure cells.
RUNTIME_NAMES: dict[str, object] = {"np": np} | {
    name: getattr(runtime, name) for name in dir(runtime)
    if callable(getattr(runtime, name)) and not name.startswith("_")
    and getattr(getattr(runtime, name), "__module__", "") == runtime.__name__
}
_BUILTINS_USED = frozenset({"float", "len", "slice"})


@dataclass
class GeneratedSource:
    """The text of a generated function and the names it reads from outside."""

    text: str
    name: str
    runtime: dict[str, object] = field(default_factory=dict)  # helper name -> object
    closure_names: set[str] = field(default_factory=set)


@functools.cache
def _parse_template(template: str, statement: bool = False) -> ast.AST:
    if statement:
        return ast.parse(template).body[0]
    return ast.parse(template, mode="eval").body


class _Renderer:
    def __init__(self, names: dict[Value, str], aliases: dict[str, str]) -> None:
        self.names = names
        self.aliases = aliases  # runtime helpers renamed away from the user's names

    def operand(self, operand: Operand, in_subscript: bool = False) -> ast.expr:
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
            return _parse_template(const.path)
        value = const.value
        if isinstance(value, tuple):
            return ast.Tuple([self.constant(Const(v)) for v in value], ast.Load())
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return _parse_template(f"float('{value}')")
        if value is None or value is Ellipsis or isinstance(value, (bool, int, float, str)):
            return ast.Constant(value)
        raise TypeError(f"cannot write the constant {value!r} in generated code")

    def template(self, named: dict, defaults: dict, template: str,
                 statement: bool = False) -> ast.AST:
        tree = copy.deepcopy(_parse_template(template, statement))
        renderer = self

        class Substitute(ast.NodeTransformer):
            def visit_Call(self, call: ast.Call) -> ast.AST:
                call.keywords = [k for k in call.keywords if not _holds_default(k, named, defaults)]
                self.generic_visit(call)
                args = []  # f(*operands) with a known tuple of operands: f(a, b)
                for arg in call.args:
                    if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Tuple):
                        args.extend(arg.value.elts)
                    else:
                        args.append(arg)
                call.args = args
                return call

            def visit_Subscript(self, sub: ast.Subscript) -> ast.AST:
                sub.value = self.visit(sub.value)
                if isinstance(sub.slice, ast.Name) and sub.slice.id in named:
                    sub.slice = renderer.operand(named[sub.slice.id], in_subscript=True)
                else:
                    sub.slice = self.visit(sub.slice)
                return sub

            def visit_Name(self, name: ast.Name) -> ast.AST:
                if name.id in named:
                    return renderer.operand(named[name.id])
                name.id = renderer.aliases.get(name.id, name.id)
                return name

        return Substitute().visit(tree)

    def node_expr(self, node: Node) -> ast.expr:
        if node.op.name == "variable":  # the user's own name, never a helper's alias
            return ast.Name(node.args[0].value, ast.Load())
        kernel = node.op.kernel
        text = kernel(node.named_args) if callable(kernel) else kernel
        return self.template(node.named_args, node.op.defaults, text)


def _holds_default(keyword: ast.keyword, named: dict, defaults: dict) -> bool:
    if not isinstance(keyword.value, ast.Name) or keyword.value.id not in defaults:
        return False
    operand = named.get(keyword.value.id)
    default = defaults[keyword.value.id]
    return (isinstance(operand, Const) and operand.path is None
            and type(operand.value) is type(default) and operand.value == default)


def _in_place(graph: Graph, last: dict[Value, float]):
    """For each node index, the input whose storage an in-place kernel may reuse."""

    def reusable(index: int) -> Value | None:
        node = graph.nodes[index]
        if node.op.inplace is None:
            return None
        base = node.args[0]
        if not isinstance(base, Value) or last.get(base) != index:
            return None
        if sum(1 for v in node.inputs() if v is base) != 1:
            return None
        if node.op.inplace_mutates and (base.node is None or not base.node.op.fresh):
            return None  # never write into the caller's arrays or into a view
        return base

    return reusable


def _comment(node: Node) -> str | None:
    if node.loc is None:
        return "# the gradients, with the shapes and dtypes of the arguments" if (
            node.phase == "backward") else None
    prefix = "grad of " if node.phase == "backward" else ""
    return f"# {prefix}line {node.loc.lineno}: {node.loc.text}"


def generate(graph: Graph, reserved: frozenset[str] = frozenset()) -> GeneratedSource:
    """Python source of a function computing ``graph``'s outputs from its params."""
    user_names, closure_names = _user_names(graph)
    aliases = _helper_aliases(user_names)
    taken = reserved | set(RUNTIME_NAMES) | set(aliases.values()) | _BUILTINS_USED | user_names
    last = last_uses(graph)
    shares = _in_place(graph, last)
    names, _ = assign_names(graph, frozenset(taken), reuse_dead=True, shares_name_with=shares)
    render = _Renderer(names, aliases)

    releases = _releases(graph, names, shares, last)
    lines: list[str] = []
    previous_comment = None
    for index, node in enumerate(graph.nodes):
        if node.op.inline:
            continue
        comment = _comment(node)
        if comment and comment != previous_comment:
            lines.append(comment)
            previous_comment = comment
        lines.extend(_statements(node, names[node.out], shares(index) is not None, render))
        if releases.get(index):
            lines.append(f"del {', '.join(releases[index])}")
    outputs = [render.operand(o) for o in graph.outputs]
    result = outputs[0] if len(outputs) == 1 else ast.Tuple(outputs, ast.Load())
    lines.append(_source(ast.Return(result)))

    text = _function_text(graph, lines)
    used = _free_names(text)
    return GeneratedSource(
        text=text, name=graph.name,
        runtime={alias: RUNTIME_NAMES[name]
                 for name, alias in ((n, aliases.get(n, n)) for n in RUNTIME_NAMES)
                 if alias in used},
        closure_names={n for n in used if n in closure_names},
    )


def _user_names(graph: Graph) -> tuple[set[str], set[str]]:
    """Names the user's code brings in (parameters, globals, closure variables, modules)."""
    variables = {node.args[0].value for node in graph.nodes if node.op.name == "variable"}
    closure_names = {node.args[0].value for node in graph.nodes
                     if node.op.name == "variable" and node.args[1].value == "closure"}
    variables |= {p.hint for p in graph.params}
    if variables & _BUILTINS_USED:
        raise UnsupportedSyntaxError(
            f"the variable '{min(variables & _BUILTINS_USED)}' shadows a Python builtin "
            "that the generated derivative needs", filename=graph.filename, hint="rename it")
    path_roots = {arg.path.split(".")[0] for node in graph.nodes for arg in node.args
                  if isinstance(arg, Const) and arg.path}
    return variables | path_roots, closure_names


def _helper_aliases(user_names: set[str]) -> dict[str, str]:
    """New names for the runtime helpers the user's own names would shadow."""
    aliases = {}
    for name in sorted(set(RUNTIME_NAMES) & user_names):  # the user's name wins
        alias = name + "_"
        while alias in user_names or alias in RUNTIME_NAMES:
            alias += "_"
        aliases[name] = alias
    return aliases


def _function_text(graph: Graph, lines: list[str]) -> str:
    arguments = copy.deepcopy(graph.arguments)
    for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        arg.annotation = None  # annotations would be evaluated where they mean nothing
    header = f"def {graph.name}({ast.unparse(arguments)}):"
    body = [line for chunk in lines for line in chunk.splitlines()]
    return header + "\n" + "\n".join("    " + line for line in body) + "\n"


def _statements(node: Node, name: str, in_place: bool, render: _Renderer) -> list[str]:
    target = ast.Name(name, ast.Store())
    if node.op.inplace is None or not in_place and node.op.inplace_copy is None:
        return [_source(ast.Assign([target], render.node_expr(node), lineno=0))]
    lines = []
    if not in_place:  # the input is still needed: start from a copy
        start = render.template(node.named_args, {}, node.op.inplace_copy)
        lines.append(_source(ast.Assign([target], start, lineno=0)))
    named = dict(node.named_args, **{node.op.params[0]: node.out})
    kernel = node.op.inplace(node.named_args)
    lines.append(_source(render.template(named, node.op.defaults, kernel, True)))
    return lines


def _releases(graph: Graph, names: dict[Value, str], shares, last) -> dict[int, list[str]]:
    """Arrays to ``del`` after each node: the last statement that reads them.

    Without this every temporary lives until the function returns, and each
    new array lands in fresh memory; large inputs then spend more time in page
    faults than in arithmetic.
    """
    releases: dict[int, list[str]] = {}
    for value, index in last.items():
        if index == math.inf or value in graph.params or value.node is None:
            continue
        if value.shape is SCALAR or value.node.op.nondiff_output or value.node.op.inline:
            continue  # numbers and shape tuples: nothing worth freeing
        node = graph.nodes[index]
        if shares(index) is value or names[value] == names[node.out]:
            continue  # the name lives on in the next value
        releases.setdefault(index, []).append(names[value])
    return {index: sorted(set(items)) for index, items in releases.items()}


def _source(statement: ast.stmt) -> str:
    return astor.to_source(statement).rstrip("\n")


def _free_names(text: str) -> set[str]:
    """Names the function reads but never assigns (its globals and closure)."""
    function = ast.parse(text).body[0]
    assigned = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    loads = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else assigned).add(node.id)
    return loads - assigned
