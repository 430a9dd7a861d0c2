"""Whether a gradient is right: compared with the hand-written one before any timing.

A wrong gradient is never timed, and neither is one that changes its inputs,
since every sample calls it again on the same arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RTOL = 1e-9
# Entries near zero are compared to the largest one, not to themselves: their
# rounding differs between equally good orders of summation.
ATOL_SCALE = 1e-12


def same_gradient(expected: Any, actual: Any, rtol: float = RTOL) -> bool:
    """Whether two gradients (single, or tuples or dicts of them) agree to `rtol`.

    >>> same_gradient((1.0, np.ones(2)), (1.0, np.ones(2) + 1e-13))
    True
    >>> same_gradient(np.ones(2), np.ones(3))
    False
    >>> same_gradient({"W": np.ones(2)}, {"W": np.ones(2), "b": 0.0})
    False
    """
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(same_gradient(expected[key], actual[key], rtol) for key in expected)
        )
    if isinstance(expected, tuple):
        return (
            isinstance(actual, (tuple, list))
            and len(actual) == len(expected)
            and all(same_gradient(e, a, rtol) for e, a in zip(expected, actual, strict=True))
        )
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        return False
    atol = ATOL_SCALE * float(np.max(np.abs(expected), initial=0.0))
    return bool(np.allclose(actual, expected, rtol=rtol, atol=atol))


def same_inputs(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    """Whether arguments (arrays, numbers, dicts of them) are unchanged, compared with a
    fresh copy of them.

    >>> same_inputs((np.zeros(2), {"W": 1.0}), (np.zeros(2), {"W": 1.0}))
    True
    """
    return all(map(_same_input, before, after))


def _same_input(before: Any, after: Any) -> bool:
    if isinstance(before, dict):
        return (isinstance(after, dict) and after.keys() == before.keys()
                and all(_same_input(before[key], after[key]) for key in before))
    return bool(np.array_equal(before, after))
