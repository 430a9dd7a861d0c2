"""``ad.tree``: flatten, unflatten, map and paths over dicts, lists, tuples,
namedtuples, dataclasses and None, nested to any depth."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import autodiff as ad

Pair = collections.namedtuple("Pair", "W b")


@dataclasses.dataclass
class Layer:
    W: object
    b: object = None


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: object


def _trees():
    leaves = st.one_of(st.floats(allow_nan=False), st.integers(), st.text(max_size=2),
                       st.builds(np.full, st.integers(0, 3), st.floats(-2, 2)))
    return st.recursive(leaves | st.none(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
        st.builds(Pair, inner, inner), st.builds(Layer, inner, inner), st.builds(Frozen, inner),
        st.dictionaries(st.integers(0, 3), inner, max_size=2).map(collections.OrderedDict),
    ), max_leaves=12)


def _same(a, b) -> bool:
    """Trees equal leaf by leaf, kinds and keys included."""
    if ad.tree.structure(a) != ad.tree.structure(b):
        return False
    return all(x is y or (np.array_equal(x, y) and type(x) is type(y))
               for x, y in zip(ad.tree.leaves(a), ad.tree.leaves(b)))


@settings(max_examples=200, deadline=None)
@given(_trees())
def test_unflatten_of_flatten_is_the_tree(tree):
    leaves, structure = ad.tree.flatten(tree)
    assert structure.leaf_count == len(leaves)
    rebuilt = ad.tree.unflatten(structure, leaves)
    assert _same(rebuilt, tree)
    assert ad.tree.structure(rebuilt) == structure and hash(ad.tree.structure(rebuilt)) == hash(
        structure)
    assert [leaf for _, leaf in ad.tree.paths(tree)] == leaves
    assert _same(ad.tree.map(lambda leaf: leaf, tree), tree)


def test_an_optimiser_step_in_one_line():
    params = {"W1": np.ones((2, 3)), "b1": np.zeros(3), "layers": [Pair(np.ones(2), None)]}
    grads = {"b1": np.full(3, 2.0), "W1": np.full((2, 3), 0.5),  # keys in another order
             "layers": [Pair(np.full(2, 4.0), None)]}
    new = ad.tree.map(lambda p, g: p - 0.25 * g, params, grads)
    assert list(new) == ["W1", "b1", "layers"]  # the first tree's order
    np.testing.assert_array_equal(new["W1"], np.full((2, 3), 0.875))
    np.testing.assert_array_equal(new["b1"], np.full(3, -0.5))
    assert isinstance(new["layers"][0], Pair) and new["layers"][0].b is None
    np.testing.assert_array_equal(new["layers"][0].W, np.zeros(2))


def test_paths_are_code_that_reads_the_leaf():
    model = Layer(W={"a": np.ones(2)}, b=[Frozen(3.0)])
    assert [p for p, _ in ad.tree.paths(model, "model")] == [
        "model.W['a']", "model.b[0].scale"]
    assert ad.tree.paths(np.ones(2), "x")[0][0] == "x"


def test_none_and_defaultdict_keep_their_kind():
    tree = collections.defaultdict(list, {"a": None, "b": (1.0,)})
    rebuilt = ad.tree.unflatten(*reversed(ad.tree.flatten(tree)))
    assert type(rebuilt) is collections.defaultdict and rebuilt.default_factory is list
    assert rebuilt["a"] is None and rebuilt["b"] == (1.0,)
    assert repr(ad.tree.structure({"w": [1.0, (2.0,)], "none": None})) == (
        "{'w': [*, (*,)], 'none': None}")


@pytest.mark.parametrize("other, words", [
    ({"W": 1.0, "c": 2.0}, "at the top, argument 2 has keys ['W', 'c'], not ['W', 'b']"),
    ({"W": [1.0], "b": 2.0}, "at ['W'], argument 2 has list, not float"),
    ([1.0, 2.0], "at the top, argument 2 has list, not dict"),
])
def test_map_over_different_structures_says_where(other, words):
    with pytest.raises(ad.tree.StructureError) as info:
        ad.tree.map(lambda a, b: a + b, {"W": 1.0, "b": 2.0}, other)
    assert words in str(info.value) and "hint:" in str(info.value)
    assert isinstance(info.value, ad.AutodiffError)


def test_unflatten_with_the_wrong_number_of_leaves():
    structure = ad.tree.structure({"a": 1.0, "b": [2.0, 3.0]})
    with pytest.raises(ad.tree.StructureError, match="2 leaves cannot fill a structure of 3"):
        ad.tree.unflatten(structure, [1.0, 2.0])


class Model:
    """An object of a class of the user's: a structure of its attributes."""

    def __init__(self):
        self.W = np.ones((2, 2))
        self.layers = [np.zeros(2), None]
        self.name = "m"


def test_objects_of_the_users_classes_are_structures_of_their_attributes():
    model = Model()
    leaves, structure = ad.tree.flatten(model)
    assert len(leaves) == 3 and leaves[2] == "m"
    again = ad.tree.unflatten(structure, leaves)
    assert type(again) is Model and again is not model and again.layers[1] is None
    assert [path for path, _ in ad.tree.paths(model, "model")] == [
        "model.W", "model.layers[0]", "model.name"]
    grads = ad.tree.map(lambda leaf: None if isinstance(leaf, str) else leaf * 0 + 1, model)
    stepped = ad.tree.map(lambda p, g: p if g is None else p - 0.5 * g, model, grads)
    assert type(stepped) is Model and stepped.name == "m"
    np.testing.assert_array_equal(stepped.W, np.full((2, 2), 0.5))
    assert ad.tree.leaves(np.random.default_rng(0)) != []  # a library's object: one leaf
