"""A ``while`` loop's test and body read the carried values through params of their
own, written in one variable each: specialised code must not update the test's in
place, nor write a new value into the variable while the body still reads the old one
(a fixed-point iteration ``E = E_new; E_new = M + e * np.sin(E)`` once compared
``E_new`` with itself and stopped after one step, a silently wrong gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad


def kepler(M, e, tol):
    E = M
    E_new = M + e * np.sin(E)
    while np.max(np.abs(E_new - E)) > tol:
        E = E_new
        E_new = M + e * np.sin(E)
    return np.sum(np.cos(E_new))


def swap(a, b, steps):
    k = 0
    while k < steps and np.sum(a - b) < 50.0:
        a, b = b, a + np.tanh(b)
        k += 1
    return np.sum(a * b)


def shifted(x, w):
    previous = x
    current = x * w
    while np.max(np.abs(current - previous)) > 1e-10:
        previous = current
        current = np.sqrt(current * w + 1.0)
    return np.sum(current * previous)


CASES = [
    (kepler, [np.random.default_rng(12).uniform(0, 2 * np.pi, 5), 0.7, 1e-12], (0, 1)),
    (swap, [np.array([0.1, 0.2]), np.array([0.3, -0.1]), 9], (0, 1)),
    (shifted, [np.array([0.5, 2.0]), np.array([0.7, 1.3])], (0, 1)),
]


@pytest.mark.parametrize("jit", [True, "numba"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_specialised_while_loops_keep_the_old_value_until_the_body_ends(case, jit):
    f, args, wrt = CASES[case]
    plain = ad.grad(f, wrt=wrt)(*args)
    for ours, numeric in zip(plain, ad.numeric_grad(f, *args, wrt=wrt)):
        np.testing.assert_allclose(ours, numeric, rtol=1e-6, atol=1e-8)
    try:
        specialised = ad.grad(f, wrt=wrt, jit=jit)(*args)
    except ad.AutodiffError as refused:  # numba refuses some forms: never a wrong number
        assert jit == "numba", refused
        return
    for ours, expected in zip(specialised, plain):
        np.testing.assert_allclose(ours, expected, rtol=1e-12)
