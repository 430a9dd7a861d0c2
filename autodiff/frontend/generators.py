"""The user's generator functions, iterated in the function: run to their end where
they are called, as functions building the list of what they yield.

``def layers(x): for k in range(3): yield x * k`` is converted as if it read
``items = []; for k in range(3): items = items + [x * k]; return items``: ``yield e``
appends ``e``, ``yield from it`` appends each item of ``it``, ``return`` ends it.
Its call is then a list like any other: known while compiling (a loop with a trip
count known then is unrolled, as loops over structures are), or built when the code
runs (a loop over a range of run-time length), which ``for``, ``sum``, ``list``, a
comprehension and the rest iterate. A generator is run to its end where it is
called, before the code iterating it: one that never ends is refused, and a
consumer that stops early (``break``, ``zip`` with a shorter list) only leaves
items unread.
"""

from __future__ import annotations

import ast

from autodiff.frontend.scan import appended_names, loop_exits
from autodiff.graph.ir import Const

# The list a generator's yields append to, named like the converter's other names
# that no code can write.
YIELDED = "<yielded>"

# A loop of a generator over a range known while compiling is unrolled up to this
# many steps (its items then known while compiling); a longer one runs as a loop.
UNROLLED_STEPS = 1000

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


# next() of a generator's items: they are a list here, with no position to advance.
NEXT_REFUSED = ("'{call}' advances a generator, which autodiff runs to its end where it "
                "is called: its items are a list, with no position to advance")
NEXT_HINT = "iterate it (for v in gen(...)), or take an item: list(gen(...))[0]"


def is_generator(body: list[ast.stmt]) -> bool:
    """Whether a function with this body is a generator (a yield outside nested scopes)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return False


def unrolled_for_a_generator(iteration: tuple, body: list[ast.stmt]) -> tuple:
    """A ``for`` loop's iteration (see ``StatementsMixin.iteration``), unrolled when its
    body yields and it runs over a range known while compiling: what the generator
    yields is then a list known while compiling, as a structure's items are."""
    if iteration[0] != "range" or YIELDED not in appended_names(body):
        return iteration
    _, start, stop, step, reverse, element = iteration
    bounds = (start, stop, step)
    if not all(isinstance(b, Const) and type(b.value) is int for b in bounds):
        return iteration
    numbers = range(*(b.value for b in bounds))
    if len(numbers) > UNROLLED_STEPS:
        return iteration
    return "unroll", [element(Const(i)) for i in (reversed(numbers) if reverse else numbers)]


def as_list_builder(body: list[ast.stmt], error) -> list[ast.stmt]:
    """The body of a generator function as the body of a function returning the list
    of what it yields. ``error(node, message, hint)`` makes the error for a form
    refused: the value of a ``yield`` expression (what ``send`` gives), a value
    returned, a ``while True:`` with no way out."""
    builder = _ListBuilder(error)
    start = ast.Assign([ast.Name(YIELDED, ast.Store())], ast.List([], ast.Load()))
    end = ast.Return(ast.Name(YIELDED, ast.Load()))
    ast.copy_location(start, body[0])
    ast.copy_location(end, body[-1])
    converted = [builder.visit(stmt) for stmt in body]
    for node in (start, end):
        for part in ast.walk(node):
            ast.copy_location(part, node)
    return [start, *converted, end]


def _appended(value: ast.expr, at: ast.AST) -> ast.stmt:
    """``<yielded> = <yielded> + [value]``: a list known while compiling where the
    yields are (an unrolled loop), one built at run time in a loop that runs then."""
    grown = ast.BinOp(ast.Name(YIELDED, ast.Load()), ast.Add(), ast.List([value], ast.Load()))
    statement = ast.Assign([ast.Name(YIELDED, ast.Store())], grown)
    for part in (statement, statement.targets[0], grown, grown.left, grown.right):
        ast.copy_location(part, at)
    return statement


class _ListBuilder(ast.NodeTransformer):
    def __init__(self, error) -> None:
        self.error = error
        self.count = 0

    def visit_FunctionDef(self, node):  # a nested function's yields are its own
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Yield):
            value = node.value.value or ast.copy_location(ast.Constant(None), node)
            return _appended(self.visit(value), node)
        if isinstance(node.value, ast.YieldFrom):
            self.count += 1
            item = ast.Name(f"<yielded item {self.count}>", ast.Store())
            read = ast.copy_location(ast.Name(item.id, ast.Load()), node)
            loop = ast.For(item, self.visit(node.value.value), [_appended(read, node)], [])
            for part in (loop, item):
                ast.copy_location(part, node)
            return loop
        return self.generic_visit(node)

    def visit_Yield(self, node: ast.Yield):
        raise self.error(node, "the value of a 'yield' expression (what the generator's "
                         "send() gives) is not supported in differentiated code",
                         "write 'yield value' as a statement")

    visit_YieldFrom = visit_Yield

    def visit_Return(self, node: ast.Return):
        if node.value is not None:
            raise self.error(node, "a generator that returns a value (the value of its "
                             "StopIteration) is not supported in differentiated code",
                             "end the generator with a bare 'return'")
        returned = ast.Return(ast.Name(YIELDED, ast.Load()))
        ast.copy_location(returned, node)
        ast.copy_location(returned.value, node)
        return returned

    def visit_While(self, node: ast.While):
        if isinstance(node.test, ast.Constant) and node.test.value and not loop_exits(
                node.body) and not _breaks(node.body):
            raise self.error(node, "a generator with a loop that never ends: autodiff runs a "
                             "generator to its end where it is called",
                             "give the loop an end (a count, or a condition that turns "
                             "false), or yield a fixed number of items")
        return self.generic_visit(node)


def _breaks(body: list[ast.stmt]) -> bool:
    """Whether a loop with this body has a ``break`` of its own."""
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if not isinstance(node, (*_SCOPES, ast.For, ast.While)):
            todo.extend(ast.iter_child_nodes(node))
    return False


__all__ = ["NEXT_HINT", "NEXT_REFUSED", "YIELDED", "as_list_builder", "is_generator", "unrolled_for_a_generator"]
