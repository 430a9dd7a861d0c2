"""The names JAX users reach for: ``argnums=``, ``jacrev``/``jacfwd``, and a hint for
the spellings autodiff has no object for."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import central_difference


def f(x, y):
    return np.sum(np.sin(x) * y ** 2)


X, Y = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -0.7])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), "y"])
def test_argnums_is_wrt(argnums):
    ours = ad.grad(f, argnums=argnums)(X, Y)
    np.testing.assert_array_equal(ours, ad.grad(f, wrt=argnums)(X, Y))
    for position, gradient in zip(argnums if isinstance(argnums, tuple) else (argnums,),
                                  ours if isinstance(argnums, tuple) else (ours,)):
        index = {"y": 1}.get(position, position)
        np.testing.assert_allclose(gradient, central_difference(f, [X, Y], index), rtol=1e-6)


def test_every_transform_takes_argnums():
    value, gradient = ad.value_and_grad(f, argnums=1)(X, Y)
    assert value == f(X, Y)
    np.testing.assert_array_equal(gradient, ad.grad(f, wrt=1)(X, Y))
    np.testing.assert_array_equal(ad.hessian(f, argnums=1)(X, Y), ad.hessian(f, wrt=1)(X, Y))
    np.testing.assert_array_equal(ad.hvp(f, argnums=1)(X, Y, np.ones(3)),
                                  ad.hvp(f, wrt=1)(X, Y, np.ones(3)))
    np.testing.assert_array_equal(ad.jacobian(f, argnums=0)(X, Y), ad.grad(f)(X, Y))

    @ad.grad(argnums=1)
    def decorated(x, y):
        return np.sum(np.sin(x) * y ** 2)

    np.testing.assert_array_equal(decorated(X, Y), ad.grad(f, wrt=1)(X, Y))


def test_jacrev_and_jacfwd_are_the_two_modes_of_jacobian():
    def g(x):
        return np.tanh(x) * x[0]

    expected = ad.jacobian(g)(X)
    np.testing.assert_allclose(ad.jacrev(g)(X), expected, rtol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(g)(X), expected, rtol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(f, argnums=1)(X, Y), ad.grad(f, wrt=1)(X, Y))


def test_wrt_and_argnums_together_are_refused():
    with pytest.raises(ad.WrtError, match="takes wrt= or argnums= .*, not both") as info:
        ad.grad(f, wrt=0, argnums=1)
    assert "hint: grad(f, wrt=...)" in str(info.value)


@pytest.mark.parametrize("name, hint", [("custom_vjp", "ad.custom_grad"),
                                        ("vmap", "broadcasting"),
                                        ("tree_map", "ad.tree.map")])
def test_jax_spellings_get_a_hint(name, hint):
    with pytest.raises(AttributeError, match=f"no attribute '{name}': use .*{hint}"):
        getattr(ad, name)
