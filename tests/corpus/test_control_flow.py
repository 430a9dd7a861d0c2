"""The control-flow corpus: its size, and gradients on several seeds.

Different seeds take different branches and loop counts, so each program's
gradient is checked against central finite differences on six of them. The
checks shared with the straight-line corpus (value, ``optimize=False``, inputs
untouched, no aliasing, float32) run in ``tests/corpus/test_corpus.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import Program
from tests.helpers import check_against_finite_differences

FINITE_DIFFERENCE_SEEDS = (0, 1, 2, 3, 4, 5)


def _args(program: Program, seed: int = 0) -> list:
    return program.make_args(np.random.default_rng(seed))


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
