"""A derivative graph as the function the user gets: generated, compiled, and carrying
``.source``, ``.graph``, ``.original_graph``, ``.original``, ``.where`` and
``.export()`` (the derivative as a module of its own, :mod:`.export`)."""

from __future__ import annotations

import functools
import gc
import threading
import types
from collections.abc import Callable

from autodiff.codegen.compile import compile_generated
from autodiff.codegen.display import show_in_notebooks
from autodiff.codegen.export import export_module
from autodiff.codegen.python import generate
from autodiff.graph.ir import Graph, Location
from autodiff.graph.scopes import Home
from autodiff.ops.custom import CustomGradient
from autodiff.transforms.aliases import copy_aliased_gradients
from autodiff.transforms.complex_values import hands_over_complex

class _Compiling:
    """One compilation at a time in the process (building a derivative, specialising
    one): CPython 3.11's ast.parse is not safe to run in two threads at once.

    The cyclic garbage collector is paused while one runs. A compilation makes
    objects by the hundred thousand (syntax trees, graphs, text) and frees nearly all
    of them by their counts; what the collector did meanwhile was walk the ones
    still held, the whole heap at each full collection: a tenth of the time of a
    function of 400 lines, a sixth of one of 800, and more the longer it is. It runs
    again as before once the outermost compilation ends."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self._resume = False  # whether the collector ran when the outermost one began

    def __enter__(self) -> None:
        self._lock.acquire()
        self._depth += 1
        if self._depth == 1:
            self._resume = gc.isenabled()
            gc.disable()

    def __exit__(self, *exc_info) -> None:
        self._depth -= 1
        if self._depth == 0 and self._resume:
            gc.enable()
        self._lock.release()


compiling = _Compiling()


def anchor(fn: Callable) -> types.FunctionType:
    """The user function whose module, closure and defaults a derivative runs with."""
    while getattr(fn, "original", None) is not None:
        fn = fn.original
    if isinstance(fn, CustomGradient):
        fn = fn.fn
    return fn if isinstance(fn, types.FunctionType) else _blank


def _blank(): ...


def finish(graph: Graph, fn: Callable, original_graph: Graph, where: Location,
           check_finite: bool = False, by_structure: Callable | None = None) -> Callable:
    """The function running the derivative ``graph`` of ``fn`` (whose own graph is
    ``original_graph``); errors about it as a whole point at ``where``. Calls with a
    structure among their arguments go to ``by_structure`` when given."""
    # Two gradients computed as one value (merged as common subexpressions) are
    # returned as two arrays.
    copy_aliased_gradients(graph)
    user = anchor(fn)
    generated = generate(graph, Home.of_function(user), check_finite=check_finite,
                         by_structure=by_structure, complex_arguments=by_structure is not None
                         and hands_over_complex(graph))
    signature = graph.signature
    function = compile_generated(generated, user, defaults=signature.default_values,
                                 kwdefaults=signature.kwdefault_values,
                                 where=(where.filename, where.lineno or None, where.text))
    function.source = generated.text
    function.check_finite = check_finite
    function.graph = graph
    function.original_graph = original_graph
    function.original = fn
    function.where = where
    # the globals code compiled per call signature read as constants (checked per call)
    function.constants_read = graph.constants_read = original_graph.constants_read
    graph.reads_call_facts = original_graph.reads_call_facts
    show_in_notebooks(function)
    function.export = functools.partial(export_module, function, user)
    return function
