"""Shape rules: how an op's result shape follows from its operands (``shape=`` in defop).

A rule gives the result's shape token from the op's named operands (equal tokens
mean equal shapes, see :mod:`autodiff.graph.shapes`), and answers the two
questions passes ask: is the result an array or a number, never a tuple or a
list (``array``); and does its shape follow from the operands' shapes alone,
whatever the values of integer or boolean operands (``by_shapes``), or whatever
the values of boolean ones (``by_mask_shapes``: summing a mask). An op without
a rule (``shape=None``) has a result of a shape nothing else is known to share.

>>> from autodiff.graph.ir import Const
>>> shape_given_by("shape").token({"shape": Const(())}) is SCALAR
True
"""

from __future__ import annotations

import weakref

from autodiff.graph.ir import Const, Operand, SliceSpec, Value, operand_values
from autodiff.graph.shapes import DICT, LIST, SCALAR, Token, combine, token_of


class ShapeRule:
    """Of a result whose shape is unknown but an array's."""

    array = True
    by_shapes = False
    by_mask_shapes = False

    def token(self, named: dict) -> object:
        return Token()

    def rank(self, named: dict, rank_of) -> int | None:
        """The result's rank, from the operands' (``rank_of(operand)``: an int, or None
        when not known while compiling); None when not known."""
        return None


class _Scalar(ShapeRule):
    by_shapes = True

    def token(self, named: dict) -> object:
        return SCALAR

    def rank(self, named: dict, rank_of) -> int | None:
        return 0


class _List(ShapeRule):
    array = False

    def token(self, named: dict) -> object:
        return LIST


class _Dict(ShapeRule):
    array = False

    def token(self, named: dict) -> object:
        return DICT


class shape_like(ShapeRule):
    """The shape of the operand ``param``."""

    by_shapes = True

    def __init__(self, param: str) -> None:
        self.param = param

    def token(self, named: dict) -> object:
        return token_of(named[self.param]) or Token()

    def rank(self, named: dict, rank_of) -> int | None:
        return rank_of(named[self.param])


class broadcast(ShapeRule):
    """The shape the operands ``params`` broadcast to."""

    by_shapes = True

    def __init__(self, *params: str) -> None:
        self.params = params

    def token(self, named: dict) -> object:
        return combine([token_of(named[p]) for p in self.params])

    def rank(self, named: dict, rank_of) -> int | None:
        ranks = [rank_of(named[p]) for p in self.params]
        return None if None in ranks else max(ranks, default=0)


class shape_given_by(ShapeRule):
    """The shape that is the value of the operand ``param`` (``np.zeros(shape)``)."""

    def __init__(self, param: str) -> None:
        self.param = param

    def token(self, named: dict) -> object:
        shape = named[self.param]
        if isinstance(shape, Value) and shape.node is not None and shape.node.op.name == "shape":
            return token_of(shape.node.args[0]) or Token()
        if isinstance(shape, Const) and shape.value == ():
            return SCALAR
        return Token()

    def rank(self, named: dict, rank_of) -> int | None:
        shape = named[self.param]
        if isinstance(shape, tuple):
            return len(shape)
        if isinstance(shape, Const) and isinstance(shape.value, tuple):
            return len(shape.value)
        if isinstance(shape, Const) and type(shape.value) is int or token_of(shape) is SCALAR:
            return 1  # (a number: np.ones(n))
        return None


class _Reduced(ShapeRule):
    """``a`` reduced over ``axis``: a number when every axis goes and none is kept."""

    by_mask_shapes = True

    def token(self, named: dict) -> object:
        axis, keepdims = named.get("axis"), named.get("keepdims")
        if (isinstance(axis, Const) and axis.value is None
                and isinstance(keepdims, Const) and not keepdims.value):
            return SCALAR
        return Token()

    def rank(self, named: dict, rank_of) -> int | None:
        reduced = named["a"] if "a" in named else next(iter(named.values()))  # (norm's x)
        rank, axis, keepdims = rank_of(reduced), named.get("axis"), named.get("keepdims")
        if rank is None or not (isinstance(axis, Const) and isinstance(keepdims, Const)):
            return None
        if keepdims.value:
            return rank
        if axis.value is None:
            return 0
        return rank - (len(axis.value) if isinstance(axis.value, tuple) else 1)


class _Einsum(ShapeRule):
    def token(self, named: dict) -> object:
        spec = named["subscripts"]  # 'ij,ij->' sums everything away
        if isinstance(spec, Const) and isinstance(spec.value, str):
            text = spec.value.replace(" ", "")
            if text.endswith("->") or ("->" not in text and "." not in text and all(
                    text.count(c) > 1 for c in text if c != ",")):
                return SCALAR
        return Token()


class _Indexed(ShapeRule):
    array = False  # an item of a tuple or a list may be anything

    def token(self, named: dict) -> object:
        return _index_token(named["a"], named["index"])


class _ListIndexed(ShapeRule):
    """An item of a list (anything), or for a slice a list again (``pieces[1:]``), which
    code must treat as a list: ``pieces[:1] + pieces[1:]`` concatenates."""

    array = False

    def token(self, named: dict) -> object:
        return LIST if isinstance(named["index"], SliceSpec) else Token()


scalar_result = _Scalar()
list_result = _List()
dict_result = _Dict()
list_indexed = _ListIndexed()
reduced = _Reduced()
einsum_result = _Einsum()
indexed = _Indexed()

# The token of x[1:] for each token of x, as long as that token lives.
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _index_token(base: Operand, index: Operand) -> object:
    """Equal tokens for equal static indices of same-shaped arrays.

    ``x[1:]`` and ``x[:-1]`` get the same token: both drop one element of the
    first axis, whatever its length. A slice is described by the lengths it
    gives for a range of axis lengths, which covers every breakpoint of its
    constants.
    """
    token = token_of(base)
    if token is None:  # a constant array: its shape is no other value's
        return Token()
    if token is LIST:  # the items of a list (np.array_split's pieces) may differ in shape
        return Token()
    if isinstance(index, Const) and isinstance(index.value, tuple):
        index = tuple(Const(item) for item in index.value)
    items = index if isinstance(index, tuple) else (index,)
    signature = []
    for item in items:
        if isinstance(item, SliceSpec) and all(
            isinstance(p, Const) and (p.value is None or type(p.value) is int)
            for p in (item.start, item.stop, item.step)
        ):
            parts = slice(item.start.value, item.stop.value, item.step.value)
            if parts.step == 0:
                return Token()
            reach = max(abs(v) for v in (parts.start or 0, parts.stop or 0, parts.step or 1))
            lengths = tuple(len(range(*parts.indices(n))) for n in range(2 * reach + 4))
            signature.append(("slice", lengths, parts.step is None or parts.step > 0))
        elif isinstance(item, Const) and type(item.value) is int:
            signature.append(("int",))
        elif isinstance(item, Const) and item.value is None:
            signature.append(("new",))
        else:
            return Token()
    try:
        derived = _derived.setdefault(token, {})
    except TypeError:  # a token that takes no weak reference: known to equal nothing
        return Token()
    return derived.setdefault(tuple(signature), Token())


__all__ = ["ShapeRule", "broadcast", "dict_result", "einsum_result", "indexed", "list_indexed",
           "list_result", "reduced", "scalar_result", "shape_given_by", "shape_like"]


def is_basic_index(index) -> bool:
    """Whether ``index`` is built of constants, slices and integer scalars only: it names
    each element once (an array of integers may repeat one)."""
    return all(value.shape is SCALAR and not value.floating for value in operand_values(index))
