"""Python as people write it: conversions of computed values (``int(v)``,
``np.float64(v)``, ``v.item()``), each checked against central differences in
reverse and forward mode (``ad.check_grad`` checks both)."""

from __future__ import annotations

import numpy as np

import autodiff as ad

rng = np.random.default_rng(19)


def check(fn, *args, wrt=0) -> None:
    """``fn``'s gradient and JVP agree with central differences, with and without jit."""
    ad.check_grad(fn, *args, wrt=wrt, rtol=1e-6, atol=1e-9)
    for jit in (False, True):
        got = ad.grad(fn, wrt=wrt, jit=jit)(*args)
        expected = ad.numeric_grad(fn, *args, wrt=wrt)
        for ours, theirs in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)


# ----- conversions of computed values -----


def indexed_by_int(x):
    return x[int(x[0])] * x[1] + x[int(x[2] > 0.0)] ** 2


def scaled_by_bool(x):
    if bool(x[0] > 0):
        return np.sum(x * x) * bool(x[1])
    return np.sum(x) * float(bool(x[2] < 0))


def converted(x):
    a = np.float64(x[0]) * x[1]
    b = x[2:3].item() * np.sum(np.float64(x) ** 2)
    c = np.sum(np.sin(x)).item() * x.astype(float)[0]
    return a + b + c + float(x[1]) * np.float64(np.sum(x))


def test_int_and_bool_pass_no_gradient_in_either_mode():
    x = np.array([1.3, 0.7, 2.0])
    check(indexed_by_int, x)
    # int(1.3) and int(True) are 1: the function is x[1] * x[1] + x[1] ** 2 there
    np.testing.assert_allclose(ad.grad(indexed_by_int)(x), [0.0, 4 * x[1], 0.0])
    for x in (np.array([0.5, 2.0, -1.0]), np.array([-0.5, 2.0, -1.0]), np.array([0.5, 0.0, 1.0])):
        check(scaled_by_bool, x)


def test_float64_item_and_astype_pass_the_gradient():
    check(converted, rng.normal(size=4))


def test_int_of_a_computed_value_as_a_loop_bound():
    check(power_by_int, np.array([1.5, 2.7]))


def power_by_int(x):
    total = x[0]
    for _ in range(int(x[1])):
        total = total * x[0]
    return total
