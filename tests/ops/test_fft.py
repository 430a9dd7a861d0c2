"""np.fft's transforms, shifts and frequencies, checked as the complex table checks its ops
(reverse and forward mode, second order four ways, ``jit=True``) against central
differences in both parts, for ``np.sum(np.real(w * expr))`` with complex weights. The
inputs are complex unless a case's domain says "real" (rfft's x).

Most cases square the transform, so that second order goes through the rules' own
rules; the norms, lengths n (s) shorter than, equal to and longer than the axis (odd
and even for irfft), the axes and the ranks vary from case to case.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from tests.ops.table import ops_reached, table_test

CASES = [
    # complex to complex
    ("np.fft.fft(x) ** 2", [(5,)]), ("np.fft.fft(x, n=3)", [(5,)]),
    ("np.fft.fft(x, 8, norm='ortho') ** 2", [(5,)]),
    ("np.fft.fft(x, n=2, axis=0, norm='forward') * x[:2]", [(4, 3)]),
    ("np.fft.ifft(x, norm='backward') ** 2", [(4,)]),
    ("np.fft.ifft(x, n=6, axis=1, norm='forward') ** 2", [(2, 4)]),
    ("np.fft.ifft(x, n=2, axis=-2, norm='ortho') ** 2", [(3, 4, 2)]),
    ("np.fft.fft(x, norm=None) * np.fft.ifft(x)", [(1,)]),
    ("np.fft.fft(x, n=4)[1:] ** 2 + np.fft.ifftn(x ** 2, axes=(0,))", [(3,)], "real"),
    # real to complex, complex to real
    ("np.fft.rfft(x) ** 2", [(6,)], "real"),
    ("np.fft.rfft(x, n=4, norm='ortho') ** 2", [(7,)], "real"),
    ("np.fft.rfft(x, n=9, axis=0, norm='forward') ** 2", [(5, 2)], "real"),
    ("np.fft.rfft(x, axis=1) * np.fft.rfft(x ** 2, axis=1)", [(2, 5, 3)], "real"),
    ("np.fft.rfft(x) * x", [(1,)], "real"),
    ("np.fft.irfft(x) ** 2", [(5,)]), ("np.fft.irfft(x, n=7, norm='ortho') ** 2", [(4,)]),
    ("np.fft.irfft(x, n=4, norm='forward') ** 2", [(5,)]),
    ("np.fft.irfft(x, n=11, axis=0) ** 2", [(3, 2)]),
    ("np.fft.irfft(x, n=6, axis=-2, norm='ortho') ** 2", [(2, 4, 3)]),
    ("np.fft.irfft(x, n=1) * x[0]", [(3,)]), ("np.fft.irfft(x, n=2) ** 2", [(1,)]),
    ("np.fft.irfft(x) ** 3", [(2,)]), ("np.fft.irfft(x, n=5) ** 2", [(4,)], "real"),
    ("np.fft.irfft(x) ** 2 * np.abs(x[0])", [(3,)]),
    ("np.fft.hfft(x) ** 2", [(4,)]), ("np.fft.hfft(x, n=5, axis=0, norm='ortho') ** 2", [(4, 2)]),
    ("np.fft.ihfft(x, norm='forward') ** 2", [(5,)], "real"),
    ("np.fft.ihfft(x, n=4, axis=0) ** 2", [(3, 2)], "real"),
    # n dimensions
    ("np.fft.fft2(x) ** 2", [(3, 4)]), ("np.fft.fft2(x) * x", [(1, 3)]),
    ("np.fft.ifft2(x, s=(2, 5), norm='ortho') ** 2", [(3, 4)]),
    ("np.fft.fftn(x) ** 2", [(2, 3, 2)]),
    ("np.fft.fftn(x, s=(3, 2), axes=(0, 2), norm='forward') ** 2", [(2, 3, 4)]),
    ("np.fft.ifftn(x, axes=(-1, 0)) ** 2", [(3, 2, 2)]),
    ("np.fft.ifftn(x, s=(4,), axes=(1,), norm='backward') ** 2", [(2, 3)]),
    ("np.fft.rfft2(x) ** 2", [(4, 5)], "real"),
    ("np.fft.rfftn(x, s=(3, 4), axes=(0, 1), norm='ortho') ** 2", [(4, 3, 2)], "real"),
    ("np.fft.rfftn(x) ** 2", [(2, 3, 3)], "real"),
    ("np.fft.irfft2(x) ** 2", [(3, 3)]),
    ("np.fft.irfftn(x, s=(2, 5), axes=(1, 0), norm='forward') ** 2", [(3, 4)]),
    ("np.fft.irfftn(x, axes=(0, 2)) ** 2", [(3, 2, 2)]),
    ("np.fft.irfftn(x, norm='ortho') ** 2", [(1, 1, 2)]),
    # settings computed when the code runs
    ("np.fft.rfft(x, axis=x.ndim - 1) ** 2", [(3, 4)], "real"),
    ("np.fft.irfftn(np.fft.rfftn(x) ** 2, s=x.shape, axes=(0, 1))", [(3, 5)], "real"),
    ("np.fft.irfft(x, norm='ortho' if len(x) > 3 else 'forward') ** 2", [(4,)]),
    ("np.fft.rfftn(x, s=(-1, 6), axes=(0, 1)) ** 2", [(3, 4)], "real"),
    # shifts and frequencies
    ("np.fft.fftshift(x) * x", [(5,)]), ("np.fft.fftshift(x, axes=1) * x", [(2, 5)]),
    ("np.fft.ifftshift(x, axes=(0,)) * x", [(3, 4)]), ("np.fft.ifftshift(x) ** 2", [(5, 2)]),
    ("x ** 2 * np.fft.fftfreq(5, d=0.1)", [(5,)]), ("x ** 2 * np.fft.rfftfreq(6)", [(4,)]),
    # compositions
    ("np.fft.ifft(np.fft.fft(x)) * x", [(4,)]),
    ("np.fft.irfft(np.fft.rfft(x), n=len(x)) ** 2", [(5,)], "real"),
    ("np.fft.irfft(np.fft.rfft(x) * y, n=len(x))", [(6,), (4,)], "real"),
    ("np.abs(np.fft.rfft(x)) ** 2", [(7,)], "real"),
    ("np.fft.fftshift(np.fft.fftn(x)) ** 2", [(3, 4)]),
    ("np.fft.irfft(np.fft.rfft(x, axis=0) * np.fft.rfft(y, axis=0), n=4, axis=0)",
     [(4, 2), (4, 2)], "real"),
]

test_fft = table_test(CASES, seed=1910, complex_values=True)


def test_every_transform_and_its_helpers_are_reached():
    reached = ops_reached(CASES, complex_values=True)
    assert {"fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fftshift",
            "ifftshift", "fftfreq", "rfftfreq", "fitted_to", "half_spectrum_padded",
            "hermitian_weights", "fft_axes", "conj"} <= reached


def test_what_no_rule_can_take_is_refused_at_the_users_line(user_module):
    module = user_module("""
        import numpy as np
        def swapped(x):
            norm = "ortho" if len(x) > 3 else "forward"
            return np.sum(np.fft.hfft(x, norm=norm) ** 2)
        def spacing(x, d):
            return np.sum(x * np.fft.fftfreq(4, d))
        def repeated(x):
            return np.sum(np.abs(np.fft.fftn(x, s=(3, 2), axes=(0, -2))) ** 2)
    """)
    x = np.linspace(0.5, 2.0, 4) + 0.5j
    # hfft is irfft in the swapped norm: a norm known only when the code runs is refused
    with pytest.raises(ad.AutodiffError, match=r"\.py:5: 'hfft' has no gradient rule.*"
                       "differentiated with a constant norm"):
        ad.grad(module.swapped)(x)
    with pytest.raises(ad.AutodiffError, match=r"\.py:5: 'hfft' has no forward-mode"):
        ad.jvp(module.swapped)(x, np.ones(4) + 0j)
    # the frequencies pass no gradient to their spacing, in either mode
    refused = r"\.py:7: 'fftfreq' passes no gradient to its argument 'd' \(the sample"
    with pytest.raises(ad.AutodiffError, match=refused):
        ad.grad(module.spacing, wrt=1)(np.ones(4), 0.5)
    with pytest.raises(ad.AutodiffError, match=refused):
        ad.jvp(module.spacing, wrt=1)(np.ones(4), 0.5, 1.0)
    # one axis named twice (0 and -2 of a matrix) is found when the derivative runs
    with pytest.raises(ad.AutodiffError, match=r"\.py:9: np\.fft's n-dimensional transform "
                       r"along the axes \(0, -2\) of an array of 2 dimensions: a repeated"):
        ad.grad(module.repeated)(np.ones((2, 3)) + 0j)


def test_numba_refuses_np_fft_naming_the_users_line(user_module):
    pytest.importorskip("numba")
    module = user_module("""
        import numpy as np
        def shifted(x):
            return np.sum(np.fft.fftshift(x) * x)
        def power(x):
            return np.sum(np.abs(np.fft.rfft(x)) ** 2)
    """)
    # numba has no np.fft: its own message, with the generated line and the user's
    with pytest.raises(ad.AutodiffError, match=r"(?s)\.py:4: numba cannot compile the "
                       r"derivative.*'fftshift'.*np\.fft\.fftshift\(x\) \* x"):
        ad.grad(module.shifted, jit="numba")(np.ones(4))
    # numba compiles derivatives of real values: this one computes with complex ones
    with pytest.raises(ad.AutodiffError, match=r"(?s)\.py:6: jit='numba' compiles derivatives "
                       r"of real values.*np\.fft\.rfft\(x\)"):
        ad.grad(module.power, jit="numba")(np.ones(4))
