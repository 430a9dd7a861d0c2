"""A distribution frozen in differentiated code: ``norm(mu, sigma).logpdf(x)``.

Calling an object some of whose methods are ops (``scipy.stats.norm``, whose
``norm.logpdf`` is one) gives a :class:`Frozen`, known while compiling, that holds
the object and the arguments of the call. A method of it is the object's method
with those arguments after its own first ones, as SciPy's frozen distributions
call it: ``norm(mu, sigma).logpdf(x)`` is ``norm.logpdf(x, mu, sigma)``, an op.
A frozen object is only called through such methods; anything else it would be
used for (a method without a rule, an op's argument, a returned value) is refused.
"""

from __future__ import annotations

import ast
import functools
import types

import numpy as np

from autodiff.errors import UnsupportedSyntaxError
from autodiff.graph.ir import Const, Operand
from autodiff.ops import registry


class Frozen:
    """``owner(*args, **kwargs)`` as the code wrote it (``text``): arguments waiting for
    a method of ``owner``."""

    __slots__ = ("args", "kwargs", "owner", "text")

    def __init__(self, owner, args: tuple, kwargs: dict, text: str) -> None:
        self.owner, self.args, self.kwargs, self.text = owner, args, kwargs, text


def freezes(value) -> bool:
    """Whether calling ``value`` freezes arguments for methods that are ops."""
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType,
                          types.MethodType, np.ufunc, functools.partial)) or not callable(value):
        return False
    return registry.has_bound_ops(value)


class FrozenMixin:
    """Frozen distributions for :class:`autodiff.frontend.convert.Converter`."""

    def frozen_method(self, node: ast.Call, frozen: Frozen, name: str, args: tuple,
                      kwargs: dict) -> Operand:
        """``frozen.name(x, ...)``: the owner's method, the frozen arguments after ``x``."""
        method = getattr(frozen.owner, name, None)
        binding = registry.callable_binding(method) if method is not None else None
        if binding is None or not args:
            raise self.error(node, f"'{ast.unparse(node.func)}()' on the distribution "
                             f"'{frozen.text}' frozen in differentiated code is not supported",
                             kind=UnsupportedSyntaxError,
                             hint="call the distribution's own method with the parameters "
                             "(norm.logpdf(x, loc, scale)); its logpdf, pdf, cdf, logcdf, sf, "
                             "logsf and logpmf take them")
        overlap = set(kwargs) & set(frozen.kwargs)
        if overlap:
            raise self.error(node, f"'{min(overlap)}' is given both to '{frozen.text}' and to "
                             f"'{ast.unparse(node.func)}()'", kind=UnsupportedSyntaxError)
        return self.call_op(node, binding, (args[0], *frozen.args, *args[1:]),
                            {**frozen.kwargs, **kwargs}, ast.unparse(node.func))

    def refuse_frozen(self, node: ast.AST, operands) -> None:
        """A frozen distribution used as a value (an op's argument, the result)."""
        for operand in operands:
            if isinstance(operand, Frozen):
                raise self.error(node, f"the distribution '{operand.text}' frozen in "
                                 "differentiated code is used as a value; only its methods "
                                 "(logpdf, pdf, cdf, ...) are supported",
                                 kind=UnsupportedSyntaxError,
                                 hint="call its methods where it is made, or pass the "
                                 "parameters instead of the frozen distribution")


def frozen_call(callee: Const, args: tuple, kwargs: dict, text: str) -> Frozen | None:
    """``norm(mu, sigma)``: a :class:`Frozen` if ``callee`` freezes, else None."""
    if isinstance(callee, Const) and freezes(callee.value):
        return Frozen(callee.value, args, kwargs, text)
    return None
