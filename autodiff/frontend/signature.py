"""What a call makes known: code compiled for one call signature.

Most code compiles once for arrays of any rank and dtype, reading ``x.ndim``,
``x.dtype`` and ``x.shape`` when it runs. Some code needs them while compiling:
an ``axis`` or an ``ord`` computed from ``x.ndim``, an einsum spec built from it,
``x.shape[:-1] + (k, 2)``, ``x.astype(x.dtype)``, an int argument or a module's
constant passed as a setting (``ord=ORD``). Such code is compiled per call
signature (see ``derivatives/structured.py``): for each call's

- rank and dtype of each array argument (:class:`ArrayFacts`): ``x.ndim`` and
  ``x.dtype`` are constants, ``x.shape`` a tuple of that many sizes read when it
  runs (the sizes, and the data, stay run-time values);
- value of each int or bool argument (a setting: ``("static", 3)``);
- value of each global or closure variable the code reads holding a number, a
  string or a tuple of them (:func:`foldable`): it is checked at every call, and
  a new value compiles again.

>>> import numpy as np
>>> call_facts(np.ones((2, 3), dtype=np.float32))
ArrayFacts(ndim=2, dtype=dtype('float32'))
>>> signature_spec(3)
('static', 3)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autodiff.frontend.structures import ARRAY, argument_spec, child_specs, children, is_container

# Kinds of global values a signature takes as constants (with tuples of them).
_FOLDED = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class ArrayFacts:
    """What a call signature fixes of an array argument."""

    ndim: int
    dtype: np.dtype


def call_facts(value) -> ArrayFacts | None:
    """The rank and dtype of an array argument or a float (None for anything else)."""
    kind = type(value)
    if kind is np.ndarray or isinstance(value, np.generic):
        return ArrayFacts(value.ndim, value.dtype)
    if kind is float:
        return ArrayFacts(0, np.dtype(float))
    return None


def signature_facts(value, spec: tuple):
    """What a call signature fixes of an argument of spec ``spec``: the
    :class:`ArrayFacts` of an array; of a structure, those of its leaves, in the order
    :func:`~autodiff.frontend.structures.leaves` binds them (None for a leaf that is no
    array); None for anything else."""
    if spec == ARRAY:
        return call_facts(value)
    if not is_container(spec):
        return None
    return tuple(call_facts(leaf) if leaf_spec == ARRAY else None
                 for leaf_spec, leaf in _value_leaves(spec, value))


def _value_leaves(spec: tuple, value):
    """``(leaf spec, leaf)`` of a value of spec ``spec``, in the order of
    :func:`~autodiff.frontend.structures.leaves`."""
    if not is_container(spec):
        yield spec, value
        return
    fields = spec[0] in ("namedtuple", "fields")
    for key, child in zip(children(spec), child_specs(spec)):
        part = (object.__getattribute__(value, key) if spec[0] == "fields" else
                getattr(value, key) if fields else value[key])
        yield from _value_leaves(child, part)


def signature_spec(value) -> tuple:
    """The spec of an argument in a derivative compiled per call signature: an int or
    a bool is a setting (its value compiled in), anything else as
    :func:`~autodiff.frontend.structures.argument_spec` says."""
    if type(value) in (int, bool):
        return ("static", value)
    return argument_spec(value)


def foldable(value) -> bool:
    """Whether a global or closure value is read as a constant by code compiled per
    call signature: a number, a string, None, or a tuple of them. (Its type decides,
    never its attributes: a lazy proxy is not loaded.)"""
    if type(value) is tuple:
        return all(foldable(item) for item in value)
    return type(value) in _FOLDED


@dataclass(frozen=True)
class ConstantRead:
    """A global or closure variable code compiled per call signature read as a
    constant: ``scope.read(name)`` must still be ``value`` when it runs."""

    scope: object  # a graph.scopes.Scope
    name: str
    value: object

    def unchanged(self) -> bool:
        now = self.scope.read(self.name)
        return type(now) is type(self.value) and now == self.value


__all__ = ["ArrayFacts", "ConstantRead", "call_facts", "foldable", "signature_facts",
           "signature_spec"]
