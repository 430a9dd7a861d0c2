"""Writes into what the caller passed: ``params["running_mean"] = m``, ``self.n_in =
n``, ``log.append(v)`` on a dict, an object or a list given to the differentiated
function. Each is a statement of the forward sweep, where the user wrote it, once per
call, writing the value's forward value: no gradient flows back out of the call
through the caller's container (as PyTorch's running statistics), while the frontend
keeps the written value for what the same call reads back, an ordinary data
dependency (``frontend/state.py``).

>>> store_field_op("n_in").kernel
'obj.n_in = value'
"""

from __future__ import annotations

import functools

from autodiff.ops.registry import Op, stub_taking

_WRITTEN = ("a write into a dict, list or object the caller passed: its forward value is "
            "written, and no gradient flows back out of the call through it")


def _statement(name: str, params: list[str], kernel: str) -> Op:
    # ``holds``: the container keeps a reference to the value, which generated code then
    # never updates in place.
    op = Op(name, stub_taking(params), kernel, nondiff_output=True, no_gradient=_WRITTEN,
            fresh=False, floating=None, holds="value")
    op.opaque = op.effect = op.statement = True
    op.outside_tables = "written by the frontend for a write into what the caller passed"
    return op


STORE_ITEM = _statement("store_item", ["container", "key", "value"], "container[key] = value")
APPEND_ITEM = _statement("append_item", ["container", "value"], "container.append(value)")
# A key known only when the code runs (params[f"h{t}"] = h), checked not to be one of
# the keys the code reads as the call passed them (``known``), which would then be stale.
STORE_NEW_ITEM = _statement("store_new_item", ["container", "key", "value", "known"],
                            "store_new_item(container, key, value, known)")


@functools.cache
def store_field_op(name: str) -> Op:
    """``obj.name = value`` on an object the caller passed (``op.field``: the name)."""
    op = _statement("store_field", ["obj", "value"], f"obj.{name} = value")
    op.field = name
    return op


__all__ = ["APPEND_ITEM", "STORE_ITEM", "STORE_NEW_ITEM", "store_field_op"]
