"""The loop benchmarks of `loops.py`: loops as people write them, and their hand adjoints.

Each program is a plain function over NumPy arrays or Python floats with a
Python `for` or `while` around its body, as a physicist or an ML person writes
it. Next to it stands the adjoint a careful person writes by hand: the forward
loop run once, keeping only what the backward loop needs, in preallocated
arrays, with in-place updates where they save a temporary. That adjoint is
the reference every other gradient is timed against.

The recurrent network is `loop_cases.rnn`, with its batched backpropagation
through time (`loop_cases.rnn_hand_grad`), at a longer sequence.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# ----- damped oscillators, semi-implicit Euler -----


def oscillators(x, v, k, c, dt, steps):
    """Energy-like loss after `steps` semi-implicit Euler steps of damped oscillators."""
    for _ in range(steps):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return np.sum(x * x) + 0.1 * np.sum(v * v)


def oscillators_hand_grad(
    x: np.ndarray, v: np.ndarray, k: np.ndarray, c: float, dt: float, steps: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of `oscillators` with respect to (x, v, k).

    A step is linear in (x, v): v' = (1 - dt c) v - dt k x, x' = x + dt v'.
    The backward step needs no state but for the gradient of k, which needs
    each step's x: those are kept in one (steps, n) array.
    """
    xs = np.empty((steps, x.shape[0]))
    x, v = x.copy(), v.copy()
    damping = 1.0 - dt * c
    dt_k = dt * k
    for t in range(steps):
        xs[t] = x
        v *= damping
        v -= dt_k * x
        x += dt * v
    d_x, d_v = 2.0 * x, 0.2 * v
    d_k = np.zeros_like(k)
    d_v_new = np.empty_like(d_v)
    for t in range(steps - 1, -1, -1):
        np.multiply(d_x, dt, out=d_v_new)  # through x' = x + dt v'
        d_v_new += d_v
        d_x -= dt_k * d_v_new
        d_k -= xs[t] * d_v_new
        np.multiply(d_v_new, damping, out=d_v)
    d_k *= dt
    return d_x, d_v, d_k


def oscillators_args(n: int, steps: int) -> Callable[[], tuple]:
    """Positions, velocities, stiffnesses of n oscillators; c = 0.1, dt = 0.01."""

    def make() -> tuple:
        rng = np.random.default_rng(11)
        return (rng.standard_normal(n), rng.standard_normal(n), rng.uniform(0.5, 2.0, n),
                0.1, 0.01, steps)

    return make


# ----- a pendulum integrated with classical Runge-Kutta, on Python floats -----


def pendulum(theta, omega, g, dt, steps):
    """The angle of a pendulum after `steps` RK4 steps of size dt."""

    def f(th, om):
        return om, -g * math.sin(th)

    for _ in range(steps):
        k1_th, k1_om = f(theta, omega)
        k2_th, k2_om = f(theta + 0.5 * dt * k1_th, omega + 0.5 * dt * k1_om)
        k3_th, k3_om = f(theta + 0.5 * dt * k2_th, omega + 0.5 * dt * k2_om)
        k4_th, k4_om = f(theta + dt * k3_th, omega + dt * k3_om)
        theta = theta + dt / 6.0 * (k1_th + 2.0 * k2_th + 2.0 * k3_th + k4_th)
        omega = omega + dt / 6.0 * (k1_om + 2.0 * k2_om + 2.0 * k3_om + k4_om)
    return theta


def pendulum_hand_grad(
    theta: float, omega: float, g: float, dt: float, steps: int
) -> tuple[float, float, float]:
    """Gradients of `pendulum` with respect to (theta, omega, g).

    A stage maps its angle and speed (th_s, om_s) to k_th = om_s and
    k_om = -g sin(th_s). The forward loop keeps each step's four stage sines
    and cosines in a list; the backward step goes through the stages in
    reverse, w and u being the adjoints of theta' and omega' times dt / 6.
    """
    half, sixth = 0.5 * dt, dt / 6.0
    stages = []
    for _ in range(steps):
        s1 = math.sin(theta)
        th2 = theta + half * omega
        om2 = omega - half * g * s1
        s2 = math.sin(th2)
        th3 = theta + half * om2
        om3 = omega - half * g * s2
        s3 = math.sin(th3)
        th4 = theta + dt * om3
        s4 = math.sin(th4)
        stages.append((s1, s2, s3, s4, math.cos(theta), math.cos(th2), math.cos(th3),
                       math.cos(th4)))
        theta = theta + sixth * (omega + 2.0 * om2 + 2.0 * om3 + omega - dt * g * s3)
        omega = omega - sixth * g * (s1 + 2.0 * s2 + 2.0 * s3 + s4)
    d_th, d_om, d_g = 1.0, 0.0, 0.0
    for s1, s2, s3, s4, c1, c2, c3, c4 in reversed(stages):
        w, u = sixth * d_th, sixth * d_om
        # stage 4: th4 = theta + dt k3_th, om4 = omega + dt k3_om
        a_th4 = -g * c4 * u
        a_k3_th = 2.0 * w + dt * a_th4
        a_k3_om = 2.0 * u + dt * w
        # stage 3: th3 = theta + dt/2 k2_th, om3 = omega + dt/2 k2_om
        a_th3 = -g * c3 * a_k3_om
        a_k2_th = 2.0 * w + half * a_th3
        a_k2_om = 2.0 * u + half * a_k3_th
        # stage 2: th2 = theta + dt/2 k1_th, om2 = omega + dt/2 k1_om
        a_th2 = -g * c2 * a_k2_om
        a_k1_th = w + half * a_th2
        a_k1_om = u + half * a_k2_th
        d_g -= s1 * a_k1_om + s2 * a_k2_om + s3 * a_k3_om + s4 * u
        d_th = d_th + a_th4 + a_th3 + a_th2 - g * c1 * a_k1_om
        d_om = d_om + w + a_k3_th + a_k2_th + a_k1_th
    return d_th, d_om, d_g


def pendulum_args(steps: int) -> Callable[[], tuple]:
    """A swing of about 1 radian, g = 9.81, dt = 0.005."""

    def make() -> tuple:
        return 1.0, 0.2, 9.81, 0.005, steps

    return make


# ----- Kepler's equation by fixed-point iteration, a `while` to convergence -----


def kepler(M, e, tol):
    """Sum of cos E over the solutions E of E - e sin E = M, iterated to `tol`."""
    E = M
    E_new = M + e * np.sin(E)
    while np.max(np.abs(E_new - E)) > tol:
        E = E_new
        E_new = M + e * np.sin(E)
    return np.sum(np.cos(E_new))


def kepler_hand_grad(M: np.ndarray, e: float, tol: float) -> tuple[np.ndarray, float]:
    """Gradients of `kepler` with respect to (M, e), replaying every iteration backwards.

    The loop is unrolled, as the function is: no implicit-function shortcut.
    The forward loop keeps every iterate E_k and the sine it takes of it; the
    backward loop goes through E_(k+1) = M + e sin(E_k) in reverse.
    """
    iterates, sines = [M], [np.sin(M)]
    E_new = M + e * sines[0]
    while np.max(np.abs(E_new - iterates[-1])) > tol:
        iterates.append(E_new)
        sines.append(np.sin(E_new))
        E_new = M + e * sines[-1]
    d_E = -np.sin(E_new)
    d_M = np.zeros_like(M)
    d_e = 0.0
    for E, sin_E in zip(reversed(iterates), reversed(sines), strict=True):
        d_M += d_E
        d_e += float(d_E @ sin_E)
        d_E *= np.cos(E)
        d_E *= e
    d_M += d_E  # E_0 is M itself
    return d_M, d_e


def kepler_args(n: int) -> Callable[[], tuple]:
    """n mean anomalies, eccentricity 0.7, tolerance 1e-12: about 80 iterations."""

    def make() -> tuple:
        rng = np.random.default_rng(12)
        return rng.uniform(0.0, 2.0 * np.pi, n), 0.7, 1e-12

    return make
