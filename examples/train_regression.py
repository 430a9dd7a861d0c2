"""Train a regression network with generated gradients, from one sample to minibatches.

Run it with ``python examples/train_regression.py`` (add ``--fast`` for a quick
run, ``--clip 1.0`` to clip gradients by their global norm, ``--save-dir DIR``
to choose where the loss curve goes). It

1. works the classic dense-layer exercise by hand-checkable numbers: a network
   2 inputs -> 3 tanh units -> 1 output, one sample, squared error, fixed
   starting weights; prints every weight's gradient and a few SGD steps;
2. trains a larger network (8 features -> 32 tanh units -> 1) on a noisy
   synthetic regression with minibatch SGD and ``ad.value_and_grad``, prints
   the loss as it falls and the final train and test loss, and saves the loss
   curve as ``loss_curve.png`` when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import autodiff as ad


def loss(W1, b1, W2, b2, x, y):
    # The same function serves one sample and a minibatch: x is (batch, inputs).
    hidden = np.tanh(x @ W1 + b1)
    prediction = hidden @ W2 + b2
    return np.mean((prediction - y) ** 2)


NAMES = ("W1", "b1", "W2", "b2")
# One compiled derivative, reused by both parts: it is generated once and cached.
loss_and_grads = ad.value_and_grad(loss, wrt=(0, 1, 2, 3))


def clip_by_global_norm(grads, clip):
    """Scale every gradient by min(1, clip / norm), where norm is over all of them.

    Clipping the norm of all gradients together keeps the step's direction and
    only shortens it, which tames the occasional huge minibatch gradient.
    """
    global_norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    scale = min(1.0, clip / (global_norm + 1e-12))
    return [g * scale for g in grads], global_norm


def single_sample() -> None:
    print("=== 1. One sample through a 2-3-1 network ===\n")
    x = np.array([[0.5, 0.9]])
    y = np.array([[1.5]])
    # Fixed weights, so the numbers below are the same on every run.
    params = [np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]),   # W1: 2 inputs -> 3 units
              np.array([0.1, 0.1, 0.1]),                        # b1
              np.array([[0.1], [0.2], [0.3]]),                  # W2: 3 units -> 1 output
              np.array([0.0])]                                  # b2
    value, grads = loss_and_grads(*params, x, y)
    print(f"x = {x}, y = {y}, loss = {value:.6f}\n")
    with np.printoptions(precision=6, suppress=True):
        for name, grad in zip(NAMES, grads):
            print(f"d{name} =\n{grad}")
    # The same gradients by central finite differences, as a cross-check.
    numeric = ad.numeric_grad(loss, *params, x, y, wrt=(0, 1, 2, 3))
    error = max(np.max(np.abs(g - n)) for g, n in zip(grads, numeric))
    print(f"largest difference from finite differences: {error:.1e}")

    print("\nSGD with learning rate 0.1; the prediction nears y = 1.5:")
    for step in range(1, 11):
        value, grads = loss_and_grads(*params, x, y)
        params = [p - 0.1 * g for p, g in zip(params, grads)]
        prediction = np.tanh(x @ params[0] + params[1]) @ params[2] + params[3]
        print(f"  step {step:2d}: loss {value:.6f}, prediction after the step {prediction.item():.4f}")
    print()


NOISE = 0.1  # standard deviation of the noise on the targets


def make_data(rng, samples, features, noise=NOISE):
    """A smooth nonlinear target of the inputs, plus Gaussian noise."""
    x = rng.normal(size=(samples, features))
    w = rng.normal(size=(features, 1)) / np.sqrt(features)
    y = np.sin(x @ w) + 0.5 * (x[:, :1] * x[:, 1:2]) + noise * rng.normal(size=(samples, 1))
    return x, y


def minibatch_training(fast: bool, clip: float | None, save_dir: str) -> None:
    print("=== 2. Minibatch SGD on a synthetic regression ===\n")
    rng = np.random.default_rng(0)
    samples, features, hidden = (256, 8, 32) if fast else (512, 8, 32)
    epochs, batch_size, learning_rate = (30, 32, 0.1) if fast else (200, 32, 0.1)
    x, y = make_data(rng, samples + samples // 4, features)
    x_train, y_train, x_test, y_test = x[:samples], y[:samples], x[samples:], y[samples:]
    print(f"{samples} training and {len(x_test)} test samples, {features} features "
          f"-> {hidden} tanh units -> 1; {epochs} epochs of batches of {batch_size}, "
          f"learning rate {learning_rate}, clipping: {clip or 'off'}")

    # Scaled so each unit starts with unit-order activations (Xavier-style).
    params = [rng.normal(size=(features, hidden)) / np.sqrt(features), np.zeros(hidden),
              rng.normal(size=(hidden, 1)) / np.sqrt(hidden), np.zeros(1)]
    history = [loss(*params, x_train, y_train)]
    print(f"epoch   0: train loss {history[0]:.4f}")
    clipped = 0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(samples)  # a fresh shuffle every epoch
        for start in range(0, samples, batch_size):
            batch = order[start:start + batch_size]
            _, grads = loss_and_grads(*params, x_train[batch], y_train[batch])
            if clip is not None:
                grads, norm = clip_by_global_norm(grads, clip)
                clipped += norm > clip
            params = [p - learning_rate * g for p, g in zip(params, grads)]
        history.append(loss(*params, x_train, y_train))
        if epoch % max(1, epochs // 10) == 0:
            print(f"epoch {epoch:3d}: train loss {history[-1]:.4f}")
    if clip is not None:
        print(f"{clipped} minibatch gradients were clipped to norm {clip}")

    test_loss = loss(*params, x_test, y_test)
    print(f"\ntrain loss: first {history[0]:.4f}, last {history[-1]:.4f} "
          f"({history[0] / history[-1]:.1f}x lower)")
    print(f"final train loss {history[-1]:.4f}, test loss {test_loss:.4f}")
    save_loss_curve(history, test_loss, NOISE, save_dir)


def save_loss_curve(history, test_loss, noise: float, save_dir: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no loss curve saved "
              "(pip install matplotlib to get loss_curve.png)")
        return
    matplotlib.use("Agg")  # write files only, never open a window
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(len(history)), history, label="train loss (full training set)")
    ax.axhline(test_loss, color="tab:red", linestyle="--", label=f"final test loss {test_loss:.3f}")
    # No model can beat the variance of the noise added to the targets.
    ax.axhline(noise ** 2, color="gray", linestyle=":", label=f"noise variance {noise ** 2:.3f}")
    ax.set_yscale("log")  # the loss falls over orders of magnitude early, then slowly
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean squared error")
    ax.set_title("Minibatch SGD with autodiff gradients")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "loss_curve.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"loss curve saved to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="less data, fewer epochs")
    parser.add_argument("--clip", type=float, default=None, metavar="NORM",
                        help="clip gradients to this global norm (default: no clipping)")
    parser.add_argument("--save-dir", default=".", help="where to write loss_curve.png")
    args = parser.parse_args(argv)
    single_sample()
    minibatch_training(args.fast, args.clip, args.save_dir)


if __name__ == "__main__":
    main()
