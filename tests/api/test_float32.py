"""float32 stays float32: the derivative of float32 code computes in float32.

The seed 1.0, the constants and the helpers take the dtype of the values they meet,
so no array of the derivative is float64 and no float32 array is copied to float64.
Each program here runs its derivative with every frame of the generated code and of
autodiff's helpers watched (``float64_values``: a float64 array or NumPy scalar held
by a name or returned is reported); the logistic regression's derivative is also
measured (``extra_peak``: a float64 copy of its data would double what it allocates);
and every float32 result agrees with the float64 derivative, which agrees with
central differences.
"""

from __future__ import annotations

import os
import sys
import tracemalloc

import numpy as np
import pytest
from scipy.special import logsumexp

import autodiff as ad
from tests.helpers import central_difference

F32 = np.float32


# ----- the programs -----

def logistic_regression(W, X, y):
    z = X @ W
    p = 1 / (1 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5 * np.sum(W * W)


def mlp(W1, b1, W2, b2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def relu_mlp(W1, W2, X, y):
    h = np.maximum(X @ W1, 0.0)
    return np.mean(np.abs(h @ W2 - y)) + 0.1 * np.sum(np.clip(W1, -0.5, 0.5) ** 2)


def softmax_cross_entropy(W, X, Y):
    z = X @ W
    return -np.mean(np.sum(Y * (z - logsumexp(z, axis=1, keepdims=True)), axis=1))


def rnn(Wh, Wx, xs, ys, h0):
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ Wh + xs[t] @ Wx)
        loss = loss + np.mean((h - ys[t]) ** 2)
    return loss + np.sum(h * h)


def layer_norm(x, g, b):
    mu = np.mean(x, axis=-1, keepdims=True)
    s = np.std(x, axis=-1, keepdims=True)
    centred = (x - mu) / (s + 1e-5)
    return np.sum(np.tanh(centred * g + b)) + np.mean(np.var(x, axis=0)) + np.std(x)


def convolution(x, k):
    smooth = np.convolve(x, k, mode="valid")
    outer = np.einsum("i,j->ij", x[:4], k)
    return np.sum(smooth ** 2) + np.sum(np.sin(outer))


def reductions(x):
    return (np.nansum(x * x) + np.nanmean(np.sin(x)) + np.ptp(x) + np.median(x)
            + np.quantile(x, 0.3) + np.trace(x @ x.T) + x[1, 2] + np.mean(x[0], axis=0)
            + np.max(x) + np.prod(x[0]) + np.std(x, ddof=1))


def norms(x, A):
    return (np.linalg.norm(x) + np.linalg.norm(A) + np.linalg.norm(x, ord=1)
            + np.linalg.norm(x, ord=3) + np.linalg.norm(x, ord=np.inf) + np.max(np.abs(A)))


def _data(seed: int = 0) -> dict:
    """Arguments of each program, in float32, and the positions differentiated."""
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(F32)

    labels = (rng.random(12) > 0.5).astype(F32)
    one_hot = np.eye(3, dtype=F32)[rng.integers(0, 3, 10)]
    return {
        "logistic_regression": (logistic_regression,
                                (normal(5, scale=0.3), normal(12, 5), labels), (0, 1)),
        "mlp": (mlp, (normal(4, 6, scale=0.5), normal(6), normal(6, 2, scale=0.5), normal(2),
                      normal(10, 4), normal(10, 2)), (0, 1, 2, 3)),
        "relu_mlp": (relu_mlp, (normal(4, 6, scale=0.5), normal(6, 2, scale=0.5), normal(10, 4),
                                normal(10, 2)), (0, 1, 2)),
        "softmax_cross_entropy": (softmax_cross_entropy,
                                  (normal(4, 3), normal(10, 4), one_hot), (0, 1)),
        "rnn": (rnn, (normal(3, 3, scale=0.5), normal(2, 3), normal(5, 4, 2), normal(5, 4, 3),
                      normal(4, 3, scale=0.1)), (0, 1, 4)),
        "layer_norm": (layer_norm, (normal(4, 6), normal(6), normal(6)), (0, 1, 2)),
        "convolution": (convolution, (normal(12), normal(3)), (0, 1)),
        "reductions": (reductions, (normal(2, 3),), (0,)),
        "norms": (norms, (normal(5), normal(3, 4)), (0, 1)),
    }


PROGRAMS = list(_data())


# ----- watching the derivative run -----

_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))
_ROOT = os.path.dirname(ad.__file__)


def float64_values(call):
    """``call()``'s result and every float64 (or complex128) value that a frame of
    generated code (whose file is ``<autodiff ...>``) holds in a name at any line or
    returns, and every such array (of one dimension or more) of a frame of autodiff's
    own code (its helpers: a 0-d position computed there from a quantile's q is no
    value of the derivative's): ``function:line name dtype shape``.

    An operation promoting to float64 leaves its result in a name or a return value of
    such a frame (the generated code names every intermediate), so a float64 copy of a
    float32 array, made by a float64 operand, is reported through that operand."""
    found = []

    def watcher(generated: bool):
        def watch(frame, event, arg):
            values = list(frame.f_locals.items())
            if event == "return":
                values.append(("<returned>", arg))
            for name, value in values:
                for item in value if type(value) in (list, tuple) else (value,):
                    if (isinstance(item, (np.ndarray, np.generic)) and item.dtype in _WIDE
                            and (generated or np.ndim(item) > 0)):
                        found.append(f"{frame.f_code.co_name}:{frame.f_lineno} {name} "
                                     f"{item.dtype}{np.shape(item)}")
            return watch

        return watch

    in_generated, in_autodiff = watcher(True), watcher(False)

    def enter(frame, event, arg):
        filename = frame.f_code.co_filename
        if filename.startswith("<autodiff"):
            return in_generated
        return in_autodiff if filename.startswith(_ROOT) else None

    previous = sys.gettrace()
    sys.settrace(enter)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, sorted(set(found))


def extra_peak(call) -> int:
    """The most memory ``call()`` allocates beyond what is held before it (tracemalloc
    counts NumPy's arrays)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


# ----- each transform, called on a program's float32 arguments -----

def _tangents(args, wrt, seed: int = 1):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(np.shape(args[i])).astype(np.result_type(args[i]))
                 for i in wrt)


def _call(transform: str, f, args, wrt):
    """The derivative ``transform`` of ``f`` and how to call it on ``args`` (a function of
    the arguments, so that the same call runs in float64)."""
    if transform == "grad":
        d = ad.grad(f, wrt=wrt)
        return lambda a: d(*a)
    if transform == "grad_jit":
        d = ad.grad(f, wrt=wrt, jit=True)
        return lambda a: d(*a)
    if transform == "value_and_grad":
        d = ad.value_and_grad(f, wrt=wrt)
        return lambda a: d(*a)
    if transform == "vjp":
        d = ad.vjp(f, wrt=wrt)
        return lambda a: d(*a, np.asarray(0.5, dtype=np.result_type(a[0])))
    if transform == "jvp":
        d = ad.jvp(f, wrt=wrt)
        return lambda a: d(*a, _tangents(a, wrt))
    if transform == "hvp":
        d = ad.hvp(f, wrt=wrt[0])
        return lambda a: d(*a, _tangents(a, wrt[:1])[0])
    raise ValueError(transform)


TRANSFORMS = ["grad", "grad_jit", "value_and_grad", "vjp", "jvp", "hvp"]


def _leaves(result) -> list:
    if isinstance(result, (tuple, list)):
        return [leaf for part in result for leaf in _leaves(part)]
    return [result]


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_derivative_of_float32_code_holds_no_float64_value(name, transform):
    f, args, wrt = _data()[name]
    run = _call(transform, f, args, wrt)
    run(args)  # compiled at the first call: watch the second
    result, wide = float64_values(lambda: run(args))
    assert not wide, f"float64 values in the derivative of {name}:\n" + "\n".join(wide)
    dtypes = [np.result_type(leaf) for leaf in _leaves(result)]
    assert all(dtype == F32 for dtype in dtypes), dtypes


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_float32_derivative_agrees_with_the_float64_one(name, transform):
    f, args, wrt = _data()[name]
    run = _call(transform, f, args, wrt)
    wide_args = tuple(np.asarray(a, dtype=np.float64) for a in args)
    single, double = _leaves(run(args)), _leaves(run(wide_args))
    assert [np.result_type(leaf) for leaf in double] == [np.dtype(np.float64)] * len(double)
    for ours, reference in zip(single, double):
        scale = np.max(np.abs(reference), initial=1.0)
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_float64_gradient_matches_central_differences(name):
    f, args, wrt = _data()[name]
    wide_args = [np.asarray(a, dtype=np.float64) for a in args]
    gradients = ad.grad(f, wrt=wrt)(*wide_args)
    for position, gradient in zip(wrt, gradients):
        np.testing.assert_allclose(gradient, central_difference(f, wide_args, position),
                                   rtol=1e-5, atol=1e-7)


def test_a_vector_output_pulled_back_by_a_float32_seed_stays_float32():
    def outputs(W1, b1, X):
        return np.tanh(X @ W1 + b1)

    (W1, b1, _, _, X, _), wrt = _data()["mlp"][1], (0, 1)
    seed = np.random.default_rng(2).standard_normal((10, 6)).astype(F32)
    pull = ad.vjp(outputs, wrt=wrt)
    pull(W1, b1, X, seed)
    result, wide = float64_values(lambda: pull(W1, b1, X, seed))
    assert not wide, "\n".join(wide)
    assert [g.dtype for g in result] == [F32, F32]
    double = pull(*(a.astype(np.float64) for a in (W1, b1, X, seed)))
    for ours, reference in zip(result, double):
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-5)


def test_the_jacobian_and_hessian_of_float32_code_are_built_in_float32():
    f, args, wrt = _data()["layer_norm"]
    for transform in (ad.jacobian(f, mode="rev"), ad.jacobian(f, mode="fwd"), ad.hessian(f)):
        transform(*args)
        result, wide = float64_values(lambda: transform(*args))
        assert not wide, "\n".join(wide)
        assert result.dtype == F32


def test_integer_and_float64_data_keep_float64_gradients():
    _, (W, X, y), _ = _data()["logistic_regression"]
    grad = ad.grad(logistic_regression, wrt=(0, 1))
    assert [g.dtype for g in grad(W.astype(np.float64), X, y)] == [np.float64, F32]
    # integer labels make the loss float64 (NumPy's int64 * float32): so is y's gradient
    assert ad.grad(logistic_regression, wrt=2)(W, X, y.astype(np.int64)).dtype == np.float64


# ----- memory: no float64 copy of the data -----

def test_the_logistic_regression_gradient_never_copies_its_float32_data_to_float64():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((100_000, 50)).astype(F32)  # 20 MB
    y = (rng.random(100_000) > 0.5).astype(F32)
    W = (0.1 * rng.standard_normal(50)).astype(F32)
    # tracemalloc sees NumPy's arrays: a float64 copy of X alone is twice X
    assert extra_peak(lambda: X.astype(np.float64)) >= 2 * X.nbytes
    for derivative in (ad.grad(logistic_regression), ad.grad(logistic_regression, jit=True),
                       ad.value_and_grad(logistic_regression)):
        derivative(W, X, y)  # compiled at the first call
        # a few arrays of X's rows (z, p, the adjoints), far less than a copy of X
        assert extra_peak(lambda: derivative(W, X, y)) < X.nbytes // 4
