"""Numerical staples against finite differences: np.convolve and np.correlate (every
mode, either operand the longer, equal lengths, length-1 kernels), scipy.signal's
convolve and correlate, sliding windows, the trapezoidal rule, np.gradient, np.polyval
and np.interp."""

from __future__ import annotations

from tests.ops.table import table_test

CASES = [
    # np.convolve and np.correlate: NumPy swaps the operands when v is the longer
    ("np.convolve(x, y)", [(5,), (3,)]), ("np.convolve(x, y)", [(2,), (4,)]),
    ("np.convolve(x, y, 'valid')", [(5,), (3,)]), ("np.convolve(x, y, mode='valid')", [(3,), (5,)]),
    ("np.convolve(x, y, 'same')", [(5,), (3,)]), ("np.convolve(x, y, mode='same')", [(2,), (5,)]),
    ("np.convolve(x, y, 'same')", [(4,), (4,)]), ("np.convolve(x, y, 'valid')", [(4,), (4,)]),
    ("np.convolve(x, y, mode='same')", [(6,), (1,)]), ("np.convolve(x, y, 'valid')", [(1,), (3,)]),
    ("np.convolve(x, y, 'same')", [(3,), (6,)]), ("np.convolve(x, x * y)", [(3,), (3,)]),
    ("np.correlate(x, y)", [(5,), (3,)]), ("np.correlate(x, y)", [(3,), (5,)]),
    ("np.correlate(x, y, 'full')", [(5,), (2,)]), ("np.correlate(x, y, mode='full')", [(2,), (4,)]),
    ("np.correlate(x, y, 'same')", [(5,), (3,)]), ("np.correlate(x, y, 'same')", [(2,), (5,)]),
    ("np.correlate(x, y, 'same')", [(3,), (6,)]), ("np.correlate(x, y, mode='same')", [(4,), (4,)]),
    ("np.correlate(x, y, 'valid')", [(4,), (4,)]), ("np.correlate(x, y, 1)", [(1,), (4,)]),
    ("np.correlate(x, y, mode='full')", [(4,), (1,)]), ("np.correlate(np.sin(x), x)", [(4,)]),
    # sliding windows: over every axis, chosen axes, an axis windowed twice
    ("np.lib.stride_tricks.sliding_window_view(x, 3)", [(5,)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 1)", [(3,)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 3))", [(4, 5)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 2, axis=1)", [(3, 4)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 3, axis=-2)", [(4, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 0))", [(3, 2, 4)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 3), axis=(0, 0))", [(6, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, (2, 2)) ** 2", [(3, 3)]),
    ("np.einsum('...ij,ij->...', np.lib.stride_tricks.sliding_window_view(x, (2, 2)), y)",
     [(4, 3), (2, 2)]),
    ("np.lib.stride_tricks.sliding_window_view(x, 2) @ y", [(5,), (2,)]),
    # the trapezoidal rule: steps dx, sample points along the axis or of y's shape
    ("np.trapezoid(x)", [(5,)]), ("np.trapezoid(x, dx=0.5)", [(2, 4)]),
    ("np.trapezoid(x, dx=y, axis=0)", [(3, 2), ()]), ("np.trapezoid(x, axis=1)", [(2, 3, 4)]),
    ("np.trapezoid(x, y)", [(4,), (4,)]), ("np.trapezoid(x, y, axis=0)", [(4, 2), (4,)]),
    ("np.trapezoid(x, y, axis=1)", [(2, 3, 2), (3,)]), ("np.trapezoid(x, x=y)", [(2, 3), (2, 3)]),
    ("np.trapezoid(x, y, axis=-2)", [(3, 2), (3, 2)]), ("np.trapezoid(x, np.cumsum(y))", [(1,), (1,)]),
    ("np.trapezoid(x, y)", [(2,), (2,)]), ("np.trapezoid(x * x, x, dx=3.0)", [(3,)]),
    ("np.trapezoid(x, y)", [(2, 3), (1, 3)]),
    # np.gradient: one array (no axis for a vector, or one axis), a tuple for several axes
    ("np.gradient(x)", [(5,)]), ("np.gradient(x, 0.5)", [(2,)]), ("np.gradient(x, edge_order=2)", [(3,)]),
    ("np.gradient(x, 2.0, edge_order=2)", [(6,)]), ("np.gradient(x, axis=0)", [(4, 3)]),
    ("np.gradient(x, 0.3, axis=-1, edge_order=2)", [(2, 3, 4)]), ("np.gradient(x, axis=(1,))", [(2, 2)]),
    ("np.gradient(x, axis=(0, 1))[1]", [(3, 4)]),
    ("np.gradient(x, 0.5, 2.0, axis=(1, 0), edge_order=2)[0]", [(3, 4)]),
    ("np.stack(np.gradient(x, 0.25, axis=(0, 1, 2)))", [(2, 3, 2)]),
    ("np.gradient(x, axis=(0, 1))[0] * np.gradient(x, axis=(0, 1))[1]", [(3, 3)]),
    ("np.gradient(np.gradient(x, edge_order=2), 0.5)", [(4,)]),
    # polynomials: constant, linear and higher, at scalars and arrays, through 0
    ("np.polyval(x, y)", [(3,), (4,)]), ("np.polyval(x, y)", [(4,), (2, 3)]),
    ("np.polyval(x, y)", [(1,), (3,)]), ("np.polyval(x, y)", [(2,), ()]),
    ("np.polyval(x, y)", [(5,), None]), ("np.polyval(x, y - y)", [(3,), (2,)]),
    ("np.polyval(x, np.array([0.0, 1.0, -2.0]))", [(4,)]), ("np.polyval(np.array([1.0, -2.0, 0.5]), x)", [(3, 2)]),
    # interpolation: inside, outside (ends, or left and right), a scalar; xp uneven
    ("np.interp(x, np.array([-1.7, -0.4, 0.3, 1.2, 1.9]), y)", [(6,), (5,)]),
    ("np.interp(2.5 * x, np.array([-1.7, -0.4, 0.3, 1.2, 1.9]), y)", [(3, 2), (5,)]),
    ("np.interp(2.5 * x, np.array([-1.1, 0.2, 1.3]), y, left=-3.0, right=2.0)", [(7,), (3,)]),
    ("np.interp(2.5 * x, np.array([-1.1, 0.2, 1.3]), y, 0.5)", [(7,), (3,)]),
    ("np.interp(x, np.array([-0.9, 0.8]), y, right=1.5)", [(), (2,)]),
    ("np.interp(x, np.array([-0.3, 0.1, 0.4]), np.sin(x))", [(3,)]),
    ("np.interp(x, np.linspace(-2.0, 2.0, 6), np.array([1.0, -2.0, 0.5, 3.0, 0.0, 1.0]))", [(2, 3)]),
    ("np.interp(x * y, np.array([-1.1, 0.2, 1.3]), y ** 2)", [(3,), (3,)]),
]

test_numerical = table_test(CASES, seed=1900, routes=("sympy",))
