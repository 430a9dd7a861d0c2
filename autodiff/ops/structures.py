"""Structures of arrays in generated code: reading a leaf out of an argument
(``params["W1"]``, ``layer.W``) and building a structure (a gradient with its
argument's keys, a dict of metrics returned beside a loss).

The frontend resolves every key while compiling: generated code reads each
leaf it needs once, at the top, and builds each structure once, as a literal
(``{'W1': dparams_W1, 'b1': dparams_b1}``), a namedtuple's ``_replace`` or
``with_fields`` (a copy of a dataclass or an object with other arrays).
"""

from __future__ import annotations

import functools

from autodiff.graph.ir import Const
from autodiff.ops.registry import Op, stub_taking
from autodiff.ops.shape import getitem

_NOT_DIFFERENTIATED = ("a structure is taken apart while compiling: the gradient of each "
                       "leaf it holds is the leaf's own")


def _leaf_reader(name: str, template: str) -> Op:
    op = Op(name, stub_taking(["whole", "key"]) if "key" in template else stub_taking(["whole"]),
            template, fresh=False, floating=None, nondiff_output=False,
            no_gradient=_NOT_DIFFERENTIATED, batching="container")
    op.outside_tables = "built by the frontend for a structured argument, never written as code"
    return op


# ``whole[key]``: an item of a dict, a list or a tuple the caller passed.
item = _leaf_reader("item", "whole[key]")


@functools.cache
def field(name: str) -> Op:
    """``whole.name``: a field of a namedtuple, a dataclass or an object."""
    op = _leaf_reader("field", f"whole.{name}")
    op.field_name = name
    return op


def part_read(node, indexing: bool = False) -> tuple | None:
    """``(whole, key)`` when ``node`` reads one part of a structure (with ``indexing``,
    also when it indexes by a constant, as a derivative reads its tuple tangent:
    ``tangent[0]``); else None."""
    if node.op is item or indexing and node.op is getitem and isinstance(
            node.args[1], Const) and type(node.args[1].value) in (int, str):
        return node.args[0], node.args[1].value
    name = getattr(node.op, "field_name", None)
    return (node.args[0], name) if name is not None else None


# A structure built from operands: its template names them a0, a1, ... and the
# argument it copies the kinds of (namedtuples, dataclasses, objects) ``like``.
_BUILT_HERE = ("a structure returned by the function (a dict of metrics beside the loss) "
               "is passed through, not differentiated")


@functools.cache
def structure(template: str, count: int, like: bool, spec: tuple, path: tuple = ()) -> Op:
    """The op writing ``template``, a structure (of spec ``spec``, see
    :mod:`autodiff.frontend.structures`) of ``count`` operands ``a0, a1, ...``, and of
    ``like``, the argument it takes kinds from, when ``like`` is true: the part of it at
    ``path`` (its keys) is copied, each leaf of ``spec`` replaced by an operand."""
    params = (["like"] if like else []) + [f"a{i}" for i in range(count)]
    op = Op("structure", stub_taking(params), template, diff=tuple(params[like:]),
            no_gradient=_BUILT_HERE, floating=None, jvp="structure")
    op.outside_tables = "built by the frontend and the transforms, never written as code"
    op.spec, op.like_path = spec, path
    return op


__all__ = ["field", "item", "part_read", "structure"]
