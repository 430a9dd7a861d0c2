"""Table-driven gradient checks: one line per case, one shared check.

Each case is an expression in ``x`` (and ``y``) with input shapes; the checked
function is ``np.sum(w * (expr))`` with random weights ``w`` of the result's
shape, so every output element gets its own weight.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import UserModules, check_against_finite_differences, random_array


def build_module(directory, cases) -> object:
    lines = ["import math", "import numpy as np", ""]
    for index, case in enumerate(cases):
        params = "x, y" if len(case[1]) == 2 else "x"
        lines += [f"def value_{index}({params}):", f"    return {case[0]}", "",
                  f"def loss_{index}({params}, w):", f"    return np.sum(w * ({case[0]}))", ""]
    return UserModules(directory)("\n".join(lines))


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


def table_test(cases, seed: int):
    """A parametrized test checking every case of ``cases``; one user module per table."""
    built = {}

    @pytest.mark.parametrize("index", range(len(cases)), ids=case_ids(cases))
    def test(index, tmp_path_factory):
        if "module" not in built:
            built["module"] = build_module(tmp_path_factory.mktemp("table"), cases)
        check_case(built["module"], cases, index, seed=seed)

    return test
