"""A PyTorch-style model in plain NumPy, differentiated as it is written.

Layers are objects with parameters as attributes and a ``__call__``; a
``Sequential`` calls them in a loop; the loss is an object too. Dropout draws its
mask from NumPy's global generator, and batch normalisation updates its running
statistics during the forward pass, as ``torch.nn.BatchNorm1d`` does. autodiff
differentiates the training loss with respect to the whole model (the gradient is
a copy of the model holding the gradients), checks it against finite differences,
and trains it with ``ad.optim.Adam``.

Run: python examples/pytorch_style.py
"""

from __future__ import annotations

import argparse

import numpy as np

import autodiff as ad


class Module:
    training = True

    def __call__(self, x):
        return self.forward(x)


class Linear(Module):
    def __init__(self, n_in, n_out, rng):
        self.W = rng.normal(size=(n_in, n_out)) * np.sqrt(2.0 / n_in)
        self.b = np.zeros(n_out)

    def forward(self, x):
        return x @ self.W + self.b


class Tanh(Module):
    def forward(self, x):
        return np.tanh(x)


class Dropout(Module):
    p = 0.1  # settings are class attributes: a float attribute of the object is a parameter

    def forward(self, x):
        if not self.training:
            return x
        keep = np.random.rand(*x.shape) >= self.p
        return x * keep / (1 - self.p)


class BatchNorm1d(Module):
    momentum, eps = 0.1, 1e-5

    def __init__(self, n):
        self.gamma, self.beta = np.ones(n), np.zeros(n)
        self.running_mean, self.running_var = np.zeros(n), np.ones(n)

    def forward(self, x):
        if self.training:
            mean, var = x.mean(axis=0), x.var(axis=0)
            m = self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var
        else:
            mean, var = self.running_mean, self.running_var
        return self.gamma * (x - mean) / np.sqrt(var + self.eps) + self.beta


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MSELoss:
    def __call__(self, prediction, target):
        return np.mean((prediction - target) ** 2)


criterion = MSELoss()


def training_loss(model, x, t, seed):
    np.random.seed(seed)  # the dropout masks of this step
    return criterion(model(x), t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer steps")
    parser.add_argument("--save-dir", help="(no effect: this example draws nothing)")
    steps = 150 if parser.parse_args().fast else 600

    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(64, 1))
    t = np.sin(2 * x) + 0.05 * rng.normal(size=x.shape)
    model = Sequential(Linear(1, 32, rng), BatchNorm1d(32), Tanh(), Dropout(),
                       Linear(32, 1, rng))

    dloss = ad.value_and_grad(training_loss)   # with respect to the model
    loss, grads = dloss(model, x, t, 0)
    print("the gradient is a model too:", type(grads).__name__,
          "with layers", [type(layer).__name__ for layer in grads.layers])
    print("running mean after one call:", np.round(model.layers[1].running_mean[:3], 4))

    # Finite differences see the same dropout masks: the seed is an argument.
    report = ad.check_grad(training_loss, model, x, t, 0)
    print("gradient check:", "passed" if report.passed else "FAILED")

    opt = ad.optim.Adam(lr=0.01)
    for step in range(1, steps + 1):
        loss, grads = dloss(model, x, t, step)
        opt.step(model, grads)  # in place, as torch.optim's step
        if step % (steps // 3) == 0:
            print(f"step {step}: loss {loss:.4f}")

    for layer in model.layers:
        layer.training = False
    test_loss = criterion(model(x), t)
    print(f"evaluation loss (running statistics, no dropout): {test_loss:.4f}")


if __name__ == "__main__":
    main()
