"""A derivative of code over Python floats computes with Python floats.

The adjoints a loop or a branch starts from are ``0.0`` for a Python number (not a 0-d
array), and the rules of a function the user called through ``math`` call ``math``'s
functions where those are defined for every float (``math.sin``'s adjoint is
``g * math.cos(x)``, not ``np.cos``, whose NumPy scalar makes every later operation
of the loop slower). The gradients are the same; these tests check them against
central differences, in both modes and to second order, and check the kinds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops.runtime import zero_adjoint
from tests.helpers import check_against_finite_differences


def pendulum(theta, omega, g, dt, steps):
    for _ in range(steps):
        k1_th, k1_om = omega, -g * math.sin(theta)
        k2_th = omega + 0.5 * dt * k1_om
        k2_om = -g * math.sin(theta + 0.5 * dt * k1_th)
        theta = theta + dt * (k1_th + k2_th) / 2.0
        omega = omega + dt * (k1_om + k2_om) / 2.0
    return theta * math.cos(omega)


def rotate(angle, x, y, turns):
    for _ in range(turns):
        x, y = math.cos(angle) * x - math.sin(angle) * y, math.sin(angle) * x + math.cos(angle) * y
    return x + 2.0 * y


def branchy(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 0:
            total = total + math.sin(x * i)
        else:
            total = total + x
    return total


@pytest.mark.parametrize("steps", [0, 1, 7])
def test_pendulum_gradients_against_finite_differences(steps):
    check_against_finite_differences(pendulum, [0.4, -0.3, 9.81, 0.05, steps], wrt=(0, 1, 2),
                                     second_order=True)


def test_rotation_and_branches_against_finite_differences():
    check_against_finite_differences(rotate, [0.3, 1.2, -0.7, 5], wrt=(0, 1, 2),
                                     second_order=True)
    check_against_finite_differences(branchy, [0.8, 5], second_order=True)


@pytest.mark.parametrize("jit", [False, True])
def test_gradients_of_floats_are_python_floats(jit):
    grads = ad.grad(pendulum, wrt=(0, 1, 2), jit=jit)(0.4, -0.3, 9.81, 0.05, 6)
    assert [type(g) for g in grads] == [float, float, float]
    assert type(ad.grad(branchy, jit=jit)(0.8, 5)) is float


def test_jit_gradients_match_plain():
    args = (0.4, -0.3, 9.81, 0.05, 9)
    plain = ad.grad(pendulum, wrt=(0, 1, 2))(*args)
    jitted = ad.grad(pendulum, wrt=(0, 1, 2), jit=True)(*args)
    np.testing.assert_allclose(jitted, plain, rtol=1e-13)


def test_rules_of_math_calls_use_math():
    source = ad.grad(rotate, wrt=(0, 1, 2)).source
    assert "math.cos(" in source and "np.cos(" not in source and "np.sin(" not in source
    # NumPy's own functions keep NumPy's rules
    assert "np.cos(" in ad.grad(lambda x: np.sum(np.sin(x))).source


def test_zero_adjoint_kinds():
    assert zero_adjoint(2.5) == 0.0 and type(zero_adjoint(2.5)) is float
    assert type(zero_adjoint(3)) is float and type(zero_adjoint(True)) is float
    assert zero_adjoint(1 + 2j) == 0j and type(zero_adjoint(1 + 2j)) is complex
    assert zero_adjoint(np.ones(3, np.float32)).dtype == np.float32
    assert zero_adjoint(np.arange(3)).dtype == np.float64
    zeros = zero_adjoint(np.ones((2, 2)))
    zeros += 1.0  # (a new, writable array: the backward sweep adds into it in place)
    assert zero_adjoint(np.float64(2.0)).shape == ()
    assert zero_adjoint([1.0, np.ones(2)])[1].tolist() == [0.0, 0.0]


def count_down(x, n):
    # an integer carried with the float: its adjoint starts from a float zero
    k = 0
    for _ in range(n):
        k = k + 1
        x = x * 1.5 + k
    return x


def test_integer_carried_beside_float():
    check_against_finite_differences(count_down, [0.5, 4])
    assert type(ad.grad(count_down)(0.5, 4)) is float
