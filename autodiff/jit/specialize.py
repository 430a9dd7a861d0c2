"""Specialising a derivative graph to one call signature (``ad.grad(f, jit=True)``).

With the shapes and dtypes of the arguments known (see :mod:`autodiff.jit.infer`),
the general code's run-time decisions become compile-time ones:

- shape queries become constants (``np.size(t4)`` is ``32``), which constant
  folding then merges (``1.0 / 32 * 2`` is ``0.0625``);
- ``unbroadcast`` between equal shapes disappears, and between different ones
  becomes the exact ``np.sum`` over the broadcast axes;
- the matmul adjoints become the one formula their operands' ranks call for
  (``g @ b.T`` for matrices, ``np.outer(g, b)`` for a matrix times a vector);
- the seed of a scalar output is the constant ``1.0``;
- a branch on a condition known from the signature (a flag argument) keeps
  only the side it takes;
- NumPy's function of a Python float is Python's ``math`` one (``math.exp(t)``),
  which raises where NumPy gives inf or nan: the dispatcher then runs the general
  code, unless the graph runs code autodiff does not know for its effect (a print,
  a call run as it is: ``runs_unknown_code``), whose effects must happen once, and
  whose specialised code keeps NumPy's functions.

Anything not known statically is left as it is: the specialised code is the
general code with the decided parts taken out, never a guess.

The rewrites of single ops are in the ops' blocks (``@op.defspecialize``, and
``@op.defnumba`` for the forms numba compiles); this module runs them, offering
each the :class:`Specializer`'s answers about its operands.
"""

from __future__ import annotations

import numpy as np

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Node,
    Operand,
    Region,
    Value,
    walk,
)
from autodiff.graph.shapes import SCALAR
from autodiff.jit.infer import Abstract, Known, Spec, infer, is_small
from autodiff.ops import OPS, Op
from autodiff.transforms.accumulations import products_step_by_step
from autodiff.transforms.optimize.substitution import Substitution, inherit


def _shape(abstract: Abstract) -> tuple | None:
    if isinstance(abstract, Spec):
        return abstract.shape
    if isinstance(abstract, Known) and isinstance(abstract.value, (int, float, bool)):
        return ()
    return None


def _double(abstract: Abstract) -> bool:
    """A Python number or a float64 scalar: ``math`` computes on it in double precision."""
    return (isinstance(abstract, Spec) and abstract.shape == ()
            and (abstract.kind in (float, int) or abstract.kind is not np.ndarray
                 and abstract.dtype == np.float64))


def _array(abstract: Abstract) -> bool:
    return isinstance(abstract, Spec) and abstract.kind.__name__ == "ndarray"


class Specializer:
    """What an op's specialised form (``@op.defspecialize``, ``@op.defnumba``, in its
    block) can ask of its operands for one signature, and the nodes it can emit.

    ``numba``: the forms are for numba; ``final``: the graph is optimised already
    (only the forms declared ``after_optimizing`` run then).
    """

    def __init__(self, graph: Graph, env: dict, numba: bool, final: bool = False,
                 math_forms: bool = True) -> None:
        self.builder = GraphBuilder(graph, phase="backward")
        self.env = env
        self.numba = numba
        self.final = final
        self.math_forms = math_forms  # Python's math for NumPy's functions of a float
        self.uses = graph.uses()
        self.result: Abstract = None  # what is known of the result of the node rewritten

    def of(self, operand: Operand) -> Abstract:
        if isinstance(operand, Value):
            return self.env.get(operand)
        if isinstance(operand, Const):
            return Known(operand.value)
        return None

    def emit(self, op: Op | str, *args: Operand) -> Operand:
        return self.builder.emit(OPS[op] if isinstance(op, str) else op, args)

    # ----- what is known of an operand -----

    def shape(self, operand: Operand) -> tuple | None:
        """Its static shape (None when not known)."""
        return _shape(self.of(operand))

    def array_shape(self, operand: Operand) -> tuple | None:
        """Its shape when it is a NumPy array (not a number) of known shape."""
        abstract = self.of(operand)
        return abstract.shape if _array(abstract) else None

    def is_number(self, operand: Operand) -> bool:
        """A Python or NumPy number (0-d, not an array)."""
        abstract = self.of(operand)
        return _shape(abstract) == () and not _array(abstract)

    def kind(self, operand: Operand) -> type | None:
        """Its Python type (``float``, ``np.ndarray``, ...), when known."""
        abstract = self.of(operand)
        return abstract.kind if isinstance(abstract, Spec) else None

    def dtype(self, operand: Operand) -> np.dtype | None:
        abstract = self.of(operand)
        return abstract.dtype if isinstance(abstract, Spec) else None

    def known(self, operand: Operand) -> tuple[bool, object]:
        """``(True, value)`` for an operand whose value the signature decides."""
        abstract = self.of(operand)
        return (True, abstract.value) if isinstance(abstract, Known) else (False, None)

    def like_result(self, operand: Operand) -> bool:
        """An array already of the result's shape and dtype."""
        return _array(self.of(operand)) and _array(self.result) and self.of(operand) == self.result

    def fresh(self, operand: Operand) -> bool:
        """A new array, never a view of another value."""
        return always_fresh(operand, set())

    def unshared(self, operand: Operand) -> bool:
        """A new array that nothing else reads."""
        return self.fresh(operand) and self.uses.get(operand, 0) == 1

    # ----- shared rewrites -----

    def sum_to(self, g: Operand, shape: tuple | None) -> Operand | None:
        """``g`` summed over the axes along which an array of ``shape`` was broadcast."""
        have = self.shape(g)
        if have is None or shape is None or len(have) < len(shape):
            return None
        if have == shape:
            return g
        extra = len(have) - len(shape)
        kept = tuple(i for i, n in enumerate(shape) if n == 1 and have[extra + i] != 1)
        if any(n != 1 and have[extra + i] != n for i, n in enumerate(shape)):
            return None  # g is smaller than the argument: the general helper broadcasts
        if self.numba:  # numba sums over one axis at a time, without keepdims
            for _ in range(extra):
                g = self.emit("sum", g, Const(0), Const(False))
            for axis in reversed(kept):
                g = self.emit("sum", g, Const(axis), Const(False))
            return self.emit("reshape", g, Const(shape), Const("C")) if kept else g
        if extra:
            axis = 0 if extra == 1 else tuple(range(extra))
            g = self.emit("sum", g, Const(axis), Const(False))
        if kept:
            axis = kept[0] if len(kept) == 1 else kept
            g = self.emit("sum", g, Const(axis), Const(True))
        return g

    def rewrite(self, node) -> Operand | None:
        op = node.op
        if self.final:
            if op.specialize_after_optimizing:
                return op.specialized_form(self, *node.args)
            return None
        result = self.result = self.env.get(node.out)
        if is_small(result) and not op.effect and not op.per_call:
            return Const(result.value)
        if op.math_form and self.math_forms and _double(self.of(node.args[0])):
            return self.emit("math", Const(op.math_form), node.args[0])
        if self.numba and op.numba_form is not None:
            written = op.numba_form(self, *node.args)
            if written is not None:
                return written
        return op.specialized_form(self, *node.args) if op.specialized_form else None


def specialize(graph: Graph, arguments: list[Abstract], backend: str = "python",
               optimize: bool = True, variables: dict | None = None) -> Graph:
    """Rewrite ``graph`` in place for arguments like ``arguments`` (see the module doc),
    then optimise it; ``backend="numba"`` writes the forms numba compiles."""
    from autodiff.transforms.optimize import eliminate_dead_code
    from autodiff.transforms.optimize import optimize as run_passes

    if backend == "numba":  # (numba compiles a loop of products, not lists of arrays)
        products_step_by_step(graph)
    math_forms = not runs_unknown_code(graph)
    _decide(graph, infer(graph, arguments, variables), backend, math_forms=math_forms)
    (run_passes if optimize else eliminate_dead_code)(graph)
    env = infer(graph, arguments, variables)
    _decide(graph, env, backend, final=True, math_forms=math_forms)
    if backend == "python":
        _updates_in_place(graph, infer(graph, arguments, variables))
    else:
        _single_precision(graph, infer(graph, arguments, variables))
    return graph


def _single_precision(graph: Graph, env: dict) -> None:
    """numba holds a Python float as a float64, so beside a float32 (or complex64)
    array it makes the result float64, where NumPy keeps float32 (to NumPy 2 a Python
    number takes the other operand's precision): such a float, a constant or a value,
    is written in that precision (``np.float32(0.2) * t5``, ``np.float32(s) * x``). (A
    Python int keeps float32 in numba too.)"""

    def visit(nodes: list) -> list:
        kept = []
        for node in nodes:
            if isinstance(node, Region):
                for block in node.blocks:
                    block.nodes = visit(block.nodes)
                kept.append(node)
                continue
            result = env.get(node.out)
            if (isinstance(result, Spec) and result.dtype in _SINGLE and any(
                    isinstance(a, Value) and isinstance(env.get(a), Spec)
                    and env[a].dtype == result.dtype for a in node.args)):
                node.args = tuple(_single(a, result.dtype, env, node, kept) for a in node.args)
            kept.append(node)
        return kept

    graph.nodes = visit(graph.nodes)


_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


def _single(operand: Operand, dtype: np.dtype, env: dict, node, kept: list) -> Operand:
    """``operand`` of ``node`` in the precision ``dtype``: a constant converted, a Python
    float or complex value converted by a node added to ``kept``."""
    kind = np.float32 if dtype == np.float32 else np.complex64
    if isinstance(operand, Const):
        return Const(kind(operand.value)) if operand.path is None and type(
            operand.value) in (float, complex) and not (
            kind is np.float32 and type(operand.value) is complex) else operand
    abstract = env.get(operand)
    if not isinstance(operand, Value) or not isinstance(abstract, Spec) or (
            abstract.kind not in (float, complex)) or (
            kind is np.float32 and abstract.kind is complex):
        return operand
    converted = Node(OPS["precision"], (operand, Const(np.dtype(kind).name)),
                     Value(operand.hint), node.loc, node.phase)
    converted.out.floating, converted.out.shape = True, SCALAR
    kept.append(converted)
    return converted.out


def _updates_in_place(graph: Graph, env: dict) -> None:
    """Elementwise ops whose operand has the result's shape and dtype become their
    updating forms (codegen writes them in place when the operand is free to be
    overwritten)."""
    for node in walk(graph.nodes):
        if isinstance(node, Region) or not _array(env.get(node.out)):
            continue
        result, operator = env[node.out], node.op.update_operator
        if operator:
            a, b = node.args
            commutes = operator in ("+", "*")
            if env.get(b) == result and env.get(a) != result and commutes:
                a, b = b, a
            if env.get(a) == result:
                node.op, node.args = OPS["update"], (a, b, Const(operator))
        elif node.op.ufunc_out and env.get(node.args[0]) == result:
            node.op, node.args = OPS["ufunc_update"], (node.args[0], Const(node.op.name))


def runs_unknown_code(graph: Graph) -> bool:
    """Whether ``graph`` runs code autodiff does not know for its effect (``opaque``
    and ``effect``: a print, a warning, a call run as it is; a ``raise`` has none but
    the error), whose effects must happen once per call: its specialised code raises
    where the general code does and nowhere else, and the dispatcher never runs the
    general code after it."""
    return any(not isinstance(node, Region) and node.op.opaque and node.op.effect
               and not node.op.raises for node in walk(graph.nodes))


def _decide(graph: Graph, env: dict, backend: str, final: bool = False,
            math_forms: bool = True) -> Graph:
    """Replace what the signature decides: constants, exact sums, direct formulas;
    with ``final``, after optimising, drop the copies of new arrays nothing shares."""
    for value, abstract in env.items():  # what the general passes may now rely on
        if isinstance(value, Value) and isinstance(abstract, Spec):
            value.floating |= abstract.dtype.kind in "fc"
            if abstract.shape == ():
                value.shape = SCALAR
    specializer = Specializer(graph, env, numba=backend == "numba", final=final,
                              math_forms=math_forms)
    replaced = Substitution()

    def visit(nodes: list) -> list:
        kept: list = []
        target = Block(nodes=kept)
        for node in nodes:
            replaced.args(node)
            if isinstance(node, Region):
                taken = _taken_branch(node, specializer)
                if taken is not None:  # the branch the signature decides, inline
                    kept.extend(visit(taken.nodes))
                    for out, result in zip(node.outs, taken.results):
                        replaced[out] = replaced.read(result)
                    continue
                for block in node.blocks:
                    block.nodes = visit(block.nodes)
                    block.results = [replaced.read(r) for r in block.results]
                kept.append(node)
                continue
            specializer.builder.loc = node.loc
            specializer.builder.phase = node.phase
            start = len(kept)
            with specializer.builder.inside(target):
                replacement = specializer.rewrite(node)
            if replacement is not None and replacement is not node.out:
                replaced[node.out] = replacement
                if isinstance(replacement, Value):
                    inherit(replacement, node.out,
                            new=any(replacement in n.outs for n in kept[start:]))
                    if replacement not in env:  # what is known carries over
                        env[replacement] = env.get(node.out)
                        specializer.uses[replacement] = specializer.uses.get(node.out, 0)
                continue
            kept.append(node)
        return kept

    graph.nodes = visit(graph.nodes)
    return replaced.finish(graph)


def always_fresh(value: Operand, assumed: set) -> bool:
    """Whether ``value`` is always an array made by this code, sharing memory with
    nothing else: the result of a fresh op, or a loop or branch merging only such."""
    if not isinstance(value, Value) or value.node is None:
        return value in assumed
    node = value.node
    if not isinstance(node, Region):
        return node.op.fresh
    j = node.outs.index(value)
    if node.branches:
        return all(always_fresh(block.results[j], assumed) for block in node.blocks
                   if not block.raises())
    carried = node.carried()[j]  # fresh on entry and after each pass: fresh throughout
    return always_fresh(node.init[j], assumed) and always_fresh(node.body.results[j], assumed | {carried})


def _taken_branch(region: Region, specializer: Specializer) -> Block | None:
    """The block of an ``if`` or ``switch`` the signature decides, if it does."""
    if region.kind not in ("if", "switch"):
        return None
    decided = specializer.of(region.args[0])
    if not isinstance(decided, Known):
        return None
    if region.kind == "if":
        return region.blocks[0] if decided.value else region.blocks[1]
    return region.blocks[decided.value]
