"""A closure variable hides the module's global of the same name in the function that
closes over it, never in a function of the module it calls: the derivative, which
runs in the first one's namespace, reads each where its code reads it."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad

scale = np.array([0.5, -1.5, 2.0])


class Lin:
    def __init__(self, s):
        self.W = np.eye(3) * s + 0.1

    def __call__(self, x):
        return np.tanh(self.W @ x)


lin = Lin(0.3)


def global_loss(x):
    return np.sum(lin(x) ** 2) + np.sum(np.sin(scale * x))


def make(lin, scale):  # closure variables named as the globals global_loss reads
    def loss(x):
        return np.sum(lin(x) ** 2) * np.sum(scale * x) + global_loss(x)
    return loss


@pytest.mark.parametrize("jit", [False, True])
def test_each_name_read_where_the_code_reads_it(jit):
    loss = make(Lin(0.9), np.array([3.0, 1.0, -2.0]))
    x = np.array([0.3, -0.7, 1.1])
    grad = ad.grad(loss, jit=jit)
    np.testing.assert_allclose(grad(x), ad.numeric_grad(loss, x), rtol=1e-6, atol=1e-8)
    value, tangent = ad.jvp(loss, jit=jit)(x, np.ones(3))
    np.testing.assert_allclose(value, loss(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, ad.numeric_grad(loss, x).sum(), rtol=1e-6)
