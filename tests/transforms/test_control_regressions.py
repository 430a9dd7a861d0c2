"""Programs the control-flow fuzzer (now tests/api/test_random_programs.py) found wrong,
shrunk by hand; each is checked against central finite differences."""

from __future__ import annotations

import numpy as np

from tests.helpers import check_against_finite_differences

SOURCE = """
import numpy as np


def nested_loop_in_while(x, y):
    # A value read for its shape inside a loop nested in a while loop.
    total = np.sum(x)
    h = 0.5
    while total < 2.0:
        total = total + 0.5
        for i in range(2):
            h = h * np.cos(np.sum(np.sin(x)))
        y = y * np.cos(x)
    return np.mean(y) + total + h


def list_through_an_early_return(x, xs, n):
    # The adjoint of a list the loop appends to, when the loop may return early.
    states = [0.5 * x]
    count = 0
    while count < 3:
        count = count + 1
        states.append(xs[count] * x)
        if n > 0:
            return np.sum(np.stack(states))
    return np.sum(np.stack(states)[-1] * x)


def branch_then_zero_trip_while(x, y, n):
    # A value chosen by a branch, then carried by a loop that does not run.
    h = x if n > 0 else y
    k = 0
    while k < n:
        h = h * 2.0
        k = k + 1
    return np.sum(h * x)


def returned_from_a_nested_branch(x):
    # Reverse over reverse: where the return left y unassigned (None), the zero adjoint
    # made like it has shape (), and it was read as the shape of y's adjoints.
    if np.sum(x) > 0.0:
        if np.sum(x) > 1.0:
            return np.sum(np.sin(x))
        y = np.log(x)
    else:
        y = x * 2.0
    return np.sum(y * x)


def carried_from_an_argument(a):
    # The gradient of a loop's initial value and of a value read in the loop.
    y = a
    while abs(y * y - a) > 1e-3:
        y = 0.5 * (y + a / y)
    return y
"""


def test_fuzzer_findings_match_finite_differences(user_module):
    module = user_module(SOURCE)
    rng = np.random.default_rng(7)
    x, y, xs = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(4, 3))
    check_against_finite_differences(module.nested_loop_in_while, [x * 0.1, y], wrt=(0, 1))
    for n in (0, 1):
        check_against_finite_differences(module.list_through_an_early_return, [x, xs, n],
                                         wrt=(0, 1))
        check_against_finite_differences(module.branch_then_zero_trip_while, [x, y, n],
                                         wrt=(0, 1))
    check_against_finite_differences(module.carried_from_an_argument, [26.5])
    for x in ([0.8, 0.4], [0.3, 0.4], [-0.3, -0.4]):
        check_against_finite_differences(module.returned_from_a_nested_branch, [np.array(x)],
                                         second_order=True)
