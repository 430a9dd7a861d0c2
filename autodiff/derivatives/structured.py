"""Derivatives of functions taking structures: one compiled per structure of the
arguments (:func:`~autodiff.frontend.structures.argument_spec`), as JAX traces per
pytree structure.

``ad.grad(loss)`` is compiled once for arrays and numbers when the code reads
its arguments as arrays. A call passing a dict, a list, a tuple, a namedtuple or
a dataclass (or ``None``, a string, a function) is handed over, by the first
lines of that derivative, to :class:`ByStructure`, which compiles (once per
structure) the derivative whose code reads each leaf by its key and returns
the gradient in the argument's structure. Code that reads an argument as a
structure (``params["W1"]``) has no derivative for arrays: it is compiled per
structure only.

>>> import numpy as np, autodiff as ad
>>> def loss(params, x):
...     return np.sum(np.tanh(x @ params["W"]))
>>> ad.grad(loss)({"W": np.ones((2, 2))}, np.ones(2))["W"].shape  # doctest: +SKIP
(2, 2)
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
from collections.abc import Callable

import numpy as np

from autodiff.codegen.compile import remember_source
from autodiff.codegen.display import latest_compiled_html
from autodiff.codegen.python import function_name
from autodiff.errors import AutodiffError, UndefinedNameError, raised_at_call, shortened
from autodiff.derivatives.build import primal
from autodiff.frontend.signature import signature_facts, signature_spec
from autodiff.frontend.structures import ARRAY, NeedsStructure, argument_spec, is_structured
from autodiff.ops.runtime import complex_among

# Structures kept per derivative; the oldest is dropped beyond this.
MAX_STRUCTURES = 32


class ByStructure:
    """The derivatives of one transform of one function, compiled per structure of the
    arguments, and for complex values or not, by ``build(specs, complex_values)``
    (``specs``: argument name -> spec)."""

    def __init__(self, name: str, build: Callable[..., Callable],
                 per_signature: bool = False, fn: Callable | None = None) -> None:
        self.name = name
        self.build = build
        self.fn = fn  # the function differentiated
        # Compiled per call signature (frontend/signature.py): each array argument's rank
        # and dtype, each int's value and the globals read as constants decide too.
        self.per_signature = per_signature
        self.names: list[str] = []  # the parameters, in the order calls pass them
        self.built: dict[tuple, Callable] = {}
        # The derivatives by a key cheaper to compute, for the common calls (dicts and
        # lists of arrays, and arrays): it determines the structure in those cases.
        self.quick: dict[tuple, Callable] = {}
        # Compiled per call signature: the derivatives by a key as cheap, for calls
        # passing arrays, numbers and strings alone.
        self.quick_signatures: dict[tuple, Callable] = {}
        self._lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        if self.per_signature:
            return self.for_call(args, kwargs)(*args, **kwargs)
        quick = None if kwargs else _quick_key(args)
        derivative = self.quick.get(quick) if quick is not None else None
        if derivative is None:
            try:  # (compiled at the first call with this structure)
                derivative = self.derivative_for(args, kwargs)
            except AutodiffError as error:
                raise shortened(error)  # (AUTODIFF_DEBUG=1 shows autodiff's frames)
            if quick is not None and not self.per_signature:  # (nor since this call)
                self.quick[quick] = derivative
        return derivative(*args, **kwargs)

    def for_call(self, args: tuple, kwargs: dict) -> Callable:
        """The derivative compiled per call signature for this call."""
        quick = None if kwargs else _quick_signature(args)
        derivative = self.quick_signatures.get(quick) if quick is not None else None
        if derivative is None or derivative.constants_read and not _constants_unchanged(
                derivative):
            try:  # (compiled at the first call with this signature)
                derivative = self.derivative_for(args, kwargs)
            except AutodiffError as error:
                raise shortened(error)  # (AUTODIFF_DEBUG=1 shows autodiff's frames)
            if quick is not None:
                self.quick_signatures[quick] = derivative
        return derivative

    def derivative_for(self, args: tuple, kwargs: dict) -> Callable:
        """The derivative compiled for arguments structured like these (all of them
        passed: the positional ones by position, the keyword-only ones by name)."""
        values = (*args, *kwargs.values())
        names = [*self.names[:len(args)], *kwargs]
        spec_of = signature_spec if self.per_signature else argument_spec
        specs = tuple(spec_of(a) for a in values)
        known = ({name: facts for name, facts in zip(names, map(signature_facts, values, specs))
                  if facts is not None} if self.per_signature else None)
        key = (*specs, complex_among(values), *_facts_key(known, self.names))
        derivative = self.built.get(key)
        if derivative is None or not _constants_unchanged(derivative):
            try:
                derivative = self._build(key, dict(zip(names, specs)), known)
            except _PerSignature:
                derivative = None
            if derivative is None:  # (outside the handler: a refusal then is alone)
                return self.derivative_for(args, kwargs)
        return derivative

    def for_specs(self, specs: dict[str, tuple], complex_values: bool = False,
                  known: dict | None = None) -> Callable:
        """The derivative compiled for arguments of these specs (the others arrays), and
        for complex values or not; ``known``: the facts of a call signature, for a
        derivative compiled per call signature."""
        key = (*(specs.get(name, ARRAY) for name in self.names), complex_values,
               *_facts_key(known, self.names))
        found = self.built.get(key)
        if found is not None and _constants_unchanged(found):
            return found
        try:
            return self._build(key, dict(zip(self.names, key)), known)
        except _PerSignature as switched:  # (no call to take a signature from)
            raise switched.__cause__ from None

    def _build(self, key: tuple, specs: dict[str, tuple], known: dict | None = None
               ) -> Callable:
        with self._lock:
            derivative = self.built.get(key)
            if derivative is not None and _constants_unchanged(derivative):  # (another thread)
                return derivative
            structured = {name: spec for name, spec in specs.items() if is_structured(spec)}
            complex_values = key[-2] if known is not None else key[-1]
            try:
                derivative = (self.build(structured, complex_values, known)
                              if known is not None else self.build(structured, complex_values))
            except AutodiffError as error:
                if self.per_signature or isinstance(error, (NeedsStructure, UndefinedNameError)
                                                    ) or not call_facts_may_answer(
                                                        self.fn, error, structured):
                    raise
                self.per_signature = True  # from now on: per call signature
                self.quick.clear()
                raise _PerSignature from error
            if len(self.built) >= MAX_STRUCTURES:
                del self.built[next(iter(self.built))]
                self.quick.clear()
                self.quick_signatures.clear()
            self.built[key] = derivative
            return derivative

    def source_for(self, *args, **kwargs) -> str:
        """The generated source of the derivative compiled for arguments like these."""
        return self.derivative_for(args, kwargs).source

    def export_for(self, *args, **kwargs) -> str:
        """The derivative compiled for arguments like these, as a module of its own."""
        return self.derivative_for(args, kwargs).export()


_ARRAY_TYPES = (np.ndarray, float)


class _PerSignature(Exception):
    """A build refused for what a call fixes: compiled per call signature from now on."""


def call_facts_may_answer(fn: Callable | None, error: AutodiffError,
                          specs: dict | None = None) -> bool:
    """Whether compiling per call signature may answer the refusal ``error`` of ``fn``'s
    derivative (for arguments of ``specs``): its code read what a call fixes."""
    noted = getattr(error, "reads_call_facts", None)
    if noted is not None or fn is None:
        return bool(noted)
    try:  # refused by a transform: the frontend, again, says what the code read
        graph, _ = primal(fn, specs)
        noted = graph.reads_call_facts
    except AutodiffError as again:
        noted = bool(getattr(again, "reads_call_facts", False))
    error.reads_call_facts = noted  # (for a derivative of the derivative, refused by it)
    return noted


def _quick_signature(args: tuple) -> tuple | None:
    """For arguments that are real arrays, numbers and strings: a key that determines
    their call signature (each array's rank and dtype, each int's, bool's and string's
    value), cheaper than :meth:`ByStructure.derivative_for`'s. None for anything else."""
    key = []
    for a in args:
        kind = type(a)
        if kind is np.ndarray:
            if a.dtype.kind not in "fiub":
                return None
            key.append((a.ndim, a.dtype))
        elif kind is float:
            key.append(kind)
        elif kind is int or kind is bool or kind is str:
            key.append((kind, a))
        elif kind is dict or kind is list:  # of float arrays and floats
            parts = a.values() if kind is dict else a
            leaves = tuple((p.ndim, p.dtype) if type(p) is np.ndarray and p.dtype.kind == "f"
                           else float if type(p) is float else None for p in parts)
            if None in leaves:
                return None
            key.append((tuple(a) if kind is dict else len(a), leaves))
        else:
            return None
    return tuple(key)


def _facts_key(known: dict | None, names: list[str]) -> tuple:
    """The part of a key the facts of a call signature make (none without them)."""
    if known is None:
        return ()
    return (tuple(known.get(name) for name in names) + tuple(
        (name, facts) for name, facts in known.items() if name not in names),)


def _constants_unchanged(derivative: Callable) -> bool:
    """Whether the globals a derivative compiled per call signature read as constants
    hold the values it was compiled with."""
    return all(read.unchanged() for read in getattr(derivative, "constants_read", ()))


def _quick_key(args: tuple) -> tuple | None:
    """For arguments that are real arrays, floats, and dicts, lists and tuples of them: a
    key that determines their structure (their keys and their values' types), cheaper
    than :func:`argument_spec`. None for anything else."""
    key = []
    for a in args:
        kind = type(a)
        if kind is float:
            key.append(kind)
            continue
        if kind is np.ndarray:
            if a.dtype.kind == "c":
                return None
            key.append(kind)
            continue
        if kind is dict:
            parts = a.values()
            key.append((tuple(a), tuple(map(type, parts))))
        elif kind is list or kind is tuple:
            parts = a
            key.append((kind, tuple(map(type, parts))))
        else:
            return None
        for part in parts:  # float arrays and floats: what a type alone cannot tell
            if type(part) is np.ndarray:
                if part.dtype.kind != "f":
                    return None
            elif type(part) is not float:
                return None
    return tuple(key)


def attach(derivative: Callable, by_structure: ByStructure) -> Callable:
    """``derivative`` (whose first lines hand structures to ``by_structure``) with
    ``.source_for(*args)``: the source that runs for arguments like ``args``, and
    ``.export_for(*args)``: that derivative as a module of its own."""
    signature = inspect.signature(derivative)
    by_structure.names = list(signature.parameters)

    def compiled_for(*args, **kwargs) -> Callable:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        if not any(is_structured(argument_spec(v)) for v in values) and not complex_among(
                values):
            return derivative
        args, kwargs = _call_form(signature, bound.arguments)
        return by_structure.derivative_for(args, kwargs)

    derivative.by_structure = by_structure
    derivative.source_for = lambda *args, **kwargs: compiled_for(*args, **kwargs).source
    derivative.export_for = lambda *args, **kwargs: compiled_for(*args, **kwargs).export()
    return derivative


def _call_form(signature: inspect.Signature, values: dict) -> tuple[list, dict]:
    """The arguments as the generated code passes them on: every positional one by
    position, the keyword-only ones by name."""
    keyword_only = {name for name, p in signature.parameters.items()
                    if p.kind is p.KEYWORD_ONLY}
    return ([v for n, v in values.items() if n not in keyword_only],
            {n: v for n, v in values.items() if n in keyword_only})


_HANDING_OVER = '''\
def {name}({parameters}):
    """{doc}"""
    return by_structure({call})
'''

# The same, looking up the common structures (dicts and lists of float arrays) by
# their quick key first, for a function without keyword-only parameters.
_HANDING_OVER_QUICKLY = '''\
def {name}({parameters}):
    """{doc}"""
    derivative = compiled_for(quick_key(({arguments})))
    if derivative is None:
        return by_structure({call})
    return derivative({call})
'''


def per_structure_only(fn: Callable, name: str, by_structure: ByStructure,
                       reason: Exception, extra: tuple = ()) -> Callable:
    """A derivative of ``fn`` compiled for each structure of the arguments alone: its
    code reads an argument as a structure (``reason`` says where), so no derivative
    for arrays exists. ``extra``: the parameters the derivative adds, ``(name,
    optional)`` (a vjp's seed). ``.source`` says so; ``.source_for(*args)`` shows
    the code."""
    signature, added = _with_parameters(inspect.signature(fn), extra)
    empty = inspect.Parameter.empty
    bare = signature.replace(parameters=[p.replace(default=empty, annotation=empty)
                                         for p in signature.parameters.values()],
                             return_annotation=empty)
    call = ", ".join(f"{p}={p}" if q.kind is q.KEYWORD_ONLY else p
                     for p, q in signature.parameters.items())
    doc = (f"The derivative of {fn.__name__}, compiled for " + (
        "each call's signature (its arrays' ranks and dtypes, its ints, the module's "
        "numbers it reads)" if by_structure.per_signature else
        "the structure of each call's arguments") + ": .source_for(*args) shows the code.")
    keyword_only = any(p.kind is p.KEYWORD_ONLY for p in signature.parameters.values())
    template = _HANDING_OVER if keyword_only or not signature.parameters else (
        _HANDING_OVER_QUICKLY)
    arguments = call + ("," if len(signature.parameters) == 1 else "")
    text = template.format(name=function_name(name), parameters=str(bare)[1:-1],
                           call=call, arguments=arguments, doc=doc)
    namespace = {"by_structure": by_structure, "quick_key": _quick_key,
                 "compiled_for": by_structure.quick.get}
    filename = remember_source(text, f"structures of {fn.__name__}")
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - names only, no values
    derivative = namespace[function_name(name)]
    parameters = list(signature.parameters.values())
    derivative.__defaults__ = tuple(p.default for p in parameters if p.default is not empty
                                    and p.kind is not p.KEYWORD_ONLY) or None
    derivative.__kwdefaults__ = {p.name: p.default for p in parameters
                                 if p.kind is p.KEYWORD_ONLY and p.default is not empty} or None
    derivative.__qualname__ = name
    derivative.__module__ = getattr(fn, "__module__", None)
    derivative.source = text
    derivative.original = fn
    derivative.reason = reason
    for (asked, _), final in zip(extra, added):  # the seed's or the tangent's name
        setattr(derivative, "seed_name" if asked == "seed" else "tangent_name", final)
    by_structure.names = list(signature.parameters)
    derivative.by_structure = by_structure
    derivative.source_for = raised_at_call(by_structure.source_for)
    derivative._repr_html_ = functools.partial(_per_structure_html, derivative)
    derivative.export_for = raised_at_call(by_structure.export_for)
    return derivative


def _per_structure_html(derivative: Callable) -> str:
    """What a notebook shows of a derivative compiled per structure alone: before its
    first call, that its code comes then; after, the code of the latest structure."""
    if derivative.by_structure.per_signature:
        return latest_compiled_html(
            derivative, list(derivative.by_structure.built.values()), "call signature",
            "Compiled for each call's signature (its arrays' ranks and dtypes, its ints, the "
            "module's numbers it reads) at the first call with it: its code shows here after "
            "that call (.source_for(*args) shows it now).")
    return latest_compiled_html(
        derivative, list(derivative.by_structure.built.values()), "structure",
        "Compiled for the structure of its arguments (dicts, lists, objects) at the first "
        "call with each: its code shows here after that call (.source_for(*args) shows it "
        "now).")


def _with_parameters(signature: inspect.Signature, extra: tuple
                     ) -> tuple[inspect.Signature, list[str]]:
    """``signature`` with the parameters a derivative adds, as
    :meth:`autodiff.graph.ir.Signature.with_parameter` adds them: after the others,
    keyword-only when the function has defaults, renamed away from its names; and
    the names they got."""
    parameters = list(signature.parameters.values())
    names = []
    for name, optional in extra:
        while name in {p.name for p in parameters}:
            name += "_"
        defaults = any(p.default is not p.empty for p in parameters)
        kind = (inspect.Parameter.KEYWORD_ONLY if defaults
                else inspect.Parameter.POSITIONAL_OR_KEYWORD)
        added = inspect.Parameter(name, kind, default=None if optional else
                                  inspect.Parameter.empty)
        position = next((i for i, p in enumerate(parameters) if p.kind is p.KEYWORD_ONLY),
                        len(parameters)) if kind is not inspect.Parameter.KEYWORD_ONLY else len(
                            parameters)
        parameters.insert(position, added)
        names.append(name)
    return signature.replace(parameters=parameters), names


def per_structure(fn: Callable, name: str, build: Callable[..., Callable],
                  extra: tuple = ()) -> Callable:
    """The derivative ``build(by_structure=...)`` makes (for arrays, handing structured
    calls over), or, for code reading an argument as a structure, one compiled per
    structure alone; ``build(specs=...)`` compiles it for one structure. ``extra``:
    the parameters the derivative adds to ``fn``'s, ``(name, optional)``."""
    by_structure = ByStructure(name, lambda specs, complex_values, known=None: build(
        specs=specs, complex_values=complex_values, known=known), fn=fn)
    try:
        derivative = build(by_structure=by_structure)
    except (NeedsStructure, UndefinedNameError) as reason:
        # A structure read, or a name not defined yet (a global the module defines
        # after the function): compiled at each structure's first call, when Python
        # would look the name up.
        return per_structure_only(fn, name, by_structure, reason, extra)
    except AutodiffError as reason:
        if not call_facts_may_answer(fn, reason):
            raise
        # refused for what a call fixes (an axis from x.ndim, ord=ORD): compiled for
        # each call's signature, when the ranks, dtypes and settings are known
        by_structure.per_signature = True
        return per_structure_only(fn, name, by_structure, reason, extra)
    if not isinstance(derivative, types.FunctionType):  # assembled from several
        return derivative
    return attach(derivative, by_structure)


__all__ = ["MAX_STRUCTURES", "ByStructure", "attach", "per_structure", "per_structure_only"]
