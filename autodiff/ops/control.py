"""Ops of control flow and of Python's own containers.

- reading a variable of the user's module or closure;
- truth values of conditions (``not``, ``and``, ``or``);
- Python lists the function builds (``acc = []``, ``acc.append(v)``, ``sum(acc)``);
- element updates of arrays the function created (``out[i] = v``);
- the tape of the reverse sweep: one list per stored value, pushed in the
  forward loop and popped in the backward loop.

The list ops that appear in derivative graphs (``add_lists``, ``sum_list_grad``,
``list_index_grad``, ``setitem``, ``zero_at``) carry JVP and VJP rules too, for
forward mode over a gradient and gradients of gradients. A list's tangent or
adjoint is a list of its items' tangents or adjoints.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from autodiff.graph.ir import Const
from autodiff.graph.shapes import SCALAR
from autodiff.ops import runtime
from autodiff.ops.checkpoints import Checkpoints, snapshot_count
from autodiff.ops.registry import OPS, defop, helper_op
from autodiff.ops.shape_rules import (
    broadcast,
    dict_result,
    is_basic_index,
    list_indexed,
    list_result,
    scalar_result,
    shape_like,
)
from autodiff.ops.sympy_forms import elementwise, objects, stop_gradient_function, truth
from autodiff.ops.sympy_forms import index as sympy_index


@defop("variable", lambda named: named["name"].value, nondiff_output=True, floating=None,
       fresh=False, no_gradient="a global or closure variable: a constant of the derivative", recompute="always", per_call=True)
def variable(name, scope): ...


# A global or closure variable is read where it is used, at call time.
variable.inline = True


# ----- ranges -----


@defop("range_of", "range(start, stop, step)", nondiff_output=True, floating=None,
       no_gradient="a range of integers",
       impl=lambda start, stop, step: range(start, stop, step), recompute="always", sympy=lambda *bounds: range(*bounds))
def range_of(start, stop, step): ...


# ----- truth values -----

_truth = {"nondiff_output": True, "floating": None, "shape": scalar_result,
          "no_gradient": "a truth value", "recompute": "scalar"}


@defop("truth_not", "not a", **_truth, sympy=truth("Not", operator.not_))
def truth_not(a): ...


@defop("truth_or", "a or b", **_truth, sympy=truth("Or", lambda a, b: a or b))
def truth_or(a, b): ...


@defop("truth_and", "a and b", **_truth, sympy=truth("And", lambda a, b: a and b))
def truth_and(a, b): ...


# ----- lists -----

_list = {"shape": list_result, "floating": None}


@defop("list_new", "[]", **_list, sympy=list, per_call=True)
def list_new(): ...


list_new.distinct = True


@defop("list_append", "lst + [item]", diff=("lst", "item"), **_list,
       inplace=lambda named: "lst.append(item)", jvp="lockstep", list_adjoints=True, sympy=lambda lst, item: [*lst, item], holds="item", updates="lst")
def list_append(lst, item): ...


list_append.inplace_copy = "list(lst)"


@list_append.defvjp
def _(g, ans, lst, item):
    # The backward sweep takes the adjoints off the end of the list, as appends added them.
    last = runtime.pop_last(g)
    return g, last


# It takes an item's adjoint off a list of adjoints, so the item varies with the list:
# forward mode pops the twin list of tangents beside it. Reverse mode has no rule (the
# pop changes the list it reads) and refuses derivatives that pop varied lists.
@defop("list_pop", "lst.pop()", aliases=(runtime.pop_last,), diff=("lst",), fresh=False,
       floating="always", jvp="lockstep", taped="lst",
       no_gradient="it pops the list it reads: reverse mode refuses (forward mode pops the "
       "list of tangents beside it)")
def list_pop(lst): ...


list_pop.effect = True


@defop("list_getitem", "lst[index]", aliases=(runtime.list_item,), diff=("lst",), fresh=False,
       list_adjoints=True, batching="container",
       shape=list_indexed, sympy=lambda lst, index: lst[sympy_index(index)], jvp="linear")
def list_getitem(lst, index): ...


@list_getitem.defvjp
def _(g, ans, lst, index):
    return runtime.list_index_grad(g, lst, index)


# A list the code fills by index (caches = [None] * T; caches[t] = (h, x_t)) or joins
# (hs = [h0] + [None] * T). Forward mode runs each op on the tangents, the index and the
# count as they are; reverse mode reads each position's adjoint off the list of them.
@defop("list_setitem", "list_set(lst, index, value)", aliases=(runtime.list_set,),
       diff=("lst", "value"), **_list, inplace=lambda named: "lst[index] = value",
       jvp="lockstep", list_adjoints=True, holds="value", updates="lst",
       sympy=lambda lst, index, value: runtime.list_set(lst, sympy_index(index), value))
def list_setitem(lst, index, value): ...


list_setitem.inplace_copy = "list(lst)"
list_setitem.lockstep_kept = ("index",)


# The item written gets its position's adjoint; the item it replaced, a zero there.
@list_setitem.defvjp
def _(g, ans, lst, index, value):
    part = runtime.list_item(g, index)
    replaced = runtime.zero_tangent(runtime.list_item(lst, index))
    return runtime.list_set(g, index, replaced), part


def _repeated(named) -> str:
    """``[None] * T``; a count not known to be an int is checked to be one when the code
    runs (NumPy would multiply the list by an array: ``repetitions`` refuses it)."""
    count = named["count"]
    surely_int = isinstance(count, Const) and type(count.value) is int or (
        getattr(count, "shape", None) is SCALAR and not getattr(count, "floating", True))
    return "[*items] * count" if surely_int else "[*items] * repetitions(count)"


@defop("list_repeat", _repeated, aliases=(runtime.list_repeat,), diff=("items",),
       **_list, jvp="lockstep", holds="items", sympy=lambda items, count: [*items] * count)
def list_repeat(items, count): ...


list_repeat.lockstep_kept = ("count",)


@list_repeat.defvjp
def _(g, ans, items, count):
    return runtime.repeated_items_grad(g, items)


@defop("repeated_items_grad", "repeated_items_grad(g, items)",
       aliases=(runtime.repeated_items_grad,), diff=("g",), **_list, jvp="linear",
       no_sympy="the adjoint of a repeated list, written by its rule")
def repeated_items_grad(g, items): ...


# Its transpose repeats the items' adjoints as the list repeated the items.
@repeated_items_grad.defvjp
def _(gg, ans, g, items):
    return runtime.list_repeat(gg, len(g) // len(items))


@defop("list_concat", "a + b", diff=("a", "b"), **_list, jvp="lockstep", list_adjoints=True,
       sympy=lambda a, b: [*a, *b])
def list_concat(a, b): ...


@list_concat.defvjp
def _(g, ans, a, b):
    head = len(a)
    return runtime.list_item(g, slice(None, head)), runtime.list_item(g, slice(head, None))


# Each makes a new list the code may then fill: two alike are still two lists.
for _op in (list_setitem, list_repeat, list_concat):
    _op.distinct = True


_SYMPY_ADD = elementwise(operator.add, 2)


@defop("list_sum", "sum(items)", diff=("items",), list_adjoints=True, sympy=lambda items: functools.reduce(_SYMPY_ADD, items, 0), jvp="linear")
def list_sum(items): ...


@list_sum.defvjp
def _(g, ans, items):
    return runtime.sum_list_grad(g, items)


@defop("add_lists", "add_lists(a, b)", aliases=(runtime.add_lists,), diff=("a", "b"), **_list,
       list_adjoints=True)
def add_lists(a, b): ...


# The sum of two adjoints of an item of a list built at run time (a tuple of
# intermediates: item by item, where ``+`` would join the tuples).
@defop("add_adjoints", "add_adjoints(a, b)", aliases=(runtime.add_adjoints,), diff=("a", "b"),
       floating="always", fresh=True)
def add_adjoints(a, b): ...


def _adjoint_to_both(g, ans, a, b):
    return g, g


def _tangent_of_either(t, ans, a, b):
    return t


for _sum in (add_lists, add_adjoints):  # linear: each operand's adjoint is the sum's
    _sum.defvjp(_adjoint_to_both)
    _sum.defjvp("a")(_tangent_of_either)
    _sum.defjvp("b")(_tangent_of_either)


@defop("zero_adjoints", "zero_adjoints(items)", aliases=(runtime.zero_adjoints,), **_list,
       no_gradient="zeros: it reads only the items' shapes")
def zero_adjoints(items): ...


# The adjoint a list receives from an op that reads it as an array (np.sum(acc)).
@defop("list_adjoint", "list_adjoint(g, items)", aliases=(runtime.list_adjoint,), diff=("g",),
       fresh=False, **_list)
def list_adjoint(g, items): ...


@list_adjoint.defjvp
def _(dg, ans, g, items):
    return runtime.list_adjoint(dg, items)


@list_adjoint.defvjp
def _(gg, ans, g, items):
    return runtime.list_adjoint_transpose(gg, g)


@defop("sum_list_grad", "sum_list_grad(g, items)", aliases=(runtime.sum_list_grad,),
       diff=("g",), **_list)
def sum_list_grad(g, items): ...


@sum_list_grad.defjvp
def _(dg, ans, g, items):
    return runtime.sum_list_grad(dg, items)


# Each item's adjoint is g summed to the item's shape: the transpose broadcasts back.
@sum_list_grad.defvjp
def _(gg, ans, g, items):
    return runtime.broadcast_like(sum(gg), g)


@defop("list_index_grad", "list_index_grad(g, items, index)",
       aliases=(runtime.list_index_grad,), diff=("g",), **_list)
def list_index_grad(g, items, index): ...


@list_index_grad.defjvp
def _(dg, ans, g, items, index):
    return runtime.list_index_grad(dg, items, index)


@list_index_grad.defvjp
def _(gg, ans, g, items, index):
    return gg[index]


# A list of adjoints is consumed by the backward sweep, which pops one item per append
# of the forward list it belongs to. Two of them built alike (the adjoint a second-order
# sweep gives a list and the one the first-order sweep it differentiates gave it, both
# from the seed 1.0) are still two lists: merged, one sweep would pop what the other
# pushed for itself.
for _op in (list_adjoint, zero_adjoints, add_lists, sum_list_grad, list_index_grad):
    _op.distinct = True


# ----- dicts whose keys are known only when the code runs -----

# (grads = {}; for i in range(n): grads[f"W{i}"] = ...: the keys a dict the code builds
# has are otherwise known while compiling, frontend/records.py.) Their items carry no
# gradient: a value carrying one written into such a dict that the output reads is
# refused (transforms/activity.refuse_gradients_into_settings); one only returned
# beside the output (has_aux) is off the gradient path.
_NO_GRADIENT_IN_DICTS = ("a dict whose keys are known only when the code runs: its items "
                         "carry no gradient")
_dict = {"shape": dict_result, "floating": None, "no_gradient": _NO_GRADIENT_IN_DICTS,
         "no_sympy": "a dict whose keys are known only when the code runs"}


@defop("dict_new", "{}", **_dict, per_call=True)
def dict_new(): ...


@defop("dict_setitem", "{**d, key: value}", **_dict,
       inplace=lambda named: "d[key] = value", holds="value", updates="d")
def dict_setitem(d, key, value): ...


dict_setitem.inplace_copy = "dict(d)"
dict_setitem.no_gradient_hint = ("keep a value the output reads in a list (acc.append(v)) "
                                "or a name of its own, or return the dict beside the output "
                                "(has_aux=True) without reading it")


@defop("dict_getitem", "d[key]", **_dict | {"shape": None}, fresh=False)
def dict_getitem(d, key): ...


for _op in (dict_new, dict_setitem):
    _op.distinct = True


# ----- element updates -----


def _sympy_setitem(a, index, value):
    out = objects(a).copy()
    out[sympy_index(index)] = value
    return out


@defop("setitem", "setitem(a, index, value)", aliases=(runtime.setitem,),
       diff=("a", "value"), shape=shape_like("a"), inplace=lambda named: "a[index] = value", sympy=_sympy_setitem, updates="a")
def setitem(a, index, value): ...


setitem.inplace_copy = "a.copy()"


@setitem.defvjp
def _(g, ans, a, index, value):
    # A copy of the written part first, so that zeroing it can happen in place.
    part = runtime.unbroadcast(runtime.written_part(g, index), value)
    return runtime.zero_at(g, index), part


@setitem.defjvp("a")
def _(t, ans, a, index, value):
    return runtime.zero_at(t, index)


@setitem.defjvp("value")
def _(t, ans, a, index, value):
    return runtime.setitem(np.zeros_like(ans, dtype=np.result_type(t)), index, t)


def _written_part_of_a_basic_index(named, builder):
    """Slices and integers name each element once: the written part is a copy of g's."""
    if not is_basic_index(named["index"]):
        return None
    return builder.emit(OPS["copy"], (builder.emit(OPS["getitem"], (named["g"], named["index"])),))


# A repeated index (a[[0, 0]] = v) writes an element several times and NumPy keeps the
# last write: only that occurrence of the value receives the element's adjoint.
@defop("written_part", "written_part(g, index)", aliases=(runtime.written_part,), diff=("g",),
       simplify=_written_part_of_a_basic_index, jvp="linear",
       no_sympy="the adjoint of an element update, written by its rule")
def written_part(g, index): ...


written_part.piecewise_params = ("index",)


# Its transpose writes each adjoint back where its occurrence was the last to write.
@written_part.defvjp
def _(h, ans, g, index):
    return runtime.setitem(np.zeros_like(g, dtype=np.result_type(h)), index, h)


@defop("zero_at", "zero_at(a, index)", aliases=(runtime.zero_at,), diff=("a",), shape=shape_like("a"),
       inplace=lambda named: "a[index] = 0")
def zero_at(a, index): ...


zero_at.inplace_copy = "np.array(a)"


@zero_at.defvjp
def _(g, ans, a, index):
    return runtime.zero_at(g, index)


@zero_at.defjvp
def _(t, ans, a, index):
    return runtime.zero_at(t, index)


# ----- the tape -----


TAPE = ("the tape of a reverse sweep: forward mode follows it itself (transforms.forward), "
        "and reverse mode over a reverse sweep that reads one runs forward mode "
        "(api.ForwardGradient)")


@defop("tape_new", "[]", nondiff_output=True, floating=None, no_gradient=TAPE, per_call=True,
       jvp="lockstep")
def tape_new(): ...


tape_new.distinct = True


@defop("tape_push", "tape.append(value)", nondiff_output=True, floating=None, no_gradient=TAPE,
       per_call=True, holds="value", jvp="lockstep", taped="value")
def tape_push(tape, value): ...


tape_push.effect = tape_push.statement = True


@defop("tape_pop", "tape.pop()", fresh=False, floating=None, no_gradient=TAPE, per_call=True,
       jvp="lockstep")
def tape_pop(tape): ...


tape_pop.effect = True


# ----- checkpoints: a loop reversed from states kept under a memory budget -----
#
# transforms/checkpoint.py writes these around a loop whose derivative is asked to bound
# its memory (``ad.grad(f, checkpoint="200MB")``); ``ops/checkpoints.py`` holds the
# schedule. The states kept are held by reference: ``holds`` keeps them from being
# updated in place.

CHECKPOINTS = ("the checkpoints of a loop's reverse sweep (transforms.checkpoint): a "
               "derivative of a checkpointed derivative is not taken")
_checkpoint_names = {"Checkpoints": Checkpoints, "snapshot_count": snapshot_count}


@defop("checkpoints_new", "Checkpoints(steps, snapshot_count(budget, state))",
       nondiff_output=True, floating=None, no_gradient=CHECKPOINTS, per_call=True)
def checkpoints_new(steps, budget, state): ...


@defop("checkpoint_keep", "checkpoints.keep(i, state)", nondiff_output=True, floating=None,
       no_gradient=CHECKPOINTS, per_call=True, holds="state", taped="state")
def checkpoint_keep(checkpoints, i, state): ...


@defop("checkpoints_ended", "checkpoints.ended(steps)", nondiff_output=True, floating=None,
       no_gradient=CHECKPOINTS, per_call=True)
def checkpoints_ended(checkpoints, steps): ...


@defop("checkpoint_restore", "checkpoints.restore(j)", fresh=False, floating=None,
       no_gradient=CHECKPOINTS, per_call=True)
def checkpoint_restore(checkpoints, j): ...


@defop("checkpoint_part", "restored[k]", fresh=False, floating=None, no_gradient=CHECKPOINTS,
       per_call=True)
def checkpoint_part(restored, k): ...


def _range_text(named: dict) -> str:
    start, step = named["start"], named["step"]
    if (isinstance(start, Const) and start.value == 0 and isinstance(step, Const)
            and step.value == 1):
        return "len(range(stop))"
    return "len(range(start, stop, step))"


@defop("range_length", _range_text, nondiff_output=True, shape=scalar_result,
       no_gradient="the number of steps of a loop: an int")
def range_length(start, stop, step): ...


checkpoints_new.runtime = _checkpoint_names
checkpoint_keep.effect = checkpoint_keep.statement = True
checkpoints_ended.effect = checkpoints_ended.statement = True
checkpoint_restore.effect = True
for _op in (checkpoints_new, checkpoint_keep, checkpoints_ended, checkpoint_restore,
            checkpoint_part, range_length):
    _op.outside_tables = "written by transforms/checkpoint.py (tests/transforms/test_checkpoint.py)"



# ----- products that keep the zeros of a where's adjoint -----
#
# np.where(x > 20, x, np.log1p(np.exp(x))) at x = 800 computes the branch it does
# not select, and overflows there. The where's adjoint for that branch is zero, and
# the chain rule through it multiplies that zero by infinity: NaN. Downstream of a
# where's adjoint, the reverse transform writes its products and quotients with
# these ops instead, where a zero factor (a zero numerator) gives zero whatever the
# other operand is. Their rules keep that convention, so forward mode over them
# (a Hessian) is exact wherever the values are finite.


def keep_zeros_multiply(a, b):
    """``a * b``, zero where ``a`` or ``b`` is zero even if the other is inf or NaN."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        with np.errstate(invalid="ignore"):
            product = a * b
            if not np.isfinite(product).all():  # (a finite product needs no mending)
                product = np.where((a == 0) | (b == 0), 0.0, product)
        return product if product.ndim else product[()]  # a number, as a * b gives
    product = a * b
    return type(product)(0) if a == 0 or b == 0 else product


def keep_zeros_divide(a, b):
    """``a / b``, zero where ``a`` is zero even if ``b`` is zero, inf or NaN."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        with np.errstate(invalid="ignore", divide="ignore"):
            quotient = a / b
            if not np.isfinite(quotient).all():
                quotient = np.where(a == 0, 0.0, quotient)
        return quotient if quotient.ndim else quotient[()]
    return a * 0.0 if a == 0 else a / b


_keep_zeros_multiply = helper_op(keep_zeros_multiply, diff=("a", "b"),
                                 shape=broadcast("a", "b"), zeros="first",
                                 gradients_keep_zeros=True)
_keep_zeros_divide = helper_op(keep_zeros_divide, diff=("a", "b"), shape=broadcast("a", "b"),
                               floating="always", zeros="first", gradients_keep_zeros=True)


@_keep_zeros_multiply.defvjp
def _(g, ans, a, b):
    return (runtime.unbroadcast(keep_zeros_multiply(g, b), a),
            runtime.unbroadcast(keep_zeros_multiply(g, a), b))


@_keep_zeros_multiply.defjvp("a")
def _(t, ans, a, b):
    return runtime.broadcast_like(keep_zeros_multiply(t, b), ans)


@_keep_zeros_multiply.defjvp("b")
def _(t, ans, a, b):
    return runtime.broadcast_like(keep_zeros_multiply(a, t), ans)


@_keep_zeros_divide.defvjp
def _(g, ans, a, b):
    return (runtime.unbroadcast(keep_zeros_divide(g, b), a),
            runtime.unbroadcast(-keep_zeros_divide(keep_zeros_multiply(g, ans), b), b))


@_keep_zeros_divide.defjvp("a")
def _(t, ans, a, b):
    return runtime.broadcast_like(keep_zeros_divide(t, b), ans)


@_keep_zeros_divide.defjvp("b")
def _(t, ans, a, b):
    return runtime.broadcast_like(-keep_zeros_divide(keep_zeros_multiply(t, ans), b), ans)


# The same as expressions, for specialised code compiled by numba (which calls no helper);
# ``scalars`` says both operands are numbers, for which numba's division by zero raises.


def _product_kernel(named) -> str:
    if named["scalars"].value:
        return "(0.0 if a == 0 or b == 0 else a * b)"
    return "np.where((a == 0) | (b == 0), 0.0, a * b)"


def _quotient_kernel(named) -> str:
    return "(0.0 if a == 0 else a / b)" if named["scalars"].value else (
        "np.where(a == 0, 0.0, a / b)")


SPECIALISED = ("specialised derivatives only (jit.specialize), which are never "
               "differentiated")


@defop("keep_zeros_product", _product_kernel, shape=broadcast("a", "b"), diff=("a", "b"),
       no_gradient=SPECIALISED)
def keep_zeros_product(a, b, scalars): ...


@defop("keep_zeros_quotient", _quotient_kernel, shape=broadcast("a", "b"), floating="always",
       diff=("a", "b"), no_gradient=SPECIALISED)
def keep_zeros_quotient(a, b, scalars): ...


# numba calls no helper: the zero-keeping forms as expressions.
@_keep_zeros_multiply.defnumba
def _(rewrite, a, b):
    return rewrite.emit(keep_zeros_product, a, b, Const(rewrite.is_number(a) and rewrite.is_number(b)))


@_keep_zeros_divide.defnumba
def _(rewrite, a, b):
    return rewrite.emit(keep_zeros_quotient, a, b, Const(rewrite.is_number(a) and rewrite.is_number(b)))


# ----- cutting the gradient -----


@defop("stop_gradient", "x", nondiff_output=True, fresh=False, shape=shape_like("x"),
       no_gradient="ad.stop_gradient: the user asks for none", sympy=elementwise(lambda x: stop_gradient_function()(x)))
def stop_gradient(x): ...


# The value itself: generated code writes ``x`` where the result is read.
stop_gradient.inline = True


# ----- an item of a tuple or list chosen at run time -----


# ``(a, b, c)[i]`` and ``weights[i]`` for a list whose items are known while compiling
# and an integer known only when the code runs: the item's adjoint is the whole
# adjoint, the others' zero (as for a list built at run time, list_getitem).
@defop("select_item", "items[index]", diff=("items",), fresh=False, jvp="linear",
       sympy=lambda items, index: items[index])
def select_item(items, index): ...


select_item.piecewise_params = ("index",)  # an integer: a float index's gradient is zero


@select_item.defvjp
def _(g, ans, items, index):
    return runtime.list_index_grad(g, items, index)


# ``pair[1]`` of an item of a list built at run time (``for _, v in pairs(x)`` over a
# generator yielding tuples, a cache read back): the item, known only when the code
# runs, may be a tuple of intermediates, whose adjoint is a tuple, or an array.
@defop("listed_item", "a[index]", diff=("a",), fresh=False, jvp="linear",
       sympy=lambda a, index: a[index])
def listed_item(a, index): ...


listed_item.piecewise_params = ("index",)  # an integer: a float index's gradient is zero


@listed_item.defvjp
def _(g, ans, a, index):
    return runtime.listed_item_grad(g, a, index)


@defop("listed_item_grad", "listed_item_grad(g, a, index)",
       aliases=(runtime.listed_item_grad,), diff=("g",), fresh=True)
def listed_item_grad(g, a, index): ...


@listed_item_grad.defjvp
def _(dg, ans, g, a, index):
    return runtime.listed_item_grad(dg, a, index)


@listed_item_grad.defvjp
def _(gg, ans, g, a, index):
    return gg[index]


__all__ = ["np"]


# ----- batched tangents (transforms/batching.py): each example's item, by the same index
# after a full slice over the batch -----


@setitem.defbatch
def _(batch, node, a, index, value):
    index = None if batch.batched(index) else batch.index_of_examples(index)
    if index is None:
        return None
    if not batch.batched(a):
        a = batch.broadcast(a)
    if batch.batched(value):
        value = batch.emit("batch_aligned", value, (batch.emit("getitem", a, index),),
                           Const((True,)))
    return batch.emit(setitem, a, index, value)


@zero_at.defbatch
def _(batch, node, a, index):
    index = None if batch.batched(index) else batch.index_of_examples(index)
    return None if index is None else batch.emit(zero_at, a, index)


# (A repeated index repeats within one example alone: each example's last write.)
@written_part.defbatch
def _(batch, node, g, index):
    index = None if batch.batched(index) else batch.index_of_examples(index)
    return None if index is None else batch.emit(written_part, g, index)
