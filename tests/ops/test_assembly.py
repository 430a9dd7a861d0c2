"""Assembly and rearranging ops: repeat, tile, roll, flips, rot90, triangles, diagonals,
the stacks, take, kron, cross, tensordot, append, pad, splits, select, choose, insert,
delete, meshgrid, clip's keyword forms, math.fsum.

Each is linear (bilinear for kron, cross and tensordot), so its VJP is its
transpose, written with the op itself or a helper whose own VJP is the op; select,
choose and clip are piecewise linear.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import NonDifferentiableError
from tests.ops.table import table_test

CASES = [
    # repeating, rolling, flipping, rotating
    ("np.repeat(x, 2)", [(2, 3)]), ("np.repeat(x, 3, axis=1)", [(2, 3)]),
    ("np.repeat(x, [2, 0, 1], axis=-1)", [(2, 3)]), ("x.repeat([1, 3], axis=0)", [(2, 3)]),
    ("np.repeat(x, 2)", [None]), ("np.repeat(x * y, 2, axis=0) * y", [(3, 1), (3,)]),
    ("np.repeat(x, 0, axis=0)", [(2, 3)]), ("np.repeat(x, 2, axis=1)", [(2, 0)]),
    ("np.tile(x, 2)", [(3,)]), ("np.tile(x, (2, 1, 3))", [(2, 3)]), ("np.tile(x, (2,))", [(2, 3)]),
    ("np.tile(x, (1, 2)) * y", [None, (2,)]), ("np.tile(x, (0, 2))", [(3,)]),
    ("np.roll(x, 2)", [(2, 3)]), ("np.roll(x, -1, axis=1)", [(2, 3)]),
    ("np.roll(x, (1, 2), axis=(0, 1))", [(3, 4)]), ("np.roll(x, (1, -1), axis=(1, 1))", [(2, 4)]),
    ("np.flipud(x) * x", [(3, 2)]), ("np.fliplr(x) * x", [(2, 3, 2)]), ("np.flipud(x)", [(4,)]),
    ("np.rot90(x)", [(2, 3)]), ("np.rot90(x, 2)", [(2, 3)]), ("np.rot90(x, -1) * y", [(2, 3), (3, 2)]),
    ("np.rot90(x, k=3, axes=(1, 2))", [(2, 3, 4)]), ("np.rot90(x, 5, axes=(-1, 0))", [(2, 3, 4)]),
    # triangles (a vector is every row of a square matrix)
    ("np.triu(x)", [(3, 4)]), ("np.triu(x, 1)", [(4, 3)]), ("np.triu(x, k=-1)", [(2, 3, 3)]),
    ("np.tril(x)", [(3, 3)]), ("np.tril(x, -1) * x", [(3, 4)]), ("np.tril(x, k=2)", [(2, 3, 4)]),
    ("np.triu(x)", [(4,)]), ("np.tril(x, 1)", [(3,)]),
    # diagonals
    ("np.diag(x)", [(3,)]), ("np.diag(x, 1)", [(3,)]), ("np.diag(x, k=-2) * y", [(2,), (4, 4)]),
    ("np.diag(x)", [(3, 3)]), ("np.diag(x, -1)", [(3, 4)]), ("np.diag(x, k=2)", [(3, 5)]),
    ("np.diag(np.diag(x)) * x", [(3,)]), ("np.diag(x @ x.T)", [(3, 2)]),
    ("np.diagonal(x)", [(3, 4)]), ("np.diagonal(x, 1)", [(3, 4)]),
    ("np.diagonal(x, offset=-1, axis1=2, axis2=0)", [(3, 2, 4)]), ("x.diagonal()", [(2, 3, 3)]),
    ("x.diagonal(1, 0, -1) * y", [(3, 2, 4), (2, 3)]), ("np.diagonal(x, 5)", [(3, 3)]),
    ("np.diagflat(x)", [(2, 2)]), ("np.diagflat(x, 1)", [(3,)]), ("np.diagflat(x * y, -1)", [None, None]),
    # stacks
    ("np.vstack([x, y])", [(3,), (2, 3)]), ("np.vstack((x, y, x))", [(2, 3), (1, 3)]),
    ("np.vstack([x, 2.0])", [None]), ("np.vstack([x, y * x])", [(2, 2, 2), (1, 2, 2)]),
    ("np.hstack([x, y])", [(3,), (2,)]), ("np.hstack((x, y, x))", [(2, 3), (2, 1)]),
    ("np.hstack([x, y])", [None, (2,)]),
    ("np.dstack([x, y])", [(3,), (3,)]), ("np.dstack((x, y))", [(2, 3), (2, 3, 2)]),
    ("np.row_stack([x, y])", [(3,), (2, 3)]), ("np.column_stack([x, y])", [(3,), (3, 2)]), ("np.column_stack((x, y, x))", [(4,), (4,)]),
    # ranks and axis orders
    ("np.atleast_1d(x)", [None]), ("np.atleast_1d(x) * x", [(3,)]), ("np.atleast_2d(x)", [(3,)]),
    ("np.atleast_2d(x) * y", [None, (2, 2)]), ("np.atleast_3d(x)", [(3,)]),
    ("np.atleast_3d(x)", [(2, 3)]), ("np.atleast_3d(x)", [(2, 3, 4)]),
    ("np.rollaxis(x, 2)", [(2, 3, 4)]), ("np.rollaxis(x, 0, 3)", [(2, 3, 4)]),
    ("np.rollaxis(x, -1, 1) * y", [(2, 3, 4), (4, 1)]), ("np.rollaxis(x, 1, start=-1)", [(2, 3, 4)]),
    # gathering (repeated and negative indices add up)
    ("np.take(x, [0, 2, 2, -1])", [(2, 3)]), ("np.take(x, [[1, 0], [1, 1]], axis=1)", [(2, 3)]),
    ("x.take(1, axis=0)", [(3, 2)]), ("x.take([3, 0, 3])", [(4,)]), ("np.take(x, 0) * y", [None, (2,)]),
    ("np.take(x, np.array([2, 0, 1]), axis=-1) * y", [(2, 3), (3,)]),
    ("np.take_along_axis(x, np.array([[1, 0, 3, 2], [3, 2, 1, 0], [0, 0, 1, 1]]), axis=1)", [(3, 4)]),
    ("np.take_along_axis(x, np.array([[0, 2, 2]]), axis=0)", [(3, 3)]),
    ("np.take_along_axis(x, np.array([[0], [2], [2]]), 1) * y", [(3, 4), (3, 1)]),
    ("np.take_along_axis(x, np.array([[0, 1, 0, 1]]), axis=0)", [(2, 1)]),
    ("np.take_along_axis(x, np.array([3, 0, 0]), axis=None)", [(2, 2)]),
    ("np.take(x, np.zeros((2, 0), dtype=int), axis=0)", [(3, 2)]),
    # products that arrange their factors
    ("np.kron(x, y)", [(2, 3), (3, 2)]), ("np.kron(x, y)", [(3,), (2,)]),
    ("np.kron(x, y)", [(2, 3), (2,)]), ("np.kron(x, y)", [(2,), (2, 2, 2)]),
    ("np.kron(x, x)", [(2, 2)]), ("np.kron(x, y)", [None, (3,)]), ("np.kron(x, y)", [(0, 2), (2, 3)]),
    ("np.cross(x, y)", [(3,), (3,)]), ("np.cross(x, y)", [(4, 3), (3,)]),
    ("np.cross(x, y, axis=0)", [(3, 2), (3, 1)]), ("np.cross(x, x * y)", [(2, 3), (2, 3)]),
    ("np.cross(x, y)", [(2,), (2,)]), ("np.cross(x, y)", [(4, 2), (2,)]), ("np.cross(x, y)", [(3,), (2,)]),
    ("np.cross(x, y)", [(2, 2), (2, 3)]), ("np.cross(x, y, axis=0)", [(2, 4), (3, 1)]),
    ("np.cross(x, y, axis=0)", [(2, 3), (2, 3)]), ("np.cross(x, y)", [(0, 3), (3,)]),
    ("np.tensordot(x, y)", [(2, 3), (2, 3)]), ("np.tensordot(x, y, 1)", [(2, 3), (3, 4)]),
    ("np.tensordot(x, y, axes=0)", [(2,), (3,)]),
    ("np.tensordot(x, y, axes=([1, 0], [0, 2]))", [(3, 2, 2), (2, 4, 3)]),
    ("np.tensordot(x, y, axes=(1, 0))", [(2, 3), (3,)]), ("np.tensordot(x, x, axes=([0], [1]))", [(3, 3)]),
    # append: flattened without an axis
    ("np.append(x, y)", [(2, 3), (2,)]), ("np.append(x, y)", [None, (2, 2)]),
    ("np.append(x, y, axis=0)", [(2, 3), (1, 3)]), ("np.append(x, x * y, axis=-1)", [(2, 2), (2, 2)]),
    ("np.append(x, 2.0)", [(3,)]),
    # pad, with pad widths in each form NumPy takes
    ("np.pad(x, 1)", [(2, 3)]), ("np.pad(x, ((1, 1), (0, 0)), constant_values=y)", [(0, 2), None]), ("np.pad(x, (1, 2))", [(2, 3)]), ("np.pad(x, ((0, 2), (1, 0)))", [(2, 3)]),
    ("np.pad(x, ((2,),))", [(2, 3)]), ("np.pad(x, [(1, 1), (0, 3)], constant_values=2.0)", [(2, 3)]),
    ("np.pad(x, 2, constant_values=y)", [(2, 3), None]),
    ("np.pad(x, ((1, 2), (2, 1)), constant_values=y)", [(2, 3), (2,)]),
    ("np.pad(x, ((1, 2), (2, 1)), constant_values=y)", [(2, 3), (2, 2)]),
    ("np.pad(x, ((1, 2),), constant_values=y)", [(3,), (1, 2)]),
    ("np.pad(x, 1, 'edge')", [(2, 3)]), ("np.pad(x, (2, 3), mode='edge')", [(3,)]),
    ("np.pad(x, ((3, 1), (1, 2)), mode='reflect')", [(3, 3)]), ("np.pad(x, 5, mode='reflect')", [(3,)]),
    ("np.pad(x, 2, mode='symmetric')", [(2, 3)]), ("np.pad(x, (1, 4), mode='wrap') * x[0]", [(3,)]),
    ("np.pad(x * y, 1, mode='reflect')", [(2, 3), (3,)]),
    # splits: lists of pieces, indexed or unpacked (pieces nothing reads get zeros)
    ("np.split(x, 2)[0] * np.split(x, 2)[1]", [(4, 3)]), ("np.split(x, [1, 3], axis=1)[1]", [(2, 4)]),
    ("np.split(x, [1, 3], axis=-1)[2] + np.split(x, [1, 3], axis=-1)[0]", [(2, 4)]),
    ("np.concatenate(np.split(x, 3)) * y", [(6,), (6,)]), ("np.split(x, [2, 1])[2] * x[1:]", [(4,)]),
    ("np.split(x, [3, 1, 5])[2] + np.split(x, [3, 1, 5])[0]", [(4,)]),
    ("np.split(x, [0, -1], axis=1)[1] * np.split(x, [0, -1], axis=1)[2]", [(2, 3)]),
    ("pieces(x)", [(3, 4)]),
    ("np.array_split(x, 3)[0]", [(5,)]), ("np.array_split(x, 2, axis=1)[1] * 2.0", [(2, 3)]),
    ("np.array_split(x, [1])[1] * np.array_split(x, [1])[0]", [(3, 2)]),
    ("np.hsplit(x, 2)[1]", [(4,)]), ("np.hsplit(x, [1])[1] * x[:, :1]", [(2, 3)]),
    ("np.vsplit(x, 2)[0] * np.vsplit(x, 2)[1]", [(4, 2)]), ("np.dsplit(x, [1])[1]", [(2, 2, 3)]),
    # slices of a list of pieces (steps, negative bounds, an empty slice)
    ("np.concatenate(np.split(x, 3)[::-1]) * x", [(6,)]), ("np.stack(np.split(x, 4)[1:3]) ** 2", [(8,)]),
    ("np.concatenate(np.split(x, 5)[-1:0:-2], axis=0) * y", [(5, 2), (2, 2)]),
    ("sum(np.split(x, 4)[-3:]) * np.split(x, 4)[0]", [(4, 3)]),
    ("sum(np.split(x, 2)[5:], np.split(x, 2)[-1]) ** 2", [(4,)]), ("sliced(x)", [(4,)]),
    # select: the first condition that holds wins (ties), else the default
    ("np.select([x < 0, x > 1], [x ** 2, np.log(np.abs(x))], default=x)", [(2, 3)]),
    ("np.select([x < 0.5, x < 1.0], [x * y, y], default=3.0)", [(6,), (6,)]),
    ("np.select([x > 0], [y], default=x)", [(2, 3), (3,)]),
    ("np.select([x > 0, x < -0.5], [x, 2.0 * x], y)", [(2, 3), None]),
    ("np.select([x > 100.0], [x ** 2], default=np.sin(x))", [(4,)]),
    ("np.select([x > -100.0, x > 0], [x ** 2, x])", [(3,)]), ("np.select([x > 0], [x * y])", [None, (2,)]),
    ("np.select([y > 0, x > 0], [x, x * x], default=y)", [(3,), (2, 3)]),
    ("np.select([x > 0], [x], default=y)", [(2, 1), (3,)]),
    # choose: element i of the choice a[i] names (wrapped or clipped by mode)
    ("np.choose(np.array([0, 1, 1, 0]), [x, y])", [(4,), (4,)]),
    ("np.choose(np.array([[2, 0, 1], [1, 1, 0]]), [x, y, x * y])", [(2, 3), (3,)]),
    ("np.choose(np.array([0, 1, 0]), (x, 2.0))", [(3,)]), ("np.choose(np.array([[1], [0]]), [x, y])", [(3,), None]),
    ("np.choose(np.array([3, -1, 5, 0]), [x, np.sin(x)], mode='wrap')", [(4,)]),
    ("np.choose(np.array([3, -1, 5, 0]), [x, y, x ** 2], mode='clip')", [(4,), (4,)]),
    ("np.choose(np.array(1), [x, y])", [(2,), (2,)]), ("np.choose(np.zeros(0, dtype=int), [x, y])", [(0,), (0,)]),
    # insert (at the end, negative indices, values broadcast) and delete (nothing deleted)
    ("np.insert(x, 1, y)", [(2, 3), None]), ("np.insert(x, [0, 2, 2], y)", [(4,), (3,)]),
    ("np.insert(x, 3, y, axis=1)", [(2, 3), (2,)]), ("np.insert(x, -1, y, axis=0)", [(2, 3), (3,)]),
    ("np.insert(x, [1, -1], y, axis=1) * 2.0", [(2, 3), (2, 1)]), ("np.insert(x, 1, y, axis=0)", [(2, 3), (2, 3)]),
    ("np.insert(x, 4, x[:2] * y)", [(4,), (2,)]),
    ("np.insert(x, 0, 2.0, axis=-1)", [(2, 2)]), ("np.insert(x, [], y)", [(3,), None]),
    ("np.delete(x, 1)", [(4,)]), ("np.delete(x, [0, -1, 0])", [(2, 3)]), ("np.delete(x, -1, axis=1) * x[:, :2]", [(2, 3)]),
    ("np.delete(x, [])", [(3,)]), ("np.delete(x, [], axis=1)", [(2, 3)]),
    ("np.insert(x, slice(0, 3), y)", [(3,), None]), ("np.insert(x, slice(-1, None), y, axis=1)", [(2, 3), (2,)]),
    ("np.delete(x, slice(0, 3, 2), axis=0)", [(4, 2)]), ("np.delete(x, slice(None), axis=0)", [(3,)]),
    ("np.delete(x, slice(None, None, -2))", [(5,)]),
    ("unequal(x)", [(4,)]),
    # meshgrid: a list of grids, unpacked or indexed
    ("grid(x, y)", [(3,), (2,)]), ("np.stack(np.meshgrid(x, y, indexing='ij'))", [(3,), (2,)]),
    ("np.meshgrid(x, y, sparse=True)[0] * np.meshgrid(x, y, sparse=True)[1]", [(3,), (2,)]),
    ("np.meshgrid(x, y, x * 2.0, indexing='ij', sparse=True)[2] * 3.0", [(2,), (3,)]),
    ("np.stack(np.meshgrid(x, y, x)) ** 2", [(2,), (3,)]), ("np.meshgrid(x)[0]", [(3,)]),
    ("np.meshgrid(x, y)[1] * np.meshgrid(x, y)[0]", [(2, 2), None]),
    ("np.meshgrid(x, y, indexing='ij')[0]", [(0,), (2,)]),
    # clip's bounds spelled min/max (NumPy 2 and ndarray.clip) as well as a_min/a_max
    ("x.clip(min=-0.5, max=0.7)", [(2, 3)]), ("x.clip(-0.5, 0.7)", [(4,)]), ("x.clip(max=y)", [(2, 3), (3,)]),
    ("x.clip(min=y) * x", [(3,), None]), ("np.clip(x, min=y, max=1.0)", [(2, 3), (2, 1)]),
    ("np.clip(x, max=0.5)", [(4,)]), ("np.clip(x, a_min=y, a_max=None)", [(3,), (3,)]),
    ("np.clip(x, None, y)", [(3,), None]),
    ("np.clip(x, y, y - 0.5)", [(4,), (4,)]), ("x.clip(min=y, max=0.3)", [(2, 3), (3,)]),
    # math.fsum: a sum for derivatives, over items written out, built or an array's
    ("math.fsum([x[0] * y, x[1], 2.0])", [(2,), None]), ("math.fsum(np.sum(r ** 2) for r in x) * x", [(3, 2)]),
    ("math.fsum([v * v for v in x])", [(3,)]), ("math.fsum(x) * x", [(4,)]), ("math.fsum(x[:0])", [(3,)]),
    ("fsummed(x)", [(2, 3)]),
    # tuples of intermediates in a list built at run time, read back
    ("cached_pairs(x)", [(3, 2)]),
    # the powers of a vector (through 0 too), decreasing or increasing
    ("np.vander(x)", [(3,)]), ("np.vander(x, 4)", [(3,)]), ("np.vander(x, N=2, increasing=True)", [(4,)]),
    ("np.vander(x * np.array([1.0, 0.0, 1.0]), increasing=True)", [(3,)]), ("np.vander(x, 1)", [(2,)]),
    ("np.vander(x * np.array([0.0, 1.0]), 4)", [(2,)]),
    # arrays broadcast together: each adjoint summed back to its array
    ("np.broadcast_arrays(x, y)[0] * np.broadcast_arrays(x, y)[1]", [(3, 1), (4,)]),
    ("np.broadcast_arrays(x, y, 2.0)[1]", [(2, 1), (3,)]), ("broadcast_pair(x, y)", [(2, 3), ()]),
    ("np.broadcast_arrays(x)[0] * y", [(3,), (2, 3)]),
    # blocks: nested lists, 1-D and 2-D blocks, scalars, an array alone
    ("np.block([[x, y], [y, x]])", [(2, 2), (2, 2)]), ("np.block([x, y, 1.0])", [(2,), (3,)]),
    ("np.block([[x], [y]])", [(2, 3), (3,)]), ("np.block([[x, y]])", [(2,), (3,)]),
    ("np.block([x, y])", [(2, 3), (2, 1)]), ("np.block(x)", [(2, 3)]),
    ("np.block([[[x]], [[y]]])", [(2,), (2,)]), ("np.block([[x, 2.0 * x], [y, x[:1]]])", [(1,), (1,)]),
    ("np.block([[x, y[:2, :1]], [y[:1, :2], y[:1, :1] * x[0, 0]]])", [(2, 2), (3, 3)]),
]

# Functions the cases call: a split unpacked and looped over.
PREAMBLE = """
def pieces(x):
    top, bottom, rest = np.split(x, [1, 2])
    total = top * bottom
    for piece in np.hsplit(rest, 2):
        total = total + np.sum(np.sin(piece))
    return total

def unequal(x):
    head, tail = np.split(x, [1])
    return head * tail

def broadcast_pair(x, y):
    a, b = np.broadcast_arrays(x, y)
    return a * np.sin(b)

def grid(x, y):
    X, Y = np.meshgrid(x, y)
    return np.sin(X) * Y ** 2 + X * Y

def cached_pairs(x):
    caches = []
    for row in x:
        caches.append((np.sin(row), row * 2.0))
    total = 0.0
    for h, a in caches:
        total = total + h * a
    return total

def fsummed(x):
    terms = []
    for row in x:
        terms.append(np.sin(row[0]) * row[1])
    return math.fsum(terms) * x[-1]

def sliced(x):
    total = x[0]
    for piece in np.split(x, 4)[3:0:-1]:
        total = total * np.sum(piece)
    for piece in np.split(x, 4)[7:]:
        total = total * np.sum(piece)
    return total
"""

# NumPy 2 deprecates np.cross of vectors of 2 and np.row_stack (the cases' own calls warn).
test_assembly_op = pytest.mark.filterwarnings(
    "ignore:Arrays of 2-dimensional vectors are deprecated:DeprecationWarning")(
    pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning")(
        table_test(CASES, seed=900, preamble=PREAMBLE, routes=("sympy",))))


def test_gather_with_indices_known_at_run_time(user_module):
    mod = user_module("""
        import numpy as np
        def f(x, idx, reps):
            taken = np.take(x, idx, axis=1) + np.take_along_axis(x, idx[None, :], axis=1)
            return np.sum(np.sin(taken) * np.repeat(x, reps, axis=0)[:2, :1])
    """)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4))
    idx, reps = np.array([3, 3, 0, -1]), np.array([2, 0])
    expected = ad.numeric_grad(lambda v: mod.f(v, idx, reps), x)
    np.testing.assert_allclose(ad.grad(mod.f)(x, idx, reps), expected, rtol=1e-6, atol=1e-8)
    tangent = rng.normal(size=x.shape)
    _, pushed = ad.jvp(mod.f)(x, idx, reps, tangent)
    np.testing.assert_allclose(pushed, np.sum(expected * tangent), rtol=1e-6)


@pytest.mark.parametrize("mode", ["mean", "linear_ramp", "maximum"])
def test_pad_refuses_modes_that_compute_values(user_module, mode):
    mod = user_module(f"""
        import numpy as np
        def f(x):
            return np.sum(np.pad(x, 1, mode={mode!r}) ** 2)
    """)
    with pytest.raises(NonDifferentiableError, match="modes that copy elements"):
        ad.grad(mod.f)(np.ones(3))


def test_slices_of_a_list_of_pieces_are_lists(user_module):
    # A slice of a list is a list: adding two is Python's concatenation (list_concat),
    # not NumPy's addition of the pieces.
    mod = user_module("""
        import numpy as np
        def f(x):
            pieces = np.split(x, 2)[:1] + np.split(x * 2.0, 2)[1:]
            return np.sum(np.concatenate(pieces) * np.arange(4.0))
    """)
    np.testing.assert_allclose(ad.grad(mod.f)(np.ones(4)), [0.0, 1.0, 4.0, 6.0])


def test_select_gives_a_choice_no_gradient_where_it_is_not_taken(user_module):
    # np.log(x) and np.sqrt(x) are NaN or infinite where their conditions do not
    # hold: their adjoints are exactly zero there, as np.where's are.
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.select([x > 0, x < -1.0], [np.sqrt(x), np.log(-x)], default=x ** 2))
    """)
    x = np.array([0.0, 4.0, -0.5, -2.0])
    with np.errstate(all="ignore"):
        for gradient in (ad.grad(mod.f)(x), ad.grad(mod.f, jit=True)(x)):
            np.testing.assert_allclose(gradient, [0.0, 0.25, -1.0, -0.5])


def test_clip_refuses_bounds_given_twice(user_module):
    mod = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.clip(x, 0.0, max=1.0))
    """)
    with pytest.raises(ad.AutodiffError, match="a_min/a_max or as min/max, not both"):
        ad.grad(mod.f)(np.ones(3))
