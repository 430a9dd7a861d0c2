"""Binding and unbinding names in the middle of code: ``:=`` and ``del``.

``(n := e)`` binds ``n`` in the enclosing function, as an assignment does (a
comprehension's ``:=`` too: see ``Converter.expr_ListComp``), and its value is the
expression's. ``del name`` leaves the name unbound: reading it after is refused at
the reading line (:class:`Deleted`), never a value it held before. ``del d[k]`` and
``del parts[i]`` take an item out of a dict or a list the function built, whose keys
and items are known while compiling, as ``d[k] = v`` and ``parts[i] = v`` set one.
"""

from __future__ import annotations

import ast

from autodiff.errors import UnsupportedSyntaxError
from autodiff.frontend.structures import Record
from autodiff.graph.ir import Const


class Deleted:
    """A name ``del`` unbound at line ``line``: reading it is an error there."""

    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line

    def message(self) -> str:
        return (f"'{self.name}' is read after 'del {self.name}' at line {self.line} "
                "unbound it (Python raises NameError here)")


def test_moved_into_body(stmt: ast.While) -> ast.While | None:
    """``while (n := f(n)) > 0: body`` as ``while True: if not (n := f(n)) > 0: break``
    then ``body``, so that the body reads what the test bound (a loop carries what its
    body binds); None when the test binds no name."""
    if not any(isinstance(part, ast.NamedExpr) for part in ast.walk(stmt.test)):
        return None
    leave = ast.If(ast.UnaryOp(ast.Not(), stmt.test), [ast.Break()], [])
    loop = ast.While(ast.Constant(True), [leave, *stmt.body], [])
    for part in (leave, leave.test, leave.body[0], loop, loop.test):
        ast.copy_location(part, stmt.test if part is not loop else stmt)
    return loop


class BindingsMixin:
    """``:=`` and ``del`` for :class:`autodiff.frontend.convert.Converter`."""

    def expr_NamedExpr(self, node: ast.NamedExpr):
        value = self.expr(node.value)
        self.assign(node.target, value)
        return value

    def stmt_Delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            self.delete(stmt, target)

    def delete(self, stmt: ast.Delete, target: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self.delete(stmt, item)
            return
        if isinstance(target, ast.Name):
            self.name(target)  # deleting an unbound name is Python's NameError: here, refused
            if target.id not in self.env:
                raise self.error(stmt, f"'del {target.id}' deletes a name of the module or an "
                                 "enclosing function, which differentiated code does not "
                                 "change", hint="delete local names only")
            self.env[target.id] = Deleted(target.id, stmt.lineno)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            current = self.name(target.value)
            if isinstance(current, Record):
                self.delete_key(target, target.value.id, current)
                return
            if self.is_built_list(target):
                self.delete_list_item(target, target.value.id, current)
                return
            self.read_as_structure(target, current, "a dict or a list")
        raise self.error(stmt, f"'del {ast.unparse(target)}' is not supported: differentiated "
                         "code deletes names, keys of a dict it built and items of a list it "
                         "wrote out", hint="build a new array without the elements "
                         "(np.delete(x, i)), or a new dict or list",
                         kind=UnsupportedSyntaxError)

    def delete_key(self, target: ast.Subscript, name: str, current: Record) -> None:
        """``del d[k]``: the name now holds a dict without the key."""
        if current.caller:
            raise self.error(target, f"'del {ast.unparse(target)}' would change the "
                             f"{current.describe()} '{name}' the caller passed",
                             hint=f"copy it first: {name} = dict({name}); then delete from that")
        if current.kind != "dict":
            raise self.error(target, f"a {current.describe()} has no keys to delete")
        key = self.index(target.slice)
        if not isinstance(key, Const) or key.path is not None:
            raise self.error(target, f"the key of 'del {ast.unparse(target)}' is known only "
                             "when the code runs, but a dict's keys are fixed while compiling",
                             hint="use a constant key")
        if key.value not in current.items:
            raise self.error(target, f"'del {ast.unparse(target)}': the dict '{name}' has no "
                             f"key {key.value!r} (Python raises KeyError here)")
        self.share_change(target, f"'del {ast.unparse(target)}'", name, current,
                          {k: v for k, v in current.items.items() if k != key.value},
                          f"{name} = dict({name})")

    def delete_list_item(self, target: ast.Subscript, name: str, current) -> None:
        """``del parts[i]`` or ``del parts[a:b]`` on a list written out in the code."""
        items = list(self.static_items(target, current))
        index = self.index(target.slice)
        if isinstance(index, Const) and index.path is None and type(index.value) is int:
            if not -len(items) <= index.value < len(items):
                raise self.error(target, f"'del {ast.unparse(target)}': index {index.value} "
                                 f"is out of range for the list '{name}' of {len(items)} items")
            chosen = slice(index.value, index.value + 1 or None)
        elif hasattr(index, "start") and all(
                isinstance(p, Const) and (p.value is None or type(p.value) is int)
                for p in (index.start, index.stop, index.step)):
            chosen = slice(index.start.value, index.stop.value, index.step.value)
        else:
            raise self.error(target, f"'del {ast.unparse(target)}' deletes from the list "
                             f"'{name}' by an index known only when the code runs",
                             hint="use a constant index or slice")
        self.refuse_shared(target, f"'del {ast.unparse(target)}'", name, current,
                           f"{name} = list({name})")
        del items[chosen]
        self.env[name] = self.built_list(tuple(items))


__all__ = ["BindingsMixin", "Deleted"]
