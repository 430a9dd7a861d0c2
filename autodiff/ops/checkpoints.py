"""Checkpoints of a loop's reverse sweep under a memory budget.

Generated derivative code that checkpoints a loop runs it forward without a tape,
keeping some of the states it passes, and then reverses it step by step from the
last: each step's state is taken from the nearest state kept at or before it and
recomputed up to it, the step is run again taped, and its adjoint computed. A
``Checkpoints`` object decides which states are kept, and holds them::

    checkpoints = Checkpoints(steps, snapshots)   # steps: None for a while loop
    for i in range(steps):
        checkpoints.keep(i, state)                # the state step i starts from
        state = step(state)
    checkpoints.ended(steps)                      # how many steps ran
    for j in reversed(range(steps)):
        i, state = checkpoints.restore(j)         # the nearest state kept, i <= j
        while i < j:
            state = step(state)
            i += 1
            checkpoints.keep(i, state)
        ...                                       # step j taped, its adjoint

The state of index ``i`` is the one step ``i`` starts from: index 0 is the loop's
entry, which is always kept and counts as one of the ``snapshots`` (as Revolve
counts it). Never more than ``snapshots`` states are held at once; a state is held
by reference, never copied, and dropped as soon as ``restore`` passes below it.

With the trip count known at the loop's entry, the schedule is the binomial one
(Griewank & Walther, "Algorithm 799: revolve", ACM TOMS 26(1), 2000). Its facts, for
reversing ``l`` steps from a kept state whose last step is reached without being kept,
with ``s`` snapshots counting the first state's:

- ``beta(s, r) = C(s + r, s)`` is the most steps reversible with ``s`` snapshots
  recomputing no step more than ``r`` times (``repetitions`` finds the least ``r``);
- the fewest forward steps are ``r * l - beta(s + 1, r - 1)``;
- the next state to keep lies ``m`` steps on, for any ``m`` from
  ``max(beta(s, r - 2), l - beta(s - 1, r))`` to ``min(beta(s, r - 1), l - beta(s - 1, r - 1))``
  (the least is taken here): the steps after it are reversed with one snapshot fewer,
  then those before it with all of them.

The forward sweep here runs every step (it computes the loop's result), so the
reverse sweep does not start with the state of the last step at hand: reversing
``n`` steps is Revolve's problem of ``n + 1`` steps whose last one is free, whose
forward steps up to step ``n`` the forward sweep has run. So the fewest recomputed
steps are ``r * (n + 1) - beta(s + 1, r - 1) - n``, ``r = repetitions(n + 1, s)``
(``fewest_recomputations``), and ``keep`` and ``restore`` follow Revolve's splits.

A ``while`` loop's trip count is known only when it ends. The online schedule holds,
as the loop runs, the states the binomial schedule holds for the lengths
``beta(s, r) - 1`` (r = 1, 2, ...), each grown from the one before: the first stretch
of the binomial schedule for ``beta(s, r + 1) - 1`` steps is the whole schedule for
``beta(s, r) - 1`` steps and one step more, and the rest is the schedule for
``beta(s - 1, r + 1) - 1`` steps with a snapshot fewer, grown in the same way from
the state after that step. The states a stretch held that the longer one does not
need are kept while the snapshots allow (the latest given up first). So a loop ending
at one of those lengths recomputes the fewest steps, and one ending between them more:
2% (2 snapshots) to 14% (20 snapshots) on average over lengths up to 3000, and up to
1.8 times as many just after a loop outgrows one of those lengths. Once
the loop has ended, each stretch between the states held is reversed by the binomial
schedule with the snapshots free by then, as a known trip count's stretches are.

Each call takes constant time, amortised over the loop (keeping a state may search a
row of binomial coefficients); nothing recurses.
"""

import bisect
import operator
import re

from autodiff.errors import AutodiffError


class Checkpoints:
    """The states a loop's reverse sweep restarts from, and when to keep them: the
    binomial schedule (Revolve) for ``steps`` steps, or the online schedule when
    ``steps`` is None (a ``while`` loop), holding at most ``snapshots`` states at once,
    the loop's entry included."""

    def __init__(self, steps, snapshots):
        if steps is not None:
            steps = max(0, operator.index(steps))  # (a negative count runs no step)
        if isinstance(snapshots, bool) or not isinstance(snapshots, int) or snapshots < 1:
            raise AutodiffError(
                f"a loop's checkpoints need a whole number of snapshots, at least 1, "
                f"not {snapshots!r}",
                hint="snapshot_count(budget, state) gives it for a number of states or a "
                     "size of memory")
        self.steps = steps
        self.snapshots = snapshots
        self.online = steps is None
        self._states = {}     # index -> state, stored in the order of the indices
        self._held = []       # the indices held, ascending (built when the loop ends, online)
        self._end = None if steps is None else steps + 1  # the stretch being reversed ends here
        self._next = 0        # the index whose state is kept next (None: none is)
        self._rows = {}       # snapshots -> [beta(snapshots, 0), beta(snapshots, 1), ...]
        # online: the stretches being grown, outermost first, each [snapshots, the level
        # it grows to (None: no end), the index it starts from, the level it has reached,
        # where its indices begin in _needed]; the indices held the stretches need, and
        # those they no longer need (given up from the end); (snapshots, level to grow to)
        # of the stretch starting at _next; where a stretch growing to level 1, which
        # keeps every state, stops
        self._stretches = []
        self._needed = []
        self._unneeded = []
        self._then = None
        self._run = None
        self.ran = None       # how many steps the loop ran, once it has ended

    def describe(self):
        """The schedule in words, for a comment of the generated code."""
        kind = "online schedule" if self.steps is None else "binomial schedule (Revolve)"
        return f"{kind}, {self.snapshots} snapshot{'' if self.snapshots == 1 else 's'}"

    @property
    def held(self):
        """How many states are held now."""
        return len(self._states)

    def keep(self, i, state):
        """Keep ``state``, the one step ``i`` starts from, when the schedule says so."""
        if i == self._next:
            if self.online:
                self._keep_online(i, state)
            else:
                self._states[i] = state
                self._held.append(i)
                self._plan(i)

    def ended(self, steps):
        """The loop ran ``steps`` steps: the reverse sweep begins."""
        if self.online:
            self.online = False
            self._held = list(self._states)
            self._stretches = self._needed = self._unneeded = None
        self.ran = steps

    def restore(self, j):
        """``(i, state)``: the state held nearest at or before step ``j``, and its index.
        The states after step ``j`` are dropped (they are never asked for again)."""
        held, states = self._held, self._states
        while held[-1] > j:
            del states[held.pop()]
        start = held[-1]
        self._end = j + 1
        self._plan(start)
        return start, states[start]

    def _plan(self, start):
        """The next index to keep, reversing the stretch from ``start`` (held) to
        ``self._end`` with the snapshots free and ``start``'s."""
        free = self.snapshots - len(self._held) + 1
        length = self._end - start
        self._next = None
        if free >= 2 and length > 2:
            after = start + self._split(length, free)
            if after < self._end - 1:  # (the stretch's last state is at hand: never kept)
                self._next = after

    def _split(self, length, snapshots):
        """How many steps after a held state the next one is kept, reversing ``length``
        steps with ``snapshots`` (Revolve's least optimal split)."""
        if length <= snapshots + 1:
            return 1
        r = self._repetitions(length, snapshots)
        return max(self._beta(snapshots, r - 2), length - self._beta(snapshots - 1, r))

    def _beta(self, snapshots, repetitions):
        if repetitions < 0:
            return 0
        if repetitions == 0 or snapshots == 0:
            return 1
        if repetitions == 1 or snapshots == 1:
            return snapshots + repetitions
        row = self._rows.setdefault(snapshots, [1])
        while len(row) <= repetitions:
            row.append(row[-1] * (snapshots + len(row)) // len(row))
        return row[repetitions]

    def _repetitions(self, length, snapshots):
        row = self._rows.setdefault(snapshots, [1])
        while row[-1] < length:
            row.append(row[-1] * (snapshots + len(row)) // len(row))
        return bisect.bisect_left(row, length)

    def _keep_online(self, i, state):
        states, needed = self._states, self._needed
        if len(states) == self.snapshots:
            del states[self._unneeded.pop()]
        states[i] = state
        if self._run is not None:  # a stretch growing to level 1 keeps every state
            needed.append(i)
            if i < self._run:
                self._next = i + 1
                return
            self._run = None
            self._stretches[-1][3] = 1
        elif i == 0:  # the loop's entry: the outermost stretch, which grows without end
            self._begin(self.snapshots, None, 0)
            return
        else:  # the first state of a stretch (which its parent's level needs)
            needed.append(i)
            if self._begin(*self._then, i):
                return
        self._grow()

    def _begin(self, snapshots, last, start):
        """A stretch of ``snapshots`` from ``start`` growing to level ``last``: False
        when it has grown at once (one snapshot holds nothing more)."""
        if snapshots == 1:
            if self._stretches:
                self._stretches[-1][3] += 1
            self._next = None
            return False
        self._stretches.append([snapshots, last, start, 0, len(self._needed)])
        self._run = start + snapshots - 1
        self._next = start + 1
        return True

    def _grow(self):
        """The next index the online schedule keeps, and the stretch starting there."""
        stretches, needed = self._stretches, self._needed
        while True:
            snapshots, last, start, level, base = stretches[-1]
            if level == last:  # grown: its parent's level is reached
                stretches.pop()
                stretches[-1][3] += 1
                continue
            # grows a level: the stretch reached so far is the first of the next level's,
            # the states it held there no longer needed; the next starts one step on
            self._unneeded.extend(needed[base:])
            del needed[base:]
            self._next = start + self._beta(snapshots, level)
            self._then = (snapshots - 1, level + 1)
            return


def binomial(snapshots, repetitions):
    """``beta(s, r) = C(s + r, s)``: the most steps ``snapshots`` reverse recomputing
    none more than ``repetitions`` times (Revolve's bound)."""
    if repetitions < 0:
        return 0
    value = 1
    for k in range(1, repetitions + 1):
        value = value * (snapshots + k) // k
    return value


def repetitions(steps, snapshots):
    """The least ``r`` with ``binomial(snapshots, r) >= steps``."""
    if snapshots == 1:
        return max(0, steps - 1)
    r, value = 0, 1
    while value < steps:
        r += 1
        value = value * (snapshots + r) // r
    return r


def fewest_recomputations(steps, snapshots):
    """The fewest steps a reverse sweep of ``steps`` steps recomputes, after a forward
    sweep that ran them all, holding at most ``snapshots`` states (the entry's among
    them): Revolve's fewest forward steps for ``steps + 1`` steps, less the ``steps``
    the forward sweep ran."""
    if steps <= 0:
        return 0
    r = repetitions(steps + 1, snapshots)
    return r * (steps + 1) - binomial(snapshots + 1, r - 1) - steps


_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*([a-z]+)\s*", re.IGNORECASE)


def snapshot_count(budget, state):
    """How many states of the size of ``state`` a budget holds, at least 1: ``budget``
    is a number of snapshots (an int, at least 1) or a size of memory, a string such as
    ``"200MB"``, ``"1.5 GB"``, ``"500 KiB"`` (MB, GB: powers of 10; KiB, MiB, GiB:
    powers of 2), divided by the state's bytes (its arrays' ``nbytes``, 8 for a number)."""
    if isinstance(budget, int) and not isinstance(budget, bool):
        if budget >= 1:
            return budget
        _refuse(budget, "a number of snapshots is at least 1")
    if not isinstance(budget, str):
        _refuse(budget, f"a {type(budget).__name__} is neither a whole number of snapshots "
                        "nor a size of memory")
    found = _SIZE.fullmatch(budget)
    unit = found and _UNITS.get(found.group(2).lower())
    if not unit:
        _refuse(budget, "a size of memory is a number and a unit: B, KB, MB, GB, TB, "
                        "KiB, MiB, GiB or TiB")
    size = float(found.group(1)) * unit
    if size <= 0:
        _refuse(budget, "a size of memory is more than 0")
    return max(1, int(size // max(1, state_bytes(state))))


def state_bytes(state):
    """The bytes a loop's state holds: its arrays' ``nbytes``, 8 for each number."""
    total, parts = 0, [state]
    while parts:
        part = parts.pop()
        if isinstance(part, (tuple, list)):
            parts.extend(part)
        elif isinstance(part, complex):
            total += 16
        elif isinstance(part, (int, float)):
            total += 8
        else:
            total += getattr(part, "nbytes", 8)
    return total


def _refuse(budget, why):
    raise AutodiffError(
        f"cannot read the checkpoint budget {budget!r}: {why}",
        hint="give a number of states to keep, 12, or a size of memory for them, "
             "\"200MB\", \"1.5 GB\", \"2GiB\"")
