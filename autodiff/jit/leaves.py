"""``jit="numba"`` with structured arguments: numba takes arrays and numbers, never a
dict, a list of layers or an object of the user's class, so the specialised graph is
cut in three.

- the reads of the leaves at its top (``params_W1 = params['W1']``);
- the kernel, everything else: from the leaves (and the arguments that are arrays)
  to the leaves of the results. numba compiles it;
- the building of the results' structures at its end (``{'W1': dparams_W1, ...}``,
  a namedtuple's ``_replace``, ``with_fields(self, ...)`` for an object, a dict
  of metrics returned beside a loss).

A Python function around the kernel reads each leaf once and builds each structure
once, as the code ``jit=True`` runs does; it does nothing else. Settings inside a
structure (an int, a string, None) are constants of the graph already: a new
setting is a new signature, compiled again.

An object of the user's class a global or closure variable holds (a module-level
model, see :mod:`autodiff.frontend.objects`) is read the same way: the function
around the kernel takes it as a keyword-only parameter, read from its namespace at
each call (so an optimiser's step is seen), checks its settings
(``settings_unchanged``) and reads its leaves (``model_W = model.W``), which the
kernel takes as arguments. Its reads inside a loop or a branch are made once, before
the kernel: the derivative cannot change what the object holds.

>>> import numpy as np, autodiff as ad
>>> def loss(params, x):
...     return np.sum(np.tanh(x @ params["W"] + params["b"]))
>>> g = ad.grad(loss, jit="numba")  # doctest: +SKIP
>>> print(g.source_for({"W": np.ones((3, 2)), "b": np.zeros(2)}, np.ones(3)))  # doctest: +SKIP
"""

from __future__ import annotations

import ast
import dataclasses
import keyword
from collections import Counter
from collections.abc import Callable

import numpy as np

from autodiff.codegen import origins
from autodiff.codegen.compile import remember_source
from autodiff.codegen.derivative import anchor
from autodiff.codegen.python import RUNTIME_NAMES, Expressions, function_name
from autodiff.errors import ArgumentKindError, AutodiffError
from autodiff.frontend.structures import ARRAY, argument_spec
from autodiff.graph.ir import (
    Block,
    Graph,
    Location,
    Node,
    Region,
    Signature,
    Value,
    free_values,
    map_operand,
    operand_values,
    walk,
)
from autodiff.graph.scopes import Home
from autodiff.jit.infer import Spec
from autodiff.ops.control import variable as variable_op
from autodiff.ops.structures import part_read

_HINT = "use jit=True, which runs the same specialised code with NumPy"


@dataclasses.dataclass
class Cut:
    """A specialised graph cut around its kernel (see the module's docstring)."""

    graph: Graph  # the whole specialised graph
    kernel: Graph  # leaves in, leaves out: what numba compiles
    reads: list[Node]  # the reads of leaves, in order
    builds: list[Node]  # the structures the results are built as, in order
    names: dict[Value, str]  # how the function around the kernel names each value
    # the results NumPy gives as a NumPy scalar (np.float32), numba as a Python number:
    # the name of their type in NumPy
    scalars: dict[Value, str]
    # the objects global or closure variables hold, read as structures: the keyword-only
    # parameter of the function around the kernel for each, (name, scope) it reads
    variables: dict[str, tuple] = dataclasses.field(default_factory=dict)

    def wrap(self, kernel: Callable, general: Callable) -> Callable:
        """The function around ``kernel`` (the compiled kernel graph): it reads the
        leaves, calls the kernel and builds the results."""
        text, marks = self._text()
        namespace = {function_name(self.kernel.name): kernel, "AutodiffError": AutodiffError}
        used = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
        namespace.update({name: RUNTIME_NAMES[name] for name in used & set(RUNTIME_NAMES)})
        filename = remember_source(text, f"leaves of {general.__name__}")
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - names only, no values
        function = namespace[function_name(self.graph.name)]
        function.__defaults__ = getattr(general, "__defaults__", None)
        function.__kwdefaults__ = getattr(general, "__kwdefaults__", None)
        where = getattr(general, "where", None)
        if marks and where is not None:  # a global's settings changed: at the user's line
            origins.register(function, filename, origins.Origins(
                function.__name__, 1, marks, (where.filename, where.lineno or None, where.text)))
        return function

    def text(self) -> str:
        """The source of the function around the kernel."""
        return self._text()[0]

    def _text(self) -> tuple[str, dict[int, tuple]]:
        """The source of the function around the kernel, and where its lines come from:
        the user's line of each check of a global object's settings (then the body runs
        in a ``try`` that points such an error there), nothing for the others."""
        names, kernel = self.names, self.kernel
        write = Expressions(names, {read: name for name, read in self.variables.items()})
        lines, marks = [], {}
        for node in self.reads:
            if not node.op.statement:
                lines.append(f"{names[node.out]} = {write.of_node(node)}")
                continue
            if node.loc is not None:  # (a check of a global's settings)
                where = f" (in {node.loc.function})" if node.loc.function else ""
                marks[len(lines)] = (node.loc, "forward")
                lines.append(f"# line {node.loc.lineno}{where}: {node.loc.text}")
            lines.append(write.of_node(node))
        call = f"{function_name(kernel.name)}({', '.join(names[p] for p in kernel.params)})"
        outs = [names[v] for v in kernel.outputs]
        if marks:
            marks[len(lines)] = (None, "forward")
        lines.append(f"{', '.join(outs)} = {call}" if outs else call)
        lines += [f"{names[v]} = np.{kind}({names[v]})" for v, kind in self.scalars.items()]
        for node in self.builds:
            write.inline(node)
        outputs = self.graph.outputs
        lines.append("return " + write.of_operand(outputs[0] if len(outputs) == 1
                                                  else tuple(outputs)))
        if marks:
            lines = ["try:", *(f"    {line}" for line in lines),
                     "except AutodiffError as error:", "    raise at_user_line(error)"]
        header = dataclasses.replace(self.graph.signature, defaults={}).text(
            list(self.variables))
        first = 3 if marks else 2  # the line of the body's first statement
        return (f"def {function_name(self.graph.name)}({header}):\n"
                + "".join(f"    {line}\n" for line in lines),
                {first + number: mark for number, mark in marks.items()})


def cut(graph: Graph, values: dict, general: Callable, env: dict) -> Cut | None:
    """``graph`` (specialised to ``values``, the arguments by name; ``env``: what is
    known of each of its values) cut around its kernel; None when every argument is
    an array or a number and every result is what numba returns. What numba could
    not take is refused, naming it."""
    specs = {p: argument_spec(values.get(p.hint)) for p in graph.params}
    reads, root = _reads(graph, specs)
    objects = _global_objects(graph)
    root.update({whole: whole for whole in objects})
    reads += _read_once(graph, _object_reads(graph, objects, root), objects)
    builds = _builds(graph)
    outside = {id(node) for node in reads + builds}
    nodes = [node for node in graph.nodes if id(node) not in outside]
    around = set(graph.params) | {node.out for node in reads} | {node.out for node in builds}
    results = [*graph.outputs, *(a for node in builds for a in node.args)]
    leaves_out = list(dict.fromkeys(v for o in results for v in operand_values(o)
                                    if v not in around))
    free = set(free_values([Block(nodes=nodes, results=leaves_out)]))
    known = _leaf_values(reads, graph, values, objects)
    paths = _paths(reads, graph, objects)
    for value in free:
        if specs.get(value, ARRAY) != ARRAY or value in root and not _numba_takes(known[value]):
            raise _refused(general, value, paths, known)
    _refuse_structures_inside(nodes, general)
    leaves_in = [leaf for p in [*graph.params, *dict.fromkeys(objects.values())]
                 for leaf in ([p] if specs.get(p) == ARRAY else
                              [node.out for node in reads if node.out in root
                               and objects.get(root[node.out], root[node.out]) == p])
                 if leaf in free]
    scalars = {v: kind for v in leaves_out if (kind := _numpy_scalar(env.get(v)))}
    if all(spec == ARRAY for spec in specs.values()) and not scalars and not objects:
        return None
    used = _needed(reads, {*leaves_in, *(v for o in results for v in operand_values(o))})
    kernel_name = function_name(graph.name + "_kernel")
    home = Home.of_function(anchor(general))
    variables = _parameters(graph.params, objects, kernel_name, home)
    names = _names(graph.params, [node.out for node in used if not node.op.statement],
                   leaves_out, kernel_name, variables)
    for value in leaves_in:  # the kernel's parameters, named as the function passes them
        value.hint = names[value]
    kernel = Graph(graph.name + "_kernel", leaves_in, nodes, leaves_out, graph.filename,
                   Signature(positional=[value.hint for value in leaves_in]))
    kernel.return_location = graph.return_location
    held = sorted(((names[whole], read) for whole, read in objects.items()),
                  key=lambda item: not home.holds(*item[1]))  # the function's own first
    return Cut(graph, kernel, [node for node in used if node.op is not variable_op], builds,
               names, scalars, dict(held))


def _reads(graph: Graph, specs: dict) -> tuple[list[Node], dict[Value, Value]]:
    """The nodes reading a part of a structured argument (or of a part read before),
    and the argument each part comes from."""
    root = {p: p for p, spec in specs.items() if spec != ARRAY}
    reads = []
    for node in graph.nodes:
        read = None if isinstance(node, Region) else part_read(node, indexing=True)
        if read is not None and read[0] in root:
            reads.append(node)
            root[node.out] = root[read[0]]
    return reads, root


def _builds(graph: Graph) -> list[Node]:
    """The structures built only to be returned (or to be part of a structure returned):
    the function around the kernel builds them."""
    uses = graph.uses()
    taken = Counter(v for o in graph.outputs for v in operand_values(o))
    builds = []
    for node in reversed(graph.nodes):
        if (not isinstance(node, Region) and node.op.name == "structure"
                and uses.get(node.out, 0) == taken[node.out]):
            builds.append(node)
            taken.update(v for a in node.args for v in operand_values(a))
    return builds[::-1]


def _needed(reads: list[Node], wanted: set[Value]) -> list[Node]:
    """The reads the function around the kernel makes: of the values in ``wanted``
    (the leaves the kernel takes, the values returned as they are) and of the parts
    they are read from."""
    wanted = set(wanted)
    needed = []
    for node in reversed(reads):
        if node.out in wanted or node.op.statement:  # (the check of a global's settings)
            needed.append(node)
            wanted.add(node.args[0])
    return needed[::-1]


def _names(params: list[Value], reads: list[Value], outs: list[Value],
           kernel: str, variables: dict[Value, str]) -> dict[Value, str]:
    """Names for the values the function around the kernel holds: the arguments' own,
    the global objects' parameters (``variables``), the others after their hints,
    unique, none of them the kernel's name."""
    names = {p: p.hint for p in params} | variables
    taken = set(names.values()) | set(RUNTIME_NAMES) | {kernel}
    for value in reads + outs:
        if value in names:
            continue
        base = _hint(value)
        name, number = base, 0
        while name in taken or keyword.iskeyword(name):
            number += 1
            name = f"{base}_{number}"
        names[value] = name
        taken.add(name)
    return names


def _global_objects(graph: Graph) -> dict[Value, tuple]:
    """The reads of a global or closure variable holding an object of the user's class
    read as a structure (one whose settings a ``settings_unchanged`` checks), anywhere
    in the graph: the value each reads, and (name, scope)."""
    nodes = [node for node in walk(graph.nodes) if not isinstance(node, Region)]
    reads = {node.out: (node.args[0].value, node.args[1].value) for node in nodes
             if node.op is variable_op}
    checked = {reads[node.args[0]] for node in nodes
               if node.op.name == "settings_unchanged" and node.args[0] in reads}
    return {whole: read for whole, read in reads.items() if read in checked}


def _object_reads(graph: Graph, objects: dict[Value, tuple],
                  root: dict[Value, Value]) -> list[Node]:
    """The reads of the global objects (the variables, their checks, the parts read from
    them, where they are), taken out of the graph's loops and branches: moved to its
    top, in order, and returned. The derivative cannot change what such an object holds,
    so reading it before the computation reads the same, and checking its settings once
    checks them all."""
    moved, checked = [], set()

    def take(nodes: list) -> list:
        kept = []
        for node in nodes:
            if isinstance(node, Region):
                for block in node.blocks:
                    block.nodes[:] = take(block.nodes)
                kept.append(node)
                continue
            read = part_read(node, indexing=True)
            if read is not None and root.get(read[0]) in objects:
                root[node.out] = root[read[0]]
            elif node.op.name == "settings_unchanged" and node.args[0] in objects:
                if objects[node.args[0]] in checked:
                    continue
                checked.add(objects[node.args[0]])
            elif node.out not in objects:
                kept.append(node)
                continue
            moved.append(node)
        return kept

    nodes = take(graph.nodes)
    graph.nodes[:] = moved + nodes
    return moved


def _read_once(graph: Graph, reads: list[Node], objects: dict[Value, tuple]) -> list[Node]:
    """``reads`` (of global objects, at the graph's top), each part read once: a later
    read of a part read before (``model.W`` where the model is called twice) is
    dropped, the graph reading the first instead."""
    paths = dict(objects)
    first: dict[tuple, Value] = {}
    same: dict[Value, Value] = {}
    kept = []
    for node in reads:
        read = part_read(node, indexing=True)
        if read is not None:
            path = paths[node.out] = (paths[read[0]], node.op.name, read[1])
            if path in first:
                same[node.out] = first[path]
                continue
            first[path] = node.out
        kept.append(node)
    if same:
        dropped = {id(node) for node in reads} - {id(node) for node in kept}
        graph.nodes[:] = [node for node in graph.nodes if id(node) not in dropped]
        _substitute(graph.nodes, same)
        graph.outputs = [map_operand(o, lambda v: same.get(v, v)) for o in graph.outputs]
    return kept


def _substitute(nodes: list, same: dict[Value, Value]) -> None:
    """Each operand of ``nodes`` (and of their regions' blocks) read as ``same`` says."""
    def new(value: Value) -> Value:
        return same.get(value, value)

    for node in nodes:
        node.args = tuple(map_operand(arg, new) for arg in node.args)
        if isinstance(node, Region):
            for block in node.blocks:
                _substitute(block.nodes, same)
                block.results = [map_operand(result, new) for result in block.results]


def _parameters(params: list[Value], objects: dict[Value, tuple], kernel: str,
                home: Home) -> dict[Value, str]:
    """The keyword-only parameter of the function around the kernel holding each global
    object (every read of one variable the same): its own name where it is free, first
    for a variable of the differentiated function's own module or closure (``home``)."""
    taken = {p.hint for p in params} | set(RUNTIME_NAMES) | {kernel}
    by_read: dict[tuple, str] = {}
    for name, scope in sorted(objects.values(), key=lambda read: not home.holds(*read)):
        if (name, scope) not in by_read:
            free, number = name, 0
            while free in taken or keyword.iskeyword(free):
                number += 1
                free = f"{name}_{number}"
            by_read[name, scope] = free
            taken.add(free)
    return {whole: by_read[read] for whole, read in objects.items()}


def _hint(value: Value) -> str:
    """A value's name as generated code would give it: its hint, ``d<name>`` for an
    adjoint, ``t`` for a temporary."""
    if value.hint.isidentifier():
        return value.hint
    adjoint_of = value.adjoint_of
    if adjoint_of is not None and adjoint_of.hint.isidentifier():
        return "d" + adjoint_of.hint
    return "t"


def _numpy_scalar(abstract) -> str | None:
    """The name of the NumPy scalar type (``"float32"``) of a result known to be one."""
    kind = getattr(abstract, "kind", None)
    if isinstance(abstract, Spec) and abstract.shape == () and isinstance(kind, type) and (
            issubclass(kind, np.generic)):
        name = np.dtype(kind).name
        return name if getattr(np, name, None) is kind else None
    return None


def _leaf_values(reads: list[Node], graph: Graph, values: dict,
                 objects: dict[Value, tuple]) -> dict[Value, object]:
    """The value of each part read, for these arguments and the objects the global
    variables hold now."""
    known = {p: values.get(p.hint) for p in graph.params}
    known.update({whole: scope.read(name) for whole, (name, scope) in objects.items()})
    for node in reads:
        if node.op.statement or node.op is variable_op:
            continue
        whole, key = part_read(node, indexing=True)
        part = known[whole]
        known[node.out] = getattr(part, key) if getattr(node.op, "field_name", None) else part[key]
    return known


def _paths(reads: list[Node], graph: Graph, objects: dict[Value, tuple]) -> dict[Value, str]:
    """Each argument, global object and part read, written as the user's code would
    read it (``self.layers[0].W``, ``model.W``)."""
    write = Expressions({p: p.hint for p in graph.params}
                        | {whole: name for whole, (name, _) in objects.items()})
    parts = [node for node in reads if not node.op.statement and node.op is not variable_op]
    for node in parts:
        write.inline(node)
    return {value: write.of_operand(value) for value in [*graph.params, *objects,
                                                           *(node.out for node in parts)]}


def _numba_takes(value) -> bool:
    """Whether numba takes ``value`` as an argument: an array of numbers or flags, or a
    number."""
    if type(value) is np.ndarray:
        return value.dtype.kind in "biufc"
    return isinstance(value, (float, int, complex, np.number, np.bool_))


def _refused(general: Callable, value: Value, paths: dict, known: dict) -> ArgumentKindError:
    path = paths.get(value, value.hint)
    kind = type(known.get(value)).__name__
    return ArgumentKindError(
        f"jit='numba' compiles {general.__name__} for arrays and numbers, and the "
        f"derivative takes {path} (a {kind}) whole: numba cannot take it",
        **(Location.error_fields(getattr(general, "where", None)) or {}),
        hint=f"{_HINT}; or pass the arrays {path} holds")


def _refuse_structures_inside(nodes: list[Node], general: Callable) -> None:
    """A structure built inside the computation (not only returned) would be compiled by
    numba into a kind of its own, never the dict or object the code builds."""
    for node in walk(nodes):
        if not isinstance(node, Region) and node.op.name == "structure":
            raise ArgumentKindError(
                f"jit='numba' compiles {general.__name__} for arrays and numbers, and "
                "it builds a structure (a dict, a namedtuple or an object) that is not "
                "returned as it is",
                **(Location.error_fields(node.loc) or Location.error_fields(
                    getattr(general, "where", None)) or {}),
                hint=f"{_HINT}; or return the structure itself, beside the loss")


__all__ = ["Cut", "cut"]
