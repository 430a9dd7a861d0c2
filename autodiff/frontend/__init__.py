"""Frontend: Python source to graph (:func:`function_to_graph`) and rule inlining."""

from __future__ import annotations

import ast
import functools

from autodiff.errors import AutodiffError, UnsupportedSyntaxError
from autodiff.frontend.builder import GraphBuilder
from autodiff.frontend.convert import Converter
from autodiff.frontend.kinds import sequence_kinds
from autodiff.frontend.functions import closure_cells
from autodiff.frontend.source import FunctionSource, read_function
from autodiff.frontend.state import keys_read_as_passed
from autodiff.frontend.structures import (
    ARRAY,
    OPAQUE,
    Binder,
    Record,
    is_structured,
    leaves,
    taken_apart,
)
from autodiff.graph.ir import Graph, Location, Operand, Signature, Value


def function_to_graph(fn, specs: dict[str, tuple] | None = None,
                      complex_values: bool = False, known: dict | None = None
                      ) -> tuple[Graph, FunctionSource]:
    """Build the static graph of the Python function ``fn`` from its source.

    Without ``specs``, every argument is an array or a number, and code reading one
    as a structure raises :class:`~autodiff.frontend.structures.NeedsStructure`.
    ``specs`` gives the structure (:func:`~autodiff.frontend.structures.argument_spec`)
    of each argument it names: its leaves are read at the top of the graph, and
    ``graph.argument_leaves[i]`` lists the operands standing for param ``i``'s leaves.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.sum(np.sin(x))
    >>> graph, _ = function_to_graph(f)  # doctest: +SKIP

    ``complex_values`` says the arguments may be complex (``graph.complex``): the
    derivatives ``fn`` calls are then inlined in their form for complex values. A
    graph that turns out to compute with complex values (a complex number written in
    it) after inlining one in its form for real values is built again that way.

    ``known``: for code compiled per call signature (``frontend/signature.py``), the
    :class:`~autodiff.frontend.signature.ArrayFacts` of each array argument it names;
    the globals holding numbers and strings are then read as constants
    (``graph.constants_read``). A refusal raised while converting says whether the
    code read what a call signature fixes (``error.reads_call_facts``).
    """
    source = read_function(fn)
    tree = source.tree
    arguments = tree.args
    where = Location.error_fields(Location(source.filename, tree.lineno,
                                           source.line(tree.lineno)))
    if arguments.vararg or arguments.kwarg:
        raise UnsupportedSyntaxError("functions with *args or **kwargs cannot be differentiated",
                                     hint="name every argument", **where)
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    params = [Value(name) for name in names]
    graph = Graph(fn.__name__, params, filename=source.filename,
                  signature=signature_of(arguments, fn))
    graph.complex = complex_values
    converter = Converter(GraphBuilder(graph), source, fn.__globals__, closure_cells(fn))
    converter.arguments = set(params)
    if specs is None:
        converter.general_arguments = frozenset(params)
        converter.env.update(zip(names, params))
    else:
        binder = Binder(lambda op, args, hint: converter.builder.emit(op, args, hint))
        for index, (name, param) in enumerate(zip(names, params)):
            spec = specs.get(name, ARRAY)
            bound = binder.bind(spec, param, name)
            converter.env[name] = bound
            converter.array_values.update(leaf for leaf_spec, leaf in leaves(spec, bound)
                                          if leaf_spec == ARRAY and isinstance(leaf, Value))
            converter.sequence_kinds.update((id(t), (t, kind))
                                            for t, kind in sequence_kinds(spec, bound))
            converter.builder.library_objects.update(
                leaf for leaf_spec, leaf in leaves(spec, bound) if leaf_spec == OPAQUE)
            if is_structured(spec):
                graph.argument_leaves[index] = [leaf for _, leaf in leaves(spec, bound)]
                converter.caller_sequences.update(id(t) for t in _tuples(bound))
                converter.not_none.update(leaf for _, leaf in leaves(spec, bound)
                                          if isinstance(leaf, Value))
            else:
                converter.not_none.add(param)
    builder = converter.builder
    if known is not None:
        builder.fold_constants = True
        for name, param in zip(names, params):
            facts = known.get(name)
            if isinstance(facts, tuple):  # a structure's leaves
                spec = (specs or {}).get(name, ARRAY)
                for (_, leaf), leaf_facts in zip(leaves(spec, converter.env[name]), facts):
                    if leaf_facts is not None and isinstance(leaf, Value):
                        builder.knows_rank(leaf, leaf_facts.ndim, leaf_facts.dtype)
            elif facts is not None and converter.env.get(name) is param:
                builder.knows_rank(param, facts.ndim, facts.dtype)
    try:
        converter.copy_updated_arguments(tree.body)
        result = converter.run(tree.body)
    except AutodiffError as error:
        error.reads_call_facts = getattr(error, "reads_call_facts", False) or (
            builder.reads_call_facts)
        raise
    graph.constants_read = builder.constants_read
    graph.reads_call_facts = builder.reads_call_facts
    graph.outputs = [converter.returned(tree.body[-1], result)]
    graph.return_location = converter.return_location
    if graph.complex and converter.builder.inlined_real_derivative:
        return function_to_graph(fn, specs, complex_values=True, known=known)
    if converter.builder.new_keys_written:
        keys_read_as_passed(graph, converter.builder.new_keys_written)
    return graph, source


def _tuples(bound):
    if isinstance(bound, tuple):
        yield bound
        for item in bound:
            yield from _tuples(item)
    elif isinstance(bound, Record):
        for item in bound.items.values():
            yield from _tuples(item)


def signature_of(arguments: ast.arguments, fn) -> Signature:
    """The signature of ``fn`` as its ``def`` writes it (``arguments``)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults):]],
                        map(ast.unparse, arguments.defaults)))
    defaults.update((a.arg, ast.unparse(d)) for a, d in zip(arguments.kwonlyargs,
                                                            arguments.kw_defaults) if d is not None)
    return Signature([a.arg for a in arguments.posonlyargs], [a.arg for a in arguments.args],
                     [a.arg for a in arguments.kwonlyargs], defaults, fn.__defaults__,
                     fn.__kwdefaults__)


@functools.cache
def _rule_source(rule) -> FunctionSource:
    return read_function(rule)


def inline_rule(rule, builder: GraphBuilder, bindings: dict[str, Operand],
                location: Location | None, leading: tuple[Operand, ...] = ()) -> Operand:
    """Convert the gradient rule ``rule`` with its parameters bound to ``bindings``;
    ``leading`` operands bind its first parameters, whatever their names."""
    source = _rule_source(rule)
    names = [a.arg for a in source.tree.args.args]
    # a dict built for a function with a rule of its own: the rule reads its parts
    bindings = {name: taken_apart(operand)
                for name, operand in {**dict(zip(names, leading)), **bindings}.items()}
    converter = Converter(builder, source, rule.__globals__, closure_cells(rule),
                          location=location, rule=True)
    converter.env.update(bindings)
    return converter.run(source.tree.body)


__all__ = ["function_to_graph", "inline_rule", "read_function"]
