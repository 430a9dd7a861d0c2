"""``scipy.signal``'s convolve and correlate, over arrays of any number of axes.

Registered only when SciPy is installed (``ops/__init__.py`` imports this module
then); ``scipy.signal`` itself, slow to import, is left to the code that calls it
(``registry.defer_alias``). The rules are those of ``np.convolve`` and ``np.correlate`` in
``ops/numerical.py``, axis by axis: the adjoint padded to the 'full' result's
shape (``convolution_pads``, whose 'same' is scipy's: the first operand's shape),
then correlated with the other operand ('valid'). ``method`` chooses how SciPy
computes the product, never its value: the rules use SciPy's own choice.
"""

from __future__ import annotations

import numpy as np
import scipy

from autodiff.ops.numerical import convolution_pads
from autodiff.ops.registry import defer_alias, defop
from autodiff.ops.sympy_forms import objects

# What generated code reads to call SciPy's functions.
SCIPY = {"scipy": scipy}


def _sympy_signal(kind: str):
    """The SymPy form: the full convolution as a sum of shifted copies of ``in1`` (SciPy
    takes arrays of objects of one axis only), sliced as ``mode`` cuts it."""
    def form(in1, in2, mode, method):
        in1, in2 = objects(in1), objects(in2)
        if kind == "correlate":
            in2 = np.flip(in2)
        full = np.zeros(tuple(n + m - 1 for n, m in zip(in1.shape, in2.shape)), dtype=object)
        for j in np.ndindex(in2.shape):
            full[tuple(slice(k, k + n) for k, n in zip(j, in1.shape))] += in2[j] * in1
        cut = convolution_pads(in1, in2, mode, "scipy")
        return full[tuple(slice(before, size - after)
                          for (before, after), size in zip(cut, full.shape))]
    return form


@defop("signal_convolve", "scipy.signal.convolve(in1, in2, mode=mode, method=method)",
       diff=("in1", "in2"), jvp="linear",
       sympy=_sympy_signal("convolve"))
def signal_convolve(in1, in2, mode="full", method="auto"): ...


signal_convolve.runtime = SCIPY
defer_alias("scipy.signal", "convolve", signal_convolve)


# (correlations written as convolutions with the operand reversed: scipy.signal.correlate
# conjugates complex values)
@signal_convolve.defvjp
def _(g, ans, in1, in2, mode, method):
    full = np.pad(g, convolution_pads(in1, in2, mode, "scipy"))
    return (scipy.signal.convolve(full, np.flip(in2), mode="valid"),
            scipy.signal.convolve(full, np.flip(in1), mode="valid"))


@defop("signal_correlate", "scipy.signal.correlate(in1, in2, mode=mode, method=method)",
       diff=("in1", "in2"), jvp="linear",
       sympy=_sympy_signal("correlate"), real_rules=True)
def signal_correlate(in1, in2, mode="full", method="auto"): ...


signal_correlate.runtime = SCIPY
defer_alias("scipy.signal", "correlate", signal_correlate)


@signal_correlate.defvjp
def _(g, ans, in1, in2, mode, method):
    full = np.pad(g, convolution_pads(in1, in2, mode, "scipy"))
    return (scipy.signal.convolve(full, in2, mode="valid"),
            np.flip(scipy.signal.correlate(full, in1, mode="valid")))


# Of complex values it correlates in1 with conj(in2): holomorphic in in1, and in in2 the
# conjugate of the rule in conj(in2).
@signal_correlate.defvjp_complex
def _(g, ans, in1, in2, mode, method):
    full = np.pad(g, convolution_pads(in1, in2, mode, "scipy"))
    return (scipy.signal.convolve(full, np.conj(in2), mode="valid"),
            np.conj(np.flip(scipy.signal.correlate(full, np.conj(in1), mode="valid"))))
