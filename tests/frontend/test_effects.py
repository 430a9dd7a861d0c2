"""print, logging, warnings and assert inside a differentiated function: run in the
forward sweep where they were written, never differentiated; a library's function
called for its effect runs too, but a value carrying a gradient reaching it is
refused, and so is a method of a computed array (it may change it in place)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import autodiff as ad

logger = logging.getLogger("autodiff.tests.effects")
rng = np.random.default_rng(5)


def printed_loss(W, x):
    h = np.tanh(x @ W)
    for step in range(2):
        # every way of formatting, as people write them
        print(f"step {step}: {np.sum(h):.3f}", "mean %.2f" % np.mean(h),  # noqa: UP031
              "{:.1f}".format(step), str(np.max(h) > 0))  # noqa: UP032
        h = h * 1.5
    return np.sum(h ** 2)


def logged_loss(params, x):
    h = np.tanh(x @ params["W"])
    logger.info("loss %s of %s", np.sum(h), params)
    logging.debug("not shown")  # noqa: LOG015
    warnings.warn(f"activation {np.max(h):.2f}")
    return np.sum(h ** 2)


def _report(h):
    print("helper sees", h.shape)


def checked_loss(W, x):
    assert W.shape[0] == x.shape[1], "W takes the rows of x"
    h = np.tanh(x @ W)
    assert np.all(np.abs(h) <= 1.0)
    _report(h)
    return np.sum(np.sin(h))


def _inputs():
    return rng.normal(size=(3, 2)) * 0.3, rng.normal(size=(4, 3))


def test_print_runs_once_per_step_and_changes_no_derivative(capsys):
    W, x = _inputs()
    expected = ad.numeric_grad(printed_loss, W, x)
    capsys.readouterr()
    for jit in (False, True):
        np.testing.assert_allclose(ad.grad(printed_loss, jit=jit)(W, x), expected,
                                   rtol=1e-6, atol=1e-9)
        lines = capsys.readouterr().out.splitlines()
        h = np.tanh(x @ W)
        big = np.max(h) > 0
        assert lines == [f"step 0: {np.sum(h):.3f} mean {np.mean(h):.2f} 0.0 {big}",
                         f"step 1: {np.sum(1.5 * h):.3f} mean {np.mean(1.5 * h):.2f} 1.0 {big}"]
    direction = rng.normal(size=W.shape)
    _, along = ad.jvp(printed_loss)(W, x, direction)
    assert along == pytest.approx(np.sum(expected * direction), rel=1e-6)
    hessian = ad.hessian(printed_loss)(W, x)
    column = (ad.numeric_grad(printed_loss, W + 1e-5 * direction, x)
              - ad.numeric_grad(printed_loss, W - 1e-5 * direction, x)) / 2e-5
    np.testing.assert_allclose(np.tensordot(hessian, direction, 2), column, rtol=1e-4,
                               atol=1e-6)
    source = ad.grad(printed_loss).source
    # once, in the loop, where it was written
    assert [line.strip()[:6] for line in source.splitlines()].count("print(") == 1


def test_logging_and_warnings_run_as_written(caplog):
    params, x = {"W": _inputs()[0]}, _inputs()[1]
    with caplog.at_level(logging.INFO, logger="autodiff.tests.effects"), pytest.warns(
            UserWarning, match=r"activation -?\d\.\d\d"):
        got = ad.grad(logged_loss)(params, x)
    assert [r.getMessage().startswith("loss ") and "'W': array(" in r.getMessage()
            for r in caplog.records] == [True]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ad.numeric_grad(logged_loss, params, x)["W"]
    np.testing.assert_allclose(got["W"], expected, rtol=1e-6, atol=1e-9)


def warned(x):
    if np.sum(x) > 0:
        warnings.warn("positive sum", RuntimeWarning)
    warnings.warn("the caller's line", stacklevel=2)
    return np.sum(x ** 2)


@pytest.mark.parametrize("jit", [False, True])
def test_a_warning_names_the_users_line_or_the_callers(jit):
    gradient = ad.grad(warned, jit=jit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradient(np.ones(2))  # the line stacklevel=2 names
    places = {str(w.message): (w.filename, w.lineno, w.category) for w in caught}
    first = warned.__code__.co_firstlineno
    assert places["positive sum"] == (__file__, first + 2, RuntimeWarning)
    assert places["the caller's line"] == (
        __file__, test_a_warning_names_the_users_line_or_the_callers.__code__.co_firstlineno + 5,
        UserWarning)


def test_assert_is_checked_where_it_was_written(capsys):
    W, x = _inputs()
    np.testing.assert_allclose(ad.grad(checked_loss)(W, x),
                               ad.numeric_grad(checked_loss, W, x), rtol=1e-6, atol=1e-9)
    assert "helper sees (4, 2)" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="W takes the rows of x") as info:
        ad.grad(checked_loss)(W, x[:, :2])
    assert "assert W.shape[0] == x.shape[1]" in str(info.value)


def in_place(W, K):
    np.random.shuffle(K)
    return np.sum(K * W[0])


def sorted_in_place(W, x):
    h = x @ W
    h.sort()
    return np.sum(h)


def test_a_call_for_another_effect_is_refused():
    W, x = _inputs()
    with pytest.raises(ad.NonDifferentiableError, match=r"a call made for its effect is passed "
                       "a value that carries a gradient") as info:
        ad.grad(in_place, wrt=(0, 1))(W, np.zeros(2))
    assert info.value.lineno is not None and "stop_gradient" in info.value.hint
    with pytest.raises(ad.UnsupportedSyntaxError, match=r"'h\.sort\(\)' is called for its effect"):
        ad.grad(sorted_in_place)(W, x)


def branches_that_only_print(x):
    if np.sum(x) > 0:
        print("positive")
    else:
        print("not positive")
    for i in range(2):
        print("step", i)
    return np.sum(x ** 2)


@pytest.mark.parametrize("jit", [False, True])
def test_a_branch_or_a_loop_that_only_prints_runs_as_written(capsys, jit):
    np.testing.assert_allclose(ad.grad(branches_that_only_print, jit=jit)(np.ones(2)), [2.0, 2.0])
    assert capsys.readouterr().out.split("\n") == ["positive", "step 0", "step 1", ""]
    value, tangent = ad.jvp(branches_that_only_print)(-np.ones(2), np.ones(2))
    assert (value, tangent) == (2.0, -4.0)
    assert capsys.readouterr().out.split("\n") == ["not positive", "step 0", "step 1", ""]
