"""scipy.signal's convolve and correlate against finite differences: every mode, over
one and two axes, either operand the larger, equal shapes, a 1 x 1 kernel, and the
method argument (which never changes the rules)."""

from __future__ import annotations

import pytest

from tests.ops.table import table_test

pytest.importorskip("scipy.signal")

PREAMBLE = "import scipy.signal"

CASES = [
    ("scipy.signal.convolve(x, y)", [(5,), (3,)]), ("scipy.signal.convolve(x, y)", [(2, 3), (3, 2)]),
    ("scipy.signal.convolve(x, y, 'valid')", [(4, 5), (2, 3)]),
    ("scipy.signal.convolve(x, y, mode='valid')", [(2, 3), (4, 5)]),
    ("scipy.signal.convolve(x, y, 'same')", [(4, 5), (2, 3)]),
    ("scipy.signal.convolve(x, y, mode='same')", [(2, 3), (3, 4)]),
    ("scipy.signal.convolve(x, y, 'same')", [(3, 3), (3, 3)]),
    ("scipy.signal.convolve(x, y, 'valid', method='direct')", [(3,), (3,)]),
    ("scipy.signal.convolve(x, y, mode='same', method='fft')", [(4, 3), (1, 1)]),
    ("scipy.signal.convolve(x, y, 'full', 'direct')", [(2, 2, 3), (2, 1, 2)]),
    ("scipy.signal.correlate(x, y)", [(5,), (3,)]), ("scipy.signal.correlate(x, y)", [(2, 3), (3, 2)]),
    ("scipy.signal.correlate(x, y, 'valid')", [(4, 5), (2, 3)]),
    ("scipy.signal.correlate(x, y, mode='valid')", [(2, 3), (4, 5)]),
    ("scipy.signal.correlate(x, y, 'same')", [(4, 5), (2, 3)]),
    ("scipy.signal.correlate(x, y, mode='same')", [(2, 3), (3, 4)]),
    ("scipy.signal.correlate(x, y, 'same')", [(4, 4), (4, 4)]),
    ("scipy.signal.correlate(x, y, 'valid', method='direct')", [(3,), (3,)]),
    ("scipy.signal.correlate(x, y, mode='same', method='fft')", [(3, 4), (1, 1)]),
    ("scipy.signal.correlate(np.tanh(x), x, 'same')", [(3, 4)]),
]

test_signal = table_test(CASES, seed=1950, preamble=PREAMBLE, routes=("sympy",))
