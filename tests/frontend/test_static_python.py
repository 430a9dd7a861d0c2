"""Plain Python on constants, decided while compiling: ``is``, ``in`` and pure builtins
(``isinstance``, ``len``, ``max``, ``sorted``, ...), in user helpers as in gradient rules.
(Their refusals on run-time values are in test_errors.py.)"""

from __future__ import annotations

import textwrap

import numpy as np

import autodiff as ad

HEADER = "import numpy as np\n\n"


def test_is_in_and_builtins_on_constants_are_decided_while_compiling(user_module):
    module = user_module(HEADER + textwrap.dedent("""\
        def scaled(x, axis=None, scale=None):
            if scale is not None and axis in (0, -1):
                x = x * scale
            if axis is None:
                return np.sum(x * x)
            axes = axis if isinstance(axis, tuple) else (axis,)
            for a in sorted(axes, reverse=True):
                x = np.sum(x * x, axis=a)
            return np.sum(x) * (len(axes) + max(axes) - min(axes))

        def f(x):
            return scaled(x) + scaled(x, 0, 3.0) + scaled(x, (0, 1), 5.0)
    """), name="mod")
    g = ad.grad(module.f)
    x = np.arange(6.0).reshape(2, 3)
    rows = np.sum(x * x, axis=1, keepdims=True)  # the last call: 3 * sum(rows ** 2)
    np.testing.assert_allclose(g(x), 2 * x + 2 * 9.0 * x + 3 * 4 * rows * x)
    code = [line for line in g.source.splitlines() if not line.strip().startswith("#")]
    for folded in ("scale is", "axis is", " in (", "isinstance", "sorted", "max(", "len("):
        assert not any(folded in line for line in code), folded
