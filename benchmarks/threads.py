"""One thread for every library's linear algebra, set before any of them is imported.

NumPy's BLAS, PyTorch (through OpenMP) and XLA would otherwise each use every
core, and the figures would swing with the load on the machine. A variable the
user set is left as it is; RESULTS.md says which ones run.py set.

This module imports nothing heavy, so that `run.py` can import it first.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = {
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
}


def pin_threads() -> list[str]:
    """Set each variable the user left unset to one thread; return the names set."""
    unset = [name for name in THREAD_VARIABLES if name not in os.environ]
    for name in unset:
        os.environ[name] = THREAD_VARIABLES[name]
    return unset
