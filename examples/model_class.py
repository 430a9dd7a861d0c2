"""A model class: differentiate its loss method and get a model holding the gradients.

Run it with ``python examples/model_class.py``. The network is an object of a
class of your own: its layers are a list of dataclasses kept as an attribute,
``predict`` and ``loss`` are methods and the weight penalty is a ``@property``.
autodiff treats the object as a structure of its attributes:

1. ``ad.value_and_grad(MLP.loss)(model, x, t)`` compiles ``loss`` with
   ``self.predict(x)`` and ``self.penalty`` inlined, and returns the loss with a
   copy of ``model`` whose arrays are their gradients (its name, a string, has
   none: ``None``);
2. ``ad.check_grad`` compares every array of it with finite differences, one
   line per leaf (``self.layers[0].W``, ...);
3. ``ad.tree.map`` applies a gradient step to the whole model in one line, and
   300 steps fit ``sin`` on 32 points;
4. the bound method ``model.loss`` gives the same gradient with
   ``wrt="self"``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools

import numpy as np

import autodiff as ad


def heading(title: str) -> None:
    print(f"\n{'=' * 72}\n{title}\n{'=' * 72}\n")


@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray


class MLP:
    """A tanh network: a list of dense layers, a prediction and a penalised loss."""

    decay = 1e-4  # a class constant: a constant in the generated code

    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = [Dense(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n))
                       for m, n in itertools.pairwise(sizes)]
        self.name = "sine fit"  # a string attribute: no gradient

    @property
    def penalty(self):
        return self.decay * sum(np.sum(layer.W ** 2) for layer in self.layers)

    def predict(self, x):
        for layer in self.layers[:-1]:
            x = np.tanh(x @ layer.W + layer.b)
        last = self.layers[-1]
        return x @ last.W + last.b

    def loss(self, x, t):
        return np.mean((self.predict(x) - t) ** 2) + self.penalty


def data():
    """32 points of sin(x) on [-2, 3], one input and one target per row."""
    x = np.linspace(-2.0, 3.0, 32).reshape(-1, 1)
    return x, np.sin(x)


def gradient_of_a_model() -> None:
    heading("1. The gradient of MLP.loss: a copy of the model holding gradients")
    model = MLP((1, 8, 8, 1))
    x, t = data()
    dloss = ad.value_and_grad(MLP.loss)
    # The code generated for this structure: each array is read once at the top
    # (self_layers_0_W = ...), predict and penalty are inlined, and the gradient is
    # built as a copy of self at the end (with_fields(self, ...)).
    print(dloss.source_for(model, x, t))
    value, grads = dloss(model, x, t)
    print(f"loss = {value:.6f}")
    print(f"gradient: {type(grads).__name__} object, name = {grads.name}, "
          f"layers[0].W of shape {grads.layers[0].W.shape}")


def check() -> None:
    heading("2. Every array of the gradient against central differences")
    x, t = data()
    print(ad.check_grad(MLP.loss, MLP((1, 8, 8, 1)), x, t))


def train() -> None:
    heading("3. Gradient descent, one line per update, learning rate 0.1")
    model = MLP((1, 8, 8, 1))
    x, t = data()
    dloss = ad.value_and_grad(MLP.loss)
    for step in range(301):
        value, grads = dloss(model, x, t)
        # None in grads (the name) marks a leaf without gradient: keep it as it is.
        model = ad.tree.map(lambda p, g: p if g is None else p - 0.1 * g, model, grads)
        if step % 50 == 0:
            print(f"step {step:3d}: loss {value:.5f}")
    print(f"trained: {type(model).__name__} object named {model.name!r}")


def bound_method() -> None:
    heading("4. The bound method model.loss, with respect to self")
    model = MLP((1, 8, 8, 1))
    x, t = data()
    # model.loss holds this model, whose arrays are read when the gradient is called;
    # ad.tree.map makes a new model, which needs its own ad.grad(new.loss, wrt="self").
    by_self = ad.grad(model.loss, wrt="self")(x, t)
    same = ad.grad(MLP.loss)(model, x, t)
    difference = max(np.max(np.abs(a - b)) for a, b in
                     zip(ad.tree.leaves(by_self), ad.tree.leaves(same)))
    print(f"largest difference from MLP.loss's gradient: {difference}")
    dx = ad.grad(model.loss)(x, t)  # without wrt: its first parameter, x
    print(f"d loss / dx has shape {dx.shape}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Every example takes these two; this one is quick and draws nothing.
    parser.add_argument("--fast", action="store_true", help="no effect: already fast")
    parser.add_argument("--save-dir", default=".", help="no effect: saves no figure")
    parser.parse_args(argv)
    gradient_of_a_model()
    check()
    train()
    bound_method()


if __name__ == "__main__":
    main()
