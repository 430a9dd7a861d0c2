"""Every control-flow corpus function, checked end to end.

For each entry of ``tests.corpus.control_flow.CONTROL_FLOW``: gradients against
central finite differences on several seeds (so different seeds take different
branches and loop counts), ``value_and_grad`` against the function itself and
against ``grad``, the unoptimised derivative against the optimised one, and
inputs left untouched.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import Program
from tests.helpers import check_against_finite_differences

FINITE_DIFFERENCE_SEEDS = (0, 1, 2, 3, 4, 5)


def _args(program: Program, seed: int = 0) -> list:
    return program.make_args(np.random.default_rng(seed))


def _as_tuple(program: Program, gradients) -> tuple:
    return gradients if isinstance(program.wrt, tuple) else (gradients,)


control_flow_cases = pytest.mark.parametrize(
    "program", CONTROL_FLOW, ids=[p.fn.__name__ for p in CONTROL_FLOW])


def test_control_flow_corpus_is_large_and_unique():
    names = [p.fn.__name__ for p in CONTROL_FLOW]
    assert len(names) >= 45
    assert len(set(names)) == len(names)


def test_control_flow_corpus_has_loops_that_run_zero_times():
    assert sum("zero" in p.fn.__name__ for p in CONTROL_FLOW) >= 5


@control_flow_cases
@pytest.mark.parametrize("seed", (0, 1))
def test_inputs_are_small_and_give_a_scalar(program, seed):
    args = _args(program, seed)
    for arg in args:
        assert type(arg) in (float, int) or (isinstance(arg, np.ndarray)
                                             and arg.dtype == np.float64 and arg.size <= 30)
    value = program.fn(*args)
    assert np.ndim(value) == 0 and np.isfinite(value)


@control_flow_cases
@pytest.mark.parametrize("seed", FINITE_DIFFERENCE_SEEDS)
def test_gradient_matches_finite_differences(program, seed):
    check_against_finite_differences(program.fn, _args(program, seed), wrt=program.wrt)


@control_flow_cases
@pytest.mark.parametrize("seed", (0, 1))
def test_value_and_grad_agree_with_function_and_grad(program, seed):
    args = _args(program, seed)
    value, gradients = ad.value_and_grad(program.fn, wrt=program.wrt)(*args)
    np.testing.assert_allclose(value, program.fn(*args), rtol=1e-12, atol=0)
    _assert_same_as_grad(program, gradients, args)


def _assert_same_as_grad(program, gradients, args) -> None:
    expected = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args))
    for ours, theirs in zip(_as_tuple(program, gradients), expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


@control_flow_cases
@pytest.mark.parametrize("seed", (2, 3))
def test_unoptimized_derivative_gives_the_same_gradients(program, seed):
    args = _args(program, seed)
    fast = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt)(*args))
    plain = _as_tuple(program, ad.grad(program.fn, wrt=program.wrt, optimize=False)(*args))
    for a, b in zip(fast, plain, strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@control_flow_cases
@pytest.mark.parametrize("seed", (3, 4))
def test_inputs_are_not_modified(program, seed):
    # Element updates (``out[i] = ...``) and in-place loops must never write through to an input.
    args = _args(program, seed)
    originals = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    for arg in args:
        if isinstance(arg, np.ndarray):
            arg.setflags(write=False)
    _, gradients = ad.value_and_grad(program.fn, wrt=program.wrt)(*args)
    for arg, original in zip(args, originals, strict=True):
        np.testing.assert_array_equal(arg, original)
    _assert_same_as_grad(program, gradients, originals)
