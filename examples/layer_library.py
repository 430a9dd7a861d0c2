"""A course-style layer library: forward functions that return ``(out, cache)``.

Many NumPy courses build networks from layer functions like these: each forward
pass returns its output and a cache of what its backward pass will need, and
each backward pass is written by hand. autodiff differentiates the forward
functions as they are (the caches are computed, returned and ignored; nothing is
rewritten), and the gradient it generates is compared below with the chain of
hand-written backward passes and with finite differences.

Run: python examples/layer_library.py
"""

from __future__ import annotations

import argparse

import numpy as np

import autodiff as ad


# ----- layers: forward passes -----

def affine_forward(x, w, b):
    """x (N, d1, ..., dk) flattened to (N, D), times w (D, M), plus b (M,)."""
    N = x.shape[0]
    out = x.reshape(N, -1) @ w + b
    cache = (x, w, b)
    return out, cache


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache


def batchnorm_forward(x, gamma, beta, bn_param):
    """Batch normalisation in training mode, updating bn_param's running statistics."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    mu = x.mean(axis=0)
    xc = x - mu
    var = np.mean(xc ** 2, axis=0)
    std = np.sqrt(var + eps)
    xn = xc / std
    out = gamma * xn + beta
    bn_param["running_mean"] = momentum * bn_param["running_mean"] + (1 - momentum) * mu
    bn_param["running_var"] = momentum * bn_param["running_var"] + (1 - momentum) * var
    cache = (xn, gamma, xc, std)
    return out, cache


def dropout_forward(x, dropout_param):
    """Inverted dropout: keep each unit with probability p, scale by 1/p."""
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    out = x
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    cache = (dropout_param, mask)
    return out, cache


def softmax_loss(x, y):
    """The mean cross-entropy of scores x (N, C) for labels y (N,), and its gradient."""
    shifted = x - np.max(x, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = np.exp(log_probs)
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


# ----- layers: backward passes, written by hand -----

def affine_backward(dout, cache):
    x, w, b = cache
    dx = (dout @ w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T @ dout
    db = dout.sum(axis=0)
    return dx, dw, db


def relu_backward(dout, cache):
    return dout * (cache > 0)


def batchnorm_backward(dout, cache):
    xn, gamma, xc, std = cache
    N = dout.shape[0]
    dgamma = np.sum(dout * xn, axis=0)
    dbeta = np.sum(dout, axis=0)
    dxn = dout * gamma
    dx = (dxn - dxn.mean(axis=0) - xn * np.mean(dxn * xn, axis=0)) / std
    return dx, dgamma, dbeta


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    return dout * mask if dropout_param["mode"] == "train" else dout


# ----- a two-layer network built from them -----

def network_loss(params, X, y, bn_param, dropout_param):
    h, fc1 = affine_forward(X, params["W1"], params["b1"])
    h, bn = batchnorm_forward(h, params["gamma"], params["beta"], bn_param)
    h, act = relu_forward(h)
    h, drop = dropout_forward(h, dropout_param)
    scores, fc2 = affine_forward(h, params["W2"], params["b2"])
    loss, _ = softmax_loss(scores, y)
    return loss


def network_loss_and_hand_gradient(params, X, y, bn_param, dropout_param):
    h, fc1 = affine_forward(X, params["W1"], params["b1"])
    h, bn = batchnorm_forward(h, params["gamma"], params["beta"], bn_param)
    h, act = relu_forward(h)
    h, drop = dropout_forward(h, dropout_param)
    scores, fc2 = affine_forward(h, params["W2"], params["b2"])
    loss, dscores = softmax_loss(scores, y)
    grads = {}
    dh, grads["W2"], grads["b2"] = affine_backward(dscores, fc2)
    dh = dropout_backward(dh, drop)
    dh = relu_backward(dh, act)
    dh, grads["gamma"], grads["beta"] = batchnorm_backward(dh, bn)
    _, grads["W1"], grads["b1"] = affine_backward(dh, fc1)
    return loss, grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="(no effect: already quick)")
    parser.add_argument("--save-dir", help="(no effect: this example draws nothing)")
    parser.parse_args()

    rng = np.random.default_rng(0)
    N, D, H, C = 8, 5, 6, 3
    X = rng.normal(size=(N, 1, D))          # a trailing axis the affine layer flattens
    y = rng.integers(0, C, size=N)
    params = {"W1": rng.normal(size=(D, H)) / np.sqrt(D), "b1": np.zeros(H),
              "gamma": np.ones(H), "beta": np.zeros(H),
              "W2": rng.normal(size=(H, C)) / np.sqrt(H), "b2": np.zeros(C)}
    dropout_param = {"p": 0.75, "mode": "train", "seed": 1}

    def fresh_bn_param():
        return {"running_mean": np.zeros(H), "running_var": np.ones(H)}

    dloss = ad.grad(network_loss)
    bn_param = fresh_bn_param()
    grads = dloss(params, X, y, bn_param, dropout_param)
    print("the running mean batch norm wrote:", np.round(bn_param["running_mean"], 4))

    loss, hand = network_loss_and_hand_gradient(params, X, y, fresh_bn_param(), dropout_param)
    print(f"loss = {loss:.6f}")
    print(f"{'parameter':>9}  {'largest difference from the hand-written backward pass':>55}")
    differences = {name: np.max(np.abs(grads[name] - hand[name])) for name in params}
    for name, difference in differences.items():
        print(f"{name:>9}  {difference:55.2e}")
    print("agrees with the hand-written backward pass:", max(differences.values()) < 1e-10)

    report = ad.check_grad(network_loss, params, X, y, fresh_bn_param(), dropout_param)
    print(report)

    source = dloss.source_for(params, X, y, fresh_bn_param(), dropout_param)
    print("\nThe generated derivative runs the writes into bn_param in its forward sweep:")
    for line in source.splitlines():
        if "bn_param[" in line or "np.random.seed" in line:
            print(line)

if __name__ == "__main__":
    main()
