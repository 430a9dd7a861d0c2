"""The intermediate representation: the graph, and (from :mod:`autodiff.graph.nodes`) its parts: values, constants, nodes.

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

from autodiff.graph.dot import drawn_nodes, graph_to_dot, render_svg
from autodiff.graph.nodes import (  # noqa: F401 - the parts of a graph, imported from here too
    REGION_KINDS,
    UNDEFINED,
    Block,
    Const,
    Location,
    Node,
    Operand,
    Region,
    RegionKind,
    Signature,
    SliceSpec,
    Token,
    Undefined,
    Value,
    defined_values,
    free_values,
    is_constant,
    map_operand,
    operand_values,
    reads,
    walk,
)
from autodiff.graph.printing import format_graph


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
        signature: Signature | None = None,
    ) -> None:
        self.name = name
        self.params = params
        self.nodes = nodes if nodes is not None else []
        self.outputs = outputs if outputs is not None else []
        self.filename = filename
        # The parameters as the generated function declares them (by default, every
        # param positional, in order).
        self.signature = signature if signature is not None else Signature(
            positional=[p.hint for p in params])
        self.return_location: Location | None = None
        # Forward mode: the tangent parameters it appended, one per differentiated param.
        self.tangent_params: list[Value] = []
        # A param passed as a structure (a dict of arrays): by its index, the operands
        # standing for its leaves, in the order of ``autodiff.tree.leaves``.
        self.argument_leaves: dict[int, list[Operand]] = {}
        # The graph computes with complex values: a complex argument, a complex number
        # written in it, an op making them (np.fft.fft). Its derivative uses each op's
        # rules for complex values (see ``Op.rules_for``).
        self.complex = False
        # A derivative graph of one holding ops whose rules hold for real values alone,
        # differentiated with those rules: it assumes real values too.
        self.real_values_assumed = False
        # Code compiled per call signature (frontend/signature.py): the globals it read
        # as constants (checked at each call), and whether a refusal of its code could
        # be answered by compiling per call signature.
        self.constants_read: list = []
        self.reads_call_facts = False

    def copy(self, bindings: dict[Value, Operand] | None = None,
             phase: str | None = None) -> tuple[Graph, dict[Value, Operand]]:
        """A deep copy with fresh values; also returns the map from old values to new.

        ``bindings`` gives params operands to stand for them (inlining the graph
        into another), and ``phase`` a phase for every copied node.
        """
        mapping: dict[Value, Operand] = dict(bindings or {})

        def fresh(value: Value) -> Value:
            adjoint_of = mapping.get(value.adjoint_of, value.adjoint_of)
            new = Value(value.hint, adjoint_of=adjoint_of if isinstance(adjoint_of, Value) else None)
            new.shape, new.floating = value.shape, value.floating
            mapping[value] = new
            return new

        def operand(o: Operand) -> Operand:
            return map_operand(o, lambda v: mapping.get(v, v))

        def copy_nodes(nodes: list) -> list:
            copied = []
            for node in nodes:
                args = tuple(operand(a) for a in node.args)
                if not isinstance(node, Region):
                    copied.append(Node(node.op, args, fresh(node.out), node.loc,
                                       phase or node.phase))
                    continue
                blocks = []
                for block in node.blocks:
                    params = [fresh(p) for p in block.params]
                    inner = copy_nodes(block.nodes)
                    blocks.append(Block(params, inner, [operand(r) for r in block.results]))
                region = Region(node.kind, args, [fresh(o) for o in node.outs], blocks,
                                node.loc, phase or node.phase)
                region.reverse, region.until = node.reverse, node.until
                copied.append(region)
            return copied

        params = [mapping[p] if p in mapping else fresh(p) for p in self.params]
        nodes = copy_nodes(self.nodes)
        outputs = [operand(o) for o in self.outputs]
        graph = Graph(self.name, params, nodes, outputs, self.filename, self.signature)
        graph.return_location = self.return_location
        graph.complex = self.complex
        graph.real_values_assumed = self.real_values_assumed
        graph.constants_read = self.constants_read
        graph.reads_call_facts = self.reads_call_facts
        graph.tangent_params = [mapping.get(p, p) for p in self.tangent_params]
        graph.argument_leaves = {i: [operand(leaf) for leaf in leaves]
                                 for i, leaves in self.argument_leaves.items()}
        return graph, mapping

    def uses(self) -> dict[Value, int]:
        """How many times each value is read by a node or an output."""
        counts: dict[Value, int] = {}
        for value in reads([Block(nodes=self.nodes, results=self.outputs)]):
            counts[value] = counts.get(value, 0) + 1
        return counts

    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        params = ", ".join(p.hint or "_" for p in self.params)
        return f"<Graph {self.name}({params}): {drawn_nodes(self)} nodes; print() shows them>"

    def to_dot(self, by_line: bool | None = None) -> str:
        """The graph in Graphviz DOT syntax; ``by_line``: one box per line of the user's
        code (by default when the graph is large, see :mod:`autodiff.graph.dot`)."""
        return graph_to_dot(self, by_line)

    def to_svg(self, by_line: bool | None = None) -> str | None:
        """The picture of the graph Graphviz draws, as SVG text; None without Graphviz."""
        return render_svg(graph_to_dot(self, by_line))

    # A notebook (IPython, by these names) shows the picture, or the text without
    # Graphviz: IPython takes a None from _repr_svg_ as "no picture".
    def _repr_svg_(self) -> str | None:
        return self.to_svg()

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(format_graph(self))
