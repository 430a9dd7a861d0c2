"""Derivatives of a function with ``*args`` or ``**kwargs``, compiled per call form.

A call of ``f(x, *args, **kw)`` fixes how many positional arguments there are and
which keywords: for each such form the derivative is built from an adapter whose
parameters are those arguments by name, and which calls ``f`` with them (``def
f(x, args_0, args_1, *, s): return f(x, args_0, args_1, s=s)``); the frontend
inlines ``f``, its ``args`` a tuple and its ``kw`` a dict known while compiling.
``wrt`` counts the call's positional arguments (``wrt=1`` is ``args[0]`` here, and
``"args[0]"`` names it too) and names a keyword, one ``**kw`` takes included
(``wrt="s"``, or ``"kw['s']"``). The derivative keeps ``f``'s signature; a seed, a
tangent or a ``v`` the transform adds is passed by keyword (a ``**kw`` key of that
name is the transform's).
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
from collections.abc import Callable

from autodiff.codegen.compile import remember_source
from autodiff.codegen.python import function_name
from autodiff.derivatives.cache import cached
from autodiff.derivatives.wrt import resolve_parts, wrt_key
from autodiff.errors import raised_at_call
from autodiff.graph.ir import Location

# The parameter each transform adds to the function's, passed by keyword.
ADDED = {"vjp": "seed", "jvp": "tangent", "hvp": "v"}


def has_star_parameters(fn) -> bool:
    """Whether ``fn`` is a Python function with ``*args`` or ``**kwargs``."""
    if not isinstance(fn, types.FunctionType):
        return False
    try:  # (as it states itself: a derivative's __signature__)
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def by_call_form(transform: Callable, fn: types.FunctionType, options: dict) -> Callable:
    """``transform(fn, **options)`` for a function with ``*args``/``**kwargs``: a
    function with ``fn``'s signature building, for each call form, the derivative of
    that form's adapter (kept on ``fn``, as other derivatives are)."""
    settings = tuple(sorted((k, repr(v)) for k, v in options.items() if k != "wrt"))
    key = ("call forms", transform.__name__, wrt_key(options.get("wrt", 0)), settings)
    return cached(fn, key, lambda: _by_call_form(transform, fn, options))


def _by_call_form(transform: Callable, fn: types.FunctionType, options: dict) -> Callable:
    signature = inspect.signature(fn)
    added = ADDED.get(transform.__name__)
    while added is not None and added in signature.parameters:
        added += "_"  # (a derivative's own seed or tangent: this one's is another)
    built: dict[tuple, Callable] = {}

    def derivative_for(args: tuple, kwargs: dict) -> tuple[Callable, dict]:
        given = {k: v for k, v in kwargs.items() if k != added}
        key = (len(args), tuple(given))
        if key not in built:
            adapter, names = _adapter(fn, signature, len(args), tuple(given))
            wrt = _wrt(options.get("wrt", 0), names)
            # (a wrt this call form has no argument for is refused at the user's def)
            resolve_parts(wrt, list(inspect.signature(adapter).parameters), fn.__name__,
                          Location.of_function(fn))
            built[key] = transform(adapter, **{**options, "wrt": wrt})
        return built[key], given

    @functools.wraps(fn)
    def derivative(*args, **kwargs):
        found, _ = derivative_for(args, kwargs)
        return found(*args, **kwargs)

    derivative = raised_at_call(derivative)

    derivative.__signature__ = signature if added is None else _with_keyword(signature, added)
    derivative.original = fn
    derivative.derivative_for = lambda *args, **kwargs: derivative_for(args, kwargs)[0]
    derivative.source_for = lambda *args, **kwargs: derivative_for(args, kwargs)[0].source
    derivative.source = ("(compiled for each call's number of positional arguments and "
                         "keywords: .source_for(*args, **kwargs) shows the code)")
    if added is not None:
        setattr(derivative, "seed_name" if added == "seed" else "tangent_name", added)
    return derivative


def _with_keyword(signature: inspect.Signature, name: str) -> inspect.Signature:
    """``signature`` with the keyword-only parameter ``name`` before its ``**kwargs``."""
    parameters = list(signature.parameters.values())
    at = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_KEYWORD), len(parameters))
    parameters.insert(at, inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY))
    return signature.replace(parameters=parameters)


def _adapter(fn: types.FunctionType, signature: inspect.Signature, count: int,
             keywords: tuple) -> tuple[types.FunctionType, dict]:
    """``def f(<count positional>, *, <keywords>): return f(...)``, and the names its
    parameters have for ``*args`` items (``("args", 0)``) and ``**kw`` keys."""
    parameters = list(signature.parameters.values())
    named = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
    double = next((p.name for p in parameters if p.kind is p.VAR_KEYWORD), None)
    taken = {*keywords, *(p.name for p in parameters)}
    positional, names = [], {}
    for i in range(count):
        if i < len(named):
            positional.append(named[i])
            continue
        name = f"{star}_{i - len(named)}"
        while name in taken:
            name += "_"
        taken.add(name)
        positional.append(name)
        names[(star, i - len(named))] = name
    if double is not None:
        for key in keywords:
            if key not in signature.parameters:
                names[(double, key)] = key
    header = ", ".join([*positional, *(["*", *keywords] if keywords else [])])
    call = ", ".join([*positional, *(f"{k}={k}" for k in keywords)])
    name = function_name(fn.__name__)  # (a lambda's is no name: lambda)
    text = f"def {name}({header}):\n    return function({call})\n"
    filename = remember_source(text, f"call form of {fn.__name__}")
    namespace = {"function": fn}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - names only, no values
    adapter = namespace[name]
    adapter.__qualname__ = fn.__qualname__
    adapter.__module__ = fn.__module__
    return adapter, names


def _wrt(wrt, names: dict):
    """``wrt`` naming ``args[0]`` or ``kw['s']`` as the adapter's parameter."""
    if isinstance(wrt, (tuple, list)):
        return type(wrt)(_wrt(item, names) for item in wrt)
    if not isinstance(wrt, str) or wrt.isidentifier():
        return wrt
    try:
        node = ast.parse(wrt, mode="eval").body
    except SyntaxError:
        return wrt  # (the transform words the error)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(
            node.slice, ast.Constant):
        return names.get((node.value.id, node.slice.value), wrt)
    return wrt


__all__ = ["by_call_form", "has_star_parameters"]
