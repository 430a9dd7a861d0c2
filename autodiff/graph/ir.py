"""The intermediate representation: values, constants, nodes and graphs.

A graph is a list of nodes in execution order. Each node applies one op to its
operands and defines exactly one new value (static single assignment). An
operand is a :class:`Value`, a :class:`Const`, a :class:`SliceSpec` or a plain
tuple of operands (for sequence arguments such as ``np.stack([a, b])`` and
multi-part indices such as ``x[1:, None]``).

>>> from autodiff.graph.ir import Graph, Value, Const
>>> g = Graph("f", params=[Value("x")])
>>> g.params[0].hint
'x'
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_ids = itertools.count()


@dataclass(frozen=True)
class Location:
    """Where a node comes from in the user's source."""

    filename: str
    lineno: int
    text: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class Value:
    """A value defined once: a parameter or the result of one node.

    ``hint`` is the user's variable name when there is one (``""`` for a
    temporary); ``adjoint_of`` marks the adjoint of another value, which codegen
    names ``d<name>``. ``shape`` is a token shared by values known to have the
    same shape (see :mod:`autodiff.graph.shapes`); ``floating`` says the value is
    known to be floating point.
    """

    __slots__ = ("adjoint_of", "floating", "hint", "id", "node", "shape")

    def __init__(self, hint: str = "", *, adjoint_of: Value | None = None) -> None:
        self.hint = hint
        self.node: Node | None = None
        self.adjoint_of = adjoint_of
        self.shape: object = object()
        self.floating = False
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"Value({self.hint or 't'}#{self.id})"


@dataclass(frozen=True)
class Const:
    """A compile-time constant; ``path`` is the source expression naming it, if any."""

    value: Any
    path: str | None = None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Const)
            and type(self.value) is type(other.value)
            and _same_constant(self.value, other.value)
            and self.path == other.path
        )

    def __hash__(self) -> int:
        try:
            return hash((type(self.value), self.value, self.path))
        except TypeError:
            return hash((type(self.value), id(self.value), self.path))


def _same_constant(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if a is not b else True
    except (ValueError, TypeError):
        return a is b


@dataclass(frozen=True)
class SliceSpec:
    """``start:stop:step`` inside an index; each part is an operand."""

    start: Operand
    stop: Operand
    step: Operand


Operand = Value | Const | SliceSpec | tuple


def operand_values(operand: Operand) -> Iterator[Value]:
    """Every :class:`Value` an operand refers to, in order."""
    if isinstance(operand, Value):
        yield operand
    elif isinstance(operand, SliceSpec):
        for part in (operand.start, operand.stop, operand.step):
            yield from operand_values(part)
    elif isinstance(operand, tuple):
        for item in operand:
            yield from operand_values(item)


def map_operand(operand: Operand, fn) -> Operand:
    """Rebuild ``operand`` with every Value ``v`` replaced by ``fn(v)``."""
    if isinstance(operand, Value):
        return fn(operand)
    if isinstance(operand, SliceSpec):
        return SliceSpec(*(map_operand(p, fn) for p in (operand.start, operand.stop, operand.step)))
    if isinstance(operand, tuple):
        return tuple(map_operand(item, fn) for item in operand)
    return operand


def is_constant(operand: Operand) -> bool:
    """True when the operand refers to no runtime value at all."""
    return next(operand_values(operand), None) is None


class Node:
    """One operation: ``out = op(*args)``, with ``args`` in the op's parameter order."""

    __slots__ = ("args", "loc", "op", "out", "phase")

    def __init__(self, op, args: tuple, out: Value, loc: Location | None, phase: str) -> None:
        self.op = op
        self.args = tuple(args)
        self.out = out
        self.loc = loc
        self.phase = phase
        out.node = self

    @property
    def named_args(self) -> dict[str, Operand]:
        return dict(zip(self.op.params, self.args))

    def inputs(self) -> Iterator[Value]:
        for arg in self.args:
            yield from operand_values(arg)

    def __repr__(self) -> str:
        return f"Node({self.out!r} = {self.op.name}{self.args!r})"


class Graph:
    """A function as a static graph: parameters, nodes in order, outputs.

    ``print(graph)`` shows one node per line; ``graph.to_dot()`` gives Graphviz text.
    """

    def __init__(
        self,
        name: str,
        params: list[Value],
        nodes: list[Node] | None = None,
        outputs: list[Operand] | None = None,
        filename: str = "<unknown>",
    ) -> None:
        self.name = name
        self.params = params
        self.nodes = nodes if nodes is not None else []
        self.outputs = outputs if outputs is not None else []
        self.filename = filename
        self.return_location: Location | None = None

    def copy(self) -> tuple[Graph, dict[Value, Value]]:
        """A deep copy with fresh values; also returns the map from old values to new."""
        mapping: dict[Value, Value] = {}

        def fresh(value: Value) -> Value:
            new = Value(value.hint, adjoint_of=mapping.get(value.adjoint_of, value.adjoint_of))
            new.shape, new.floating = value.shape, value.floating
            mapping[value] = new
            return new

        params = [fresh(p) for p in self.params]
        nodes = []
        for node in self.nodes:
            args = tuple(map_operand(a, lambda v: mapping.get(v, v)) for a in node.args)
            nodes.append(Node(node.op, args, fresh(node.out), node.loc, node.phase))
        outputs = [map_operand(o, lambda v: mapping.get(v, v)) for o in self.outputs]
        graph = Graph(self.name, params, nodes, outputs, self.filename)
        graph.arguments = getattr(self, "arguments", None)
        graph.return_location = self.return_location
        return graph, mapping

    def uses(self) -> dict[Value, int]:
        """How many times each value is read by a node or an output."""
        counts: dict[Value, int] = {}
        for node in self.nodes:
            for value in node.inputs():
                counts[value] = counts.get(value, 0) + 1
        for output in self.outputs:
            for value in operand_values(output):
                counts[value] = counts.get(value, 0) + 1
        return counts

    def __str__(self) -> str:
        from autodiff.graph.printing import format_graph

        return format_graph(self)

    def to_dot(self) -> str:
        """The graph in Graphviz DOT syntax."""
        from autodiff.graph.dot import graph_to_dot

        return graph_to_dot(self)
