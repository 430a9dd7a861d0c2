"""Plain-text rendering of a graph: one node per line, with its source line.

>>> import autodiff as ad, numpy as np
>>> def f(x):
...     return np.sum(np.sin(x))
>>> print(ad.grad(f).original_graph)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autodiff.graph.names import assign_names
from autodiff.graph.nodes import Const, Operand, Region, SliceSpec, Value, walk

if TYPE_CHECKING:  # the graph module shows itself with this one
    from autodiff.graph.ir import Graph


def format_operand(operand: Operand, names: dict[Value, str]) -> str:
    """Render an operand the way it would read in Python."""
    if isinstance(operand, Value):
        return names.get(operand, repr(operand))
    if isinstance(operand, Const):
        return operand.path or repr(operand.value)
    if isinstance(operand, SliceSpec):
        parts = [
            "" if isinstance(p, Const) and p.value is None else format_operand(p, names)
            for p in (operand.start, operand.stop, operand.step)
        ]
        return ":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else "")
    if isinstance(operand, tuple):
        inner = ", ".join(format_operand(item, names) for item in operand)
        return f"({inner},)" if len(operand) == 1 else f"({inner})"
    return repr(operand)


def format_graph(graph: Graph) -> str:
    """Text of ``graph``: a header with the parameters, the nodes, the outputs.

    Branches and loops print as indented blocks; ``yield`` lists the values a
    block hands back (the values after a branch, or to the next iteration).
    """
    names, _ = assign_names(graph)
    for node in walk(graph.nodes):
        if not isinstance(node, Region) and node.op.inline:  # a read of a global or closure
            names[node.out] = node.args[0].value
    lines = [f"graph {graph.name}({', '.join(names[p] for p in graph.params)}):"]
    rows: list[tuple[str, str]] = []
    _format_nodes(graph.nodes, names, rows, "    ")
    width = max((len(text) for text, _ in rows), default=0)
    for text, where in rows:
        lines.append(f"{text.ljust(width)}  # {where}" if where else text)
    outputs = ", ".join(format_operand(o, names) for o in graph.outputs)
    lines.append(f"    return {outputs}")
    return "\n".join(lines)


# What a node's line is to it, by the node's phase: ``grad of line 7`` (the text views,
# the picture and the generated code's comments say it alike).
PHASE_PREFIX = {"backward": "grad of ", "tangent": "tangent of ", "recompute": "recomputed: "}


def _where(node) -> str:
    where = f"line {node.loc.lineno}" if node.loc else ""
    return PHASE_PREFIX.get(node.phase, "") + where if where else where


def _format_nodes(nodes: list, names: dict, rows: list, indent: str) -> None:
    def operands(items) -> str:
        return ", ".join(format_operand(item, names) for item in items)

    for node in nodes:
        if isinstance(node, Region):
            outs = operands(node.outs)
            if node.branches:
                header, labels = _branch_labels(node, operands)
                rows.append((f"{indent}{outs} = {header}:", _where(node)))
                for label, block in zip(labels, node.blocks):
                    if label:
                        rows.append((f"{indent}{label}", ""))
                    _format_block(block, names, rows, indent + "    ")
                continue
            params = operands(node.carried())
            init = operands(node.init)
            if node.kind == "for":
                index = format_operand(node.body.params[0], names)
                span = operands(node.args[:3])
                order = "reversed range" if node.reverse else "range"
                header = f"for {index} in {order}({span})"
            else:
                header = "while"
            rows.append((f"{indent}{outs} = {header} with {params} from ({init}):",
                         _where(node)))
            if node.kind == "while":
                _format_block(node.blocks[0], names, rows, indent + "    ", "test")
            _format_block(node.body, names, rows, indent + "    ")
            continue
        if node.op.inline:
            continue
        target = "" if node.op.statement else f"{names[node.out]} = "
        rows.append((f"{indent}{target}{call_text(node, names)}", _where(node)))


def call_text(node, names: dict[Value, str]) -> str:
    """``power(x, 2)``, ``sum(t3, axis=1)``: a node's op and its operands, constants
    included, a setting by its name unless it has its default value."""
    args = ", ".join(
        f"{param}={format_operand(arg, names)}" if param in node.op.defaults
        else format_operand(arg, names)
        for param, arg in zip(node.op.params, node.args)
        if not (param in node.op.defaults and isinstance(arg, Const)
                and _is_default(arg.value, node.op.defaults[param]))
    )
    return f"{node.op.name}({args})"


def _branch_labels(region: Region, operands) -> tuple[str, list[str]]:
    """The header of a region running one of its blocks, and the line before each block."""
    if region.kind == "if":
        return f"if {operands(region.args)}", ["", "else:"]
    if region.kind == "switch":
        return (f"switch {operands(region.args)}",
                [f"case {k}:" for k in range(len(region.blocks))])
    return "try", ["", *(f"except {operands((caught,))}:" for caught in region.args)]


def _format_block(block, names: dict, rows: list, indent: str, keyword: str = "yield") -> None:
    _format_nodes(block.nodes, names, rows, indent)
    results = ", ".join(format_operand(r, names) for r in block.results)
    rows.append((f"{indent}{keyword} {results}", ""))


def _is_default(value: object, default: object) -> bool:
    return type(value) is type(default) and value == default
