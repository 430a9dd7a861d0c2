"""The checks every generated program goes through (and every regression test of one)."""

from __future__ import annotations

import difflib

import numpy as np

import autodiff as ad
from tests.fuzz.programs import Program
from tests.helpers import check_against_finite_differences


def check_program(program: Program, first, second=None, names=(), expected=None) -> None:
    """Every check of one program; ``first`` and ``second`` are two modules of its source."""
    wrt, args = program.wrt, program.arguments()
    expected = first.f(*args) if expected is None else expected
    computed, by_value_and_grad = ad.value_and_grad(first.f, wrt=wrt)(*args)
    np.testing.assert_allclose(computed, expected, rtol=1e-12, atol=1e-12,
                               err_msg="value_and_grad's value")
    ours = check_against_finite_differences(first.f, args, wrt=wrt, rtol=1e-5, atol=1e-6)
    _same(by_value_and_grad, ours, wrt, "value_and_grad's gradients", rtol=1e-12)
    _fresh_gradients(ours, args, wrt)
    _same(ad.grad(first.f, wrt=wrt, optimize=False)(*args), ours, wrt, "optimize=False")
    jitted = ad.grad(first.f, wrt=wrt, jit=True)
    _same(jitted(*args), ours, wrt, "jit=True")
    for arg, original in zip(args, program.args):
        np.testing.assert_array_equal(arg, original, err_msg="an input was changed")
    read_only = program.arguments()
    for arg in read_only:
        if isinstance(arg, np.ndarray):
            arg.setflags(write=False)
    _same(ad.grad(first.f, wrt=wrt)(*read_only), ours, wrt, "read-only inputs", rtol=0)
    _same(jitted(*read_only), ours, wrt, "read-only inputs, jit=True")
    for arg, original in zip(read_only, program.args):
        np.testing.assert_array_equal(arg, original, err_msg="a read-only input was changed")
    _read_only_tangents(program, first.f, read_only)
    _float32(program, first.f, ours, jitted)
    if program.composition:
        _composition(program, first)
    if second is not None:
        texts = [ad.grad(module.f, wrt=wrt).source.replace(name, "<module>")
                 for module, name in zip((first, second), names)]
        assert texts[0] == texts[1], "the same text compiled twice to different code:\n" + \
            "\n".join(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(),
                                           lineterm=""))


def _same(gradients, reference, wrt, what: str, rtol: float = 1e-9) -> None:
    """``gradients`` equal ``reference`` in value, type, shape and dtype."""
    assert len(gradients) == len(reference), what
    for position, got, want in zip(wrt, gradients, reference):
        message = f"{what}, argument {position}"
        assert type(got) is type(want), f"{message}: {type(got)} != {type(want)}"
        assert np.shape(got) == np.shape(want), f"{message}: {np.shape(got)} != {np.shape(want)}"
        assert np.asarray(got).dtype == np.asarray(want).dtype, message
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12 if rtol else 0,
                                   err_msg=message)


def _fresh_gradients(gradients, args, wrt) -> None:
    """A gradient is a Python float for a Python float, or a new writable array of the
    argument's shape and dtype that shares memory with no input and no other gradient."""
    for position, gradient in zip(wrt, gradients):
        arg = args[position]
        if not isinstance(arg, np.ndarray):
            assert type(gradient) is float, (position, type(gradient))
            continue
        assert type(gradient) is np.ndarray, (position, type(gradient))
        assert gradient.shape == arg.shape and gradient.dtype == arg.dtype, position
        assert gradient.flags.writeable, f"the gradient of argument {position} is read-only"
        others = [a for a in args if isinstance(a, np.ndarray)]
        others += [g for p, g in zip(wrt, gradients) if p != position]
        assert not any(np.shares_memory(gradient, other) for other in others
                       if isinstance(other, np.ndarray)), f"gradient {position} shares memory"


def _read_only_tangents(program: Program, f, args) -> None:
    """The forward mode reads the caller's tangents and never writes them."""
    push = ad.jvp(f, wrt=program.wrt)
    rng = np.random.default_rng(3)
    tangents = [rng.uniform(-1, 1, np.shape(args[p])) if isinstance(args[p], np.ndarray)
                else float(rng.uniform(-1, 1)) for p in program.wrt]
    expected = push(*args, **{push.tangent_name: tuple(t.copy() if isinstance(t, np.ndarray)
                                                       else t for t in tangents)})
    for tangent in tangents:
        if isinstance(tangent, np.ndarray):
            tangent.setflags(write=False)
    got = push(*args, **{push.tangent_name: tuple(tangents)})
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12,
                               err_msg="jvp with read-only tangents")


def _float32(program: Program, f, reference, jitted) -> None:
    """float32 array inputs: float32 gradients, close to the float64 ones (plain and jit)."""
    args = program.arguments(np.float32)
    scale = max([1.0] + [float(np.max(np.abs(g))) for g in reference])
    for what, derivative in [("float32", ad.grad(f, wrt=program.wrt)),
                             ("float32, jit=True", jitted)]:
        gradients = derivative(*args)
        for position, got, want in zip(program.wrt, gradients, reference):
            arg = args[position]
            if isinstance(arg, np.ndarray):
                assert type(got) is np.ndarray and got.dtype == np.float32, (what, position,
                                                                             type(got))
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * scale,
                                       err_msg=f"{what}, argument {position}")


def _directional(f, args: list, directions: dict, eps: float = 1e-6):
    """Central differences of ``f`` (a value or nested tuples of them) along ``directions``
    (position: step direction), in float64."""
    def moved(sign):
        moved_args = list(args)
        for position, direction in directions.items():
            moved_args[position] = _step(args[position], direction, sign * eps)
        return f(*moved_args)

    return _tree(lambda a, b: (np.asarray(a, dtype=np.float64) - b) / (2 * eps),
                 moved(1), moved(-1))


def _step(value, direction, eps):
    if isinstance(value, tuple):
        return tuple(_step(v, d, eps) for v, d in zip(value, direction))
    if isinstance(value, np.ndarray):
        return value + eps * direction
    return float(value + eps * direction)


def _tree(function, *trees):
    if isinstance(trees[0], tuple):
        return tuple(_tree(function, *parts) for parts in zip(*trees))
    return function(*trees)


def _composition(program: Program, module) -> None:
    """A transform of a transform against central differences of the lower-order function:
    jvp of jvp, vjp of jvp, or grad of a function calling value_and_grad (``f2``)."""
    position, args = program.wrt[0], program.arguments()
    rng = np.random.default_rng(5)

    def like(value):
        drawn = rng.uniform(-1, 1, np.shape(value))
        return drawn if isinstance(value, np.ndarray) else float(drawn)

    if program.composition == "grad of value_and_grad":
        check_against_finite_differences(module.f2, args, wrt=position, rtol=1e-5, atol=1e-6)
        return
    push = ad.jvp(module.f, wrt=position)
    tangent = like(args[position])
    lower = [*args, tangent]
    if program.composition == "jvp of jvp":
        twice = ad.jvp(push, wrt=(position, "tangent"))
        directions = (like(args[position]), like(tangent))
        value, derivative = twice(*lower, directions)
        _tree(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12,
                                                      err_msg="jvp of jvp: value"),
              value, push(*lower))
        expected = _directional(push, lower, {position: directions[0],
                                              len(args): directions[1]})
        _tree(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6,
                                                      err_msg="jvp of jvp: tangent"),
              derivative, expected)
        return
    seeds = (0.7, -1.3)
    got = ad.vjp(push, wrt=position)(*lower, seeds)
    def weighted(*a):
        value, tangent_out = push(*a)
        return seeds[0] * value + seeds[1] * tangent_out

    expected = ad.numeric_grad(weighted, *lower, wrt=position)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg="vjp of jvp")
    assert np.shape(got) == np.shape(args[position]), "vjp of jvp: shape"
