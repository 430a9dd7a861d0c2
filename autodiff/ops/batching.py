"""Runtime helpers of batched tangents (``transforms/batching.py``), and those helpers as
ops: a batched value carries a leading axis of one example per basis tangent, the
per-example value behind it. The ops' own batched forms (``Op.defbatch``) call them.

>>> import numpy as np
>>> batch_aligned(np.ones((4, 3)), (np.ones((2, 3)),), (False,)).shape
(4, 1, 3)
>>> batch_axes(None, np.ones((4, 2, 3)))
(1, 2)
"""

from __future__ import annotations

import math
import operator

import numpy as np

from autodiff.ops import runtime
from autodiff.ops.registry import OPS, helper_op

_NUMBERS = (float, int, bool, complex)


def batch_like(tangents: tuple):
    """The first batched tangent of ``tangents`` (a tangent of a leaf without gradient is None):
    the batch's size and dtype are read from it."""
    for tangent in tangents:
        if tangent is not None:
            return tangent
    raise ValueError("a batched product needs at least one tangent")


def batch_broadcast(value, like):
    """``value``, the same for every example, as a batched value: a new array of
    ``len(like)`` copies (a Python number in the dtype it computes in with ``like``:
    float32 tangents stay float32); a list, tuple or dict item by item."""
    if value is None:
        return None
    if isinstance(value, list):
        return [batch_broadcast(item, like) for item in value]
    if isinstance(value, tuple):
        return tuple(batch_broadcast(item, like) for item in value)
    if isinstance(value, dict):
        return {key: batch_broadcast(item, like) for key, item in value.items()}
    if value.__class__ in _NUMBERS:
        value = np.asarray(value, dtype=runtime.dtype_with(value, like))
    else:
        value = np.asarray(value)
    out = np.empty((len(like), *value.shape), dtype=value.dtype)
    out[...] = value
    return out


def batch_zeros_like(a, dtype, like):
    """``np.zeros_like(a, dtype=dtype)`` for every example: a new array."""
    a = np.asarray(a)
    return np.zeros((len(like), *a.shape), dtype=a.dtype if dtype is None else dtype)


def batch_size(like) -> int:
    """How many examples a batched value holds."""
    return len(like)


def batch_aligned(t, others: tuple, batched: tuple):
    """The batched ``t`` with axes of length 1 after its batch axis, up to the rank of
    the result of an elementwise op of ``t`` and ``others`` (``batched`` says which of
    them carry a batch axis): NumPy then broadcasts each example with its own."""
    rank = t.ndim - 1
    full = max((np.ndim(o) - b for o, b in zip(others, batched)), default=0)
    if full <= rank:
        return t
    return t.reshape((t.shape[0], *(1,) * (full - rank), *t.shape[1:]))


def batch_axes(axis, a):
    """The axes of a batched ``a`` that ``axis`` names in each example: all but the
    batch axis for None, a non-negative axis one further, a negative one as it is."""
    if axis is None:
        return tuple(range(1, np.ndim(a)))
    if isinstance(axis, tuple):
        return tuple(batch_axes(item, a) for item in axis)
    axis = operator.index(axis)
    return axis + 1 if axis >= 0 else axis


def batch_example_axes(axis):
    """:func:`batch_axes` of an axis given as a constant (never None)."""
    if isinstance(axis, tuple):
        return tuple(batch_example_axes(item) for item in axis)
    return axis + 1 if axis >= 0 else axis


def batched_unbroadcast_to(g, shape):
    """:func:`runtime.unbroadcast_to` of each example of the batched ``g``."""
    shape = (g.shape[0], *shape)
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0:  # each example's leading axes summed: a product with ones, which NumPy
        # runs many times faster than a sum over axes between others
        kept = g.shape[1 + extra:]
        folded = g.reshape(g.shape[0], -1, math.prod(kept))
        g = (np.ones(folded.shape[1], dtype=g.dtype) @ folded).reshape(g.shape[0], *kept)
    elif extra < 0:
        g = g.reshape((g.shape[0], *(1,) * -extra, *g.shape[1:]))
    if g.shape != shape:
        axes = tuple(i for i, n in enumerate(shape) if i and n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
    return g


def batched_unbroadcast(g, x):
    """:func:`runtime.unbroadcast` of each example of the batched ``g``."""
    return batched_unbroadcast_to(g, np.shape(x))


def batched_broadcast_like(t, ans):
    """:func:`runtime.broadcast_like` of each example of the batched ``t``."""
    shape = np.shape(ans)
    t = batch_aligned(t, (ans,), (False,))
    full = (t.shape[0], *shape)
    return t if t.shape == full else np.broadcast_to(t, full)


def batched_as_gradient_of(g, x, where=None, complex_values=False):
    """:func:`runtime.as_gradient_of` of each example of the batched ``g``: a new array
    of ``(len(g),) + np.shape(x)`` in x's gradient dtype."""
    if where is not None and np.size(x) != 1:
        runtime.as_gradient_of(g[0], x, where)  # raises, naming the return statement
    if (type(x) is np.ndarray and type(g) is np.ndarray and g.base is None
            and g.dtype is x.dtype and g.shape[1:] == x.shape and x.dtype.kind == "f"
            and g.flags.writeable):
        return g  # the common case, checked with the cheapest tests first
    g = np.asarray(g)
    if runtime.is_complex(g):
        if not complex_values:
            raise runtime.complex_refused()
        if not runtime.is_complex(x):
            g = np.real(g)
    if isinstance(x, (float, int)) and not isinstance(x, (bool, np.generic)):
        dtype = np.dtype(np.float64)
    elif type(x) is complex:
        dtype = np.dtype(np.complex128)
    else:
        if np.result_type(x).kind not in "fiuc":
            runtime.as_gradient_of(g[0], x)  # raises: not differentiable
        dtype = runtime.gradient_dtype(x)
    shape = np.shape(x)
    if g.ndim - 1 > len(shape):  # a number's gradient: the sum of each example
        g = g.reshape(g.shape[0], -1).sum(axis=1) if not shape else batched_unbroadcast_to(g, shape)
    g = batch_aligned(g, (x,), (False,))
    return np.array(np.broadcast_to(g, (g.shape[0], *shape)), dtype=dtype)


def batched_matmul(a, b, a_batched: bool, b_batched: bool):
    """``a @ b`` of each example (``a_batched``, ``b_batched``: which carry the batch
    axis), in one product: a vector is a matrix of one row (or column) there, and the
    stacked axes of the two are aligned after the batch axis. A matrix or a vector
    beside batched matrices or vectors takes one matrix product, the batch folded into
    its rows (NumPy's stacked product would run one small product per example)."""
    if a_batched != b_batched and np.ndim(a if b_batched else b) == 2:
        if a_batched and 2 <= a.ndim <= 3:  # (n, [i,] k) @ (k, m)
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[-1])
        if b_batched and b.ndim == 2:  # (i, k) @ (n, k): (n, i)
            return b @ a.T
        if b_batched and b.ndim == 3:  # (i, k) @ (n, k, m): (n, i, m)
            n, k, m = b.shape
            folded = np.swapaxes(b, 1, 2).reshape(n * m, k) @ a.T
            return np.swapaxes(folded.reshape(n, m, a.shape[0]), 1, 2)
    a = a if a_batched else np.asarray(a)[None]
    b = b if b_batched else np.asarray(b)[None]
    vector_a, vector_b = a.ndim == 2, b.ndim == 2
    if vector_a:
        a = a[:, None, :]
    if vector_b:
        b = b[:, :, None]
    rank = max(a.ndim, b.ndim)
    a = a.reshape((a.shape[0], *(1,) * (rank - a.ndim), *a.shape[1:]))
    b = b.reshape((b.shape[0], *(1,) * (rank - b.ndim), *b.shape[1:]))
    out = a @ b
    if vector_a and vector_b:
        return out[..., 0, 0]
    if vector_a:
        return out[..., 0, :]
    if vector_b:
        return out[..., 0]
    return out


def _examples(fn, operands: tuple, batched: tuple):
    """``fn`` of each example, stacked."""
    count = next(len(o) for o, b in zip(operands, batched) if b)
    return np.stack([fn(*(o[i] if b else o for o, b in zip(operands, batched)))
                     for i in range(count)])


def batched_matmul_grad_lhs(g, a, b, g_batched: bool, b_batched: bool):
    """:func:`runtime.matmul_grad_lhs` of each example: one product for matrices."""
    if np.ndim(a) == 2 and g.ndim - g_batched == 2 and np.ndim(b) - b_batched == 2:
        return batched_matmul(g, np.swapaxes(b, -1, -2), g_batched, b_batched)
    return _examples(lambda g, b: runtime.matmul_grad_lhs(g, a, b), (g, b),
                     (g_batched, b_batched))


def batched_matmul_grad_rhs(g, a, b, g_batched: bool, a_batched: bool):
    """:func:`runtime.matmul_grad_rhs` of each example: one product for matrices."""
    if np.ndim(b) == 2 and g.ndim - g_batched == 2 and np.ndim(a) - a_batched == 2:
        return batched_matmul(np.swapaxes(a, -1, -2), g, a_batched, g_batched)
    return _examples(lambda g, a: runtime.matmul_grad_rhs(g, a, b), (g, a),
                     (g_batched, a_batched))


def batch_stacked(items: list):
    """The results of an op run once per example, stacked on a leading axis: arrays or
    numbers alike (a list or a tuple is refused, never stacked as an array)."""
    if any(isinstance(item, (list, tuple, dict)) for item in items):
        raise TypeError("an op run once per example gave a list or a tuple, not an array")
    return np.stack(items)


def batched_reshape(a, shape):
    """``np.reshape`` of each example of the batched ``a`` (C order)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return np.reshape(a, (a.shape[0], *shape))


_HELPER = "a helper of batched derivatives: user code never calls it"

for _fn in (batch_broadcast, batched_unbroadcast, batched_unbroadcast_to,
            batched_broadcast_like, batched_matmul, batched_reshape, batched_matmul_grad_lhs,
            batched_matmul_grad_rhs, batch_stacked, batch_zeros_like):
    helper_op(_fn, fresh=_fn is batch_broadcast, no_gradient=_HELPER, no_sympy=_HELPER)
for _fn in (batch_aligned,):
    helper_op(_fn, fresh=False, no_gradient=_HELPER, no_sympy=_HELPER)
helper_op(batched_as_gradient_of, fresh=True, floating="always", no_gradient=_HELPER,
          no_sympy=_HELPER)
for _fn in (batch_like, batch_size, batch_axes):
    helper_op(_fn, nondiff_output=True, fresh=False, floating=None, no_gradient=_HELPER,
              no_sympy=_HELPER)
for _name in ("batch_broadcast", "batched_unbroadcast", "batched_unbroadcast_to",
              "batched_broadcast_like", "batched_matmul", "batched_reshape", "batch_aligned",
              "batched_as_gradient_of", "batch_like", "batch_size", "batch_axes",
              "batched_matmul_grad_lhs", "batched_matmul_grad_rhs", "batch_stacked", "batch_zeros_like"):
    OPS[_name].outside_tables = "built by transforms/batching.py, never written as code"
