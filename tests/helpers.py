"""Test helpers: central finite differences and functions written to real files.

``check_against_finite_differences`` is the one check every gradient test
uses: our gradient against central differences in float64 at the same point.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import functools
import importlib.util
import itertools
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import autodiff as ad
from autodiff.ops import registry

_module_ids = itertools.count()

# Structures the tests of structured arguments pass: a namedtuple of a weight and a
# bias, and a dataclass layer with a setting (a string: no gradient).
Pair = collections.namedtuple("Pair", "W b")


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    activation: str = "tanh"


def list_mlp(layers, x):
    """The issue's network: a list of (W, b) layers, the last one linear."""
    for W, b in layers[:-1]:
        x = np.tanh(x @ W + b)
    W, b = layers[-1]
    return np.sum((x @ W + b) ** 2)


def optional_bias(params, x):
    """A dict with an optional bias (None: no gradient) and an int setting."""
    z = x @ params["W"]
    if params["b"] is not None:
        z = z + params["b"]
    return np.sum(np.exp(z)) * params["n"]


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
    if isinstance(args[index], np.ndarray):  # (float64, or complex128)
        args[index] = args[index].astype(np.result_type(args[index], np.float64))
    return ad.numeric_grad(lambda *a: np.sum(f(*a)), *args, wrt=index)


def check_with_jit(fn, *args, wrt=0) -> None:
    """``ad.check_grad`` of ``fn`` (its gradient and JVP against central differences),
    and its gradient with and without ``jit=True`` against ``ad.numeric_grad``: for
    arguments that are structures too."""
    ad.check_grad(fn, *args, wrt=wrt, rtol=1e-6, atol=1e-9)
    for jit in (False, True):
        got = ad.grad(fn, wrt=wrt, jit=jit)(*args)
        expected = ad.numeric_grad(fn, *args, wrt=wrt)
        for ours, theirs in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)


def check_against_finite_differences(f, args: list, wrt=0, rtol: float = 1e-5,
                                     atol: float = 1e-7, forward: bool = True,
                                     second_order=False):
    """Assert ``ad.grad(f, wrt=wrt)`` matches central differences; return our gradients.

    With ``forward``, also the forward mode: ``ad.jvp`` along a random tangent
    gives the value of ``f`` and the directional derivative ``<gradient, tangent>``.
    With ``second_order``, also the three ways of differentiating twice (see
    :func:`check_second_order`); a :class:`NoSecondOrder` instead says that they
    must each stop with the error it names.
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
    if isinstance(second_order, NoSecondOrder):
        second_order.check(f, args, wrt)
    elif second_order:
        check_second_order(f, args, wrt, ours)
    return ours


def check_jvp(f, args: list, wrt, gradients, rtol: float = 1e-5, atol: float = 1e-7):
    """Assert the forward mode of the scalar ``f`` agrees with its checked ``gradients``."""
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    names = f.__code__.co_varnames[: f.__code__.co_argcount]
    positions = [names.index(i) if isinstance(i, str) else i for i in indices]
    rng = np.random.default_rng(7)
    tangents = _directions(rng, args, positions)
    push = ad.jvp(f, wrt=wrt)
    tangent = tuple(tangents) if isinstance(wrt, tuple) else tangents[0]
    value, derivative = push(*args, **{push.tangent_name: tangent})
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12,
                               err_msg="jvp's value differs from the function's")
    expected = sum(inner(g, t) for g, t in zip(gradients, tangents))
    np.testing.assert_allclose(derivative, expected, rtol=rtol, atol=atol * 10,
                               err_msg="jvp's directional derivative differs from <grad, u>")


def inner(gradient, direction) -> float:
    """The derivative along ``direction`` of a function of this ``gradient``: their
    inner product, the real part of ``sum(gradient * direction)`` for complex ones
    (a gradient is df/dx - i df/dy, the convention of JAX and autograd)."""
    return float(np.real(np.sum(np.asarray(gradient) * direction)))


def random_array(rng: np.random.Generator, shape, domain: str = "real"):
    """Random float64 input of ``shape`` (``None`` gives a Python float) in a domain;
    ``"complex"``: complex128 (a Python complex), real and imaginary parts in the real
    domain."""
    if domain == "complex":
        return random_array(rng, shape) + 1j * random_array(rng, shape)
    low, high = {"real": (-2.0, 2.0), "positive": (0.5, 2.5), "unit": (-0.9, 0.9)}[domain]
    if shape is None:
        return float(rng.uniform(low, high))
    values = rng.uniform(low, high, size=shape)
    if domain == "real":  # keep away from 0 where abs/sign/maximum are not smooth
        values = np.where(np.abs(values) < 0.1, values + 0.3, values)
    return values


# ----- second order -----

MODES = ("reverse-over-reverse", "forward-over-reverse", "reverse-over-forward",
         "forward-over-forward")


class NoSecondOrder:
    """A case whose function cannot be differentiated twice: each way of doing so
    (``modes``, of ``"reverse-over-reverse"``, ``"forward-over-reverse"``,
    ``"forward-over-forward"``) must raise ``error`` (an AutodiffError) matching
    ``match``, never return a number."""

    def __init__(self, match: str, error: type = ad.AutodiffError, modes: tuple = MODES) -> None:
        self.match, self.error, self.modes = match, error, modes

    def check(self, f, args: list, wrt) -> None:
        import pytest

        for mode in self.modes:
            with pytest.raises(self.error, match=self.match):
                _SECOND_ORDER[mode](f, list(args), wrt)

    def __repr__(self) -> str:
        return f"NoSecondOrder({self.match!r})"


def check_second_order(f, args: list, wrt, gradients, rtol: float = 1e-5, atol: float = 1e-6):
    """Assert the second derivatives of the scalar ``f`` agree with central differences
    of its (checked) gradient ``ad.grad(f, wrt=wrt)``, in float64, three ways:

    - reverse over reverse: ``ad.grad`` of ``sum_p <v_p, ad.grad(f)(...)_p>``, ``H v``;
    - forward over reverse: ``ad.hvp(f)`` along ``v``, ``H v``;
    - reverse over forward: ``ad.grad`` of the derivative ``ad.jvp(f)`` gives along ``v``,
      ``H v`` (it goes through the VJPs of the ops forward mode writes);
    - forward over forward: ``ad.jvp`` of ``ad.jvp(f)`` along ``u`` for the arguments
      and ``s`` for the inner tangent, whose derivative is ``<u, H v> + <gradient, s>``.

    ``H v`` is ``ad.numeric_grad`` of ``sum_p <v_p, gradient_p>`` (the Hessian of a
    function smooth at the point is symmetric). The directions are random.
    """
    positions = _positions(f, wrt)
    rng = np.random.default_rng(11)
    v = _directions(rng, args, positions)
    expected = _hessian_along(f, args, wrt, positions, v)
    tolerance = {"rtol": rtol, "atol": atol}
    for mode in MODES[:3]:
        ours = _SECOND_ORDER[mode](f, list(args), wrt, v)
        ours = ours if isinstance(wrt, tuple) else (ours,)
        for position, got, want in zip(positions, ours, expected):
            assert np.shape(got) == np.shape(args[position]), (
                f"{mode}: shape {np.shape(got)} != argument shape {np.shape(args[position])}")
            np.testing.assert_allclose(got, want, **tolerance,
                                       err_msg=f"{mode} w.r.t. argument {position}")
    u, s = _directions(rng, args, positions), _directions(rng, args, positions)
    (value, derivative), (value_dot, derivative_dot) = _SECOND_ORDER["forward-over-forward"](
        f, list(args), wrt, v, u, s)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    parts = [inner(b, a) for a, b in zip(u, expected)]
    parts += [inner(g, b) for g, b in zip(gradients, s)]
    scale = sum(float(np.sum(np.abs(a) * np.abs(b))) for a, b in
                [*zip(u, expected), *zip(gradients, s)])
    np.testing.assert_allclose(derivative_dot, sum(parts), rtol=rtol, atol=atol * (1 + scale),
                               err_msg="forward-over-forward: <u, H v> + <gradient, s>")
    first = sum(inner(g, t) for g, t in zip(gradients, v))
    np.testing.assert_allclose(derivative, first, rtol=rtol, atol=atol * 10)
    along_u = sum(inner(g, t) for g, t in zip(gradients, u))
    np.testing.assert_allclose(value_dot, along_u, rtol=rtol, atol=atol * 10)


def _positions(f, wrt) -> list[int]:
    indices = wrt if isinstance(wrt, tuple) else (wrt,)
    names = f.__code__.co_varnames[: f.__code__.co_argcount]
    return [names.index(i) if isinstance(i, str) else i for i in indices]


def _directions(rng, args, positions) -> list:
    """One random direction per differentiated argument, of its kind and shape (complex
    for a complex argument)."""
    directions = []
    for p in positions:
        d = rng.uniform(-1.0, 1.0, size=np.shape(args[p]))
        if np.iscomplexobj(args[p]):
            d = d + 1j * rng.uniform(-1.0, 1.0, size=np.shape(args[p]))
        directions.append(d if isinstance(args[p], np.ndarray) else d[()].item())
    return directions


def _hessian_along(f, args, wrt, positions, v) -> list:
    """``H v`` by central differences of ``ad.grad(f, wrt=wrt)``."""
    gradient = ad.grad(f, wrt=wrt)

    def along(*a):
        g = gradient(*a)
        g = g if isinstance(wrt, tuple) else (g,)
        return sum(inner(gp, vp) for gp, vp in zip(g, v))

    # (only the differentiated arrays in float64: int labels or indices stay ints)
    args = [np.asarray(a, dtype=np.result_type(a, np.float64)) if isinstance(a, np.ndarray)
            and i in positions else a for i, a in enumerate(args)]
    expected = ad.numeric_grad(along, *args, wrt=tuple(positions))
    return list(expected)


def _complex_among(args, positions) -> bool:
    return any(np.iscomplexobj(args[p]) for p in positions)


def _reverse_over_reverse(f, args, wrt, v=None):
    positions = _positions(f, wrt)
    v = v if v is not None else _directions(np.random.default_rng(11), args, positions)
    return derivatives_of(f, len(args), wrt, _complex_among(args, positions))[3](*args, *v)


def _reverse_over_forward(f, args, wrt, v=None):
    positions = _positions(f, wrt)
    v = v if v is not None else _directions(np.random.default_rng(11), args, positions)
    return derivatives_of(f, len(args), wrt, _complex_among(args, positions))[4](*args, *v)


def _forward_over_reverse(f, args, wrt, v=None):
    positions = _positions(f, wrt)
    v = v if v is not None else _directions(np.random.default_rng(11), args, positions)
    product = ad.hvp(f, wrt=wrt)  # (its direction is keyword-only when f has defaults)
    return product(*args, **{product.tangent_name: tuple(v) if isinstance(wrt, tuple) else v[0]})


def _forward_over_forward(f, args, wrt, v=None, u=None, s=None):
    positions = _positions(f, wrt)
    rng = np.random.default_rng(11)
    v, u, s = (d if d is not None else _directions(rng, args, positions) for d in (v, u, s))
    several = isinstance(wrt, tuple)
    push = ad.jvp(f, wrt=wrt)
    twice = derivatives_of(f, len(args), wrt, _complex_among(args, positions))[5]
    inner = tuple(v) if several else v[0]
    outer = (*u, tuple(s) if several else s[0])
    return twice(*args, **{push.tangent_name: inner, twice.tangent_name: outer})


def derivatives_of(f, arity: int, wrt, complex_values: bool = False) -> list:
    """Every derivative of ``f`` the checks build: ``ad.grad``, ``ad.jvp``, ``ad.hvp``,
    reverse over reverse, reverse over forward and forward over forward (unevaluated;
    their graphs show which ops the checks go through). Built once per rule set.
    ``complex_values``: some differentiated argument is complex (the second-order
    wrappers then take the real part of their inner products)."""
    return _derivatives(f, arity, wrt, complex_values, registry.generation)


@functools.lru_cache(maxsize=4096)
def _derivatives(f, arity: int, wrt, complex_values: bool, generation: int) -> list:
    positions = _positions(f, wrt)
    several = isinstance(wrt, tuple)
    outer = tuple(positions) if several else positions[0]
    gradient, push = ad.grad(f, wrt=wrt), ad.jvp(f, wrt=wrt)
    module = _along_module(arity, len(positions), several, push.tangent_name, complex_values)
    return [gradient, push, ad.hvp(f, wrt=wrt), ad.grad(module.along(gradient), wrt=outer),
            ad.grad(module.forward_along(push), wrt=outer),
            ad.jvp(push, wrt=(*positions, push.tangent_name))]


_SECOND_ORDER = {"reverse-over-reverse": _reverse_over_reverse,
                 "forward-over-reverse": _forward_over_reverse,
                 "reverse-over-forward": _reverse_over_forward,
                 "forward-over-forward": _forward_over_forward}


# Source files the helpers write for the session (second-order wrappers, op tables).
GENERATED = Path(tempfile.mkdtemp(prefix="autodiff-tests-"))
atexit.register(shutil.rmtree, GENERATED, True)


@functools.cache
def _along_module(arity: int, differentiated: int, several: bool, tangent_name: str,
                  complex_values: bool = False):
    """A module whose ``along(gradient)`` is the scalar ``sum_p <v_p, gradient(...)_p>``
    of the arguments and one direction per gradient, and ``forward_along(push)`` the
    derivative ``push`` (an ``ad.jvp``) gives along those directions (with
    ``complex_values``, the real parts of both), as source autodiff can read."""
    args = ", ".join(f"a{i}" for i in range(arity))
    v = ", ".join(f"v{i}" for i in range(differentiated))
    g = ", ".join(f"g{i}" for i in range(differentiated)) + ("," if several and
                                                             differentiated == 1 else "")
    product = "np.real(np.sum(v{0} * g{0}))" if complex_values else "np.sum(v{0} * g{0})"
    total = " + ".join(product.format(i) for i in range(differentiated))
    derivative = "np.real(derivative)" if complex_values else "derivative"
    tangent = f"({v},)" if several else v
    source = f"""
        import numpy as np


        def along(gradient):
            def gradient_along({args}, {v}):
                {g} = gradient({args})
                return {total}
            return gradient_along


        def forward_along(push):
            def derivative_along({args}, {v}):
                # (by name: the tangent is keyword-only when the function has defaults)
                value, derivative = push({args}, {tangent_name}={tangent})
                return {derivative}
            return derivative_along
    """
    return UserModules(GENERATED)(
        source, f"second_order_{arity}_{differentiated}_{int(several)}_{tangent_name}"
                + ("_complex" if complex_values else ""))
