"""Which shapes each operation makes of which shapes, and which shapes an expression can reach.

A shape is a tuple; ``()`` is a scalar (a Python float, a NumPy scalar or a
0-d array). ``reachable(scope, depth)`` is every shape an expression of that
depth can have, built from variables of the ``scope`` shapes; ``producers``
lists, for one target shape, every way of making it from reachable shapes.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

MAX_NDIM = 3
MAX_SIZE = 36  # elements of the largest intermediate


class Form(NamedTuple):
    """One way to make a shape: ``family`` and its operands' shapes, with what the writer needs."""

    family: str  # "reduce", "index", "view", "reshape", "broadcast", "binary", "matmul", "stack"
    template: str  # "{a}"... the operands; {i}: an index; {args}: reduction arguments
    operands: tuple  # the operands' shapes
    detail: object = None  # reduce: (args, count); index: the indexed axis' length; fancy: and
    # how many indices


@functools.cache
def fits(shape: tuple) -> bool:
    return len(shape) <= MAX_NDIM and all(d >= 1 for d in shape) and math.prod(shape) <= MAX_SIZE


@functools.cache
def broadcast(a: tuple, b: tuple) -> tuple | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


@functools.cache
def matmul(a: tuple, b: tuple) -> tuple | None:
    if not a or not b:
        return None
    try:
        return np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        return None


@functools.cache
def reductions(shape: tuple) -> list[tuple[str, int, tuple]]:
    """(axis and keepdims arguments, elements reduced into each result, result shape)."""
    k = len(shape)
    axes = [None, *range(k), *range(-k, 0)] + ([(0, k - 1)] if k >= 2 else [])
    found = []
    for axis in axes:
        for keepdims in (False, True):
            result = np.sum(np.zeros(shape), axis=axis, keepdims=keepdims).shape
            count = math.prod(shape) // max(math.prod(result), 1)
            parts = ([] if axis is None else [f"axis={axis}"]) + ["keepdims=True"] * keepdims
            found.append((", ".join(parts), count, result))
    return found


@functools.cache
def views(shape: tuple) -> list[tuple[str, str, tuple, object]]:
    """(family, template, result shape, length of the indexed axis) of indexing and views."""
    k, found = len(shape), []
    if k >= 1:
        found += [("index", "{a}[{i}]", shape[1:], shape[0]),
                  ("index", "{a}[..., {i}]", shape[:-1], shape[-1]),
                  ("view", "{a}[::-1]", shape, None), ("view", "{a}[..., ::-1]", shape, None)]
        found += [("view", "{a}[None]", (1, *shape), None),
                  ("view", "np.expand_dims({a}, 0)", (1, *shape), None),
                  ("view", "{a}[:, None]", (shape[0], 1, *shape[1:]), None),
                  ("view", "{a}[..., None]", (*shape, 1), None)]
        for count in (2, 3):
            found.append(("fancy", "{a}[{i}]", (count, *shape[1:]), (shape[0], count)))
        if shape[0] >= 2:
            found += [("view", "{a}[1:]", (shape[0] - 1, *shape[1:]), None),
                      ("view", "{a}[:-1]", (shape[0] - 1, *shape[1:]), None),
                      ("difference", "{a}[1:] - {a}[:-1]", (shape[0] - 1, *shape[1:]), None)]
        if shape[-1] >= 2 and k >= 2:
            found.append(("view", "{a}[..., 1:]", (*shape[:-1], shape[-1] - 1), None))
    if k >= 2:
        found += [("index", "{a}[:, {i}]", (shape[0], *shape[2:]), shape[1]),
                  ("view", "{a}[:, ::-1]", shape, None),
                  ("view", "{a}.T", shape[::-1], None),
                  ("view", "np.transpose({a})", shape[::-1], None),
                  ("view", "{a}.reshape(-1)", (math.prod(shape),), None),
                  ("view", "np.ravel({a})", (math.prod(shape),), None)]
        found += [("view", f"np.squeeze({{a}}, axis={d})", shape[:d] + shape[d + 1:], None)
                  for d in range(k) if shape[d] == 1]
    if k == 3:
        found.append(("view", "np.swapaxes({a}, 0, 1)", (shape[1], shape[0], shape[2]), None))
    found.append(("copy", "np.copy({a})", shape, None))
    if shape:  # a scalar may be a Python float
        found.append(("copy", "{a}.copy()", shape, None))
    return [entry for entry in found if fits(entry[2])]


@functools.lru_cache(maxsize=4096)
def reachable(scope: frozenset, depth: int) -> frozenset:
    """The shapes an expression of ``depth`` can have, over variables of the ``scope`` shapes."""
    if depth <= 0:
        return scope
    below = reachable(scope, depth - 1)
    shapes = set(below) | {()}
    for a in below:
        shapes |= {result for _, _, result in reductions(a)}
        shapes |= {result for _, _, result, _ in views(a)}
        shapes |= {(k, *a) for k in (2, 3) if fits((k, *a))}
        for b in below:
            shapes |= {s for s in (broadcast(a, b), matmul(a, b)) if s is not None and fits(s)}
    return frozenset(shapes)


@functools.lru_cache(maxsize=65536)
def producers(scope: frozenset, depth: int, target: tuple) -> tuple[Form, ...]:
    """Every way to make ``target`` from expressions of ``depth - 1`` over the ``scope``."""
    below = sorted(reachable(scope, depth - 1), key=lambda s: (len(s), s))
    forms = []
    for a in below:
        for args, count, result in reductions(a):
            if result == target and a:
                forms.append(Form("reduce", "", (a,), (args, count)))
        for family, template, result, length in views(a):
            if result == target:
                forms.append(Form(family, template, (a,), length))
        if a != target and a and target and math.prod(a) == math.prod(target):
            forms.append(Form("reshape", "{a}.reshape(" + repr(target) + ")", (a,)))
        if a != target and broadcast(a, target) == target:
            forms.append(Form("broadcast", f"np.broadcast_to({{a}}, {target!r})", (a,)))
        for b in below:
            if broadcast(a, b) == target:
                forms.append(Form("binary", "", (a, b)))
            if matmul(a, b) == target:
                forms.append(Form("matmul", "", (a, b)))
    if target and target[1:] in below and target[0] in (2, 3):
        forms.append(Form("stack", "", (target[1:],) * target[0]))
    return tuple(forms)
