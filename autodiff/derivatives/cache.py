"""Derivatives built once: kept on the user's function itself, keyed by the transform
and its options, at most :data:`MAX_PER_FUNCTION` each.

A derivative refers back to its function (``.original``), so a table outside it
would keep every function alive; on the function, the two go together when it
is collected.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from autodiff.codegen.derivative import compiling
from autodiff.codegen.display import derivative_html
from autodiff.derivatives.build import build_jvp, build_vjp
from autodiff.derivatives.structured import per_structure
from autodiff.derivatives.wrt import Wrt, wrt_key
from autodiff.jit.dispatch import backend_of, specialized_derivative
from autodiff.errors import AutodiffError
from autodiff.ops import registry
from autodiff.ops.checkpoints import snapshot_count
from autodiff.ops.custom import CustomGradient

CACHE = "__autodiff_derivatives__"
MAX_PER_FUNCTION = 32


class Assembled:
    """A derivative assembled at call time from generated ones (a Jacobian, a gradient
    by forward mode): the derivatives taken of it are kept on it too. A notebook shows
    its name and the generated code it is assembled from (its ``.source``)."""

    def _repr_html_(self) -> str:
        return derivative_html(self)


def cached(fn: Callable, key: tuple, build: Callable[[], Callable],
           jit: bool | str = False, optimize: bool = True, check_finite: bool = False):
    """The derivative of ``fn`` that ``build`` makes, built once per ``key`` (and per
    version of the registered rules); with ``jit``, specialised per call signature."""
    backend = backend_of(jit)
    if check_finite and backend == "numba":
        raise ValueError("check_finite=True runs in Python: use it with jit=True or "
                         "jit=False, not jit='numba'")
    if backend is not None:  # the general derivative, specialised per signature on call
        return cached(fn, (*key, "jit", backend),
                      lambda: specialized_derivative(cached(fn, key, build), backend, optimize))
    key = (*key, registry.generation)  # a rule registered since: build again
    with compiling:
        built = derivatives_of(fn)
        derivative = built.get(key) if built is not None else None
        if derivative is not None:
            return derivative
        derivative = build()
        if built is not None:
            if len(built) >= MAX_PER_FUNCTION:  # drop the oldest
                del built[next(iter(built))]
            built[key] = derivative
        return derivative


def derivatives_of(fn: Callable) -> dict | None:
    """The derivatives built of ``fn`` (None if it cannot hold them).

    ``functools.wraps`` copies a function's ``__dict__`` to its wrapper: the
    table names its owner, so a wrapper never takes its wrapped function's."""
    if not isinstance(fn, (types.FunctionType, CustomGradient, Assembled)):
        return None
    owner, built = fn.__dict__.get(CACHE, (None, None))
    if owner is not fn:
        built = {}
        fn.__dict__[CACHE] = (fn, built)
    return built


def vjp_of(fn: Callable, wrt: Wrt, *, optimize: bool = True, jit: bool | str = False,
           check_finite: bool = False, checkpoint: int | str | None = None) -> Callable:
    """The vector-Jacobian product of ``fn`` (:func:`autodiff.vjp`), built once."""
    checked_budget(checkpoint, jit)
    return cached(fn, ("vjp", wrt_key(wrt), optimize, check_finite, checkpoint),
                  lambda: per_structure(fn, f"{fn.__name__}_vjp", lambda **given: build_vjp(
                      fn, wrt, optimize=optimize, check_finite=check_finite,
                      checkpoint=checkpoint, **given), extra=(("seed", True),)),
                  jit, optimize, check_finite)


def checked_budget(checkpoint: int | str | None, jit: bool | str) -> None:
    """Refuse a ``checkpoint=`` budget that is not one, when the transform is made."""
    if checkpoint is None:
        return
    snapshot_count(checkpoint, 0.0)  # (raises for what is neither a count nor a size)
    if backend_of(jit) == "numba":
        raise AutodiffError(
            "checkpoint= keeps a loop's states in a Python object numba cannot compile",
            hint="use jit=True (NumPy) with checkpoint=, or jit='numba' without it")


def jvp_of(fn: Callable, wrt: Wrt, *, optimize: bool = True, jit: bool | str = False,
           check_finite: bool = False, batched: bool = False) -> Callable:
    """The Jacobian-vector product of ``fn`` (:func:`autodiff.jvp`), built once;
    ``batched``: of tangents carrying a leading axis of examples, pushed through one
    sweep (``transforms/batching.py``)."""
    kind, name = ("batched_jvp", "jvp_batched") if batched else ("jvp", "jvp")
    return cached(fn, (kind, wrt_key(wrt), optimize, check_finite),
                  lambda: per_structure(fn, f"{fn.__name__}_{name}", lambda **given: build_jvp(
                      fn, wrt, optimize=optimize, with_value=True, check_finite=check_finite,
                      name=name, batched=batched, **given), extra=(("tangent", False),)),
                  jit, optimize, check_finite)
