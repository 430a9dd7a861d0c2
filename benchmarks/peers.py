"""Optional peer implementations: other ways to get the same gradient.

Each entry of `PEERS` maps a column name to a builder. A builder takes a `Case`
and returns a gradient function with the same calling convention as the case's
hand-written gradient (same positional arguments; one gradient, or a tuple of
them when `case.wrt` is a tuple; a dict argument's gradient is a dict with
its keys). A peer whose package does not import has no column;
`available_peers` says which and why.

Peers are timed the way a user holding NumPy arrays would call them, so any
conversion to and from the peer's array type is part of the time.

The case functions are written against the global names `np` and `math`; the
array-library peers run the very same code object with both rebound to their
own NumPy-like module (`autograd.numpy`, `jax.numpy`, `torch`), since their
tapes and tracers cannot pass through the `math` module.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

from cases import SCALAR_LOOP, Case

GradientFunction = Callable[..., Any]

JAX_JIT = "jax jit"
JAX_EAGER = "jax eager"
TORCH = "torch"
AUTOGRAD = "autograd"
TANGENT = "tangent"

# The package each column needs, for the availability check and the versions.
PEER_PACKAGES = {JAX_JIT: "jax", JAX_EAGER: "jax", TORCH: "torch", AUTOGRAD: "autograd",
                 TANGENT: "tangent"}


def available_peers(wanted: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The peer columns whose package imports, and why each other one is missing.

    Any exception counts as missing: tangent, for one, fails with an
    AttributeError on recent versions of its dependency gast.
    """
    found, missing = [], {}
    for name, package in PEER_PACKAGES.items():
        if wanted is not None and name not in wanted:
            continue
        try:
            importlib.import_module(package)
        except Exception as error:  # noqa: BLE001  reported in the results instead
            missing[name] = f"{package} does not import: {type(error).__name__}: {error}"
        else:
            found.append(name)
    return found, missing


def skip_reason(column: str, case: Case) -> str | None:
    """Why `column` is not run on `case`, if it is not: a scalar loop costs JAX minutes.

    `jax.jit` unrolls a Python loop over an array's elements, one copy of the
    body per element: at 1000 elements XLA had not finished compiling after
    several minutes. Without jit, each `x[i]` with a new `i` compiles a kernel
    of its own: at 500 elements the first call took 38 s, every later one 3 s.
    (JAX users write such loops with `lax.scan`: a different program from the
    one benchmarked here.)
    """
    if column == JAX_JIT and SCALAR_LOOP in case.tags:
        return "jax.jit unrolls the Python loop over the elements; XLA compiles it for minutes"
    if column == JAX_EAGER and SCALAR_LOOP in case.tags:
        return "each x[i] compiles a kernel of its own: 38 s for the first call, 3 s per call"
    return None


def wrt_indices(func: Callable[..., Any], wrt: Any) -> tuple[int, ...]:
    """Positional indices named by `wrt` (an index, a name, or a tuple of them).

    >>> wrt_indices(lambda a, b: a * b, ("b", 0))
    (1, 0)
    """
    names = list(inspect.signature(func).parameters)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return tuple(item if isinstance(item, int) else names.index(item) for item in items)


def with_numpy_module(func: Callable[..., Any], module: Any) -> Callable[..., Any]:
    """A copy of `func` whose globals `np` and `math` are both `module`."""
    namespace = dict(func.__globals__, np=module, math=module)
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


# ----- JAX: tracing, jit-compiled with XLA, or op by op -----


def _jax_grad(case: Case) -> tuple[Any, Callable[..., Any]]:
    """`jax.grad` of the case in float64, and the jax module."""
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    func = with_numpy_module(case.func, importlib.import_module("jax.numpy"))
    indices = wrt_indices(case.func, case.wrt)
    argnums = indices if isinstance(case.wrt, tuple) else indices[0]
    return jax, jax.grad(func, argnums=argnums)


def jax_jit_gradient(case: Case) -> GradientFunction:
    """`jax.jit(jax.grad(...))`, blocking until the result is ready.

    The first call traces and compiles. A function whose Python control flow
    reads array values (a `while` on a norm) cannot be traced: that first call
    raises a ConcretizationTypeError, and the harness leaves the cell empty.
    """
    jax, gradient = _jax_grad(case)
    compiled = jax.jit(gradient)
    return lambda *args: jax.block_until_ready(compiled(*args))


def jax_eager_gradient(case: Case) -> GradientFunction:
    """`jax.grad(...)` without jit: every operation dispatched one by one."""
    jax, gradient = _jax_grad(case)
    return lambda *args: jax.block_until_ready(gradient(*args))


# ----- PyTorch: eager tape -----


def _torch_as_numpy(torch: Any) -> types.ModuleType:
    """torch, except `max`/`min` reduce like NumPy's instead of returning (values, indices)."""
    shim = types.ModuleType("torch_as_numpy")
    shim.__getattr__ = lambda name: getattr(torch, name)  # PEP 562 module fallback
    shim.max, shim.min = torch.amax, torch.amin
    return shim


def torch_gradient(case: Case) -> GradientFunction:
    """`torch.autograd.grad`, on tensors that share memory with the NumPy inputs.

    A dict argument becomes a dict of tensors, and its gradient a dict of arrays.
    """
    torch = importlib.import_module("torch")
    func = with_numpy_module(case.func, _torch_as_numpy(torch))
    indices = wrt_indices(case.func, case.wrt)

    def tensor(arg: Any) -> Any:
        if isinstance(arg, dict):
            return {key: tensor(value) for key, value in arg.items()}
        if isinstance(arg, float):  # a Python float would become float32
            return torch.tensor(arg, dtype=torch.float64)
        return torch.as_tensor(arg)  # integer label arrays stay integers

    def leaves(arg: Any) -> list[Any]:
        return list(arg.values()) if isinstance(arg, dict) else [arg]

    def gradient(*args: Any) -> Any:
        tensors = [tensor(arg) for arg in args]
        wrt = [tensors[index] for index in indices]
        inputs = [leaf.requires_grad_(True) for arg in wrt for leaf in leaves(arg)]
        flat = iter(g.numpy() for g in torch.autograd.grad(func(*tensors), inputs))
        gradients = tuple({key: next(flat) for key in arg} if isinstance(arg, dict)
                          else next(flat) for arg in wrt)
        return _single_or_tuple(case, gradients)

    return gradient


# ----- Tangent: source transformation, like us -----


def tangent_gradient(case: Case) -> GradientFunction:
    """Google's `tangent.grad` on the unchanged NumPy function."""
    tangent = importlib.import_module("tangent")
    indices = wrt_indices(case.func, case.wrt)
    return tangent.grad(case.func, wrt=indices, verbose=0)


PEERS: dict[str, Callable[[Case], GradientFunction]] = {
    JAX_JIT: jax_jit_gradient,
    JAX_EAGER: jax_eager_gradient,
    TORCH: torch_gradient,
    AUTOGRAD: autograd_gradient,
    TANGENT: tangent_gradient,
}
