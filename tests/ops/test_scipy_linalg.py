"""scipy.linalg's ops against finite differences: cholesky, cho_factor/cho_solve,
solve_triangular, solve, inv, det, expm, logm, sqrtm, solve_sylvester.

Routines reading one triangle of their matrix are checked on matrices that are not
symmetric (or not triangular), so that the entries they ignore are checked to take
no gradient. ``x + 3.0 * np.eye(n)`` with x in the "unit" domain, (-0.9, 0.9), is
diagonally dominant enough to be positive definite in its triangle for n <= 3 and
well conditioned. The refusals of np.linalg's forms with no unique derivative (complex
eigenvalues, full factors of a matrix that is not square, norms whose kind the rank
decides) are checked at the end; their gradients are in tests/ops/test_linalg.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.ops import OPS, Op
from tests.helpers import random_array
from tests.ops.table import (
    case_ids,
    check_routes,
    ops_reached,
    shared_module,
    signatures,
    table_test,
)

linalg = pytest.importorskip("scipy.linalg")

PREAMBLE = "import scipy.linalg"

CASES = [
    # Cholesky: upper by default (reading the upper triangle), lower with lower=True
    ("scipy.linalg.cholesky(x + 3.0 * np.eye(3))", [(3, 3)], "unit"),
    ("scipy.linalg.cholesky(x + 3.0 * np.eye(3), lower=True)", [(3, 3)], "unit"),
    ("scipy.linalg.cholesky(x + 3.0 * np.eye(2), False)", [(2, 2, 2)], "unit"),
    ("scipy.linalg.cho_factor(x + 3.0 * np.eye(3))[0]", [(3, 3)], "unit"),
    ("scipy.linalg.cho_solve(scipy.linalg.cho_factor(x + 3.0 * np.eye(3)), y)",
     [(3, 3), (3,)], "unit"),
    ("scipy.linalg.cho_solve(scipy.linalg.cho_factor(x + 3.0 * np.eye(3), lower=True), y)",
     [(3, 3), (3, 2)], "unit"),
    ("scipy.linalg.cho_solve((x + 3.0 * np.eye(3), True), y)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.cho_solve((x + 3.0 * np.eye(2), False), y)", [(2, 2, 2), (2, 2, 3)], "unit"),
    # triangular solves: each triangle, trans, a unit diagonal, batches and broadcasting
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(3), y)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(3), y, lower=True)", [(3, 3), (3, 2)], "unit"),
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(3), y, trans=1)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(3), y, trans='T', lower=True)",
     [(3, 3), (3, 2)], "unit"),
    ("scipy.linalg.solve_triangular(x, y, lower=True, unit_diagonal=True)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve_triangular(x, y, 2, unit_diagonal=True)", [(3, 3), (3, 2)], "unit"),
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(2), y)", [(2, 2, 2), (2, 2, 3)], "unit"),
    ("scipy.linalg.solve_triangular(x + 3.0 * np.eye(2), y, lower=True)", [(2, 2), (3, 2, 2)],
     "unit"),
    # solve: general, symmetric (one triangle), triangular, transposed
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y, assume_a='gen')", [(3, 3), (3, 2)], "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y, assume_a='pos')", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y, lower=True, assume_a='sym')", [(3, 3), (3, 2)],
     "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y, assume_a='lower triangular')", [(3, 3), (3,)],
     "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(3), y, transposed=True)", [(3, 3), (3,)], "unit"),
    ("scipy.linalg.solve(x + 3.0 * np.eye(2), y)", [(2, 2, 2), (2, 2, 3)], "unit"),
    ("scipy.linalg.inv(x + 3.0 * np.eye(3))", [(3, 3)], "unit"),
    ("scipy.linalg.inv(x + 3.0 * np.eye(3), assume_a='general')", [(3, 3)], "unit"),
    ("scipy.linalg.det(x)", [(3, 3)]), ("scipy.linalg.det(x)", [(2, 3, 3)]),
    # Sylvester equations A X + X B = Q (A, B shifted to keep -B's eigenvalues off A's)
    ("scipy.linalg.solve_sylvester(x + 2.0 * np.eye(3), y + 1.0 * np.eye(2), x[:, :2] * y[0])",
     [(3, 3), (2, 2)], "unit"),
    ("scipy.linalg.solve_sylvester(x + 2.0 * np.eye(2), x.T, y)", [(2, 2), (2, 2)], "unit"),
    ("scipy.linalg.solve_sylvester(x + 2.0 * np.eye(2), np.eye(2), y)", [(2, 2, 2), (2, 2, 2)],
     "unit"),
    # matrix functions: a general matrix, a stack, a symmetric one with a repeated
    # eigenvalue (2 I + x x^T has 2 twice), and compositions for the second order
    ("scipy.linalg.expm(x)", [(3, 3)]), ("scipy.linalg.expm(x)", [(2, 2, 2)]),
    ("scipy.linalg.expm(2.0 * np.eye(3) + np.outer(x, x))", [(3,)], "unit"),
    ("scipy.linalg.expm(x * y[0, 0]) @ y", [(2, 2), (2, 2)], "unit"),
    ("scipy.linalg.logm(x + 3.0 * np.eye(3))", [(3, 3)], "unit"),
    ("scipy.linalg.logm(x + 3.0 * np.eye(2))", [(2, 2, 2)], "unit"),
    ("scipy.linalg.logm(2.0 * np.eye(3) + np.outer(x, x))", [(3,)], "unit"),
    ("scipy.linalg.sqrtm(x + 3.0 * np.eye(3))", [(3, 3)], "unit"),
    ("scipy.linalg.sqrtm(x + 3.0 * np.eye(2))", [(2, 2, 2)], "unit"),
    ("scipy.linalg.sqrtm(2.0 * np.eye(3) + np.outer(x, x))", [(3,)], "unit"),
]


test_scipy_linalg = table_test(CASES, seed=1900, preamble=PREAMBLE)


def _module():
    return shared_module(signatures(CASES), PREAMBLE)


def test_every_scipy_linalg_op_is_checked_by_the_table():
    """As tests/ops/test_registry.py, for this module's ops: each is reached by a case
    and its rules by the derivatives the checks build."""
    from autodiff.ops import scipy_linalg as module

    ours = {op.name for op in vars(module).values() if isinstance(op, Op)}
    seen = ops_reached(CASES, PREAMBLE)
    with_rules = {name for name in ours if OPS[name].vjp is not None}
    assert not with_rules - seen, f"ops no case goes through: {sorted(with_rules - seen)}"
    assert all(OPS[name].sympy is not None or OPS[name].no_sympy for name in ours)


# SymPy's derivative of each case of one matrix (SymPy's matrices are not stacked) with
# a SymPy form (the matrix functions have none), but a Sylvester equation of a 3 by 2
# unknown: its SymPy form solves a symbolic 6 by 6 system, which takes SymPy minutes
# (the 2 by 2 cases check the form).
SINGLE = [i for i, case in enumerate(CASES) if all(len(shape) <= 2 for shape in case[1])
          and not any(f"linalg.{name}(" in case[0] for name in ("expm", "logm", "sqrtm"))
          and not (case[0].startswith("scipy.linalg.solve_sylvester") and case[1][0] == (3, 3))]


@pytest.mark.parametrize("index", SINGLE, ids=[case_ids(CASES)[i] for i in SINGLE])
def test_sympy_route(index):
    pytest.importorskip("sympy")
    _, shapes, *rest = CASES[index]
    rng = np.random.default_rng(1900 + index)
    args = [random_array(rng, shape, rest[0] if rest else "real") for shape in shapes]
    loss = getattr(_module(), f"loss_{index}")
    weights = rng.uniform(0.5, 1.5, size=np.shape(getattr(_module(), f"value_{index}")(*args)))
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    ours = ad.grad(loss, wrt=wrt)(*args, weights)
    check_routes(loss, [*args, weights], wrt, ours if isinstance(wrt, tuple) else (ours,),
                 ("sympy",))


@pytest.fixture
def user(user_module):
    return user_module("""
        import numpy as np
        import scipy.linalg


        def gp(k, y):
            return y @ scipy.linalg.cho_solve(scipy.linalg.cho_factor(k), y)


        def banded(a, b):
            return np.sum(scipy.linalg.solve(a, b, assume_a='banded'))


        def inverse(a):
            return np.sum(scipy.linalg.inv(a, assume_a='pos'))


        def root(a):
            return np.sum(scipy.linalg.sqrtm(a) @ scipy.linalg.expm(a))


        def log(a):
            return np.sum(scipy.linalg.logm(a))
    """)


def test_numba_refuses_scipy_at_the_users_line(user):
    pytest.importorskip("numba")
    k, y = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, -1.0])
    with pytest.raises(ad.AutodiffError, match="jit='numba' cannot compile") as raised:
        ad.grad(user.gp, jit="numba")(k, y)
    assert raised.value.filename == user.__file__ and raised.value.lineno == 7


def test_the_usual_gaussian_process_form_is_differentiated(user):
    k, y = np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([1.0, -1.0])
    dk, dy = ad.grad(user.gp, wrt=(0, 1))(k, y)
    x = np.linalg.solve(k, y)
    np.testing.assert_allclose(dy, 2 * x)
    # the gradient of the symmetric matrix's upper triangle: the lower one is not read
    full = -np.outer(x, x)
    np.testing.assert_allclose(dk, np.triu(full + full.T - np.diag(np.diag(full))))


def test_forms_without_rules_are_refused_at_the_users_line(user):
    a, b = np.eye(2) * 2.0, np.ones(2)
    with pytest.raises(ad.NonDifferentiableError, match="banded") as raised:
        ad.grad(user.banded)(a, b)
    assert raised.value.lineno == 11
    with pytest.raises(ad.AutodiffError, match="assume_a=None or 'general'") as raised:
        ad.grad(user.inverse)(a)
    assert raised.value.lineno == 15


def test_numba_refuses_the_matrix_functions_at_the_users_line(user):
    pytest.importorskip("numba")
    with pytest.raises(ad.AutodiffError, match="jit='numba' cannot compile") as raised:
        ad.grad(user.root, jit="numba")(2.0 * np.eye(2))
    assert raised.value.lineno == 19


def test_a_complex_logarithm_or_square_root_is_refused_when_it_runs(user):
    negative = np.array([[-1.0, 0.2], [0.0, 2.0]])
    for fn, line in ((user.log, 23), (user.root, 19)):
        with pytest.raises(ad.AutodiffError, match="is complex \\(it has a negative eigenvalue") as raised:
            ad.grad(fn)(negative)
        assert raised.value.lineno == line
        with pytest.raises(ad.AutodiffError, match="is complex"):
            ad.jvp(fn)(negative, np.ones((2, 2)))
    # eigenvalues off the negative axis, complex ones included, are differentiated
    rotation = np.array([[1.0, -0.5], [0.5, 1.0]])
    for fn in (user.log, user.root):
        np.testing.assert_allclose(ad.grad(fn)(rotation), ad.numeric_grad(fn, rotation),
                                   rtol=1e-6)


def test_complex_eigenvalues_of_np_linalg_eig_are_refused_when_it_runs(user_module):
    module = user_module("""
        import numpy as np


        def f(a):
            return np.sum(np.linalg.eig(a)[0])
    """)
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(ad.AutodiffError, match="complex eigenvalues") as raised:
        ad.grad(module.f)(rotation)
    assert raised.value.lineno == 6
    # real eigenvalues: the gradient of their sum (the trace) is the identity
    np.testing.assert_allclose(ad.grad(module.f)(np.array([[1.0, 2.0], [0.5, 3.0]])), np.eye(2),
                               atol=1e-12)


def test_full_factors_of_a_matrix_that_is_not_square_are_refused_when_the_rule_runs(user_module):
    module = user_module("""
        import numpy as np


        def u(a):
            return np.sum(np.linalg.svd(a)[0] ** 2 @ a)


        def q(a):
            return np.sum(np.linalg.qr(a, mode='complete')[0] @ a)
    """)
    tall = np.arange(1.0, 7.0).reshape(3, 2) + np.eye(3, 2)
    for fn, line, what in ((module.u, 6, "full_matrices=True"), (module.q, 10, "mode='complete'")):
        with pytest.raises(ad.AutodiffError, match=f"{what}.*square matrices alone") as raised:
            ad.grad(fn)(tall)
        assert raised.value.lineno == line
        with pytest.raises(ad.AutodiffError, match="square matrices alone"):
            ad.jvp(fn)(tall, np.ones((3, 2)))


def test_norms_of_an_order_with_axis_none_check_the_rank_or_are_refused(user_module):
    module = user_module("""
        import numpy as np


        def cube(x):
            return np.linalg.norm(x, 3)


        def harmonic(x):
            return np.linalg.norm(x, -1)
    """)
    with pytest.raises(ad.AutodiffError, match="ord=3 and axis None takes a vector") as raised:
        ad.grad(module.cube)(np.ones((2, 2)))
    assert raised.value.lineno == 6
    with pytest.raises(ad.NonDifferentiableError, match="ord=-1 is differentiated with its axis "
                       "given") as raised:
        ad.grad(module.harmonic)(np.ones(3))
    assert raised.value.lineno == 10
