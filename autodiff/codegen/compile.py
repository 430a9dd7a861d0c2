"""Turning generated source into a function that runs in the user's module.

The generated ``def`` is compiled inside a factory function so that NumPy and
the runtime helpers become closure cells (fast to read), while the user's
globals stay globals: the derivative runs with the user's module namespace and
the user's own closure cells, so it reads them at call time, never a frozen
copy. The text is registered with ``linecache`` under a name of its own
(``<autodiff module.f #12>``), so tracebacks and debuggers show the generated
lines; nothing is written to disk. The entry, and the table that points
generated lines back at the user's (:mod:`.origins`), go when the derivative
is garbage collected.
"""

from __future__ import annotations

import itertools
import linecache
import sys
import traceback
import types

from autodiff.codegen import origins
from autodiff.codegen.python import GeneratedSource
from autodiff.graph.scopes import Scope

_counter = itertools.count(1)


def remember_source(text: str, label: str) -> str:
    """A new in-memory file name holding ``text`` for ``linecache`` (tracebacks, pdb)."""
    filename = _filename(label)
    _remember(filename, text)
    return filename


def _filename(label: str) -> str:
    return f"<autodiff {label} #{next(_counter)}>"


def _remember(filename: str, text: str) -> None:
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _show_generated_lines()


def _factory_text(name: str, body: str, free) -> str:
    """The factory whose locals ``free`` the generated function (``body``, indented)
    reads as closure cells."""
    declare = f"    {' = '.join(free)} = None\n" if free else ""
    return f"def __autodiff_factory__():\n{declare}{body}    return {name}\n"


def _compiled(text: str, filename: str) -> types.CodeType:
    """The code of the generated function inside the factory ``text``."""
    factory_code = compile(text, filename, "exec").co_consts[0]
    return next(c for c in factory_code.co_consts if isinstance(c, types.CodeType))


def _show_generated_lines() -> None:
    """Before Python 3.13 the default printer of an uncaught exception reads source lines
    from files on disk, not from ``linecache``: a traceback through generated code
    showed ``File "<autodiff ...>", line 34`` and nothing more. Python's own printer
    (the traceback module, which Python 3.13 uses by default) reads ``linecache``: it
    becomes the hook, unless a program or IPython installed one of its own."""
    if sys.version_info < (3, 13) and sys.excepthook is sys.__excepthook__:
        sys.excepthook = _print_exception


def _print_exception(kind, error, tb) -> None:
    traceback.print_exception(kind, error, tb)


def _cell_of(scope: Scope) -> types.CellType:
    """The cell through which generated code reads a foreign scope: a closure variable's
    own cell, or a cell holding the module whose globals the scope is."""
    if scope.kind == "closure":
        return scope.namespace
    module = sys.modules.get(scope.label)
    if module is None or module.__dict__ is not scope.namespace:
        module = GlobalsView(scope.namespace)
    return types.CellType(module)


class GlobalsView:
    """A module's globals read as attributes, for globals with no module object
    (code run by ``exec`` or in a notebook cell)."""

    __slots__ = ("_globals",)

    def __init__(self, globals_: dict) -> None:
        self._globals = globals_

    def __getattr__(self, name: str):
        try:
            return self._globals[name]
        except KeyError:
            raise NameError(f"name '{name}' is not defined") from None

    def __repr__(self) -> str:
        return f"<globals of {self._globals.get('__name__', '?')}>"


def compile_generated(generated: GeneratedSource, fn: types.FunctionType,
                      defaults: tuple | None | object = ...,
                      kwdefaults: dict | None = None,
                      where: tuple[str, int | None, str] | None = None) -> types.FunctionType:
    """A function running ``generated`` with ``fn``'s globals, closure and defaults
    (or the positional ``defaults`` given, for a signature with more parameters).
    ``where`` is the user's ``def`` (file, line, text): errors about the derivative
    as a whole point there."""
    body = "".join("    " + line + "\n" for line in generated.text.splitlines())
    filename = _filename(f"{fn.__module__}.{fn.__qualname__}")
    # Compiled with every name it may read from outside as a local of the factory:
    # those it does read are the free variables of its code (the names its text reads,
    # without a pass of the symbol table over a text of thousands of lines).
    candidates = generated.candidates()
    text = _factory_text(generated.name, body, sorted(candidates))
    _remember(filename, text)  # (what a SyntaxError would show)
    inner = _compiled(text, filename)
    free = inner.co_freevars  # (in order of their names)
    generated.reads = set(free)
    text = _factory_text(generated.name, body, free)
    if not free and candidates:  # no line declaring them: its lines move up by one
        inner = _compiled(text, filename)
    _remember(filename, text)
    user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(
        user_cells[name] if name in generated.closure_candidates
        else _cell_of(generated.foreign_candidates[name]) if name in generated.foreign_candidates
        else types.CellType(generated.helpers[name])
        for name in free
    )
    defaults = fn.__defaults__ if defaults is ... else defaults
    function = types.FunctionType(inner, fn.__globals__, generated.name, defaults,
                                  closure or None)
    function.__kwdefaults__ = {**(fn.__kwdefaults__ or {}), **(kwdefaults or {})} or None
    function.__module__ = fn.__module__
    prefix = fn.__qualname__.rpartition(".")[0]
    function.__qualname__ = f"{prefix}.{generated.name}" if prefix else generated.name
    first = inner.co_firstlineno
    origins.register(function, filename, origins.Origins(
        generated.name, first, {first + line - 1: mark for line, mark in generated.marks.items()},
        where or (fn.__code__.co_filename, fn.__code__.co_firstlineno, "")))
    return function
