"""Programs the random-program fuzzer (``tests/api/test_random_programs.py``) found a bug with.

Each is the smallest program we could make that showed the bug, checked the
way the fuzzer checks every program (``tests/fuzz/checks.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.fuzz.checks import check_program
from tests.fuzz.programs import Program


def _check(user_module, source: str, **args) -> None:
    module = user_module(source)
    check_program(Program(source, list(args), list(args.values()), tuple(
        i for i, a in enumerate(args.values()) if not isinstance(a, int))), module)


def test_same_expression_twice_then_augmented(user_module):
    # Two equal expressions were built as one value, so 'h += x' looked like an update of
    # an array that 'u' also names, and was rejected.
    _check(user_module, """
import numpy as np


def f(x):
    h = np.sin(x)
    u = np.sin(x)
    h += x
    return np.sum(np.array([0.6, 1.1, 1.4]) * u) + np.mean(h)
""", x=np.array([0.3, -0.7, 1.1]))


def test_index_by_a_list_of_ints(user_module):
    # x[[0, 2, 0]] (rows 0, 2 and 0) was compiled as x[0, 2, 0] (one element).
    _check(user_module, """
import numpy as np


def f(x, i):
    return np.sum(np.sin(x[[0, 2, 0]]) * x[[-1, i], 1:].sum(axis=0))
""", x=np.array([[0.3, -0.7], [1.1, 0.4], [-0.2, 0.9]]), i=1)


def test_variable_rebound_after_a_branch_that_computed_it(user_module):
    # The tanh value of 'z', which the backward sweep reads in the branch, and the new 'z'
    # after the branch shared one variable: the backward read '2.0 * z' instead.
    _check(user_module, """
import numpy as np


def f(x):
    if x[0] < 0.5:
        z = x
    else:
        z = np.tanh(x)
    z = 2.0 * z
    return np.sum(z * z)
""", x=np.array([0.8, -0.3]))


def test_update_in_place_of_rows_taken_by_a_list_of_ints(user_module):
    # x[[0, 2]] is a copy, yet 'rows *= 2.0' and 'out[0] = ...' on it were rejected as
    # updates of a possible view of x.
    _check(user_module, """
import numpy as np


def f(x):
    rows = x[[0, 2]]
    rows *= 2.0
    out = x[[1, 1], 1:]
    out[0] = np.sin(out[1])
    return np.sum(rows * rows) + np.sum(out * x[0, 1:])
""", x=np.array([[0.3, -0.7], [1.1, 0.4], [-0.2, 0.9]]))


def test_update_in_place_of_the_array_a_loop_runs_over(user_module):
    # 'p += row' inside 'for row in p' changes the rows later trips read; it was compiled
    # as 'p = p + row' over the rows p had before the loop: a wrong value, silently.
    module = user_module("""
import numpy as np


def f(x):
    p = 2.0 * x
    for row in p:
        p += row
    return np.sum(p * p)
""")
    with pytest.raises(ad.AutodiffError, match="which an enclosing 'for' loop runs over"):
        ad.grad(module.f)(np.array([[0.3, -0.7], [1.1, 0.4]]))


def test_break_out_of_a_reversed_range(user_module):
    # The backward sweep of 'for i in reversed(range(2))' that broke after one trip ran over
    # the first index (0) instead of the one the loop ran (1): 'pop from empty list' here,
    # a wrong gradient in the next test.
    _check(user_module, """
import numpy as np


def f(w, c):
    h = w
    for i in reversed(range(2)):
        if i == 0:
            h = h * np.cos(h)
        if c < 0.5:
            break
    return np.sum(h)
""", w=np.array([-0.28, 0.36]), c=0.2)


def test_break_out_of_a_reversed_range_writing_rows(user_module):
    # Same bug, silent: the gradient of the row written (1) was taken from row 0.
    _check(user_module, """
import numpy as np


def f(w, n):
    buf = np.zeros((2, 2))
    for i in reversed(range(2)):
        buf[i] = np.sin(w)
        if n == 1:
            break
    return np.sum(buf * np.array([[1.0, 2.0], [3.0, 4.0]]))
""", w=np.array([0.3, -0.4]), n=1)


def test_loop_variable_that_starts_as_an_argument_is_not_updated_in_place(user_module):
    # With jit=True the inner loop wrote 'h + np.var(b)' into h's own storage, which on the
    # first trip is the caller's x; every trip's value on the tape was that one array, so
    # the gradient was wrong too. (The loop's variable was thought an array of its own
    # because the value after the loop is read twice, and that skipped the check.)
    _check(user_module, """
import numpy as np


def f(x, b, c, n):
    h = x
    while np.sum(b) < 0.0:
        for r in b:
            h = np.tanh(h + np.var(b))
        if n == 0:
            h = np.tanh(h + c)
        return np.sum(h)
    return np.sum(h)
""", x=np.array([-0.38, 0.61, -0.53]), b=np.array([-1.08, -0.93, 0.36]), c=np.array(1.16), n=0)


@pytest.mark.parametrize("body", [
    "states.append(h)\n        h = h + 1.0",
    "states.append(h)\n        h = np.tanh(h * x)",
    "states.append(h * 1.0)\n        states.append(h)\n        h = 0.5 * h",
    "states = states + [h]\n        h = h - x",
])
def test_array_appended_to_a_list_is_not_updated_in_place(user_module, body):
    # jit=True wrote 'h + 1.0' into h's storage after appending h to the list ('h += 1.0'),
    # so every item of the list became the last h: a wrong value and gradient, silently.
    _check(user_module, f"""
import numpy as np


def f(x):
    h = np.sin(x)
    states = [h]
    for i in range(3):
        {body}
    return np.sum(np.stack(states) ** 2) + np.sum(h)
""", x=np.array([0.61, -1.03]))


def test_tangent_of_a_copy_appended_to_a_list(user_module):
    # Forward mode: the tangent of np.copy(buf) is buf's own tangent; it was appended to the
    # list of tangents and then updated in place by 'buf[i] = ...', changing the item.
    _check(user_module, """
import numpy as np


def f(x, c):
    buf = np.mean(np.stack([x]), axis=0)
    states = []
    for i in range(2):
        states.append(np.copy(buf))
        buf[i] = np.tanh(c)
    return np.sum(states[-1] * np.array([[1.36, 1.04], [0.8, 0.92]]))
""", x=np.array([[0.61, -1.03], [-1.18, -0.13]]), c=np.array([-1.13, 0.21]))


@pytest.mark.parametrize("expression", [
    "[x, y] + [x * y]", "[x * y] * 3", "2 * [np.sin(x)] + [y]", "[x] + [np.ones(2)] + [y]",
])
def test_lists_joined_and_repeated(user_module, expression):
    # '[x, y] + [x * y]' was differentiated as NumPy's x + y: a broadcasting error at run
    # time, and for two lists built by loops, a wrong gradient.
    _check(user_module, f"""
import numpy as np


def f(x, y):
    parts = {expression}
    return np.sum(np.stack(parts) ** 2)
""", x=np.array([0.61, -1.03]), y=np.array([0.2, 0.5]))


@pytest.mark.parametrize("update", ["states = states + [h]", "states += [h, 2.0 * h]"])
def test_list_grown_by_plus_in_a_loop(user_module, update):
    _check(user_module, f"""
import numpy as np


def f(x):
    h = np.sin(x)
    states = []
    for r in x:
        {update}
        h = np.tanh(h * r)
    return np.sum(np.stack(states) ** 2) + np.sum(h)
""", x=np.array([0.61, -1.03, 0.3]))


def test_two_lists_built_at_run_time_joined(user_module):
    _check(user_module, """
import numpy as np


def f(x):
    a = []
    b = []
    for r in x:
        a.append(r * r)
        b.append(np.sin(r))
    return np.sum(np.stack(a + b))
""", x=np.array([0.61, -1.03]))


def test_view_saved_for_the_backward_sweep_is_not_updated_in_place(user_module):
    # The backward sweep of 'out[..., None] @ c' keeps the view out[..., None]; 'out[1] = ...'
    # then wrote into out in place, and the sweep read the new row: a wrong gradient.
    _check(user_module, """
import numpy as np


def f(x, c):
    out = x.copy()
    hs = [x]
    for i in range(2):
        hs.append(out[..., None] @ c[:1])
        out[i + 1] = np.sin(c)
    return np.sum(np.stack(hs) * np.arange(12.0).reshape(3, 4, 1))
""", x=np.array([[0.41, -1.18], [-0.23, 0.06], [-0.58, -0.83], [-0.68, -1.13]]),
           c=np.array([1.01, -1.03]))


def test_loop_variable_named_like_a_temporary_in_forward_mode(user_module):
    # The forward mode wrote 't1 = len(x)', then set the loop's variable 't1' (the user's)
    # from w, and only then read 'range(t1)': the loop ran w times, or failed for a float.
    _check(user_module, """
import numpy as np


def f(w, x):
    t1 = w
    for r in x:
        t1 = t1 * np.cos(r) + w
    return t1
""", w=0.4, x=np.array([0.3, -0.5]))


def test_gradient_of_a_helper_with_nested_branches(user_module):
    # Reverse over reverse: the helper's backward 'if' reads the values of its forward
    # branch; the adjoints those values get were passed into the branch, but not on to
    # the 'if' nested in it, and were lost: a wrong gradient, silently.
    _check(user_module, """
import numpy as np

import autodiff as ad


def cell(h):
    if h[0] < 1.0:
        if h[0] < 0.03:
            c = h[0]
        else:
            c = h[2] * h[1]
    else:
        c = h[1]
    return c * c


def f(b):
    return np.sum(np.sin(ad.grad(cell)(b)))
""", b=np.array([0.06, -1.03, 0.86]))


def test_gradient_of_a_helper_with_branches_called_in_a_loop(user_module):
    # The condition of the ternary, defined in the branch of the helper's 'if' and read
    # again by the helper's backward 'if', was popped from the tape in the backward of
    # the first branch, after the backward of the second had read it.
    _check(user_module, """
import numpy as np

import autodiff as ad


def cell(h, c=0.5):
    if c < 1.0:
        c = np.cos(h[0] * c) if np.tanh(c) < 0.3 else h[2] * h[1]
    return c * c


def f(b, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(ad.grad(cell)(b)))
    return s
""", b=np.array([0.06, -1.03, 0.86]), n=2)


def test_gradient_of_a_helper_whose_branch_has_no_backward_in_a_loop(user_module):
    # A value of a branch with no backward block (nothing in it to differentiate) was to
    # be popped there: a KeyError while compiling.
    _check(user_module, """
import numpy as np

import autodiff as ad


def cell(h, c):
    if h > 1.2:
        tmp = h * h
    elif h > -0.5:
        tmp = h
    else:
        tmp = h * c
    return tmp


def f(x, y):
    tmp = y
    for r in x:
        tmp = tmp * np.cos(r + np.tanh(ad.grad(cell)(y, tmp)))
    return tmp
""", x=np.array([0.3, -0.4]), y=-0.48)


def test_gradient_of_value_and_grad_through_elif(user_module):
    # Reverse over reverse: the value 'x[2] @ ...' of the innermost branch got an adjoint
    # from the backward 'if'; where the branch did not run, that adjoint was zeros shaped
    # like the value, which did not exist there (an UnboundLocalError).
    source = """
import numpy as np

import autodiff as ad


def f(y, n, x, W, k):
    if np.copy(y.sum(axis=(0, 1))) > 2.410:
        ans = np.cos(x)
    elif np.sum(x * 0) + k != 0:
        ans = np.prod(1 + 0.5 * np.sin(x), axis=1, keepdims=True)
    else:
        ans = x[2] @ (x / (1.5 + np.sin(y)))
    if np.min(ans) < 0.373:
        a = W[..., 1:] / (1 + y[1] * y[1])
    else:
        a = np.log(1 + y * y)
    if np.sum(x * 0) + k != 1:
        u = np.matmul(x.sum(axis=-1, keepdims=True), np.mean(x, axis=(0, 2)))
    else:
        u = x[..., 1:].sum(axis=2)
    if np.sum(y * 0) + k < 0:
        return min(ans.max(), np.amax(ans))
    if k != 2:
        return np.tanh(np.dot(sum(r / (1 + r * r) for r in u), u[k - 1]))
    return np.sum(np.array([[1.27], [1.13], [1.08]]) * u) + np.mean(a)


f_value_and_grad = ad.value_and_grad(f, wrt=0)


def f2(y, n, x, W, k):
    value, gradient = f_value_and_grad(y, n, x, W, k)
    return value + np.sum(np.sin(gradient))
"""
    args = {"y": np.array([[0.9635, 1.0635], [0.7660, -0.3334]]), "n": 2,
                "x": np.array([[[0.5128, -0.4393]], [[-1.1340, -0.2850]], [[1.1134, -0.5886]]]),
                "W": np.array([[0.7134, -0.6366], [-0.3857, -0.7372]]), "k": 1}
    check_program(Program(source, list(args), list(args.values()), (0, 2, 3),
                          composition="grad of value_and_grad"), user_module(source))


def test_gradient_of_value_and_grad_with_a_while_loop_appending(user_module):
    # The second-order sweep built the adjoint of the list 'hs' as the first-order sweep
    # it differentiates had (list_adjoint of the same operands), and the two were merged
    # into one list: both sweeps popped it ('pop from empty list')
    source = """
import math

import numpy as np

import autodiff as ad

WEIGHTS = np.array([0.93, 1.06, 0.76])


def cell(h, v):
    h = math.exp(0.3 * h) if h < 0.000 else max(v, h)
    return np.broadcast_to(h, (3,))[..., -3]


def make_mix(gain, offset):
    return lambda h: np.tanh(ad.grad(cell)(gain, np.log(1 + offset * offset)))


mix = make_mix(0.5, 0.5)


dcell = ad.grad(cell)


def f(c, x, n, W, k):
    def inner(h, v):
        feature = x[::-1]
        return np.array([c, c, c])
    tmp = np.log(1 + W[..., ::-1] * W[..., ::-1])
    rows = []
    for i in range(3):
        row = []
        for j in range(3):
            row.append(math.exp(0.3 * c))
        rows.append(row)
    e = np.array(rows)
    score = np.copy(tmp)
    count = 0
    hs = []
    while count < 2:
        count += 1
        s = inner(inner(score, W), v=tmp)
        score = np.tanh(score + np.ravel(np.max(x, axis=0, keepdims=True)))
        hs.append(inner(score[..., ::-1], np.tanh(np.dot(W, e))))
        u = c / (1.5 + np.sin(c))
    state = np.sum(np.stack(hs), axis=0)
    return np.sum(WEIGHTS * state) + np.mean(score)


f_value_and_grad = ad.value_and_grad(f, wrt=0)


def f2(c, x, n, W, k):
    value, gradient = f_value_and_grad(c, x, n, W, k)
    return value + np.sum(np.sin(gradient))
"""
    args = {"c": -0.738814660184833,
                "x": np.array([[-0.08706470684110654, 1.1658525374258382, -0.4859553765324012],
                            [-0.4359416016051383, 0.2163796485850637, 1.0160885669534159]]),
                "n": 0, "W": np.array([-0.5359242801197031, 0.5110274469015135, 1.2130497928366437]),
                "k": 3}
    check_program(Program(source, list(args), list(args.values()), (0, 3),
                          composition="grad of value_and_grad"), user_module(source))


def test_a_loops_value_read_for_its_shape_is_not_read_through_its_shape(user_module):
    # The outer loop's h was read by the backward sweep for its shape alone, so its shape
    # was taped; h[1:], recomputed in the backward sweep from h's stand-in, became a slice
    # of that shape tuple: a wrong shape where its adjoint was summed back.
    _check(user_module, """
import math

import numpy as np

WEIGHTS = np.array([1.31, 0.82, 0.65])


def f(ws, x, n, k, y, b):
    h = y
    buf = h.copy()
    for i in range(1):
        z = np.where(0.2 * k * h[1:] > np.array([np.mean(r + np.prod(1 + 0.5 * np.sin(ws["v"]), axis=0)) for r in ws.values()]), 0.2 * k * h[1:], 2.0 * np.array([np.mean(r + np.prod(1 + 0.5 * np.sin(ws["v"]), axis=0)) for r in ws.values()]))
        if k < 1:
            h = h + 0.5 * np.tanh(sum(r / (1 + np.sqrt(1 + r ** 2) * np.sqrt(1 + r ** 2)) for r in y))
        buf[i] = np.sin(np.tanh(np.sum([r / (1 + np.dot(h, h) * np.dot(h, h)) for r in z])))
        if i < 3:
            z = z
            g = b
        else:
            g = np.sum(b - b, axis=-2, keepdims=True)
        states = []
        out = z.copy()
        for j in range(1):
            h = np.tanh(0.5 * h + np.logaddexp(np.amax(h, axis=0, keepdims=True), ws["u"] @ h))
            acc = np.tanh(np.sum([r / (1 + r * r) for r in z])) if i > 2 else sum(r * r for r in y)
            states.append(ws["u"])
            acc += acc
            out[j] = np.tanh(acc)
        tmp = np.mean(np.stack(states), axis=0)
    table = buf.copy()
    for i in range(0):
        if i == 1:
            val = np.array([np.mean(r / (1.5 + np.sin(y))) for r in x])
            state = y[[0, -1]].copy()
        else:
            state = -buf[[2, 2]]
        s = np.minimum(h, y)
        if np.sum(s * 0) + i == 2:
            h = h * np.cos(np.tanh(np.sum([r - np.tanh(np.dot(buf, buf)) for r in table])))
        state += np.logaddexp(np.amax(h, axis=0, keepdims=True), ws["u"] @ h)
        table[i] = np.sin(np.dot(np.matmul(x, y), x[:, i - 1]))
        if np.tanh(np.sum([r / (1.5 + np.sin(r)) for r in table])) > 0.000:
            return np.copy(s[..., 0])
        v18 = np.zeros((1, 3))
        for j in reversed(range(1)):
            h = h * np.cos(np.tanh(np.sum([r - np.tanh(np.dot(buf, buf)) for r in table])))
            if not np.tanh(np.matmul(buf, s)) < 0.000:
                t1 = b[j]
            else:
                t1 = np.where(np.squeeze(v18, axis=0) > v18.mean(axis=(0, 1), keepdims=True), np.squeeze(v18, axis=0), 2.0 * v18.mean(axis=(0, 1), keepdims=True))
            v18[j] = np.tanh(sum(r / (1 + np.sqrt(1 + r ** 2) * np.sqrt(1 + r ** 2)) for r in y))
    return np.sum(WEIGHTS * table) + np.mean(h)
""", ws={"u": np.array([[1.114944973404023, -0.639292801898479, -1.086279816206678]]),
           "v": np.array([[0.21332000231305392, 1.1619195170166876, -1.1873503441325466]])},
           x=np.array([[0.9147601361109865, -0.9389351837222517, -0.6859664232984757]]),
           n=0, k=2, y=np.array([-0.1876712903728194, -0.28402209295999054, -0.3389147133761269]),
           b=np.array([[[-0.0852249108018718, 0.11592053101396503, 0.7620639111509655]],
                       [[1.216072689436485, -0.434066827191854, 0.06081110330602127]]]))
