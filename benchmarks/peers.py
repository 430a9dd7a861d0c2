"""Optional peer implementations: other ways to get the same gradient.

Each entry of `PEERS` maps a column name to a builder. A builder takes a `Case`
and returns a gradient function with the same calling convention as the case's
hand-written gradient (same positional arguments; one gradient, or a tuple of
them when `case.wrt` is a tuple). It raises ImportError when its package is not
installed, and the harness then leaves the column out without a word.

Peers are timed the way a user holding NumPy arrays would call them, so any
conversion to and from the peer's array type is part of the time.

The case functions are written against the global name `np`; the array-library
peers run the very same code object with `np` rebound to their own NumPy-like
module (`autograd.numpy`, `jax.numpy`, `torch`).
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

from cases import Case

GradientFunction = Callable[..., Any]


def wrt_indices(func: Callable[..., Any], wrt: Any) -> tuple[int, ...]:
    """Positional indices named by `wrt` (an index, a name, or a tuple of them).

    >>> wrt_indices(lambda a, b: a * b, ("b", 0))
    (1, 0)
    """
    names = list(inspect.signature(func).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return tuple(item if isinstance(item, int) else names.index(item) for item in items)


def with_numpy_module(func: Callable[..., Any], module: types.ModuleType) -> Callable[..., Any]:
    """A copy of `func` whose global `np` is `module` instead of NumPy."""
    namespace = dict(func.__globals__, np=module)
    return types.FunctionType(
        func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__
    )


def _single_or_tuple(case: Case, gradients: tuple[Any, ...]) -> Any:
    return gradients if isinstance(case.wrt, tuple) else gradients[0]


# ----- HIPS autograd: tape-based, NumPy wrapper -----


def autograd_gradient(case: Case) -> GradientFunction:
    """HIPS autograd, differentiating a packed tuple of the `wrt` arguments."""
    autograd = importlib.import_module("autograd")
    func = with_numpy_module(case.func, importlib.import_module("autograd.numpy"))
    indices = wrt_indices(case.func, case.wrt)

    def packed(wrt_values, args):
        full = list(args)
        for index, value in zip(indices, wrt_values, strict=True):
            full[index] = value
        return func(*full)

    packed_gradient = autograd.grad(packed, 0)

    def gradient(*args: Any) -> Any:
        wrt_values = tuple(args[index] for index in indices)
        return _single_or_tuple(case, tuple(packed_gradient(wrt_values, args)))

    return gradient


# ----- JAX: tracing, jit-compiled with XLA -----


def jax_gradient(case: Case) -> GradientFunction:
    """`jax.jit(jax.grad(...))` in float64, blocking until the result is ready.

    A function whose Python control flow reads array values (a `while` on a
    norm) cannot be traced by `jax.jit`; it gets `jax.grad` alone, which runs
    that control flow eagerly.
    """
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    func = with_numpy_module(case.func, importlib.import_module("jax.numpy"))
    indices = wrt_indices(case.func, case.wrt)
    argnums = indices if isinstance(case.wrt, tuple) else indices[0]
    compiled = jax.jit(jax.grad(func, argnums=argnums))
    try:
        compiled(*case.make_args())
    except jax.errors.ConcretizationTypeError:
        compiled = jax.grad(func, argnums=argnums)

    def gradient(*args: Any) -> Any:
        return jax.block_until_ready(compiled(*args))

    return gradient


# ----- PyTorch: eager tape -----


def torch_gradient(case: Case) -> GradientFunction:
    """`torch.autograd.grad` on float64 tensors that share memory with the inputs."""
    torch = importlib.import_module("torch")
    func = with_numpy_module(case.func, torch)
    indices = wrt_indices(case.func, case.wrt)

    def gradient(*args: Any) -> Any:
        tensors = [torch.as_tensor(arg, dtype=torch.float64) for arg in args]
        inputs = [tensors[index].requires_grad_(True) for index in indices]
        gradients = torch.autograd.grad(func(*tensors), inputs)
        return _single_or_tuple(case, tuple(g.numpy() for g in gradients))

    return gradient


# ----- Tangent: source transformation, like us -----


def tangent_gradient(case: Case) -> GradientFunction:
    """Google's `tangent.grad` on the unchanged NumPy function."""
    tangent = importlib.import_module("tangent")
    indices = wrt_indices(case.func, case.wrt)
    return tangent.grad(case.func, wrt=indices, verbose=0)


PEERS: dict[str, Callable[[Case], GradientFunction]] = {
    "autograd": autograd_gradient,
    "jax": jax_gradient,
    "torch": torch_gradient,
    "tangent": tangent_gradient,
}
