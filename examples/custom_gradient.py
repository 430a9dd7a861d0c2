"""Choosing the gradient yourself: ``@ad.custom_grad`` and ``ad.register_gradient``.

Run it with ``python examples/custom_gradient.py``.

1. A straight-through estimator: rounding has a zero gradient almost
   everywhere, so a model with rounded (quantized) weights cannot learn through
   it. ``@ad.custom_grad`` keeps the rounding in the forward pass and lets the
   gradient pass through as if it were the identity.
2. A rule for a function of your own: ``ad.register_gradient(softplus, rule)``
   makes the derivative call ``softplus`` as one operation and use your rule
   instead of differentiating its body. Used as a ``with`` block, the rule
   holds only inside the block.

Rules are plain NumPy: ``rule(g, ans, *params)`` gets the incoming gradient
``g``, the function's result ``ans`` and its arguments, and returns one
gradient per argument. They are pasted into the generated code, so
``.source`` shows them.
"""

from __future__ import annotations

import numpy as np

import autodiff as ad

# ----- 1. a straight-through estimator -----


@ad.custom_grad
def round_ste(x):
    """Round to the nearest integer; the gradient is that of the identity."""
    return np.round(x)


@round_ste.defvjp
def _(g, ans, x):
    return g  # straight through: pretend round_ste(x) was x


def quantized_loss(w, x, t):
    q = round_ste(w * 4.0) / 4.0  # weights rounded to multiples of 1/4
    return np.mean((x @ q - t) ** 2)


def plain_rounding_loss(w, x, t):
    q = np.round(w * 4.0) / 4.0  # the same model with NumPy's rounding
    return np.mean((x @ q - t) ** 2)


# ----- 2. a rule for a user function -----


def softplus(x):
    return np.log1p(np.exp(x))


def softplus_vjp(g, ans, x):
    return g / (1.0 + np.exp(-x))  # the logistic sigmoid


def softplus_loss(x):
    return np.sum(softplus(x) * x)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3))
    t = x @ np.array([0.5, -1.25, 0.75])
    w = rng.normal(size=3) * 0.1

    print("NumPy's rounding passes no gradient:",
          ad.grad(plain_rounding_loss)(w, x, t))
    dloss = ad.grad(quantized_loss)
    print("the straight-through estimator does: ", dloss(w, x, t))
    print("\nIts generated gradient calls round_ste and inlines the rule:\n")
    print(dloss.source)

    # Training the quantized model with the straight-through gradient finds the
    # weights, to the nearest quarter.
    for _ in range(300):
        w = w - 0.1 * dloss(w, x, t)
    print("quantized weights after training:", np.round(w * 4.0) / 4.0)
    print("the weights that made t:          [ 0.5  -1.25  0.75]\n")

    v = np.array([-2.0, 0.0, 3.0])
    with ad.register_gradient(softplus, softplus_vjp):
        with_rule = ad.grad(softplus_loss)
        print("gradient with the registered rule:  ", with_rule(v))
        print("\nsoftplus is now one call, its rule pasted in:\n")
        print(with_rule.source)
    # Outside the block the rule is gone: the compiler inlines softplus and
    # differentiates log1p(exp(x)) itself. The numbers agree.
    inlined = ad.grad(softplus_loss)
    print("gradient by differentiating the body:", inlined(v))
    print("\nThe same gradient, softplus inlined:\n")
    print(inlined.source)


if __name__ == "__main__":
    main()
