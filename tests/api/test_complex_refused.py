"""Complex numbers are refused, never differentiated with rules written for real values.

autodiff's rules are real ones: np.abs's is ``g * sign(x)``, which for a complex ``z``
would give ``z / |z|`` where the conjugate convention of JAX and autograd gives
``conj(z) / |z|``. A complex argument (reverse mode: as its gradient is made; forward
mode: where the function calls an op whose rules are real ones) and a complex number
made in the code are errors at the user's line.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad

Z = np.array([3.0 + 4.0j, 1.0 - 2.0j])
X = np.array([1.0, 2.0])


def squared_modulus(z):
    return np.sum(np.abs(z) ** 2)


def scaled(x, c):
    return np.sum(np.abs(x * c))


def holomorphic(z):
    return np.sum(z * z)


@pytest.mark.parametrize("call", [
    lambda: ad.grad(squared_modulus)(Z),
    lambda: ad.grad(squared_modulus)(3.0 + 4.0j),
    lambda: ad.grad(squared_modulus)(np.complex64(1.0 + 1.0j)),
    lambda: ad.vjp(squared_modulus)(Z, 1.0),
    lambda: ad.jvp(squared_modulus)(Z, Z),
    lambda: ad.jvp(squared_modulus)(Z, np.ones(2)),
    lambda: ad.hvp(squared_modulus)(Z, Z),
    lambda: ad.jacobian(squared_modulus)(Z),
    lambda: ad.check_grad(squared_modulus, Z),
    lambda: ad.grad(scaled)(X, Z),  # the complex argument is not differentiated
    lambda: ad.jvp(scaled)(X, Z, X),
    lambda: ad.grad(holomorphic)(Z),
], ids=["grad", "grad of a complex", "grad of a complex64", "vjp", "jvp", "jvp, real tangent",
        "hvp", "jacobian", "check_grad", "grad beside a complex", "jvp beside a complex",
        "grad of a complex output"])
def test_a_complex_argument_is_refused(call):
    with pytest.raises(ad.ArgumentKindError, match="complex numbers are not differentiated"):
        call()


def made_by_a_constant(x):
    return np.sum(np.abs(x * 1j))


def made_by_astype(x):
    return np.sum(np.abs(x.astype(np.complex128)))


def made_by_a_dtype_name(x):
    return np.sum(np.abs(np.array(x, dtype="complex128")))


def made_by_complex(x):
    return np.sum(np.abs(complex(x[0], x[1])))


@pytest.mark.parametrize("fn", [made_by_a_constant, made_by_astype, made_by_a_dtype_name,
                                made_by_complex])
def test_a_complex_number_made_in_the_code_is_refused_at_its_line(fn):
    with pytest.raises(ad.NonDifferentiableError, match="makes a complex number") as raised:
        ad.grad(fn)(X)
    assert raised.value.filename == __file__
    assert raised.value.lineno == fn.__code__.co_firstlineno + 1


def test_real_arguments_are_differentiated_as_before():
    np.testing.assert_allclose(ad.grad(squared_modulus)(X), 2 * X)
    value, tangent = ad.jvp(squared_modulus)(X, np.array([1.0, -1.0]))
    assert (value, tangent) == (5.0, 2.0 - 4.0)
    np.testing.assert_allclose(ad.grad(scaled)(X, np.array([2.0, -3.0])), [2.0, 3.0])
    # the check in forward mode is where an op's rules are real ones, not elsewhere
    assert "real_arguments((z, " in ad.jvp(squared_modulus).source
    assert "real_arguments" not in ad.jvp(holomorphic).source
    assert "real_arguments" not in ad.grad(squared_modulus).source
