"""Graphviz DOT export of a graph, and its picture.

Each node reads as a line of code (``t4 = power(x, 2)``, ``t7 = sum(t6, axis=1)``),
coloured by the sweep it belongs to (a legend says which), inside a cluster of the
user's line it comes from (``grad of line 7: h = np.tanh(x @ W1)``). A graph of more
than ``MAX_NODES`` nodes is drawn a line at a time: one box per line of the user's
code, holding the names of its ops, so that the derivative of a 50-step recurrence
stays a picture of the code rather than a hairball. The picture is never wider than
``WIDTH_INCHES`` (Graphviz scales a larger drawing down).

>>> from autodiff.graph.ir import Graph, Value
>>> print(graph_to_dot(Graph("f", [Value("x")])).splitlines()[0])
digraph "f" {
"""

from __future__ import annotations

import shutil
import subprocess
from typing import TYPE_CHECKING

from autodiff.graph.names import assign_names
from autodiff.graph.nodes import Region, operand_values, walk
from autodiff.graph.printing import PHASE_PREFIX, call_text

if TYPE_CHECKING:  # the graph module shows itself with this one
    from autodiff.graph.ir import Graph

# Above this many nodes, a graph is drawn one box per line of the user's code.
MAX_NODES = 120
# The widest picture, in inches (about a laptop screen at 96 pixels per inch).
WIDTH_INCHES = 13
# What a phase's nodes are drawn in, and what the legend calls them.
PHASES = {"forward": ("black", "your function"), "backward": ("firebrick", "reverse sweep"),
          "tangent": ("royalblue", "tangents (forward mode)"),
          "recompute": ("darkorange", "steps recomputed from checkpoints")}
LABEL_LENGTH = 48  # a node's label past this is cut with "..."
LINE_LENGTH = 72  # and a line of the user's code


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short(text: str, length: int = LABEL_LENGTH) -> str:
    return text if len(text) <= length else text[:length - 3] + "..."


def _color(phase: str) -> str:
    return PHASES.get(phase, PHASES["forward"])[0]


def _values(graph: Graph):
    yield from graph.params
    for node in walk(graph.nodes):
        yield from node.outs
        if isinstance(node, Region):
            for block in node.blocks:
                yield from block.params


def _line_key(node) -> tuple[str, str]:
    """(phase, the line of the user's code) a node comes from."""
    loc = node.loc
    where = f"line {loc.lineno}: {loc.text.strip()}" if loc and loc.lineno else ""
    return node.phase, where


def _line_label(key: tuple[str, str]) -> str:
    phase, where = key
    if not where:  # no line of the user's: the seed, the gradients handed back, tapes
        return PHASES.get(phase, PHASES["forward"])[1]
    return _short(PHASE_PREFIX.get(phase, "") + where, LINE_LENGTH)


def drawn_nodes(graph: Graph) -> int:
    """How many nodes a picture of ``graph`` node by node would hold."""
    return sum(1 for node in walk(graph.nodes)
               if isinstance(node, Region) or not (node.op.inline or node.op.statement))


def graph_to_dot(graph: Graph, by_line: bool | None = None) -> str:
    """DOT text: parameters as boxes, one node per operation (``by_line``: one box per
    line of the user's code; by default when there are more than ``MAX_NODES``),
    edges along data flow, a legend of the colours."""
    names, _ = assign_names(graph)
    for node in walk(graph.nodes):
        if not isinstance(node, Region) and node.op.inline:  # a read of a global
            names[node.out] = node.args[0].value
    if by_line is None:
        by_line = drawn_nodes(graph) > MAX_NODES
    lines = [f"digraph {_quote(graph.name)} {{", "    rankdir=TB;",
             f'    graph [size="{WIDTH_INCHES},200", fontname="Helvetica"];',
             '    node [fontname="Helvetica", fontsize=11];']
    for param in graph.params:
        lines.append(f"    {_quote(names[param])} [shape=box, style=bold];")
    # Several values may share a variable name (a loop's carried value): ids tell them apart.
    ids = {value: f"{names.get(value) or 'v'}#{value.id}" for value in _values(graph)}
    ids.update({p: names[p] for p in graph.params})
    if by_line:
        ids.update(_lines_to_dot(graph, names, lines))
    else:
        _nodes_to_dot(graph.nodes, names, ids, lines, "    ")
    for index, output in enumerate(graph.outputs):
        sink = f"output {index}"
        lines.append(f"    {_quote(sink)} [shape=doublecircle];")
        for value in dict.fromkeys(operand_values(output)):
            lines.append(f"    {_quote(ids.get(value, names.get(value, '?')))} -> {_quote(sink)};")
    lines += _legend(graph)
    lines.append("}")
    return "\n".join(lines)


def _legend(graph: Graph) -> list[str]:
    phases = [p for p in PHASES if any(n.phase == p for n in walk(graph.nodes))]
    lines = ['    subgraph "cluster_legend" {', '        label="legend"; color=gray;',
             '        "legend: parameter" [label="parameter", shape=box, style=bold];']
    for phase in phases:
        color, meaning = PHASES[phase]
        lines.append(f'        "legend: {phase}" [label={_quote(meaning)}, color={color}, '
                     f"fontcolor={color}];")
    lines += ['        "legend: output" [label="output", shape=doublecircle];', "    }"]
    return lines


def _nodes_to_dot(nodes: list, names: dict, ids: dict, lines: list, indent: str) -> None:
    """One node per operation, each run of nodes from one line of the user's code in a
    cluster of its own, one cluster per block of a branch or loop."""
    run: list = []

    def close_run() -> None:
        if not run:
            return
        lines.append(f"{indent}subgraph {_quote(f'cluster_{id(run[0])}')} {{")
        lines.append(f"{indent}    label={_quote(_line_label(_line_key(run[0])))}; "
                     'style=dashed; color=gray; fontcolor=gray30; labeljust=l;')
        for node in run:
            _node_to_dot(node, names, ids, lines, indent + "    ")
        lines.append(f"{indent}}}")
        run.clear()

    for node in nodes:
        if isinstance(node, Region):
            close_run()
            _region_to_dot(node, names, ids, lines, indent)
            continue
        if node.op.inline or node.op.statement:
            continue
        if run and _line_key(run[0]) != _line_key(node):
            close_run()
        run.append(node)
    close_run()


def _node_to_dot(node, names: dict, ids: dict, lines: list, indent: str) -> None:
    color = _color(node.phase)
    label = _short(f"{names[node.out]} = {call_text(node, names)}")
    lines.append(f"{indent}{_quote(ids[node.out])} [label={_quote(label)}, color={color}, "
                 f"fontcolor={color}];")
    for value in dict.fromkeys(node.inputs()):
        source = ids.get(value, names.get(value, "?"))
        lines.append(f"{indent}{_quote(source)} -> {_quote(ids[node.out])};")


def _region_to_dot(region: Region, names: dict, ids: dict, lines: list, indent: str) -> None:
    color = _color(region.phase)
    for index, block in enumerate(region.blocks):
        lines.append(f"{indent}subgraph {_quote(f'cluster_{id(block)}')} {{")
        lines.append(f"{indent}    label={_quote(_block_label(region, index))}; color={color};")
        for param in block.params:
            lines.append(f"{indent}    {_quote(ids[param])} "
                         f"[label={_quote(names.get(param) or '_')}, shape=box];")
        _nodes_to_dot(block.nodes, names, ids, lines, indent + "    ")
        lines.append(f"{indent}}}")
    for out in region.outs:
        label = f"{names.get(out, '?')} = {region.kind}"
        lines.append(f"{indent}{_quote(ids[out])} [label={_quote(label)}, color={color}, "
                     f"fontcolor={color}];")
        for value in dict.fromkeys(region.inputs()):
            lines.append(f"{indent}{_quote(ids.get(value, names.get(value, '?')))} -> "
                         f"{_quote(ids[out])};")


def _lines_to_dot(graph: Graph, names: dict, lines: list) -> dict:
    """One box per line of the user's code (per sweep), its ops listed inside, edges
    where a value one line computes is read on another; the id of the box computing
    each value."""
    boxes: dict[tuple, list[str]] = {}
    made_by: dict = {}
    reads: list[tuple] = []
    for node in walk(graph.nodes):
        if not isinstance(node, Region) and (node.op.inline or node.op.statement):
            continue
        key = _line_key(node)
        ops = boxes.setdefault(key, [])
        ops.append(node.kind if isinstance(node, Region) else node.op.name)
        for out in node.outs:
            made_by[out] = key
        if isinstance(node, Region):
            for block in node.blocks:
                made_by.update(dict.fromkeys(block.params, key))
        reads += [(value, key) for value in node.inputs()]
    box_id = {key: f"{key[0]}: {key[1]}" for key in boxes}
    for key, ops in boxes.items():
        color = _color(key[0])
        listed = ", ".join(dict.fromkeys(ops))
        label = f"{_line_label(key)}\n{len(ops)} op{'s' if len(ops) > 1 else ''}: {_short(listed)}"
        lines.append(f"    {_quote(box_id[key])} [label={_quote(label)}, shape=box, "
                     f"style=rounded, color={color}, fontcolor={color}];")
    edges = []
    for value, key in reads:
        source = made_by.get(value)
        if source == key or source is None and value not in graph.params:
            continue  # within a line, or a read of a global (named in the ops' text)
        start = box_id[source] if source is not None else names[value]
        edges.append(f"    {_quote(start)} -> {_quote(box_id[key])};")
    lines += dict.fromkeys(edges)
    return {value: box_id[key] for value, key in made_by.items()}


def render_svg(dot_text: str, timeout: float = 60.0) -> str | None:
    """The SVG picture Graphviz's ``dot`` draws of ``dot_text``; None when Graphviz is
    not installed or cannot draw it."""
    program = shutil.which("dot")
    if program is None:
        return None
    try:
        done = subprocess.run([program, "-Tsvg"], input=dot_text, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 and done.stdout else None


def _block_label(region: Region, index: int) -> str:
    """What a cluster of a region's block is: ``if (then)``, ``try (except 1)``, ..."""
    if region.kind == "if":
        return f"if ({'else' if index else 'then'})"
    if region.kind == "switch":
        return f"switch (case {index})"
    if region.kind == "try":
        return f"try (except {index})" if index else "try"
    return region.kind if region.blocks[index] is region.body else "while test"
