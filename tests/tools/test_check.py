"""Finite differences against analytic derivatives; check_grad catching wrong rules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autodiff as ad
from autodiff.tools.check import default_step, evaluations

RNG = np.random.default_rng(7)


def cubic_sum(x):
    return np.sum(x ** 3 - 2.0 * x)


def log_softplus(x, w):
    return np.sum(np.log1p(np.exp(x @ w)))


def scalar_product(a, b):
    return a * np.sin(b) + b


def outer_tanh(x, y):
    return np.tanh(x[:, None] * y)  # an array output, from broadcasting


def pair(x):
    return np.sum(x ** 2), np.cos(x)


def magnitude(x):
    return np.sum(np.abs(x))


def doubles_in_place(x):
    x *= 2.0  # the caller's array too, as NumPy does
    return np.sum(x ** 2)


def sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


# (function, arguments, wrt, exact gradient)
X = RNG.normal(size=(3, 4))
W = RNG.normal(size=4) * 0.5
ANALYTIC = [
    (cubic_sum, (X,), 0, lambda x: 3 * x ** 2 - 2.0),
    (log_softplus, (X, W), 0, lambda x, w: sigmoid(x @ w)[:, None] * w),
    (log_softplus, (X, W), "w", lambda x, w: x.T @ sigmoid(x @ w)),
    (scalar_product, (1.3, -0.4), 1, lambda a, b: a * np.cos(b) + 1.0),
]


@pytest.mark.parametrize("method,rtol", [("central", 1e-8), ("forward", 1e-5),
                                         ("complex", 1e-14)])
@pytest.mark.parametrize("f,args,wrt,exact", ANALYTIC, ids=lambda p: getattr(p, "__name__", ""))
def test_numeric_grad_matches_the_analytic_derivative(f, args, wrt, exact, method, rtol):
    estimate = ad.numeric_grad(f, *args, wrt=wrt, method=method)
    expected = exact(*args)
    assert type(estimate) is type(expected) or np.shape(estimate) == np.shape(args[0 if wrt == 0
                                                                                     else 1])
    np.testing.assert_allclose(estimate, expected, rtol=rtol, atol=rtol)


def test_numeric_grad_structure_dtype_and_inputs_left_alone():
    x = X.astype(np.float32)
    x.setflags(write=False)
    both = ad.numeric_grad(log_softplus, x, W, wrt=("x", 1))
    assert isinstance(both, tuple) and both[0].dtype == np.float32 and both[1].dtype == np.float64
    assert isinstance(ad.numeric_grad(scalar_product, 2.0, 1.0), float)
    zero_d = ad.numeric_grad(cubic_sum, np.array(2.0))
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and abs(zero_d - 10.0) < 1e-8
    integers = ad.numeric_grad(cubic_sum, np.arange(3))
    np.testing.assert_allclose(integers, 3 * np.arange(3) ** 2 - 2.0, atol=1e-7)
    assert ad.numeric_grad(cubic_sum, np.zeros((0, 2))).shape == (0, 2)
    start = np.array([0.5, -1.0, 2.0])
    for method in ("central", "forward", "complex"):
        np.testing.assert_allclose(ad.numeric_grad(doubles_in_place, start, method=method),
                                   8.0 * start, rtol=1e-6)
    np.testing.assert_array_equal(start, [0.5, -1.0, 2.0])


def test_default_steps_balance_truncation_and_round_off():
    assert default_step("central", np.float64) == pytest.approx(6.055e-6, rel=1e-3)
    assert default_step("forward", np.float64) == pytest.approx(1.490e-8, rel=1e-3)
    assert default_step("central", np.float32) == pytest.approx(4.921e-3, rel=1e-3)
    assert evaluations("central", [12, 4]) == 32
    assert evaluations("forward", [12, 4]) == 18
    assert evaluations("complex", [12, 4]) == 16
    # an explicit step is absolute: a large one shows the truncation error of each method
    forward = ad.numeric_grad(cubic_sum, np.array([1.0]), method="forward", step=1e-2)
    central = ad.numeric_grad(cubic_sum, np.array([1.0]), method="central", step=1e-2)
    assert forward[0] - 1.0 == pytest.approx(3 * 1e-2 + 1e-4)   # 3h + h^2
    assert central[0] - 1.0 == pytest.approx(1e-4)              # h^2


def test_numeric_grad_errors_name_the_function():
    with pytest.raises(ad.AutodiffError, match=r"test_check.py:\d+: the complex step needs "
                       r"magnitude to return a complex number.*\n  hint: abs"):
        ad.numeric_grad(magnitude, np.ones(2), method="complex")
    with pytest.raises(ad.NonScalarOutputError, match=r"need outer_tanh to return a scalar"):
        ad.numeric_grad(outer_tanh, np.ones(2), np.ones(3))
    with pytest.raises(ad.WrtError, match=r"wrt='z' is not an argument of log_softplus\(x, w\)"):
        ad.numeric_grad(log_softplus, X, W, wrt="z")
    with pytest.raises(ValueError, match="method must be one of central, forward, complex"):
        ad.numeric_grad(cubic_sum, X, method="backward")


@pytest.mark.parametrize("f,args,wrt", [
    (log_softplus, (X, W), (0, 1)),
    (outer_tanh, (RNG.normal(size=3), RNG.normal(size=(2, 1, 1))), (0, 1)),  # vjp route
    (pair, (RNG.normal(size=(2, 3)),), 0),                                   # tuple output
    (scalar_product, (0.3, 2.0), ("a", "b")),
], ids=["two-arguments", "broadcast-array-output", "tuple-output", "python-floats"])
def test_check_grad_passes_on_correct_gradients(f, args, wrt):
    report = ad.check_grad(f, *args, wrt=wrt)
    assert report.passed
    names = [row.name for row in report.rows]
    assert names[-1] == "jvp" and len(names) == (len(wrt) if isinstance(wrt, tuple) else 1) + 1
    for row in report.rows:
        assert row.max_abs_error < 1e-7 and row.max_rel_error < 1e-5
    text = str(report)
    assert "passed" in text and "max abs error" in text and "FAILED" not in text


@ad.custom_grad
def scaled_sin(x):
    return np.sin(x)


@scaled_sin.defvjp
def _(g, ans, x):
    return g * np.cos(x) * np.where(np.arange(x.size).reshape(x.shape) == 4, 1.01, 1.0)


@scaled_sin.defjvp
def _(t, ans, x):
    return t * np.cos(x)


def uses_scaled_sin(x):
    return np.sum(scaled_sin(x) * 2.0)


@ad.custom_grad
def wrong_forward(x):
    return np.exp(x)


@wrong_forward.defvjp
def _(g, ans, x):
    return g * ans


@wrong_forward.defjvp
def _(t, ans, x):
    return t * ans * 1.5


def uses_wrong_forward(x):
    return np.sum(wrong_forward(x))


def test_check_grad_catches_a_wrong_reverse_rule_at_the_worst_element():
    x = RNG.normal(size=(2, 3))
    with pytest.raises(ad.GradientCheckError) as caught:
        ad.check_grad(uses_scaled_sin, x)
    report = caught.value.report
    [failure] = report.failures
    assert failure.name == "x" and failure.worst_index == (1, 1)  # flat element 4
    assert failure.ours == pytest.approx(2.0 * np.cos(x[1, 1]) * 1.01)
    assert failure.numeric == pytest.approx(2.0 * np.cos(x[1, 1]), rel=1e-8)
    message = str(caught.value)
    assert message.startswith("test_check.py:") and "gradient check failed for x" in message
    assert "FAILED" in message and "(1, 1)" in message


def test_check_grad_catches_a_wrong_forward_rule():
    with pytest.raises(ad.GradientCheckError, match="gradient check failed for jvp"):
        ad.check_grad(uses_wrong_forward, RNG.normal(size=4))


def test_check_grad_in_float32_warns_and_loosens():
    x = X.astype(np.float32)
    with pytest.warns(ad.GradientCheckWarning, match="float64 is the right precision"):
        report = ad.check_grad(cubic_sum, x)
    assert report.passed and (report.rtol, report.atol) == (1e-2, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strict = ad.check_grad(cubic_sum, X, rtol=1e-9, atol=0.0)  # float64: no warning
    assert strict.passed and strict.rtol == 1e-9
