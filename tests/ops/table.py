"""Table-driven gradient checks: one line per case, one shared check.

Each case is an expression in ``x`` (and ``y``) with input shapes, an optional
domain and an optional second-order marker (``NoSecondOrder`` for an op that
cannot be differentiated twice); the checked function is ``np.sum(w * (expr))``
with random weights ``w`` of the result's shape, so every output element gets its
own weight. The check covers reverse and forward mode and the second derivatives
(see ``tests.helpers.check_against_finite_differences``).

The functions of a table are written once per session (``shared_module``), so that
test_registry.py walks the very derivatives the checks built.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.helpers import GENERATED, UserModules, check_against_finite_differences, random_array


def signatures(cases) -> tuple:
    """What the functions of ``cases`` depend on: (expression, number of inputs) each."""
    return tuple((case[0], len(case[1])) for case in cases)


def build_module(directory, signatures: tuple, preamble: str = "") -> object:
    lines = ["import math", "import numpy as np", "", preamble, ""]
    for index, (expr, arity) in enumerate(signatures):
        params = "x, y" if arity == 2 else "x"
        lines += [f"def value_{index}({params}):", f"    return {expr}", "",
                  f"def loss_{index}({params}, w):", f"    return np.sum(w * ({expr}))", ""]
    return UserModules(GENERATED)("\n".join(lines))


@functools.cache
def shared_module(signatures: tuple, preamble: str = "") -> object:
    """The module of a table's functions, built once per session."""
    return build_module(GENERATED, signatures, preamble)


def check_case(module, cases, index: int, seed: int = 0) -> None:
    _, shapes, *rest = cases[index]
    domain = rest[0] if rest else "real"
    rng = np.random.default_rng(seed + index)
    args = [random_array(rng, shape, domain) for shape in shapes]
    out_shape = np.shape(getattr(module, f"value_{index}")(*args))
    weights = rng.uniform(0.5, 1.5, size=out_shape)
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    marker = rest[1] if len(rest) > 1 else True
    check_against_finite_differences(getattr(module, f"loss_{index}"), [*args, weights], wrt=wrt,
                                     second_order=marker)


def case_ids(cases) -> list[str]:
    return [f"{c[0]}-{c[1]}" for c in cases]


def table_test(cases, seed: int, preamble: str = ""):
    """A parametrized test checking every case of ``cases``; one user module per table,
    whose source starts with ``preamble`` (functions the cases may call)."""

    @pytest.mark.parametrize("index", range(len(cases)), ids=case_ids(cases))
    def test(index):
        check_case(shared_module(signatures(cases), preamble), cases, index, seed=seed)

    return test
