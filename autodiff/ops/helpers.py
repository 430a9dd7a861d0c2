"""The runtime helpers of :mod:`autodiff.ops.runtime` as ops, so rules can call them.

Their kernels pick the plainest NumPy spelling the constant arguments allow
(``np.expand_dims(g, 1)`` rather than ``expand_reduced(g, 1, False)``) and fall
back to the helper when an argument is only known at run time.
"""

from __future__ import annotations

import inspect

from autodiff.graph.ir import Const
from autodiff.graph.shapes import SCALAR, token_of
from autodiff.ops import runtime
from autodiff.ops.registry import OPS, defop


def _like(param: str):
    return "like:" + param


def _same_shape_as_target(named, builder):
    g, x = named["g"], named["x"]
    token, target = token_of(g), token_of(x)
    if token is not None and token is target:
        return g
    # A scalar standing for a one-element value: later arithmetic broadcasts it.
    if token is SCALAR and target in builder.size_one:
        return g
    return None


@defop("unbroadcast", "unbroadcast(g, x)", aliases=(runtime.unbroadcast,), diff=("g",),
       shape=_like("x"), simplify=_same_shape_as_target, fresh=False)
def unbroadcast(g, x): ...


@defop("unbroadcast_to", "unbroadcast_to(g, shape)", aliases=(runtime.unbroadcast_to,),
       diff=("g",), fresh=False)
def unbroadcast_to(g, shape): ...


def _expand_reduced_simplify(named, builder):
    axis, keepdims = named["axis"], named["keepdims"]
    if isinstance(keepdims, Const) and keepdims.value:
        return named["g"]
    if isinstance(axis, Const) and axis.value is None:
        return named["g"]
    return None


def _expand_reduced_kernel(named):
    if isinstance(named["axis"], Const) and isinstance(named["keepdims"], Const):
        return "np.expand_dims(g, axis)"
    return "expand_reduced(g, axis, keepdims)"


@defop("expand_reduced", _expand_reduced_kernel, aliases=(runtime.expand_reduced,), diff=("g",),
       simplify=_expand_reduced_simplify, fresh=False)
def expand_reduced(g, axis, keepdims): ...


def _reduced_size_kernel(named):
    axis = named["axis"]
    if isinstance(axis, Const) and axis.value is None:
        return "np.size(a)"
    if isinstance(axis, Const) and isinstance(axis.value, int):
        return "np.shape(a)[axis]"
    return "reduced_size(a, axis)"


@defop("reduced_size", _reduced_size_kernel, aliases=(runtime.reduced_size,),
       nondiff_output=True, floating=None, shape="scalar")
def reduced_size(a, axis): ...


def _within_bounds_kernel(named):
    low, high = named["low"], named["high"]
    if not (isinstance(low, Const) and isinstance(high, Const)):
        return "within_bounds(a, low, high)"
    no_low, no_high = low.value is None, high.value is None
    if no_low and no_high:
        return "True"
    if no_low:
        return "a <= high"
    if no_high:
        return "a >= low"
    return "(a >= low) & (a <= high)"


@defop("within_bounds", _within_bounds_kernel, aliases=(runtime.within_bounds,),
       nondiff_output=True, floating=None, shape="elementwise:a,low,high")
def within_bounds(a, low, high): ...


def _call(name: str, params: str, **facts) -> None:
    """Register the runtime helper ``name(params)`` as an op that calls it."""
    fn = getattr(runtime, name)

    def stub(*args): ...

    stub.__signature__ = inspect.Signature([
        inspect.Parameter(p.strip(), inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params.split(",")
    ])
    defop(name, f"{name}({params})", aliases=(fn,), **facts)(stub)


_call("matmul_grad_lhs", "g, a, b", diff=("g", "b"), shape=_like("a"))
_call("matmul_grad_rhs", "g, a, b", diff=("g", "a"), shape=_like("b"))
_call("dot_grad_lhs", "g, a, b", diff=("g", "b"), shape=_like("a"))
_call("dot_grad_rhs", "g, a, b", diff=("g", "a"), shape=_like("b"))
_call("inner_grad_lhs", "g, a, b", diff=("g", "b"), shape=_like("a"))
_call("inner_grad_rhs", "g, a, b", diff=("g", "a"), shape=_like("b"))
_call("product_of_others", "a, axis", diff=("a",), shape=_like("a"))
_call("split_like", "g, arrays, axis", diff=("g",), fresh=False)
_call("einsum_grads", "g, subscripts, operands", diff=("g",), fresh=False)
_call("solve_grads", "g, x, a, b", diff=("g",), fresh=False)
_call("unstack", "g, axis", diff=("g",), fresh=False)
_call("inverse_permutation", "axes", nondiff_output=True, floating=None,
      impl=runtime.inverse_permutation)
_call("scalar_output_seed", "out, where", nondiff_output=True, floating="always",
      shape=_like("out"))


def _as_gradient_of_statement(named) -> str:
    # Python floats, the common scalar case, skip the call altogether. When the
    # gradient is plain arithmetic on x alone, it is a float whenever x is one.
    if named["float_when_x_is"].value:
        return "if x.__class__ is not float:\n    g = as_gradient_of(g, x, where=where)"
    return ("if g.__class__ is not float or x.__class__ is not float:\n"
            "    g = as_gradient_of(g, x, where=where)")


@defop("as_gradient_of", None, aliases=(runtime.as_gradient_of,), diff=("g",), shape=_like("x"),
       floating="always", inplace=_as_gradient_of_statement)
def as_gradient_of(g, x, where=None, float_when_x_is=False): ...


# Reuses the gradient's name when it can, else starts from the gradient itself.
as_gradient_of.inplace_copy = "g"
as_gradient_of.inplace_mutates = False

# It raises on a non-scalar output: keep it even when nothing reads the seed.
OPS["scalar_output_seed"].effect = True
