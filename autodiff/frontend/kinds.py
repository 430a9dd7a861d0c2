"""``type(t)`` and ``isinstance(t, ...)`` of what the code holds, decided while compiling
where the kind is known then.

A structure an argument passes is known while compiling (see "Structures" in
docs/architecture.md): a list or tuple of it is a tuple of operands, whose kind (list
or tuple) the argument's spec says; a list written out in the code is a list. A
sequence whose kind is not known (the items of a slice, of ``zip``) is
:class:`ListOrTuple`: ``type(t) in (list, tuple)`` and ``isinstance(t, (list,
tuple))`` are decided for it, ``type(t) is list`` is refused. An argument compiled as
an array, or an array leaf of a structure, is an array or a number when the code runs:
it is no list, tuple, dict or object of the user's (nor is what an op computing an
array makes of it), so a test of those kinds is false while compiling (``type(t) in (list, tuple)`` on a leaf ends a recursion over nested
lists), and a test of array kinds is made when the code runs.
"""

from __future__ import annotations

import ast

from autodiff.frontend.structures import ARRAY_KINDS, Record
from autodiff.graph.ir import Const, Node, Value


class ListOrTuple:
    """``type()`` of a sequence known while compiling that may be a list or a tuple."""


def sequence_kinds(spec: tuple, bound) -> list[tuple[object, type]]:
    """``(operand, list or tuple)`` for each sequence of an argument's structure."""
    found = []
    if isinstance(bound, tuple) and spec[0] in ("list", "tuple"):
        found.append((bound, list if spec[0] == "list" else tuple))
        for child, item in zip(spec[-1], bound):
            found.extend(sequence_kinds(child, item))
    elif isinstance(bound, Record) and spec[0] in ("dict", "namedtuple", "fields"):
        for child, item in zip(spec[-1], bound.items.values()):
            found.extend(sequence_kinds(child, item))
    return found


def array_may_be(kinds) -> bool:
    """Whether an array or a number may be an instance of ``kinds`` (a type or a tuple
    of them)."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    return any(isinstance(k, type) and issubclass(a, k) for k in kinds for a in ARRAY_KINDS)


class KindsMixin:
    """Kind tests of :class:`autodiff.frontend.convert.Converter`."""

    def sequence_type(self, items: tuple) -> type:
        """``type(items)``: list, tuple, or :class:`ListOrTuple`."""
        if self.built_lists.get(id(items)) is items:
            return list
        known = self.sequence_kinds.get(id(items))
        return known[1] if known is not None and known[0] is items else ListOrTuple

    def known_array(self, value) -> bool:
        """Whether ``value`` is an array or a number when the code runs (an argument
        compiled as one, an array leaf of a structured argument, or what an op whose
        shape rule says so computes: ``v * 2``, ``np.tanh(v)``)."""
        if not isinstance(value, Value):
            return False
        if value in self.array_values or value in self.general_arguments:
            return True
        node = value.node
        return isinstance(node, Node) and node.op.shape is not None and node.op.shape.array

    def kind_is(self, node: ast.AST, kind: type, tested) -> Const:
        """``kind`` (a sequence's type, known now) is ``tested`` (a type): decided."""
        if kind is ListOrTuple and tested in (list, tuple):
            raise self.error(node, f"'{ast.unparse(node)}' asks whether a sequence known "
                             "while compiling is a list or a tuple, which autodiff does not "
                             "follow for this one", hint="test isinstance(t, (list, tuple)) "
                             "or type(t) in (list, tuple)")
        return Const(kind is tested)

    def instance_of(self, node: ast.AST, operand, kinds) -> Const | None:
        """``isinstance(operand, kinds)`` decided while compiling, or None."""
        try:
            return self.decided_instance(node, operand, kinds)
        except TypeError as error:  # isinstance(t, "list"): Python's error, at the line
            raise self.error(node, f"'{ast.unparse(node)}' failed: {error}") from None

    def decided_instance(self, node: ast.AST, operand, kinds) -> Const | None:
        if isinstance(operand, Record):
            return Const(issubclass(operand.type, kinds))
        if isinstance(operand, tuple):
            kind = self.sequence_type(operand)
            if kind is not ListOrTuple:
                return Const(issubclass(kind, kinds))
            answers = {issubclass(k, kinds) for k in (list, tuple)}
            if len(answers) == 1:
                return Const(answers.pop())
            return self.kind_is(node, kind, list)  # refused
        if self.known_array(operand) and not array_may_be(kinds):
            return Const(False)
        return None

    def type_in(self, node: ast.AST, kind, kinds: tuple, negated: bool):
        """``type(t) in kinds`` (``not in`` when ``negated``): ``kind`` is ``type(t)``, a
        type known now, or the value ``t`` itself when it is known only at run time.
        None when it is not decided here."""
        if isinstance(kind, type):
            if kind is ListOrTuple:
                answers = {k in kinds for k in (list, tuple)}
                if len(answers) != 1:
                    self.kind_is(node, kind, list)  # refused
                found = answers.pop()
            else:
                found = kind in kinds
            return Const(found != negated)
        if not self.known_array(kind):
            return None
        result = Const(False)
        for option in kinds:  # type(t) is A or type(t) is B, the possible ones
            if not (isinstance(option, type) and array_may_be(option)):
                continue
            test = self.emit(node, "type_is", (kind, Const(option), Const(False)))
            result = test if result == Const(False) else self.emit(
                node, "truth_or", (result, test))
        if negated:
            return Const(True) if result == Const(False) else self.emit(
                node, "truth_not", (result,))
        return result


__all__ = ["KindsMixin", "ListOrTuple", "array_may_be", "sequence_kinds"]
