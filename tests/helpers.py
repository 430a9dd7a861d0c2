"""Test helpers: central finite differences and functions written to real files.

``check_against_finite_differences`` is the one check every gradient test
uses: our gradient against central differences in float64 at the same point.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path

import numpy as np

import autodiff as ad

_module_ids = itertools.count()


class UserModules:
    """Writes source text to a ``.py`` file and imports it, as a user's module would be."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, source: str, name: str | None = None):
        name = name or f"user_module_{next(_module_ids)}"
        path = self.directory / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


def central_difference(f, args: list, index: int):
    """Gradient of ``np.sum(f(*args))`` w.r.t. ``args[index]`` by central differences, in
    float64 (``ad.numeric_grad``, itself tested against analytic derivatives)."""
    args = list(args)
    if isinstance(args[index], np.ndarray):
        args[index] = args[index].astype(np.float64)
    return ad.numeric_grad(lambda *a: np.sum(f(*a)), *args, wrt=index)


def check_against_finite_differences(f, args: list, wrt=0, rtol: float = 1e-5,
                                     atol: float = 1e-7, forward: bool = True):
    """Assert ``ad.grad(f, wrt=wrt)`` matches central differences; return our gradients.

    With ``forward``, also the forward mode: ``ad.jvp`` along a random tangent
    gives the value of ``f`` and the directional derivative ``<gradient, tangent>``.
    """
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    names = f.__code__.co_varnames[: f.__code__.co_argcount]
    positions = [names.index(i) if isinstance(i, str) else i for i in indices]
    ours = ad.grad(f, wrt=wrt)(*args)
    ours = ours if isinstance(wrt, tuple) else (ours,)
    for position, gradient in zip(positions, ours):
        expected = central_difference(f, list(args), position)
        assert np.shape(gradient) == np.shape(args[position]), (
            f"gradient shape {np.shape(gradient)} != argument shape {np.shape(args[position])}")
        np.testing.assert_allclose(gradient, expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient w.r.t. argument {position}")
    if forward:
        check_jvp(f, args, wrt, ours, rtol=rtol, atol=atol)
    return ours


def check_jvp(f, args: list, wrt, gradients, rtol: float = 1e-5, atol: float = 1e-7):
    """Assert the forward mode of the scalar ``f`` agrees with its checked ``gradients``."""
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    names = f.__code__.co_varnames[: f.__code__.co_argcount]
    positions = [names.index(i) if isinstance(i, str) else i for i in indices]
    rng = np.random.default_rng(7)
    tangents = [rng.uniform(-1.0, 1.0, size=np.shape(args[p])) for p in positions]
    tangents = [float(t) if np.ndim(args[p]) == 0 and not isinstance(args[p], np.ndarray) else t
                for t, p in zip(tangents, positions)]
    push = ad.jvp(f, wrt=wrt)
    tangent = tuple(tangents) if isinstance(wrt, tuple) else tangents[0]
    value, derivative = push(*args, **{push.tangent_name: tangent})
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12,
                               err_msg="jvp's value differs from the function's")
    expected = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(gradients, tangents))
    np.testing.assert_allclose(derivative, expected, rtol=rtol, atol=atol * 10,
                               err_msg="jvp's directional derivative differs from <grad, u>")


def random_array(rng: np.random.Generator, shape, domain: str = "real"):
    """Random float64 input of ``shape`` (``None`` gives a Python float) in a domain."""
    low, high = {"real": (-2.0, 2.0), "positive": (0.5, 2.5), "unit": (-0.9, 0.9)}[domain]
    if shape is None:
        return float(rng.uniform(low, high))
    values = rng.uniform(low, high, size=shape)
    if domain == "real":  # keep away from 0 where abs/sign/maximum are not smooth
        values = np.where(np.abs(values) < 0.1, values + 0.3, values)
    return values
