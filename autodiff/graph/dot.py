"""Graphviz DOT export of a graph.

>>> from autodiff.graph.ir import Graph, Value
>>> print(graph_to_dot(Graph("f", [Value("x")])).splitlines()[0])
digraph "f" {
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autodiff.graph.names import assign_names
from autodiff.graph.nodes import Region, operand_values, walk

if TYPE_CHECKING:  # the graph module shows itself with this one
    from autodiff.graph.ir import Graph


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _values(graph: Graph):
    yield from graph.params
    for node in walk(graph.nodes):
        yield from node.outs
        if isinstance(node, Region):
            for block in node.blocks:
                yield from block.params


def _nodes_to_dot(nodes: list, names: dict, ids: dict, lines: list, indent: str) -> None:
    """One ellipse per node, one cluster per block of a branch or loop."""
    for node in nodes:
        color = ', color="firebrick"' if node.phase == "backward" else ""
        if isinstance(node, Region):
            for index, block in enumerate(node.blocks):
                lines.append(f"{indent}subgraph {_quote(f'cluster_{id(block)}')} {{")
                label = _block_label(node, index)
                lines.append(f"{indent}    label={_quote(label)};")
                for param in block.params:
                    lines.append(f"{indent}    {_quote(ids[param])} "
                                 f"[label={_quote(names.get(param) or '_')}, shape=box];")
                _nodes_to_dot(block.nodes, names, ids, lines, indent + "    ")
                lines.append(f"{indent}}}")
            for out in node.outs:
                label = f"{names.get(out, '?')} = {node.kind}"
                lines.append(f"{indent}{_quote(ids[out])} [label={_quote(label)}{color}];")
                for value in dict.fromkeys(node.inputs()):
                    lines.append(f"{indent}{_quote(ids.get(value, names.get(value, '?')))} -> "
                                 f"{_quote(ids[out])};")
            continue
        if node.op.inline or node.op.statement:
            continue
        label = f"{names[node.out]} = {node.op.name}"
        lines.append(f"{indent}{_quote(ids[node.out])} [label={_quote(label)}{color}];")
        for value in dict.fromkeys(node.inputs()):
            source = ids.get(value, names.get(value, "?"))
            lines.append(f"{indent}{_quote(source)} -> {_quote(ids[node.out])};")


def graph_to_dot(graph: Graph) -> str:
    """DOT text: parameters as boxes, one ellipse per node, edges along data flow."""
    names, _ = assign_names(graph)
    lines = [f"digraph {_quote(graph.name)} {{", "    rankdir=TB;"]
    for param in graph.params:
        lines.append(f"    {_quote(names[param])} [shape=box];")
    # Several values may share a variable name (a loop's carried value): ids tell them apart.
    ids = {value: f"{names.get(value) or 'v'}#{value.id}" for value in _values(graph)}
    ids.update({p: names[p] for p in graph.params})
    _nodes_to_dot(graph.nodes, names, ids, lines, "    ")
    for index, output in enumerate(graph.outputs):
        sink = f"output {index}"
        lines.append(f"    {_quote(sink)} [shape=doublecircle];")
        for value in operand_values(output):
            lines.append(f"    {_quote(ids.get(value, names.get(value, '?')))} -> {_quote(sink)};")
    lines.append("}")
    return "\n".join(lines)


def _block_label(region: Region, index: int) -> str:
    """What a cluster of a region's block is: ``if (then)``, ``try (except 1)``, ..."""
    if region.kind == "if":
        return f"if ({'else' if index else 'then'})"
    if region.kind == "switch":
        return f"switch (case {index})"
    if region.kind == "try":
        return f"try (except {index})" if index else "try"
    return region.kind if region.blocks[index] is region.body else "while test"
