"""A weight's adjoint summed from per-step products becomes one product after the loop
(transforms/accumulations.py): the numbers stay those of central differences, in every
mode, for vectors, batches (matrices), mixed ranks and loops that run no step."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences

RNG = np.random.default_rng(4)


def rnn(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def rnn_batched(W, U, xs, h):  # h: (hidden, batch), xs: (steps, inputs, batch)
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def row_major(W, xs, h):  # h @ W: the weight on the right
    for t in range(xs.shape[0]):
        h = np.sin(h @ W + xs[t])
    return np.sum(h)


def mixed(W, h, steps):  # a vector, then a matrix: no one stacking, summed step by step
    for _ in range(steps):
        h = np.tanh(W @ h)
        h = np.stack([h, h], axis=-1) if h.ndim == 1 else h
    return np.sum(h)


def while_rnn(W, h):
    n = 0
    while n < 6:
        h = np.cos(W @ h)
        n += 1
    return np.sum(h)


def weight_read_again(W, xs, h):  # W's adjoint is read in the loop: left step by step
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        h = h + np.sum(W) * 0.01
    return np.sum(h)


PROGRAMS = {
    "rnn": (rnn, [RNG.standard_normal((4, 4)) / 2, RNG.standard_normal((4, 3)),
                  RNG.standard_normal((7, 3)), RNG.standard_normal(4)], (0, 1, 3)),
    "batched": (rnn_batched, [RNG.standard_normal((4, 4)) / 2, RNG.standard_normal((4, 3)),
                              RNG.standard_normal((5, 3, 2)), RNG.standard_normal((4, 2))],
                (0, 1, 3)),
    "row major": (row_major, [RNG.standard_normal((3, 3)) / 2, RNG.standard_normal((6, 3)),
                              RNG.standard_normal(3)], (0, 2)),
    "mixed ranks": (mixed, [RNG.standard_normal((3, 3)) / 2, RNG.standard_normal(3), 3], (0,)),
    "while": (while_rnn, [RNG.standard_normal((3, 3)) / 2, RNG.standard_normal(3)], (0, 1)),
    "read again": (weight_read_again, [RNG.standard_normal((3, 3)) / 2,
                                       RNG.standard_normal((4, 3)), RNG.standard_normal(3)],
                   (0, 2)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_gradients_against_central_differences(name):
    f, args, wrt = PROGRAMS[name]
    ours = check_against_finite_differences(f, args, wrt=wrt, second_order=name != "mixed ranks")
    for got, want in zip(ad.grad(f, wrt=wrt, jit=True)(*args), ours):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    if name != "mixed ranks":  # (numba: the products step by step, lists of arrays undone)
        for got, want in zip(ad.grad(f, wrt=wrt, jit="numba")(*args), ours):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_weights_adjoint_is_one_product_after_the_loop():
    source = ad.grad(rnn, wrt=(0, 1, 3)).source
    assert "dW_steps = matmul_grad_lhs_of_steps(W_adjoints, W, W_operands)" in source
    assert "dU_steps = matmul_grad_lhs_of_steps(U_adjoints, U, U_operands)" in source
    assert "matmul_grad_lhs(" not in source  # no rank-one update left in the loop
    assert "matmul_grad_rhs_of_steps(" in ad.grad(row_major, wrt=(0, 2)).source
    assert "_of_steps" not in ad.grad(weight_read_again, wrt=(0, 2)).source


def test_a_loop_that_runs_no_step_leaves_zeros():
    W, U, _, h = PROGRAMS["rnn"][1]
    dW, dU, dh = ad.grad(rnn, wrt=(0, 1, 3))(W, U, np.zeros((0, 3)), h)
    assert not dW.any() and not dU.any() and dW.shape == W.shape and dU.shape == U.shape
    np.testing.assert_allclose(dh, 2 * h)


def test_the_sums_over_steps_equal_the_step_by_step_sums():
    from autodiff.ops import runtime

    a = RNG.standard_normal((3, 4))
    for gs, bs in [([RNG.standard_normal(3) for _ in range(5)],
                    [RNG.standard_normal(4) for _ in range(5)]),
                   ([RNG.standard_normal((3, 2)) for _ in range(5)],
                    [RNG.standard_normal((4, 2)) for _ in range(5)]),
                   ([RNG.standard_normal((3, 2)), RNG.standard_normal(3)],
                    [RNG.standard_normal((4, 2)), RNG.standard_normal(4)])]:
        expected = sum(runtime.matmul_grad_lhs(g, a, b) for g, b in zip(gs, bs))
        np.testing.assert_allclose(runtime.matmul_grad_lhs_of_steps(gs, a, bs), expected)
    for xs, gs in [([RNG.standard_normal(3) for _ in range(5)],  # x @ a, a fixed
                    [RNG.standard_normal(4) for _ in range(5)]),
                   ([RNG.standard_normal((2, 3)) for _ in range(5)],
                    [RNG.standard_normal((2, 4)) for _ in range(5)]),
                   ([RNG.standard_normal((2, 3)), RNG.standard_normal(3)],
                    [RNG.standard_normal((2, 4)), RNG.standard_normal(4)])]:
        expected = sum(runtime.matmul_grad_rhs(g, x, a) for g, x in zip(gs, xs))
        np.testing.assert_allclose(runtime.matmul_grad_rhs_of_steps(gs, xs, a), expected)
    assert not runtime.matmul_grad_lhs_of_steps([], a, []).any()
