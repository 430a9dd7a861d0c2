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

import collections
import hashlib
import operator

import numpy as np

from autodiff import tree
from autodiff.tree import StructureError
from autodiff.user_code import is_user_class
from autodiff.errors import (
    ArgumentKindError,
    AutodiffError,
    NonDifferentiableError,
    NonScalarOutputError,
    UnsupportedSyntaxError,
)


def unbroadcast(g, x):
    """Sum ``g`` over the axes along which ``x`` was broadcast, giving ``x``'s shape."""
    kind = g.__class__
    if kind is x.__class__ and (kind is float or kind is np.ndarray and g.shape == x.shape):
        return g  # (two Python floats, or arrays of one shape: the common case, first)
    return unbroadcast_to(g, shape_of(x))


def unbroadcast_to(g, shape):
    """Sum ``g`` over the axes along which an array of ``shape`` was broadcast."""
    if shape_of(g) == shape:
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


_NUMBERS = (float, int, bool, complex)


def shape_of(a) -> tuple:
    """``np.shape(a)`` at the cost of an attribute read for an array or a number: the
    shapes a loop tapes at each step (``np.shape`` of a Python float builds an array).

    >>> shape_of(2.5), shape_of(np.zeros((2, 3)))
    ((), (2, 3))
    """
    kind = a.__class__
    if kind is np.ndarray:
        return a.shape
    if kind in _NUMBERS or isinstance(a, np.generic):
        return ()
    return np.shape(a)


def broadcast_like(t, ans):
    """``t`` broadcast to the shape of ``ans`` (a tangent takes its result's shape).

    A Python number takes the dtype it would compute in with ``ans`` (real for a
    real number): a float32 array's adjoint or tangent is float32, not float64."""
    shape = shape_of(ans)
    if shape_of(t) == shape:
        return t
    if t.__class__ in _NUMBERS:
        t = np.asarray(t, dtype=dtype_with(t, ans))
    return np.broadcast_to(t, shape)


def dtype_with(number, a):
    """The dtype of ``number * a`` for a Python number: ``a``'s for a float32 array
    and a float; float64 for an integer array; real for a real number."""
    if not isinstance(a, (np.ndarray, np.generic)):
        a = np.asarray(a)
    dtype = np.result_type(number, a)
    if dtype.kind == "c" and not isinstance(number, complex):
        return np.finfo(dtype).dtype
    return dtype


def zero_tangent(x):
    """A zero tangent (or adjoint) for ``x``: 0.0, float zeros of its shape, or a list;
    None for a slice or a string (an item of ``np.r_[...]``), which has none."""
    if isinstance(x, (list, tuple)):  # a list, or the gradients a helper returns together
        return [zero_tangent(item) for item in x]
    if isinstance(x, (slice, str)):
        return None
    if isinstance(x, (float, int)):
        return 0.0
    return np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))


def adjoint_dtype(g, a):
    """The dtype the adjoint ``g`` of ``a`` (or of a part of it) is written in: ``g``'s
    for an array, and for a Python number (the seed 1.0) the dtype it computes in with
    ``a``, float32 for a float32 array. Floating: float64 for integers."""
    if g.__class__ in _NUMBERS:
        return dtype_with(g if g.__class__ is complex else 1.0, a)
    return np.result_type(g, 1.0)


def count_true(mask, axis, keepdims, like):
    """How many elements of ``mask`` are True over ``axis``, in the floating dtype of
    ``like`` (float64 for integers): a share ``g / count`` of a float32 array's
    adjoint stays float32, where NumPy's int64 count would promote it to float64."""
    return np.sum(mask, axis=axis, keepdims=keepdims, dtype=np.result_type(like, 1.0))


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
    flat, restore = _reduced_axes_last(np.asarray(a), axis)
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return restore(before * after)


def product_of_others_jvp(t, a, axis):
    """Tangent of ``product_of_others(a, axis)`` along ``t``: for each element ``i``, the
    sum over the others ``j`` of ``t[j]`` times the product of all but ``i`` and ``j``.

    Exact with zeros, at the price of an ``n x n`` table per reduced group.
    """
    a = np.asarray(a)
    flat, restore = _reduced_axes_last(a, axis)
    flat_t, _ = _reduced_axes_last(np.broadcast_to(t, a.shape), axis)
    eye = np.eye(flat.shape[-1], dtype=bool)
    # Row i is a with a[i] set to 1: its products of others leave out i as well.
    rows = np.where(eye, 1, flat[..., None, :])
    pairs = np.where(eye, 0, product_of_others(rows, -1))
    return restore(np.sum(pairs * flat_t[..., None, :], axis=-1))


def _reduced_axes_last(a, axis):
    """``a`` with the axes ``axis`` reduces moved last and merged into one, and the
    function that puts an array of that layout back into ``a``'s."""
    if axis is None:
        return a.reshape(-1), lambda flat: flat.reshape(a.shape)
    axes = [k % a.ndim for k in (axis if isinstance(axis, tuple) else (axis,))]
    rest = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, rest + axes)
    order = np.argsort(rest + axes)
    return (moved.reshape(moved.shape[: len(rest)] + (-1,)),
            lambda flat: np.transpose(flat.reshape(moved.shape), order))


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


def matmul_grad_lhs_of_steps(gs, a, bs):
    """The sum over a loop's steps of ``matmul_grad_lhs(g, a, b)``, given the steps'
    ``gs`` and ``bs`` (one item a step): one matrix product where ``a`` is a matrix and
    every ``g`` and ``b`` are vectors (a sum of outer products) or every one a matrix,
    as a hand-written backpropagation through time does.

    >>> matmul_grad_lhs_of_steps([np.ones(2), np.ones(2)], np.zeros((2, 3)),
    ...                          [np.arange(3.0), np.ones(3)]).tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    if _ndim(a) == 2 and gs:
        ranks = _ranks(gs, bs)
        if ranks == {1}:
            return np.stack(gs, axis=1) @ np.stack(bs)
        if ranks == {2}:
            return np.concatenate(gs, axis=1) @ np.concatenate(bs, axis=1).T
    return _sum_of_steps(matmul_grad_lhs, gs, bs, a, first=False)


def matmul_grad_rhs_of_steps(gs, as_, b):
    """The sum over a loop's steps of ``matmul_grad_rhs(g, a, b)``: see
    :func:`matmul_grad_lhs_of_steps`.

    >>> matmul_grad_rhs_of_steps([np.ones(2), np.ones(2)], [np.arange(3.0), np.ones(3)],
    ...                          np.zeros((3, 2))).tolist()
    [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    """
    if _ndim(b) == 2 and gs:
        ranks = _ranks(gs, as_)
        if ranks == {1}:
            return np.stack(as_, axis=1) @ np.stack(gs)
        if ranks == {2}:
            return np.concatenate(as_, axis=0).T @ np.concatenate(gs, axis=0)
    return _sum_of_steps(matmul_grad_rhs, gs, as_, b, first=True)


def _ranks(*lists) -> set:
    """The ranks of the arrays in ``lists`` (None for anything else)."""
    return {item.ndim if type(item) is np.ndarray else None for items in lists
            for item in items}


def _sum_of_steps(adjoint, gs, steps, fixed, first: bool):
    """``adjoint(g, step, fixed)`` (or ``adjoint(g, fixed, step)``) summed over the steps;
    zeros of ``fixed``'s shape for none."""
    total = None
    for g, item in zip(gs, steps):
        part = adjoint(g, item, fixed) if first else adjoint(g, fixed, item)
        total = part if total is None else total + part
    if total is None:
        return np.zeros(np.shape(fixed), dtype=np.result_type(fixed, 1.0))
    return total


def _ndim(a) -> int:
    return a.ndim if type(a) is np.ndarray else np.ndim(a)


def dot_grad_lhs(g, a, b):
    """Adjoint of ``a`` in ``np.dot(a, b)``, which sums over the last axis of ``a`` and
    the second-to-last of ``b`` (its only one if 1-D): the others of ``b`` are summed
    against ``g``'s trailing axes."""
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    if a_ndim == 0 or b_ndim == 0:
        return unbroadcast(g * b, a)
    if a_ndim <= 2 and b_ndim <= 2:
        return matmul_grad_lhs(g, a, b)
    joined = b_ndim - 2 if b_ndim >= 2 else 0
    free = [k for k in range(b_ndim) if k != joined]
    return np.tensordot(g, b, axes=(list(range(a_ndim - 1, np.ndim(g))), free))


def dot_grad_rhs(g, a, b):
    """Adjoint of ``b`` in ``np.dot(a, b)`` (see :func:`dot_grad_lhs`)."""
    a_ndim, b_ndim = _ndim(a), _ndim(b)
    if a_ndim == 0 or b_ndim == 0:
        return unbroadcast(g * a, b)
    if a_ndim <= 2 and b_ndim <= 2:
        return matmul_grad_rhs(g, a, b)
    lead = list(range(a_ndim - 1))
    summed = np.tensordot(a, g, axes=(lead, lead))  # the joined axis first, then b's others
    return np.moveaxis(summed, 0, b_ndim - 2 if b_ndim >= 2 else 0)


def trace_grad(g, a, offset, axis1, axis2):
    """Adjoint of ``a`` in ``np.trace(a, offset, axis1, axis2)``: ``g`` on the diagonal
    of the two axes, for every index of the others."""
    shape = shape_of(a)
    ndim = len(shape)
    first, second = axis1 % ndim, axis2 % ndim
    dtype = adjoint_dtype(g, a)
    g = np.asarray(g, dtype=dtype) if g.__class__ in _NUMBERS else g
    eye = np.eye(shape[first], shape[second], offset, dtype=dtype)
    if first > second:
        eye = eye.T
    layout = [1] * ndim
    layout[first], layout[second] = shape[first], shape[second]
    return np.expand_dims(g, (min(first, second), max(first, second))) * eye.reshape(layout)


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


def linspace_grads(g, start, stop, num, endpoint, axis):
    """Adjoints of ``start`` and ``stop`` in ``np.linspace(start, stop, num, endpoint=endpoint,
    axis=axis)``, which is ``start * (1 - f) + stop * f`` with fractions ``f`` from 0 to 1."""
    shape = np.broadcast_shapes(shape_of(start), shape_of(stop))
    f = np.linspace(np.zeros(shape), np.ones(shape), num, endpoint=endpoint, axis=axis)
    return (unbroadcast(np.sum(g * (1.0 - f), axis=axis), start),
            unbroadcast(np.sum(g * f, axis=axis), stop))


def _index_concatenation(items, kind):
    """The indexer (``np.r_`` or ``np.c_``), its directive string or None, the axis it
    joins along, and the items after the directive."""
    indexer, axis = (np.r_, 0) if kind == "r" else (np.c_, -1)
    directive = None
    if len(items) and isinstance(items[0], str):
        directive, items = items[0], items[1:]
        axis = int(directive.split(",")[0])
    return indexer, directive, axis, items


def index_concatenation_grads(g, items, kind):
    """Adjoints of the items of ``np.r_[items]`` (``kind`` "r") or ``np.c_[items]`` ("c").

    Each item is upgraded on its own (a scalar to 1-D, for ``np.c_`` a vector to a
    column) and the upgraded items are joined along one axis: the adjoint is cut
    along that axis and each piece given back its item's shape. Slices and the
    directive string get None.
    """
    indexer, directive, axis, rest = _index_concatenation(items, kind)
    sizes = []
    for item in rest:
        key = (item,) if directive is None else (directive, item)
        sizes.append(np.shape(indexer[key])[axis])
    pieces = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    grads = [None if isinstance(item, (slice, str)) else np.reshape(piece, np.shape(item))
             for piece, item in zip(pieces, rest)]
    return grads if directive is None else [None, *grads]


def index_concatenation_tangent(t, items, kind):
    """Tangent of ``np.r_[items]`` / ``np.c_[items]`` given one tangent per item (None or
    anything for a slice or the directive, which are constants)."""
    indexer = np.r_ if kind == "r" else np.c_
    parts = []
    for tangent, item in zip(t, items):
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, slice):
            parts.append(np.zeros(len(np.r_[item])))
        else:
            parts.append(tangent)
    return indexer[tuple(parts)]


def unstack(g, axis):
    """Adjoints of the arrays given to ``np.stack(arrays, axis)``."""
    return list(np.moveaxis(g, axis, 0))


def larger_share(x1, x2):
    """``x1``'s share of the gradient of ``np.maximum(x1, x2)``: 1 where ``x1 > x2``, 0.5
    where they tie (split evenly, as JAX does), 0 elsewhere; in the floating dtype the
    two compute in (float32 for float32 arrays: a float64 share would promote the
    adjoint it weighs), a Python float for two numbers."""
    tie = x1 == x2
    if x1.__class__ in _NUMBERS and x2.__class__ in _NUMBERS:
        return (x1 > x2) + 0.5 * tie
    return (x1 > x2) + np.result_type(x1, x2, 1.0).type(0.5) * tie


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


def unit_seed(out):
    """1.0 in the dtype of the scalar output ``out``: a Python float for float64 (so that
    the sweep's arithmetic on numbers stays Python's), np.float32(1.0) for float32, and
    an array of ones for an array of one element."""
    dtype = dtype_with(1.0, out)
    if np.ndim(out):
        return np.ones(np.shape(out), dtype=dtype)
    return 1.0 if dtype == _FLOAT64 else dtype.type(1.0)


def scalar_output_seed(out, where):
    """The seed 1.0 of a reverse sweep, after checking ``out`` is a scalar."""
    if type(out) is float:
        return 1.0
    if np.size(out) != 1:
        _non_scalar_output(np.shape(out), where)
    return unit_seed(out)


def covers_unrolled(length, count, what):
    """``length``, the number of items ``zip()`` takes from an array's rows or a range,
    checked to cover the ``count`` items a dict comprehension over it unrolled while
    compiling (its keys are fixed then; Python's zip would stop sooner)."""
    if length < count:
        raise UnsupportedSyntaxError(
            f"a dict comprehension over '{what}' has {count} keys fixed while compiling, but "
            f"zip() stops after {length} when the code runs",
            hint="zip the keys with as many rows as there are keys")
    return length


def settings_digest(obj) -> str:
    """A short text that changes when what a derivative reading the object ``obj`` (a
    global model) fixed while compiling changes: its structure (attributes, lengths of
    lists, classes of its parts) and its leaves other than float arrays and numbers
    (strings, ints, flags, functions; the kind alone of an int array or another
    object). Float arrays and numbers are read when the derivative runs. (A walk of
    its own, a few microseconds for a model: it runs at each call.)"""
    parts: list = []
    _settings_of(obj, parts, 0)
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


# Classes whose objects are structures of their attributes (the user's), by class.
_STRUCTURE_CLASSES: dict[type, bool] = {}
_FLOATS = (float, complex)
_SETTINGS = (bool, int, str, bytes, type(None))


def _settings_of(value, parts: list, depth: int) -> None:
    kind = type(value)
    if kind in _FLOATS:
        parts.append(0)
    elif kind is np.ndarray or isinstance(value, np.generic):
        parts.append(0 if value.dtype.kind in "fc" else value.dtype.kind)
    elif kind in _SETTINGS:
        parts.append(value)
    elif depth > 64:  # (an object referring back to itself)
        parts.append(...)
    elif kind is list or kind is tuple or kind is dict or issubclass(kind, (dict, list, tuple)):
        dictionary = issubclass(kind, dict)
        parts.append((kind.__qualname__, tuple(value) if dictionary else len(value)))
        for item in (value.values() if dictionary else value):
            _settings_of(item, parts, depth + 1)
    elif hasattr(value, "__code__"):  # a function: which one, by its code
        code = value.__code__
        parts.append((value.__qualname__, code.co_filename, code.co_firstlineno))
    elif _is_structure_class(kind):
        attributes = object.__getattribute__(value, "__dict__")
        parts.append((kind.__module__, kind.__qualname__, tuple(attributes)))
        for item in attributes.values():
            _settings_of(item, parts, depth + 1)
    elif callable(value):
        parts.append(repr(value))
    else:
        parts.append((kind.__module__, kind.__qualname__))


def _is_structure_class(kind: type) -> bool:
    found = _STRUCTURE_CLASSES.get(kind)
    if found is None:
        found = _STRUCTURE_CLASSES[kind] = bool(getattr(kind, "__dictoffset__", 0)) and (
            not issubclass(kind, type)) and is_user_class(kind)
    return found


def settings_unchanged(obj, digest, name):
    """``obj``, the object the global or closure variable ``name`` holds, checked to have
    the settings (``digest``, :func:`settings_digest`) a derivative reading it was
    compiled for: never computing with settings it no longer holds."""
    if settings_digest(obj) != digest:
        raise StructureError(
            f"'{name}' holds an object whose settings (its strings, ints, flags, functions, "
            "or the attributes and parts it holds) changed after this derivative was "
            "compiled, and the derivative computes with the settings it had then",
            hint=f"pass {name} to the function as an argument: a derivative is compiled "
            "for the settings each call passes")
    return obj


def vjp_seed(seed, out, where):
    """The seed of a vector-Jacobian product: of the output's shape, or omitted
    (``None``) for a scalar output, which then means 1.0."""
    if seed is None:
        if type(out) is float:
            return 1.0
        if np.size(out) != 1:
            filename, _, lineno = where.rpartition(":")
            raise NonScalarOutputError(
                f"a vjp without a seed needs a scalar output, but the function returns an "
                f"array of shape {np.shape(out)}", filename=filename or None,
                lineno=int(lineno) if lineno.isdigit() else None,
                hint="pass seed=, an array of the output's shape")
        return unit_seed(out)
    if np.shape(seed) != np.shape(out):
        filename, _, lineno = where.rpartition(":")
        raise AutodiffError(
            f"the seed has shape {np.shape(seed)}, but the output it weighs has shape "
            f"{np.shape(out)}", filename=filename or None,
            lineno=int(lineno) if lineno.isdigit() else None,
            hint="pass a seed of the output's shape (a tuple of them for a tuple output)")
    return seed


def filled_seed(seed, out, where):
    """The seed of a vector-Jacobian product of a function returning a tuple, its parts
    given as ``None`` (an output weighed by no seed: the cache beside ``(out, cache)``)
    filled with zeros of those outputs' shapes, as PyTorch's ``backward`` takes ``None``
    for an output that needs no gradient."""
    if type(seed) not in (tuple, list) or len(seed) != len(out):
        filename, _, lineno = where.rpartition(":")
        given = "no seed" if seed is None else (
            f"a seed of {len(seed)} parts" if type(seed) in (tuple, list)
            else f"a seed of shape {np.shape(seed)}")
        raise AutodiffError(
            f"the function returns a tuple of {len(out)} outputs, and was given {given}",
            filename=filename or None, lineno=int(lineno) if lineno.isdigit() else None,
            hint="pass a tuple seed, one part per output (None for an output that "
                 "carries no seed)")
    return tuple(_zeros_like_output(part) if given is None else
                 filled_seed(given, part, where) if type(part) is tuple else given
                 for given, part in zip(seed, out))


def _zeros_like_output(out):
    if type(out) in (list, tuple):
        return type(out)(zero_adjoints(out))
    if isinstance(out, (np.ndarray, np.generic, float, int, complex)):
        return zero_adjoints([out])[0]
    return tree.map(lambda leaf: zero_adjoints([leaf])[0], out)


def vjp_structured_seed(seed, out, where):
    """The seed of a vector-Jacobian product of a function returning a structure (a
    dict, a list of arrays, ...): a structure of the same keys and nesting, each leaf
    of its output's shape (each leaf is then checked as :func:`vjp_seed` checks it)."""
    expected = tree.structure(out)
    if seed is None or tree.structure(seed) != expected:
        filename, _, lineno = where.rpartition(":")
        given = "no seed" if seed is None else f"a seed of structure {tree.structure(seed)}"
        raise AutodiffError(
            f"the function returns a structure, {expected}, and was given {given}",
            filename=filename or None, lineno=int(lineno) if lineno.isdigit() else None,
            hint="pass a seed with the output's keys and nesting, an array of each "
                 "output leaf's shape in it (ad.tree.map(np.ones_like, out) weighs all)")
    return seed


def _non_scalar_output(shape, where: str):
    filename, _, lineno = where.rpartition(":")
    raise NonScalarOutputError(
        f"grad needs a scalar output, but the function returns an array of shape {shape}",
        filename=filename or None, lineno=int(lineno) if lineno.isdigit() else None,
        hint="reduce it (np.sum, np.mean) or use a vector-Jacobian product (ad.vjp)",
    )


def as_gradient_of(g, x, where=None, complex_values=False):
    """Give the gradient ``g`` the kind, shape and floating dtype of the argument ``x``.

    A Python float or int argument gets a Python float; an array gets a fresh,
    writable array of its own shape, in its floating dtype (float64 for integers).
    ``where`` is given when ``x`` has the shape of the function's output, which
    must then be a scalar: it names the return statement for the error.
    A complex argument's gradient is complex (df/dx - i df/dy, the convention of JAX
    and autograd). ``complex_values``: the derivative computes with complex values
    (see ``Op.rules_for``), and a real argument's gradient is the real part of ``g``;
    else a complex ``g`` is refused: the derivative's rules are real ones.
    """
    if where is not None and np.size(x) != 1:
        _non_scalar_output(np.shape(x), where)
    if type(x) is np.ndarray:
        if (type(g) is np.ndarray and g.base is None and g.dtype is x.dtype
                and g.shape == x.shape and g is not x and g.flags.writeable
                and x.dtype.kind == "f"):
            return g  # the common case, checked with the cheapest tests first
        if x.dtype.kind not in "fiuc":
            _not_differentiable(x)
        g = _real_part(g, x, complex_values)
        dtype = gradient_dtype(x)
        if (type(g) is np.ndarray and g.dtype == dtype and g.shape == x.shape
                and g.base is None and g is not x and g.flags.writeable):
            return g
        return np.array(np.broadcast_to(g, x.shape), dtype=dtype)
    g = _real_part(g, x, complex_values)
    if isinstance(x, (float, int)) and not isinstance(x, (bool, np.generic)):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    if type(x) is complex:
        return complex(np.sum(g)) if np.ndim(g) else complex(g)
    # NumPy scalars (np.float32(1.0)) keep their type.
    if not isinstance(x, np.generic) or x.dtype.kind not in "fiuc":
        _not_differentiable(x)
    return gradient_dtype(x).type(np.sum(g) if np.ndim(g) else g)


def _real_part(g, x, complex_values: bool):
    """``g``, the gradient of ``x``: its real part for a real ``x`` (when the derivative
    computes with complex values), refused when complex in a derivative that does not."""
    if not is_complex(g):
        return g
    if not complex_values:
        raise complex_refused()
    return g if is_complex(x) else np.real(g)


def is_complex(value) -> bool:
    """Whether ``value`` is a complex number or array."""
    return isinstance(value, complex | np.complexfloating) or getattr(
        getattr(value, "dtype", None), "kind", "") == "c"


def complex_refused() -> ArgumentKindError:
    """The error for a complex value in a derivative compiled for real values."""
    return ArgumentKindError(
        "a complex value reached a gradient that this derivative computes for real values: "
        "the function's output is complex, and grad differentiates a real output, or the "
        "function computed with complex values it did not get from its arguments (a "
        "global, a function autodiff calls as it is)",
        hint="return a real value (np.real(z), np.abs(z) ** 2), use ad.vjp with a seed "
        "for a complex output, and pass complex data as an argument")


def complex_values(*values) -> bool:
    """Whether any of ``values`` is complex: the first line of a derivative compiled for
    real values hands such calls to the one compiled for complex values."""
    for value in values:
        if is_complex(value):
            return True
    return False


def complex_among(values) -> bool:
    """Whether a leaf of ``values`` (arrays, numbers, structures of them) is complex."""
    return any(is_complex(leaf) for leaf in tree.leaves(values))


def real_output(out, where):
    """``out``, checked to be real: grad differentiates a real output."""
    if is_complex(out):
        filename, _, lineno = where.rpartition(":")
        raise ArgumentKindError(
            "grad needs a real output, but the function returns a complex value",
            filename=filename or None, lineno=int(lineno) if lineno.isdigit() else None,
            hint="return np.real(z), np.abs(z) ** 2 or another real function of it, or use "
            "ad.vjp with a complex seed")
    return out


def real_operands(values: tuple, what: str) -> None:
    """Refuse complex ``values``, the operands of an op whose rules hold for real values
    alone (``what`` names the op), in a derivative that computes with complex values."""
    for value in values:
        if is_complex(value):
            raise NonDifferentiableError(
                f"{what} of complex values is not differentiated: its rules hold for real "
                "values alone", hint="compute this part from real values, or write it with "
                "ops differentiated for complex values")


def real_tangents(pairs: tuple) -> None:
    """Refuse a complex tangent for a real argument (``pairs``: argument, tangent)."""
    for value, tangent in pairs:
        if is_complex(tangent) and not is_complex(value):
            raise ArgumentKindError(
                "the tangent of a real argument is complex",
                hint="pass a real tangent for a real argument (a complex one for a complex "
                "argument)")


def gradient_dtype(x) -> np.dtype:
    """The dtype of the gradient of ``x``: its own when floating or complex, float64 for
    integers and Python numbers (a 0-d float32 array has a float32 gradient)."""
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None and dtype.kind in "fc" else _FLOAT64


def _not_differentiable(x):
    raise not_differentiable(x)


STRUCTURES = (list, tuple, dict)


def not_differentiable(x) -> ArgumentKindError:
    """The error for differentiating with respect to ``x``, which has no gradient."""
    kind = f"{x.dtype} array" if isinstance(x, np.ndarray) else type(x).__name__
    if isinstance(x, STRUCTURES):  # (a derivative made for arrays alone: a rule's)
        return ArgumentKindError(
            f"cannot differentiate with respect to an argument, a {kind}, here: this "
            "derivative takes arrays and numbers",
            hint="ad.grad, ad.vjp, ad.jvp, ad.hvp and ad.jacobian take dicts, lists and "
            "tuples; or pass each array as an argument of its own")
    return ArgumentKindError(
        f"cannot differentiate with respect to an argument, a {kind}: only floats, "
        "ints and arrays of them have gradients",
        hint="pass the value as a float array, or leave the argument out of wrt")


_FLOAT64 = np.dtype(np.float64)


def with_fields(like, **fields):
    """A copy of the dataclass or object ``like`` with ``fields`` set to other values
    (a gradient with respect to a model is the model's copy holding its gradients);
    its class's ``__init__`` is not run, and frozen dataclasses are copied too. An
    attribute ``fields`` does not name (one the differentiated call set on the
    object: ``self.cache = (x, h)``) is ``None`` in the copy, as a leaf with no
    gradient is: never the forward value it holds."""
    made = object.__new__(type(like))
    if hasattr(like, "__dict__"):
        made.__dict__.update(dict.fromkeys(like.__dict__))
    for name, value in fields.items():
        object.__setattr__(made, name, value)
    return made


def dict_like(like, items):
    """A dict of ``like``'s own kind (an ``OrderedDict``, a ``defaultdict``) holding
    ``items``, a plain dict."""
    kind = type(like)
    if isinstance(like, collections.defaultdict):
        return kind(like.default_factory, items)
    return kind(items)


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
        # broadcast back where summed away; summed where the operand broadcast (an axis
        # of length 1 under an ellipsis)
        partial = unbroadcast_to(partial, tuple(sizes[c] for c in unique))
        if unique != labels:  # a repeated label: put the values back on the diagonal
            full = np.zeros(np.shape(operand), dtype=partial.dtype)
            np.einsum(labels + "->" + unique, full)[...] = partial
            partial = full
        grads.append(partial)
    return tuple(grads)


def einsum_grads_jvp(tangents, g, subscripts, operands):
    """Tangent of ``einsum_grads(g, subscripts, operands)`` along the operands' tangents.

    Each adjoint is linear in every other operand: its tangent is the sum, over the
    others, of the adjoint with that operand replaced by its tangent.
    """
    result = [zero_tangent(operand) for operand in operands]
    for j, tangent in enumerate(tangents):
        swapped = [*operands[:j], tangent, *operands[j + 1:]]
        for k, part in enumerate(einsum_grads(g, subscripts, swapped)):
            if k != j:
                result[k] = result[k] + part
    return tuple(result)


def einsum_grads_vjp(cotangents, g, subscripts, operands):
    """Adjoints of ``g`` and of the operands in ``einsum_grads(g, subscripts, operands)``,
    given one adjoint per result (one per operand).

    ``einsum_grads`` transposes each operand's slot of the einsum, so the adjoint of
    ``g`` is the einsum with that operand replaced by its result's adjoint, summed.
    """
    dg = 0.0
    doperands = [zero_tangent(operand) for operand in operands]
    for k, cotangent in enumerate(cotangents):
        swapped = [*operands[:k], cotangent, *operands[k + 1:]]
        dg = dg + np.einsum(subscripts, *swapped)
        for j, part in enumerate(einsum_grads(g, subscripts, swapped)):
            if j != k:
                doperands[j] = doperands[j] + part
    return dg, tuple(doperands)


def _parse_einsum(subscripts: str, operands) -> tuple[list[str], str]:
    """One label string per operand and the output's, with every axis named: the axes
    an ellipsis stands for get letters of their own, aligned from the right."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    labels = inputs.split(",")
    if len(labels) != len(operands):
        raise AutodiffError(f"np.einsum subscripts {subscripts!r} name {len(labels)} operands, "
                            f"but {len(operands)} were given")
    fill = ""
    if "." in spec:
        free = [c for c in _LETTERS if c not in spec]
        extra = [np.ndim(x) - len(lab.replace("...", "")) if "..." in lab else 0
                 for lab, x in zip(labels, operands)]
        most = max(extra)
        fill = "".join(free[:most])
        labels = [lab.replace("...", fill[most - n:]) for lab, n in zip(labels, extra)]
        output = output.replace("...", fill)
    if not arrow:
        joined = "".join(labels)
        counts = {c: joined.count(c) for c in joined}
        output = fill + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in fill))
    return labels, output


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def solve_grads(g, x, a, b):
    """Adjoints of ``a`` and ``b`` in ``x = np.linalg.solve(a, b)`` (b a vector or matrix)."""
    vector = np.ndim(b) == 1  # NumPy 2: only a 1-D b is a vector
    gb = np.linalg.solve(np.swapaxes(a, -1, -2), g[..., None] if vector else g)
    xs = x[..., None] if vector else x
    ga = -gb @ np.swapaxes(xs, -1, -2)
    return ga, gb[..., 0] if vector else gb


def solve_grads_jvp(grads, x, a, b, dx=None, da=None):
    """Tangent of ``solve_grads(g, x, a, b) = (ga, gb)`` along ``dx`` or ``da``.

    ``gb = solve(a.T, g)`` moves with ``a`` (``d gb = -solve(a.T, da.T @ gb)``) and
    ``ga = -gb @ x.T`` with both ``gb`` and ``x``.
    """
    vector = np.ndim(b) == 1
    gb = grads[1]
    gbs, xs = (gb[..., None], x[..., None]) if vector else (gb, x)
    dgb = np.zeros_like(gbs)
    dga = np.zeros_like(grads[0])
    if da is not None:
        dgb = -np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(da, -1, -2) @ gbs)
        dga = -dgb @ np.swapaxes(xs, -1, -2)
    if dx is not None:
        dxs = np.broadcast_to(dx, np.shape(x))
        dga = dga - gbs @ np.swapaxes(dxs[..., None] if vector else dxs, -1, -2)
    return dga, dgb[..., 0] if vector else dgb


def solve_grads_vjp(cotangents, grads, x, a, b):
    """Adjoints of ``g``, ``x`` and ``a`` in ``solve_grads(g, x, a, b) = (ga, gb)``,
    given the adjoints of ``ga`` and ``gb``."""
    vector = np.ndim(b) == 1
    gga, ggb = cotangents[0], cotangents[1]
    gb = grads[1]
    if vector:
        gb, x, ggb = gb[..., None], x[..., None], ggb[..., None]
    # <gga, ga> + <ggb, gb> = <ggb - gga @ x, gb> = <solve(a, ggb - gga @ x), g>
    u = np.linalg.solve(a, ggb - gga @ x)
    dx = -(np.swapaxes(gga, -1, -2) @ gb)
    da = -(gb @ np.swapaxes(u, -1, -2))
    return (u[..., 0], dx[..., 0], da) if vector else (u, dx, da)


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
    """Zero adjoints for the items of a list (a list of them for an item that is a list,
    a tuple for a tuple of intermediates: ``caches.append((h, a))``)."""
    return [zero_adjoint(item) for item in items]


def zero_adjoint(item, dtype=None):
    """The zero adjoint of one item: of its shape (a list or tuple of them for a list or
    a tuple), of ``dtype`` or of the item's floating kind; ``0.0`` for a Python number
    (``0j`` for a complex one), so that a loop over Python floats adds Python floats, not
    0-d arrays, several times slower.

    >>> zero_adjoint(2.5), zero_adjoint(np.arange(3))
    (0.0, array([0., 0., 0.]))
    """
    kind = item.__class__
    if kind in _NUMBERS and dtype is None:
        return 0j if kind is complex else 0.0
    if kind is list:
        return [zero_adjoint(part, dtype) for part in item]
    if kind is tuple:
        return tuple(zero_adjoint(part, dtype) for part in item)
    return np.zeros_like(item, dtype=dtype or np.result_type(item, 1.0))


def add_adjoints(a, b):
    """``a + b`` of two adjoints, item by item for lists and tuples of them (a tuple's
    ``+`` would join them)."""
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        return type(a)(add_adjoints(x, y) for x, y in zip(a, b))
    return a + b


def list_adjoint(g, items):
    """The adjoint ``g`` of a list the function built, as the backward sweep reads it:
    a list of its items' adjoints (a list of lists for a list of lists).

    An op that reads the list as an array (``np.sum(acc)``, ``np.array(rows)``) gives
    its adjoint as an array, or as a list of arrays one level deep; anything that is
    not a list at run time (a tuple of adjoints) is left as it is.
    """
    if type(items) is not list:
        return g
    if not isinstance(g, (list, tuple)) and np.ndim(g) == 0:
        g = [g] * len(items)  # one adjoint broadcast to every item
    return [list_adjoint(part, item) for part, item in zip(g, items)]


def list_adjoint_transpose(gg, g):
    """Adjoint of ``g`` in ``list_adjoint(g, items)``: ``gg`` (nested lists) in ``g``'s form."""
    if type(gg) is not list:
        return gg
    if isinstance(g, (list, tuple)):
        return [list_adjoint_transpose(a, b) for a, b in zip(gg, g)]
    return unbroadcast(np.array(gg), g)


def add_lists(a, b):
    """Element-wise sum of two lists of adjoints."""
    return [add_adjoints(x, y) for x, y in zip(a, b)]


def sum_list_grad(g, items):
    """Adjoints of the items of ``sum(items)``: ``g`` summed to each item's shape."""
    return [unbroadcast(g, item) for item in items]


def list_index_grad(g, items, index):
    """Adjoint of a list whose element ``items[index]`` has adjoint ``g``; for a slice,
    ``g`` is the list of the adjoints of the items it selects, each added at the
    position it was taken from (steps and negative bounds as Python slices them)."""
    if isinstance(index, slice):
        grads = [zero_adjoint(item) for item in items]
        for position, part in zip(range(len(items))[index], g):
            grads[position] = add_adjoints(grads[position], part)
        return grads
    dtype = None if type(g) in (list, tuple) or g.__class__ in _NUMBERS else np.result_type(g)
    grads = [zero_adjoint(item, dtype) for item in items]
    grads[index] = add_adjoints(grads[index], g)
    return grads


def listed_item_grad(g, a, index):
    """The adjoint of ``a`` (an item of a list built at run time: an array, or a tuple of
    intermediates) of which ``a[index]`` has the adjoint ``g``."""
    if type(a) is tuple or type(a) is list:
        return type(a)(g if k == index else zero_adjoint(part) for k, part in enumerate(a))
    grad = np.zeros_like(a, dtype=np.result_type(a, g))
    np.add.at(grad, index, g)
    return grad


def list_item(items, index):
    """``items[index]``: an item of a list, or a list of them for a slice."""
    return items[index]


def list_set(items, index, value):
    """A new list: ``items`` with ``items[index] = value``."""
    items = list(items)
    items[index] = value
    return items


def store_new_item(container, key, value, known):
    """``container[key] = value`` into a dict the caller passed, for a key known only when
    the code runs: never one of ``known``, the keys the derivative read as the call passed
    them (it would not see the new value)."""
    if key in known:
        raise StructureError(
            f"the code writes the key {key!r} into the dict the caller passed, whose item "
            f"{key!r} it reads as the call passed it: it would not see the new value; write "
            "keys the code does not read")
    container[key] = value


def repetitions(count):
    """``count`` as the number of times ``[*items] * count`` repeats a list: an int (an
    array, which NumPy would multiply the list by, is refused as Python's ``[None] *
    1.5`` is)."""
    return operator.index(count)


def list_repeat(items, count):
    """``[*items] * count``: a new list."""
    return [*items] * count


def repeated_items_grad(g, items):
    """Adjoints of the items of ``[*items] * count`` from ``g``, the list of adjoints
    of its positions: each item's is the sum of those of the positions it fills."""
    grads = []
    for k, item in enumerate(items):
        total = zero_tangent(item)
        for part in g[k::len(items)]:
            total = add_adjoints(total, part)
        grads.append(total)
    return grads


def suffix_scan(g, c):
    """``s`` with ``s[..., j] = g[..., j] + c[..., j] * s[..., j + 1]`` along the last
    axis (the last element is ``g``'s; ``c``'s last is unused): the running sums of
    a cumprod's adjoint, with no division, so exact where ``c`` has zeros.

    >>> suffix_scan(np.array([1.0, 1.0, 1.0]), np.array([2.0, 3.0, 0.0])).tolist()
    [9.0, 4.0, 1.0]
    """
    g, c = np.broadcast_arrays(g, c)
    s = np.array(g, dtype=np.result_type(g, c, 1.0))
    for j in range(s.shape[-1] - 2, -1, -1):
        s[..., j] += c[..., j] * s[..., j + 1]
    return s


def _order(a, axis, kth):
    """The permutation ``np.sort(a, axis)`` (stable) or, with ``kth``, ``np.partition(a,
    kth, axis)`` applies along an axis, and that axis (the last of the flattened ``a``
    for axis None)."""
    a = np.asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), -1
    if kth is None:
        return np.argsort(a, axis=axis, kind="stable"), axis
    return np.argpartition(a, kth, axis=axis), axis


def sorted_like(t, a, axis=-1, kth=None):
    """``t`` rearranged as ``np.sort(a, axis)`` (``np.partition(a, kth, axis)`` when
    ``kth`` is given) rearranges ``a``; tied elements keep their order (a stable sort).

    >>> sorted_like(np.array([10.0, 20.0, 30.0]), np.array([2.0, 3.0, 1.0])).tolist()
    [30.0, 10.0, 20.0]
    """
    order, along = _order(a, axis, kth)
    t = np.broadcast_to(t, shape_of(a))
    return np.take_along_axis(t.reshape(-1) if axis is None else t, order, along)


def unsorted_like(g, a, axis=-1, kth=None):
    """The inverse of :func:`sorted_like`: ``g``, laid out as ``np.sort(a, axis)`` lays
    out ``a``, put back where each element of ``a`` came from, in ``a``'s shape.

    >>> unsorted_like(np.array([30.0, 10.0, 20.0]), np.array([2.0, 3.0, 1.0])).tolist()
    [10.0, 20.0, 30.0]
    """
    order, along = _order(a, axis, kth)
    out = np.empty(order.shape, dtype=np.result_type(g, 1.0))
    np.put_along_axis(out, order, np.broadcast_to(g, order.shape), along)
    return out.reshape(shape_of(a))


def spread_weights(weights, a, axis):
    """``np.average``'s weights as it applies them to ``a``: as they are when of ``a``'s
    shape, else (1-D, along ``axis``) shaped to broadcast against ``a``.

    >>> spread_weights(np.array([1.0, 2.0]), np.zeros((3, 2)), 1).shape
    (1, 2)
    """
    weights = np.asarray(weights)
    if weights.shape == shape_of(a):
        return weights
    lined_up = np.reshape(weights, (1,) * (np.ndim(a) - 1) + weights.shape)
    return np.swapaxes(lined_up, -1, axis)


def unspread_weights(g, weights, axis):
    """The transpose of :func:`spread_weights`: ``g`` summed back to the weights' shape."""
    if shape_of(g) == shape_of(weights):
        return g
    return np.sum(np.reshape(np.moveaxis(g, axis, -1), (-1, shape_of(weights)[0])), axis=0)


def _quantile_layout(a, q, axis, keepdims, slope):
    """What np.quantile(a, q, axis) (method linear) reads of ``a``: ``a`` with the
    reduced axes last and merged, its function back, the stable sort order along that
    axis, the two sorted positions each ``q`` interpolates between and their weights
    (``slope``: the weights' derivatives in ``q``), and the result's shape."""
    a = np.asarray(a)
    flat, restore = _reduced_axes_last(a, axis)
    n = flat.shape[-1]
    position = np.asarray(q, dtype=float) * (n - 1)
    low = np.clip(np.floor(position).astype(int), 0, n - 1)
    high = np.minimum(low + 1, n - 1)
    if slope:
        weights = (np.full(position.shape, 1.0 - n), np.full(position.shape, n - 1.0))
    else:
        weights = (1.0 - (position - low), position - low)
    if keepdims:
        axes = range(a.ndim) if axis is None else [k % a.ndim for k in np.atleast_1d(axis)]
        rest = tuple(1 if k in axes else length for k, length in enumerate(a.shape))
    else:
        rest = flat.shape[:-1]
    order = np.argsort(flat, axis=-1, kind="stable")
    dtype = np.result_type(a, 1.0)  # float32 data interpolated in float32
    weights = tuple(np.asarray(weight, dtype=dtype) for weight in weights)
    return flat, restore, order, (low, high), weights, position.shape + rest


def quantile_select(t, a, q, axis=None, keepdims=False, slope=False):
    """``t``'s elements combined as ``np.quantile(a, q, axis, keepdims=keepdims)``
    combines ``a``'s (the two sorted elements each q interpolates between, with its
    weights; ``slope``: with their derivatives in q): the tangent of np.quantile.

    >>> quantile_select(np.array([10.0, 20.0, 30.0]), np.array([3.0, 1.0, 2.0]), 0.25).tolist()
    25.0
    """
    _, _, order, positions, weights, shape = _quantile_layout(a, q, axis, keepdims, slope)
    flat_t, _ = _reduced_axes_last(np.broadcast_to(t, np.shape(a)), axis)
    ordered = np.take_along_axis(flat_t, order, -1)
    picked = sum(ordered[..., where] * weight for where, weight in zip(positions, weights))
    leading = np.ndim(picked) - np.ndim(positions[0])
    picked = np.moveaxis(picked, list(range(leading, np.ndim(picked))),
                         list(range(np.ndim(picked) - leading)))
    return np.reshape(picked, shape)


def quantile_spread(g, a, q, axis=None, keepdims=False, slope=False):
    """The transpose of :func:`quantile_select`: each element of ``g`` given to the two
    elements of ``a`` its quantile interpolates between, with their weights; the
    gradient of np.quantile in ``a``.

    >>> quantile_spread(1.0, np.array([3.0, 1.0, 2.0]), 0.25).tolist()
    [0.0, 0.5, 0.5]
    """
    flat, restore, order, positions, weights, shape = _quantile_layout(a, q, axis, keepdims, slope)
    quantiles = np.shape(positions[0])
    dtype = adjoint_dtype(g, a)
    g = np.reshape(np.broadcast_to(g, shape), quantiles + flat.shape[:-1])
    ordered = np.zeros(flat.shape, dtype=dtype)
    for k in np.ndindex(*quantiles):
        for where, weight in zip(positions, weights):
            ordered[..., where[k]] += weight[k] * g[k]
    out = np.empty_like(ordered)
    np.put_along_axis(out, order, ordered, -1)
    return restore(out)


# ----- adjoints of the shape and assembly ops of ops/shape.py -----
#
# Each is linear in the adjoint ``g`` and the transpose of its op: the op itself is
# its VJP, and the helper applied to the tangent its JVP.


def repeat_sum(g, a, repeats, axis):
    """Adjoint of ``a`` in ``np.repeat(a, repeats, axis)``: each element receives the
    sum of the adjoints of its copies (none for an element repeated zero times)."""
    shape = shape_of(a)
    if axis is None:
        return np.reshape(repeat_sum(g, np.empty(int(np.prod(shape))), repeats, 0), shape)
    axis = axis % len(shape)
    moved = np.moveaxis(np.asarray(g), axis, 0)
    owner = np.repeat(np.arange(shape[axis]), repeats)
    out = np.zeros((shape[axis],) + moved.shape[1:], dtype=adjoint_dtype(g, a))
    np.add.at(out, owner, moved)
    return np.moveaxis(out, 0, axis)


def _interleaved(first, second) -> list:
    return [n for pair in zip(first, second) for n in pair]


def _reps(reps) -> tuple:
    return tuple(int(r) for r in np.ravel(reps))


def tile_sum(g, a, reps):
    """Adjoint of ``a`` in ``np.tile(a, reps)``: the sum of the adjoints of its tiles.

    Both the shape and ``reps`` are padded with leading ones to the result's rank;
    the result's index along an axis is ``tile * size + position``.
    """
    shape, reps = shape_of(a), _reps(reps)
    ndim = max(len(shape), len(reps))
    full = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    tiles = np.reshape(g, _interleaved(reps, full))
    return np.reshape(np.sum(tiles, axis=tuple(range(0, 2 * ndim, 2))), shape)


def diagonal_grad(g, a, offset, axis1, axis2):
    """Adjoint of ``a`` in ``np.diagonal(a, offset, axis1, axis2)``: ``g`` (the diagonal
    last, the other axes in order) put back on that diagonal, zeros elsewhere."""
    shape = shape_of(a)
    ndim = len(shape)
    first, second = axis1 % ndim, axis2 % ndim
    others = [n for i, n in enumerate(shape) if i not in (first, second)]
    out = np.zeros(others + [shape[first], shape[second]], dtype=adjoint_dtype(g, a))
    i = np.arange(np.shape(g)[-1])
    out[..., i + max(-offset, 0), i + max(offset, 0)] = g
    return np.moveaxis(out, (-2, -1), (first, second))


def diag_grad(g, v, k):
    """Adjoint of ``v`` in ``np.diag(v, k)``: the diagonal of ``g`` for a vector ``v``
    (the matrix built from it), ``g`` on ``v``'s diagonal for a matrix ``v``."""
    if np.ndim(v) == 1:
        return np.diag(g, k)
    return diagonal_grad(g, v, k, 0, 1)


def take_grad(g, a, indices, axis):
    """Adjoint of ``a`` in ``np.take(a, indices, axis)``: repeated indices add up."""
    shape = shape_of(a)
    out = np.zeros(shape, dtype=adjoint_dtype(g, a))
    indices = np.asarray(indices)  # a list of indices is one axis' indices, not a tuple's
    if axis is None:
        np.add.at(out.reshape(-1), indices, g)
    else:
        np.add.at(out, (slice(None),) * (axis % len(shape)) + (indices,), g)
    return out


def take_along_axis_grad(g, arr, indices, axis):
    """Adjoint of ``arr`` in ``np.take_along_axis(arr, indices, axis)``: repeated
    indices add up, and an axis of ``arr`` of length one broadcast to the result's
    receives the sum along it."""
    shape = shape_of(arr)
    out = np.zeros(shape, dtype=adjoint_dtype(g, arr))
    indices = np.asarray(indices)
    if axis is None:
        np.add.at(out.reshape(-1), indices, g)
        return out
    g = np.asarray(g)
    ndim = g.ndim
    axis = axis % ndim
    index = []
    for d in range(ndim):
        if d == axis:
            index.append(indices)
            continue
        layout = [1] * ndim
        layout[d] = g.shape[d]
        along = np.arange(g.shape[d]) if shape[d] != 1 else np.zeros(g.shape[d], dtype=int)
        index.append(along.reshape(layout))
    np.add.at(out, tuple(index), g)
    return out


def _kron_parts(g, a, b):
    """``g`` with each axis split into (a's, b's), and both shapes padded to one rank."""
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    sa, sb = (1,) * (ndim - len(sa)) + sa, (1,) * (ndim - len(sb)) + sb
    return np.reshape(g, _interleaved(sa, sb)), sa, sb, ndim


def kron_grad_lhs(g, a, b):
    """Adjoint of ``a`` in ``np.kron(a, b)``, whose element at ``i * len(b) + k`` is
    ``a[i] * b[k]`` along each axis."""
    parts, _, sb, ndim = _kron_parts(g, a, b)
    b_parts = np.reshape(b, _interleaved((1,) * ndim, sb))
    return np.reshape(np.sum(parts * b_parts, axis=tuple(range(1, 2 * ndim, 2))), shape_of(a))


def kron_grad_rhs(g, a, b):
    """Adjoint of ``b`` in ``np.kron(a, b)``."""
    parts, sa, _, ndim = _kron_parts(g, a, b)
    a_parts = np.reshape(a, _interleaved(sa, (1,) * ndim))
    return np.reshape(np.sum(parts * a_parts, axis=tuple(range(0, 2 * ndim, 2))), shape_of(b))


def _tensordot_axes(axes, a_ndim, b_ndim):
    """The summed axes of ``a`` and of ``b`` (paired in order) and their free axes."""
    if isinstance(axes, (int, np.integer)):
        summed_a, summed_b = list(range(a_ndim - axes, a_ndim)), list(range(axes))
    else:
        summed_a, summed_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    summed_a = [x % a_ndim for x in summed_a]
    summed_b = [x % b_ndim for x in summed_b]
    free_a = [i for i in range(a_ndim) if i not in summed_a]
    free_b = [i for i in range(b_ndim) if i not in summed_b]
    return summed_a, summed_b, free_a, free_b


def tensordot_grad_lhs(g, a, b, axes):
    """Adjoint of ``a`` in ``np.tensordot(a, b, axes)``: ``g`` (a's free axes, then
    b's) contracted with ``b`` over b's free axes, its axes put back in a's order."""
    summed_a, summed_b, free_a, free_b = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    out = np.tensordot(g, b, axes=(list(range(len(free_a), np.ndim(g))), free_b))
    order = free_a + [summed_a[summed_b.index(j)] for j in sorted(summed_b)]
    return np.transpose(out, np.argsort(order))


def tensordot_grad_rhs(g, a, b, axes):
    """Adjoint of ``b`` in ``np.tensordot(a, b, axes)``."""
    summed_a, summed_b, free_a, free_b = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    out = np.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    order = [summed_b[summed_a.index(i)] for i in sorted(summed_a)] + free_b
    return np.transpose(out, np.argsort(order))


def rollaxis_inverse(a, axis, start):
    """The axes order undoing ``np.rollaxis`` of an array shaped as ``a``."""
    return tuple(int(i) for i in np.argsort(_rollaxis_order(np.ndim(a), axis, start)))


def _rollaxis_order(ndim, axis, start):
    order = list(range(ndim))
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    order.remove(axis)
    order.insert(start - 1 if start > axis else start, axis)
    return order


_UPGRADES = {"vstack": (np.atleast_2d, 0), "dstack": (np.atleast_3d, 2)}


def _stacked_parts(arrays, kind):
    """The arrays as ``np.vstack`` (``kind``) and its kin join them, and the axis."""
    if kind == "hstack":
        parts = [np.atleast_1d(a) for a in arrays]
        return parts, 0 if parts and parts[0].ndim == 1 else 1
    if kind == "column_stack":
        return [np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else np.asarray(a)
                for a in arrays], 1
    upgrade, axis = _UPGRADES[kind]
    return [upgrade(a) for a in arrays], axis


def split_stacked(g, arrays, kind):
    """Adjoints of the arrays of ``np.vstack(arrays)`` (``kind``: "vstack", "hstack",
    "dstack" or "column_stack"): ``g`` cut along the joined axis, each piece in its
    array's shape."""
    parts, axis = _stacked_parts(arrays, kind)
    pieces = np.split(g, np.cumsum([np.shape(p)[axis] for p in parts])[:-1], axis=axis)
    return [np.reshape(piece, np.shape(a)) for piece, a in zip(pieces, arrays)]


_SELECTING_PADS = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_grad(g, array, pad_width, mode):
    """Adjoint of ``array`` in ``np.pad(array, pad_width, mode)``, for the modes that
    copy elements (``constant`` pads with values that are not the array's).

    Padding the elements' flat indices in the same way gives, for each element of
    the result, the element it copies (-1 for a constant): each receives the sum of
    the adjoints of its copies.
    """
    shape = shape_of(array)
    size = int(np.prod(shape))
    source = np.reshape(np.arange(size), shape)
    if mode == "constant":
        source = np.pad(source, pad_width, mode="constant", constant_values=-1)
    else:
        source = np.pad(source, pad_width, mode=mode)
    copied = source >= 0
    out = np.zeros(size, dtype=adjoint_dtype(g, array))
    np.add.at(out, source[copied], np.asarray(g)[copied])
    return np.reshape(out, shape)


def pad_fill_grad(g, array, pad_width, mode, constant_values):
    """Adjoint of ``constant_values`` in ``np.pad(array, pad_width, mode="constant",
    constant_values=constant_values)``: each value receives the sum of the adjoints
    of the elements it fills (labelling the values tells which it fills, later axes'
    corners included); zero for the other modes, which take no values."""
    if mode != "constant":
        return np.zeros(shape_of(constant_values), dtype=np.result_type(g, 1.0))
    ndim = len(shape_of(array))
    labels = np.pad(np.full(shape_of(array), -1), pad_width, mode="constant",
                    constant_values=np.arange(2 * ndim).reshape(ndim, 2))
    filled = labels >= 0
    sums = np.zeros(2 * ndim, dtype=np.result_type(g, 1.0))
    np.add.at(sums, labels[filled], np.asarray(g)[filled])
    return unbroadcast(sums.reshape(ndim, 2), constant_values)


def split_grad(g, ary, indices_or_sections, axis):
    """Adjoint of ``ary`` in ``np.split(ary, indices_or_sections, axis)`` (and
    ``np.array_split``): the adjoint of each piece added where the piece was cut from
    (pieces overlap when the indices do not increase). ``axis`` None is np.hsplit's
    axis: the first of a vector, else the second."""
    shape = shape_of(ary)
    if axis is None:
        axis = 0 if len(shape) == 1 else 1
    axis = axis % len(shape)
    length = shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        each, extra = divmod(length, int(indices_or_sections))
        sizes = [each + 1] * extra + [each] * (int(indices_or_sections) - extra)
        bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
    else:
        bounds = [0, *np.ravel(indices_or_sections).tolist(), length]
    out = np.zeros(shape, dtype=np.result_type(*g, 1.0) if len(g) else float)
    before = (slice(None),) * axis
    for start, stop, piece in zip(bounds[:-1], bounds[1:], g):
        out[before + (slice(start, stop),)] += piece
    return out


def _as_3_vectors(v, axis):
    """The vectors of ``v`` along ``axis``, moved last, vectors of 2 given a zero third."""
    v = np.moveaxis(np.asarray(v), axis, -1)
    if v.shape[-1] == 2:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,), dtype=v.dtype)], axis=-1)
    return v


def _cross_adjoint(g, a, b, axis):
    """The adjoint of ``np.cross(a, b, axis=axis)`` as vectors of 3 (last): of two
    vectors of 2 the cross product is a number, the third component of theirs."""
    if np.shape(a)[axis] == 2 and np.shape(b)[axis] == 2:
        g = np.asarray(g)
        return np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    return np.moveaxis(np.asarray(g), axis, -1)


def cross_grad_lhs(g, a, b, axis):
    """Adjoint of ``a`` in ``np.cross(a, b, axis=axis)``: <g, a x b> is <a, b x g>,
    vectors of 2 being vectors of 3 with a zero third component."""
    axis = -1 if axis is None else axis
    grad = np.cross(_as_3_vectors(b, axis), _cross_adjoint(g, a, b, axis))
    return unbroadcast(np.moveaxis(grad[..., :np.shape(a)[axis]], -1, axis), a)


def cross_grad_rhs(g, a, b, axis):
    """Adjoint of ``b`` in ``np.cross(a, b, axis=axis)``: <g, a x b> is <b, g x a>."""
    axis = -1 if axis is None else axis
    grad = np.cross(_cross_adjoint(g, a, b, axis), _as_3_vectors(a, axis))
    return unbroadcast(np.moveaxis(grad[..., :np.shape(b)[axis]], -1, axis), b)


# ----- np.select and np.choose -----


def select_none(condlist):
    """Where no condition of ``np.select(condlist, ...)`` holds: where it takes its default."""
    held = np.zeros((), dtype=bool)
    for cond in condlist:
        held = np.logical_or(held, cond)
    return np.logical_not(held)


def select_choice_grads(g, condlist, choicelist):
    """Adjoints of the choices of ``np.select(condlist, choicelist, default)``: each
    receives ``g`` where its condition is the first that holds (NumPy takes the first
    of ties), zero elsewhere, summed to its own shape."""
    taken = np.zeros(np.shape(g), dtype=bool)
    grads = []
    for cond, choice in zip(condlist, choicelist):
        first = np.logical_and(cond, np.logical_not(taken))
        grads.append(unbroadcast(np.where(first, g, 0.0), choice))
        taken = np.logical_or(taken, cond)
    return grads


def choose_grads(g, a, choices, mode):
    """Adjoints of the choices of ``np.choose(a, choices, mode=mode)``: each receives
    ``g`` where ``a`` (wrapped or clipped as ``mode`` says) picks it, summed to its shape."""
    count = len(choices)
    picked = np.asarray(a)
    if mode == "wrap":
        picked = picked % count
    elif mode == "clip":
        picked = np.clip(picked, 0, count - 1)
    return [unbroadcast(np.where(picked == k, g, 0.0), choice)
            for k, choice in enumerate(choices)]


# ----- np.insert and np.delete -----
# Each element of the result is labelled by where it comes from: i >= 0 for arr's
# element i (flattened), -1 - j for values' element j. np.insert and np.delete of the
# labels lay them out as the op lays out the elements (they depend on shapes alone).


def _labels(shape, first=0, step=1):
    return (first + step * np.arange(int(np.prod(shape, dtype=int)))).reshape(shape)


def _insert_labels(arr, obj, values, axis):
    return np.insert(_labels(shape_of(arr)), obj, _labels(shape_of(values), -1, -1), axis=axis)


def insert_arr_grad(g, arr, obj, values, axis):
    """Adjoint of ``arr`` in ``np.insert(arr, obj, values, axis)``: each element of
    ``arr`` receives the adjoint at its place in the result."""
    labels, g = _insert_labels(arr, obj, values, axis).ravel(), np.ravel(g)
    out = np.zeros(np.size(arr), dtype=np.result_type(g, 1.0))
    kept = labels >= 0
    out[labels[kept]] = g[kept]
    return out.reshape(shape_of(arr))


def insert_values_grad(g, arr, obj, values, axis):
    """Adjoint of ``values`` in ``np.insert(arr, obj, values, axis)``: each element of
    ``values`` receives the adjoints of the places it was copied to (broadcasting)."""
    labels, g = _insert_labels(arr, obj, values, axis).ravel(), np.ravel(g)
    out = np.zeros(np.size(values), dtype=np.result_type(g, 1.0))
    inserted = labels < 0
    np.add.at(out, -1 - labels[inserted], g[inserted])
    return out.reshape(shape_of(values))


def delete_grad(g, arr, obj, axis):
    """Adjoint of ``arr`` in ``np.delete(arr, obj, axis)``: each element kept receives
    the adjoint at its place in the result, a deleted one zero."""
    labels = np.delete(_labels(shape_of(arr)), obj, axis=axis).ravel()
    out = np.zeros(np.size(arr), dtype=adjoint_dtype(g, arr))
    out[labels] = np.ravel(g)
    return out.reshape(shape_of(arr))


# ----- np.meshgrid -----


def _meshgrid_axis(k, count, indexing):
    """The axis along which input ``k`` of ``count`` varies in np.meshgrid's results."""
    return 1 - k if indexing == "xy" and count > 1 and k < 2 else k


def meshgrid_grads(g, xi, indexing, sparse):
    """Adjoints of the inputs of ``np.meshgrid(*xi, indexing=indexing, sparse=sparse)``:
    input ``k`` (flattened) receives its grid's adjoint summed over every axis but its own."""
    count = len(xi)
    grads = []
    for k, (part, x) in enumerate(zip(g, xi)):
        part = np.asarray(part)
        axis = _meshgrid_axis(k, count, indexing)
        others = tuple(i for i in range(part.ndim) if i != axis)
        grads.append(np.reshape(np.sum(part, axis=others), shape_of(x)))
    return grads


def meshgrid_of(parts, indexing, sparse):
    """``np.meshgrid(*parts)`` as a list: the grids of the vectors ``parts``."""
    return list(np.meshgrid(*parts, indexing=indexing, sparse=sparse))


# ----- np.clip's bounds -----
# np.clip(a, low, high) is np.minimum(np.maximum(a, low), high): where low exceeds high
# the result is high, whatever a and low are. Either bound may be None.


def clipped_low(a, low, high):
    """Mask of the elements ``np.clip(a, low, high)`` takes from ``low``."""
    if low is None:
        return False
    taken = a < low
    return taken if high is None else taken & (low <= high)


def clipped_high(a, low, high):
    """Mask of the elements ``np.clip(a, low, high)`` takes from ``high``."""
    if high is None:
        return False
    taken = a > high
    return taken if low is None else taken | (low > high)


def written_part(g, index):
    """``g[index]`` as a new array, zero where a later occurrence of a repeated index
    writes the same element: the part of ``g`` each element of the value wrote in
    ``a[index] = value``, where NumPy keeps the last write (``a[[0, 0]] = [u, v]``
    leaves ``v``, so ``u`` receives no gradient)."""
    part = np.array(g[index])
    labels = np.arange(part.size).reshape(part.shape)
    writer = np.full(np.shape(g), -1)
    writer[index] = labels
    part[writer[index] != labels] = 0
    return part


# ----- quantiles skipping NaNs (np.nanmedian, np.nanquantile, np.nanpercentile) -----
#
# quantile_select and quantile_spread over the elements that are not NaN: each slice
# interpolates between positions of its own count of them (NaNs sort last). A slice of
# NaNs alone gives NaN and passes nothing.


def _nanquantile_layout(a, q, axis, keepdims, slope):
    """As _quantile_layout, with positions and weights per slice (of q's shape then the
    slices'), for the elements of each slice that are not NaN."""
    a = np.asarray(a)
    flat, restore = _reduced_axes_last(a, axis)
    count = np.sum(~np.isnan(flat), axis=-1)
    q = np.asarray(q, dtype=float)
    last = np.maximum(count - 1, 0)
    position = np.reshape(q, q.shape + (1,) * count.ndim) * last
    low = np.minimum(np.floor(position).astype(int), last)
    high = np.minimum(low + 1, last)
    if slope:
        weights = (np.broadcast_to(-last * 1.0, position.shape), np.broadcast_to(last * 1.0, position.shape))
    else:
        weights = (1.0 - (position - low), position - low)
    weights = tuple(np.where(count > 0, w, 0.0) for w in weights)
    if keepdims:
        axes = range(a.ndim) if axis is None else [k % a.ndim for k in np.atleast_1d(axis)]
        rest = tuple(1 if k in axes else length for k, length in enumerate(a.shape))
    else:
        rest = flat.shape[:-1]
    order = np.argsort(flat, axis=-1, kind="stable")
    return flat, restore, order, (low, high), weights, q.shape + rest


def nanquantile_select(t, a, q, axis=None, keepdims=False, slope=False):
    """``t``'s elements combined as ``np.nanquantile(a, q, axis, keepdims=keepdims)``
    combines ``a``'s: the tangent of np.nanquantile (see :func:`quantile_select`).

    >>> nanquantile_select(np.array([10.0, 20.0, 30.0]), np.array([3.0, np.nan, 2.0]), 0.5).tolist()
    20.0
    """
    _, _, order, positions, weights, shape = _nanquantile_layout(a, q, axis, keepdims, slope)
    flat_t, _ = _reduced_axes_last(np.broadcast_to(t, np.shape(a)), axis)
    ordered = np.take_along_axis(flat_t, order, -1)
    ordered = np.broadcast_to(ordered, positions[0].shape + ordered.shape[-1:])
    picked = sum(np.take_along_axis(ordered, where[..., None], -1)[..., 0] * weight
                 for where, weight in zip(positions, weights))
    return np.reshape(picked, shape)


def nanquantile_spread(g, a, q, axis=None, keepdims=False, slope=False):
    """The transpose of :func:`nanquantile_select`: the gradient of np.nanquantile in ``a``.

    >>> nanquantile_spread(1.0, np.array([3.0, np.nan, 1.0]), 0.25).tolist()
    [0.25, 0.0, 0.75]
    """
    flat, restore, order, positions, weights, shape = _nanquantile_layout(a, q, axis, keepdims, slope)
    dtype = adjoint_dtype(g, a)
    g = np.reshape(np.broadcast_to(g, shape), positions[0].shape)
    ordered = np.zeros(flat.shape, dtype=dtype)
    for k in np.ndindex(*np.shape(q)):
        for where, weight in zip(positions, weights):
            part = np.zeros_like(ordered)
            np.put_along_axis(part, where[k][..., None], (weight[k] * g[k])[..., None], -1)
            ordered += part
    out = np.empty_like(ordered)
    np.put_along_axis(out, order, ordered, -1)
    return restore(out)
