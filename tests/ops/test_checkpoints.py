"""The checkpoints of a loop's reverse sweep (autodiff/ops/checkpoints.py).

A toy loop whose state is ``(index,)`` and whose step adds 1 shows that every state
``restore`` gives (and every one recomputed from it) is the right one. The recomputed
steps of the binomial schedule are checked against a dynamic program over every way
of keeping states (itself checked against an exhaustive search for a few steps), and
against Revolve's formula.
"""

import ast
import functools
import itertools
from pathlib import Path

import numpy as np
import pytest

from autodiff.errors import AutodiffError
from autodiff.ops import checkpoints as module
from autodiff.ops.checkpoints import (
    Checkpoints,
    binomial,
    fewest_recomputations,
    repetitions,
    snapshot_count,
)


def step(state):
    return (state[0] + 1,)


def reversed_loop(steps, snapshots, *, online=False):
    """The loop of the generated code, run forward and reversed: the steps recomputed,
    and the most states held at once. Every state restored or recomputed is checked."""
    checkpoints = Checkpoints(None if online else steps, snapshots)
    state, most = (0,), 0
    for i in range(steps):
        checkpoints.keep(i, state)
        most = max(most, checkpoints.held)
        state = step(state)
    assert state == (steps,)
    checkpoints.ended(steps)
    recomputed = 0
    for j in reversed(range(steps)):
        i, state = checkpoints.restore(j)
        assert state == (i,) and i <= j
        while i < j:
            state = step(state)
            i += 1
            recomputed += 1
            checkpoints.keep(i, state)
            most = max(most, checkpoints.held)
        assert state == (j,)
    return recomputed, most


# --- the optimum, by a dynamic program ---------------------------------------------

def revolve_table(steps, snapshots):
    """``live[l][s]``: the fewest forward steps reversing ``l`` steps from a held state
    with ``s`` snapshots (its own among them), the last step's state reached, not held;
    ``after[l][s]``: the same once a forward sweep has run all ``l`` steps, keeping
    states as it went (what the reverse sweep recomputes). Bottom up: no recursion."""
    inf = float("inf")
    live = [[inf] * (snapshots + 1) for _ in range(steps + 1)]
    after = [[inf] * (snapshots + 1) for _ in range(steps + 1)]
    for s in range(snapshots + 1):
        live[1][s] = 0
        after[1][s] = 0 if s >= 1 else inf
    for length in range(2, steps + 1):
        for s in range(1, snapshots + 1):
            live[length][s] = min(m + live[length - m][s - 1] + live[m][s]
                                  for m in range(1, length))
            # the sweep keeps no state past the first (reverse as Revolve from it), or
            # keeps the next m steps on
            after[length][s] = min([live[length][s]] + [after[length - m][s - 1] + live[m][s]
                                                         for m in range(1, length)])
    return live, after


LIVE, AFTER = revolve_table(61, 6)


def exhaustive(steps, snapshots):
    """The fewest recomputed steps over every choice of states to keep (in the forward
    sweep and while recomputing) and to drop, searched state by state."""

    @functools.lru_cache(maxsize=None)
    def cost(held, j):  # step j is next to reverse; held: the indices held, all <= j
        if j < 0:
            return 0
        start = max(i for i in held if i <= j)
        best = float("inf")
        passed = range(start + 1, j)  # states the recompute passes, and may keep
        for keep in range(len(passed) + 1):
            for kept in itertools.combinations(passed, keep):
                for dropped in range(len(held) + 1):
                    for gone in itertools.combinations(sorted(held), dropped):
                        now = (set(held) - set(gone)) | set(kept)
                        if len(now) > snapshots:
                            continue
                        rest = frozenset(i for i in now if i <= j - 1)
                        if j > 0 and 0 not in rest:
                            continue
                        best = min(best, j - start + cost(rest, j - 1))
        return best

    first = [frozenset({0, *more}) for keep in range(snapshots)
             for more in itertools.combinations(range(1, steps), keep)]
    return min(cost(held, steps - 1) for held in first)


@pytest.mark.parametrize("steps", range(1, 7))
@pytest.mark.parametrize("snapshots", [1, 2, 3])
def test_the_dynamic_program_is_the_optimum_of_every_choice(steps, snapshots):
    assert AFTER[steps][snapshots] == exhaustive(steps, snapshots)


def test_revolves_formula_is_the_dynamic_programs():
    for length in range(1, 62):
        for s in range(1, 7):
            r = repetitions(length, s)
            assert LIVE[length][s] == r * length - binomial(s + 1, r - 1)
            assert binomial(s, r) >= length > binomial(s, r - 1)


def test_binomial_is_the_binomial_coefficient():
    from math import comb
    assert [binomial(s, r) for s in range(6) for r in range(6)] == [
        comb(s + r, s) for s in range(6) for r in range(6)]
    assert binomial(3, -1) == 0


# --- the binomial schedule ----------------------------------------------------------

@pytest.mark.parametrize("snapshots", range(1, 7))
def test_the_binomial_schedule_recomputes_the_fewest_steps(snapshots):
    for steps in range(0, 61):
        recomputed, most = reversed_loop(steps, snapshots)
        optimum = AFTER[steps][snapshots] if steps else 0
        assert recomputed == optimum == fewest_recomputations(steps, snapshots), steps
        assert most <= snapshots


@pytest.mark.parametrize("steps, snapshots", [(1000, 10), (2000, 3), (5000, 20), (300, 2)])
def test_the_binomial_schedule_at_larger_sizes(steps, snapshots):
    recomputed, most = reversed_loop(steps, snapshots)
    assert recomputed == fewest_recomputations(steps, snapshots)
    assert most == snapshots


@pytest.mark.parametrize("online", [False, True])
def test_as_many_snapshots_as_steps_keep_every_state(online):
    for steps in range(0, 30):
        assert reversed_loop(steps, steps or 1, online=online) == (0, steps)
        assert reversed_loop(steps, steps + 5, online=online) == (0, steps)


def test_one_snapshot_recomputes_from_the_entry():
    assert reversed_loop(50, 1) == (50 * 49 // 2, 1)
    assert reversed_loop(50, 1, online=True) == (50 * 49 // 2, 1)


def test_states_are_held_by_reference_and_dropped_once_passed():
    states = [(np.full(3, float(i)),) for i in range(10)]
    checkpoints = Checkpoints(10, 3)
    for i in range(10):
        checkpoints.keep(i, states[i])
    checkpoints.ended(10)
    i, state = checkpoints.restore(9)
    assert state is states[i]
    i, state = checkpoints.restore(0)
    assert (i, checkpoints.held) == (0, 1) and state is states[0]


def test_a_long_loop_with_one_snapshot_more_than_the_entry():
    # no recursion: a schedule of 10**5 steps is planned step by step
    checkpoints = Checkpoints(10**5, 2)
    for i in range(10**5):
        checkpoints.keep(i, (i,))
    checkpoints.ended(10**5)
    assert checkpoints.restore(10**5 - 1) == (checkpoints._held[-1], (checkpoints._held[-1],))
    assert checkpoints.held == 2


# --- the online schedule ------------------------------------------------------------

@pytest.mark.parametrize("snapshots", range(1, 7))
def test_the_online_schedule_restores_every_state_within_its_snapshots(snapshots):
    for steps in range(0, 120):
        recomputed, most = reversed_loop(steps, snapshots, online=True)
        assert most <= snapshots
        assert recomputed >= fewest_recomputations(steps, snapshots)


@pytest.mark.parametrize("steps, snapshots, ratio", [
    (1000, 10, 1.0), (10000, 20, 1.01), (3000, 6, 1.001), (400, 3, 1.1)])
def test_the_online_schedule_stays_near_the_optimum(steps, snapshots, ratio):
    recomputed, most = reversed_loop(steps, snapshots, online=True)
    assert most <= snapshots
    assert recomputed <= ratio * fewest_recomputations(steps, snapshots)


@pytest.mark.parametrize("snapshots, mean", [(3, 1.05), (10, 1.13)])
def test_the_online_schedule_over_every_length(snapshots, mean):
    ratios = [reversed_loop(steps, snapshots, online=True)[0]
              / fewest_recomputations(steps, snapshots) for steps in range(snapshots + 2, 400)]
    assert sum(ratios) / len(ratios) <= mean
    assert max(ratios) <= 1.7


@pytest.mark.parametrize("snapshots", [2, 3, 5, 10])
def test_the_online_schedule_holds_the_binomial_schedules_states_at_its_lengths(snapshots):
    """At ``binomial(s, r) - 1`` steps the online schedule holds the states the binomial
    schedule holds for that many, and recomputes as few steps."""
    for r in range(1, 5):
        steps = binomial(snapshots, r) - 1
        if steps > 3000:
            break
        online, known = Checkpoints(None, snapshots), Checkpoints(steps, snapshots)
        for i in range(steps):
            online.keep(i, (i,))
            known.keep(i, (i,))
        assert list(online._states) == list(known._states)
        assert reversed_loop(steps, snapshots, online=True)[0] == fewest_recomputations(
            steps, snapshots)


def test_a_for_loop_that_ran_fewer_steps_than_planned_still_restores_right():
    checkpoints = Checkpoints(50, 4)
    for i in range(20):
        checkpoints.keep(i, (i,))
    checkpoints.ended(20)
    for j in reversed(range(20)):
        i, state = checkpoints.restore(j)
        while i < j:
            state = step(state)
            i += 1
            checkpoints.keep(i, state)
        assert state == (j,)


# --- describe, budgets --------------------------------------------------------------

def test_describe():
    assert Checkpoints(100, 12).describe() == "binomial schedule (Revolve), 12 snapshots"
    assert Checkpoints(None, 12).describe() == "online schedule, 12 snapshots"
    assert Checkpoints(None, 1).describe() == "online schedule, 1 snapshot"


def test_a_count_of_snapshots_is_itself():
    assert snapshot_count(12, (np.zeros(10),)) == 12
    assert snapshot_count(1, ()) == 1


@pytest.mark.parametrize("budget, snapshots", [
    ("200MB", 200 * 10**6 // 8000),
    ("1.5 GB", 15 * 10**8 // 8000),
    ("500 KiB", 500 * 2**10 // 8000),
    ("2GiB", 2 * 2**30 // 8000),
    ("2gib", 2 * 2**30 // 8000),
    (" 64 kb ", 64000 // 8000),
    ("100 B", 1),  # at least one
])
def test_a_size_of_memory_is_divided_by_the_states_bytes(budget, snapshots):
    state = (np.zeros(999), 1.0)  # 7992 + 8 bytes
    assert snapshot_count(budget, state) == snapshots


def test_the_bytes_of_a_state():
    assert module.state_bytes((np.zeros((3, 4), np.float32), 2, 1.5, (np.ones(2),))) == (
        48 + 8 + 8 + 16)
    assert snapshot_count("1KB", (np.float64(1.0),)) == 125


@pytest.mark.parametrize("budget, why", [
    (0, "a number of snapshots is at least 1"),
    (-3, "a number of snapshots is at least 1"),
    (2.5, "a float is neither a whole number of snapshots nor a size of memory"),
    (12.0, "a float is neither a whole number of snapshots nor a size of memory"),
    (True, "a bool is neither a whole number of snapshots nor a size of memory"),
    ("lots", "a size of memory is a number and a unit"),
    ("200", "a size of memory is a number and a unit"),
    ("200 MiBs", "a size of memory is a number and a unit"),
    ("-200MB", "a size of memory is more than 0"),
    ("0 GB", "a size of memory is more than 0"),
])
def test_bad_budgets_are_refused_showing_both_forms(budget, why):
    with pytest.raises(AutodiffError) as raised:
        snapshot_count(budget, (np.zeros(3),))
    text = str(raised.value)
    assert text.startswith(f"cannot read the checkpoint budget {budget!r}: {why}")
    assert 'hint: give a number of states to keep, 12, or a size of memory for them, ' \
           '"200MB", "1.5 GB", "2GiB"' in text


@pytest.mark.parametrize("snapshots", [0, -1, 2.0, None, True])
def test_checkpoints_refuse_a_bad_number_of_snapshots(snapshots):
    with pytest.raises(AutodiffError, match="a loop's checkpoints need a whole number of "
                                            "snapshots, at least 1"):
        Checkpoints(10, snapshots)


def test_the_module_stands_alone():
    """Exported code writes the helpers out from their source: the module imports the
    standard library and autodiff's errors only."""
    tree = ast.parse(Path(module.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"bisect", "operator", "re", "autodiff.errors"}
