"""What a body does, read from its syntax: names it assigns, lists it appends to,
whether it always leaves (return, break, continue)."""

from __future__ import annotations

import ast

# Flags and values of early exits, kept in the environment like variables.
RETURNED = "<returned>"
RESULT = "<return value>"
BROKE = "<break>"
CONTINUED = "<continue>"
EXIT = "<exit>"
FLAGS = (RETURNED, BROKE, CONTINUED)
# Set by ``raise``: nothing after it runs, and no path it ends is merged with others.
RAISED = "<raised>"
# How the variables standing for these read in generated code.
READABLE_NAMES = {RETURNED: "returned", RESULT: "result", BROKE: "broke", CONTINUED: "skipped",
          EXIT: "stop"}


def readable_name(name: str) -> str:
    return READABLE_NAMES.get(name, "" if name.startswith("<") else name)


def always_exits(body: list[ast.stmt]) -> bool:
    """Whether running ``body`` always ends in return, break or continue."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.With):
        return always_exits(last.body)
    return isinstance(last, ast.If) and always_exits(last.body) and always_exits(last.orelse)


def loop_exits(body: list[ast.stmt]) -> set[str]:
    """Flags a loop body may set that outlive one iteration."""
    found = set()
    for node in _walk_local(body, loops=False):
        if isinstance(node, ast.Return):
            found.update((RETURNED, RESULT))
        elif isinstance(node, ast.Break):
            found.add(BROKE)
    return found


def _walk_local(body: list[ast.stmt], loops: bool = True):
    """AST nodes of a body, not entering nested functions, lambdas, comprehensions or
    (with ``loops=False``) nested loops, whose break belongs to them (a ``break`` in a
    nested loop's ``else`` leaves the loop around it: that ``else`` is walked)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            continue
        if not loops and isinstance(node, (ast.For, ast.While)):
            todo.extend(n for stmt in node.body for n in ast.walk(stmt)
                        if isinstance(n, ast.Return))
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def assigned_names(body: list[ast.stmt], target: ast.expr | None = None) -> list[str]:
    """Names a loop body may rebind, in order of appearance (the loop carries them)."""
    names: dict[str, None] = {}
    nodes = list(_walk_local(body))
    if target is not None:
        nodes.extend(ast.walk(target))
    nodes.extend(target for node in nodes if isinstance(node, _COMPREHENSIONS)
                 for target in _named_targets(node))
    for node in sorted(nodes, key=lambda n: (getattr(n, "lineno", 0),
                                             getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names[node.id] = None
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name):
                names[base.id] = None
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
        elif is_dict_update(node):
            names[node.value.func.value.id] = None
    return [*names, *(n for n in appended_names(body) if n not in names)]


def _updated(target: ast.expr) -> ast.Name | None:
    """The name an assignment to ``target`` updates in place (``s[0] = ...``, ``s +=
    ...``), or None."""
    if isinstance(target, ast.Subscript):
        while isinstance(target, ast.Subscript):
            target = target.value
        return target if isinstance(target, ast.Name) else None
    return None


def viewed_names(body: list[ast.stmt]) -> list[str]:
    """Names of the arrays that views the body takes (``s = v[1:]``, ``s = v.T``) and
    then updates are taken from, through views of views: an update through the view
    updates them too, so a loop with this body carries them."""
    nodes = list(_walk_local(body))
    rebound = set()  # the names updated in place: s[0] = ..., s += ...
    for part in nodes:
        targets = (part.targets if isinstance(part, ast.Assign) else [part.target]
                   if isinstance(part, ast.AugAssign) else [])
        for target in targets:
            if isinstance(part, ast.AugAssign) and isinstance(target, ast.Name):
                rebound.add(target.id)
            elif _updated(target) is not None:
                rebound.add(_updated(target).id)
    views: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            base = node.value
            while isinstance(base, ast.Subscript) or isinstance(base, ast.Attribute) and (
                    base.attr == "T") or isinstance(base, ast.Call) and isinstance(
                    base.func, ast.Attribute) and base.func.attr == "transpose":
                base = base.func.value if isinstance(base, ast.Call) else base.value
            if isinstance(base, ast.Name) and base is not node.value:
                views[node.targets[0].id] = base.id
    found: dict[str, None] = {}
    todo = [name for name in rebound if name in views]
    while todo:
        source = views[todo.pop()]
        if source not in found:
            found[source] = None
            if source in views:
                todo.append(source)
    return list(found)


_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)


def _named_targets(node: ast.AST) -> list[ast.Name]:
    """The targets of ``:=`` inside a comprehension (nested ones too, not lambdas'):
    Python binds them in the function around it."""
    found, todo = [], list(ast.iter_child_nodes(node))
    while todo:
        part = todo.pop()
        if isinstance(part, ast.NamedExpr):
            found.append(part.target)
        if not isinstance(part, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend(ast.iter_child_nodes(part))
    return found


def named_in(node: ast.AST) -> list[str]:
    """The names ``:=`` binds inside the comprehension ``node``, in order."""
    return list(dict.fromkeys(target.id for target in _named_targets(node)))


def assigned_part_way(body: list[ast.stmt]) -> list[str]:
    """Names an exception raised part way through ``body`` may leave assigned or not:
    every name the body assigns but those its last statement alone binds at once
    (``x = f(y)``, ``a, b = g(y)``: an exception comes before any name is bound)."""
    if not body:
        return []
    last = body[-1]
    targets = (last.targets if isinstance(last, ast.Assign) else [last.target]
               if isinstance(last, ast.AnnAssign) and last.value is not None else None)
    whole = targets is not None and all(
        isinstance(part, (ast.Name, ast.Tuple, ast.List, ast.Starred))
        for target in targets for part in ast.walk(target) if isinstance(part, ast.expr))
    early = assigned_names(body[:-1])
    return early if whole else list(dict.fromkeys([*early, *assigned_names([last])]))


def leaves_early(body: list[ast.stmt]) -> ast.stmt | None:
    """A ``return``, ``break`` or ``continue`` of ``body`` that would leave it (not one of
    a nested function, nor a ``break``/``continue`` of a loop inside it)."""
    for node in _walk_local(body):
        if isinstance(node, ast.Return):
            return node
    for node in _walk_local(body, loops=False):
        if isinstance(node, (ast.Break, ast.Continue)):
            return node
    return None


def is_dict_update(stmt: ast.AST) -> bool:
    """Whether ``stmt`` is the statement ``name.update(...)`` (a dict the code built
    rebinds its name to the updated dict)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "update" and isinstance(call.func.value, ast.Name))


def is_list_append(stmt: ast.AST) -> bool:
    """Whether ``stmt`` is the statement ``name.append(item)``: one argument, its result
    unused (``np.append(x, y)`` is a NumPy call, not a list growing)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, ast.Name)
            and len(call.args) == 1 and not call.keywords)


def item_set_names(body: list[ast.stmt]) -> list[str]:
    """Names whose items a body sets (``hs[t + 1] = v``, ``hs[t] += v``)."""
    names: dict[str, None] = {}
    for node in _walk_local(body):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                names[target.value.id] = None
    return list(names)


def rebound_names(body: list[ast.stmt]) -> set[str]:
    """Names a body binds, deletes or updates as a whole (``h = ...``, ``h += ...``,
    ``del h``, ``h.update(...)``, ``h.append(...)``), not only by item."""
    names = {node.id for node in _walk_local(body)
             if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))}
    names.update(node.value.func.value.id for node in _walk_local(body)
                 if is_dict_update(node) or is_list_append(node))
    return names


def appended_names(body: list[ast.stmt]) -> list[str]:
    """Names of lists a body appends to (``acc.append(v)``, ``acc = acc + [v]``,
    ``acc += [v]``)."""
    names: dict[str, None] = {}
    for node in _walk_local(body):
        if is_list_append(node):
            names[node.value.func.value.id] = None
        elif (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
              and isinstance(node.target, ast.Name) and isinstance(node.value, ast.List)):
            names[node.target.id] = None
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.BinOp)
              and isinstance(node.value.op, ast.Add) and isinstance(node.value.right, ast.List)
              and isinstance(node.value.left, ast.Name)
              and node.value.left.id == node.targets[0].id):
            names[node.targets[0].id] = None
    return list(names)

