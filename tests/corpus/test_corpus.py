"""Every corpus function, checked end to end.

For each entry of ``tests.corpus.programs.CORPUS`` (straight-line code) and of
``tests.corpus.control_flow.CONTROL_FLOW`` (branches, loops, helpers):
gradients against central finite differences, ``value_and_grad`` against the
function itself, the unoptimised derivative against the optimised one,
deterministic generated source, inputs left untouched, gradients that alias
no input, float32 in giving float32 out, and the dot-product test of the forward
mode (``jvp``) against the reverse mode (``vjp``). Control-flow programs are checked
on two seeds, which may take different branches and loop counts.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.derivatives.build import build_grad
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import CORPUS, Program
from tests.helpers import check_against_finite_differences


def _args(program: Program, seed: int = 0) -> list:
    return program.make_args(np.random.default_rng(seed))


def _as_tuple(program: Program, gradients) -> tuple:
    return gradients if isinstance(program.wrt, tuple) else (gradients,)


def _wrt_positions(program: Program) -> list[int]:
    code = program.fn.__code__
    names = code.co_varnames[: code.co_argcount]
    items = program.wrt if isinstance(program.wrt, tuple) else (program.wrt,)
    return [names.index(i) if isinstance(i, str) else i for i in items]


corpus_cases = pytest.mark.parametrize("program", CORPUS, ids=[p.fn.__name__ for p in CORPUS])


def all_cases(seed: int):
    """Every program of both corpora with ``seed``; control-flow ones with ``seed + 10`` too."""
    cases = [pytest.param(p, seed, id=p.fn.__name__) for p in CORPUS + CONTROL_FLOW]
    cases += [pytest.param(p, seed + 10, id=f"{p.fn.__name__}-{seed + 10}")
              for p in CONTROL_FLOW]
    return pytest.mark.parametrize("program, seed", cases)


def test_corpus_is_large_and_unique():
    names = [p.fn.__name__ for p in CORPUS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


@corpus_cases
def test_inputs_are_small_float64_and_give_a_scalar(program):
    args = _args(program)
    for arg in args:
        assert isinstance(arg, float) or (isinstance(arg, np.ndarray)
                                          and arg.dtype == np.float64 and arg.size <= 30)
    assert np.ndim(program.fn(*args)) == 0


@corpus_cases
def test_gradient_matches_finite_differences(program):
    check_against_finite_differences(program.fn, _args(program), wrt=program.wrt)


@all_cases(1)
def test_value_and_grad_agree_with_function_and_grad(program, seed):
    args = _args(program, seed)
    value, gradients = ad.value_and_grad(program.fn, wrt=program.wrt)(*args)
    np.testing.assert_allclose(value, program.fn(*args), rtol=1e-12, atol=0)
    _assert_same_as_grad(program, gradients, args)


def _assert_same_as_grad(program, gradients, args) -> None:
    expected = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args))
    for ours, theirs in zip(_as_tuple(program, gradients), expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


@all_cases(2)
def test_unoptimized_derivative_gives_the_same_gradients(program, seed):
    args = _args(program, seed)
    fast = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args))
    plain = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt, optimize=False)(*args))
    for a, b in zip(fast, plain, strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("program", CORPUS + CONTROL_FLOW,
                         ids=[p.fn.__name__ for p in CORPUS + CONTROL_FLOW])
def test_generated_source_is_deterministic(program):
    first = build_grad(program.fn, program.wrt, with_value=False, optimize=True, has_aux=False).source
    second = build_grad(program.fn, program.wrt, with_value=False, optimize=True, has_aux=False).source
    assert first == second


@all_cases(3)
def test_inputs_are_not_modified(program, seed):
    args = _args(program, seed)
    originals = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    for arg in args:
        if isinstance(arg, np.ndarray):
            arg.setflags(write=False)
    _, gradients = ad.value_and_grad(program.fn, wrt=program.wrt)(*args)
    for arg, original in zip(args, originals, strict=True):
        np.testing.assert_array_equal(arg, original)
    _assert_same_as_grad(program, gradients, originals)


@all_cases(4)
def test_gradients_do_not_alias_the_inputs(program, seed):
    # A caller may update a gradient in place (``g *= lr``); that must not reach an input.
    args = _args(program, seed)
    gradients = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args))
    for gradient in gradients:
        for arg in args:
            if isinstance(gradient, np.ndarray) and isinstance(arg, np.ndarray):
                assert not np.shares_memory(gradient, arg)


@all_cases(5)
def test_float32_inputs_give_float32_gradients(program, seed):
    args64 = _args(program, seed)
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args64]
    ours64 = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args64))
    ours32 = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args32))
    for position, g32, g64 in zip(_wrt_positions(program), ours32, ours64, strict=True):
        if isinstance(args32[position], np.ndarray):
            assert isinstance(g32, np.ndarray) and g32.dtype == np.float32, (
                f"argument {position}: gradient dtype {np.result_type(g32)}")
        else:
            assert type(g32) is float, f"argument {position}: gradient {type(g32)}"
        assert np.shape(g32) == np.shape(args32[position])
        scale = max(1.0, float(np.max(np.abs(g64), initial=0.0)))
        np.testing.assert_allclose(g32, g64, rtol=2e-3, atol=2e-3 * scale,
                                   err_msg=f"gradient w.r.t. argument {position}")


@all_cases(6)
def test_jvp_and_vjp_pass_the_dot_product_test(program, seed):
    """``<v, J u>`` by forward mode equals ``<J^T v, u>`` by reverse mode, and the
    forward mode's value is the function's."""
    args = _args(program, seed)
    rng = np.random.default_rng(seed + 100)
    tangents = []
    for position in _wrt_positions(program):
        arg = args[position]
        u = rng.uniform(-1.0, 1.0, size=np.shape(arg))
        tangents.append(float(u) if isinstance(arg, float) else u)
    several = isinstance(program.wrt, tuple)
    push = ad.jvp(program.fn, wrt=program.wrt)
    value, directional = push(*args, **{push.tangent_name: tuple(tangents) if several
                                        else tangents[0]})
    np.testing.assert_allclose(value, program.fn(*args), rtol=1e-13)
    v = float(rng.uniform(0.5, 1.5))
    pull = ad.vjp(program.fn, wrt=program.wrt)
    pulled = _as_tuple(program, pull(*args, **{pull.seed_name: v}))
    forward = v * directional
    reverse = sum(float(np.sum(g * u)) for g, u in zip(pulled, tangents))
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)
