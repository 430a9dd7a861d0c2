"""The parts of a graph: values, constants, nodes, regions and blocks, locations and
signatures (the graph itself, and what a graph is, are in :mod:`autodiff.graph.ir`).

>>> x = Value("x")
>>> x.hint, Const(2.0).value
('x', 2.0)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from autodiff.graph.scopes import Scope

_ids = itertools.count()


@dataclass(frozen=True)
class Location:
    """Where a node comes from in the user's source; ``function`` names an inlined callee."""

    filename: str
    lineno: int
    text: str
    function: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    @staticmethod
    def error_fields(loc: Location | None) -> dict:
        """The keyword arguments an AutodiffError takes to point at ``loc`` (none if None)."""
        if loc is None:
            return {}
        return {"filename": loc.filename, "lineno": loc.lineno or None,
                "source_line": loc.text}

    @staticmethod
    def of_function(fn: Any, text: str = "") -> Location | None:
        """The first line of the Python function ``fn`` (None if it has no code).

        >>> def f(x):
        ...     return x
        >>> Location.of_function(f).lineno > 0
        True
        """
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        return Location(code.co_filename, code.co_firstlineno, text)


class Token:
    """A shape token (see :mod:`autodiff.graph.shapes`): values holding the same one are
    known to have the same shape."""

    __slots__ = ("__weakref__",)  # derived tokens (of ``x[1:]``) live as long as it does


class Value:
    """A value defined once: a parameter or the result of one node.

    ``hint`` is the user's variable name when there is one (``""`` for a
    temporary); ``adjoint_of`` marks the adjoint of another value, which codegen
    names ``d<name>``. ``shape`` is a token shared by values known to have the
    same shape (see :mod:`autodiff.graph.shapes`); ``floating`` says the value is
    known to be floating point.
    """

    __slots__ = ("adjoint_of", "floating", "hint", "id", "node", "shape")

    def __init__(self, hint: str = "", *, adjoint_of: Value | None = None) -> None:
        self.hint = hint
        self.node: Node | None = None
        self.adjoint_of = adjoint_of
        self.shape: object = Token()
        self.floating = False
        self.id = next(_ids)

    def __repr__(self) -> str:
        return f"Value({self.hint or 't'}#{self.id})"


@dataclass(frozen=True)
class Const:
    """A compile-time constant; ``path`` is the source expression naming it, if any, and
    ``scope`` the namespace where the path's first name is read (None for a builtin)."""

    value: Any
    path: str | None = None
    scope: Scope | None = None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Const)
            and type(self.value) is type(other.value)
            and _same_constant(self.value, other.value)
            and self.path == other.path
            and self.scope == other.scope
        )

    def __hash__(self) -> int:
        try:
            return hash((type(self.value), self.value, self.path))
        except TypeError:
            return hash((type(self.value), id(self.value), self.path))


def _same_constant(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if a is not b else True
    except (ValueError, TypeError):
        return a is b


@dataclass(frozen=True)
class SliceSpec:
    """``start:stop:step`` inside an index; each part is an operand."""

    start: Operand
    stop: Operand
    step: Operand


Operand = Value | Const | SliceSpec | tuple


class Undefined:
    """The value of a name not bound on some path (written ``None`` in generated code)."""

    def __repr__(self) -> str:
        return "<undefined>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Undefined)

    def __hash__(self) -> int:
        return 0


UNDEFINED = Const(Undefined())


def operand_values(operand: Operand) -> Iterator[Value]:
    """Every :class:`Value` an operand refers to, in order."""
    if isinstance(operand, Value):
        yield operand
    elif isinstance(operand, SliceSpec):
        for part in (operand.start, operand.stop, operand.step):
            yield from operand_values(part)
    elif isinstance(operand, tuple):
        for item in operand:
            yield from operand_values(item)


def map_operand(operand: Operand, fn) -> Operand:
    """Rebuild ``operand`` with every Value ``v`` replaced by ``fn(v)``."""
    if isinstance(operand, Value):
        return fn(operand)
    if isinstance(operand, SliceSpec):
        return SliceSpec(*(map_operand(p, fn) for p in (operand.start, operand.stop, operand.step)))
    if isinstance(operand, tuple):
        return tuple(map_operand(item, fn) for item in operand)
    return operand


def is_constant(operand: Operand) -> bool:
    """True when the operand refers to no runtime value at all."""
    return next(operand_values(operand), None) is None


class Node:
    """One operation: ``out = op(*args)``, with ``args`` in the op's parameter order."""

    __slots__ = ("args", "loc", "op", "out", "phase")

    def __init__(self, op, args: tuple, out: Value, loc: Location | None, phase: str) -> None:
        self.op = op
        self.args = tuple(args)
        self.out = out
        self.loc = loc
        self.phase = phase
        out.node = self

    @property
    def named_args(self) -> dict[str, Operand]:
        return dict(zip(self.op.params, self.args))

    def inputs(self) -> Iterator[Value]:
        for arg in self.args:
            yield from operand_values(arg)

    @property
    def outs(self) -> list[Value]:
        return [self.out]

    def __repr__(self) -> str:
        return f"Node({self.out!r} = {self.op.name}{self.args!r})"


class Block:
    """The body of a region: values bound on entry, nodes, values yielded on exit.

    Nodes of a block may read any value of an enclosing block (lexical scope).
    """

    __slots__ = ("nodes", "params", "results")

    def __init__(self, params: list[Value] | None = None, nodes: list | None = None,
                 results: list[Operand] | None = None) -> None:
        self.params = params if params is not None else []
        self.nodes = nodes if nodes is not None else []
        self.results = results if results is not None else []

    def raises(self) -> bool:
        """Whether the block ends in ``raise`` (nothing reads what it yields)."""
        return any(isinstance(node, Node) and node.op.raises for node in self.nodes)


class RegionKind:
    """The op-like facts passes read from any node, for a structured region.

    ``branches``: the region runs one of its blocks, each yielding the outs (``if``,
    ``switch``, ``try``), rather than a loop over blocks taking carried values.
    """

    def __init__(self, name: str, branches: bool) -> None:
        self.name = name
        self.branches = branches
        self.params: list[str] = []
        self.defaults: dict = {}
        self.diff: tuple = ()
        self.effect = self.inline = self.nondiff_output = False
        self.fresh = False
        self.inplace = None
        self.vjp = None

    def __repr__(self) -> str:
        return f"<region {self.name}>"


REGION_KINDS = {name: RegionKind(name, branches=name in ("if", "switch", "try"))
                for name in ("if", "switch", "try", "for", "while")}

# The op of the node that ends the part of a try's body its handlers guard: the nodes
# after it are the statements of the try's ``else:``.
TRY_ELSE = "try_else"
# The op of the node binding the exception a handler caught (``except E as e``). Python
# unbinds ``e`` when the handler ends: its variable holds nothing else.
CAUGHT = "caught"


class Region:
    """Structured control flow, defining several values (``outs``).

    - ``if``: ``args = (cond,)``, blocks ``[then, orelse]``; each yields the outs.
    - ``switch``: ``args = (selector,)``, an int; it runs ``blocks[selector]``, which
      yields the outs (the backward and tangent sweeps of a ``try``, on the path taken).
    - ``try``: ``args`` hold, per handler, the exception classes it catches (a constant,
      a tuple of them, or ``Const(None)`` for a bare ``except:``); blocks ``[body,
      *handlers]``, each yielding the outs. The body runs; if it raises one of a
      handler's exceptions, that handler runs instead, from the values before the
      ``try``. The body's nodes before a ``try_else`` node are the part the handlers
      guard; those after it are the ``else:``. A handler's ``except E as e:`` binds
      ``e`` with a ``caught`` node of its block. A block whose last node raises (a
      handler ending in ``raise``) yields ``UNDEFINED`` for every out. An out whose
      result is the int ``k`` in block ``k`` records which block ran (added when a
      sweep needs it, see ``transforms/control.py``).
    - ``for``: ``args = (start, stop, step, count, *init)``; one block whose params
      are ``[index, *carried]`` and whose results are the next carried values.
      It runs ``range(start, stop, step)`` (reversed when ``reverse``), at most
      ``count`` iterations unless ``count`` is None.
    - ``while``: ``args = tuple(init)``; blocks ``[cond, body]``, both with the
      carried values as params; ``cond`` yields one truth value.

    ``until`` (for and while) is the index of a carried value that ends the loop
    when it is true after an iteration (``break`` and ``return`` inside loops).
    """

    __slots__ = ("args", "blocks", "loc", "op", "outs", "phase", "reverse", "until")

    out = None

    def __init__(self, kind: str, args: tuple, outs: list[Value], blocks: list[Block],
                 loc: Location | None, phase: str) -> None:
        self.op = REGION_KINDS[kind]
        self.args = tuple(args)
        self.outs = outs
        self.blocks = blocks
        self.loc = loc
        self.phase = phase
        self.reverse = False
        self.until: int | None = None
        for out in outs:
            out.node = self

    @property
    def kind(self) -> str:
        return self.op.name

    @property
    def branches(self) -> bool:
        """Whether the region runs one of its blocks (``if``, ``switch``, ``try``)."""
        return self.op.branches

    def guarded(self) -> list:
        """A ``try``'s guarded nodes: those of its body before its ``else:``."""
        nodes = self.blocks[0].nodes
        end = next((i for i, node in enumerate(nodes) if isinstance(node, Node)
                    and node.op.name == TRY_ELSE), len(nodes))
        return nodes[:end]

    @property
    def init(self) -> tuple:
        """The initial carried values of a loop."""
        return self.args[4:] if self.kind == "for" else self.args if self.kind == "while" else ()

    @property
    def body(self) -> Block:
        return self.blocks[-1]

    def carried(self) -> list[Value]:
        """The body params holding carried values (after the index of a for loop)."""
        return self.body.params[1:] if self.kind == "for" else self.body.params

    def inputs(self) -> Iterator[Value]:
        """Every outer value the region reads: its args and the free values of its blocks."""
        for arg in self.args:
            yield from operand_values(arg)
        yield from free_values(self.blocks)

    def __repr__(self) -> str:
        return f"Region({self.kind} -> {self.outs!r})"


def walk(nodes: list) -> Iterator:
    """Every node of ``nodes``, depth first, regions before the nodes of their blocks."""
    for node in nodes:
        yield node
        if isinstance(node, Region):
            for block in node.blocks:
                yield from walk(block.nodes)


def defined_values(blocks: list[Block]) -> set[Value]:
    """Values defined inside ``blocks``: their params and every node's results."""
    defined: set[Value] = set()
    for block in blocks:
        defined.update(block.params)
        for node in walk(block.nodes):
            defined.update(node.outs)
            if isinstance(node, Region):
                for inner in node.blocks:
                    defined.update(inner.params)
    return defined


def reads(blocks: list[Block]) -> Iterator[Value]:
    """Every value read inside ``blocks`` (by nodes, nested regions and results)."""
    for block in blocks:
        for node in block.nodes:
            for arg in node.args:
                yield from operand_values(arg)
            if isinstance(node, Region):
                yield from reads(node.blocks)
        for result in block.results:
            yield from operand_values(result)


def free_values(blocks: list[Block]) -> Iterator[Value]:
    """Values read inside ``blocks`` but defined outside them."""
    defined = defined_values(blocks)
    return iter(dict.fromkeys(v for v in reads(blocks) if v not in defined))


@dataclass
class Signature:
    """The parameters of a graph's function as written: names by kind, each default as
    the header shows it, and the default values the generated function runs with.

    >>> Signature(["a"], ["b", "c"], ["d"], {"c": "1.0", "d": "None"}).text()
    'a, /, b, c=1.0, *, d=None'
    """

    positional_only: list[str] = field(default_factory=list)
    positional: list[str] = field(default_factory=list)
    keyword_only: list[str] = field(default_factory=list)
    defaults: dict[str, str] = field(default_factory=dict)  # name -> its default, as text
    default_values: tuple | None = None  # ``__defaults__`` of the generated function
    kwdefault_values: dict[str, Any] | None = None  # ``__kwdefaults__``

    def names(self) -> list[str]:
        return [*self.positional_only, *self.positional, *self.keyword_only]

    def text(self, keyword_only: tuple[str, ...] | list[str] = ()) -> str:
        """The parameter list of a ``def``, with ``keyword_only`` names added at the end."""

        def one(name: str) -> str:
            return f"{name}={self.defaults[name]}" if name in self.defaults else name

        parts = [one(n) for n in self.positional_only]
        if parts:
            parts.append("/")
        parts += [one(n) for n in self.positional]
        last = [*self.keyword_only, *keyword_only]
        if last:
            parts += ["*", *(one(n) for n in last)]
        return ", ".join(parts)

    def with_parameter(self, name: str, optional: bool) -> tuple[Signature, bool]:
        """This signature with ``name`` added after the others (defaulting to None if
        ``optional``), and whether it is positional: it is keyword-only when the
        function has defaults, which would make a positional one ambiguous."""
        defaults = {**self.defaults, **({name: "None"} if optional else {})}
        if self.defaults or self.default_values:
            kwdefaults = self.kwdefault_values
            if optional:
                kwdefaults = {**(kwdefaults or {}), name: None}
            return replace(self, keyword_only=[*self.keyword_only, name], defaults=defaults,
                           kwdefault_values=kwdefaults), False
        values = (None,) if optional else self.default_values
        return replace(self, positional=[*self.positional, name], defaults=defaults,
                       default_values=values), True
