"""The cyclic garbage collector is paused while a derivative compiles, and left as the
caller had it once the compilation ends, however it ends."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import autodiff as ad
from autodiff.codegen import derivative as derivative_module
from autodiff.codegen.derivative import compiling


def _square_sum(x):
    return np.sum(x * x)


def _watched(monkeypatch) -> list[bool]:
    """Whether the collector ran, seen at each generation of code."""
    seen = []
    generate = derivative_module.generate

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return generate(*args, **kwargs)

    monkeypatch.setattr(derivative_module, "generate", watched)
    return seen


@pytest.fixture
def collector():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_while_compiling_and_running_after(monkeypatch, collector):
    seen = _watched(monkeypatch)
    gc.enable()
    gradient = ad.grad(lambda x: np.sum(np.sin(x) * x))
    assert seen == [False]
    assert gc.isenabled()
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(gradient(x), np.sin(x) + x * np.cos(x))


def test_left_off_when_the_caller_turned_it_off(monkeypatch, collector):
    seen = _watched(monkeypatch)
    gc.disable()
    ad.grad(lambda x: np.sum(np.cos(x)))
    assert seen == [False]
    assert not gc.isenabled()


def test_running_again_after_a_refusal(collector):
    gc.enable()

    def no_return(x):
        y = x * 2  # noqa: F841

    with pytest.raises(ad.AutodiffError):
        ad.grad(no_return)
    assert gc.isenabled()


def test_nested_compilations_resume_it_once_at_the_end(collector):
    gc.enable()
    with compiling:
        with compiling:
            assert not gc.isenabled()
        assert not gc.isenabled()  # (the outer one is still compiling)
    assert gc.isenabled()


def test_a_derivative_inside_the_code_compiles_with_it(monkeypatch, collector):
    """``ad.grad`` called in differentiated code builds its derivative while the outer
    one compiles; the collector runs again only when the outer one is done."""
    seen = _watched(monkeypatch)
    gc.enable()

    def outer(x):
        return np.sum(ad.grad(_square_sum)(x) * x)

    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(ad.grad(outer)(x), 4.0 * x)
    assert seen and not any(seen)
    assert gc.isenabled()
