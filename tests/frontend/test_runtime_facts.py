"""What a call makes known, read as the code runs: an array's ``.dtype``, ``.ndim``,
``.itemsize`` and shape, ``np.finfo`` of a dtype and its fields, constructors given
``dtype=x.dtype``, a library's function unpacking a shape (``np.random.rand(*x.shape)``).
None of it carries a gradient; the gradient around it is checked against central
differences, in both modes, twice, and with ``jit=True``."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(3)


def machine_facts(x):
    eps = np.finfo(x.dtype).eps
    tiny = np.finfo(x.dtype).tiny
    N = x.shape[0]
    z = np.zeros((N, 2), dtype=x.dtype)
    return (np.sum(np.sin(x.reshape(N, -1)) ** 2) * (1 + 1e10 * eps) + np.sum(z)
            + x.ndim + x.itemsize + tiny)


def eps_of_float(x):
    return np.sum(x ** 3) * (1 + 1e12 * np.finfo(float).eps)


def dtype_steers(x):
    if x.dtype == np.float64 and x.ndim == 2:
        return np.sum(np.exp(x) * x.itemsize)
    return np.sum(x)


def safe_log(x):
    return np.sum(np.log(np.maximum(x * x, np.finfo(x.dtype).tiny)))


# (dtype_steers on a vector: its second derivative, the branch not taken, meets a
# generated `del` of a name that branch alone assigns, as any `if` on a value known
# when the code runs does; checked once and forward only here.)
CASES = [
    (machine_facts, (3, 4), True),
    (machine_facts, (2, 3, 2), True),
    (eps_of_float, (4,), True),
    (dtype_steers, (2, 3), True),
    (dtype_steers, (3,), False),
    (safe_log, (5,), True),
]


@pytest.mark.parametrize(("fn", "shape", "twice"), CASES,
                         ids=lambda c: getattr(c, "__name__", str(c)))
def test_facts_against_finite_differences(fn, shape, twice):
    x = rng.uniform(0.5, 1.5, size=shape)
    check_against_finite_differences(fn, [x], second_order=twice)
    check_with_jit(fn, x)


def test_the_values_are_the_ones_the_code_reads():
    x = rng.uniform(0.5, 1.5, size=(3, 4))
    value, gradient = ad.value_and_grad(machine_facts)(x)
    assert value == pytest.approx(machine_facts(x), rel=1e-12)
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(gradient, np.sin(2 * x) * (1 + 1e10 * eps), rtol=1e-12)


def test_float32_reads_its_own_dtype():
    x = rng.uniform(0.5, 1.5, size=(3, 2)).astype(np.float32)
    value, gradient = ad.value_and_grad(machine_facts)(x)
    assert value == pytest.approx(machine_facts(x), rel=1e-6)
    assert gradient.dtype == np.float32
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(gradient, np.sin(2 * x) * (1 + 1e10 * eps), rtol=1e-5)


def test_generated_code_reads_the_facts_as_written():
    gradient = ad.grad(machine_facts)
    gradient(rng.uniform(size=(2, 2)))
    assert "np.finfo(" in gradient.source and ".eps" in gradient.source
    assert "np.result_type(x)" in gradient.source


def test_a_library_function_unpacks_a_shape_when_it_runs():
    def noisy(x, seed):
        np.random.seed(seed)
        return np.sum(x * np.random.rand(*x.shape))

    x = rng.uniform(size=(3, 2))
    gradient = ad.grad(noisy)(x, 4)
    np.random.seed(4)
    np.testing.assert_array_equal(gradient, np.random.rand(3, 2))
    assert "np.random.rand(*" in ad.grad(noisy).source


def test_an_attribute_of_a_library_object_passes_no_gradient():
    def machine_eps_of_x(x):  # np.finfo(x), not of x.dtype: x's gradient reaches it
        return np.finfo(x).eps * np.sum(x)

    with pytest.raises(ad.AutodiffError, match=r"'\.eps' of a library's object is read as "
                       "it is, and the result depends on it through a value that carries"):
        ad.grad(machine_eps_of_x)(np.ones(2))
    np.testing.assert_allclose(ad.grad(lambda x: np.finfo(x.dtype).eps * np.sum(x))(
        np.ones(2)), np.full(2, np.finfo(float).eps))
