"""The op registry and every family of primitives (importing this registers them all)."""

from autodiff.ops import (  # noqa: F401
    along_axis,
    batching,
    calls,
    complex_numbers,
    control,
    conversions,
    custom,
    elementwise,
    fft,
    helpers,
    linalg,
    numerical,
    reduce,
    shape,
    specialized,
    statistics,
)
from autodiff.ops.registry import OPS, Op, defop

try:  # scipy.special's ops, when SciPy is installed (autodiff needs no SciPy)
    import scipy.special  # noqa: F401
except ImportError:
    pass
else:
    from autodiff.ops import (
        integrate,  # noqa: F401
        scipy_linalg,  # noqa: F401
        signal,  # noqa: F401
        special,  # noqa: F401
        stats,  # noqa: F401
    )

from autodiff.ops import registry  # noqa: E402

registry.math_functions_as_python_runs_them()  # once every op is registered

__all__ = ["OPS", "Op", "defop"]
