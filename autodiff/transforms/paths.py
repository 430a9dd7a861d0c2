"""The gradient's path through a construct a transform refuses, as the refusal shows it:
from the differentiated argument, through the construct, to the output.

    path: x → line 3: h = x * w → line 5: m, e = np.frexp(g) → line 7: return np.sum(out)

A value is on the path when it carries a gradient (it depends on a differentiated
argument) and reaches the output; the path shown is one chain of such values, each
step a line of the user's code (consecutive nodes of one line are one step).
"""

from __future__ import annotations

from collections import deque

from autodiff.graph.ir import Graph, Location, Node, Region, Value, operand_values, walk

# The longest source text a step shows.
STEP_TEXT = 48


def gradient_path(graph: Graph, node: Node, carrying: set[Value],
                  reaching: set[Value] | None = None, entering=None,
                  to_output: bool = True) -> str | None:
    """The path through ``node`` from a parameter of ``graph`` to its output: from the
    parameter to ``node``'s operands (to ``entering``, one of them, when given) over
    values ``carrying`` a gradient, from its result to the output over values
    ``reaching`` it (``carrying`` too when not given); without ``to_output``, the path
    to ``node`` alone (a call made for its effect). None when no such chain is found."""
    producers, consumers = _links(graph)
    reaching = carrying if reaching is None else reaching
    start = [v for v in operand_values(node.args if entering is None else (entering,))
             if v in carrying]
    before = _search(start, lambda v: [(producers[v], operand_values(_inputs(producers[v])))]
                     if v in producers else [], lambda v: v in graph.params, carrying)
    outputs = set(operand_values(tuple(graph.outputs)))
    after = _search([v for v in node.outs if v in reaching or v in outputs],
                    lambda v: [(n, n.outs) for n in consumers.get(v, ())],
                    lambda v: v in outputs, reaching | outputs)
    if before is None or after is None and to_output:
        return None
    first, steps_before = before  # (each search gives the nodes from where it ended)
    steps = [*steps_before, node, *(reversed(after[1]) if to_output else ())]
    parts = [first.hint or "the argument"]
    seen_lines: list[int] = []
    for step in steps:
        if isinstance(step, Region) and step.branches:
            continue  # (an if merging what its paths computed: no step of its own)
        loc = step.loc
        if loc is None or loc.lineno is None or (seen_lines and seen_lines[-1] == loc.lineno):
            continue
        seen_lines.append(loc.lineno)
        parts.append(_step_text(loc))
    if to_output and graph.return_location is not None and (
            graph.return_location.lineno not in seen_lines):
        parts.append(_step_text(graph.return_location))
    return " → ".join(parts)


def _step_text(loc: Location) -> str:
    text = (loc.text or "").strip()
    if len(text) > STEP_TEXT:
        text = text[:STEP_TEXT - 3] + "..."
    return f"line {loc.lineno}: {text}" if text else f"line {loc.lineno}"


def _inputs(node) -> tuple:
    """What a node reads (a region: its arguments and what its blocks yield)."""
    if isinstance(node, Region):
        return (*node.args, *(r for block in node.blocks for r in block.results))
    return node.args


def _links(graph: Graph) -> tuple[dict, dict]:
    """The node defining each value (a region for its outs and its blocks' params), and
    the nodes reading each value (a region for what its blocks yield)."""
    producers: dict[Value, object] = {}
    consumers: dict[Value, list] = {}
    for node in walk(graph.nodes):
        defined = list(node.outs)
        if isinstance(node, Region):
            defined += [p for block in node.blocks for p in block.params]
        for value in defined:
            producers[value] = node
        for value in operand_values(_inputs(node)):
            consumers.setdefault(value, []).append(node)
    return producers, consumers


def _search(start: list[Value], step, done, allowed: set[Value]):
    """Breadth first from ``start`` over ``step(value) -> [(node, next values)]``, within
    ``allowed``, to a value for which ``done``: that value and the nodes passed, from it
    back to ``start``; None if none is reached."""
    parent: dict[Value, tuple] = {value: (None, None) for value in start}
    queue = deque(start)
    while queue:
        value = queue.popleft()
        if done(value):
            found, nodes = value, []
            while parent[value][0] is not None:
                node, value = parent[value]
                nodes.append(node)
            return found, nodes
        for node, following in step(value):
            for nxt in following:
                if isinstance(nxt, Value) and nxt in allowed and nxt not in parent:
                    parent[nxt] = (node, value)
                    queue.append(nxt)
    return None


__all__ = ["gradient_path"]
