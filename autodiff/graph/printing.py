"""Plain-text rendering of a graph: one node per line, with its source line.

>>> import autodiff as ad, numpy as np
>>> def f(x):
...     return np.sum(np.sin(x))
>>> print(ad.grad(f).original_graph)  # doctest: +SKIP
"""

from __future__ import annotations

from autodiff.graph.ir import Const, Graph, Operand, SliceSpec, Value
from autodiff.graph.names import assign_names


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
    """Text of ``graph``: a header with the parameters, the nodes, the outputs."""
    names, _ = assign_names(graph)
    for node in graph.nodes:
        if node.op.inline:  # a read of the user's global or closure variable
            names[node.out] = node.args[0].value
    lines = [f"graph {graph.name}({', '.join(names[p] for p in graph.params)}):"]
    rows = []
    for node in graph.nodes:
        if node.op.inline:
            continue
        args = ", ".join(
            f"{param}={format_operand(arg, names)}" if param in node.op.defaults
            else format_operand(arg, names)
            for param, arg in zip(node.op.params, node.args)
            if not (param in node.op.defaults and isinstance(arg, Const)
                    and _is_default(arg.value, node.op.defaults[param]))
        )
        text = f"    {names[node.out]} = {node.op.name}({args})"
        where = f"line {node.loc.lineno}" if node.loc else ""
        if node.phase == "backward" and where:
            where = "grad of " + where
        rows.append((text, where))
    width = max((len(text) for text, _ in rows), default=0)
    for text, where in rows:
        lines.append(f"{text.ljust(width)}  # {where}" if where else text)
    outputs = ", ".join(format_operand(o, names) for o in graph.outputs)
    lines.append(f"    return {outputs}")
    return "\n".join(lines)


def _is_default(value: object, default: object) -> bool:
    return type(value) is type(default) and value == default
