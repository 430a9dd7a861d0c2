"""Derivatives specialised per call signature (``jit=True``, ``jit="numba"``): the
dispatcher, shape inference, the per-signature rewrites and the numba backend."""
