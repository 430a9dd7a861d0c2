"""Ops of control flow and of Python's own containers.

- reading a variable of the user's module or closure;
- truth values of conditions (``not``, ``and``, ``or``);
- Python lists the function builds (``acc = []``, ``acc.append(v)``, ``sum(acc)``);
- element updates of arrays the function created (``out[i] = v``);
- the tape of the reverse sweep: one list per stored value, pushed in the
  forward loop and popped in the backward loop.
"""

from __future__ import annotations

import numpy as np

from autodiff.ops import runtime
from autodiff.ops.registry import defop


@defop("variable", lambda named: named["name"].value, nondiff_output=True, floating=None,
       fresh=False)
def variable(name, scope): ...


# A global or closure variable is read where it is used, at call time.
variable.inline = True


# ----- truth values -----

_truth = {"nondiff_output": True, "floating": None, "shape": "scalar"}


@defop("truth_not", "not a", **_truth)
def truth_not(a): ...


@defop("truth_or", "a or b", **_truth)
def truth_or(a, b): ...


@defop("truth_and", "a and b", **_truth)
def truth_and(a, b): ...


# ----- lists -----

_list = {"shape": "list", "floating": None}


@defop("list_new", "[]", **_list)
def list_new(): ...


list_new.distinct = True


@defop("list_append", "lst + [item]", diff=("lst", "item"), **_list,
       inplace=lambda named: "lst.append(item)")
def list_append(lst, item): ...


list_append.inplace_copy = "list(lst)"


@list_append.defvjp
def _(g, ans, lst, item):
    # The backward sweep takes the adjoints off the end of the list, as appends added them.
    last = runtime.pop_last(g)
    return g, last


@defop("list_pop", "lst.pop()", aliases=(runtime.pop_last,), fresh=False, floating="always")
def list_pop(lst): ...


list_pop.effect = True


@defop("list_getitem", "lst[index]", diff=("lst",), fresh=False)
def list_getitem(lst, index): ...


@list_getitem.defvjp
def _(g, ans, lst, index):
    return runtime.list_index_grad(g, lst, index)


@defop("list_sum", "sum(items)", diff=("items",))
def list_sum(items): ...


@list_sum.defvjp
def _(g, ans, items):
    return runtime.sum_list_grad(g, items)


@defop("add_lists", "add_lists(a, b)", aliases=(runtime.add_lists,), **_list)
def add_lists(a, b): ...


@defop("zero_adjoints", "zero_adjoints(items)", aliases=(runtime.zero_adjoints,), **_list)
def zero_adjoints(items): ...


@defop("sum_list_grad", "sum_list_grad(g, items)", aliases=(runtime.sum_list_grad,), **_list)
def sum_list_grad(g, items): ...


@defop("list_index_grad", "list_index_grad(g, items, index)",
       aliases=(runtime.list_index_grad,), **_list)
def list_index_grad(g, items, index): ...


# ----- element updates -----


@defop("setitem", "setitem(a, index, value)", aliases=(runtime.setitem,),
       diff=("a", "value"), shape="like:a", inplace=lambda named: "a[index] = value")
def setitem(a, index, value): ...


setitem.inplace_copy = "a.copy()"


@setitem.defvjp
def _(g, ans, a, index, value):
    # A copy of the written part first, so that zeroing it can happen in place.
    part = runtime.unbroadcast(g[index].copy(), value)
    return runtime.zero_at(g, index), part


@defop("zero_at", "zero_at(a, index)", aliases=(runtime.zero_at,), diff=("a",), shape="like:a",
       inplace=lambda named: "a[index] = 0")
def zero_at(a, index): ...


zero_at.inplace_copy = "np.array(a)"


@zero_at.defvjp
def _(g, ans, a, index):
    return runtime.zero_at(g, index)


# ----- the tape -----


@defop("tape_new", "[]", nondiff_output=True, floating=None)
def tape_new(): ...


tape_new.distinct = True


@defop("tape_push", "tape.append(value)", nondiff_output=True, floating=None)
def tape_push(tape, value): ...


tape_push.effect = tape_push.statement = True


@defop("tape_pop", "tape.pop()", fresh=False, floating=None)
def tape_pop(tape): ...


tape_pop.effect = True

__all__ = ["np"]
