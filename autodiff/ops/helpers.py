"""The runtime helpers of :mod:`autodiff.ops.runtime` as ops, so rules can call them.

Their kernels pick the plainest NumPy spelling the constant arguments allow
(``np.expand_dims(g, 1)`` rather than ``expand_reduced(g, 1, False)``) and fall
back to the helper when an argument is only known at run time.

They appear in derivative graphs, so they carry rules of their own: forward
mode over a gradient (``ad.hessian``, ``ad.hvp``) needs their JVPs, and
``ad.grad`` of a gradient their VJPs. Most are linear in the adjoint they
move, and their rules are the helper again (JVP) or its transpose (VJP).
A parameter a helper depends on but has no rule for stays in ``diff``, so that
differentiating it once more is an error rather than a silent zero.
"""

from __future__ import annotations

import inspect

import numpy as np

from autodiff.graph.ir import Const
from autodiff.graph.shapes import SCALAR, token_of
from autodiff.ops import runtime
from autodiff.ops.registry import OPS, Op, defop
from autodiff.ops.shape_rules import broadcast, list_result, reduced, scalar_result, shape_like


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
       shape=shape_like("x"), simplify=_same_shape_as_target, fresh=False, zeros="first", shape_params=("x",))
def unbroadcast(g, x): ...


@unbroadcast.defjvp
def _(dg, result, g, x):
    return runtime.unbroadcast(dg, x)


# Summing over broadcast axes is the transpose of broadcasting back.
@unbroadcast.defvjp
def _(gg, result, g, x):
    return runtime.broadcast_like(gg, g)


@defop("unbroadcast_to", "unbroadcast_to(g, shape)", aliases=(runtime.unbroadcast_to,),
       diff=("g",), fresh=False, zeros="first")
def unbroadcast_to(g, shape): ...


unbroadcast.from_shape = unbroadcast_to


@unbroadcast_to.defjvp
def _(dg, result, g, shape):
    return runtime.unbroadcast_to(dg, shape)


@unbroadcast_to.defvjp
def _(gg, result, g, shape):
    return runtime.broadcast_like(gg, g)


# Summed to a value known to be 0-d: summed to (), which reads nothing of the value.
# For one signature: nothing between equal shapes, else the exact sum over the
# broadcast axes.
@unbroadcast.defspecialize
def _(rewrite, g, x):
    return rewrite.sum_to(g, rewrite.shape(x))


@unbroadcast_to.defspecialize
def _(rewrite, g, shape):
    known, target = rewrite.known(shape)
    return rewrite.sum_to(g, target if known else None)


@unbroadcast.defrewrite
def _(rewrite, node, g, x):
    if token_of(x) is SCALAR and token_of(g) is not SCALAR:
        return rewrite.emit(unbroadcast_to, g, Const(()))
    return None


@unbroadcast_to.defrewrite
def _(rewrite, node, g, shape):
    if isinstance(shape, Const) and shape.value == ():
        return rewrite.sum_of_broadcast(node, g)
    return None


def _same_shape_as_result(named, builder):
    t, ans = named["t"], named["ans"]
    token = token_of(t)
    return t if token is not None and token is token_of(ans) else None


@defop("broadcast_like", "broadcast_like(t, ans)", aliases=(runtime.broadcast_like,),
       diff=("t",), shape=shape_like("ans"), simplify=_same_shape_as_result, fresh=False, zeros="first")
def broadcast_like(t, ans): ...


# ans is read for its shape and its dtype (a Python number takes it): simplify never
# swaps it for another value of its shape (shape_params in kind_params). A loop's
# backward sweep that reads ans for this alone keeps its shape, not the array, and
# broadcasts as NumPy does (from_shape): a Python float there stays float64.
broadcast_like.shape_params = broadcast_like.kind_params = ("ans",)
broadcast_like.from_shape = OPS["broadcast_to"]


@broadcast_like.defvjp
def _(g, result, t, ans):
    return runtime.unbroadcast(g, t)


@broadcast_like.defjvp
def _(dt, result, t, ans):
    return runtime.broadcast_like(dt, ans)


@broadcast_like.defspecialize
def _(rewrite, t, ans):
    if rewrite.like_result(t):
        return t
    shape = rewrite.array_shape(ans)  # an array of another shape: NumPy's broadcast_to
    if shape is None:
        return None
    kind, dtype = type(t.value) if isinstance(t, Const) else rewrite.kind(t), rewrite.dtype(ans)
    if kind in (float, int, complex):
        # A Python number, in the dtype it takes beside ans: np.float32(t) for float32.
        if dtype is None:
            return None
        spread = runtime.dtype_with(kind(1), np.empty(0, dtype))
        if spread != np.result_type(kind(1)):
            t = rewrite.emit("precision", t, Const(spread.name))
    elif rewrite.array_shape(t) is None and rewrite.shape(t) != ():
        return None  # (a NumPy scalar or an array keeps its own dtype)
    return rewrite.emit("broadcast_to", t, Const(shape))


def _zero(x):
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return 0.0
    raise TypeError("only numbers fold")


@defop("zero_tangent", "zero_tangent(x)", aliases=(runtime.zero_tangent,), nondiff_output=True,
       floating="always", shape=shape_like("x"), impl=_zero,
       no_gradient="zeros: it reads only the shape")
def zero_tangent(x): ...


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
       simplify=_expand_reduced_simplify, fresh=False, zeros="first")
def expand_reduced(g, axis, keepdims): ...


@expand_reduced.defjvp
def _(dg, result, g, axis, keepdims):
    return runtime.expand_reduced(dg, axis, keepdims)


@expand_reduced.defvjp
def _(gg, result, g, axis, keepdims):
    return np.reshape(gg, np.shape(g))


def _reduced_size_kernel(named):
    axis = named["axis"]
    if isinstance(axis, Const) and axis.value is None:
        return "np.size(a)"
    if isinstance(axis, Const) and isinstance(axis.value, int):
        return "np.shape(a)[axis]"
    return "reduced_size(a, axis)"


@defop("reduced_size", _reduced_size_kernel, aliases=(runtime.reduced_size,),
       nondiff_output=True, floating=None, shape=scalar_result,
       no_gradient="a count of elements, read from the shape", shape_params=("a",), query=True)
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
       nondiff_output=True, floating=None, shape=broadcast("a", "low", "high"),
       no_gradient="a boolean mask (of np.clip's rule)")
def within_bounds(a, low, high): ...


def _call(name: str, params: str, **facts) -> Op:
    """Register the runtime helper ``name(params)`` as an op that calls it."""
    fn = getattr(runtime, name)

    def stub(*args): ...

    stub.__signature__ = inspect.Signature([
        inspect.Parameter(p.strip(), inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params.split(",")
    ])
    return defop(name, f"{name}({params})", aliases=(fn,), **facts)(stub)


def _ranks(rewrite, a, b) -> tuple[int, int] | None:
    shapes = rewrite.array_shape(a), rewrite.array_shape(b)
    return None if None in shapes else (len(shapes[0]), len(shapes[1]))


# ----- adjoints of products -----
#
# Each is bilinear in the adjoint g and the other operand, and is the transpose of
# the product in its own operand: matmul_grad_lhs(g, a, b) applies the transpose of
# a -> a @ b to g. So its VJP for g is gg @ b and, since <gg, lhs(g, a, b)> equals
# <gg @ b, g>, its VJP for b is the adjoint of b in gg @ b: matmul_grad_rhs(g, gg, b).

matmul_grad_lhs = _call("matmul_grad_lhs", "g, a, b", diff=("g", "b"), shape=shape_like("a"))
matmul_grad_rhs = _call("matmul_grad_rhs", "g, a, b", diff=("g", "a"), shape=shape_like("b"))
# For one signature, the one formula the operands' ranks call for.
@matmul_grad_lhs.defspecialize
def _(rewrite, g, a, b):
    ranks = _ranks(rewrite, a, b)
    if ranks == (2, 2):
        return rewrite.emit("matmul", g, rewrite.emit("transpose", b, Const(None)))
    if ranks == (2, 1):
        return rewrite.emit("outer", g, b)
    if ranks == (1, 2):
        return rewrite.emit("matmul", b, g)
    if ranks == (1, 1):
        return rewrite.emit("multiply", g, b)
    return None


@matmul_grad_rhs.defspecialize
def _(rewrite, g, a, b):
    ranks = _ranks(rewrite, a, b)
    if ranks == (2, 2):
        return rewrite.emit("matmul", rewrite.emit("transpose", a, Const(None)), g)
    if ranks == (1, 2):
        return rewrite.emit("outer", a, g)
    if ranks == (2, 1):
        return rewrite.emit("matmul", g, a)
    if ranks == (1, 1):
        return rewrite.emit("multiply", g, a)
    return None


# The sums of those adjoints over a loop's steps, from lists of the steps' operands
# (transforms/accumulations.py writes them after a backward loop): bilinear in the lists.
_OVER_STEPS = ("a sum over a loop's steps, after its reverse sweep: reverse mode over a "
               "reverse sweep runs forward mode (api.ForwardGradient)")
matmul_grad_lhs_of_steps = _call("matmul_grad_lhs_of_steps", "gs, a, bs", diff=("gs", "bs"),
                                 shape=shape_like("a"), no_gradient=_OVER_STEPS)
matmul_grad_rhs_of_steps = _call("matmul_grad_rhs_of_steps", "gs, as_, b", diff=("gs", "as_"),
                                 shape=shape_like("b"), no_gradient=_OVER_STEPS)
for _op in (matmul_grad_lhs_of_steps, matmul_grad_rhs_of_steps):
    _op.outside_tables = ("written by transforms/accumulations.py after a backward loop "
                          "(tests/transforms/test_accumulations.py)")
matmul_grad_lhs.over_steps = (matmul_grad_lhs_of_steps, "a", "b")
matmul_grad_rhs.over_steps = (matmul_grad_rhs_of_steps, "b", "a")
matmul_grad_lhs_of_steps.per_step = matmul_grad_lhs
matmul_grad_rhs_of_steps.per_step = matmul_grad_rhs


@matmul_grad_lhs_of_steps.defjvp("gs")
def _(dgs, result, gs, a, bs):
    return runtime.matmul_grad_lhs_of_steps(dgs, a, bs)


@matmul_grad_lhs_of_steps.defjvp("bs")
def _(dbs, result, gs, a, bs):
    return runtime.matmul_grad_lhs_of_steps(gs, a, dbs)


@matmul_grad_rhs_of_steps.defjvp("gs")
def _(dgs, result, gs, as_, b):
    return runtime.matmul_grad_rhs_of_steps(dgs, as_, b)


@matmul_grad_rhs_of_steps.defjvp("as_")
def _(das, result, gs, as_, b):
    return runtime.matmul_grad_rhs_of_steps(gs, das, b)


_call("dot_grad_lhs", "g, a, b", diff=("g", "b"), shape=shape_like("a"))
_call("dot_grad_rhs", "g, a, b", diff=("g", "a"), shape=shape_like("b"))
_call("inner_grad_lhs", "g, a, b", diff=("g", "b"), shape=shape_like("a"))
_call("inner_grad_rhs", "g, a, b", diff=("g", "a"), shape=shape_like("b"))


@OPS["matmul_grad_lhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.matmul_grad_lhs(dg, a, b)


@OPS["matmul_grad_lhs"].defjvp("b")
def _(db, result, g, a, b):
    return runtime.matmul_grad_lhs(g, a, db)


@OPS["matmul_grad_lhs"].defvjp
def _(gg, result, g, a, b):
    return np.matmul(gg, b), runtime.matmul_grad_rhs(g, gg, b)


@OPS["matmul_grad_rhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.matmul_grad_rhs(dg, a, b)


@OPS["matmul_grad_rhs"].defjvp("a")
def _(da, result, g, a, b):
    return runtime.matmul_grad_rhs(g, da, b)


@OPS["matmul_grad_rhs"].defvjp
def _(gg, result, g, a, b):
    return np.matmul(a, gg), runtime.matmul_grad_lhs(g, a, gg)


@OPS["dot_grad_lhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.dot_grad_lhs(dg, a, b)


@OPS["dot_grad_lhs"].defjvp("b")
def _(db, result, g, a, b):
    return runtime.dot_grad_lhs(g, a, db)


@OPS["dot_grad_lhs"].defvjp
def _(gg, result, g, a, b):
    return np.dot(gg, b), runtime.dot_grad_rhs(g, gg, b)


@OPS["dot_grad_rhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.dot_grad_rhs(dg, a, b)


@OPS["dot_grad_rhs"].defjvp("a")
def _(da, result, g, a, b):
    return runtime.dot_grad_rhs(g, da, b)


@OPS["dot_grad_rhs"].defvjp
def _(gg, result, g, a, b):
    return np.dot(a, gg), runtime.dot_grad_lhs(g, a, gg)


@OPS["inner_grad_lhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.inner_grad_lhs(dg, a, b)


@OPS["inner_grad_lhs"].defjvp("b")
def _(db, result, g, a, b):
    return runtime.inner_grad_lhs(g, a, db)


@OPS["inner_grad_lhs"].defvjp
def _(gg, result, g, a, b):
    return np.inner(gg, b), runtime.inner_grad_rhs(g, gg, b)


@OPS["inner_grad_rhs"].defjvp("g")
def _(dg, result, g, a, b):
    return runtime.inner_grad_rhs(dg, a, b)


@OPS["inner_grad_rhs"].defjvp("a")
def _(da, result, g, a, b):
    return runtime.inner_grad_rhs(g, da, b)


@OPS["inner_grad_rhs"].defvjp
def _(gg, result, g, a, b):
    return np.inner(a, gg), runtime.inner_grad_lhs(g, a, gg)


# ----- np.prod: the product of the others -----

THIRD = "a third derivative of {}: no rule"

_call("product_of_others", "a, axis", diff=("a",), shape=shape_like("a"))
# Linear in t; its derivative in a (a third derivative of np.prod) has no rule.
_call("product_of_others_jvp", "t, a, axis", diff=("t", "a"), shape=shape_like("a"),
      no_gradient=THIRD.format("np.prod"))


@OPS["product_of_others"].defjvp
def _(da, result, a, axis):
    return runtime.product_of_others_jvp(da, a, axis)


# Its Jacobian is symmetric (d others_i / d a_j = product of all but i and j).
@OPS["product_of_others"].defvjp
def _(g, result, a, axis):
    return runtime.product_of_others_jvp(g, a, axis)


@OPS["product_of_others_jvp"].defjvp("t")
def _(dt, result, t, a, axis):
    return runtime.product_of_others_jvp(dt, a, axis)


# ----- helpers that split one adjoint into several -----

_call("split_like", "g, arrays, axis", diff=("g",), shape=list_result, fresh=False)
_call("unstack", "g, axis", diff=("g",), shape=list_result, fresh=False)


@OPS["split_like"].defjvp
def _(dg, result, g, arrays, axis):
    return runtime.split_like(dg, arrays, axis)


@OPS["split_like"].defvjp
def _(gg, result, g, arrays, axis):
    return np.concatenate(gg, axis=axis)


@OPS["unstack"].defjvp
def _(dg, result, g, axis):
    return runtime.unstack(dg, axis)


@OPS["unstack"].defvjp
def _(gg, result, g, axis):
    return np.stack(gg, axis=axis)


# The helpers returning one adjoint per operand are list-shaped, so that forward mode
# sums the parts of their tangents item by item (add_lists), not as tuples.
_call("einsum_grads", "g, subscripts, operands", diff=("g", "operands"), shape=list_result,
      fresh=False)
_call("einsum_grads_jvp", "tangents, g, subscripts, operands",
      diff=("tangents", "g", "operands"), shape=list_result, fresh=False,
      no_gradient=THIRD.format("np.einsum"))
_call("einsum_grads_vjp", "cotangents, g, subscripts, operands",
      diff=("cotangents", "g", "operands"), fresh=False, no_gradient=THIRD.format("np.einsum"))
_call("solve_grads", "g, x, a, b", diff=("g", "x", "a"), shape=list_result, fresh=False)
_call("solve_grads_jvp", "grads, x, a, b, dx, da", diff=("grads", "x", "a", "dx", "da"),
      shape=list_result, fresh=False, no_gradient=THIRD.format("np.linalg.solve"))
_call("solve_grads_vjp", "cotangents, grads, x, a, b",
      diff=("cotangents", "grads", "x", "a"), fresh=False,
      no_gradient=THIRD.format("np.linalg.solve"))


@OPS["einsum_grads"].defjvp("g")
def _(dg, result, g, subscripts, operands):
    return runtime.einsum_grads(dg, subscripts, operands)


@OPS["einsum_grads"].defjvp("operands")
def _(doperands, result, g, subscripts, operands):
    return runtime.einsum_grads_jvp(doperands, g, subscripts, operands)


@OPS["einsum_grads"].defvjp
def _(gg, result, g, subscripts, operands):
    return runtime.einsum_grads_vjp(gg, g, subscripts, operands)


@OPS["solve_grads"].defjvp("g")
def _(dg, result, g, x, a, b):
    return runtime.solve_grads(dg, x, a, b)


@OPS["solve_grads"].defjvp("x")
def _(dx, result, g, x, a, b):
    return runtime.solve_grads_jvp(result, x, a, b, dx, None)


@OPS["solve_grads"].defjvp("a")
def _(da, result, g, x, a, b):
    return runtime.solve_grads_jvp(result, x, a, b, None, da)


@OPS["solve_grads"].defvjp
def _(gg, result, g, x, a, b):
    return runtime.solve_grads_vjp(gg, result, x, a, b)


larger_share = _call("larger_share", "x1, x2", nondiff_output=True, floating="always",
                     shape=broadcast("x1", "x2"),
                     no_gradient="a share of a gradient, constant between ties")


# For one signature: the comparisons, the half in the dtype of the arrays (weakly typed
# numbers leave it to the arrays), so that numba compiles it as NumPy computes it.
@larger_share.defspecialize
def _(rewrite, x1, x2):
    dtypes = []
    for x in (x1, x2):
        kind = type(x.value) if isinstance(x, Const) else rewrite.kind(x)
        if kind in (float, int, bool):
            continue
        if rewrite.dtype(x) is None:
            return None
        dtypes.append(rewrite.dtype(x))
    dtype = np.result_type(*dtypes, 1.0)
    half = Const(0.5 if dtype == np.float64 or not dtypes else dtype.type(0.5))
    tie = rewrite.emit("multiply", half, rewrite.emit("equal", x1, x2))
    return rewrite.emit("add", rewrite.emit("greater", x1, x2), tie)


# The zero a loop's or a branch's adjoint starts from: ``0.0`` for a Python number,
# else ``np.zeros_like`` in the floating dtype (float64 for integers). A new array the
# backward sweep may add into in place: two are never one value.
zero_adjoint = _call("zero_adjoint", "a", shape=shape_like("a"), floating="always",
                     nondiff_output=True, no_gradient="a zero: it reads the shape and kind "
                     "of its operand alone")
zero_adjoint.kind_params = ("a",)
zero_adjoint.distinct = True


@zero_adjoint.defspecialize
def _(rewrite, a):
    """For one signature: ``0.0`` for a float, ``np.zeros(shape)`` for a float64 array
    of known shape (as ``np.zeros_like`` is specialised), which no longer reads ``a``,
    ``np.zeros_like`` for another floating array."""
    kind, dtype = rewrite.kind(a), rewrite.dtype(a)
    if rewrite.is_number(a) and kind is not None and dtype is not None and dtype.kind == "f":
        return Const(0.0)
    if kind is not np.ndarray or dtype is None or dtype.kind not in "fc":
        return None
    shape = rewrite.array_shape(a)
    if shape is not None and dtype == np.float64:
        return rewrite.emit("zeros", Const(shape), Const(None))
    return rewrite.emit("zeros_like", a, Const(None))  # (its dtype: float32 stays)


adjoint_dtype = _call("adjoint_dtype", "g, a", nondiff_output=True, floating=None,
                      query=True, no_gradient="a dtype")
adjoint_dtype.kind_params = ("g", "a")  # g's class and a's dtype alone


@adjoint_dtype.defspecialize
def _(rewrite, g, a):
    kind = type(g.value) if isinstance(g, Const) else rewrite.kind(g)
    dtype_g, dtype_a = rewrite.dtype(g), rewrite.dtype(a)
    if kind in (float, int, complex) and dtype_a is not None:
        return Const(runtime.dtype_with(1j if kind is complex else 1.0, np.empty(0, dtype_a)))
    if kind is np.ndarray and dtype_g is not None:
        return Const(np.result_type(dtype_g, 1.0))
    return None
count_true = _call("count_true", "mask, axis, keepdims, like", nondiff_output=True,
                   floating=None, shape=reduced, no_gradient="a count of tied elements")
count_true.kind_params = ("like",)  # its dtype alone


_call("inverse_permutation", "axes", nondiff_output=True, floating=None,
      impl=runtime.inverse_permutation, no_gradient="axis numbers")
_call("covers_unrolled", "length, count, what", nondiff_output=True, floating=None,
      shape=scalar_result, no_gradient="a number of items, checked")
OPS["covers_unrolled"].effect = True  # the check runs even if nothing reads its result
_call("settings_unchanged", "obj, digest, name", nondiff_output=True, floating=None,
      no_gradient="an object read from a global, checked")
OPS["settings_unchanged"].effect = OPS["settings_unchanged"].statement = True
scalar_output_seed = _call("scalar_output_seed", "out, where", nondiff_output=True,
                           floating="always", shape=shape_like("out"),
                           no_gradient="the seed 1.0 of a reverse sweep")


@scalar_output_seed.defspecialize
def _(rewrite, out, where):
    return _unit_seed(rewrite, out) if rewrite.shape(out) == () else None


def _unit_seed(rewrite, out):
    """The seed 1.0 of a 0-d output, as runtime.unit_seed gives it: a Python float for
    float64, np.float32(1.0) for float32."""
    dtype = rewrite.dtype(out)
    if rewrite.kind(out) is float or dtype is None or dtype.kind != "f" or dtype == np.float64:
        return Const(1.0)
    return rewrite.emit("precision", Const(1.0), Const(dtype.name))


_call("vjp_seed", "seed, out, where", diff=("seed",), shape=shape_like("out"))
OPS["vjp_seed"].effect = True  # it checks the seed's shape: keep it even if nothing reads it
OPS["vjp_seed"].fresh = False  # it is the caller's seed: never update it in place
OPS["vjp_seed"].outside_tables = "ad.vjp writes it (second order: tests/api/test_higher_order.py)"
# A tuple seed with parts given as None (no seed for that output: zeros).
filled_seed = _call("filled_seed", "seed, out, where", diff=("seed",), floating=None,
                    jvp="linear")
filled_seed.kind_params = ("out",)  # read for the shapes of the outputs given no seed
filled_seed.fresh = False  # it is the caller's seed, or holds its parts
filled_seed.outside_tables = "ad.vjp writes it for a function returning a tuple"


@filled_seed.defvjp
def _(g, ans, seed, out, where):
    return g


vjp_structured_seed = _call("vjp_structured_seed", "seed, out, where", diff=("seed",), floating=None,
                            no_gradient="the seed of a structured output, read leaf by leaf")
vjp_structured_seed.effect = True  # it checks the seed's structure
# A seed whose structure is known while compiling (passed by differentiated code) is
# checked then, against the structure built by its operand ``out`` (index 1).
vjp_structured_seed.checks_structure = 1
vjp_structured_seed.fresh = False
vjp_structured_seed.outside_tables = "ad.vjp writes it for a function returning a structure"


# Shapes known: a seed of the output's shape is itself, an omitted one of a scalar 1.0.
@OPS["vjp_seed"].defspecialize
def _(rewrite, seed, out, where):
    shape = rewrite.shape(out)
    if shape is None:
        return None
    if rewrite.known(seed) == (True, None):
        return _unit_seed(rewrite, out) if shape == () else None
    return seed if rewrite.shape(seed) == shape else None


@OPS["vjp_seed"].defvjp
def _(g, ans, seed, out, where):
    return g


@OPS["vjp_seed"].defjvp
def _(t, ans, seed, out, where):
    return t


def _as_gradient_of_statement(named) -> str:
    # Python floats, the common scalar case, skip the call altogether. When the
    # gradient is plain arithmetic on x alone, it is a float whenever x is one.
    call = "as_gradient_of(g, x, where=where" + (
        ", complex_values=True)" if named["complex_values"].value else ")")
    if named["float_when_x_is"].value:
        return f"if x.__class__ is not float:\n    g = {call}"
    return f"if g.__class__ is not float or x.__class__ is not float:\n    g = {call}"


@defop("as_gradient_of", None, aliases=(runtime.as_gradient_of,), diff=("g",), shape=shape_like("x"),
       floating="always", inplace=_as_gradient_of_statement)
def as_gradient_of(g, x, where=None, complex_values=False, float_when_x_is=False): ...


# Reuses the gradient's name when it can, else starts from the gradient itself.
as_gradient_of.inplace_copy = "g"
as_gradient_of.inplace_mutates = False
as_gradient_of.kind_params = ("x",)  # its shape, dtype and kind


# The gradient as it is, when it already is what as_gradient_of would return: a new
# array of the argument's shape and floating dtype, returned once.
@as_gradient_of.defspecialize(after_optimizing=True)
def _(rewrite, g, x, where, complex_values, float_when_x_is):
    kind_g, kind_x = rewrite.kind(g), rewrite.kind(x)
    if kind_g is None or kind_x is None:
        return None
    if kind_x is float and rewrite.is_number(g):
        return g if kind_g is float else rewrite.emit("float", g)
    shape_g, shape_x = rewrite.array_shape(g), rewrite.array_shape(x)
    if not (shape_g is not None and shape_x is not None and rewrite.dtype(x).kind in "fc"
            and (shape_g, rewrite.dtype(g)) == (shape_x, rewrite.dtype(x))):
        return None
    if isinstance(where, Const) and where.value is not None and shape_x != ():
        return None  # the general helper raises: the output is not a scalar
    if rewrite.final and rewrite.unshared(g):
        return g  # a new array nothing else reads: no one shares it
    return rewrite.emit("copy", g) if rewrite.numba else None


@as_gradient_of.defjvp
def _(dg, result, g, x, where, complex_values, float_when_x_is):
    return runtime.as_gradient_of(dg, x, complex_values=complex_values)


@as_gradient_of.defvjp
def _(gg, result, g, x, where, complex_values, float_when_x_is):
    return runtime.unbroadcast(gg, g)

# It raises on a non-scalar output: keep it even when nothing reads the seed.
OPS["scalar_output_seed"].effect = True

# The checks of a derivative that computes with complex values (see
# transforms/complex_values.py): grad's output is real; an op whose rules hold for real
# values alone gets real operands; a real argument's tangent is real.
_call("real_output", "out, where", diff=("out",), shape=shape_like("out"), fresh=False)
OPS["real_output"].effect = True
OPS["real_output"].outside_tables = "reverse mode writes it (tests/api/test_complex.py)"


@OPS["real_output"].defvjp
def _(g, ans, out, where):
    return g


@OPS["real_output"].defjvp
def _(t, ans, out, where):
    return t


for _name, _params, _what in (("real_operands", "values, what", "the operands of an op"),
                              ("real_tangents", "pairs", "the tangents")):
    _call(_name, _params, nondiff_output=True, floating=None,
          no_gradient=f"a check of {_what}: real values",
          sympy=lambda *checked: None)  # (SymPy's symbols are real: the check holds)
    OPS[_name].effect = OPS[_name].statement = True
    OPS[_name].outside_tables = "the transforms write it (tests/api/test_complex.py)"


# Batched tangents (transforms/batching.py): a batch of tangents is complex when one is.
OPS["real_tangents"].defbatch(lambda batch, node, pairs: batch.as_it_is(node))


# Linear in g; its transpose is np.linspace of the two adjoints.
_call("linspace_grads", "g, start, stop, num, endpoint, axis", diff=("g",), shape=list_result,
      fresh=False)


@OPS["linspace_grads"].defjvp
def _(dg, result, g, start, stop, num, endpoint, axis):
    return runtime.linspace_grads(dg, start, stop, num, endpoint, axis)


@OPS["linspace_grads"].defvjp
def _(gg, result, g, start, stop, num, endpoint, axis):
    return runtime.broadcast_like(np.linspace(gg[0], gg[1], num, endpoint=endpoint, axis=axis), g)


# Linear in g; the transpose of cutting the adjoint into items is joining them again.
_call("index_concatenation_grads", "g, items, kind", diff=("g",), shape=list_result, fresh=False)
_call("index_concatenation_tangent", "t, items, kind", diff=("t",), fresh=False)


@OPS["index_concatenation_grads"].defjvp
def _(dg, result, g, items, kind):
    return runtime.index_concatenation_grads(dg, items, kind)


@OPS["index_concatenation_grads"].defvjp
def _(gg, result, g, items, kind):
    return runtime.index_concatenation_tangent(gg, items, kind)


@OPS["index_concatenation_tangent"].defjvp
def _(dt, result, t, items, kind):
    return runtime.index_concatenation_tangent(dt, items, kind)


@OPS["index_concatenation_tangent"].defvjp
def _(gg, result, t, items, kind):
    return runtime.index_concatenation_grads(gg, items, kind)


# Linear in g; its transpose is the trace itself.
_call("trace_grad", "g, a, offset, axis1, axis2", diff=("g",), shape=shape_like("a"))


@OPS["trace_grad"].defjvp
def _(dg, result, g, a, offset, axis1, axis2):
    return runtime.trace_grad(dg, a, offset, axis1, axis2)


@OPS["trace_grad"].defvjp
def _(gg, result, g, a, offset, axis1, axis2):
    return np.trace(gg, offset=offset, axis1=axis1, axis2=axis2)


# ----- batched tangents (transforms/batching.py): each example's helper, in one call -----


@unbroadcast.defbatch
def _(batch, node, g, x):
    return batch.emit("batched_unbroadcast", g, x) if batch.batched(g) else None


@unbroadcast_to.defbatch
def _(batch, node, g, shape):
    return None if batch.batched(shape) else batch.emit("batched_unbroadcast_to", g, shape)


@broadcast_like.defbatch
def _(batch, node, t, ans):
    return batch.emit("batched_broadcast_like", t, ans)


@as_gradient_of.defbatch
def _(batch, node, g, x, where, complex_values, float_when_x_is):
    return batch.emit("batched_as_gradient_of", g, x, where, complex_values)


@matmul_grad_lhs.defbatch
def _(batch, node, g, a, b):
    if batch.batched(a):
        return None
    return batch.emit("batched_matmul_grad_lhs", g, a, b, Const(batch.batched(g)),
                      Const(batch.batched(b)))


@matmul_grad_rhs.defbatch
def _(batch, node, g, a, b):
    if batch.batched(b):
        return None
    return batch.emit("batched_matmul_grad_rhs", g, a, b, Const(batch.batched(g)),
                      Const(batch.batched(a)))
