"""Small NumPy helpers that generated derivatives call by name.

They exist only where one static formula cannot cover every case the
compiler must accept without knowing shapes (``unbroadcast``, the matmul
adjoints for 1-D/2-D/batched operands) or where a direct formula would be
wrong (``product_of_others`` is exact when an element is zero). Each is a few
lines of plain NumPy that a reader can look up.

>>> import numpy as np
>>> unbroadcast(np.ones((4, 3)), np.zeros((1, 3))).tolist()
[[4.0, 4.0, 4.0]]
"""

from __future__ import annotations

import numpy as np

from autodiff.errors import AutodiffError, NonScalarOutputError


def unbroadcast(g, x):
    """Sum ``g`` over the axes along which ``x`` was broadcast, giving ``x``'s shape."""
    return unbroadcast_to(g, x.shape if type(x) is np.ndarray else np.shape(x))


def unbroadcast_to(g, shape):
    """Sum ``g`` over the axes along which an array of ``shape`` was broadcast."""
    if (g.shape if type(g) is np.ndarray else np.shape(g)) == shape:
        return g
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=0 if extra == 1 else tuple(range(extra)))
    if g.shape != shape:
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        if g.shape != shape:
            g = np.broadcast_to(g, shape)
    return g


def expand_reduced(g, axis, keepdims):
    """Re-insert the axes a reduction removed, so ``g`` broadcasts against its input."""
    if keepdims or axis is None:
        return g
    return np.expand_dims(g, axis)


def reduced_size(a, axis):
    """How many elements of ``a`` each result of a reduction over ``axis`` combines."""
    if axis is None:
        return np.size(a)
    shape = np.shape(a)
    axes = axis if isinstance(axis, tuple) else (axis,)
    return int(np.prod([shape[k] for k in axes]))


def product_of_others(a, axis):
    """For each element, the product of the others along ``axis``; exact with zeros."""
    a = np.asarray(a)
    if axis is None:
        return product_of_others(a.reshape(-1), 0).reshape(a.shape)
    axes = tuple(k % a.ndim for k in (axis if isinstance(axis, tuple) else (axis,)))
    rest = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, rest + list(axes))
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (before * after).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + list(axes)))


def matmul_grad_lhs(g, a, b):
    """Adjoint of ``a`` in ``a @ b`` for 1-D, 2-D and batched operands."""
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    if a_ndim == 2 and b_ndim == 2:
        return g @ b.T
    if b_ndim == 1:
        if a_ndim == 1:
            return g * b
        if a_ndim == 2:  # matrix times vector: an outer product
            return g[:, None] * b
        return unbroadcast(g[..., None] * b, a)
    if a_ndim == 1:
        return unbroadcast((b @ g[..., None])[..., 0], a)
    return unbroadcast(g @ np.swapaxes(b, -1, -2), a)


def matmul_grad_rhs(g, a, b):
    """Adjoint of ``b`` in ``a @ b`` for 1-D, 2-D and batched operands."""
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    if a_ndim == 2 and b_ndim == 2:
        return a.T @ g
    if a_ndim == 1:
        if b_ndim == 1:
            return g * a
        if b_ndim == 2:  # vector times matrix: an outer product
            return a[:, None] * g
        return unbroadcast(a[:, None] * g[..., None, :], b)
    if b_ndim == 1:
        if a_ndim == 2:
            return g @ a
        return unbroadcast((np.swapaxes(a, -1, -2) @ g[..., None])[..., 0], b)
    return unbroadcast(np.swapaxes(a, -1, -2) @ g, b)


def _ndim(a) -> int:
    return a.ndim if type(a) is np.ndarray else np.ndim(a)


def dot_grad_lhs(g, a, b):
    """Adjoint of ``a`` in ``np.dot(a, b)`` (scalars, 1-D and 2-D operands)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    _require_matrix_dot(a, b)
    return matmul_grad_lhs(g, a, b)


def dot_grad_rhs(g, a, b):
    """Adjoint of ``b`` in ``np.dot(a, b)`` (scalars, 1-D and 2-D operands)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    _require_matrix_dot(a, b)
    return matmul_grad_rhs(g, a, b)


def _require_matrix_dot(a, b) -> None:
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise AutodiffError(
            "the gradient of np.dot is implemented for operands of at most 2 dimensions",
            hint="use np.matmul (or @) for stacks of matrices",
        )


def inner_grad_lhs(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    a_lead = np.ndim(a) - 1
    return np.tensordot(g, b, axes=(list(range(a_lead, np.ndim(g))), list(range(np.ndim(b) - 1))))


def inner_grad_rhs(g, a, b):
    """Adjoint of ``b`` in ``np.inner(a, b)``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    a_lead = np.ndim(a) - 1
    return np.tensordot(g, a, axes=(list(range(a_lead)), list(range(a_lead))))


def split_like(g, arrays, axis):
    """Cut the adjoint of ``np.concatenate(arrays, axis)`` back into one piece per array."""
    if axis is None:
        sizes = [np.size(x) for x in arrays]
        pieces = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        return [p.reshape(np.shape(x)) for p, x in zip(pieces, arrays)]
    sizes = [np.shape(x)[axis] for x in arrays]
    return np.split(g, np.cumsum(sizes)[:-1], axis=axis)


def unstack(g, axis):
    """Adjoints of the arrays given to ``np.stack(arrays, axis)``."""
    return list(np.moveaxis(g, axis, 0))


def within_bounds(a, low, high):
    """Mask of the elements of ``a`` that ``np.clip(a, low, high)`` leaves unchanged."""
    inside = True
    if low is not None:
        inside = inside & (a >= low)
    if high is not None:
        inside = inside & (a <= high)
    return inside


def inverse_permutation(axes):
    """The axes that undo ``np.transpose(x, axes)``; ``None`` stays ``None``."""
    return None if axes is None else tuple(int(k) for k in np.argsort(axes))


def scalar_output_seed(out, where):
    """The seed 1.0 of a reverse sweep, after checking ``out`` is a scalar."""
    if type(out) is float:
        return 1.0
    if np.size(out) != 1:
        _non_scalar_output(np.shape(out), where)
    return np.ones(np.shape(out)) if np.ndim(out) else 1.0


def _non_scalar_output(shape, where: str):
    filename, _, lineno = where.rpartition(":")
    raise NonScalarOutputError(
        f"grad needs a scalar output, but the function returns an array of shape {shape}",
        filename=filename or None, lineno=int(lineno) if lineno.isdigit() else None,
        hint="reduce it (np.sum, np.mean) or use a vector-Jacobian product (ad.vjp)",
    )


def as_gradient_of(g, x, where=None):
    """Give the gradient ``g`` the kind, shape and floating dtype of the argument ``x``.

    A Python float or int argument gets a Python float; an array gets a fresh,
    writable array of its own shape, in its floating dtype (float64 for integers).
    ``where`` is given when ``x`` has the shape of the function's output, which
    must then be a scalar: it names the return statement for the error.
    """
    if where is not None and np.size(x) != 1:
        _non_scalar_output(np.shape(x), where)
    if type(x) is np.ndarray:
        if (type(g) is np.ndarray and g.base is None and g.dtype is x.dtype
                and g.shape == x.shape and g is not x and g.flags.writeable
                and x.dtype.kind in "fc"):
            return g  # the common case, checked with the cheapest tests first
        dtype = x.dtype if x.dtype.kind in "fc" else _FLOAT64
        if (type(g) is np.ndarray and g.dtype == dtype and g.shape == x.shape
                and g.base is None and g is not x and g.flags.writeable):
            return g
        return np.array(np.broadcast_to(g, x.shape), dtype=dtype)
    if isinstance(x, (float, int)):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    # NumPy scalars (np.float32(1.0)) keep their type; anything else array-like
    # (a list) gets a float64 array of its shape.
    dtype = np.result_type(x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = _FLOAT64
    if isinstance(x, np.generic):
        return dtype.type(np.sum(g) if np.ndim(g) else g)
    return np.array(np.broadcast_to(g, np.shape(x)), dtype=dtype)


_FLOAT64 = np.dtype(np.float64)


def einsum_grads(g, subscripts, operands):
    """Adjoints of every operand of ``np.einsum(subscripts, *operands)``.

    Each is an einsum of the output adjoint with the other operands; a label
    that only its own operand carries (summed away) is broadcast back, and a
    repeated label (a diagonal) is scattered back onto the diagonal.
    """
    inputs, output = _parse_einsum(subscripts, operands)
    grads = []
    for k, (labels, operand) in enumerate(zip(inputs, operands)):
        others = [(lab, op) for j, (lab, op) in enumerate(zip(inputs, operands)) if j != k]
        available = set(output).union(*(set(lab) for lab, _ in others))
        unique = "".join(dict.fromkeys(labels))
        kept = "".join(c for c in unique if c in available)
        spec = ",".join([output, *(lab for lab, _ in others)]) + "->" + kept
        partial = np.einsum(spec, g, *(op for _, op in others))
        for position, label in enumerate(unique):  # labels summed away: broadcast back
            if label not in available:
                partial = np.expand_dims(partial, position)
        sizes = {c: np.shape(operand)[labels.index(c)] for c in unique}
        partial = np.broadcast_to(partial, tuple(sizes[c] for c in unique))
        if unique != labels:  # a repeated label: put the values back on the diagonal
            full = np.zeros(np.shape(operand), dtype=partial.dtype)
            np.einsum(labels + "->" + unique, full)[...] = partial
            partial = full
        grads.append(partial)
    return tuple(grads)


def _parse_einsum(subscripts: str, operands) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise AutodiffError("the gradient of np.einsum does not support '...' subscripts yet",
                            hint="write out every axis label")
    inputs, _, output = spec.partition("->")
    labels = inputs.split(",")
    if not _:
        counts = {c: inputs.count(c) for c in inputs if c != ","}
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    if len(labels) != len(operands):
        raise AutodiffError(f"np.einsum subscripts {subscripts!r} name {len(labels)} operands, "
                            f"but {len(operands)} were given")
    return labels, output


def solve_grads(g, x, a, b):
    """Adjoints of ``a`` and ``b`` in ``x = np.linalg.solve(a, b)`` (b a vector or matrix)."""
    vector = np.ndim(b) == 1  # NumPy 2: only a 1-D b is a vector
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), g[..., None] if vector else g)
    xs = x[..., None] if vector else x
    ga = -gb @ np.swapaxes(xs, -1, -2)
    return ga, gb[..., 0] if vector else gb


# ----- lists and element updates -----


def setitem(a, index, value):
    """``a`` with ``a[index] = value``, as a new array."""
    a = a.copy()
    a[index] = value
    return a


def zero_at(g, index):
    """``g`` with the elements at ``index`` set to zero, as a new array."""
    g = np.array(g)
    g[index] = 0
    return g


def pop_last(items):
    """Remove and return the last item of a list (the adjoint of the last append)."""
    return items.pop()


def zero_adjoints(items):
    """Zero adjoints for the items of a list."""
    return [np.zeros_like(item, dtype=np.result_type(item, 1.0)) for item in items]


def add_lists(a, b):
    """Element-wise sum of two lists of adjoints."""
    return [x + y for x, y in zip(a, b)]


def sum_list_grad(g, items):
    """Adjoints of the items of ``sum(items)``: ``g`` summed to each item's shape."""
    return [unbroadcast(g, item) for item in items]


def list_index_grad(g, items, index):
    """Adjoint of a list whose element ``items[index]`` has adjoint ``g``."""
    grads = [np.zeros_like(item, dtype=np.result_type(g)) for item in items]
    grads[index] = grads[index] + g
    return grads
