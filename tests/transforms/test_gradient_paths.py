"""A refusal on the gradient's path shows the path: from the differentiated argument,
through the refused construct, to the output, a step per line of the user's code."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad


def through_a_loop_and_a_branch(x, w):
    h = x * w
    for _ in range(3):
        h = np.sin(h) + x
    if np.sum(h) > 0:
        m = np.frexp(h)[0]
    else:
        m = h
    return np.sum(m * 2.0)


def _line(f, offset: int) -> int:
    return f.__code__.co_firstlineno + offset


@pytest.mark.parametrize("derivative", [
    lambda f: ad.grad(f)(np.ones(3), 2.0),
    lambda f: ad.jvp(f)(np.ones(3), 2.0, np.ones(3)),
    lambda f: ad.grad(f, wrt=1)(np.ones(3), 2.0),
], ids=["grad", "jvp", "grad wrt w"])
def test_the_refusal_shows_the_path_through_the_construct(derivative):
    f = through_a_loop_and_a_branch
    with pytest.raises(ad.UnknownFunctionError) as info:
        derivative(f)
    path = info.value.path
    assert path is not None and f"\n  path: {path}\n" in str(info.value)
    steps = path.split(" → ")
    assert steps[0] in ("x", "w")
    assert steps[1] == f"line {_line(f, 1)}: h = x * w"
    assert f"line {_line(f, 2)}: for _ in range(3):" in steps
    assert steps[-2] == f"line {_line(f, 5)}: m = np.frexp(h)[0]"
    assert steps[-1] == f"line {_line(f, 8)}: return np.sum(m * 2.0)"


def setting_reached(x):
    n = np.sum(x ** 2)
    out = np.linalg.norm(x, ord=n)
    return out * 3.0


def test_a_gradient_into_a_setting_shows_its_path():
    f = setting_reached
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(f)(np.array([1.0, 2.0]))
    assert info.value.path is not None
    steps = info.value.path.split(" → ")
    assert steps[0] == "x" and steps[1] == f"line {_line(f, 1)}: n = np.sum(x ** 2)"
    assert steps[-1] == f"line {_line(f, 3)}: return out * 3.0"


def test_a_long_line_is_shortened_in_the_path():
    def f(x):
        return np.sum(np.frexp(x + 1.0 + 2.0 + 3.0 + 4.0 + 5.0 + 6.0 + 7.0 + 8.0 + 9.0)[0])

    with pytest.raises(ad.UnknownFunctionError) as info:
        ad.grad(f)(np.ones(2))
    step = info.value.path.split(" → ")[-1]
    assert step.endswith("...") and len(step) < 70


def shuffled(x):
    np.random.shuffle(x)
    return np.sum(x ** 2)


def test_a_call_made_for_its_effect_shows_the_path_to_it():
    with pytest.raises(ad.NonDifferentiableError, match="a call made for its effect") as info:
        ad.grad(shuffled)(np.ones(3))
    assert info.value.path == f"x → line {_line(shuffled, 1)}: np.random.shuffle(x)"
