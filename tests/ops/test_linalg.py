"""matmul (all 1-D/2-D combinations and batches), dot, inner, outer, trace, einsum, norm
of every order, and np.linalg: inv, det, solve, cholesky, slogdet, eigh, eigvalsh, eig, eigvals, svd,
qr, pinv, lstsq, matrix_power, multi_dot, cond, tensorinv, tensorsolve, matrix_rank."""

from __future__ import annotations

from tests.ops.table import table_test

# V sin(diag(w)) V^T from the eigenvalues w and eigenvectors V of one matrix.
_REBUILT = ("np.linalg.eigh({0})[1] @ (np.expand_dims(np.sin(np.linalg.eigh({0})[0]), -1)"
            " * np.swapaxes(np.linalg.eigh({0})[1], -1, -2))")

# U sin(diag(s)) Vh from one matrix's SVD.
_SVD_REBUILT = ("np.linalg.svd({0}, full_matrices=False)[0] @ (np.expand_dims(np.sin("
                "np.linalg.svd({0}, full_matrices=False)[1]), -1)"
                " * np.linalg.svd({0}, full_matrices=False)[2])")

# V sin(diag(w)) V^-1 from np.linalg.eig of one matrix: sin of the matrix.
_EIG_REBUILT = ("np.linalg.eig({0}).eigenvectors @ (np.expand_dims(np.sin(np.linalg.eig({0})"
                ".eigenvalues), -1) * np.linalg.inv(np.linalg.eig({0}).eigenvectors))")

CASES = [
    ("x @ y", [(3,), (3,)]), ("x @ y", [(2, 3), (3,)]), ("x @ y", [(3,), (3, 4)]),
    ("x @ y", [(2, 3), (3, 4)]), ("x @ y", [(5, 2, 3), (3, 4)]), ("x @ y", [(5, 2, 3), (5, 3, 4)]),
    ("x @ y", [(2, 3), (5, 3, 4)]), ("x @ y", [(1, 2, 3), (5, 3, 4)]),
    ("x @ y", [(5, 2, 3), (3,)]), ("x @ y", [(3,), (5, 3, 4)]),
    ("np.matmul(x, y)", [(2, 3), (3, 2)]),
    ("np.dot(x, y)", [(3,), (3,)]), ("np.dot(x, y)", [(2, 3), (3,)]),
    ("np.dot(x, y)", [(3,), (3, 2)]), ("np.dot(x, y)", [(2, 3), (3, 2)]),
    ("np.dot(x, y)", [(), (3, 2)]), ("x.dot(y)", [(2, 3), (3, 4)]),
    ("np.inner(x, y)", [(3,), (3,)]), ("np.inner(x, y)", [(2, 3), (4, 3)]),
    ("np.inner(x, y)", [(2, 3), (3,)]), ("np.inner(x, y)", [(), (3,)]),
    ("np.outer(x, y)", [(3,), (4,)]), ("np.outer(x, y)", [(2, 2), (3,)]),
    ("np.trace(x)", [(3, 3)]), ("np.trace(x, offset=1)", [(3, 4)]), ("x.trace()", [(4, 3)]),
    ("np.trace(x)", [(2, 2, 3)]), ("np.trace(x, offset=-1, axis1=2, axis2=0)", [(3, 2, 4)]),
    ("np.trace(x, axis1=1, axis2=2)", [(2, 3, 3)]), ("x.trace(1, 1, 2) * y", [(2, 3, 4), (2,)]),
    ("np.dot(x, y)", [(2, 2, 3), (3, 2)]), ("np.dot(x, y)", [(2, 3), (2, 3, 4)]),
    ("np.dot(x, y)", [(2, 2, 3), (4, 3, 2)]), ("np.dot(x, y)", [(2, 2, 3), (3,)]),
    ("np.dot(x, y)", [(3,), (2, 3, 2)]), ("x.dot(y)", [(2, 1, 3), (3, 2)]),
    ("np.einsum(x, [0, 1], [1, 0])", [(2, 3)]), ("np.einsum(x, [0, 1], y, [1, 2])", [(2, 3), (3, 4)]),
    ("np.einsum(x, [Ellipsis, 1], [1, Ellipsis])", [(2, 3, 4)]),
    ("np.einsum('...ij,...jk->...ik', x, y)", [(2, 2, 3), (1, 3, 2)]),
    ("np.einsum('i...->...', x)", [(3, 2)]), ("np.einsum('...i,...i', x, y)", [(2, 3), (3,)]),
    ("np.linalg.norm(x)", [(4,)]), ("np.linalg.norm(x)", [(3, 4)]),
    ("np.linalg.norm(x, axis=1)", [(3, 4)]), ("np.linalg.norm(x, axis=0, keepdims=True)", [(3, 4)]),
    ("np.linalg.norm(x, ord=2, axis=-1)", [(2, 3)]), ("np.linalg.norm(x, 'fro')", [(2, 3)]),
    ("np.transpose(x)", [(2, 3)]), ("x.T @ y", [(3, 2), (3, 4)]),
    ("np.transpose(x, (1, 2, 0))", [(2, 3, 4)]), ("x.transpose(2, 0, 1)", [(2, 3, 4)]),
    ("x.transpose()", [(2, 3)]),
    ("np.tanh(x @ y) @ y.T", [(4, 3), (3, 5)]),
    ("np.einsum('ij,jk->ik', x, y)", [(2, 3), (3, 4)]), ("np.einsum('ij,ij->', x, y)", [(2, 3), (2, 3)]),
    ("np.einsum('ii->i', x)", [(3, 3)]), ("np.einsum('bij,bjk->bik', x, y)", [(2, 2, 3), (2, 3, 2)]),
    ("np.einsum('ij,k', x, y)", [(2, 3), (2,)]), ("np.einsum('ij->', x * x)", [(2, 3)]),
    ("np.linalg.inv(x + 3.0 * np.eye(3))", [(3, 3)]),
    ("np.linalg.inv(x + 3.0 * np.eye(2))", [(4, 2, 2)]),
    ("np.linalg.det(x + 3.0 * np.eye(3))", [(3, 3)]), ("np.linalg.det(x)", [(2, 3, 3)]),
    ("np.linalg.solve(x + 3.0 * np.eye(3), y)", [(3, 3), (3,)]),
    ("np.linalg.solve(x + 3.0 * np.eye(3), y)", [(3, 3), (3, 2)]),
    ("np.linalg.solve(x + 3.0 * np.eye(2), y)", [(4, 2, 2), (4, 2, 3)]),
    ("np.swapaxes(x, 0, 2)", [(2, 3, 4)]), ("x.swapaxes(-1, 0) @ y", [(2, 3), (2, 2)]),
    ("np.moveaxis(x, 0, -1)", [(2, 3, 4)]),
    # Factorizations read the lower triangle: the cases give matrices that are not
    # symmetric, so that the rules are checked for the entries NumPy ignores too.
    ("np.linalg.cholesky(x + 3.0 * np.eye(3))", [(3, 3)], "unit"),
    ("np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + 2.0 * np.eye(2))", [(4, 2, 2)]),
    ("np.linalg.cholesky(x @ x.T + 4.0 * np.eye(4))", [(4, 3)]),
    ("np.linalg.slogdet(x)[1]", [(3, 3)]), ("np.linalg.slogdet(x)[1]", [(2, 3, 3)]),
    ("np.linalg.slogdet(x)[0] * np.linalg.slogdet(x)[1]", [(4, 2, 2)]),
    ("np.linalg.slogdet(x)[0] * np.exp(np.linalg.slogdet(x)[1])", [(3, 3)]),
    # Eigenvectors through functions invariant to each one's sign.
    ("np.linalg.eigh(x)[0]", [(3, 3)]), ("np.linalg.eigh(x, 'U')[0]", [(2, 3, 3)]),
    ("np.linalg.eigh(x)[1] ** 2", [(3, 3)]), ("np.linalg.eigh(x, UPLO='U')[1] ** 2", [(2, 4, 4)]),
    (_REBUILT.format("x"), [(3, 3)]), (_REBUILT.format("x + np.swapaxes(x, -1, -2)"), [(2, 3, 3)]),
    # Repeated eigenvalues: the eigenvalues' gradient is defined (here of 2I + x x^T, whose
    # two smallest eigenvalues are 2). Its derivative goes through the eigenvectors', which
    # is undefined there (F infinite, as in JAX): NaN, or a finite value where LAPACK
    # returns the two eigenvalues a rounding error apart. First order alone.
    ("np.linalg.eigh(2.0 * np.eye(3) + np.outer(x, x))[0]", [(3,)], "real", False),
    ("np.linalg.eigvalsh(x)", [(2, 3, 3)]), ("np.linalg.eigvalsh(x, UPLO='U')", [(4, 4)]),
    ("np.linalg.svd(x, compute_uv=False)", [(3, 4)]),
    ("np.linalg.svd(x, compute_uv=False)", [(2, 4, 3)]),
    ("np.linalg.svd(x, full_matrices=False)[1]", [(4, 3)]),
    ("np.linalg.svd(x, full_matrices=False)[1]", [(2, 3, 3)]), ("np.linalg.svd(x)[1]", [(2, 3, 4)]),
    ("np.linalg.svd(x, full_matrices=False)[0] ** 2", [(4, 3)]),
    ("np.linalg.svd(x, full_matrices=False)[0] ** 2", [(3, 4)]),
    ("np.linalg.svd(x, full_matrices=False)[2] ** 2", [(4, 3)]),
    ("np.linalg.svd(x, full_matrices=False)[2] ** 2", [(2, 3, 4)]),
    (_SVD_REBUILT.format("x"), [(3, 4)]), (_SVD_REBUILT.format("x"), [(4, 3)]),
    (_SVD_REBUILT.format("x"), [(2, 3, 3)]),
    # full_matrices=True (the default): square matrices, whose full factors are the reduced
    ("np.linalg.svd(x)[0] ** 2", [(3, 3)]), ("np.linalg.svd(x, full_matrices=True)[2] ** 2", [(2, 3, 3)]),
    ("np.linalg.svd(x)[0] @ (np.expand_dims(np.sin(np.linalg.svd(x)[1]), -1) * np.linalg.svd(x)[2])",
     [(3, 3)]),
    ("np.linalg.qr(x)[0]", [(4, 3)]), ("np.linalg.qr(x)[1]", [(4, 3)]),
    ("np.linalg.qr(x)[0]", [(3, 3)]), ("np.linalg.qr(x, mode='reduced')[1]", [(2, 3, 3)]),
    ("np.linalg.qr(x)[0] * np.sum(np.linalg.qr(x)[1])", [(2, 4, 2)]),
    ("np.linalg.qr(x, mode='complete')[0]", [(3, 3)]), ("np.linalg.qr(x, 'complete')[1]", [(2, 3, 3)]),
    # The fields of NumPy's named tuples.
    ("np.linalg.eigh(x).eigenvalues * np.linalg.slogdet(x).logabsdet", [(3, 3)]),
    ("np.linalg.svd(x, full_matrices=False).S + np.sum(np.linalg.qr(x).R)", [(2, 4, 3)]),
    ("np.linalg.pinv(x)", [(3, 4)]), ("np.linalg.pinv(x)", [(4, 3)]),
    ("np.linalg.pinv(x, rcond=1e-10)", [(2, 3, 3)]), ("np.linalg.pinv(x)", [(2, 2, 4)]),
    ("np.linalg.lstsq(x, y)[0]", [(4, 3), (4,)]), ("np.linalg.lstsq(x, y, rcond=None)[0]", [(4, 3), (4, 2)]),
    ("np.linalg.lstsq(x, y)[0]", [(2, 3), (2,)]), ("np.linalg.lstsq(x, y)[0]", [(3, 3), (3, 2)]),
    ("np.linalg.matrix_power(x, 3)", [(3, 3)]), ("np.linalg.matrix_power(x, 0)", [(3, 3)]),
    ("np.linalg.matrix_power(x, 1)", [(2, 3, 3)]), ("np.linalg.matrix_power(x, 4)", [(2, 2, 2)]),
    ("np.linalg.matrix_power(x + 3.0 * np.eye(3), -2)", [(3, 3)]),
    ("np.linalg.matrix_power(x + 3.0 * np.eye(2), -1)", [(2, 2, 2)]),
    ("np.linalg.multi_dot([x, y, x.T])", [(2, 3), (3, 3)]),
    ("np.linalg.multi_dot([x, y, x])", [(3,), (3, 3)]),
    ("np.linalg.multi_dot([x, y])", [(3,), (3, 2)]),
    # Every order of np.linalg.norm: vectors (an int axis) and matrices (two axes).
    ("np.linalg.norm(x, ord=1, axis=0)", [(3, 4)]), ("np.linalg.norm(x, np.inf, axis=1)", [(3, 4)]),
    ("np.linalg.norm(x, -np.inf, axis=-1, keepdims=True)", [(2, 3)]),
    ("np.linalg.norm(x, 3, axis=(1,))", [(2, 3)]), ("np.linalg.norm(x, 0.5, axis=0)", [(4, 2)]),
    ("np.linalg.norm(x, -1.5, axis=1)", [(2, 3)]),
    ("np.linalg.norm(x, 'nuc', axis=(0, 1))", [(3, 4)]),
    ("np.linalg.norm(x, 'nuc', axis=(2, 0), keepdims=True)", [(3, 2, 4)]),
    ("np.linalg.norm(x, 2, axis=(-2, -1))", [(2, 3, 4)]), ("np.linalg.norm(x, -2, axis=(1, 0))", [(3, 4)]),
    ("np.linalg.norm(x, 1, axis=(0, 1))", [(3, 4)]), ("np.linalg.norm(x, -1, axis=(-1, 0))", [(3, 4)]),
    ("np.linalg.norm(x, np.inf, axis=(1, 2), keepdims=True)", [(2, 3, 4)]),
    ("np.linalg.norm(x, -np.inf, axis=(0, 1))", [(3, 4)]),
    ("np.linalg.norm(x, 'fro', axis=(0, 2))", [(2, 3, 4)]), ("np.linalg.norm(x, axis=(1, 0))", [(3, 4)]),
    # axis None with an order: a vector's or a matrix's norm, by the rank
    ("np.linalg.norm(x, 1)", [(4,)]), ("np.linalg.norm(x, 1)", [(3, 4)]),
    ("np.linalg.norm(x, 2)", [(4,)]), ("np.linalg.norm(x, ord=2)", [(3, 4)]),
    ("np.linalg.norm(x, np.inf)", [(4,)]), ("np.linalg.norm(x, np.inf, keepdims=True)", [(3, 4)]),
    ("np.linalg.norm(x, -np.inf)", [(4,)]), ("np.linalg.norm(x, -np.inf)", [(3, 4)]),
    ("np.linalg.norm(x, 'nuc')", [(3, 4)]), ("np.linalg.norm(x, 3)", [(4,)]),
    ("np.linalg.norm(x, 0.5, keepdims=True)", [(4,)]),
    # np.linalg.eig of matrices with real, distinct eigenvalues (near 1, 3 and 5), not
    # symmetric; eigenvectors through functions invariant to each one's sign.
    ("np.linalg.eig(0.5 * x + np.diag([1.0, 3.0, 5.0]))[0]", [(3, 3)], "unit"),
    ("np.linalg.eigvals(0.5 * x + np.diag([1.0, 4.0]))", [(2, 2, 2)], "unit"),
    ("np.linalg.eig(0.5 * x + np.diag([1.0, 3.0, 5.0]))[1] ** 2", [(3, 3)], "unit"),
    (_EIG_REBUILT.format("0.5 * x + np.diag([1.0, 3.0, 5.0])"), [(3, 3)], "unit"),
    (_EIG_REBUILT.format("0.5 * x + np.diag([1.0, 4.0])"), [(2, 2, 2)], "unit"),
    ("np.vdot(x, y * y)", [(), ()]),  # (jit="numba" refuses 0-d arguments, for every op)
    # optimize= only orders the products: the same result, and derivatives
    ("np.einsum('ij,jk->ik', x, y, optimize=True)", [(2, 3), (3, 4)]),
    ("np.einsum(x, [0, 1], y, [1, 2], optimize='greedy')", [(2, 3), (3, 4)]),
    ("np.einsum('ij,jk,k->i', x, y, y[0], optimize='optimal')", [(2, 3), (3, 3)]),
    ("np.einsum('ii', x, optimize=False)", [(3, 3)]),
    # condition numbers: singular values, or norms of the matrix and its inverse
    ("np.linalg.cond(x)", [(3, 3)]), ("np.linalg.cond(x, -2)", [(3, 4)]),
    ("np.linalg.cond(x, p=2)", [(2, 3, 3)]), ("np.linalg.cond(x, 'fro')", [(2, 3, 3)]),
    ("np.linalg.cond(x, 'nuc')", [(3, 3)]), ("np.linalg.cond(x, np.inf)", [(3, 3)]),
    ("np.linalg.cond(x, -np.inf)", [(3, 3)]), ("np.linalg.cond(x, 1)", [(2, 2, 2)]),
    ("np.linalg.cond(x, p=-1)", [(3, 3)]),
    # tensor inverses and solves: a reshaped as a square matrix
    ("np.linalg.tensorinv(x + 3.0 * np.eye(6).reshape(2, 3, 6))", [(2, 3, 6)]),
    ("np.linalg.tensorinv(x + 3.0 * np.eye(4).reshape(4, 2, 2), ind=1)", [(4, 2, 2)]),
    ("np.linalg.tensorsolve(x + 3.0 * np.eye(6).reshape(2, 3, 2, 3), y)", [(2, 3, 2, 3), (2, 3)]),
    ("np.linalg.tensorsolve(x + 3.0 * np.eye(6).reshape(2, 3, 6), y)", [(2, 3, 6), (2, 3)]),
    ("np.linalg.tensorsolve(np.moveaxis(x + 3.0 * np.eye(6).reshape(2, 3, 2, 3), 2, 0), y, axes=(0, 3))",
     [(2, 3, 2, 3), (2, 3)]),
    ("np.linalg.tensorsolve(x + 3.0 * np.eye(4), y, axes=[1])", [(4, 4), (4,)]),
    # a rank carries no gradient: a factor of a product that does
    ("x * np.linalg.matrix_rank(x) + np.linalg.matrix_rank(x, tol=0.5, hermitian=False)", [(3, 3)]),
]


test_linalg = table_test(CASES, seed=400)

# np.vdot on every route (numba's takes the dot of the two flattened, views included).
VDOT_CASES = [
    ("np.vdot(x, y)", [(3,), (3,)]), ("np.vdot(x, y)", [(2, 3), (3, 2)]),
    ("np.vdot(x.T, y) * np.vdot(x[0], y[:, 0])", [(2, 3), (3, 2)]),
    ("np.vdot(x, x)", [(2, 2, 2)]),
]


test_vdot = table_test(VDOT_CASES, seed=450, routes=("sympy", "numba"))
