"""Shape tokens: which values are statically known to share a shape.

The compiler never knows concrete shapes, but it often knows that two values
have the *same* shape (``sin(x)`` has the shape of ``x``, the adjoint of ``v``
has the shape of ``v``). Values in such a relation share a token; ``SCALAR`` is
the token of values known to be 0-d. This is what lets the compiler drop an
``unbroadcast`` it can prove to be a no-op, and know when a result is a scalar.

>>> combine([SCALAR, SCALAR]) is SCALAR
True
"""

from __future__ import annotations

from autodiff.graph.ir import Const, Operand, Token, Value


class _Scalar:
    def __repr__(self) -> str:
        return "SCALAR"


SCALAR = _Scalar()


class _List:
    def __repr__(self) -> str:
        return "LIST"


# The token of Python lists built by the function (``acc = []; acc.append(v)``).
LIST = _List()


class _Dict:
    def __repr__(self) -> str:
        return "DICT"


# The token of Python dicts whose keys are known only when the code runs
# (``grads = {}; for i in range(n): grads[f"W{i}"] = ...``).
DICT = _Dict()


def token_of(operand: Operand) -> object | None:
    """The shape token of an operand; None when it is no array-like value at all."""
    if isinstance(operand, Value):
        return operand.shape
    if isinstance(operand, Const) and isinstance(operand.value, (bool, int, float)):
        return SCALAR
    return None


def combine(tokens: list[object | None]) -> object:
    """Token of the broadcast of operands with these tokens (new token if unknown)."""
    if any(token is None for token in tokens):
        return Token()
    distinct = {id(token): token for token in tokens if token is not SCALAR}
    if not distinct:
        return SCALAR
    if len(distinct) == 1:
        return next(iter(distinct.values()))
    return Token()
