"""A function defined in the differentiated code and passed to an op that calls it when
the derivative runs (the model of ``scipy.integrate.odeint``): made a Python function of
its own, whose parameters after its own are the values it reads from the code.

``odeint(lambda y, t: -k * y, y0, t)`` inside ``def loss(k, y0, t)`` passes a function
that reads ``k``, a value of the differentiated code: the derivative has no such
function to hand the solver, and a function reading ``k`` from a closure would hide
``k``'s gradient. So the lambda becomes ``def <lambda>(y, t, k): return -k * y``,
compiled from its text (kept by ``linecache``, so that autodiff reads it as any
function's source) with the globals of the user's module, and ``k`` joins the values
the op passes to it (odeint's ``args=``): its gradient is the op's to give.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import types

from autodiff.frontend.functions import LocalFunction
from autodiff.frontend.structures import contains_record
from autodiff.graph.ir import Const
from autodiff.graph.scopes import Scope
from autodiff.line_names import line_name
from autodiff.ops.registry import Lifted

_count = itertools.count(1)


def lifted(converter, node: ast.Call, fn: LocalFunction) -> Lifted:
    """``fn`` as a Python function taking the values it reads from the code last."""
    tree, home = fn.node, fn.parent  # (the code it is defined in resolves its names)
    arguments = tree.args
    where = line_name(home.source.filename, tree.lineno)
    if (arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.defaults
            or arguments.posonlyargs):
        raise converter.error(node, f"the function defined at {where} and passed to "
                              f"'{ast.unparse(node.func)}' takes *args, keywords or "
                              "defaults: it is passed plain positional parameters",
                              hint="define it with plain parameters (y, t, k)")
    own = {a.arg for a in arguments.args}
    body = fn.body()
    read = _names_read(body, own)
    extras = [name for name in read if home.binds(name) or name in home.closure]
    values = []
    for name in extras:
        value = home.name(ast.copy_location(ast.Name(name, ast.Load()), node))
        if isinstance(value, LocalFunction) or contains_record(value) or (
                isinstance(value, Const) and isinstance(value.value, LocalFunction)):
            raise converter.error(
                node, f"the function defined at {where} and passed to "
                f"'{ast.unparse(node.func)}' reads '{name}', a dict, an object or a function "
                "of the code: the solver passes it the arrays and numbers it reads alone",
                hint=f"read the arrays out of '{name}' before the call (k = params['k']) and "
                "use those in the function, or define it at module level")
        values.append(value)
    name = fn.name if fn.name.isidentifier() else "model"
    definition = ast.FunctionDef(
        name=name, args=ast.arguments(posonlyargs=[], args=[
            *arguments.args, *(ast.arg(extra) for extra in extras)], kwonlyargs=[],
            kw_defaults=[], defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:  # (Python 3.12)
        definition.type_params = []
    text = ast.unparse(ast.fix_missing_locations(ast.Module([definition], type_ignores=[])))
    filename = f"<{name} of {where}, {next(_count)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(text, filename, "exec"), home.globals, namespace)  # noqa: S102
    function = namespace[name]
    cell = types.CellType(function)
    return Lifted(Const(function, path=name, scope=Scope.of_cell(cell, name)), tuple(values))


def _names_read(body: list[ast.stmt], own: set[str]) -> list[str]:
    """The names ``body`` reads and neither binds nor takes, in the order first read."""
    bound = set(own)
    for node in ast.walk(ast.Module(body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            bound.update(a.arg for a in node.args.args)
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
    read = []
    for node in ast.walk(ast.Module(body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and (
                node.id not in bound and node.id not in read):
            read.append(node.id)
    return read


__all__ = ["lifted"]
