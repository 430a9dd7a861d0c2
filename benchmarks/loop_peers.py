"""The loop programs as JAX and PyTorch users write them, and their gradients.

JAX cannot trace a Python loop without unrolling it, so its user writes the
loop with `jax.lax.scan` and compiles the whole gradient with `jax.jit`; the
"checkpoint" flavour wraps the scan body in `jax.checkpoint`, so that the
backward pass recomputes each step's intermediates instead of storing them.
JAX cannot differentiate `lax.while_loop` in reverse either: for the `while`
to convergence, a first jitted `lax.while_loop` finds the iteration count,
and the gradient is a `lax.scan` of that many steps (its length is static,
so another count compiles another gradient).

PyTorch runs the very same Python function on tensors, eagerly, with
`np` and `math` rebound to torch (see `peers.with_numpy_module`).

Every builder takes the loop case's name and returns a gradient function with
the calling convention of its hand adjoint: the same positional arguments, a
tuple of gradients in the order of `wrt`. Inputs arrive as NumPy arrays and
Python numbers; the conversions are part of the time, as for a user holding
NumPy data. Nothing here imports JAX or PyTorch until a builder runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from peers import _torch_as_numpy, with_numpy_module, wrt_indices

GradientFunction = Callable[..., Any]


def _jax() -> tuple[Any, Any, Any]:
    """jax with float64 enabled, jax.numpy and jax.lax."""
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, importlib.import_module("jax.numpy"), importlib.import_module("jax.lax")


def jax_scan_gradient(case_name: str, checkpoint: bool) -> GradientFunction:
    """The `lax.scan` program of `case_name`, its `jax.jit(jax.grad(...))`."""
    jax, jnp, lax = _jax()
    step_wrapper = jax.checkpoint if checkpoint else (lambda step: step)

    if case_name.startswith("oscillators"):

        def oscillators(x, v, k, c, dt, steps):
            def step(state, _):
                x, v = state
                a = -k * x - c * v
                v = v + dt * a
                return (x + dt * v, v), None

            (x, v), _ = lax.scan(step_wrapper(step), (x, v), None, length=steps)
            return jnp.sum(x * x) + 0.1 * jnp.sum(v * v)

        compiled = jax.jit(jax.grad(oscillators, argnums=(0, 1, 2)), static_argnames="steps")
        return lambda x, v, k, c, dt, steps: jax.block_until_ready(
            compiled(x, v, k, c, dt, steps=steps))

    if case_name.startswith("rnn"):

        def rnn(W, U, x, h):
            def step(h, x_t):
                return jnp.tanh(W @ h + U @ x_t), None

            h, _ = lax.scan(step_wrapper(step), h, x)
            return jnp.sum(h)

        compiled = jax.jit(jax.grad(rnn, argnums=(0, 1, 3)))
        return lambda W, U, x, h: jax.block_until_ready(compiled(W, U, x, h))

    if case_name.startswith("pendulum"):

        def pendulum(theta, omega, g, dt, steps):
            def f(th, om):
                return om, -g * jnp.sin(th)

            def step(state, _):
                theta, omega = state
                k1_th, k1_om = f(theta, omega)
                k2_th, k2_om = f(theta + 0.5 * dt * k1_th, omega + 0.5 * dt * k1_om)
                k3_th, k3_om = f(theta + 0.5 * dt * k2_th, omega + 0.5 * dt * k2_om)
                k4_th, k4_om = f(theta + dt * k3_th, omega + dt * k3_om)
                theta = theta + dt / 6.0 * (k1_th + 2.0 * k2_th + 2.0 * k3_th + k4_th)
                omega = omega + dt / 6.0 * (k1_om + 2.0 * k2_om + 2.0 * k3_om + k4_om)
                return (theta, omega), None

            (theta, _), _ = lax.scan(step_wrapper(step), (theta, omega), None, length=steps)
            return theta

        compiled = jax.jit(jax.grad(pendulum, argnums=(0, 1, 2)), static_argnames="steps")
        return lambda theta, omega, g, dt, steps: jax.block_until_ready(
            compiled(theta, omega, g, dt, steps=steps))

    if case_name.startswith("kepler"):

        @jax.jit
        def iterations(M, e, tol):
            def unconverged(state):
                E, E_new, _ = state
                return jnp.max(jnp.abs(E_new - E)) > tol

            def iterate(state):
                _, E, count = state
                return E, M + e * jnp.sin(E), count + 1

            return lax.while_loop(unconverged, iterate, (M, M + e * jnp.sin(M), 0))[2]

        def kepler(M, e, count):
            def step(E, _):
                return M + e * jnp.sin(E), None

            E, _ = lax.scan(step_wrapper(step), M, None, length=count + 1)
            return jnp.sum(jnp.cos(E))

        compiled = jax.jit(jax.grad(kepler, argnums=(0, 1)), static_argnames="count")
        return lambda M, e, tol: jax.block_until_ready(
            compiled(M, e, count=int(iterations(M, e, tol))))

    raise KeyError(f"no JAX program for {case_name!r}")


def torch_gradient(func: Callable[..., Any], wrt: tuple[str, ...]) -> GradientFunction:
    """`torch.autograd.grad` of `func` run eagerly on tensors.

    Arrays become tensors sharing their memory; a float being differentiated
    becomes a float64 scalar tensor; other numbers (a step size, a count, a
    tolerance) stay Python numbers, as a PyTorch user passes them.
    """
    torch = importlib.import_module("torch")
    program = with_numpy_module(func, _torch_as_numpy(torch))
    indices = wrt_indices(func, wrt)

    def tensor(arg: Any, differentiated: bool) -> Any:
        if isinstance(arg, float) and differentiated:
            return torch.tensor(arg, dtype=torch.float64, requires_grad=True)
        if isinstance(arg, (int, float)):
            return arg
        return torch.as_tensor(arg).requires_grad_(differentiated)

    def gradient(*args: Any) -> tuple[Any, ...]:
        tensors = [tensor(arg, index in indices) for index, arg in enumerate(args)]
        inputs = [tensors[index] for index in indices]
        return tuple(g.numpy() for g in torch.autograd.grad(program(*tensors), inputs))

    return gradient
