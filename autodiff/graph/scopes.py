"""Where a name the user's code reads lives: a module's globals or one closure cell.

A derivative may inline code from several functions: the differentiated one,
helpers from other modules, gradient rules, functions made by a factory. Each
name such code reads from outside (a global, a closure variable) is resolved in
the namespace of the function that wrote it, never in the caller's: a helper's
``k`` is its own module's ``k``, a rule made by ``make_rule(scale)`` reads its
own ``scale``. The graph keeps the :class:`Scope` with every such read;
codegen then writes a plain name for the differentiated function's own
namespace and a qualified read for any other (see
:mod:`autodiff.codegen.python`).

>>> scope = Scope.of_globals({"__name__": "helpers", "k": 2.0})
>>> scope.read("k"), scope.label
(2.0, 'helpers')
"""

from __future__ import annotations

import types

MISSING = object()  # what :meth:`Scope.read` gives for a name with no value


class Scope:
    """The namespace one name is read from: ``kind`` is ``"global"`` (a module's
    globals dict) or ``"closure"`` (one closure cell). Two scopes are equal when
    they are the same namespace: every function of one module shares one."""

    __slots__ = ("kind", "label", "namespace")

    def __init__(self, kind: str, namespace: dict | types.CellType, label: str) -> None:
        self.kind = kind
        self.namespace = namespace
        self.label = label

    @classmethod
    def of_globals(cls, globals_: dict) -> Scope:
        return cls("global", globals_, str(globals_.get("__name__") or "module"))

    @classmethod
    def of_cell(cls, cell: types.CellType, name: str) -> Scope:
        return cls("closure", cell, name)

    def read(self, name: str) -> object:
        """The value ``name`` holds now, or :data:`MISSING`."""
        if self.kind == "closure":
            try:
                return self.namespace.cell_contents
            except ValueError:  # a cell not assigned yet
                return MISSING
        return self.namespace.get(name, MISSING)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Scope) and self.kind == other.kind
                and self.namespace is other.namespace)

    def __hash__(self) -> int:
        return hash((self.kind, id(self.namespace)))

    def __repr__(self) -> str:
        return f"<{self.kind} scope {self.label}>"


class Home:
    """The namespace a generated derivative runs in (its function's globals and closure
    cells): names read from it are written plainly, any other scope is qualified."""

    def __init__(self, globals_: dict, cells: dict[str, types.CellType]) -> None:
        self.globals = globals_
        self.cells = cells

    @classmethod
    def of_function(cls, fn: types.FunctionType) -> Home:
        code = fn.__code__
        return cls(fn.__globals__, dict(zip(code.co_freevars, fn.__closure__ or ())))

    def holds(self, name: str, scope: Scope | None) -> bool:
        """Whether ``name`` read from ``scope`` is ``name`` read here."""
        if scope is None:  # a builtin
            return True
        if scope.kind == "global":  # (unless a closure variable of that name hides it)
            return scope.namespace is self.globals and name not in self.cells
        return self.cells.get(name) is scope.namespace
