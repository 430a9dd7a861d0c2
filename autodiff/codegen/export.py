"""A derivative written out as a module of its own, which runs without autodiff.

``derivative.export()`` gives the text of a Python module: the imports the generated
code needs, the helpers it calls (``unbroadcast``, ``as_gradient_of``, ...) written out
from their own source with the helpers and constants they use in turn, and the
derivative itself, its comments pointing at the user's lines as in ``.source``. Its
body is not guarded by ``at_user_line`` (which needs autodiff's table of origins): an
error is raised where the exported code raises it.

The names the derivative reads from the user's code are imported from the user's
module (``from model import LAYERS``), modules by their own import; a closure variable,
or a global of code with no module to import from (``__main__``, a notebook), becomes a
keyword-only parameter of the derivative, which the caller passes. A helper that needs
more of autodiff than plain Python (the table of origins that ``warnings.warn`` inside
the function uses) is refused, naming it.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.machinery
import inspect
import os
import re
import sys
import textwrap
import types
from collections.abc import Callable

import numpy as np

from autodiff.codegen.python import free_names, generate
from autodiff.errors import AutodiffError
from autodiff.graph.scopes import Home

_PACKAGE = "autodiff"


def export_module(derivative: Callable, user: types.FunctionType) -> str:
    """The text of a module defining ``derivative`` (a function ``finish`` made, the
    derivative of ``user``'s code) with no import of autodiff."""
    graph = derivative.graph
    generated = generate(graph, Home.of_function(user), guarded=False)
    module = _Module(derivative.__name__)
    for name, helper in generated.runtime.items():
        module.add(name, helper)
    parameters = []
    # a module of ours a rule reads from (linalg.NAME): NAME, written out
    ours = {alias: importlib.import_module(scope.label)
            for alias, scope in generated.foreign.items()
            if scope.kind != "closure" and scope.label.split(".")[0] == _PACKAGE}
    text = _without_our_modules(generated.text, ours)
    for name in sorted(free_names(text) - set(generated.runtime) - set(dir(builtins))):
        owner = next((m for m in ours.values() if name in vars(m)), None)
        if name not in generated.foreign and owner is not None:
            module.add(name, vars(owner)[name])
        elif name in generated.foreign:
            scope = generated.foreign[name]
            if scope.kind == "closure":
                parameters.append(name)
            else:
                module.add(name, importlib.import_module(scope.label))
        elif name in generated.closure_names:
            parameters.append(name)
        else:
            parameters += module.add_users(name, user)
    header, _, body = text.partition("\n")
    return module.text(_with_keyword_only(header, parameters) + "\n" + body, user)


def _with_keyword_only(header: str, names: list[str]) -> str:
    """``def f(x, y):`` with keyword-only parameters ``names`` added."""
    if not names:
        return header
    inside = header[header.index("(") + 1:header.rindex(")")]
    parameters = [p.strip() for p in inside.split(",") if p.strip()] if inside else []
    if "*" not in parameters:
        parameters.append("*")
    return f"{header[:header.index('(')]}({', '.join(parameters + names)}):"


def _without_our_modules(source: str, namespace: dict) -> str:
    """``runtime.fitted_to(...)`` as ``fitted_to(...)`` (``namespace`` naming the modules
    ``source`` reads): the functions autodiff's modules hold are written out beside the
    ones that call them."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and isinstance(namespace.get(node.value.id), types.ModuleType)
                and namespace[node.value.id].__name__.startswith(_PACKAGE)):
            spans.append((node.lineno, node.col_offset, node.value.id))
    lines = source.splitlines(True)
    for lineno, column, module_name in sorted(spans, reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:column] + line[column + len(module_name) + 1:]
    return "".join(lines)


def _ours(value) -> bool:
    return (getattr(value, "__module__", None) or "").split(".")[0] == _PACKAGE


class _Module:
    """What the exported module defines and imports, by name."""

    def __init__(self, derivative_name: str) -> None:
        self.derivative_name = derivative_name
        self.imports: set[str] = set()
        self.constants: dict[str, str] = {}
        self.definitions: dict[str, object] = {}  # name -> a function or class of ours
        self.sources: dict[str, str] = {}
        self.bound: dict[str, object] = {}  # every name defined, and what it holds

    def claim(self, name: str, value) -> bool:
        """Reserve ``name`` for ``value``: False when it is already there."""
        if name in self.bound:
            if self.bound[name] is not value and not (
                    isinstance(value, types.ModuleType) and self.bound[name] == value):
                raise AutodiffError(
                    f"cannot export {self.derivative_name}: two things named '{name}' "
                    "would be defined in one module",
                    hint="rename the variable of your code that shares a helper's name")
            return False
        self.bound[name] = value
        return True

    def add(self, name: str, value, needed_by: str = "the derivative") -> None:
        """Define ``name`` as ``value``: a module imported, a function or class of ours
        written out (with what it reads), another library's function imported, a
        constant written as its value."""
        if not self.claim(name, value):
            return
        if isinstance(value, types.ModuleType):
            self.imports.add(_import_line(name, value))
        elif _ours(value) and isinstance(value, (types.FunctionType, type)):
            self.write_out(name, value)
        elif callable(value) and _importable(value):
            self.imports.add(_import_from(name, value))
        else:
            self.constants[name] = self.constant_text(name, value, needed_by)

    def write_out(self, name: str, value) -> None:
        if value.__module__.startswith(f"{_PACKAGE}.codegen"):
            raise AutodiffError(
                f"cannot export {self.derivative_name}: it calls {value.__name__}, which "
                "needs autodiff's record of the derivative's lines while it runs",
                hint="take warnings.warn and check_finite= out of the function to export it")
        namespace = vars(sys.modules[value.__module__])
        source = _without_our_modules(textwrap.dedent(inspect.getsource(value)), namespace)
        if name != value.__name__:
            source = re.sub(rf"\b(def|class) {value.__name__}\b", rf"\1 {name}", source, count=1)
        self.definitions[name] = value
        self.sources[name] = source
        for read in sorted(free_names(source)):
            if read in namespace and read != name:
                self.add(read, namespace[read], needed_by=f"{value.__name__}")

    def constant_text(self, name: str, value, needed_by: str) -> str:
        text = self.expression(value)
        if text is not None:
            return text
        raise AutodiffError(
            f"cannot export {self.derivative_name}: {needed_by} reads '{name}', a "
            f"{type(value).__name__} that cannot be written as Python source",
            hint="export a derivative that does not call it, or copy .source by hand")

    def expression(self, value) -> str | None:
        """Python source evaluating to ``value`` in the exported module, or None."""
        if isinstance(value, type) and getattr(builtins, value.__name__, None) is value:
            return value.__name__
        if callable(value) and getattr(np, getattr(value, "__name__", ""), None) is value:
            self.add("np", np)  # a NumPy function or type
            return f"np.{value.__name__}"
        if isinstance(value, np.dtype):
            self.add("np", np)
            return f"np.dtype({value.name!r})"
        if isinstance(value, re.Pattern):
            self.add("re", re)
            return f"re.compile({value.pattern!r}, {int(value.flags)})"
        if isinstance(value, (tuple, list, set, frozenset)) and not isinstance(value, str) \
                and type(value) in (tuple, list, set, frozenset):
            items = [self.expression(item) for item in value]
            if None in items:
                return None
            if type(value) is tuple:
                return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
            if type(value) is list:
                return f"[{', '.join(items)}]"
            return f"{type(value).__name__}({{{', '.join(sorted(items))}}})" if items else (
                f"{type(value).__name__}()")
        if isinstance(value, dict) and type(value) is dict:
            pairs = [(self.expression(k), self.expression(v)) for k, v in value.items()]
            if any(k is None or v is None for k, v in pairs):
                return None
            return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        text = repr(value)
        try:
            return text if type(ast.literal_eval(text)) is type(value) and (
                ast.literal_eval(text) == value) else None
        except (ValueError, SyntaxError):
            return None

    def add_users(self, name: str, user: types.FunctionType) -> list[str]:
        """A name of the user's code: imported from the user's module when it has one
        to import from, else a keyword-only parameter (returned)."""
        value = user.__globals__.get(name, inspect.Parameter.empty)
        if isinstance(value, types.ModuleType):
            self.add(name, value)
            return []
        if value is inspect.Parameter.empty or not _importable_module(user.__module__):
            return [name]
        self.claim(name, value)
        self.imports.add(f"from {user.__module__} import {name}")
        return []

    def text(self, derivative: str, user: types.FunctionType) -> str:
        where = f"{user.__module__}.{user.__qualname__}"
        parts = [(f'"""The derivative of {where}, exported from the code autodiff\n'
                  'generated: it needs NumPy (and what your code imports), not autodiff."""')]
        plain = sorted(line for line in self.imports if line.startswith("import "))
        froms = sorted(line for line in self.imports if line.startswith("from "))
        if plain or froms:
            parts.append("\n".join(plain + froms))
        if self.constants:
            parts.append("\n".join(f"{n} = {t}" for n, t in sorted(self.constants.items())))
        blocks = [self.sources[n] for n in self._ordered()]
        text = "\n\n".join(parts) + "\n"
        for block in [*blocks, derivative]:
            text += "\n\n" + block.rstrip("\n") + "\n"
        return text

    def _ordered(self) -> list[str]:
        """Classes before the classes that derive from them, then functions by name."""
        classes = [n for n, v in self.definitions.items() if isinstance(v, type)]
        ordered: list[str] = []

        def place(name: str) -> None:
            if name in ordered:
                return
            for base in self.definitions[name].__mro__[1:]:
                found = next((n for n in classes if self.definitions[n] is base), None)
                if found is not None:
                    place(found)
            ordered.append(name)

        for name in sorted(classes):
            place(name)
        return ordered + sorted(n for n in self.definitions if n not in classes)


def _importable_module(name: str) -> bool:
    """Whether ``import name`` finds the module of that name on ``sys.path``, as another
    program would: not ``__main__`` (a script, a notebook), nor a file imported under a
    name of its own (``autodiff grad model.py:f``)."""
    module = sys.modules.get(name)
    filename = getattr(module, "__file__", None)
    if name == "__main__" or filename is None:
        return False
    top = name.partition(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None or spec.origin is None:
        return False
    if top != name:  # a package's module: where the package is
        return True
    return os.path.samefile(spec.origin, filename)


def _import_line(name: str, module: types.ModuleType) -> str:
    full = module.__name__
    if name == full:
        return f"import {full}"
    parent, _, last = full.rpartition(".")
    if parent and last == name:
        return f"from {parent} import {name}"
    return f"import {full} as {name}"


def _importable(value) -> bool:
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    if not module or "." in qualname or "<" in qualname:
        return False
    try:
        return getattr(importlib.import_module(module), qualname, None) is value
    except ImportError:
        return False


def _import_from(name: str, value) -> str:
    alias = "" if name == value.__qualname__ else f" as {name}"
    return f"from {value.__module__} import {value.__qualname__}{alias}"
