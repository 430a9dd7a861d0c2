"""The public entry points: ``grad`` and ``value_and_grad``.

What they return is the generated derivative itself, a plain Python function
with the user function's signature, so calling it costs nothing beyond the
generated code. It carries ``.source`` (the generated text), ``.graph`` (the
derivative graph), ``.original_graph`` and ``.original`` (the user's function).

>>> import numpy as np
>>> import autodiff as ad
>>> def f(x):
...     return np.sum(x ** 2)
>>> ad.grad(f)(np.array([1.0, 2.0]))  # doctest: +SKIP
array([2., 4.])
"""

from __future__ import annotations

import threading
import types
import weakref
from collections.abc import Callable, Sequence

from autodiff.codegen import compile_generated, generate
from autodiff.errors import NonScalarOutputError, WrtError
from autodiff.frontend import function_to_graph
from autodiff.graph.ir import Graph
from autodiff.transforms import reverse_mode
from autodiff.transforms.optimize import eliminate_dead_code

Wrt = int | str | Sequence[int | str]

_cache: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True):
    """The gradient of the scalar function ``fn``, as generated Python source.

    ``wrt`` picks the arguments: an index, a name, or a tuple of them (the
    derivative then returns a tuple of gradients in that order).

    >>> import numpy as np, autodiff as ad
    >>> @ad.grad
    ... def f(x):
    ...     return np.sum(np.sin(x))
    >>> f(np.zeros(2))  # doctest: +SKIP
    array([1., 1.])
    """
    if fn is None:
        return lambda f: grad(f, wrt=wrt, optimize=optimize)
    return _derivative(fn, wrt, with_value=False, optimize=optimize)


def value_and_grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True):
    """Like :func:`grad`, but the derivative returns ``(fn(...), gradient)``.

    >>> import autodiff as ad
    >>> ad.value_and_grad(lambda x: x * x)(3.0)  # doctest: +SKIP
    (9.0, 6.0)
    """
    if fn is None:
        return lambda f: value_and_grad(f, wrt=wrt, optimize=optimize)
    return _derivative(fn, wrt, with_value=True, optimize=optimize)


def _derivative(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool):
    key = (_wrt_key(wrt), with_value, optimize)
    with _lock:
        cached = _cache.get(fn, {}).get(key) if _weakrefable(fn) else None
        if cached is not None:
            return cached
        derivative = _build(fn, wrt, with_value=with_value, optimize=optimize)
        if _weakrefable(fn):
            _cache.setdefault(fn, {})[key] = derivative
        return derivative


def _build(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool):
    graph, source = function_to_graph(fn)
    # Loops carry every name they assign: drop what nothing reads (a loop
    # variable unused after its loop), so the graph reads like the function.
    eliminate_dead_code(graph)
    indices, several = _resolve_wrt(graph, wrt, source)
    if isinstance(graph.outputs[0], tuple):
        raise NonScalarOutputError(
            "grad needs a function returning one scalar, but this one returns a tuple",
            filename=source.filename, lineno=source.tree.body[-1].lineno,
            source_line=source.line(source.tree.body[-1].lineno),
            hint="return the loss alone, or use a vector-Jacobian product (ad.vjp)",
        )
    derivative = reverse_mode(graph, indices, with_value=with_value, optimized=optimize)
    derivative.name = fn.__name__ + ("_value_and_grad" if with_value else "_grad")
    outputs = derivative.outputs
    value, gradients = (outputs[0], outputs[1:]) if with_value else (None, outputs)
    result = tuple(gradients) if several else gradients[0]
    derivative.outputs = [value, result] if with_value else [result]
    generated = generate(derivative)
    function = compile_generated(generated, fn)
    function.source = generated.text
    function.graph = derivative
    function.original_graph = graph
    function.original = fn
    return function


def _wrt_key(wrt: Wrt) -> tuple:
    # wrt=1 returns a gradient, wrt=(1,) a 1-tuple: they are different derivatives.
    return ("several", *wrt) if isinstance(wrt, (tuple, list)) else ("one", wrt)


def _resolve_wrt(graph: Graph, wrt: Wrt, source) -> tuple[list[int], bool]:
    names = [p.hint for p in graph.params]
    several = isinstance(wrt, (tuple, list))
    items = list(wrt) if several else [wrt]
    where = {"filename": source.filename, "lineno": source.tree.lineno,
                 "source_line": source.line(source.tree.lineno)}
    signature = f"{graph.name}({', '.join(names)})"
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must name arguments by index or name, got {item!r}", **where)
        if isinstance(item, str):
            if item not in names:
                raise WrtError(f"wrt={item!r} is not an argument of {signature}", **where)
            index = names.index(item)
        else:
            if not -len(names) <= item < len(names):
                raise WrtError(f"wrt={item} is out of range: {signature} has "
                               f"{len(names)} argument(s)", **where)
            index = item % len(names)
        if index in indices:
            raise WrtError(f"wrt names the argument {names[index]!r} twice", **where)
        indices.append(index)
    if several and not indices:
        raise WrtError("wrt is empty: name at least one argument", **where)
    return indices, several


def _weakrefable(fn: Callable) -> bool:
    return isinstance(fn, types.FunctionType)
