"""Tuples of intermediates held in a list built at run time and read back: a generator
yielding pairs, a cache of ``(h, a)`` appended in a loop then looped over. The adjoint of
such a tuple is a tuple, added item by item (``+`` would join two tuples). Gradients
against central differences, reverse, forward and second order, and ``jit=True``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import check_against_finite_differences, check_with_jit

rng = np.random.default_rng(41)


def pairs(xs):
    for i, v in enumerate(xs):
        yield i, v


def through_a_generator_of_pairs(x):
    total = 0.0
    for _, v in pairs(x):
        total = total + np.sum(v ** 2)
    return total


def cache_read_back(x):
    caches = []
    h = x[0]
    for t in range(len(x)):
        h = np.tanh(h + x[t])
        caches.append((h, x[t] * 2.0))
    total = 0.0
    for h_t, a_t in caches:
        total = total + np.sum(h_t * a_t)
    return total


def both_items_of_each_pair(x):
    caches = []
    for t in range(len(x)):
        caches.append((np.sin(x[t]), x[t] * 2.0))
    total = 0.0
    for h_t, a_t in caches:
        total = total + np.sum(h_t * a_t)
    return total


def read_by_index(x):
    caches = []
    for t in range(len(x)):
        caches.append((np.exp(x[t] * 0.5), t))
    return np.sum(caches[0][0] * caches[-1][0])


@pytest.mark.parametrize("f", [through_a_generator_of_pairs, cache_read_back,
                               both_items_of_each_pair, read_by_index])
def test_tuples_read_back_from_a_list_built_at_run_time(f):
    x = rng.normal(size=(3, 2)) * 0.5
    check_against_finite_differences(f, [x], second_order=True)
    check_with_jit(f, x)
