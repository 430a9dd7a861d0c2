"""Assembly and rearranging ops: repeat, tile, roll, flips, rot90, triangles, diagonals,
the stacks, take, kron, cross, tensordot, append, pad.

Each is linear (bilinear for kron, cross and tensordot), so its VJP is its
transpose, written with the op itself or a helper whose own VJP is the op.
"""

from __future__ import annotations

from tests.ops.table import table_test

CASES = [
    # repeating, rolling, flipping, rotating
    ("np.repeat(x, 2)", [(2, 3)]), ("np.repeat(x, 3, axis=1)", [(2, 3)]),
    ("np.repeat(x, [2, 0, 1], axis=-1)", [(2, 3)]), ("x.repeat([1, 3], axis=0)", [(2, 3)]),
    ("np.repeat(x, 2)", [None]), ("np.repeat(x * y, 2, axis=0) * y", [(3, 1), (3,)]),
    ("np.repeat(x, 0, axis=0)", [(2, 3)]),
    ("np.tile(x, 2)", [(3,)]), ("np.tile(x, (2, 1, 3))", [(2, 3)]), ("np.tile(x, (2,))", [(2, 3)]),
    ("np.tile(x, (1, 2)) * y", [None, (2,)]),
    ("np.roll(x, 2)", [(2, 3)]), ("np.roll(x, -1, axis=1)", [(2, 3)]),
    ("np.roll(x, (1, 2), axis=(0, 1))", [(3, 4)]), ("np.roll(x, (1, -1), axis=(1, 1))", [(2, 4)]),
    ("np.flipud(x) * x", [(3, 2)]), ("np.fliplr(x) * x", [(2, 3, 2)]), ("np.flipud(x)", [(4,)]),
    ("np.rot90(x)", [(2, 3)]), ("np.rot90(x, 2)", [(2, 3)]), ("np.rot90(x, -1) * y", [(2, 3), (3, 2)]),
    ("np.rot90(x, k=3, axes=(1, 2))", [(2, 3, 4)]), ("np.rot90(x, 5, axes=(-1, 0))", [(2, 3, 4)]),
    # triangles (a vector is every row of a square matrix)
    ("np.triu(x)", [(3, 4)]), ("np.triu(x, 1)", [(4, 3)]), ("np.triu(x, k=-1)", [(2, 3, 3)]),
    ("np.tril(x)", [(3, 3)]), ("np.tril(x, -1) * x", [(3, 4)]), ("np.tril(x, k=2)", [(2, 3, 4)]),
    ("np.triu(x)", [(4,)]), ("np.tril(x, 1)", [(3,)]),
]

test_assembly_op = table_test(CASES, seed=900, routes=("sympy",))
