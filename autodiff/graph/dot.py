"""Graphviz DOT export of a graph.

>>> from autodiff.graph.ir import Graph, Value
>>> print(graph_to_dot(Graph("f", [Value("x")])).splitlines()[0])
digraph "f" {
"""

from __future__ import annotations

from autodiff.graph.ir import Graph, operand_values
from autodiff.graph.names import assign_names


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_to_dot(graph: Graph) -> str:
    """DOT text: parameters as boxes, one ellipse per node, edges along data flow."""
    names, _ = assign_names(graph)
    lines = [f"digraph {_quote(graph.name)} {{", "    rankdir=TB;"]
    for param in graph.params:
        lines.append(f"    {_quote(names[param])} [shape=box];")
    for node in graph.nodes:
        label = f"{names[node.out]} = {node.op.name}"
        color = ', color="firebrick"' if node.phase == "backward" else ""
        lines.append(f"    {_quote(names[node.out])} [label={_quote(label)}{color}];")
        for value in dict.fromkeys(node.inputs()):
            lines.append(f"    {_quote(names[value])} -> {_quote(names[node.out])};")
    for index, output in enumerate(graph.outputs):
        sink = f"output {index}"
        lines.append(f"    {_quote(sink)} [shape=doublecircle];")
        for value in operand_values(output):
            lines.append(f"    {_quote(names[value])} -> {_quote(sink)};")
    lines.append("}")
    return "\n".join(lines)

