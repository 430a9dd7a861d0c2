"""Appending nodes to a graph, one op at a time.

``GraphBuilder.emit`` is the single door through which nodes enter a graph,
for the user's code and for inlined gradient rules alike. On the way in it
tries the op's own simplification, folds ops whose inputs are all constant,
and records what is statically known about the result (shape token, floating)
and about the graph (it computes with complex values).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Location,
    Node,
    Operand,
    Value,
    operand_values,
)
from autodiff.graph.shapes import SCALAR, Token
from autodiff.ops.registry import OPS, Op


def _dtype_of(value) -> np.dtype | None:
    try:
        return np.dtype(value)
    except TypeError:
        return None


def literal(value) -> bool:
    """Constants that codegen can write as Python literals."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, tuple):
        return all(literal(item) for item in value)
    return False


_COMPLEX_DTYPE_NAMES = frozenset({"complex", "complex64", "complex128", "complex256", "c8",
                                  "c16", "c32", "cfloat", "cdouble", "clongdouble"})


def complex_constant(operand) -> bool:
    """Whether ``operand`` is a complex constant or names a complex type (``1j``,
    ``complex``, ``np.complex128``, ``dtype="complex128"``)."""
    if isinstance(operand, tuple):
        return any(complex_constant(item) for item in operand)
    if not isinstance(operand, Const):
        return False
    value = operand.value
    if isinstance(value, complex | np.complexfloating):
        return True
    if isinstance(value, type):
        return issubclass(value, complex | np.complexfloating)
    if isinstance(value, np.dtype):
        return value.kind == "c"
    return isinstance(value, str) and value in _COMPLEX_DTYPE_NAMES


class GraphBuilder:
    """Emits nodes into ``graph`` with a current location and phase."""

    def __init__(self, graph: Graph, phase: str = "forward") -> None:
        self.graph = graph
        self.phase = phase
        self.loc: Location | None = None
        # Shape tokens of values known to hold one element (checked at run time).
        self.size_one: set[object] = set()
        # Identical nodes emitted through this builder are shared (hash-consing),
        # so that equal gradient contributions are recognisably the same value.
        self._emitted: dict[tuple, Value] = {}
        self._block: Block | None = None  # None: the graph's own node list
        # Where each loop-carried or branch-merged value may come from (for in-place checks).
        self.sources: dict[Value, list[Operand]] = {}
        # Whether a handler bound the exception it caught (``except E as e``).
        self.caught = False
        # A derivative was inlined in its form for real values while the graph did not
        # compute with complex ones yet (see frontend.function_to_graph).
        self.inlined_real_derivative = False
        # A derivative's rules made complex values: the graph computes with them once the
        # transform is done, never midway (a rule chosen before would be a real one).
        self.made_complex = False
        # The global objects whose settings the graph's own node list checks (see
        # frontend/objects.py): a later read needs no check of its own.
        self.settings_checked: set[tuple] = set()
        # Arguments (and leaves of structures) holding a library's object (a random
        # generator): its methods and attributes are called and read as they are.
        self.library_objects: set[Value] = set()
        # The lists built at run time from a list the caller passed (for a loop appending
        # to it), each with that list: appends write through to it (frontend/state.py).
        self.caller_runtime_lists: dict[Value, Value] = {}
        # Lists of constants repeated a number of times known when the code runs
        # ([None] * T): tuples then, whose items are never set (frontend/updates.py).
        self.repeated_lists: set[Value] = set()
        # Code compiled per call signature (frontend/signature.py): the ranks known by
        # shape token, the dtypes by value, and the globals read as constants.
        self.ranks: dict[int, tuple[object, int]] = {}
        self.dtypes: dict[Value, np.dtype] = {}
        self.constants_read: list = []
        # The latest Record of each dict or object the code built and then changed, by
        # its origin (frontend/records.py, share_change).
        self.versions: dict[object, object] = {}
        self.fold_constants = False  # the user's globals holding numbers: constants
        # Whether the code read what a call signature would fix (a rank, a dtype, a
        # shape, a global number, an argument passed as an op's setting): a refusal
        # may then be answered by compiling per call signature.
        self.reads_call_facts = False
        # The caller's dicts a loop of run-time length being converted writes keys into
        # (frontend/state.py): keys known only when the code runs, written as it runs.
        self.callers_written_in_loops: set[Value] = set()
        # The caller's dicts written keys known only when the code runs, by their run-time
        # value: their Records (frontend/state.keys_read_as_passed).
        self.new_keys_written: dict[Value, object] = {}

    @property
    def nodes(self) -> list:
        """The node list new nodes are appended to."""
        return self.graph.nodes if self._block is None else self._block.nodes

    @property
    def in_block(self) -> bool:
        """Whether nodes go into a block of a region (code that runs on some paths)."""
        return self._block is not None

    @contextmanager
    def inside(self, block: Block) -> Iterator[Block]:
        """Emit into ``block`` for the duration of the ``with``; values shared by
        hash-consing inside it stay inside it."""
        saved = self._block, self._emitted
        self._block, self._emitted = block, dict(self._emitted)
        try:
            yield block
        finally:
            self._block, self._emitted = saved

    def emit(self, op: Op, args: tuple, hint: str = "") -> Operand:
        """Append ``op(*args)`` (canonical argument order) and return its result."""
        named = dict(zip(op.params, args))
        if self.phase == "forward":
            known = self._call_fact(op, args)
            if known is not None:
                return known
        if op.makes_complex or any(complex_constant(arg) for arg in args):
            if self.phase == "forward":  # its derivative uses the rules for complex values
                self.graph.complex = True
            else:
                self.made_complex = True
        if op.simplify is not None:
            replacement = op.simplify(named, self)
            if replacement is not None:
                return replacement
        folded = self._fold(op, args)
        if folded is not None:
            return folded
        # Only derivative code is hash-consed: in the user's code two equal
        # expressions are two arrays (an in-place update of one must not see the other).
        key = None if op.effect or self.phase == "forward" else node_key(op, args)
        if key is not None and key in self._emitted:
            return self._emitted[key]
        out = Value(hint)
        if key is not None:
            self._emitted[key] = out
        out.shape = op.shape.token(named) if op.shape is not None else Token()
        out.floating = _floating(op, args)
        if self.ranks and self.phase == "forward":
            self._facts_of_result(op, named, out)
        self.nodes.append(Node(op, args, out, self.loc, self.phase))
        return out

    def knows_rank(self, value: Value, ndim: int, dtype: np.dtype | None = None) -> None:
        """Record a value's rank (and dtype), known for this call signature."""
        self.ranks[id(value.shape)] = (value.shape, ndim)
        if dtype is not None:
            self.dtypes[value] = dtype

    def rank_of(self, operand: Operand) -> int | None:
        """The rank of ``operand`` when this call signature makes it known."""
        if isinstance(operand, Value):
            known = self.ranks.get(id(operand.shape))
            return known[1] if known is not None else None
        if isinstance(operand, Const) and isinstance(operand.value, (bool, int, float)):
            return 0
        return None

    def _facts_of_result(self, op: Op, named: dict, out: Value) -> None:
        """The rank of ``op``'s result, from its shape rule and the ranks known; its
        dtype for a constructor making the dtype it is asked for (``np.ones(3)``). (Other
        results' dtypes are not followed: ``np.float_power``, ``.item()``, a
        ``setitem`` keep or change their operands' in ways of their own.)"""
        rank = op.shape.rank(named, self.rank_of) if op.shape is not None else None
        if rank is None:
            return
        dtype, given = named.get("dtype"), None
        if op.dtype_as_asked and isinstance(dtype, Const):  # np.ones(3), np.zeros_like(x)
            like = named.get("a")
            given = (self.dtypes.get(like) if isinstance(like, Value) else None) if (
                dtype.value is None and "a" in named) else (
                np.dtype(float) if dtype.value is None else _dtype_of(dtype.value))
        self.knows_rank(out, rank, given)

    def _call_fact(self, op: Op, args: tuple):
        """``x.ndim``, ``x.dtype``, ``x.itemsize`` and ``x.shape`` of a value whose rank
        and dtype the call signature fixes: constants (the shape a tuple of its sizes,
        read when the code runs). Notes what the code reads that a call signature
        would fix."""
        answer = op.signature_answer
        if answer is not None:
            self.reads_call_facts = True
        elif not self.reads_call_facts and op.diff is not None:
            params = self.graph.params
            self.reads_call_facts = any(
                name not in op.diff and any(v in params for v in operand_values(arg))
                for name, arg in zip(op.params, args))
        if answer is None or not args or not isinstance(args[0], Value):
            return None
        value = args[0]
        rank, dtype = self.rank_of(value), self.dtypes.get(value)
        if answer == "rank" and rank is not None:
            return Const(rank)
        if answer == "dtype" and dtype is not None:
            return Const(dtype)
        if answer == "itemsize" and dtype is not None:
            return Const(dtype.itemsize)
        if answer == "sizes" and rank is not None and len(args) == 1:
            if rank == 0:
                return Const(())
            shape = self.emit_plain(op, args, "")
            sizes = tuple(self.emit_plain(OPS["getitem"], (shape, Const(axis)), "")
                          for axis in range(rank))
            for size in sizes:
                size.shape = SCALAR  # (a number)
            return sizes
        return None

    def emit_plain(self, op: Op, args: tuple, hint: str) -> Value:
        """Append ``op(*args)`` as it is: no folding, no call facts."""
        out = Value(hint)
        out.shape = op.shape.token(dict(zip(op.params, args))) if op.shape is not None else (
            Token())
        self.nodes.append(Node(op, args, out, self.loc, self.phase))
        return out

    @staticmethod
    def _fold(op: Op, args: tuple) -> Const | None:
        if op.impl is None or not all(isinstance(a, Const) and a.path is None for a in args):
            return None
        try:
            with np.errstate(all="ignore"):
                value = op.impl(*(a.value for a in args))
        except Exception:  # noqa: BLE001 - leave it to run time, where the user sees it
            return None
        if isinstance(value, np.generic) and value.ndim == 0:
            value = value.item()
        if isinstance(value, float) and not np.isfinite(value):
            return None
        return Const(value) if literal(value) else None


def node_key(op: Op, args: tuple) -> tuple | None:
    """A hashable identity of ``op(*args)``, or None when an argument is unhashable."""
    if op.distinct:
        return None
    try:
        key = (op, tuple(_hashable(arg) for arg in args))  # (ops made per use share a name)
        hash(key)
    except TypeError:
        return None
    return key


def _hashable(operand):
    if isinstance(operand, Value):
        return ("value", operand.id)
    if isinstance(operand, tuple):
        return tuple(_hashable(item) for item in operand)
    return operand


def _floating(op: Op, args: tuple) -> bool:
    if op.floating == "always":
        return True
    if op.floating == "inputs":
        for arg in args:
            if isinstance(arg, Const) and isinstance(arg.value, numbers.Real) and isinstance(
                arg.value, float
            ):
                return True
            if any(v.floating for v in operand_values(arg)):
                return True
    return False
