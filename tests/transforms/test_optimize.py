"""Each optimisation pass on its own (autodiff/transforms/optimize/).

A test takes a real derivative graph (``ad.grad(f, optimize=False).graph``, or the
optimised one with shape queries replaced by constants, as shape specialisation
does), runs one pass, and shows the printed graph before and after. The rewritten
graph is then compiled and its gradients compared with the unoptimised derivative,
the fully optimised one and central finite differences, on inputs of several
shapes, broadcast ones included.
"""

from __future__ import annotations

import inspect
import re
import textwrap

import numpy as np
import pytest

import autodiff as ad
from autodiff.codegen.compile import compile_generated
from autodiff.codegen.python import generate
from autodiff.graph.ir import Block, Const, Graph, Node, Region, Value, walk
from autodiff.graph.printing import format_graph
from autodiff.graph.scopes import Home
from autodiff.ops import OPS
from autodiff.transforms.optimize import (
    PASSES,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    optimize,
    propagate_copies,
    simplify,
)
from autodiff.transforms.optimize.substitution import Substitution
from tests.codegen import corpus as codegen_corpus
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import CORPUS
from tests.helpers import UserModules, central_difference

SOURCE = """
import numpy as np


def mean_squared(y, t):
    return np.mean((y - t) ** 2)


def loop_of_means(x):
    total = 0.0
    for i in range(len(x)):
        total = total + np.mean(x[i] ** 2)
    return total


def tanh_energy(x, w):
    h = np.tanh(x * w)
    return np.sum(h ** 2) + np.sum(h)


def softplus_total(y):
    return np.sum(np.log1p(np.exp(y)))


def offset_by_total(x, w):
    s = np.sum(w)
    return np.sum(x * 2.0 + s)


def transposed_twice(x, w):
    y = np.transpose(np.transpose(x, (1, 0, 2)), (0, 2, 1))
    z = np.transpose(np.transpose(x, (1, 2, 0)), (2, 0, 1))
    return np.sum(y * w) + np.sum(x.T.T * z)


def same_shapes(x, w):
    return np.sum(np.sin(x) * x * w)


def renamed_in_loop(x, w):
    scale = w
    total = 0.0
    for i in range(3):
        scale = scale
        total = total + np.sum(x * scale)
    return total


def renamed_in_while(x, w):
    k = 0
    y = x
    while k < 3:
        w = w
        y = y * w
        k = k + 1
    return np.sum(y)


def same_either_way(x, n):
    s = np.sin(x)
    if n > 0:
        y = s * 1.0
    else:
        y = s + 0.0
    return np.sum(y * x)


def as_arrays(x):
    y = np.asarray(np.asarray(x))
    return np.sum(y ** 2)


def repeated_sine(x, w):
    return np.sum(np.sin(x) * w) + np.sum(np.sin(x) ** 2)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The functions above, imported from a file of their own (line numbers in the
    printed graphs are lines of ``SOURCE``)."""
    return UserModules(tmp_path_factory.mktemp("optimize"))(SOURCE, "optimize_cases")


# ----- helpers -----


def _plain(fn, wrt) -> Graph:
    """A copy of ``fn``'s unoptimised derivative graph, for a pass to rewrite."""
    return ad.grad(fn, wrt=wrt, optimize=False).graph.copy()[0]


def _optimised(fn, wrt) -> Graph:
    return ad.grad(fn, wrt=wrt).graph.copy()[0]


def _assert_prints(graph: Graph, expected: str) -> None:
    assert format_graph(graph) == textwrap.dedent(expected).strip("\n")


def _specialise(graph: Graph, op_name: str, value: int) -> Graph:
    """Replace every ``op_name`` node by the constant ``value``, as shape specialisation
    replaces ``np.size(t)`` by the size it knows."""
    replaced = Substitution()

    def visit(nodes: list) -> list:
        kept = []
        for node in nodes:
            if isinstance(node, Node) and node.op.name == op_name:
                replaced[node.out] = Const(value)
                continue
            for block in node.blocks if isinstance(node, Region) else ():
                block.nodes = visit(block.nodes)
            kept.append(node)
        return kept

    graph.nodes = visit(graph.nodes)
    replaced.block(Block(nodes=graph.nodes))
    return replaced.finish(graph)


def _compiled(graph: Graph, fn):
    return compile_generated(generate(graph, Home.of_function(fn)), fn, defaults=graph.signature.default_values,
                             kwdefaults=graph.signature.kwdefault_values)


def _gradients(result, wrt) -> tuple:
    return tuple(result) if isinstance(wrt, tuple) else (result,)


def _assert_same(ours: tuple, expected: tuple, rtol: float = 1e-12) -> None:
    """Equal values, and the same kind (float or array), shape and dtype."""
    for a, b in zip(ours, expected, strict=True):
        assert type(a) is type(b), (type(a), type(b))
        assert np.shape(a) == np.shape(b) and np.result_type(a) == np.result_type(b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14)


def _check(graph: Graph, fn, wrt, cases: list[list]) -> None:
    """The rewritten graph, the unoptimised and the optimised derivative give the same
    gradients, which match central finite differences in float64."""
    rewritten = _compiled(graph, fn)
    plain, fast = ad.grad(fn, wrt=wrt, optimize=False), ad.grad(fn, wrt=wrt)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    for args in cases:
        expected = _gradients(plain(*args), wrt)
        _assert_same(_gradients(rewritten(*args), wrt), expected)
        _assert_same(_gradients(fast(*args), wrt), expected)
        for position, gradient in zip(positions, expected):
            np.testing.assert_allclose(gradient, central_difference(fn, list(args), position),
                                       rtol=1e-6, atol=1e-8)


def _random(*shapes, seed: int = 0) -> list:
    """Float64 arguments of ``shapes`` (``None`` is a Python float)."""
    rng = np.random.default_rng(seed)
    return [float(rng.uniform(0.3, 1.2)) if shape is None else rng.uniform(-1.2, 1.2, shape)
            for shape in shapes]


# ----- constant folding -----


def test_fold_constants_merges_the_sizes_shape_specialisation_knows(source):
    # The mean's 1 / n times the power rule's 2: one constant once n is known.
    graph = _specialise(_optimised(source.mean_squared, (0, 1)), "reduced_size", 20)
    _assert_prints(graph, """
        graph mean_squared_grad(y, t):
            t1 = subtract(y, t)           # line 6
            t2 = divide(1.0, 20)          # grad of line 6
            t3 = multiply(t2, 2)          # grad of line 6
            dt1 = multiply(t3, t1)        # grad of line 6
            dy = unbroadcast(dt1, y)      # grad of line 6
            t4 = negative(dt1)            # grad of line 6
            dt = unbroadcast(t4, t)       # grad of line 6
            dy_1 = as_gradient_of(dy, y)
            dt_1 = as_gradient_of(dt, t)
            return (dy_1, dt_1)
    """)
    fold_constants(graph)
    _assert_prints(graph, """
        graph mean_squared_grad(y, t):
            t1 = subtract(y, t)           # line 6
            dt1 = multiply(0.1, t1)       # grad of line 6
            dy = unbroadcast(dt1, y)      # grad of line 6
            t2 = negative(dt1)            # grad of line 6
            dt = unbroadcast(t2, t)       # grad of line 6
            dy_1 = as_gradient_of(dy, y)
            dt_1 = as_gradient_of(dt, t)
            return (dy_1, dt_1)
    """)
    # Twenty elements, broadcast four ways.
    cases = [_random((4, 5), (5,)), _random((4, 5), (4, 1)), _random((2, 10), (2, 10)),
             _random((20,), None)]
    _check(graph, source.mean_squared, (0, 1), cases)


def test_fold_constants_inside_loops(source):
    graph = _specialise(_optimised(source.loop_of_means, 0), "reduced_size", 5)
    fold_constants(graph)
    _assert_prints(graph, """
        graph loop_of_means_grad(x):
            tape = tape_new()
            t1 = len(x)                                                  # line 11
             = for i in range(0, t1, 1) with  from ():                   # line 11
                t2 = getitem(x, i)                                       # line 12
                t3 = power(t2, 2)                                        # line 12
                tape_push(tape, t3)                                      # line 12
                yield 
            dx = zero_adjoint(x)                                         # grad of line 12
            dx = for i_1 in reversed range(0, t1, 1) with dx from (dx):  # grad of line 11
                t4 = tape_pop(tape)                                      # grad of line 12
                t5 = getitem(x, i_1)                                     # grad of line 12
                dt2 = multiply(0.4, t5)                                  # grad of line 12
                dx = index_add(dx, i_1, dt2)                             # grad of line 12
                yield dx
            dx_1 = as_gradient_of(dx, x)
            return dx_1
    """)
    _check(graph, source.loop_of_means, 0, [_random((3, 5)), _random((1, 5), seed=1)])


def test_fold_constants_keeps_python_kinds_and_never_writes_arrays():
    # 20 stands for np.size(x) once specialised; np.e is a named constant.
    double, scaled, logged, array = (Value(n) for n in ("double", "scaled", "logged", "array"))
    graph = Graph("f", [], [
        Node(OPS["multiply"], (Const(20), Const(2)), double, None, "backward"),
        Node(OPS["divide"], (double, Const(8)), scaled, None, "backward"),
        Node(OPS["log"], (Const(np.e, path="np.e"),), logged, None, "backward"),
        Node(OPS["multiply"], (Const(np.ones(3)), Const(2)), array, None, "backward"),
    ], [double, scaled, logged, array])
    _assert_prints(graph, """
        graph f():
            double = multiply(20, 2)
            scaled = divide(double, 8)
            logged = log(np.e)
            array = multiply(array([1., 1., 1.]), 2)
            return double, scaled, logged, array
    """)
    fold_constants(graph)
    _assert_prints(graph, """
        graph f():
            array = multiply(array([1., 1., 1.]), 2)
            return 40, 5.0, 1.0, array
    """)
    assert [type(o.value) for o in graph.outputs[:3]] == [int, float, float]


# ----- algebraic simplification -----


def test_simplify_drops_unit_seeds_and_reuses_forward_values(source):
    graph = _plain(source.tanh_energy, (0, 1))
    _assert_prints(graph, """
        graph tanh_energy_grad(x, w):
            t1 = multiply(x, w)           # line 17
            h = tanh(t1)                  # line 17
            t2 = power(h, 2)              # line 18
            t3 = shape(h)                 # grad of line 18
            dh = broadcast_to(1.0, t3)    # grad of line 18
            t4 = shape(t2)                # grad of line 18
            dt2 = broadcast_to(1.0, t4)   # grad of line 18
            t5 = multiply(dt2, 2)         # grad of line 18
            t6 = power(h, 1)              # grad of line 18
            dh_1 = multiply(t5, t6)       # grad of line 18
            dh_2 = accumulate(dh, dh_1)   # grad of line 18
            t7 = multiply(h, h)           # grad of line 17
            t8 = subtract(1, t7)          # grad of line 17
            dt1 = multiply(dh_2, t8)      # grad of line 17
            t9 = multiply(dt1, w)         # grad of line 17
            dx = unbroadcast(t9, x)       # grad of line 17
            t10 = multiply(dt1, x)        # grad of line 17
            dw = unbroadcast(t10, w)      # grad of line 17
            dx_1 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_1, dw_1)
    """)
    simplify(graph)
    # The seeds stay scalars (2 * 1.0 is 2.0, 1.0 + dh needs no array of ones); the
    # tanh rule reads the forward h (1 - h * h), and h ** 1 is h.
    _assert_prints(graph, """
        graph tanh_energy_grad(x, w):
            t1 = multiply(x, w)            # line 17
            h = tanh(t1)                   # line 17
            t2 = power(h, 2)               # line 18
            t3 = shape(t1)                 # grad of line 18
            dh = broadcast_like(1.0, t1)   # grad of line 18
            t4 = shape(t1)                 # grad of line 18
            dt2 = broadcast_like(1.0, t1)  # grad of line 18
            t5 = broadcast_like(2.0, t1)   # grad of line 18
            dh_1 = multiply(2.0, h)        # grad of line 18
            dh_2 = add(1.0, dh_1)          # grad of line 18
            t6 = multiply(h, h)            # grad of line 17
            t7 = subtract(1, t6)           # grad of line 17
            dt1 = multiply(dh_2, t7)       # grad of line 17
            t8 = multiply(dt1, w)          # grad of line 17
            dx = unbroadcast(t8, x)        # grad of line 17
            t9 = multiply(dt1, x)          # grad of line 17
            dw = unbroadcast(t9, w)        # grad of line 17
            dx_1 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_1, dw_1)
    """)
    assert sum(n.op.name == "tanh" for n in walk(_optimised(source.tanh_energy, 0).nodes)) == 1
    cases = [_random((3, 4), (4,)), _random((3, 4), (3, 1)), _random((2, 3, 4), (3, 4)),
             _random(None, (5,)), _random(None, None)]
    _check(graph, source.tanh_energy, (0, 1), cases)


def _simplified(graph: Graph) -> Graph:
    """``simplify`` run until it changes nothing (one rewrite may enable the next)."""
    while True:
        before = format_graph(graph)
        simplify(graph)
        if format_graph(graph) == before:
            return graph


def test_simplify_keeps_broadcast_scalars_scalar(source):
    # The seed divided by an array of its own shape is a scalar divided by it.
    graph = _simplified(_plain(source.softplus_total, 0))
    _assert_prints(graph, """
        graph softplus_total_grad(y):
            t1 = exp(y)                   # line 22
            t2 = log1p(t1)                # line 22
            t3 = shape(y)                 # grad of line 22
            dt2 = broadcast_like(1.0, y)  # grad of line 22
            t4 = add(1, t1)               # grad of line 22
            dt1 = divide(1.0, t4)         # grad of line 22
            dy = multiply(dt1, t1)        # grad of line 22
            dy_1 = as_gradient_of(dy, y)
            return dy_1
    """)
    _check(graph, source.softplus_total, 0, [_random((3, 4)), _random((2, 1, 3)), _random(None)])

    # The adjoint of a scalar added everywhere is the sum of a broadcast 1.0: the count.
    graph = _plain(source.offset_by_total, (0, 1))
    _assert_prints(graph, """
        graph offset_by_total_grad(x, w):
            s = sum(w)                    # line 26
            t1 = multiply(x, 2.0)         # line 27
            t2 = add(t1, s)               # line 27
            t3 = shape(t2)                # grad of line 27
            dt2 = broadcast_to(1.0, t3)   # grad of line 27
            ds = unbroadcast(dt2, s)      # grad of line 27
            dx = multiply(dt2, 2.0)       # grad of line 27
            t4 = shape(w)                 # grad of line 26
            dw = broadcast_to(ds, t4)     # grad of line 26
            dx_1 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_1, dw_1)
    """)
    _simplified(graph)
    _assert_prints(graph, """
        graph offset_by_total_grad(x, w):
            s = sum(w)                    # line 26
            t1 = multiply(x, 2.0)         # line 27
            t2 = add(t1, s)               # line 27
            t3 = shape(x)                 # grad of line 27
            dt2 = broadcast_like(1.0, x)  # grad of line 27
            t4 = size(x)                  # grad of line 27
            ds = multiply(1.0, t4)        # grad of line 27
            dx = broadcast_like(2.0, x)   # grad of line 27
            t5 = shape(w)                 # grad of line 26
            dw = broadcast_like(ds, w)    # grad of line 26
            dx_1 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_1, dw_1)
    """)
    cases = [_random((3, 4), (4,)), _random((3, 4), (2, 2)), _random((5,), None),
             _random(None, (3,))]
    _check(graph, source.offset_by_total, (0, 1), cases)


def test_simplify_merges_double_transposes(source):
    graph = _plain(source.transposed_twice, (0, 1))
    _assert_prints(graph, """
        graph transposed_twice_grad(x, w):
            t1 = transpose(x, axes=(1, 0, 2))      # line 31
            y = transpose(t1, axes=(0, 2, 1))      # line 31
            t2 = transpose(x, axes=(1, 2, 0))      # line 32
            z = transpose(t2, axes=(2, 0, 1))      # line 32
            t3 = multiply(y, w)                    # line 33
            t4 = transpose(x)                      # line 33
            t5 = transpose(t4)                     # line 33
            t6 = multiply(t5, z)                   # line 33
            t7 = shape(t6)                         # grad of line 33
            dt6 = broadcast_to(1.0, t7)            # grad of line 33
            t8 = multiply(dt6, z)                  # grad of line 33
            dt5 = unbroadcast(t8, t5)              # grad of line 33
            t9 = multiply(dt6, t5)                 # grad of line 33
            dz = unbroadcast(t9, z)                # grad of line 33
            dt4 = transpose(dt5)                   # grad of line 33
            dx = transpose(dt4)                    # grad of line 33
            t10 = shape(t3)                        # grad of line 33
            dt3 = broadcast_to(1.0, t10)           # grad of line 33
            t11 = multiply(dt3, w)                 # grad of line 33
            dy = unbroadcast(t11, y)               # grad of line 33
            t12 = multiply(dt3, y)                 # grad of line 33
            dw = unbroadcast(t12, w)               # grad of line 33
            dt2 = transpose(dz, axes=(1, 2, 0))    # grad of line 32
            dx_1 = transpose(dt2, axes=(2, 0, 1))  # grad of line 32
            dx_2 = accumulate(dx, dx_1)            # grad of line 32
            dt1 = transpose(dy, axes=(0, 2, 1))    # grad of line 31
            dx_3 = transpose(dt1, axes=(1, 0, 2))  # grad of line 31
            dx_4 = accumulate(dx_2, dx_3)          # grad of line 31
            dx_5 = as_gradient_of(dx_4, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_5, dw_1)
    """)
    simplify(graph)
    # x.T.T is x; two explicit orders compose into one (an identity one keeps
    # np.transpose's promise of an array: np.asarray).
    _assert_prints(graph, """
        graph transposed_twice_grad(x, w):
            t1 = transpose(x, axes=(1, 0, 2))     # line 31
            y = transpose(x, axes=(1, 2, 0))      # line 31
            t2 = transpose(x, axes=(1, 2, 0))     # line 32
            z = asarray(x)                        # line 32
            t3 = multiply(y, w)                   # line 33
            t4 = transpose(x)                     # line 33
            t5 = multiply(x, z)                   # line 33
            t6 = shape(t5)                        # grad of line 33
            dt5 = broadcast_like(1.0, t5)         # grad of line 33
            t7 = multiply(dt5, z)                 # grad of line 33
            dx = unbroadcast(t7, x)               # grad of line 33
            t8 = multiply(dt5, x)                 # grad of line 33
            dz = unbroadcast(t8, x)               # grad of line 33
            dt4 = transpose(dx)                   # grad of line 33
            t9 = shape(t3)                        # grad of line 33
            dt3 = broadcast_like(1.0, t3)         # grad of line 33
            t10 = multiply(dt3, w)                # grad of line 33
            dy = unbroadcast(t10, y)              # grad of line 33
            t11 = multiply(dt3, y)                # grad of line 33
            dw = unbroadcast(t11, w)              # grad of line 33
            dt2 = transpose(dz, axes=(1, 2, 0))   # grad of line 32
            dx_1 = asarray(dz)                    # grad of line 32
            dx_2 = accumulate(dx, dx_1)           # grad of line 32
            dt1 = transpose(dy, axes=(0, 2, 1))   # grad of line 31
            dx_3 = transpose(dy, axes=(2, 0, 1))  # grad of line 31
            dx_4 = accumulate(dx_2, dx_3)         # grad of line 31
            dx_5 = as_gradient_of(dx_4, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_5, dw_1)
    """)
    # x is (2, 2, 2) or (3, 3, 3) so that x.T and x have the same shape; w broadcasts.
    cases = [_random((2, 2, 2), (2, 2, 2)), _random((3, 3, 3), (3, 1)),
             _random((2, 2, 2), None)]
    _check(graph, source.transposed_twice, (0, 1), cases)


def test_unbroadcast_between_equal_shapes_is_dropped_while_building(source):
    # The reverse transform drops it as it builds (nothing left for simplify): sin(x)
    # * x has x's shape, so its adjoint goes to sin(x) and to x as it is; w may have
    # been broadcast, so its adjoint keeps an unbroadcast.
    graph = _plain(source.same_shapes, (0, 1))
    _assert_prints(graph, """
        graph same_shapes_grad(x, w):
            t1 = sin(x)                     # line 37
            t2 = multiply(t1, x)            # line 37
            t3 = multiply(t2, w)            # line 37
            t4 = shape(t3)                  # grad of line 37
            dt3 = broadcast_to(1.0, t4)     # grad of line 37
            t5 = multiply(dt3, w)           # grad of line 37
            dt2 = unbroadcast(t5, t2)       # grad of line 37
            t6 = multiply(dt3, t2)          # grad of line 37
            dw = unbroadcast(t6, w)         # grad of line 37
            dt1 = multiply(dt2, x)          # grad of line 37
            dx = multiply(dt2, t1)          # grad of line 37
            t7 = cos(x)                     # grad of line 37
            dx_1 = multiply(dt1, t7)        # grad of line 37
            dx_2 = accumulate(dx, dx_1)     # grad of line 37
            dx_3 = as_gradient_of(dx_2, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_3, dw_1)
    """)
    cases = [_random((3, 4), (4,)), _random((3, 4), (3, 4)), _random(None, (2,))]
    _check(graph, source.same_shapes, (0, 1), cases)


# ----- copy propagation -----


def test_propagate_copies_reads_loop_invariants_directly(source):
    graph = _plain(source.renamed_in_loop, (0, 1))
    _assert_prints(graph, """
        graph renamed_in_loop_grad(x, w):
            shape_stack = tape_new()
            scale_stack = tape_new()
            scale = for i in range(0, 3, 1) with scale from (w):                               # line 43
                tape_push(scale_stack, scale)                                                  # line 43
                t1 = multiply(x, scale)                                                        # line 45
                shape = shape_of(t1)                                                           # line 45
                tape_push(shape_stack, shape)                                                  # line 45
                yield scale
            t2 = zero_adjoint(scale)                                                           # grad of line 43
            dx = zero_adjoint(x)                                                               # grad of line 45
            t2, t, dx = for i_1 in reversed range(0, 3, 1) with t2, t, dx from (t2, 1.0, dx):  # grad of line 43
                scale_1 = tape_pop(scale_stack)                                                # grad of line 43
                shape_1 = tape_pop(shape_stack)                                                # grad of line 45
                dt1 = broadcast_to(t, shape_1)                                                 # grad of line 45
                t3 = multiply(dt1, scale_1)                                                    # grad of line 45
                dx_1 = unbroadcast(t3, x)                                                      # grad of line 45
                t4 = multiply(dt1, x)                                                          # grad of line 45
                dscale = unbroadcast(t4, scale_1)                                              # grad of line 45
                t2 = accumulate(t2, dscale)                                                    # grad of line 45
                dx = accumulate(dx, dx_1)                                                      # grad of line 45
                yield t2, t, dx
            dx_2 = as_gradient_of(dx, x)
            dw = as_gradient_of(t2, w)
            return (dx_2, dw)
    """)
    propagate_copies(graph)
    # ``scale = scale`` leaves it w in every iteration, the backward loop's seed t
    # is 1.0 throughout, and what the tape gives back is w again.
    _assert_prints(graph, """
        graph renamed_in_loop_grad(x, w):
            shape_stack = tape_new()
            scale_stack = tape_new()
             = for i in range(0, 3, 1) with  from ():                               # line 43
                tape_push(scale_stack, w)                                           # line 43
                t1 = multiply(x, w)                                                 # line 45
                shape = shape_of(t1)                                                # line 45
                tape_push(shape_stack, shape)                                       # line 45
                yield 
            t2 = zero_adjoint(w)                                                    # grad of line 43
            dx = zero_adjoint(x)                                                    # grad of line 45
            t2, dx = for i_1 in reversed range(0, 3, 1) with t2, dx from (t2, dx):  # grad of line 43
                shape_1 = tape_pop(shape_stack)                                     # grad of line 45
                dt1 = broadcast_to(1.0, shape_1)                                    # grad of line 45
                t3 = multiply(dt1, w)                                               # grad of line 45
                dx_1 = unbroadcast(t3, x)                                           # grad of line 45
                t4 = multiply(dt1, x)                                               # grad of line 45
                dw = unbroadcast(t4, w)                                             # grad of line 45
                t2 = accumulate(t2, dw)                                             # grad of line 45
                dx = accumulate(dx, dx_1)                                           # grad of line 45
                yield t2, dx
            dx_2 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(t2, w)
            return (dx_2, dw_1)
    """)
    cases = [_random((3, 4), (4,)), _random((3, 4), (3, 1)), _random((2,), None)]
    _check(graph, source.renamed_in_loop, (0, 1), cases)


@pytest.mark.parametrize("name, wrt, gone", [
    ("renamed_in_while", (0, 1), "w_stack"),  # a while loop's unchanged variable
    ("same_either_way", 0, " = if "),        # both branches give sin(x)
    ("as_arrays", 0, "asarray(t1)"),         # np.asarray of an ndarray is that array
])
def test_propagate_copies_of_while_loops_branches_and_arrays(source, name, wrt, gone):
    fn = getattr(source, name)
    graph = _plain(fn, wrt)
    assert gone in format_graph(graph)
    # simplify makes both branches give sin(x); dead-code elimination drops the empty if.
    for run in (simplify, propagate_copies, eliminate_dead_code):
        run(graph)
    assert gone not in format_graph(graph)
    shapes = {"renamed_in_while": [((3,), (3,)), ((2, 3), (3,)), ((4,), None)],
              "same_either_way": [((3,),), ((2, 3),)],
              "as_arrays": [((3,),), ((2, 3),)]}[name]
    cases = []
    for seed, shape in enumerate(shapes):
        args = _random(*shape, seed=seed)
        cases += [args + [1], args + [-1]] if name == "same_either_way" else [args]
    _check(graph, fn, wrt, cases)


# ----- common subexpressions -----


def test_eliminate_common_subexpressions(source):
    graph = _plain(source.repeated_sine, (0, 1))
    _assert_prints(graph, """
        graph repeated_sine_grad(x, w):
            t1 = sin(x)                     # line 74
            t2 = multiply(t1, w)            # line 74
            t3 = sin(x)                     # line 74
            t4 = power(t3, 2)               # line 74
            t5 = shape(t4)                  # grad of line 74
            dt4 = broadcast_to(1.0, t5)     # grad of line 74
            t6 = multiply(dt4, 2)           # grad of line 74
            t7 = power(t3, 1)               # grad of line 74
            dt3 = multiply(t6, t7)          # grad of line 74
            t8 = cos(x)                     # grad of line 74
            dx = multiply(dt3, t8)          # grad of line 74
            t9 = shape(t2)                  # grad of line 74
            dt2 = broadcast_to(1.0, t9)     # grad of line 74
            t10 = multiply(dt2, w)          # grad of line 74
            dt1 = unbroadcast(t10, t1)      # grad of line 74
            t11 = multiply(dt2, t1)         # grad of line 74
            dw = unbroadcast(t11, w)        # grad of line 74
            dx_1 = multiply(dt1, t8)        # grad of line 74
            dx_2 = accumulate(dx, dx_1)     # grad of line 74
            dx_3 = as_gradient_of(dx_2, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_3, dw_1)
    """)
    eliminate_common_subexpressions(graph)
    _assert_prints(graph, """
        graph repeated_sine_grad(x, w):
            t1 = sin(x)                     # line 74
            t2 = multiply(t1, w)            # line 74
            t3 = power(t1, 2)               # line 74
            t4 = shape(t3)                  # grad of line 74
            dt3 = broadcast_to(1.0, t4)     # grad of line 74
            t5 = multiply(dt3, 2)           # grad of line 74
            t6 = power(t1, 1)               # grad of line 74
            dt1 = multiply(t5, t6)          # grad of line 74
            t7 = cos(x)                     # grad of line 74
            dx = multiply(dt1, t7)          # grad of line 74
            t8 = shape(t2)                  # grad of line 74
            dt2 = broadcast_to(1.0, t8)     # grad of line 74
            t9 = multiply(dt2, w)           # grad of line 74
            dt1_1 = unbroadcast(t9, t1)     # grad of line 74
            t10 = multiply(dt2, t1)         # grad of line 74
            dw = unbroadcast(t10, w)        # grad of line 74
            dx_1 = multiply(dt1_1, t7)      # grad of line 74
            dx_2 = accumulate(dx, dx_1)     # grad of line 74
            dx_3 = as_gradient_of(dx_2, x)
            dw_1 = as_gradient_of(dw, w)
            return (dx_3, dw_1)
    """)
    cases = [_random((3, 4), (4,)), _random((3, 4), (3, 1)), _random(None, (2,))]
    _check(graph, source.repeated_sine, (0, 1), cases)


# ----- dead code -----


def test_eliminate_dead_code_drops_forward_values_and_tape_pushes_nobody_reads(source):
    # After simplification the seed's array of ones and log1p(exp(y)) are unread.
    graph = _simplified(_plain(source.softplus_total, 0))
    eliminate_dead_code(graph)
    _assert_prints(graph, """
        graph softplus_total_grad(y):
            t1 = exp(y)                   # line 22
            t2 = add(1, t1)               # grad of line 22
            dt1 = divide(1.0, t2)         # grad of line 22
            dy = multiply(dt1, t1)        # grad of line 22
            dy_1 = as_gradient_of(dy, y)
            return dy_1
    """)
    # After copy propagation nothing pops the tape of scale (see the test above).
    graph = propagate_copies(_plain(source.renamed_in_loop, (0, 1)))
    eliminate_dead_code(graph)
    _assert_prints(graph, """
        graph renamed_in_loop_grad(x, w):
            shape_stack = tape_new()
             = for i in range(0, 3, 1) with  from ():                               # line 43
                t1 = multiply(x, w)                                                 # line 45
                shape = shape_of(t1)                                                # line 45
                tape_push(shape_stack, shape)                                       # line 45
                yield 
            t2 = zero_adjoint(w)                                                    # grad of line 43
            dx = zero_adjoint(x)                                                    # grad of line 45
            t2, dx = for i_1 in reversed range(0, 3, 1) with t2, dx from (t2, dx):  # grad of line 43
                shape_1 = tape_pop(shape_stack)                                     # grad of line 45
                dt1 = broadcast_to(1.0, shape_1)                                    # grad of line 45
                t3 = multiply(dt1, w)                                               # grad of line 45
                dx_1 = unbroadcast(t3, x)                                           # grad of line 45
                t4 = multiply(dt1, x)                                               # grad of line 45
                dw = unbroadcast(t4, w)                                             # grad of line 45
                t2 = accumulate(t2, dw)                                             # grad of line 45
                dx = accumulate(dx, dx_1)                                           # grad of line 45
                yield t2, dx
            dx_2 = as_gradient_of(dx, x)
            dw_1 = as_gradient_of(t2, w)
            return (dx_2, dw_1)
    """)
    _check(graph, source.renamed_in_loop, (0, 1), [_random((3, 4), (4,)), _random((2,), None)])


# ----- fan-out: adjoints summed as their contributions arrive -----


def test_fan_out_contributions_are_summed_where_they_are_made():
    assert ad.grad(codegen_corpus.polynomial).source == textwrap.dedent('''\
        def polynomial_grad(x):
            if type(x) not in array_kinds:
                return by_structure(x)
            try:
                # grad of line 21: return 3.0 * x ** 3 + 2.0 * x ** 2 - 5.0 * x + 1.0
                dx = 4.0 * x
                dx = dx - 5.0
                t1 = x * x
                dx_1 = 9.0 * t1
                del t1
                dx = dx + dx_1
                del dx_1
                # the gradients, with the shapes and dtypes of the arguments
                if x.__class__ is not float:
                    dx = as_gradient_of(dx, x, where='corpus.py:21')
                return dx
            except Exception as error:
                raise at_user_line(error)
    ''')
    # Straight-line code: each contribution is added to its adjoint before the next
    # one is made, so at most one is alive at a time, however many uses a value has.
    for fn in (codegen_corpus.two_layer_net, codegen_corpus.rosenbrock,
               codegen_corpus.softmax_cross_entropy, codegen_corpus.scalar_chain,
               codegen_corpus.fan_out, codegen_corpus.shapes_and_indexing,
               codegen_corpus.reductions):
        wrt = tuple(range(len(inspect.signature(fn).parameters)))
        alive = _contributions_alive_at_once(ad.grad(fn, wrt=wrt).source)
        fans_out = fn in (codegen_corpus.scalar_chain, codegen_corpus.fan_out)
        assert alive == 1 if fans_out else alive <= 1, fn.__name__


def _contributions_alive_at_once(source: str) -> int:
    """The most contributions to one adjoint computed and not yet added to it."""
    lines = [line.strip() for line in source.splitlines()]
    spans: dict[str, list[tuple[int, int]]] = {}
    for end, line in enumerate(lines):
        summed = re.fullmatch(r"(d\w+) (?:\+= |= \1 \+ )(\w+)", line)
        if summed:
            start = max(i for i in range(end) if lines[i].startswith(summed[2] + " = "))
            spans.setdefault(summed[1], []).append((start, end))
    return max((sum(start < end_ and start_ < end for start_, end_ in found)
                for found in spans.values() for start, end in found), default=0)


# ----- every pass on the whole corpus -----


@pytest.mark.parametrize("program", CORPUS + CONTROL_FLOW,
                         ids=[p.fn.__name__ for p in CORPUS + CONTROL_FLOW])
def test_each_pass_alone_keeps_every_corpus_gradient(program):
    """tests/corpus/test_corpus.py compares ``optimize=True`` with ``optimize=False``;
    here each pass runs alone on the unoptimised derivative, so that a wrong rewrite
    is caught by the pass that makes it even where another pass would hide it."""
    args = program.make_args(np.random.default_rng(11))
    expected = _gradients(ad.grad(program.fn, wrt=program.wrt, optimize=False)(*args),
                          program.wrt)
    for run in (*PASSES, optimize):
        graph = run(_plain(program.fn, program.wrt))
        ours = _gradients(_compiled(graph, program.fn)(*args), program.wrt)
        _assert_same(ours, expected, rtol=1e-11)


def row_energy(x, w):
    return np.sum(np.sum(x * x, axis=1) * w)


def test_simplify_runs_elementwise_ops_on_the_small_side_of_a_broadcast():
    """The adjoint of a sum over an axis is a broadcast view: multiplying it by an
    array of the full shape needs no broadcast, and by a scalar scales the small array."""
    plain = ad.grad(row_energy, wrt=(0, 1), optimize=False)
    graph = ad.grad(row_energy, wrt=(0, 1)).graph
    broadcasts = [n for n in walk(graph.nodes) if isinstance(n, Node)
                  and n.op.name == "broadcast_to" and isinstance(n.args[0], Value)]
    assert "broadcast_to" in plain.source and not broadcasts, format_graph(graph)
    rng = np.random.default_rng(4)
    for shapes in [((4, 3), (4,)), ((2, 4, 3), (3,)), ((5, 1), (5,))]:
        x, w = (rng.normal(size=s) for s in shapes)
        got = ad.grad(row_energy, wrt=(0, 1))(x, w)
        numeric = ad.numeric_grad(row_energy, x, w, wrt=(0, 1))
        for a, b, c in zip(got, plain(x, w), numeric):
            np.testing.assert_allclose(a, b, rtol=1e-13)
            np.testing.assert_allclose(a, c, rtol=1e-7, atol=1e-9)


def decay(x, k, rate, steps):
    for _ in range(steps):
        x = x + rate * -k * x
    return np.sum(np.exp(-x * x))


def test_simplify_takes_a_negated_contribution_off_an_adjoint_in_place():
    """``dk += -d`` is ``dk -= d``: no array of its own for the negation."""
    plain = ad.grad(decay, wrt=(0, 1, 2), optimize=False)
    optimised = ad.grad(decay, wrt=(0, 1, 2))
    graph = optimised.graph
    taken = [n for n in walk(graph.nodes) if isinstance(n, Node)
             and n.op.name == "accumulate_negated"]
    assert taken and " -= " in optimised.source, optimised.source
    rng = np.random.default_rng(9)
    for shapes in [((4,), (4,)), ((3, 4), (4,)), ((5,), ())]:
        x, k = (rng.normal(size=s) for s in shapes)
        args = (x, k, 0.1, 3)
        got = optimised(*args)
        numeric = ad.numeric_grad(decay, *args, wrt=(0, 1, 2))
        for a, b, c in zip(got, plain(*args), numeric):
            np.testing.assert_allclose(a, b, rtol=1e-13)
            np.testing.assert_allclose(a, c, rtol=1e-7, atol=1e-9)
    from tests.helpers import check_against_finite_differences
    check_against_finite_differences(decay, [rng.normal(size=3), rng.normal(size=3), 0.2, 2],
                                     wrt=(0, 1), second_order=True)
    for a, b in zip(ad.grad(decay, wrt=(0, 1, 2), jit=True)(*args), plain(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def damped(x, v, c, steps):
    for _ in range(steps):
        a = -x - c * v
        v = v + 0.1 * a
        x = x + 0.1 * v
    return np.sum(x * x)


def test_simplify_takes_a_product_with_a_negated_factor_off_an_adjoint():
    """``dv += (-d) * c`` is ``dv -= d * c``: the negation meets the accumulation."""
    rng = np.random.default_rng(10)
    args = (rng.normal(size=6), rng.normal(size=6), 0.3, 4)
    jitted = ad.grad(damped, wrt=(0, 1), jit=True)
    backward = jitted.source_for(*args).split("reversed(")[1]
    assert backward.count(" -= ") == 2 and "np.negative" not in backward, backward
    plain = ad.grad(damped, wrt=(0, 1), optimize=False)
    for a, b in zip(jitted(*args), plain(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    from tests.helpers import check_against_finite_differences
    check_against_finite_differences(damped, list(args), wrt=(0, 1, 2), second_order=True)
