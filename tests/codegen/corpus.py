"""Representative user functions, used by the golden tests and the code-quality checks."""

import math

import numpy as np

SCALE = 0.5


def two_layer_net(x, W1, b1, W2, b2, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return np.mean((y - t) ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def polynomial(x):
    return 3.0 * x ** 3 + 2.0 * x ** 2 - 5.0 * x + 1.0


def softmax_cross_entropy(W, x, labels):
    logits = x @ W
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_probs, axis=1))


def scalar_chain(x, y):
    a = math.sin(x) * y + x / y
    b = math.exp(-a * a) + math.sqrt(x * x + y * y)
    return a * b + math.tanh(b) * SCALE


def fan_out(x, w):
    s = np.sin(x)
    return np.sum(s * s * w + s * x) + np.linalg.norm(x)


def shapes_and_indexing(x, w):
    z = np.concatenate([x[:, 1:], x[:, :1] * 2.0], axis=1)
    v = z.reshape(-1) @ np.ravel(w)
    return v + np.sum(np.stack([x[0], x[-1]]) ** 2)


def reductions(x):
    m = x.max(axis=0, keepdims=True)
    return np.sum(np.exp(x - m) * np.mean(x, axis=(0, 1))) + np.prod(x[0])


def rnn(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h)


def huber(r, delta=1.0):
    if abs(r) <= delta:
        return 0.5 * r ** 2
    return delta * (abs(r) - 0.5 * delta)


def doubling(x):
    y = 2.0 * x
    while np.linalg.norm(y) < 1000.0:
        y = 2.0 * y
    return np.sum(y * y)


def smoothed(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = 0.5 * out[i - 1] + x[i]
    return np.sum(out ** 2)


FUNCTIONS = [two_layer_net, rosenbrock, polynomial, softmax_cross_entropy, scalar_chain,
             fan_out, shapes_and_indexing, reductions, rnn, huber, doubling, smoothed]
GOLDEN = {"two_layer_net": (1, 2, 3, 4), "rosenbrock": 0, "polynomial": 0,
          "softmax_cross_entropy": 0, "rnn": (0, 1, 3), "huber": 0, "doubling": 0,
          "smoothed": 0, "logged_loss": 0, "robust_solve": (0, 1), "clipped_log": (0, 1)}


def logged_loss(W, x):
    h = np.tanh(x @ W)
    assert h.shape == (x.shape[0], W.shape[1]), "one row of h per row of x"
    loss = np.mean(h ** 2)
    print(f"loss {loss:.4f}, mean activation %.3f" % np.mean(h))
    return loss


def robust_solve(A, b):
    try:
        L = np.linalg.cholesky(A)
        x = np.linalg.solve(L.T, np.linalg.solve(L, b))
    except np.linalg.LinAlgError:
        x = np.linalg.lstsq(A, b, rcond=None)[0]
    return np.sum(x ** 2)


def clipped_log(x, floor):
    if np.any(x < 0.0):
        raise ValueError("x must not be negative")
    try:
        if np.min(x) == 0.0:
            raise FloatingPointError("log of zero")
        y = np.log(x)
    except FloatingPointError as error:
        print("clipping:", error)
        y = np.log(np.maximum(x, floor))
    else:
        y = y * floor
    finally:
        print("done")
    return np.sum(y ** 2)


# (last in the file: the golden files quote the lines of the functions above)
FUNCTIONS += [robust_solve, clipped_log]
