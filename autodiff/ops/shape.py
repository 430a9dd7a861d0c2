"""Shape and indexing ops, array constructors and shape queries."""

from __future__ import annotations

import builtins
import math

import numpy as np

from autodiff.errors import AutodiffError
from autodiff.graph.ir import Const, Location, Node, Value
from autodiff.graph.patterns import constant_tuple, is_none, is_scalar, produced_by
from autodiff.graph.shapes import LIST, SCALAR, token_of
from autodiff.ops import runtime, sympy_forms
from autodiff.ops.elementwise import STEPS
from autodiff.ops.registry import OPS, Op, RunAsItIs, alias, defop, helper_op
from autodiff.ops.shape_rules import (
    indexed,
    is_basic_index,
    list_result,
    scalar_result,
    shape_given_by,
    shape_like,
)
from autodiff.ops.sympy_forms import cast, objects, sp
from autodiff.ops.sympy_forms import index as sympy_index

# ----- views and reshapes -----


def _reshape_method(a, *shape, order="C"):
    return {"a": a, "shape": shape[0] if len(shape) == 1 else shape, "order": order}


@defop("reshape", "np.reshape(a, shape, order=order)", aliases=(np.reshape,),
       methods=(("reshape", _reshape_method),), diff=("a",), fresh=False, zeros="first", recompute="always", sympy=lambda a, shape, order: np.reshape(objects(a), shape, order=order), jvp="linear")
def reshape(a, shape, order="C"): ...


def _order_check(named) -> str | None:
    """Order 'C' or 'F' reads the elements in an order the gradient reads back the same
    way; 'A' and 'K' follow the array's memory layout, which the adjoint's is not."""
    order = named["order"]
    if not (isinstance(order, Const) and order.value in ("C", "F")):
        return "a reshape or ravel in order 'A' or 'K' (the memory layout's) has no gradient rule"
    return None


reshape.vjp_check = _order_check


# The adjoint read back into a's shape in the same order (C or F): the same call's inverse.
@reshape.defvjp
def _(g, ans, a, shape, order):
    return np.reshape(g, np.shape(a), order=order)


@reshape.defspecialize
def _(rewrite, a, shape, order):
    if rewrite.like_result(a):
        return a  # a view of the same shape: the array itself reads the same
    if rewrite.numba and rewrite.array_shape(a) is not None and not rewrite.fresh(a):
        return rewrite.emit(reshape, rewrite.emit("contiguous", a), shape, order)
    return None


# numba reshapes in C order only: order F is C order over the reversed axes (a.T), the
# result's axes reversed back.
@reshape.defnumba
def _(rewrite, a, shape, order):
    sizes = (shape.value,) if isinstance(shape, Const) and type(shape.value) is int else (
        constant_tuple(shape))
    if not (isinstance(order, Const) and order.value == "F") or sizes is None:
        return None
    reversed_axes = rewrite.emit("contiguous", rewrite.emit(transpose, a, Const(None)))
    read = rewrite.emit(reshape, reversed_axes, Const(sizes[::-1]), Const("C"))
    return rewrite.emit(transpose, read, Const(None))


@defop("ravel", "np.ravel(a, order=order)", aliases=(np.ravel,), methods=("ravel", "flatten"),
       diff=("a",), fresh=False, sympy=lambda a, order: np.ravel(objects(a), order=order),
       jvp="linear")
def ravel(a, order="C"): ...


ravel.vjp_check = _order_check


@ravel.defvjp
def _(g, ans, a, order):
    return np.reshape(g, np.shape(a), order=order)


# numba ravels in C order only: order F is C order over the reversed axes.
@ravel.defnumba
def _(rewrite, a, order):
    if not (isinstance(order, Const) and order.value == "F"):
        return None
    return rewrite.emit(ravel, rewrite.emit(transpose, a, Const(None)), Const("C"))


@defop("squeeze", "np.squeeze(a, axis=axis)", aliases=(np.squeeze,), methods=("squeeze",),
       diff=("a",), fresh=False, zeros="first", recompute="always", sympy=lambda a, axis: np.squeeze(objects(a), axis=axis), jvp="linear")
def squeeze(a, axis=None): ...


@squeeze.defvjp
def _(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


@defop("expand_dims", "np.expand_dims(a, axis)", aliases=(np.expand_dims,), diff=("a",),
       fresh=False, zeros="first", recompute="always", sympy=lambda a, axis: np.expand_dims(objects(a), axis), jvp="linear")
def expand_dims(a, axis): ...


@expand_dims.defvjp
def _(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


def _transpose_method(a, *axes):
    if len(axes) == 1:
        axes = axes[0]
    return {"a": a, "axes": axes if axes != () else Const(None)}


@defop("transpose", lambda named: "a.T" if is_none(named["axes"]) else "np.transpose(a, axes)",
       aliases=(np.transpose,), methods=(("transpose", _transpose_method),), attributes=("T",),
       diff=("a",), fresh=False, zeros="first", recompute="always", sympy=lambda a, axes: np.transpose(objects(a), axes), jvp="linear")
def transpose(a, axes=None): ...


@transpose.defvjp
def _(g, ans, a, axes):
    return np.transpose(g, runtime.inverse_permutation(axes))


@transpose.defrewrite
def _(rewrite, node, a, axes):
    """``np.transpose(np.transpose(x, p), q)`` is one transpose, or ``x`` itself."""
    inner = produced_by(a, transpose)
    if inner is None:
        return None
    source, first = inner.args
    order = _composed(_permutation(first), _permutation(axes))
    if order is None:
        return None
    # ``x.T`` needs an ndarray (or a NumPy scalar): after it, ``x.T.T`` is x, and
    # x.T is x's reversed order. np.transpose(x, axes) also takes a list, and
    # gives an array: that x is only known to be np.asarray(x).
    known_array = is_none(first)
    if order == tuple(range(len(order))) or order == ():
        return source if known_array else rewrite.emit(OPS["asarray"], source)
    reverse = known_array and order == tuple(range(len(order) - 1, -1, -1))
    return rewrite.emit(transpose, source, Const(None if reverse else order))


_REVERSED = "reversed"  # np.transpose's default order, whatever the number of axes


def _permutation(axes):
    """``_REVERSED`` for the default order, the axes as a tuple, or None if unknown."""
    return _REVERSED if is_none(axes) else constant_tuple(axes)


def _composed(first, second) -> tuple | None:
    """The axes of ``np.transpose(np.transpose(x, first), second)`` as one transpose.

    The result's axis ``i`` is the first transpose's axis ``second[i]``, which is
    ``x``'s axis ``first[second[i]]``. None when the rank is unknown or an order
    is not a permutation (then the error is NumPy's, at run time).
    """
    if first is None or second is None:
        return None
    if first is _REVERSED and second is _REVERSED:
        return ()  # the identity, of any rank
    rank = len(second if first is _REVERSED else first)
    first, second = (tuple(range(rank - 1, -1, -1)) if p is _REVERSED else p
                     for p in (first, second))
    if len(first) != rank or len(second) != rank:
        return None
    first, second = (tuple(k + rank if -rank <= k < 0 else k for k in p)
                     for p in (first, second))
    if sorted(first) != list(range(rank)) or sorted(second) != list(range(rank)):
        return None
    return tuple(first[k] for k in second)


@defop("swapaxes", "np.swapaxes(a, axis1, axis2)", aliases=(np.swapaxes,), methods=("swapaxes",),
       diff=("a",), fresh=False, zeros="first", recompute="always", sympy=lambda a, axis1, axis2: np.swapaxes(objects(a), axis1, axis2), jvp="linear")
def swapaxes(a, axis1, axis2): ...


@swapaxes.defvjp
def _(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@defop("moveaxis", "np.moveaxis(a, source, destination)", aliases=(np.moveaxis,), diff=("a",),
       fresh=False, zeros="first", recompute="always", sympy=lambda a, source, destination: np.moveaxis(objects(a), source, destination), jvp="linear")
def moveaxis(a, source, destination): ...


@moveaxis.defvjp
def _(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


@defop("broadcast_to", "np.broadcast_to(array, shape)", aliases=(np.broadcast_to,),
       diff=("array",), fresh=False, shape=shape_given_by("shape"), zeros="first", sympy=lambda array, shape: np.broadcast_to(objects(array), shape), jvp="linear")
def broadcast_to(array, shape): ...


@broadcast_to.defvjp
def _(g, ans, array, shape):
    return runtime.unbroadcast(g, array)


@broadcast_to.defspecialize
def _(rewrite, array, shape):
    return array if rewrite.like_result(array) else None


@defop("concatenate", "np.concatenate(arrays, axis=axis)", aliases=(np.concatenate,),
       diff=("arrays",), sympy=lambda arrays, axis: np.concatenate([objects(a) for a in arrays], axis=axis), jvp="linear")
def concatenate(arrays, axis=0): ...


@concatenate.defvjp
def _(g, ans, arrays, axis):
    return runtime.split_like(g, arrays, axis)


# One tangent per array, a zero one for an array that does not vary.
@defop("stack", "np.stack(arrays, axis=axis)", aliases=(np.stack,), diff=("arrays",), sympy=lambda arrays, axis: np.stack([objects(a) for a in arrays], axis=axis), ndarray=True, jvp="linear")
def stack(arrays, axis=0): ...


@stack.defvjp
def _(g, ans, arrays, axis):
    return runtime.unstack(g, axis)


# np.array of a list built as the function runs: np.array([]) of an empty one, as in NumPy
# (np.stack refuses it), and faster than np.stack on a list of small arrays.
@defop("array_of_list", "np.array(items)", diff=("items",), sympy=lambda items: np.stack([objects(a) for a in items]) if items else np.array([]), jvp="linear")
def array_of_list(items): ...


@array_of_list.defvjp
def _(g, ans, items):
    return runtime.unstack(g, 0)


def _array_call(object, dtype=None):
    if isinstance(object, tuple) or getattr(object, "shape", None) is LIST:
        if dtype is not None and not is_none(dtype):
            raise TypeError("dtype is not supported when building an array from a list")
        if isinstance(object, tuple):  # a list written out: np.stack, which numba compiles
            return OPS["stack"], {"arrays": object}
        return OPS["array_of_list"], {"items": object}
    return OPS["array"], {"a": object, "dtype": dtype if dtype is not None else Const(None)}


@defop("array", "np.array(a, dtype=dtype)", aliases=((np.array, _array_call),),
       methods=("copy",), diff=("a",), shape=shape_like("a"), sympy=cast, ndarray=True)
def array(a, dtype=None): ...


@array.defvjp
def _(g, ans, a, dtype):
    return g


@array.defjvp
def _(t, ans, a, dtype):
    return t


# A cast to integers or booleans is piecewise constant, like np.floor: written as an op
# of its own that passes no gradient. A dtype known only at run time has no gradient.


def _discrete(dtype) -> bool | None:
    """Whether the constant ``dtype`` holds no fractions (ints, bools); None if unknown."""
    if not isinstance(dtype, Const) or dtype.value is None:
        return None if not isinstance(dtype, Const) else False
    try:
        return np.dtype(dtype.value).kind not in "fc"
    except TypeError:
        return None


def _discrete_cast(name: str):
    def simplify(named, builder):
        if _discrete(named["dtype"]):
            return builder.emit(OPS[name], (named["a"], named["dtype"]))
        return None
    return simplify


def _cast_check(named) -> str | None:
    if _discrete(named["dtype"]) is None:
        return "a cast to a dtype known only at run time has no gradient: give the dtype itself"
    return None


_DISCRETE = "a cast to integers or booleans (SymPy computes with real numbers)"


@defop("astype_discrete", "a.astype(dtype)", nondiff_output=True, shape=shape_like("a"), floating=None,
       no_gradient="a cast to integers or booleans: " + STEPS, no_sympy=_DISCRETE)
def astype_discrete(a, dtype): ...


@defop("array_discrete", "np.array(a, dtype=dtype)", nondiff_output=True, shape=shape_like("a"),
       floating=None, no_gradient="a cast to integers or booleans: " + STEPS, no_sympy=_DISCRETE)
def array_discrete(a, dtype): ...


array.simplify = _discrete_cast("array_discrete")
array.vjp_check = _cast_check


@defop("astype", "a.astype(dtype)", methods=("astype",), diff=("a",), shape=shape_like("a"),
       floating=None, simplify=_discrete_cast("astype_discrete"), sympy=cast)
def astype(a, dtype): ...


astype.vjp_check = _cast_check


@astype.defvjp
def _(g, ans, a, dtype):
    return g


@astype.defjvp
def _(t, ans, a, dtype):
    return t


def _asarray_call(a, dtype=None):
    if dtype is None or isinstance(dtype, Const) and dtype.value is None:
        return OPS["asarray"], {"a": a}
    return OPS["asarray_cast"], {"a": a, "dtype": dtype}


@defop("asarray", "np.asarray(a)", aliases=((np.asarray, _asarray_call),
                                            (np.asanyarray, _asarray_call)), diff=("a",),
       shape=shape_like("a"), fresh=False, sympy=lambda a: a, ndarray=True, jvp="same")
def asarray(a): ...


@asarray.defvjp
def _(g, ans, a):
    return g


# np.asarray(x, dtype=float): x itself when it has that dtype (never a fresh array), else
# a cast; to integers or booleans, a cast with no gradient.
@defop("asarray_cast", "np.asarray(a, dtype=dtype)", diff=("a",), shape=shape_like("a"),
       fresh=False, floating=None, ndarray=True, simplify=_discrete_cast("asarray_discrete"),
       sympy=cast)
def asarray_cast(a, dtype): ...


asarray_cast.vjp_check = _cast_check


@asarray_cast.defvjp
def _(g, ans, a, dtype):
    return g


@asarray_cast.defjvp
def _(t, ans, a, dtype):
    return t


@defop("asarray_discrete", "np.asarray(a, dtype=dtype)", nondiff_output=True,
       shape=shape_like("a"), floating=None, no_gradient="a cast to integers or booleans: " + STEPS,
       no_sympy=_DISCRETE)
def asarray_discrete(a, dtype): ...


@defop("copy", "np.copy(a)", aliases=(np.copy,), diff=("a",), shape=shape_like("a"), zeros="first", jvp="same",
       sympy=lambda a: objects(a).copy())
def copy(a): ...


@copy.defvjp
def _(g, ans, a):
    return g


# A copy of a new array nothing else reads is that array (after optimising only:
# common subexpressions merged later could share it).
@copy.defspecialize(after_optimizing=True)
def _(rewrite, a):
    return a if rewrite.final and rewrite.unshared(a) else None


@defop("float", "float(x)", aliases=(builtins.float,), diff=("x",), shape=scalar_result,
       floating="always", impl=builtins.float, sympy=lambda x: x.item() if isinstance(x, np.ndarray) else x, jvp="linear")
def float_(x): ...


@float_.defvjp
def _(g, ans, x):
    return g


# ----- np.r_[...] and np.c_[...]: concatenations written as indexing -----


@defop("r_", "np.r_[items]", diff=("items",), sympy=lambda items: np.r_[items])
def r_(items): ...


@defop("c_", "np.c_[items]", diff=("items",), sympy=lambda items: np.c_[items])
def c_(items): ...


@r_.defvjp
def _(g, ans, items):
    return runtime.index_concatenation_grads(g, items, "r")


@r_.defjvp
def _(t, ans, items):
    return runtime.index_concatenation_tangent(t, items, "r")


@c_.defvjp
def _(g, ans, items):
    return runtime.index_concatenation_grads(g, items, "c")


@c_.defjvp
def _(t, ans, items):
    return runtime.index_concatenation_tangent(t, items, "c")


def _concatenation_by_index(named, builder):
    """``np.r_[a, b]`` and ``np.c_[a, b]`` as the ops r_ and c_, which have rules."""
    base = named["a"]
    if not isinstance(base, Const) or not (base.value is np.r_ or base.value is np.c_):
        return None
    kind = "r_" if base.value is np.r_ else "c_"
    index = named["index"]
    items = index if isinstance(index, tuple) else (index,)
    if items and isinstance(items[0], Const) and isinstance(items[0].value, str):
        directive = items[0].value
        if not all(part.strip().lstrip("-").isdigit() for part in directive.split(",")):
            raise AutodiffError(
                f"np.{kind}[{directive!r}, ...] builds a matrix or reads a directive that "
                "differentiated code does not support", **Location.error_fields(builder.loc),
                hint="give np.concatenate (or np.stack) the arrays")
    if any(isinstance(item, Const) and isinstance(item.value, str) for item in items[1:]):
        raise AutodiffError(f"np.{kind}[...] takes a directive string only first",
                            **Location.error_fields(builder.loc))
    return builder.emit(OPS[kind], (items,))


# ----- indexing -----


def _is_mask(operand) -> bool:
    """Whether ``operand`` is an array of truth values (``~np.isnan(y)``, ``x > 0``)."""
    node = operand.node if isinstance(operand, Value) else None
    if not isinstance(node, Node):  # an argument, or a region's result
        return False
    if node.op.truth_values == "operands":
        return all(_is_mask(arg) for arg in node.args)
    return node.op.truth_values is True


# A mask's gradient is zero where the mask is false, where the value may be NaN (the
# entries r[~np.isnan(y)] skips): zeros kept through the rules after it.
@defop("getitem", "a[index]", diff=("a",), fresh=False, shape=indexed,
       simplify=_concatenation_by_index, zeros="first",
       gradients_keep_zeros=lambda named: _is_mask(named["index"]), recompute="always",
       sympy=lambda a, index: a[sympy_index(index)], jvp="linear")
def getitem(a, index): ...


getitem.piecewise_params = ("index",)  # integers: a float index's gradient is zero


@getitem.defvjp
def _(g, ans, a, index):
    return runtime_index_add(np.zeros_like(a, dtype=runtime.adjoint_dtype(g, a)), index, g)


def _index_add_statement(named) -> str:
    # Basic indices select each element once: a plain in-place add is exact.
    # Anything known only at run time may hold repeats and needs np.add.at,
    # except integers (a loop index): they select one element.
    if is_basic_index(named["index"]):
        return "base[index] += value"
    return "np.add.at(base, index, value)"


@defop("index_add", None, diff=("base", "value"), shape=shape_like("base"), inplace=_index_add_statement)
def index_add(base, index, value): ...


def runtime_index_add(base, index, value):
    """``base`` with ``value`` added at ``index`` (functional form of ``base[index] += value``)."""
    out = np.array(base)
    np.add.at(out, index, value)
    return out


alias(runtime_index_add, index_add)
index_add.inplace_copy = "np.array(base)"


# The adjoint of getitem: forward mode over a gradient (ad.hvp) needs its tangent.
@index_add.defjvp("base")
def _(t, ans, base, index, value):
    return t


@index_add.defjvp("value")
def _(t, ans, base, index, value):
    return runtime_index_add(np.zeros_like(ans, dtype=runtime.adjoint_dtype(t, ans)), index, t)


# Reverse over a gradient (grad of grad): the adjoint of value gathers, as x[index] does.
@index_add.defvjp
def _(g, ans, base, index, value):
    return g, runtime.unbroadcast(g[index], value)

# ----- shape queries (no gradient) -----


QUERY = "a query of the shape or dtype, not of the values"


def _query(name: str, kernel: str, *aliases, attributes=(), shape=None, of_shape=True,
           of_scalar=None, answer=None, **facts):
    """A query of ``a``'s shape (``of_shape``, then cheap to recompute) or its dtype;
    ``of_scalar``, its result for a value known to be 0-d, read without the value;
    ``answer``, what a call signature answers it with (``Op.signature_answer``)."""
    shaped = {"shape_params": ("a",), "recompute": "always"} if of_shape else {}
    op = defop(name, kernel, aliases=aliases, attributes=attributes, nondiff_output=True,
               floating=None, shape=shape, no_gradient=QUERY, query=True, **shaped, **facts)(
        lambda a: None)
    if of_scalar is not None:
        op.defrewrite(lambda rewrite, node, a: Const(of_scalar) if token_of(a) is SCALAR else None)
    op.signature_answer = answer
    return op


shape_query = _query("shape", "np.shape(a)", np.shape, attributes=("shape",), of_scalar=(),
                     answer="sizes", sympy=sympy_forms.shape_of)
# The same query as the shape a loop tapes at each step: cheap on a Python float.
shape_of_query = _query("shape_of", "shape_of(a)", runtime.shape_of, of_scalar=(),
                        answer="sizes", sympy=sympy_forms.shape_of)
shape_of_query.runtime = {"shape_of": runtime.shape_of}
shape_of_query.outside_tables = "written by transforms/control.py for a shape a loop tapes"


# ----- a scalar adjoint spread over an array takes the array's dtype -----
#
# In derivative code, np.broadcast_to(s, np.shape(a)) and np.reshape(s, np.shape(a)) of a
# scalar s (the seed 1.0 is a Python float, which NumPy makes a float64 array) are
# broadcast_like(s, a), which gives a Python number a's floating dtype: a float32
# array's adjoint stays float32 rather than promoting everything it meets to float64.
# (Only where np.shape(a) is read in derivative code too: a is alive there anyway. The
# optimiser reads a shape from the first value of that shape, which the spread then
# takes the dtype of: a's own unless an earlier one of another dtype has its shape.)


@broadcast_to.defrewrite
def _spread_scalar_like(rewrite, node, array, shape):
    if node.phase == "forward":
        return None
    query = produced_by(shape, shape_query)
    if query is None or query.phase == "forward":
        return None
    inner = produced_by(array, expand_dims) or produced_by(array, reshape)
    if inner is not None and is_scalar(inner.args[0]):
        array = inner.args[0]  # np.expand_dims(s, 0), a 1-D reduction's adjoint
    if not is_scalar(array):
        return None
    return rewrite.emit(OPS["broadcast_like"], array, query.args[0])


@reshape.defrewrite
def _(rewrite, node, a, shape, order):
    return _spread_scalar_like(rewrite, node, a, shape)  # (any order reads one element)


_query("ndim", "np.ndim(a)", np.ndim, attributes=("ndim",), shape=scalar_result, of_scalar=0,
       answer="rank", sympy=np.ndim)
size_query = _query("size", "np.size(a)", np.size, attributes=("size",), shape=scalar_result,
                    of_scalar=1, sympy=np.size)
_query("len", "len(a)", builtins.len, shape=scalar_result, sympy=builtins.len)
# ``x.dtype`` reads as ``np.result_type(x)``, which a Python number answers too (the
# specialised code of ``jit=True`` may hold a 0-d value as one).
_query("result_type", "np.result_type(a)", np.result_type, attributes=("dtype",),
       of_shape=False, answer="dtype", sympy=lambda a: np.dtype(float))
_query("itemsize", "np.result_type(a).itemsize", attributes=("itemsize",), of_shape=False,
       shape=scalar_result, answer="itemsize", sympy=lambda a: 8)


# ``type(x)`` of a value known when the code runs (an array, a float), and ``type(x) is
# np.ndarray`` and ``isinstance(x, float)``, tested then (``type(3.0)`` is folded while compiling). Not queries:
# specialised code keys on shapes and dtypes, which a float64 scalar and a Python float
# share.
_NO_KIND = "SymPy's symbols have no kind of NumPy's or Python's"


@defop("type_of", "type(a)", aliases=(builtins.type,), nondiff_output=True, floating=None,
       no_gradient="the kind of a value", no_sympy=_NO_KIND)
def type_of(a): ...


@defop("type_is", lambda named: "type(a) is not kind" if named["negated"].value
       else "type(a) is kind", nondiff_output=True, floating=None, shape=scalar_result,
       no_gradient="a test of a value's kind", no_sympy=_NO_KIND)
def type_is(a, kind, negated=False): ...


@defop("is_instance", "isinstance(a, kind)", aliases=(builtins.isinstance,),
       nondiff_output=True, floating=None, shape=scalar_result,
       no_gradient="a test of a value's kind", no_sympy=_NO_KIND)
def is_instance(a, kind): ...

# ----- constructors (no gradient) -----


def _constructor(name: str, stub, *aliases, shape=None, dtype_as_asked=False, **facts) -> Op:
    kernel = f"np.{name}(" + ", ".join(
        p if p in ("shape", "a", "N", "start", "stop", "fill_value") else f"{p}={p}"
        for p in stub.__code__.co_varnames[: stub.__code__.co_argcount]) + ")"
    facts = {"nondiff_output": True, **facts}
    op = defop(name, kernel, aliases=aliases, floating=None, shape=shape, **facts)(stub)
    op.dtype_as_asked = dtype_as_asked
    return op


CONSTANT = "a constant array: of the values it is given it reads only shapes and dtypes"

_constructor("zeros", lambda shape, dtype=None: None, np.zeros, shape=shape_given_by("shape"),
             no_gradient=CONSTANT, dtype_as_asked=True,
             sympy=lambda shape, dtype: np.zeros(shape, dtype=dtype))
_constructor("ones", lambda shape, dtype=None: None, np.ones, shape=shape_given_by("shape"),
             no_gradient=CONSTANT, dtype_as_asked=True,
             sympy=lambda shape, dtype: np.ones(shape, dtype=dtype))
zeros_like = _constructor("zeros_like", lambda a, dtype=None: None, np.zeros_like,
                          shape=shape_like("a"), no_gradient=CONSTANT, dtype_as_asked=True,
                          sympy=lambda a, dtype: np.zeros(np.shape(a), dtype=dtype))


# For one signature: the zero adjoint of a scalar is ``0.0``, not a 0-d array (a float
# on both sides of a branch, as numba needs); of a float64 array of known shape,
# ``np.zeros(shape)``, which no longer reads ``a``.
@zeros_like.defspecialize
def _(rewrite, a, dtype):
    if not is_none(dtype):
        return None
    if rewrite.is_number(a) and rewrite.kind(a) is not None and rewrite.dtype(a).kind == "f":
        return Const(0.0)
    shape = rewrite.array_shape(a)
    if shape is not None and rewrite.dtype(a) == np.float64:
        return rewrite.emit("zeros", Const(shape), Const(None))
    return None


_constructor("ones_like", lambda a, dtype=None: None, np.ones_like, shape=shape_like("a"),
             no_gradient=CONSTANT, dtype_as_asked=True,
             sympy=lambda a, dtype: np.ones(np.shape(a), dtype=dtype))
_constructor("eye", lambda N, M=None, k=0, dtype=float: None, np.eye,
             no_gradient=CONSTANT, sympy=lambda N, M, k, dtype: np.eye(N, M, k, dtype=dtype))
# Its elements are start + k * step: a gradient may well reach start or step. Until it has
# rules, one that does is an error.
_constructor("arange", lambda start, stop=None, step=None, dtype=None: None, np.arange,
             nondiff_output=False, diff=("start", "stop", "step"),
             no_gradient="np.arange has no gradient rule for start, stop or step: build the "
             "values from np.arange of constants, as start + step * np.arange(n)",
             sympy=lambda start, stop, step, dtype: np.arange(start, stop, step, dtype=dtype))

# np.full and np.full_like are linear in their fill value (broadcast to the result).
_constructor("full", lambda shape, fill_value, dtype=None: None, np.full, shape=shape_given_by("shape"),
             nondiff_output=False, diff=("fill_value",),
             sympy=lambda shape, fill_value, dtype: np.full(shape, fill_value, dtype=(
                 object if isinstance(fill_value, sp.Basic) else dtype)))
_constructor("full_like", lambda a, fill_value, dtype=None: None, np.full_like, shape=shape_like("a"),
             nondiff_output=False, diff=("fill_value",),
             sympy=lambda a, fill_value, dtype: np.full(np.shape(a), fill_value, dtype=(
                 object if isinstance(fill_value, sp.Basic) else dtype)))


def _full_check(named) -> str | None:
    dtype = named["dtype"]
    floating = isinstance(dtype, Const) and dtype.value is not None and np.dtype(
        dtype.value).kind in "fc"
    if floating or (isinstance(dtype, Const) and dtype.value is None and "shape" in named):
        return None  # np.full takes the fill value's dtype, a float's when it varies
    if "shape" in named:
        return "np.full with a dtype other than a floating one has no gradient"
    return ("np.full_like takes the dtype of its first argument, unknown when compiling: "
            "give dtype=float (or a floating dtype) to differentiate its fill value")


for _op in (OPS["full"], OPS["full_like"]):
    _op.vjp_check = _full_check
OPS["full_like"].kind_params = ("a",)  # its shape and dtype


@OPS["full"].defvjp
def _(g, ans, shape, fill_value, dtype):
    return runtime.unbroadcast(g, fill_value)


@OPS["full"].defjvp
def _(t, ans, shape, fill_value, dtype):
    return runtime.broadcast_like(t, ans)


@OPS["full_like"].defvjp
def _(g, ans, a, fill_value, dtype):
    return runtime.unbroadcast(g, fill_value)


@OPS["full_like"].defjvp
def _(t, ans, a, fill_value, dtype):
    return runtime.broadcast_like(t, ans)


# New arrays the code may fill in place: two of them are never the same array.
for _name in ("zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "eye", "arange"):
    OPS[_name].distinct = True


# ----- np.linspace: linear in its endpoints -----


@defop("linspace", "np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)",
       aliases=(np.linspace,), diff=("start", "stop"), floating="always", sympy=lambda start, stop, num, endpoint, dtype, axis: np.linspace(
           start, stop, num, endpoint, dtype=dtype, axis=axis))
def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0): ...


linspace.distinct = True


def _linspace_check(named) -> str | None:
    dtype = named["dtype"]
    if isinstance(dtype, Const) and (dtype.value is None or np.dtype(dtype.value).kind in "fc"):
        return None
    return "np.linspace with a dtype other than a floating one has no gradient"


linspace.vjp_check = _linspace_check


# ans = start * (1 - f) + stop * f, with the fractions f = 0 ... 1 along axis.
@linspace.defvjp
def _(g, ans, start, stop, num, endpoint, dtype, axis):
    return runtime.linspace_grads(g, start, stop, num, endpoint, axis)


@linspace.defjvp("start")
def _(t, ans, start, stop, num, endpoint, dtype, axis):
    return np.linspace(t, np.zeros(np.shape(stop)), num, endpoint=endpoint, axis=axis)


@linspace.defjvp("stop")
def _(t, ans, start, stop, num, endpoint, dtype, axis):
    return np.linspace(np.zeros(np.shape(start)), t, num, endpoint=endpoint, axis=axis)


# ----- repeating, rolling, flipping, rotating: each linear, each moving or summing elements -----


def _linear_helper(fn, params: str, **facts) -> Op:
    """The runtime helper ``fn``, linear in its first parameter (an adjoint), as an op
    rules can call: its JVP is itself applied to the tangent, its VJP the op it is
    the transpose of (given in each block)."""
    return helper_op(fn, params=[p.strip() for p in params.split(",")], diff=("g",),
                     fresh=False, zeros="first", jvp="linear", **facts)


# Element i of a repeated along an axis has its copies side by side: it receives the
# sum of their adjoints (none when repeated zero times).
@defop("repeat", "np.repeat(a, repeats, axis=axis)", aliases=(np.repeat,), methods=("repeat",),
       diff=("a",), zeros="first", jvp="linear",
       sympy=lambda a, repeats, axis: np.repeat(objects(a), repeats, axis=axis))
def repeat(a, repeats, axis=None): ...


@repeat.defvjp
def _(g, ans, a, repeats, axis):
    return runtime.repeat_sum(g, a, repeats, axis)


repeat_sum = _linear_helper(runtime.repeat_sum, "g, a, repeats, axis", shape=shape_like("a"))


@repeat_sum.defvjp
def _(gg, ans, g, a, repeats, axis):
    return np.repeat(gg, repeats, axis=axis)


@defop("tile", "np.tile(A, reps)", aliases=(np.tile,), diff=("A",), zeros="first", jvp="linear",
       sympy=lambda A, reps: np.tile(objects(A), reps))
def tile(A, reps): ...


@tile.defvjp
def _(g, ans, A, reps):
    return runtime.tile_sum(g, A, reps)


tile_sum = _linear_helper(runtime.tile_sum, "g, a, reps", shape=shape_like("a"))


@tile_sum.defvjp
def _(gg, ans, g, a, reps):
    return np.tile(gg, reps)


# A roll moves each element: the adjoint rolls back by the opposite shift (a tuple of
# shifts, one per axis, as an array of their opposites, which np.roll takes).
@defop("roll", "np.roll(a, shift, axis=axis)", aliases=(np.roll,), diff=("a",),
       shape=shape_like("a"), zeros="first", jvp="linear",
       sympy=lambda a, shift, axis: np.roll(objects(a), shift, axis=axis))
def roll(a, shift, axis=None): ...


@roll.defvjp
def _(g, ans, a, shift, axis):
    return np.roll(g, np.negative(np.asarray(shift)), axis=axis)


@defop("flipud", "np.flipud(m)", aliases=(np.flipud,), diff=("m",), fresh=False,
       shape=shape_like("m"), zeros="first", recompute="always", jvp="linear",
       sympy=lambda m: np.flipud(objects(m)))
def flipud(m): ...


@flipud.defvjp
def _(g, ans, m):
    return np.flipud(g)


@defop("fliplr", "np.fliplr(m)", aliases=(np.fliplr,), diff=("m",), fresh=False,
       shape=shape_like("m"), zeros="first", recompute="always", jvp="linear",
       sympy=lambda m: np.fliplr(objects(m)))
def fliplr(m): ...


@fliplr.defvjp
def _(g, ans, m):
    return np.fliplr(g)


# A rotation by k quarter turns is undone by -k of them, in the same plane.
@defop("rot90", "np.rot90(m, k=k, axes=axes)", aliases=(np.rot90,), diff=("m",), fresh=False,
       zeros="first", recompute="always", jvp="linear",
       sympy=lambda m, k, axes: np.rot90(objects(m), k, axes))
def rot90(m, k=1, axes=(0, 1)): ...


@rot90.defvjp
def _(g, ans, m, k, axes):
    return np.rot90(g, np.negative(k), axes)


# ----- triangles and diagonals -----

# A vector is taken as every row of a square matrix: its adjoint sums the rows.


@defop("triu", "np.triu(m, k=k)", aliases=(np.triu,), diff=("m",), zeros="first", jvp="linear", sympy=lambda m, k: np.triu(objects(m), k=k))
def triu(m, k=0): ...


@triu.defvjp
def _(g, ans, m, k):
    return runtime.unbroadcast(np.triu(g, k=k), m)


@defop("tril", "np.tril(m, k=k)", aliases=(np.tril,), diff=("m",), zeros="first", jvp="linear", sympy=lambda m, k: np.tril(objects(m), k=k))
def tril(m, k=0): ...


@tril.defvjp
def _(g, ans, m, k):
    return runtime.unbroadcast(np.tril(g, k=k), m)


# The elements of a diagonal are elements of the matrix: each receives its adjoint
# there, zeros elsewhere; a matrix built from a vector gives the vector its diagonal.
@defop("diag", "np.diag(v, k=k)", aliases=(np.diag,), diff=("v",), zeros="first", jvp="linear",
       sympy=lambda v, k: np.diag(objects(v), k=k))
def diag(v, k=0): ...


@diag.defvjp
def _(g, ans, v, k):
    return runtime.diag_grad(g, v, k)


diag_grad = _linear_helper(runtime.diag_grad, "g, v, k", shape=shape_like("v"))


@diag_grad.defvjp
def _(gg, ans, g, v, k):
    return np.diag(gg, k=k)


@defop("diagonal", "np.diagonal(a, offset=offset, axis1=axis1, axis2=axis2)",
       aliases=(np.diagonal,), methods=("diagonal",), diff=("a",), fresh=False, zeros="first",
       jvp="linear", sympy=lambda a, offset, axis1, axis2: np.diagonal(objects(a), offset, axis1,
                                                                       axis2))
def diagonal(a, offset=0, axis1=0, axis2=1): ...


@diagonal.defvjp
def _(g, ans, a, offset, axis1, axis2):
    return runtime.diagonal_grad(g, a, offset, axis1, axis2)


diagonal_grad = _linear_helper(runtime.diagonal_grad, "g, a, offset, axis1, axis2",
                               shape=shape_like("a"))


@diagonal_grad.defvjp
def _(gg, ans, g, a, offset, axis1, axis2):
    return np.diagonal(gg, offset=offset, axis1=axis1, axis2=axis2)


@defop("diagflat", "np.diagflat(v, k=k)", aliases=(np.diagflat,), diff=("v",), zeros="first",
       jvp="linear", sympy=lambda v, k: np.diagflat(objects(v), k=k))
def diagflat(v, k=0): ...


@diagflat.defvjp
def _(g, ans, v, k):
    return np.reshape(np.diag(g, k=k), np.shape(v))


# ----- stacks: np.concatenate of the arrays each given a rank first -----
# Each array's adjoint is its piece of the result's, in its own shape; one tangent per
# array (a zero one for an array that does not vary), as for np.concatenate.


def _stacking(kind: str) -> Op:
    return defop(kind, f"np.{kind}(tup)", aliases=(getattr(np, kind),), diff=("tup",),
                 jvp="linear", sympy=lambda tup: getattr(np, kind)([objects(a) for a in tup]))(
        lambda tup: None)


vstack, hstack, dstack, column_stack = (_stacking(kind) for kind in (
    "vstack", "hstack", "dstack", "column_stack"))


# np.row_stack, deprecated in NumPy 2, is np.vstack under another name.
if hasattr(np, "row_stack"):
    alias(np.row_stack, vstack)


@vstack.defvjp
def _(g, ans, tup):
    return runtime.split_stacked(g, tup, "vstack")


@hstack.defvjp
def _(g, ans, tup):
    return runtime.split_stacked(g, tup, "hstack")


@dstack.defvjp
def _(g, ans, tup):
    return runtime.split_stacked(g, tup, "dstack")


@column_stack.defvjp
def _(g, ans, tup):
    return runtime.split_stacked(g, tup, "column_stack")
split_stacked = helper_op(runtime.split_stacked, diff=("g",), shape=list_result, fresh=False,
                          jvp="linear")


# Transposed, cutting the adjoint is joining the pieces again.
@split_stacked.defvjp
def _(gg, ans, g, arrays, kind):
    if kind == "vstack":
        return np.vstack(gg)
    if kind == "hstack":
        return np.hstack(gg)
    if kind == "dstack":
        return np.dstack(gg)
    return np.column_stack(gg)


# ----- ranks and axis orders -----


def _at_least(rank: int) -> Op:
    name = f"atleast_{rank}d"
    op = defop(name, f"np.{name}(a)", aliases=(getattr(np, name),), diff=("a",), fresh=False,
               zeros="first", recompute="always", jvp="linear",
               sympy=lambda a: getattr(np, name)(objects(a)))(lambda a: None)
    op.defvjp(lambda g, ans, a: np.reshape(g, np.shape(a)))
    return op


atleast_1d, atleast_2d, atleast_3d = (_at_least(rank) for rank in (1, 2, 3))


@defop("rollaxis", "np.rollaxis(a, axis, start=start)", aliases=(np.rollaxis,), diff=("a",),
       fresh=False, zeros="first", recompute="always", jvp="linear",
       sympy=lambda a, axis, start: np.rollaxis(objects(a), axis, start))
def rollaxis(a, axis, start=0): ...


@rollaxis.defvjp
def _(g, ans, a, axis, start):
    return np.transpose(g, runtime.rollaxis_inverse(a, axis, start))


helper_op(runtime.rollaxis_inverse, nondiff_output=True, floating=None, shape_params=("a",),
          recompute="always", no_gradient="axis numbers")


# ----- gathering: each element of a receives the adjoints of its copies (repeats add) -----


@defop("take", "np.take(a, indices, axis=axis)", aliases=(np.take,), methods=("take",),
       diff=("a",), zeros="first", jvp="linear",
       sympy=lambda a, indices, axis: np.take(objects(a), indices, axis=axis))
def take(a, indices, axis=None): ...


@take.defvjp
def _(g, ans, a, indices, axis):
    return runtime.take_grad(g, a, indices, axis)


take_grad = _linear_helper(runtime.take_grad, "g, a, indices, axis", shape=shape_like("a"))


@take_grad.defvjp
def _(gg, ans, g, a, indices, axis):
    return np.take(gg, indices, axis=axis)


@defop("take_along_axis", "np.take_along_axis(arr, indices, axis=axis)",
       aliases=(np.take_along_axis,), diff=("arr",), zeros="first", jvp="linear",
       sympy=lambda arr, indices, axis: np.take_along_axis(objects(arr), indices, axis=axis))
def take_along_axis(arr, indices, axis=-1): ...


@take_along_axis.defvjp
def _(g, ans, arr, indices, axis):
    return runtime.take_along_axis_grad(g, arr, indices, axis)


take_along_axis_grad = _linear_helper(runtime.take_along_axis_grad, "g, arr, indices, axis",
                                      shape=shape_like("arr"))


@take_along_axis_grad.defvjp
def _(gg, ans, g, arr, indices, axis):
    return np.take_along_axis(gg, indices, axis=axis)


# ----- products that arrange their factors: kron, cross, tensordot -----
# Bilinear: the JVP of one factor is the product with its tangent. Each adjoint helper
# is linear in g and in the other factor, and its VJP is the product again (for g)
# and the other factor's adjoint (for that factor), as for matmul's helpers.


@defop("kron", "np.kron(a, b)", aliases=(np.kron,), diff=("a", "b"), jvp="linear",
       sympy=lambda a, b: np.kron(objects(a), objects(b)))
def kron(a, b): ...


@kron.defvjp
def _(g, ans, a, b):
    return runtime.kron_grad_lhs(g, a, b), runtime.kron_grad_rhs(g, a, b)


kron_grad_lhs = helper_op(runtime.kron_grad_lhs, diff=("g", "b"), shape=shape_like("a"),
                          jvp="linear")
kron_grad_rhs = helper_op(runtime.kron_grad_rhs, diff=("g", "a"), shape=shape_like("b"),
                          jvp="linear")


@kron_grad_lhs.defvjp
def _(gg, ans, g, a, b):
    return np.kron(gg, b), runtime.kron_grad_rhs(g, gg, b)


@kron_grad_rhs.defvjp
def _(gg, ans, g, a, b):
    return np.kron(a, gg), runtime.kron_grad_lhs(g, a, gg)


# <g, a x b> = <a, b x g> = <b, g x a>, broadcasting summed back; vectors of 2 are
# vectors of 3 with a zero third component (two of them give the third of theirs).
@defop("cross", "np.cross(a, b, axis=axis)", aliases=(np.cross,), diff=("a", "b"), jvp="linear",
       sympy=lambda a, b, axis: np.cross(objects(a), objects(b), axis=axis))
def cross(a, b, axis=None): ...


@cross.defvjp
def _(g, ans, a, b, axis):
    return runtime.cross_grad_lhs(g, a, b, axis), runtime.cross_grad_rhs(g, a, b, axis)


cross_grad_lhs = helper_op(runtime.cross_grad_lhs, diff=("g", "b"), shape=shape_like("a"),
                           jvp="linear")
cross_grad_rhs = helper_op(runtime.cross_grad_rhs, diff=("g", "a"), shape=shape_like("b"),
                           jvp="linear")


@cross_grad_lhs.defvjp
def _(gg, ans, g, a, b, axis):
    return np.cross(gg, b, axis=axis), runtime.cross_grad_rhs(g, gg, b, axis)


@cross_grad_rhs.defvjp
def _(gg, ans, g, a, b, axis):
    return np.cross(a, gg, axis=axis), runtime.cross_grad_lhs(g, a, gg, axis)


@defop("tensordot", "np.tensordot(a, b, axes=axes)", aliases=(np.tensordot,), diff=("a", "b"),
       jvp="linear", sympy=lambda a, b, axes: np.tensordot(objects(a), objects(b), axes=axes))
def tensordot(a, b, axes=2): ...


@tensordot.defvjp
def _(g, ans, a, b, axes):
    return runtime.tensordot_grad_lhs(g, a, b, axes), runtime.tensordot_grad_rhs(g, a, b, axes)


tensordot_grad_lhs = helper_op(runtime.tensordot_grad_lhs, diff=("g", "b"),
                               shape=shape_like("a"), jvp="linear")
tensordot_grad_rhs = helper_op(runtime.tensordot_grad_rhs, diff=("g", "a"),
                               shape=shape_like("b"), jvp="linear")


@tensordot_grad_lhs.defvjp
def _(gg, ans, g, a, b, axes):
    return np.tensordot(gg, b, axes=axes), runtime.tensordot_grad_rhs(g, gg, b, axes)


@tensordot_grad_rhs.defvjp
def _(gg, ans, g, a, b, axes):
    return np.tensordot(a, gg, axes=axes), runtime.tensordot_grad_lhs(g, a, gg, axes)


# ----- np.append and np.pad -----


# np.concatenate of the two (flattened first when no axis is given): the adjoint cut
# where arr ends. Linear in both together, not in each: a tangent's part is appended
# to zeros of the other's shape.
@defop("append", "np.append(arr, values, axis=axis)", aliases=(np.append,),
       diff=("arr", "values"),
       sympy=lambda arr, values, axis: np.append(objects(arr), objects(values), axis=axis))
def append(arr, values, axis=None): ...


@append.defvjp
def _(g, ans, arr, values, axis):
    if axis is None:
        n = np.size(arr)
        return np.reshape(g[:n], np.shape(arr)), np.reshape(g[n:], np.shape(values))
    n = np.shape(arr)[axis]
    moved = np.moveaxis(g, axis, 0)
    return np.moveaxis(moved[:n], 0, axis), np.moveaxis(moved[n:], 0, axis)


@append.defjvp("arr")
def _(t, ans, arr, values, axis):
    return np.append(t, np.zeros(np.shape(values)), axis=axis)


@append.defjvp("values")
def _(t, ans, arr, values, axis):
    return np.append(np.zeros(np.shape(arr)), t, axis=axis)


_COPYING_PADS = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_check(named) -> str | None:
    mode = named["mode"]
    if isinstance(mode, Const) and mode.value in _COPYING_PADS:
        return None
    return ("np.pad is differentiated for the modes that copy elements or fill constants "
            f"({', '.join(map(repr, _COPYING_PADS))}), given as a constant string")


def _sympy_pad(array, pad_width, mode, constant_values):
    filled = {"constant_values": constant_values} if mode == "constant" else {}
    return np.pad(objects(array), pad_width, mode=mode, **filled)


# Linear in the array and in the constant values, separately (a padded element is one
# or the other): each element of the array receives the adjoints of its copies, each
# constant value those of the elements it fills.
@defop("pad", "np.pad(array, pad_width, mode=mode, constant_values=constant_values)",
       aliases=(np.pad,), diff=("array", "constant_values"), zeros="first", sympy=_sympy_pad)
def pad(array, pad_width, mode="constant", constant_values=0): ...


pad.vjp_check = _pad_check


@pad.defvjp
def _(g, ans, array, pad_width, mode, constant_values):
    return (runtime.pad_grad(g, array, pad_width, mode),
            runtime.pad_fill_grad(g, array, pad_width, mode, constant_values))


@pad.defjvp("array")
def _(t, ans, array, pad_width, mode, constant_values):
    return np.pad(t, pad_width, mode=mode)


@pad.defjvp("constant_values")
def _(t, ans, array, pad_width, mode, constant_values):
    return np.pad(np.zeros(np.shape(array)), pad_width, mode="constant", constant_values=t)


pad_grad = _linear_helper(runtime.pad_grad, "g, array, pad_width, mode", shape=shape_like("array"))
pad_fill_grad = _linear_helper(runtime.pad_fill_grad,
                               "g, array, pad_width, mode, constant_values",
                               shape=shape_like("constant_values"))


@pad_grad.defvjp
def _(gg, ans, g, array, pad_width, mode):
    return np.pad(gg, pad_width, mode=mode)


@pad_fill_grad.defvjp
def _(gg, ans, g, array, pad_width, mode, constant_values):
    if mode != "constant":
        return np.zeros(np.shape(g))
    return np.pad(np.zeros(np.shape(array)), pad_width, mode="constant", constant_values=gg)


# ----- splits: a list of pieces -----
# The result is a list (unpacked, indexed or looped over as the user's code does); its
# adjoint is one per piece, zeros for a piece nothing reads, each added back where its
# piece was cut from (indices that do not increase cut overlapping pieces).


@defop("split", "np.split(ary, indices_or_sections, axis=axis)", aliases=(np.split,),
       diff=("ary",), shape=list_result, fresh=False, jvp="linear",
       sympy=lambda ary, indices_or_sections, axis: np.split(objects(ary), indices_or_sections,
                                                             axis=axis))
def split(ary, indices_or_sections, axis=0): ...


@split.defvjp
def _(g, ans, ary, indices_or_sections, axis):
    return runtime.split_grad(g, ary, indices_or_sections, axis)


split_grad = _linear_helper(runtime.split_grad, "g, ary, indices_or_sections, axis",
                            shape=shape_like("ary"))


@split_grad.defvjp
def _(gg, ans, g, ary, indices_or_sections, axis):
    if axis is None:
        return np.hsplit(gg, indices_or_sections)
    return np.array_split(gg, indices_or_sections, axis=axis)


@defop("array_split", "np.array_split(ary, indices_or_sections, axis=axis)",
       aliases=(np.array_split,), diff=("ary",), shape=list_result, fresh=False, jvp="linear",
       sympy=lambda ary, indices_or_sections, axis: np.array_split(
           objects(ary), indices_or_sections, axis=axis))
def array_split(ary, indices_or_sections, axis=0): ...


@array_split.defvjp
def _(g, ans, ary, indices_or_sections, axis):
    return runtime.split_grad(g, ary, indices_or_sections, axis)


# np.hsplit cuts along the axis np.hstack joins along (the first of a vector, else the
# second: split_grad's axis None), np.vsplit and np.dsplit along the first and third.
def _splitting(kind: str) -> Op:
    return defop(kind, f"np.{kind}(ary, indices_or_sections)", aliases=(getattr(np, kind),),
                 diff=("ary",), shape=list_result, fresh=False, jvp="linear",
                 sympy=lambda ary, indices_or_sections: getattr(np, kind)(objects(ary),
                                                                          indices_or_sections))(
        lambda ary, indices_or_sections: None)


hsplit, vsplit, dsplit = (_splitting(kind) for kind in ("hsplit", "vsplit", "dsplit"))


@hsplit.defvjp
def _(g, ans, ary, indices_or_sections):
    return runtime.split_grad(g, ary, indices_or_sections, None)


@vsplit.defvjp
def _(g, ans, ary, indices_or_sections):
    return runtime.split_grad(g, ary, indices_or_sections, 0)


@dsplit.defvjp
def _(g, ans, ary, indices_or_sections):
    return runtime.split_grad(g, ary, indices_or_sections, 2)


# ----- np.select: the first choice whose condition holds, else the default -----
# Piecewise in the conditions (read as true or false): each choice receives the adjoint
# where its condition is the first that holds (NumPy's rule for ties), the default where
# none holds; each summed to its own shape. A condition's gradient is zero, as for
# np.where (JAX and autograd alike). As for np.where, a choice's adjoint is exactly zero
# where it is not taken, even where the choice is infinite or NaN (np.log(x) of x <= 0).


def _sympy_select(condlist, choicelist, default):
    count = len(condlist)

    def element(*values):
        pieces = []
        for cond, choice in zip(values[:count], values[count:2 * count]):
            known = sympy_forms.decided(cond)
            if known is False:
                continue
            pieces.append((choice, True if known else cond))
            if known:
                break
        else:
            pieces.append((values[-1], True))
        return pieces[0][0] if pieces[0][1] is True else sp.Piecewise(*pieces)

    return np.frompyfunc(element, 2 * count + 1, 1)(*map(objects, condlist),
                                                    *map(objects, choicelist), default)


@defop("select", "np.select(condlist, choicelist, default=default)", aliases=(np.select,),
       diff=("choicelist", "default"), gradients_keep_zeros=True, sympy=_sympy_select)
def select(condlist, choicelist, default=0): ...


select.piecewise_params = ("condlist",)


@select.defvjp
def _(g, ans, condlist, choicelist, default):
    return (runtime.select_choice_grads(g, condlist, choicelist),
            runtime.unbroadcast(np.where(runtime.select_none(condlist), g, 0.0), default))


@select.defjvp("choicelist")
def _(t, ans, condlist, choicelist, default):
    return runtime.broadcast_like(np.select(condlist, t, 0.0), ans)


@select.defjvp("default")
def _(t, ans, condlist, choicelist, default):
    return runtime.broadcast_like(np.where(runtime.select_none(condlist), t, 0.0), ans)


helper_op(runtime.select_none, nondiff_output=True, floating=None,
          no_gradient="where no condition holds: a mask")
select_choice_grads = helper_op(runtime.select_choice_grads, diff=("g",), shape=list_result,
                                fresh=False, jvp="linear")


# Transposed, handing each choice the adjoint where it was selected is selecting.
@select_choice_grads.defvjp
def _(gg, ans, g, condlist, choicelist):
    return runtime.broadcast_like(np.select(condlist, gg, 0.0), g)


# ----- np.choose: element i from the choice a[i] names -----
# Piecewise in the integer array a; each choice receives the adjoint where a picks it
# (a wrapped or clipped as mode says), summed to its own shape.


@defop("choose", "np.choose(a, choices, mode=mode)", aliases=(np.choose,), diff=("choices",),
       jvp="linear", sympy=lambda a, choices, mode: np.choose(
           a, [objects(c) for c in choices], mode=mode))
def choose(a, choices, mode="raise"): ...


choose.piecewise_params = ("a",)


@choose.defvjp
def _(g, ans, a, choices, mode):
    return runtime.choose_grads(g, a, choices, mode)


choose_grads = helper_op(runtime.choose_grads, diff=("g",), shape=list_result, fresh=False,
                         jvp="linear")


@choose_grads.defvjp
def _(gg, ans, g, a, choices, mode):
    return runtime.broadcast_like(np.choose(a, gg, mode=mode), g)


# ----- np.insert and np.delete: elements placed or removed at constant indices -----
# np.insert is linear in arr and in values, separately (an element of the result is one
# or the other): each element of arr receives the adjoint at its new place, each of
# values the adjoints of every place NumPy's broadcasting copied it to. np.delete hands
# each kept element the adjoint at its place, a deleted one zero.


@defop("insert", "np.insert(arr, obj, values, axis=axis)", aliases=(np.insert,),
       diff=("arr", "values"), zeros="first",
       sympy=lambda arr, obj, values, axis: np.insert(objects(arr), obj, objects(values),
                                                      axis=axis))
def insert(arr, obj, values, axis=None): ...


insert.piecewise_params = ("obj",)


@insert.defvjp
def _(g, ans, arr, obj, values, axis):
    return (runtime.insert_arr_grad(g, arr, obj, values, axis),
            runtime.insert_values_grad(g, arr, obj, values, axis))


@insert.defjvp("arr")
def _(t, ans, arr, obj, values, axis):
    return np.insert(t, obj, np.zeros(np.shape(values)), axis=axis)


@insert.defjvp("values")
def _(t, ans, arr, obj, values, axis):
    return np.insert(np.zeros(np.shape(arr)), obj, t, axis=axis)


insert_arr_grad = _linear_helper(runtime.insert_arr_grad, "g, arr, obj, values, axis",
                                 shape=shape_like("arr"))
insert_values_grad = _linear_helper(runtime.insert_values_grad, "g, arr, obj, values, axis",
                                    shape=shape_like("values"))


@insert_arr_grad.defvjp
def _(gg, ans, g, arr, obj, values, axis):
    return np.insert(gg, obj, np.zeros(np.shape(values)), axis=axis)


@insert_values_grad.defvjp
def _(gg, ans, g, arr, obj, values, axis):
    return np.insert(np.zeros(np.shape(arr)), obj, gg, axis=axis)


@defop("delete", "np.delete(arr, obj, axis=axis)", aliases=(np.delete,), diff=("arr",),
       zeros="first", jvp="linear",
       sympy=lambda arr, obj, axis: np.delete(objects(arr), obj, axis=axis))
def delete(arr, obj, axis=None): ...


delete.piecewise_params = ("obj",)


@delete.defvjp
def _(g, ans, arr, obj, axis):
    return runtime.delete_grad(g, arr, obj, axis)


delete_grad = _linear_helper(runtime.delete_grad, "g, arr, obj, axis", shape=shape_like("arr"))


@delete_grad.defvjp
def _(gg, ans, g, arr, obj, axis):
    return np.delete(gg, obj, axis=axis)


# ----- np.meshgrid: a list of grids, each an input broadcast along the others' axes -----
# Input k (flattened) varies along axis k of every grid ('ij'), the first two swapped for
# 'xy'; it receives its grid's adjoint summed over the other axes. NumPy 2 returns a
# tuple: the op gives a list, as np.split does, which code unpacks, indexes and loops
# over alike.


def _meshgrid_call(*xi, copy=True, sparse=False, indexing="xy"):
    def constant(value):
        return value if isinstance(value, (Const, tuple)) or hasattr(value, "node") else Const(
            value)

    return {"xi": xi, "indexing": constant(indexing), "sparse": constant(sparse)}


@defop("meshgrid", "list(np.meshgrid(*xi, indexing=indexing, sparse=sparse))",
       aliases=((np.meshgrid, _meshgrid_call),), diff=("xi",), shape=list_result, fresh=False,
       jvp="linear", sympy=lambda xi, indexing, sparse: list(np.meshgrid(
           *[objects(x) for x in xi], indexing=indexing, sparse=sparse)))
def meshgrid(xi, indexing="xy", sparse=False): ...


@meshgrid.defvjp
def _(g, ans, xi, indexing, sparse):
    return runtime.meshgrid_grads(g, xi, indexing, sparse)


meshgrid_grads = helper_op(runtime.meshgrid_grads, diff=("g",), shape=list_result, fresh=False,
                           jvp="linear")
meshgrid_of = helper_op(runtime.meshgrid_of, diff=("parts",), shape=list_result, fresh=False,
                        jvp="linear")


# Transposed, summing each grid over the other axes is broadcasting back to the grids.
@meshgrid_grads.defvjp
def _(gg, ans, g, xi, indexing, sparse):
    return runtime.meshgrid_of(gg, indexing, sparse)


@meshgrid_of.defvjp
def _(gg, ans, parts, indexing, sparse):
    return runtime.meshgrid_grads(gg, parts, indexing, sparse)


# ----- math.fsum: Python's sum, exactly rounded -----
# Its value is math.fsum's (a program may rely on its exact rounding); for derivatives it
# is a sum, as the builtin sum is: each item (each element of an array) receives the
# adjoint. Items are numbers, as math.fsum takes: written out or built as a list (a
# comprehension, a generator over a list or an array's rows), or a vector's elements.


def _fsum_call(seq):
    if isinstance(seq, tuple) or getattr(seq, "shape", None) is LIST:
        return OPS["fsum"], {"items": seq}
    return OPS["fsum_array"], {"a": seq}


@defop("fsum", "math.fsum(items)", aliases=((math.fsum, _fsum_call),), diff=("items",),
       shape=scalar_result, floating="always", list_adjoints=True, jvp="linear",
       sympy=lambda items: builtins.sum(items, sp.S.Zero))
def fsum(items): ...


@fsum.defvjp
def _(g, ans, items):
    return runtime.sum_list_grad(g, items)


@defop("fsum_array", "math.fsum(a)", diff=("a",), shape=scalar_result, floating="always",
       jvp="linear", sympy=lambda a: builtins.sum(np.ravel(objects(a)), sp.S.Zero))
def fsum_array(a): ...


@fsum_array.defvjp
def _(g, ans, a):
    return runtime.broadcast_like(g, a)


# ----- np.vander: the powers of a vector -----
# Column j holds x ** p_j (p_j = j with increasing=True, else N - 1 - j), whose slope is
# p_j x ** (p_j - 1): p_j times the neighbouring column (the next lower power). Read from
# the result, with no negative power, the slopes are exact at x = 0.


def _vander_slopes(ans, increasing):
    """d ans / d x, column by column."""
    n = np.shape(ans)[-1]
    if increasing:
        return np.concatenate((np.zeros_like(ans[:, :1]), ans[:, :-1] * np.arange(1, n)), axis=1)
    return np.concatenate((ans[:, 1:] * np.arange(n - 1, 0, -1), np.zeros_like(ans[:, :1])),
                          axis=1)


@defop("vander", "np.vander(x, N=N, increasing=increasing)", aliases=(np.vander,), diff=("x",),
       sympy=lambda x, N, increasing: np.vander(objects(x), N=N, increasing=increasing))
def vander(x, N=None, increasing=False): ...


@vander.defvjp
def _(g, ans, x, N, increasing):
    return np.sum(g * _vander_slopes(ans, increasing), axis=1)


@vander.defjvp
def _(t, ans, x, N, increasing):
    return np.reshape(t, (-1, 1)) * _vander_slopes(ans, increasing)


# ----- np.broadcast_arrays: each array broadcast to their common shape -----
# A list of views (NumPy 2 gives a tuple; the op a list, as np.split's); each array
# receives its own view's adjoint summed over the axes it was broadcast along.


def _broadcast_arrays_call(*args, subok=False):
    return {"arrays": args}


def unbroadcast_each(g, arrays):
    """Adjoints of the arrays of ``np.broadcast_arrays(*arrays)``: each of ``g`` summed
    back to its array's shape."""
    return [runtime.unbroadcast(part, array) for part, array in zip(g, arrays)]


def broadcast_all(parts):
    """``np.broadcast_arrays(*parts)`` as a list."""
    return list(np.broadcast_arrays(*parts))


@defop("broadcast_arrays", "list(np.broadcast_arrays(*arrays))",
       aliases=((np.broadcast_arrays, _broadcast_arrays_call), broadcast_all), diff=("arrays",),
       shape=list_result, fresh=False, jvp="linear",
       sympy=lambda arrays: list(np.broadcast_arrays(*[objects(a) for a in arrays])))
def broadcast_arrays(arrays): ...


@broadcast_arrays.defvjp
def _(g, ans, arrays):
    return unbroadcast_each(g, arrays)


unbroadcast_each_op = helper_op(unbroadcast_each, diff=("g",), shape=list_result, fresh=False,
                                jvp="linear")


# Transposed, summing each adjoint back is broadcasting again.
@unbroadcast_each_op.defvjp
def _(gg, ans, g, arrays):
    return broadcast_all(gg)


# ----- np.block: nested lists of arrays joined, the innermost along the last axis -----
# The call's nested list (written out in the code) is held as its items and their layout,
# a nested tuple of the items' positions. Each item receives its block of the adjoint:
# the adjoint cut as NumPy joined the blocks (a list at depth d of D along axis d - D,
# every array given D dimensions or more by leading ones), in the item's own shape.


def _block_layout(arrays, items: list):
    if isinstance(arrays, tuple):
        return tuple(_block_layout(part, items) for part in arrays)
    items.append(arrays)
    return len(items) - 1


def _block_call(arrays):
    if isinstance(arrays, tuple):
        items: list = []
        layout = _block_layout(arrays, items)
        return {"items": tuple(items), "layout": Const(layout)}
    if getattr(arrays, "shape", None) is LIST or isinstance(arrays, Const) and isinstance(
            arrays.value, (tuple, list)):
        raise RunAsItIs  # a list built at run time: its nesting is not known while compiling
    return {"items": (arrays,), "layout": Const(0)}  # one array: np.block copies it


def _nested(items, layout):
    if isinstance(layout, tuple):
        return [_nested(items, part) for part in layout]
    return items[layout]


def _depth(layout) -> int:
    return 1 + _depth(layout[0]) if isinstance(layout, tuple) and layout else 0


def block_of(items, layout):
    """``np.block`` of ``items`` nested as ``layout`` says.

    >>> block_of([np.ones(2), np.zeros(1)], (0, 1))
    array([1., 1., 0.])
    """
    return np.block(_nested(list(items), layout))


def block_grads(g, items, layout):
    """Adjoints of the items of ``block_of(items, layout)``: ``g`` cut along the axes
    NumPy joined the blocks along, each piece in its item's shape."""
    depth = _depth(layout)
    grads = [None] * len(items)

    def extent(node, level, axis):
        if isinstance(node, tuple):
            if axis == level - depth:
                return builtins.sum(extent(part, level + 1, axis) for part in node)
            return extent(node[0], level + 1, axis)
        shape = np.shape(items[node])
        return shape[axis] if -axis <= len(shape) else 1

    def cut(piece, node, level):
        if not isinstance(node, tuple):
            grads[node] = np.reshape(piece, np.shape(items[node]))
            return
        axis = level - depth
        sizes = [extent(part, level + 1, axis) for part in node]
        for part, block in zip(node, np.split(piece, np.cumsum(sizes)[:-1], axis=axis)):
            cut(block, part, level + 1)

    cut(np.asarray(g), layout, 0)
    return grads


@defop("block", "block_of(items, layout)", aliases=((np.block, _block_call), block_of),
       diff=("items",), jvp="linear",
       sympy=lambda items, layout: np.block(_nested([objects(i) for i in items], layout)))
def block(items, layout): ...


block.runtime = {"block_of": block_of}


@block.defvjp
def _(g, ans, items, layout):
    return block_grads(g, items, layout)


block_grads_op = helper_op(block_grads, diff=("g",), shape=list_result, fresh=False,
                           jvp="linear")


# Transposed, cutting the adjoint into blocks is joining the blocks again.
@block_grads_op.defvjp
def _(gg, ans, g, items, layout):
    return block_of(gg, layout)


# ----- positions among sorted values (no gradient) -----
# Integer results, constant near almost every input.

_POSITIONS = "an index among sorted values: an integer, constant near almost every input"


@defop("searchsorted", "np.searchsorted(a, v, side=side, sorter=sorter)",
       aliases=(np.searchsorted,), methods=("searchsorted",), nondiff_output=True, floating=None,
       no_gradient=_POSITIONS, no_sympy="an integer position")
def searchsorted(a, v, side="left", sorter=None): ...


@defop("digitize", "np.digitize(x, bins, right=right)", aliases=(np.digitize,),
       nondiff_output=True, floating=None, no_gradient=_POSITIONS, no_sympy="an integer position")
def digitize(x, bins, right=False): ...


# ----- NumPy 2's names: np.unstack, np.astype -----


if hasattr(np, "unstack"):
    @defop("unstack_array", "list(np.unstack(x, axis=axis))", aliases=(np.unstack,), diff=("x",),
           shape=list_result, fresh=False, jvp="linear",
           sympy=lambda x, axis: list(np.moveaxis(objects(x), axis, 0)))
    def unstack_array(x, axis=0): ...

    # Each slice's adjoint, stacked back along the axis.
    @unstack_array.defvjp
    def _(g, ans, x, axis):
        return np.stack(g, axis=axis)


def _astype_call(x, dtype, *, copy=True, device=None):
    return {"a": x, "dtype": dtype}


if hasattr(np, "astype"):
    alias(np.astype, astype, _astype_call)


# ----- batched tangents (transforms/batching.py) -----


# Each example indexed alike: a full slice before a basic index, or one holding a single
# array (its axes stay in place); other indices run once per example.
@getitem.defbatch
def _(batch, node, a, index):
    if batch.batched(index):
        return None
    index = batch.index_of_examples(index)
    return None if index is None else batch.emit(getitem, a, index)


# dx[1:] += dt into an unbatched dx: dx broadcast over the batch first; a batched term
# given axes of length 1 up to the rank of the part it is added to.
@index_add.defbatch
def _(batch, node, base, index, value):
    if batch.batched(index):
        return None
    index = batch.index_of_examples(index)
    if index is None:
        return None
    if not batch.batched(base):
        base = batch.broadcast(base)
    if batch.batched(value) and not batch.ranks.same(value, node.out):
        value = batch.emit("batch_aligned", value, (batch.emit(getitem, base, index),),
                           Const((True,)))
    return batch.emit(index_add, base, index, value)


@OPS["reshape"].defbatch
def _(batch, node, a, shape, order):
    if batch.batched(shape) or not (isinstance(order, Const) and order.value in ("C", None)):
        return None
    return batch.emit("batched_reshape", a, shape)
