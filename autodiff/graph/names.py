"""Stable, readable names for the values of a graph.

Parameters keep their names, user variables keep theirs (``h``, then ``h_1`` when
an earlier ``h`` is still needed), adjoints are ``d`` + the primal's name and
temporaries are ``t1``, ``t2``, ... in order of definition. With
``reuse_dead=True`` a name is reused once the value it held is dead, the way a
person reassigns ``dx = dx + t`` when accumulating.

>>> from autodiff.graph.ir import Graph, Value
>>> assign_names(Graph("f", [Value("x")]))[0]
{}
"""

from __future__ import annotations

import math
from collections.abc import Callable

from autodiff.graph.ir import Graph, Value, operand_values


class _Unnamed:
    adjoint_of = None
    hint = ""


def last_uses(graph: Graph) -> dict[Value, float]:
    """Index of the last node reading each value (``inf`` for outputs)."""
    last: dict[Value, float] = {}
    for index, node in enumerate(graph.nodes):
        for value in node.inputs():
            last[value] = index
    for output in graph.outputs:
        for value in operand_values(output):
            last[value] = math.inf
    return last


def assign_names(
    graph: Graph,
    reserved: frozenset[str] = frozenset(),
    reuse_dead: bool = False,
    shares_name_with: Callable[[int], Value | None] = lambda index: None,
) -> tuple[dict[Value, str], dict[Value, str]]:
    """Return ``(names, param_names)``: a name for every value the graph defines.

    ``shares_name_with(i)`` may return an input of node ``i`` whose name the
    node's result must take over (for updates emitted in place).
    """
    last = last_uses(graph)
    names: dict[Value, str] = {}
    holder: dict[str, Value] = {}  # name -> value it currently holds
    taken: set[str] = set(reserved)
    for param in graph.params:
        names[param] = param.hint
        holder[param.hint] = param
        taken.add(param.hint)
    param_names = dict(names)
    temp_counter = 0

    def free(name: str, index: int) -> bool:
        if name not in taken:
            return True
        owner = holder.get(name)
        return reuse_dead and owner is not None and last.get(owner, -1) <= index

    inherits = {index: shares_name_with(index) for index in range(len(graph.nodes))}
    # A chain of in-place updates is one variable: name it after its most
    # meaningful member (``dx`` for the final gradient rather than ``t13``).
    root_of: dict[Value, Value] = {}
    best: dict[Value, Value] = {}
    for index, base in inherits.items():
        if base is not None:
            root = root_of.get(base, base)
            out = graph.nodes[index].out
            root_of[out] = root
            if out.adjoint_of is not None or out.hint:
                best[root] = out
    for index, node in enumerate(graph.nodes):
        value = node.out
        inherited = inherits[index]
        named_after = best.get(value, value)
        if named_after.adjoint_of is not None and named_after.adjoint_of not in names:
            named_after = _Unnamed  # its primal was optimised away: a plain temporary
        if inherited is not None:
            name = names[inherited]
        elif named_after.adjoint_of is not None or named_after.hint:
            value = named_after
            primal = value.adjoint_of
            if primal is None:
                base = value.hint
            else:
                base = "d" + names[primal]
            name, suffix = base, 0
            while not free(name, index):
                suffix += 1
                name = f"{base}_{suffix}"
        elif node.op.inline:
            name = ""  # written out at each use, never assigned
        else:
            while True:
                temp_counter += 1
                name = f"t{temp_counter}"
                if name not in taken:
                    break
        names[node.out] = name
        holder[name] = node.out
        taken.add(name)
    return names, param_names
