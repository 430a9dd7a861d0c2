"""Table-driven gradient checks: one line per case, one shared check.

Each case is an expression in ``x`` (and ``y``) with input shapes, an optional
domain and an optional second-order marker (``NoSecondOrder`` for an op that
cannot be differentiated twice); the checked function is ``np.sum(w * (expr))``
with random weights ``w`` of the result's shape, so every output element gets its
own weight. The check covers reverse and forward mode and the second derivatives
(see ``tests.helpers.check_against_finite_differences``), and the derivative
specialised for the arguments' shapes (``jit=True``) against the general one. A
table may ask for more routes: ``"sympy"`` (SymPy's derivative of the same
function) and ``"numba"`` (``jit="numba"``, when numba is installed).

The functions of a table are written once per session (``shared_module``), so that
test_registry.py walks the very derivatives the checks built.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect

import numpy as np
import pytest

import autodiff as ad
from autodiff.graph.ir import walk
from tests.helpers import (
    GENERATED,
    UserModules,
    check_against_finite_differences,
    derivatives_of,
    random_array,
)


def signatures(cases) -> tuple:
    """What the functions of ``cases`` depend on: (expression, number of inputs) each."""
    return tuple((case[0], len(case[1])) for case in cases)


def build_module(directory, signatures: tuple, preamble: str = "",
                 complex_values: bool = False) -> object:
    """The functions of a table: ``value_i``, the expression, and ``loss_i``, its sum
    weighted by ``w`` (with ``complex_values``, the real part of that sum, for complex
    weights: a real loss of complex values)."""
    lines = ["import math", "import numpy as np", "", preamble, ""]
    loss = "np.sum(np.real(w * ({})))" if complex_values else "np.sum(w * ({}))"
    for index, (expr, arity) in enumerate(signatures):
        params = "x, y" if arity == 2 else "x"
        lines += [f"def value_{index}({params}):", f"    return {expr}", "",
                  f"def loss_{index}({params}, w):", f"    return {loss.format(expr)}", ""]
    return UserModules(GENERATED)("\n".join(lines))


@functools.cache
def shared_module(signatures: tuple, preamble: str = "", complex_values: bool = False) -> object:
    """The module of a table's functions, built once per session."""
    return build_module(GENERATED, signatures, preamble, complex_values)


def check_case(module, cases, index: int, seed: int = 0, routes: tuple = (),
               complex_values: bool = False) -> None:
    """Check case ``index``; with ``complex_values`` (a table of complex functions) its
    inputs are complex unless its domain says otherwise, and so are the weights."""
    _, shapes, *rest = cases[index]
    domain = rest[0] if rest else "complex" if complex_values else "real"
    rng = np.random.default_rng(seed + index)
    args = [random_array(rng, shape, domain) for shape in shapes]
    out_shape = np.shape(getattr(module, f"value_{index}")(*args))
    weights = rng.uniform(0.5, 1.5, size=out_shape)
    if complex_values:
        weights = weights + 1j * rng.uniform(0.5, 1.5, size=out_shape)
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    marker = rest[1] if len(rest) > 1 else True
    loss = getattr(module, f"loss_{index}")
    ours = check_against_finite_differences(loss, [*args, weights], wrt=wrt,
                                            second_order=marker)
    check_routes(loss, [*args, weights], wrt, ours, ("jit", *routes))


def check_routes(loss, args: list, wrt, ours: tuple, routes: tuple) -> None:
    """The other routes to the same gradients agree with ``ours`` (already checked)."""
    names = inspect.signature(loss).parameters
    shapes = {name: np.shape(arg) for name, arg in zip(names, args) if np.ndim(arg)}
    derivatives = {"jit": lambda: ad.grad(loss, wrt=wrt, jit=True),
                   "numba": lambda: ad.grad(loss, wrt=wrt, jit="numba"),
                   "sympy": lambda: ad.symbolic_grad(loss, wrt=wrt, shapes=shapes)}
    for route in routes:
        if route == "numba" and importlib.util.find_spec("numba") is None:
            continue
        theirs = derivatives[route]()(*args)
        for got, expected in zip(theirs if isinstance(wrt, tuple) else (theirs,), ours):
            assert np.shape(got) == np.shape(expected), route
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=route)


def case_ids(cases) -> list[str]:
    return [f"{c[0]}-{c[1]}" for c in cases]


def table_test(cases, seed: int, preamble: str = "", routes: tuple = (),
               complex_values: bool = False):
    """A parametrized test checking every case of ``cases``; one user module per table,
    whose source starts with ``preamble`` (functions the cases may call), over the
    extra ``routes`` (see :func:`check_routes`); ``complex_values``: a table of complex
    functions (see :func:`check_case`)."""

    @pytest.mark.parametrize("index", range(len(cases)), ids=case_ids(cases))
    def test(index):
        check_case(shared_module(signatures(cases), preamble, complex_values), cases, index,
                   seed=seed, routes=routes, complex_values=complex_values)

    return test


def ops_reached(cases, preamble: str = "", complex_values: bool = False) -> set[str]:
    """The names of the ops the derivatives a table's checks build go through (each
    family's test that its ops, and their rules, are reached by a case)."""
    module = shared_module(signatures(cases), preamble, complex_values)
    seen = set()
    for index, (_, arity) in enumerate(signatures(cases)):
        loss = getattr(module, f"loss_{index}")
        for derivative in derivatives_of(loss, arity + 1, (0, 1) if arity == 2 else 0,
                                         complex_values):
            for name in ("original_graph", "graph"):
                graph = getattr(derivative, name, None)
                if graph is not None:
                    seen.update(node.op.name for node in walk(graph.nodes)
                                if hasattr(node, "op"))
    return seen
