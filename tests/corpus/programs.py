"""Realistic straight-line NumPy functions, written the way users write them.

Each :class:`Program` holds a function, an input builder ``(rng) -> list of args``
(float64, kept away from kinks and ties) and the arguments to differentiate.
``CORPUS`` lists them all; ``tests/corpus/test_corpus.py`` checks each one.
Inputs stay small so that central finite differences stay fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

GRAVITY = 9.81
LOG_2PI = np.log(2.0 * np.pi)
EPSILON = 1e-9
TOKEN_IDS = np.array([0, 3, 3, 1])
HEAD_MIX = np.array([[1.0, -0.5, 0.3], [0.2, 0.8, -1.0]])

# ----- classification losses -----


def logistic_regression_loss(w, b, X, y):
    """Mean negative log-likelihood of a logistic regression, clipped for stability."""
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def softmax_cross_entropy(logits, labels):
    """Cross-entropy of one-hot labels under a softmax, with the max-subtraction trick."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(labels * log_probs) / logits.shape[0]


def logistic_loss_logaddexp(w, X, y):
    """Logistic loss with labels in {-1, +1}, written with np.logaddexp."""
    margins = y * (X @ w)
    return np.mean(np.logaddexp(0.0, -margins))


def squared_hinge_svm(w, b, X, y, C=0.5):
    """Soft-margin SVM objective with a squared hinge."""
    margins = 1.0 - y * (X.dot(w) + b)
    return 0.5 * np.inner(w, w) + C * np.sum(np.maximum(0.0, margins) ** 2)


# ----- neural networks -----


def mlp_relu(W1, b1, W2, b2, x, t):
    """Two-layer perceptron with a ReLU hidden layer and squared error."""
    h = np.maximum(0, x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def mlp_three_layer(W1, W2, W3, x, t):
    """Three layers: tanh, then sigmoid, then linear; mean squared error."""
    h1 = np.tanh(x @ W1)
    h2 = 1.0 / (1.0 + np.exp(-(h1 @ W2)))
    out = h2 @ W3
    return ((out - t) ** 2).mean()


def layer_norm(x, gamma, beta, eps=1e-5):
    """Layer normalisation over the last axis, followed by a squared-error loss."""
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    x_hat = (x - mu) / np.sqrt(var + eps)
    y = gamma * x_hat + beta
    return np.sum((y - 0.3) ** 2)


def batch_norm_centring(x, w):
    """Batch-norm style centring and scaling over the batch axis, then a linear readout."""
    centred = x - x.mean(axis=0)
    scaled = centred / x.std(axis=0)
    return np.sum(np.tanh(scaled @ w))


def attention(Q, K, V):
    """Scaled dot-product attention, summed."""
    d = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.sum(weights @ V)


def batched_linear(W, x):
    """A batch of linear maps applied with batched matmul, then a softplus."""
    y = np.matmul(W, x)
    return np.sum(np.log1p(np.exp(y)))


def max_pool_features(image, w):
    """2x2 max pooling by reshape and max, then a linear score."""
    pooled = image.reshape(2, 2, 3, 2).max(axis=(1, 3))
    return np.sum(pooled * w) + 0.1 * np.sum(pooled ** 2)


def einsum_attention(Q, K, V):
    """Batched attention written with einsum, then heads mixed after np.swapaxes."""
    scores = np.einsum("bqd,bkd->bqk", Q, K) / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = np.einsum("bqk,bkd->bqd", weights, V)
    return np.sum(np.swapaxes(out, 1, 2) * HEAD_MIX)


def embedding_bag(E, w):
    """Embedding lookup by an integer array with a repeated id, pooled, then scored."""
    pooled = np.mean(E[TOKEN_IDS], axis=0)
    scores = np.array([pooled @ w, np.sum(pooled ** 2), pooled[0]])
    return np.log(np.sum(np.exp(scores))) + np.sum(np.broadcast_to(pooled, (2, 3)) * HEAD_MIX)


# ----- regression and probabilistic models -----


def ridge_regression(w, X, y, lam=0.1):
    """L2-regularised least squares."""
    residual = X @ w - y
    return np.sum(residual ** 2) + lam * np.dot(w, w)


def huber_loss(pred, target, delta=1.0):
    """Huber loss chosen elementwise with np.where."""
    r = pred - target
    abs_r = np.abs(r)
    quadratic = 0.5 * r ** 2
    linear = delta * (abs_r - 0.5 * delta)
    return np.mean(np.where(abs_r <= delta, quadratic, linear))


def gaussian_nll(mu, log_var, x):
    """Gaussian negative log-likelihood with a learned log-variance."""
    precision = np.exp(-log_var)
    return 0.5 * np.sum(log_var + (x - mu) ** 2 * precision + LOG_2PI)


def gaussian_mixture_nll(means, log_sigmas, logits, x):
    """Negative log-likelihood of a 1-D Gaussian mixture, log-sum-exp over components."""
    log_weights = logits - np.max(logits)
    log_weights = log_weights - np.log(np.sum(np.exp(log_weights)))
    z = (x[:, None] - means[None, :]) / np.exp(log_sigmas)
    log_comp = -0.5 * z ** 2 - log_sigmas - 0.5 * LOG_2PI + log_weights
    m = np.max(log_comp, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(log_comp - m), axis=1))
    return -np.sum(lse)


def elastic_net(w, X, y, l1=0.05, l2=0.1):
    """Least squares with L1 and L2 penalties, using augmented assignment."""
    loss = 0.5 * np.mean((X @ w - y) ** 2)
    loss += l1 * np.sum(np.abs(w))
    loss += l2 * np.sum(np.square(w))
    return loss


def rbf_kernel_ridge(alpha, log_scale, X, y):
    """Kernel ridge objective with an RBF kernel and a learned length scale."""
    sq = np.sum(X ** 2, axis=1)
    sq_dists = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    K = np.exp(-sq_dists / (2.0 * np.exp(2.0 * log_scale)))
    fit = K @ alpha - y
    return np.sum(fit ** 2) + 0.01 * alpha @ K @ alpha


def gaussian_process_nll(log_scale, log_noise, X, y):
    """Negative log marginal likelihood of GP regression, with solve and det."""
    sq_dists = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(-0.5 * sq_dists / np.exp(2.0 * log_scale)) + np.exp(log_noise) * np.eye(len(y))
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + 0.5 * np.log(np.linalg.det(K))


def mahalanobis(x, mu, A):
    """Squared Mahalanobis distances under the covariance A A' + I, by np.linalg.inv."""
    precision = np.linalg.inv(A @ A.T + np.eye(3))
    diff = x - mu
    return np.sum((diff @ precision) * diff)


# ----- classic test functions and geometry -----


def log_sum_exp(x):
    """Numerically stable log-sum-exp of a vector."""
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def rosenbrock(x):
    """The Rosenbrock function in n dimensions."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def quadratic_form(x, A, b):
    """0.5 x'Ax - b'x with 1-D matmuls."""
    return 0.5 * x @ A @ x - b @ x


def cosine_similarity(a, b):
    """Cosine similarity of two vectors."""
    return np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))


def spring_chain_energy(x, k=2.0, rest=1.0):
    """Potential energy of a chain of 2-D points joined by springs."""
    d = x[1:] - x[:-1]
    lengths = np.sqrt(np.sum(d ** 2, axis=1))
    return 0.5 * k * np.sum((lengths - rest) ** 2)


def pairwise_distance_loss(x, target):
    """Multidimensional-scaling stress: pairwise distances against targets."""
    diff = x[:, None, :] - x[None, :, :]
    dist = np.sqrt(np.sum(diff ** 2, axis=-1) + EPSILON)
    return np.sum((dist - target) ** 2)


def polar_energy(x, y):
    """An energy in polar coordinates, via np.hypot and np.arctan2."""
    r = np.hypot(x, y)
    theta = np.arctan2(y, x)
    return np.sum(r ** 2 * (1.0 + 0.5 * np.cos(3.0 * theta)))


def total_variation(img, noisy, weight=0.2):
    """Smoothed total-variation denoising objective on a small image."""
    dx = img[1:, :] - img[:-1, :]
    dy = img[:, 1:] - img[:, :-1]
    tv = np.sum(np.sqrt(dx ** 2 + 1e-3)) + np.sum(np.sqrt(dy ** 2 + 1e-3))
    return 0.5 * np.sum((img - noisy) ** 2) + weight * tv


def projectile_range(speed, angle, drag):
    """Scalar-only physics with math.* on Python floats."""
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    flight = 2.0 * vy / GRAVITY
    return vx * flight * math.exp(-drag * flight) + math.sqrt(vx * vx + vy * vy) * drag


def wrapped_phase_energy(theta, amplitude):
    """Phases wrapped with %, Python's two-argument max/min, expm1 and a 1.5 power."""
    wrapped = (theta + np.pi) % (2 * np.pi) - np.pi
    a = min(max(amplitude, 0.1), 5.0)
    tail = np.sum(np.expm1(-np.abs(wrapped))) + np.sum(np.power(np.abs(wrapped), 1.5))
    return a * np.sum(1 - np.cos(wrapped)) + tail


# ----- shape manipulation -----


def polynomial_features(x, w):
    """Polynomial features built with np.stack and np.concatenate, then least squares."""
    feats = np.stack([x, x ** 2, x ** 3], axis=1)
    feats = np.concatenate([feats, np.sin(x)[:, None]], axis=1)
    return np.sum((feats @ w - 1.0) ** 2)


def reshape_transpose_pipeline(x, w):
    """Reshape, transpose and ravel a small tensor through a linear map."""
    y = np.transpose(x, (1, 0, 2)).reshape(3, 8)
    z = y.T @ w
    return np.sum(np.ravel(z) ** 2) + np.sum(np.squeeze(np.expand_dims(z, 0)))


def trace_outer_inner(A, u, v):
    """Trace, outer and inner products combined."""
    M = A + np.outer(u, v)
    return np.trace(M @ M.T) + np.inner(u, v) * np.trace(A)


def moment_statistics(x):
    """Coefficient of variation and a sample variance, with var/std."""
    cv = np.std(x) / np.mean(x)
    return cv + np.var(x, ddof=1) + x.std(axis=0, ddof=1).sum()


def geometric_mean(x):
    """Geometric mean by np.prod of positive values."""
    n = x.size
    return np.prod(x) ** (1.0 / n) + np.sum(np.prod(x, axis=1))


def summary_unpacking(x, w):
    """Tuple unpacking of statistics and of slices."""
    mean, spread = np.mean(x), np.std(x)
    first, last = x[0], x[-1]
    low, high = np.min(w), np.max(w)
    return (mean - spread) ** 2 + np.sum(first * last) + high - low


def softmin_clip(x, temperature=0.5):
    """A soft minimum with clipped inputs and a hard minimum beside it."""
    z = np.clip(x, -1.5, 1.5) / temperature
    soft = -temperature * np.log(np.sum(np.exp(-z - np.max(-z)))) + np.min(z) * temperature
    return soft + 0.1 * np.min(x)


# ----- the corpus -----


@dataclass(frozen=True)
class Program:
    """One corpus entry: a function, its input builder and what to differentiate."""

    fn: Callable
    make_args: Callable[[np.random.Generator], list]
    wrt: int | str | tuple


def _normal(rng, *shape, scale=1.0):
    return rng.normal(scale=scale, size=shape)


def _away(rng, *shape, low=0.2, high=1.5):
    """Values with magnitude in [low, high] and random sign: away from kinks at 0."""
    return rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _huber_args(rng):
    target = _normal(rng, 8)
    residual = np.concatenate([_away(rng, 4, low=0.2, high=0.8), _away(rng, 4, low=1.2, high=2)])
    return [target + residual, target]


def _spd(rng, n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


CORPUS = [
    Program(logistic_regression_loss,
            lambda r: [_normal(r, 3), 0.1, _normal(r, 6, 3), (r.random(6) < 0.5) * 1.0], (0, 1)),
    Program(softmax_cross_entropy, lambda r: [_normal(r, 4, 3), np.eye(3)[r.integers(0, 3, 4)]], 0),
    Program(logistic_loss_logaddexp,
            lambda r: [_normal(r, 3), _normal(r, 5, 3), r.choice([-1.0, 1.0], 5)], "w"),
    Program(squared_hinge_svm,
            lambda r: [_normal(r, 2), 0.2, _normal(r, 6, 2), r.choice([-1.0, 1.0], 6)], (0, 1)),
    Program(mlp_relu,
            lambda r: [_normal(r, 3, 4), _normal(r, 4, scale=0.1), _normal(r, 4, 2),
                       _normal(r, 2), _normal(r, 5, 3), _normal(r, 5, 2)], (0, 1, 2, 3)),
    Program(mlp_three_layer,
            lambda r: [_normal(r, 3, 4), _normal(r, 4, 3), _normal(r, 3, 2), _normal(r, 4, 3),
                       _normal(r, 4, 2)], (0, 1, 2)),
    Program(layer_norm, lambda r: [_normal(r, 3, 4), 1.0 + _normal(r, 4, scale=0.1),
                                   _normal(r, 4, scale=0.1)], (0, 1, 2)),
    Program(batch_norm_centring, lambda r: [_normal(r, 5, 3), _normal(r, 3, 2)], (0, 1)),
    Program(attention, lambda r: [_normal(r, 3, 2), _normal(r, 4, 2), _normal(r, 4, 3)],
            ("Q", "K", "V")),
    Program(batched_linear, lambda r: [_normal(r, 2, 3, 4), _normal(r, 2, 4, 2)], (0, 1)),
    Program(max_pool_features, lambda r: [_normal(r, 4, 6), _normal(r, 2, 3)], (0, 1)),
    Program(einsum_attention,
            lambda r: [_normal(r, 2, 3, 2), _normal(r, 2, 4, 2), _normal(r, 2, 4, 2)], (0, 1, 2)),
    Program(embedding_bag, lambda r: [_normal(r, 5, 3), _normal(r, 3)], (0, 1)),
    Program(ridge_regression, lambda r: [_normal(r, 3), _normal(r, 6, 3), _normal(r, 6)], 0),
    Program(huber_loss, _huber_args, (0, 1)),
    Program(gaussian_nll, lambda r: [_normal(r, 5), _normal(r, 5, scale=0.3), _normal(r, 5)],
            ("mu", "log_var")),
    Program(gaussian_mixture_nll,
            lambda r: [_normal(r, 3), _normal(r, 3, scale=0.2), _normal(r, 3), _normal(r, 5)],
            (0, 1, 2, 3)),
    Program(elastic_net, lambda r: [_away(r, 4), _normal(r, 6, 4), _normal(r, 6)], 0),
    Program(rbf_kernel_ridge,
            lambda r: [_normal(r, 4), 0.1, _normal(r, 4, 2), _normal(r, 4)], (0, 1, 2)),
    Program(gaussian_process_nll,
            lambda r: [0.2, -1.0, _normal(r, 4, 2), _normal(r, 4)], (0, 1, 2, 3)),
    Program(mahalanobis, lambda r: [_normal(r, 4, 3), _normal(r, 3), _normal(r, 3, 3)],
            (0, 1, 2)),
    Program(log_sum_exp, lambda r: [_normal(r, 6)], 0),
    Program(rosenbrock, lambda r: [_normal(r, 5, scale=0.7)], 0),
    Program(quadratic_form, lambda r: [_normal(r, 4), _spd(r, 4), _normal(r, 4)], (0, 1, 2)),
    Program(cosine_similarity, lambda r: [_normal(r, 5), _normal(r, 5)], (0, 1)),
    Program(spring_chain_energy, lambda r: [np.cumsum(_normal(r, 5, 2), axis=0)], 0),
    Program(pairwise_distance_loss,
            lambda r: [_normal(r, 4, 2), np.abs(_normal(r, 4, 4)) + 0.5], 0),
    Program(polar_energy, lambda r: [_away(r, 5), _away(r, 5)], (0, 1)),
    Program(total_variation, lambda r: [_normal(r, 4, 4), _normal(r, 4, 4)], 0),
    Program(projectile_range, lambda r: [r.uniform(5.0, 10.0), r.uniform(0.3, 1.2),
                                         r.uniform(0.01, 0.1)], (0, 1, 2)),
    Program(wrapped_phase_energy,
            lambda r: [np.array([0.4, 1.7, 2.6, 4.1, 5.3, -0.9, -2.4]) + r.uniform(-0.1, 0.1, 7),
                       1.3], (0, 1)),
    Program(polynomial_features, lambda r: [_normal(r, 5, scale=0.8), _normal(r, 4)], (0, 1)),
    Program(reshape_transpose_pipeline, lambda r: [_normal(r, 2, 3, 4), _normal(r, 3, 2)],
            (0, 1)),
    Program(trace_outer_inner, lambda r: [_normal(r, 3, 3), _normal(r, 3), _normal(r, 3)],
            (0, 1, 2)),
    Program(moment_statistics, lambda r: [r.uniform(1.0, 3.0, (4, 3))], 0),
    Program(geometric_mean, lambda r: [r.uniform(0.5, 2.0, (2, 3))], 0),
    Program(summary_unpacking, lambda r: [_normal(r, 4, 2), _normal(r, 5)], (0, 1)),
    Program(softmin_clip,
            lambda r: [np.concatenate([_away(r, 4, low=0.1, high=1.3),
                                       _away(r, 2, low=1.7, high=2.0)])], 0),
]
