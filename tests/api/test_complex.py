"""Complex values through every transform, in the convention of JAX and autograd: the
gradient of a real function of z = x + iy is df/dx - i df/dy (np.abs's is
conj(z) / |z|), a holomorphic function's vjp is g * f'(z), and forward mode gives a real
tangent for a real output.

A derivative compiled for real values whose rules hold for real values alone (it calls
np.abs, np.var, ...) hands calls with complex arguments to the derivative compiled for
complex values; one whose rules hold for both (holomorphic and linear ops) runs them
itself. An op with rules for real values alone and none for complex ones (np.linalg.eigh)
is refused when a complex value reaches it, at the user's line; so is grad of a complex
output.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(19)
Z = rng.normal(size=3) + 1j * rng.normal(size=3)
W = rng.normal(size=3) + 1j * rng.normal(size=3)
X = rng.normal(size=3)


def numeric(f, *args, wrt=0):
    """df/dx - i df/dy by central differences (ad.numeric_grad, itself checked here
    against a closed form)."""
    return ad.numeric_grad(f, *args, wrt=wrt)


def squared_modulus(z):
    return np.sum(np.abs(z) ** 2)


def holomorphic(z):
    return np.sum(z * z)


def scaled(x, c):
    return np.sum(np.abs(x * c))


def phase_loss(x):
    return np.sum(np.real(np.exp(1j * x) * np.conj(x + 2j)))


def test_numeric_grad_of_a_complex_argument_is_df_dx_minus_i_df_dy():
    np.testing.assert_allclose(numeric(squared_modulus, Z), 2 * np.conj(Z), rtol=1e-8)
    np.testing.assert_allclose(numeric(lambda z: np.sum(np.imag(z)), Z), -1j * np.ones(3))
    assert numeric(lambda z: abs(z) ** 2, 3.0 + 4.0j) == pytest.approx(6.0 - 8.0j)


def test_the_gradient_of_a_real_function_of_complex_values_is_jax_and_autograds():
    np.testing.assert_allclose(ad.grad(squared_modulus)(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(ad.grad(lambda z: np.sum(np.abs(z)))(Z), np.conj(Z) / np.abs(Z))
    assert ad.grad(lambda z: abs(z) ** 2)(3.0 + 4.0j) == pytest.approx(6.0 - 8.0j)
    single = ad.grad(squared_modulus)(Z.astype(np.complex64))
    assert single.dtype == np.complex64
    np.testing.assert_allclose(single, 2 * np.conj(Z), rtol=1e-6)


@pytest.mark.parametrize("fn, args, wrt", [
    (squared_modulus, (Z,), 0),
    (scaled, (X, W), 0),
    (scaled, (X, W), (0, 1)),
    (phase_loss, (X,), 0),
    (lambda z, w: np.sum(np.abs(np.sin(z) * w + np.conj(z)) ** 2 + np.angle(z * w)), (Z, W),
     (0, 1)),
])
def test_every_way_agrees_with_central_differences(fn, args, wrt):
    check_against_finite_differences(fn, list(args), wrt=wrt, second_order=True)
    check_with_jit(fn, *args, wrt=wrt)


def test_a_derivative_for_real_values_hands_complex_arguments_over():
    gradient = ad.grad(squared_modulus)
    assert "complex_values(z)" in gradient.source.splitlines()[1]  # rules for real values
    np.testing.assert_allclose(gradient(X), 2 * X)  # real calls run that code
    np.testing.assert_allclose(gradient(Z), 2 * np.conj(Z))  # complex ones are handed over
    # holomorphic and linear rules hold for complex values: no check
    assert "complex_values(" not in ad.vjp(holomorphic).source
    np.testing.assert_allclose(ad.vjp(holomorphic)(Z, 1.0 + 0j), 2 * Z)


def test_a_complex_number_written_in_the_code_compiles_for_complex_values():
    gradient = ad.grad(phase_loss)
    assert "complex_values(" not in gradient.source  # no hand-over: its rules are complex ones
    assert "as_gradient_of(dx, x, complex_values=True)" in gradient.source
    np.testing.assert_allclose(gradient(X), numeric(phase_loss, X), rtol=1e-7)


def made_in_the_code(x):
    z = complex(x[0], x[1]) * np.array(x, dtype="complex128")
    return np.sum(np.abs(z.astype(np.complex128) * 1j) ** 2)


def test_complex_numbers_made_in_the_code():
    gradient = ad.grad(made_in_the_code)(X)
    assert gradient.dtype == np.float64
    np.testing.assert_allclose(gradient, numeric(made_in_the_code, X), rtol=1e-7)


def test_a_holomorphic_function_has_a_vjp_and_a_jvp_but_no_grad():
    np.testing.assert_allclose(ad.vjp(holomorphic)(Z, 1.0 + 0j), 2 * Z)
    value, tangent = ad.jvp(holomorphic)(Z, W)
    np.testing.assert_allclose(value, holomorphic(Z))
    np.testing.assert_allclose(tangent, np.sum(2 * Z * W))
    with pytest.raises(ad.ArgumentKindError, match="grad differentiates a real output"):
        ad.grad(holomorphic)(Z)
    with pytest.raises(ad.ArgumentKindError, match="grad needs a real output") as raised:
        ad.grad(lambda z: np.sum(np.abs(z) * z))(Z)
    assert os.path.basename(raised.value.filename) == os.path.basename(__file__)


def test_forward_mode_gives_a_real_tangent_for_a_real_output():
    value, tangent = ad.jvp(squared_modulus)(Z, W)
    assert value == pytest.approx(squared_modulus(Z))
    assert not np.iscomplexobj(tangent) and not np.iscomplexobj(value)
    assert tangent == pytest.approx(np.real(np.sum(2 * np.conj(Z) * W)))
    # a real tangent along a complex argument is a direction of its real parts
    _, along_x = ad.jvp(squared_modulus)(Z, np.ones(3))
    assert along_x == pytest.approx(np.sum(2 * Z.real))


def test_a_real_argument_takes_a_real_tangent():
    with pytest.raises(ad.ArgumentKindError, match="the tangent of a real argument is complex"):
        ad.jvp(phase_loss)(X, W)


def test_hessian_products_and_jacobians():
    v = W
    h = 1e-6
    gradient = ad.grad(squared_modulus)
    np.testing.assert_allclose(ad.hvp(squared_modulus)(Z, v),
                               (gradient(Z + h * v) - gradient(Z - h * v)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(ad.hvp(squared_modulus)(Z, v), 2 * np.conj(v))
    np.testing.assert_allclose(ad.jacobian(squared_modulus)(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(ad.jacobian(squared_modulus, mode="fwd")(Z), 2 * np.conj(Z))
    report = ad.check_grad(squared_modulus, Z)
    assert report.passed


def test_structures_with_complex_leaves():
    def loss(params, x):
        return np.sum(np.abs(params["W"] @ x + params["b"]) ** 2)

    params = {"W": rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3)), "b": W[:2]}
    gradient = ad.grad(loss)(params, X)
    expected = numeric(loss, params, X)
    for key in params:
        np.testing.assert_allclose(gradient[key], expected[key], rtol=1e-7)
    real = {"W": params["W"].real, "b": params["b"].real}
    for key, value in ad.grad(loss)(real, X).items():  # the same derivative, real calls
        assert value.dtype == np.float64


def eigenvalues(a):
    return np.sum(np.linalg.eigh(a)[0])


def test_an_op_with_rules_for_real_values_alone_is_refused_at_the_users_line():
    hermitian = np.array([[2.0, 1j], [-1j, 3.0]])
    with pytest.raises(ad.NonDifferentiableError, match="np.linalg.eigh of complex values is "
                       "not differentiated") as raised:
        ad.grad(eigenvalues)(hermitian)
    assert os.path.basename(raised.value.filename) == os.path.basename(__file__)
    assert raised.value.lineno == eigenvalues.__code__.co_firstlineno + 1
    np.testing.assert_allclose(ad.grad(eigenvalues)(hermitian.real), np.eye(2))


def signs(z):
    return np.sum(np.real(np.sign(z)) + np.abs(z))


def test_a_step_of_real_values_is_refused_for_complex_ones():
    # np.sign of a real x is piecewise constant, of a complex z it is z / |z|
    np.testing.assert_allclose(ad.grad(signs)(X), np.sign(X))
    with pytest.raises(ad.NonDifferentiableError, match="np.sign of complex values"):
        ad.grad(signs)(Z)


def test_complex_values_from_elsewhere_than_the_arguments_are_refused():
    def loss(x):
        return np.sum(np.abs(x * np.asarray(PHASES)))

    with pytest.raises(ad.ArgumentKindError, match="did not get from its arguments"):
        ad.grad(loss)(X)


PHASES = np.exp(1j * np.arange(3.0))


def test_numba_compiles_real_calls_and_refuses_complex_ones():
    pytest.importorskip("numba")
    gradient = ad.grad(squared_modulus, jit="numba")
    np.testing.assert_allclose(gradient(X), 2 * X)
    with pytest.raises(ad.AutodiffError, match="jit='numba' compiles derivatives of real "
                       "values, and this one computes with complex values") as raised:
        gradient(Z)
    assert os.path.basename(raised.value.filename) == os.path.basename(__file__)
    assert raised.value.lineno == squared_modulus.__code__.co_firstlineno
