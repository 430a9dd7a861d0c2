"""Complex values, checked against central differences in both parts: the gradient of a
real function of z = x + iy is df/dx - i df/dy (the convention of JAX and autograd).

Each case is checked as the op tables check real ones (reverse and forward mode, second
order four ways, ``jit=True``), for the real part of a weighted sum with complex
weights: ``np.sum(np.real(w * expr))``. The inputs are complex unless a case's domain
says otherwise (a real x in a function that computes with complex values).
"""

from __future__ import annotations

from tests.ops.table import ops_reached, table_test

CASES = [
    # the parts of complex numbers
    ("np.real(x)", [(3,)]), ("np.imag(x)", [(2, 3)]), ("x.real * x.imag", [(4,)]),
    ("np.conj(x)", [(3,)]), ("x.conj() * x", [(3,)]), ("np.conjugate(x) ** 2", [(2, 2)]),
    ("np.angle(x)", [(3,)]), ("np.angle(x, deg=True)", [(2, 2)]),
    ("np.abs(x)", [(3,)]), ("np.abs(x) ** 2", [(2, 3)]), ("abs(x) * x", [(3,)]),
    ("np.real(x * np.conj(y))", [(3,), (3,)]),
    # holomorphic ops keep their rules
    ("np.exp(x) * np.sin(x)", [(3,)]), ("np.log(x) + np.sqrt(x)", [(4,)]),
    ("np.tanh(x) / (1.0 + x ** 2)", [(3,)]), ("x ** 3 - 2.0 * x", [(2, 3)]),
    ("np.power(x, 2.5)", [(3,)]), ("x / y", [(3,), (2, 3)]), ("x @ y", [(2, 3), (3, 2)]),
    ("np.einsum('ij,jk->ik', x, y)", [(2, 3), (3, 4)]), ("np.sum(x, axis=0)", [(3, 2)]),
    ("np.mean(x ** 2, axis=1)", [(2, 3)]), ("np.cumsum(x) * np.cumprod(x)", [(4,)]),
    ("np.linalg.inv(x)", [(3, 3)]), ("np.linalg.det(x)", [(3, 3)]),
    ("np.linalg.solve(x, y)", [(3, 3), (3,)]), ("np.dot(x, y)", [(3,), (3,)]),
    ("np.outer(x, y)", [(2,), (3,)]), ("np.sinc(x)", [(3,)]), ("np.sinc(0.1 * x)", [(3,)]),
    ("np.where(np.real(x) > 0, x, 2.0 * x)", [(4,)]),
    ("np.concatenate([x, x ** 2]).T", [(2, 2)]), ("x[1:, ::-1]", [(3, 3)]),
    # non-holomorphic reductions and products
    ("np.var(x)", [(4,)]), ("np.var(x, axis=0, ddof=1)", [(3, 2)]),
    ("np.std(x, axis=1)", [(2, 3)]), ("np.linalg.norm(x)", [(3,)]),
    ("np.linalg.norm(x, axis=0)", [(2, 3)]), ("np.linalg.norm(x, ord=1)", [(4,)]),
    ("np.linalg.norm(x, ord=np.inf, axis=1)", [(2, 3)]), ("np.vdot(x, y)", [(3,), (3,)]),
    ("np.correlate(x, y, mode='full')", [(4,), (3,)]), ("np.convolve(x, y)", [(4,), (2,)]),
    ("np.linalg.slogdet(x)[1]", [(3, 3)]), ("np.cov(x)", [(2, 4)]),
    # a real x in a function that computes with complex values
    ("np.exp(1j * x)", [(3,)], "real"), ("np.abs(x + 2j) ** 2", [(3,)], "real"),
    ("np.angle(x + 1j * y)", [(3,), (3,)], "real"), ("complex(x[0], x[1]) ** 2", [(2,)], "real"),
    ("np.abs(x.astype(complex) * (1 - 2j))", [(3,)], "real"),
]

test_complex = table_test(CASES, seed=1900, complex_values=True)


def test_the_parts_and_the_complex_rules_are_reached():
    reached = ops_reached(CASES, complex_values=True)
    assert {"real", "imag", "conj", "angle", "abs", "var", "std", "norm", "vdot",
            "correlate", "slogdet_logabsdet"} <= reached
