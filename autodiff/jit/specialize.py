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
  only the side it takes.

Anything not known statically is left as it is: the specialised code is the
general code with the decided parts taken out, never a guess.
"""

from __future__ import annotations

import numpy as np

from autodiff.frontend.builder import GraphBuilder
from autodiff.graph.ir import (
    Block,
    Const,
    Graph,
    Operand,
    Region,
    Value,
    walk,
)
from autodiff.graph.shapes import SCALAR
from autodiff.jit.infer import Abstract, Known, Spec, infer, is_small
from autodiff.ops import OPS, Op
from autodiff.transforms.optimize.substitution import Substitution, inherit

# The rewrites made again after optimising (and only then): dropping copies.
_FINAL = {"as_gradient_of": "rewrite_as_gradient_of", "copy": "rewrite_copy"}


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


class _Specializer:
    def __init__(self, graph: Graph, env: dict, numba: bool, final: bool = False) -> None:
        self.builder = GraphBuilder(graph, phase="backward")
        self.env = env
        self.numba = numba
        self.final = final  # after optimising: only the last copies are left to drop
        self.uses = graph.uses()

    def of(self, operand: Operand) -> Abstract:
        if isinstance(operand, Value):
            return self.env.get(operand)
        if isinstance(operand, Const):
            return Known(operand.value)
        return None

    def emit(self, op: str | Op, *args: Operand) -> Operand:
        return self.builder.emit(OPS[op] if isinstance(op, str) else op, args)

    def shape(self, operand: Operand) -> tuple | None:
        """The static shape of ``operand`` (None when it is not known)."""
        return _shape(self.of(operand))

    def rewrite(self, node) -> Operand | None:
        if self.final:
            method = _FINAL.get(node.op.name)
            return getattr(self, method)(*node.args) if method else None
        result = self.result = self.env.get(node.out)
        if (is_small(result) and not node.op.effect and not node.op.per_call):
            return Const(result.value)
        if node.op.math_form and _double(self.of(node.args[0])):
            return self.emit("math", Const(node.op.math_form), node.args[0])
        if self.numba and node.op.numba_form is not None:
            written = node.op.numba_form(self, *node.args)
            if written is not None:
                return written
        method = getattr(self, "rewrite_" + node.op.name, None)
        return method(*node.args) if method is not None else None

    def rewrite_unbroadcast(self, g, x):
        return self.sum_to(g, _shape(self.of(x)))

    def rewrite_unbroadcast_to(self, g, shape):
        target = self.of(shape)
        return self.sum_to(g, target.value if isinstance(target, Known) else None)

    def sum_to(self, g, shape: tuple | None) -> Operand | None:
        """``g`` summed over the axes along which an array of ``shape`` was broadcast."""
        have = _shape(self.of(g))
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

    def ranks(self, a, b) -> tuple[int, int] | None:
        shapes = _shape(self.of(a)), _shape(self.of(b))
        if not all(_array(self.of(v)) for v in (a, b)) or None in shapes:
            return None
        return len(shapes[0]), len(shapes[1])

    def rewrite_matmul_grad_lhs(self, g, a, b):
        ranks = self.ranks(a, b)
        if ranks == (2, 2):
            return self.emit("matmul", g, self.transposed(b))
        if ranks == (2, 1):
            return self.emit("outer", g, b)
        if ranks == (1, 2):
            return self.emit("matmul", b, g)
        if ranks == (1, 1):
            return self.emit("multiply", g, b)
        return None

    def rewrite_matmul_grad_rhs(self, g, a, b):
        ranks = self.ranks(a, b)
        if ranks == (2, 2):
            return self.emit("matmul", self.transposed(a), g)
        if ranks == (1, 2):
            return self.emit("outer", a, g)
        if ranks == (2, 1):
            return self.emit("matmul", g, a)
        if ranks == (1, 1):
            return self.emit("multiply", g, a)
        return None

    def transposed(self, a) -> Operand:
        return self.emit("transpose", a, Const(None))

    def rewrite_as_gradient_of(self, g, x, where, float_when_x_is):
        """The gradient as it is, when it already is what ``as_gradient_of`` would
        return: a new array of the argument's shape and floating dtype, returned once."""
        of_g, of_x = self.of(g), self.of(x)
        if not (isinstance(of_g, Spec) and isinstance(of_x, Spec)):
            return None
        if of_x.kind is float and of_g.shape == () and not _array(of_g):
            return g if of_g.kind is float else self.emit("float", g)
        if not (_array(of_g) and _array(of_x) and of_x.dtype.kind in "fc"
                and (of_g.shape, of_g.dtype) == (of_x.shape, of_x.dtype)):
            return None
        if isinstance(where, Const) and where.value is not None and of_x.shape != ():
            return None  # the general helper raises: the output is not a scalar
        if self.final and always_fresh(g, set()) and self.uses.get(g, 0) == 1:
            return g  # a new array nothing else reads: no one shares it
        return self.emit("copy", g) if self.numba else None

    def rewrite_copy(self, a):
        """A copy of a new array nothing else reads is that array (after optimising only:
        common subexpressions merged later could share it)."""
        return a if self.final and always_fresh(a, set()) and self.uses.get(a, 0) == 1 else None

    def rewrite_keep_zeros_multiply(self, a, b):
        """numba calls no helper: the zero-keeping product as an expression."""
        return self.emit("keep_zeros_product", a, b, self.scalars(a, b)) if self.numba else None

    def rewrite_keep_zeros_divide(self, a, b):
        return self.emit("keep_zeros_quotient", a, b, self.scalars(a, b)) if self.numba else None

    def scalars(self, a, b) -> Const:
        return Const(all(_shape(self.of(v)) == () and not _array(self.of(v)) for v in (a, b)))

    def rewrite_zeros_like(self, a, dtype):
        """The zero adjoint of a scalar is ``0.0``, not a 0-d array (a float on both
        sides of a branch, as numba needs); of a float64 array of known shape,
        ``np.zeros(shape)``, which no longer reads ``a``."""
        of_a = self.of(a)
        if not (isinstance(of_a, Spec) and isinstance(dtype, Const) and dtype.value is None):
            return None
        if of_a.shape == () and not _array(of_a) and of_a.dtype.kind == "f":
            return Const(0.0)
        if _array(of_a) and of_a.dtype == np.float64:
            return self.emit("zeros", Const(of_a.shape), Const(None))
        return None

    def same_array(self, a, result: Abstract) -> bool:
        """``a`` is an array already of the result's shape and dtype."""
        return _array(self.of(a)) and _array(result) and self.of(a) == result

    def rewrite_reshape(self, a, shape, order):
        if self.same_array(a, self.result):
            return a  # a view of the same shape: the array itself reads the same
        if self.numba and _array(self.of(a)) and not always_fresh(a, set()):
            return self.emit("reshape", self.emit("contiguous", a), shape, order)
        return None

    def rewrite_broadcast_to(self, array, shape):
        return array if self.same_array(array, self.result) else None

    def rewrite_broadcast_like(self, t, ans):
        return t if self.same_array(t, self.result) else None

    def rewrite_scalar_output_seed(self, out, where):
        return Const(1.0) if _shape(self.of(out)) == () else None


def specialize(graph: Graph, arguments: list[Abstract], backend: str = "python",
               optimize: bool = True, variables: dict | None = None) -> Graph:
    """Rewrite ``graph`` in place for arguments like ``arguments`` (see the module doc),
    then optimise it; ``backend="numba"`` writes the forms numba compiles."""
    from autodiff.transforms.optimize import eliminate_dead_code
    from autodiff.transforms.optimize import optimize as run_passes

    _decide(graph, infer(graph, arguments, variables), backend)
    (run_passes if optimize else eliminate_dead_code)(graph)
    env = infer(graph, arguments, variables)
    _decide(graph, env, backend, final=True)
    if backend == "python":
        _updates_in_place(graph, infer(graph, arguments, variables))
    return graph


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


def _decide(graph: Graph, env: dict, backend: str, final: bool = False) -> Graph:
    """Replace what the signature decides: constants, exact sums, direct formulas;
    with ``final``, after optimising, drop the copies of new arrays nothing shares."""
    for value, abstract in env.items():  # what the general passes may now rely on
        if isinstance(value, Value) and isinstance(abstract, Spec):
            value.floating |= abstract.dtype.kind in "fc"
            if abstract.shape == ():
                value.shape = SCALAR
    specializer = _Specializer(graph, env, numba=backend == "numba", final=final)
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
    if node.kind == "if":
        return all(always_fresh(block.results[j], assumed) for block in node.blocks)
    carried = node.carried()[j]  # fresh on entry and after each pass: fresh throughout
    return always_fresh(node.init[j], assumed) and always_fresh(node.body.results[j], assumed | {carried})


def _taken_branch(region: Region, specializer: _Specializer) -> Block | None:
    if region.kind != "if":
        return None
    condition = specializer.of(region.args[0])
    if not isinstance(condition, Known):
        return None
    return region.blocks[0] if condition.value else region.blocks[1]
