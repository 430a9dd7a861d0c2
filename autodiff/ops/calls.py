"""Calls to functions autodiff has no rule for, run as they are.

A function that is no op and is not the user's own code (``np.tril``,
``scipy.signal.get_window``, a builtin, a library's Python function) is never
compiled: the derivative calls it as the user's code does. Its result is a
constant of the derivative as long as no argument carries a gradient; if one
does, differentiating stops with an error at the user's call, suggesting a rule
(``ad.register_gradient``), never a zero gradient. Such a call is never merged
with another, removed, or run while compiling (it may draw random numbers or
print).

>>> op = call_op(1, ("k",))
>>> op.kernel
'function(arg0, k=kw_k)'
"""

from __future__ import annotations

import functools
import inspect

from autodiff.errors import UnknownFunctionError
from autodiff.ops.registry import Op


@functools.cache
def call_op(positional: int, keywords: tuple[str, ...]) -> Op:
    """The op calling its first operand with ``positional`` arguments and ``keywords``."""
    args = [f"arg{i}" for i in range(positional)]
    kwargs = [f"kw_{name}" for name in keywords]
    params = ["function", *args, *kwargs]

    def stub(*operands): ...

    stub.__signature__ = inspect.Signature([
        inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
    words = [*args, *(f"{name}={kw}" for name, kw in zip(keywords, kwargs))]
    op = Op("call", stub, f"function({', '.join(words)})", diff=tuple(args + kwargs),
            fresh=False)
    op.opaque = op.effect = True
    op.missing_rule = _missing_rule
    return op


def _missing_rule(named: dict, where: dict) -> UnknownFunctionError:
    function = named["function"]
    text = function.path or getattr(function.value, "__name__", "this function")
    return UnknownFunctionError(
        f"'{text}' is not a function autodiff knows how to differentiate, and the result "
        "depends on it through an argument that carries a gradient", **where,
        hint=f"give it a rule with ad.register_gradient({text}, vjp), compute it from NumPy "
        "operations autodiff knows, or wrap the argument in ad.stop_gradient if no gradient "
        "should flow through it")
