"""The checks every generated program goes through (and every regression test of one).

An argument may be a structure (a dict, a list, a tuple, a namedtuple, a
dataclass, nested): its gradient has its structure, and every check walks the
two leaf by leaf (``ad.tree.map``), each leaf named by its path
(``params['W']``, ``layers[0][1]``). A leaf without a gradient (a string, an
int, ``None``) must get ``None``.
"""

from __future__ import annotations

import warnings

import difflib

import numpy as np

import autodiff as ad
from tests.fuzz.programs import Program
from tests.helpers import check_against_finite_differences


def check_program(program: Program, first, second=None, names=(), expected=None) -> None:
    """Every check of one program; ``first`` and ``second`` are two modules of its source."""
    wrt, args = program.wrt, program.arguments()
    leaves = _Leaves(program)
    expected = first.f(*args) if expected is None else expected
    computed, by_value_and_grad = ad.value_and_grad(first.f, wrt=wrt)(*args)
    np.testing.assert_allclose(computed, expected, rtol=1e-12, atol=1e-12,
                               err_msg="value_and_grad's value")
    ours = _against_finite_differences(first.f, args, wrt, leaves)
    leaves.same(by_value_and_grad, ours, "value_and_grad's gradients", rtol=1e-12)
    _fresh_gradients(ours, args, leaves)
    leaves.same(ad.grad(first.f, wrt=wrt, optimize=False)(*args), ours, "optimize=False")
    jitted = ad.grad(first.f, wrt=wrt, jit=True)
    leaves.same(jitted(*args), ours, "jit=True")
    with warnings.catch_warnings():  # (a loop left taped whole says so)
        warnings.simplefilter("ignore", ad.CheckpointWarning)
        checkpointed = ad.grad(first.f, wrt=wrt, checkpoint=2)(*args)
    leaves.same(checkpointed, ours, "checkpoint=2", rtol=1e-12)
    _unchanged(args, program.args, "an input was changed")
    read_only = program.arguments()
    for arg in read_only:
        ad.tree.map(lambda a: a.setflags(write=False) if isinstance(a, np.ndarray) else None,
                    arg)
    leaves.same(ad.grad(first.f, wrt=wrt)(*read_only), ours, "read-only inputs", rtol=0)
    leaves.same(jitted(*read_only), ours, "read-only inputs, jit=True")
    _unchanged(read_only, program.args, "a read-only input was changed")
    _read_only_tangents(program, first.f, read_only)
    _float32(program, first.f, ours, jitted, leaves)
    if program.composition:
        _composition(program, first, leaves)
    if second is not None:
        texts = [_compiled_text(module.f, wrt, args).replace(name, "<module>")
                 for module, name in zip((first, second), names)]
        assert texts[0] == texts[1], "the same text compiled twice to different code:\n" + \
            "\n".join(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(),
                                           lineterm=""))


def _is_structure(value) -> bool:
    return value is not None and ad.tree.items(value) is not None


def _differentiable(leaf) -> bool:
    """Whether a leaf has a gradient: a float, or an array of floats."""
    return type(leaf) is float or isinstance(leaf, np.ndarray) and leaf.dtype.kind == "f"


def _compiled_text(f, wrt, args) -> str:
    """The derivative's generated code: the one compiled for these arguments' structures
    where any of them is a structure (and the derivative says: the forward-mode one, of a
    function calling the derivative of a looping helper, has no source_for)."""
    derivative = ad.grad(f, wrt=wrt)
    source_for = getattr(derivative, "source_for", None)
    return source_for(*args) if source_for and any(map(_is_structure, args)) \
        else derivative.source


class _Leaves:
    """The leaves of the differentiated arguments, each with its path, and the leaves at
    the same places in gradients."""

    def __init__(self, program: Program) -> None:
        self.wrt, self.program = program.wrt, program
        self.paths = [[path for path, _ in ad.tree.paths(program.args[p], program.params[p])]
                      for p in program.wrt]

    def rows(self, args, *gradients) -> list[tuple]:
        """``(path, leaf, the leaf of each of gradients...)`` over every leaf of the
        differentiated arguments (a gradient's None standing for a leaf)."""
        rows = []
        for k, position in enumerate(self.wrt):
            found = []
            ad.tree.map(lambda leaf, *at, found=found: found.append((leaf, *at)),
                        args[position], *(g[k] for g in gradients))
            assert len(found) == len(self.paths[k]), (found, self.paths[k])
            rows += [(path, *row) for path, row in zip(self.paths[k], found)]
        return rows

    def same(self, gradients, reference, what: str, rtol: float = 1e-9) -> None:
        """``gradients`` equal ``reference`` in structure, value, type, shape and dtype."""
        assert len(gradients) == len(reference), what
        for path, _, got, want in self.rows(self.program.args, gradients, reference):
            message = f"{what}, {path}"
            if want is None:
                assert got is None, f"{message}: {type(got)} for a leaf with no gradient"
                continue
            assert type(got) is type(want), f"{message}: {type(got)} != {type(want)}"
            assert np.shape(got) == np.shape(want), \
                f"{message}: {np.shape(got)} != {np.shape(want)}"
            assert np.asarray(got).dtype == np.asarray(want).dtype, message
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12 if rtol else 0,
                                       err_msg=message)


def _against_finite_differences(f, args, wrt, leaves: _Leaves, rtol=1e-5, atol=1e-6):
    """Our gradients against central differences (and the forward mode against them),
    leaf by leaf for a structure; returns ours."""
    if not any(_is_structure(args[p]) for p in wrt):
        return check_against_finite_differences(f, args, wrt=wrt, rtol=rtol, atol=atol)
    ours = ad.grad(f, wrt=wrt)(*args)
    expected = ad.numeric_grad(lambda *a: np.sum(f(*a)), *args, wrt=wrt)
    for path, leaf, got, want in leaves.rows(args, ours, expected):
        if not _differentiable(leaf):
            assert got is None, f"{path}: a gradient {type(got)} for a {type(leaf)}"
            continue
        assert np.shape(got) == np.shape(leaf), f"{path}: {np.shape(got)} != {np.shape(leaf)}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=path)
    rng = np.random.default_rng(7)
    tangents = tuple(_like(args[p], rng) for p in wrt)
    push = ad.jvp(f, wrt=wrt)
    value, derivative = push(*args, **{push.tangent_name: tangents})
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12,
                               err_msg="jvp's value differs from the function's")
    along = sum(float(np.sum(np.asarray(g) * t))
                for _, _, g, t in leaves.rows(args, ours, tangents) if t is not None)
    np.testing.assert_allclose(derivative, along, rtol=rtol, atol=atol * 10,
                               err_msg="jvp's directional derivative differs from <grad, u>")
    return ours


def _like(value, rng):
    """A random tangent in ``value``'s structure: None where a leaf has no gradient."""
    def draw(leaf):
        if not _differentiable(leaf):
            return None
        drawn = rng.uniform(-1, 1, np.shape(leaf))
        return drawn if isinstance(leaf, np.ndarray) else float(drawn)
    return ad.tree.map(draw, value)


def _unchanged(args, originals, message: str) -> None:
    for arg, original in zip(args, originals):
        ad.tree.map(lambda a, b: np.testing.assert_array_equal(a, b, err_msg=message),
                    arg, original)


def _fresh_gradients(gradients, args, leaves: _Leaves) -> None:
    """A gradient is a Python float for a Python float, or a new writable array of the
    leaf's shape and dtype that shares memory with no input and no other gradient; None
    for a leaf with no gradient."""
    rows = leaves.rows(args, gradients)
    inputs = [a for arg in args for a in ad.tree.leaves(arg) if isinstance(a, np.ndarray)]
    for path, leaf, gradient in rows:
        if not _differentiable(leaf):
            assert gradient is None, (path, type(gradient))
            continue
        if not isinstance(leaf, np.ndarray):
            assert type(gradient) is float, (path, type(gradient))
            continue
        assert type(gradient) is np.ndarray, (path, type(gradient))
        assert gradient.shape == leaf.shape and gradient.dtype == leaf.dtype, path
        assert gradient.flags.writeable, f"the gradient of {path} is read-only"
        others = inputs + [g for p, _, g in rows if p != path and isinstance(g, np.ndarray)]
        assert not any(np.shares_memory(gradient, other) for other in others), \
            f"the gradient of {path} shares memory"


def _read_only_tangents(program: Program, f, args) -> None:
    """The forward mode reads the caller's tangents and never writes them."""
    push = ad.jvp(f, wrt=program.wrt)
    rng = np.random.default_rng(3)
    tangents = [_like(args[p], rng) for p in program.wrt]
    copies = tuple(ad.tree.map(lambda t: t.copy() if isinstance(t, np.ndarray) else t, t)
                   for t in tangents)
    expected = push(*args, **{push.tangent_name: copies})
    for tangent in tangents:
        ad.tree.map(lambda t: t.setflags(write=False) if isinstance(t, np.ndarray) else None,
                    tangent)
    got = push(*args, **{push.tangent_name: tuple(tangents)})
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12,
                               err_msg="jvp with read-only tangents")


def _float32(program: Program, f, reference, jitted, leaves: _Leaves) -> None:
    """float32 array inputs: float32 gradients, close to the float64 ones (plain and jit)."""
    args = program.arguments(np.float32)
    scale = max([1.0] + [float(np.max(np.abs(g))) for _, _, g in leaves.rows(args, reference)
                         if g is not None])
    for what, derivative in [("float32", ad.grad(f, wrt=program.wrt)),
                             ("float32, jit=True", jitted)]:
        gradients = derivative(*args)
        for path, leaf, got, want in leaves.rows(args, gradients, reference):
            if want is None:
                assert got is None, (what, path, type(got))
                continue
            if isinstance(leaf, np.ndarray):
                assert type(got) is np.ndarray and got.dtype == np.float32, (what, path,
                                                                             type(got))
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * scale,
                                       err_msg=f"{what}, {path}")


def _directional(f, args: list, directions: dict, eps: float = 1e-6):
    """Central differences of ``f`` (a value or nested tuples of them) along ``directions``
    (position: step direction in the argument's structure), in float64."""
    def moved(sign):
        moved_args = list(args)
        for position, direction in directions.items():
            moved_args[position] = _step(args[position], direction, sign * eps)
        return f(*moved_args)

    return _tree(lambda a, b: (np.asarray(a, dtype=np.float64) - b) / (2 * eps),
                 moved(1), moved(-1))


def _step(value, direction, eps):
    def step(leaf, d):
        if d is None:
            return leaf
        return leaf + eps * d if isinstance(leaf, np.ndarray) else float(leaf + eps * d)
    return ad.tree.map(step, value, direction)


def _tree(function, *trees):
    if isinstance(trees[0], tuple):
        return tuple(_tree(function, *parts) for parts in zip(*trees))
    return function(*trees)


def _close_leaves(value, got, expected, what: str, rtol=1e-5, atol=1e-6) -> None:
    """``got`` and ``expected``, in ``value``'s structure, equal leaf by leaf."""
    def close(leaf, a, b):
        if b is None:
            assert a is None, (what, type(a))
            return
        assert np.shape(a) == np.shape(leaf), f"{what}: shape"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)
    ad.tree.map(close, value, got, expected)


def _composition(program: Program, module, leaves: _Leaves) -> None:
    """A transform of a transform against central differences of the lower-order function:
    jvp of jvp, vjp of jvp, or grad of a function calling value_and_grad (``f2``)."""
    position, args = program.wrt[0], program.arguments()
    rng = np.random.default_rng(5)

    if program.composition == "grad of value_and_grad":
        first = _Leaves(Program(program.source, program.params, program.args, (position,)))
        _against_finite_differences(module.f2, args, (position,), first)
        return
    push = ad.jvp(module.f, wrt=position)
    tangent = _like(args[position], rng)
    lower = [*args, tangent]
    if program.composition == "jvp of jvp":
        twice = ad.jvp(push, wrt=(position, "tangent"))
        directions = (_like(args[position], rng), _like(tangent, rng))
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
    _close_leaves(args[position], got, expected, "vjp of jvp")
