"""Random programs, differentiated and checked against finite differences and against themselves.

Hypothesis draws a module (``tests/fuzz``): up to two helper functions (some
of them lambdas, with int, scalar and keyword-default parameters, some made by
a factory ``make_cell(gain, offset)`` whose parameters they read), ``f``, and
sometimes a function nested in ``f`` that reads ``f``'s arguments. Helpers may
live in a second module, imported as ``lib`` or by name, with a ``SCALE`` of
its own that the caller's module also defines with another value, and with an
elementwise helper whose VJP and JVP it registers (``ad.register_gradient``).
The float arguments of ``f`` have shapes that broadcast together, such as
``(3,)``, ``(2, 3)``, ``(1, 3)``, ``(2, 1, 3)``, ``(3, 3)`` and ``(2, 1)``, or are
0-d arrays or Python floats; the int arguments ``n`` and ``k`` hold 0 to 3.
``f`` and the helpers are written from:

- elementwise functions (``math`` twins and ``abs`` for scalars) and
  arithmetic with broadcasting, ``maximum``, ``where``, ``clip``, ``logaddexp``;
- reductions (``sum``, ``mean``, ``max``, ``min`` as functions and methods,
  ``prod``, ``var``, ``amax``, ``norm``) over any axis, with ``keepdims``;
- indexing by a loop index, ``i - 1``, a constant or a list of ints, slices
  (``x[1:]``, ``x[..., ::-1]``, ``x[:, None]``...), ``.T``, ``reshape``,
  ``squeeze``, ``broadcast_to``, ``copy``, ``np.stack``/``np.array`` of parts;
- ``@``, ``np.matmul`` and ``np.dot`` wherever the shapes allow;
- assignments that rebind arguments and names the compiler generates
  (``dx``, ``t1``), in-place ``+=``/``-=``/``*=`` on arrays the function made;
- ``if``/``elif``/``else`` and ``a if c else b`` on ints or on data (also
  inside loops and helpers, joined by ``and``/``or``/``not``);
- ``for`` over ``range`` (zero trips included, ``reversed``, argument bounds),
  over an array's rows, ``enumerate`` and ``zip``, nested; counted ``while``
  loops and ``while`` loops on data; ``break``/``continue``/``return``;
- loop-carried values updated in place or not (an RNN step among them),
  lists appended to and read with ``np.stack``/``sum``, and buffers (zeros or
  a copy of an argument) written row by row, read in the loop and after it;
- comprehensions (``np.stack([... for r in xs])``, ``sum(... for r in xs)``,
  ``np.sum([... for r in xs])``), ``np.array([[a, 0.5], [b, c]])`` of scalars
  and constants, tables built by nested loops appending to lists then read
  with ``np.array(rows)`` or ``np.sum(rows)``, ``enumerate(range(1, 4))`` and
  ``zip(range(n), xs)``;
- calls to the helpers anywhere, loops included, with arguments by position or
  keyword, and to their gradients (``dcell = ad.grad(cell)`` at module level,
  or ``ad.grad(cell)(x)`` in ``f``).

Every intermediate has a magnitude bound, and the generator runs each program
at its test point first: conditions on data get thresholds away from every
value they see, and a program that runs close to a kink is rejected (see
``tests/fuzz/programs.py``).

Each example checks (``tests/fuzz/checks.py``), in float64: every float
argument's gradient against central differences, the forward mode against
it (``ad.jvp``, also with read-only tangents), the value and gradients of
``value_and_grad``, ``optimize=False`` against ``optimize=True``, ``jit=True``
against the plain derivative (values, types, shapes, dtypes), gradients that
are fresh writable arrays (or Python floats) of the arguments' shapes and
dtypes, read-only array inputs accepted with the same results, inputs left
untouched, float32 inputs giving float32 gradients close to the float64 ones
(plain and ``jit=True``), and that two modules holding the same text compile
to the same source. Half the programs also check one composition of
transforms against central differences of the lower-order function: jvp of
jvp (``ad.jvp(ad.jvp(f), wrt=(p, "tangent"))``), vjp of jvp, or grad of a
function ``f2`` that calls ``ad.value_and_grad(f)``.

CI runs 20 examples (about 15 s) in a fixed sequence. For a long run, set ``AUTODIFF_FUZZ_EXAMPLES`` (and
``AUTODIFF_FUZZ_SEED`` for other programs than CI's)::

    AUTODIFF_FUZZ_EXAMPLES=2000 python -m pytest -q tests/api/test_random_programs.py
    AUTODIFF_FUZZ_EXAMPLES=2000 AUTODIFF_FUZZ_SEED=1 \
        python -m pytest -q tests/api/test_random_programs.py

``--hypothesis-show-statistics`` counts the programs that ran, and
``AUTODIFF_FUZZ_SHRINK=0`` reports a failing program without shrinking it.

Bugs it found are kept as plain tests in ``tests/api/test_fuzz_regressions.py``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, seed, settings

from autodiff.ops import registry
from tests.fuzz.checks import check_program
from tests.fuzz.programs import COMPOSITIONS, programs
from tests.helpers import UserModules

EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "20"))
SEED = os.environ.get("AUTODIFF_FUZZ_SEED")
# AUTODIFF_FUZZ_SHRINK=0 reports the first failing program as found, not shrunk (shrinking
# one can take minutes; tests/fuzz's programs read well enough to cut down by hand).
PHASES = tuple(Phase) if os.environ.get("AUTODIFF_FUZZ_SHRINK", "1") != "0" else tuple(
    p for p in Phase if p is not Phase.shrink)


def _loop_nesting(source: str) -> int:
    """How deep for/while loops nest in ``source``."""
    deepest, open_loops = 0, []
    for line in source.splitlines():
        indent = len(line) - len(line.lstrip())
        while open_loops and line.strip() and indent <= open_loops[-1]:
            open_loops.pop()
        if re.match(r"\s*(for|while) ", line):
            open_loops.append(indent)
            deepest = max(deepest, len(open_loops))
    return deepest


# What the generator must write in a sample of 100 programs; each pattern is one construct.
CONSTRUCTS = [
    r"for \w+ in range\(0\)", r"for \w+ in range\([nk]\)", r"range\(1, \d\)", r"reversed\(range",
    r"for \w+ in range\(\d, -1, -1\)", r"for x_t in \w+:", r"in enumerate\(", r"in zip\(",
    r"while \w+ < [nk\d]:", r"while \w+ < -?\d+\.\d{3}:", r"if .* [<>] -?\d+\.\d{3}:",
    r"\n {12,}if .*[<>] -?\d+\.\d{3}:", r" and .*[<>] -?\d+\.\d{3}", r"if not ",
    r"\n {12,}break", r"\n {12,}continue", r"\n {12,}return ", r"\n {8}return ", r"elif ",
    r"= .+ if .+ else ", r"np\.sum\(\w+ \* 0\) \+ ", r"\.append\(", r"np\.stack\(\w+\)",
    r"sum\(\w+\)", r"\w+\[\w+\] = ", r"\w+\[\.\.\., \w+\] = ", r"\w+\[\w+( - 1)?\] \+= ",
    r"\w+\[\w+ - 1\]", r"= \w+\.copy\(\)", r"np\.zeros\(\(", r"np\.zeros_like\(",
    r" \+= ", r" -= ", r" \*= ", r"\w+ @ \w+", r"np\.matmul\(", r"np\.dot\(", r"\.T\b",
    r"np\.transpose\(", r"\.reshape\(-1\)", r"\.reshape\(\(", r"np\.ravel\(", r"np\.squeeze\(",
    r"np\.expand_dims\(", r"\[None\]", r"\[:, None\]", r"\[\.\.\., ::-1\]", r"\[::-1\]",
    r"\[1:\] - \w+\[:-1\]", r"\[\[-?\d, -?\d", r"\[:, -?\w+\]", r"np\.broadcast_to\(",
    r"keepdims=True", r"axis=\(0, \d\)", r"axis=-\d", r"\.sum\(", r"\.mean\(", r"\.max\(",
    r"\.min\(", r"np\.max\(", r"np\.min\(", r"np\.mean\(", r"np\.prod\(", r"np\.var\(",
    r"np\.amax\(", r"np\.linalg\.norm\(", r"np\.abs\(", r"np\.maximum\(", r"np\.minimum\(",
    r"np\.where\(", r"np\.clip\(", r"np\.logaddexp\(", r"np\.arctan2\(", r"math\.\w+\(",
    r"\babs\(", r"\bmax\(\w", r"np\.array\(\[", r"np\.stack\(\[\w+", r"for r in \w+\]\)",
    r"sum\(.* for r in ", r"= lambda ", r"(def \w+\(|lambda )h(, v)?, m\b", r"def \w+\(h, scale=0\.5\)",
    r"(?<!def )mix\(", r"(?<!def )cell\(", r"dx = ", r"t1 = ", r"0\.2 \* \w+ \* ",
    r"np\.exp\(", r"np\.copy\(", r"np\.exp\(np\.tanh\(", r"np\.log\(1 \+ ", r"/ \(1 \+ ",
    r"\w+\[(i|j|step)\]", r"\n    def inner\(", r"\n    inner = lambda ",
    r"(?<!def )(cell|mix|inner)\(.*, (m|v|c)=",
    # a second module: helpers and registered rules reading its own SCALE
    r"import random_library_\w+ as lib\n", r"from random_library_\w+ import \w+",
    r"(?<!def )\blib\.\w+\(", r"\nSCALE = 0\.\d", r"\nSCALE = 1\.\d", r"return SCALE \* ",
    r"ad\.register_gradient\(\w+, \w+_vjp, jvp=\w+_jvp\)", r"(?<!def )\b(soft|smooth)\(",
    # helpers made by factories
    r"def make_\w+\(gain, offset\):\n    def ", r"def make_\w+\(gain, offset\):\n    return lambda ",
    r"\n\w+ = make_\w+\(",
    # nested lists, enumerate/zip over ranges, np.sum over lists
    r"np\.array\(\[\[[^\[\]]*\b(np|math|[a-z])", r"np\.array\(\[\[.*\], \[.*-?\d\.\d\b",
    r"for \w+, \w+ in enumerate\(range\((\d, \d|[nk])\)\):", r"for \w+, \w+ in zip\(range\(\w\), \w+\):",
    r"np\.sum\(\[.* for r in \w+\]\)", r"np\.sum\(\[.* for r in \w+\], axis=0\)",
    r"\n {8}(row|line) = \[\]\n {8}for ", r"\.append\((row|line)\)\n", r"np\.array\((rows|grid)\)",
    r"np\.sum\((rows|grid)(, axis=1)?\)", r"np\.sum\((hs|states|ys)\)",
    # derivatives inside the differentiated function
    r"\nd\w+ = ad\.grad\([\w.]+\)\n", r"np\.tanh\(d(cell|mix)\(", r"ad\.grad\([\w.]+\)\(",
    r"f_value_and_grad = ad\.value_and_grad\(f, wrt=\d\)",
]


def test_generator_reaches_every_construct():
    # The generator itself: a sample of programs uses every construct it can write.
    found = []

    @settings(max_examples=100, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(programs())
    def collect(program):
        found.append(program)

    collect()
    text = "\n".join(p.library + p.source for p in found)
    missing = [pattern for pattern in CONSTRUCTS if not re.search(pattern, text)]
    assert not missing, missing
    assert {p.composition for p in found} == {None, *COMPOSITIONS}
    assert max(_loop_nesting(p.source) for p in found) >= 2
    kinds = {_kind(a) for p in found for a in p.args if type(a) is not int}
    assert kinds == {"float", "0-d", "vector", "row", "matrix", "batch", "square", "column"}, kinds


def _kind(arg) -> str:
    """What kind of float argument ``arg`` is: a Python float, a 0-d array, (n,), (1, n)..."""
    if type(arg) is float:
        return "float"
    shape = np.shape(arg)
    names = {0: "0-d", 1: "vector", 3: "batch"}
    if len(shape) != 2:
        return names[len(shape)]
    return "row" if shape[0] == 1 else "column" if shape[1] == 1 else \
        "square" if shape[0] == shape[1] else "matrix"


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("random_programs"))


def _seeded(test):
    """CI's fixed sequence of examples, or another one for ``AUTODIFF_FUZZ_SEED``."""
    return test if SEED is None else seed(int(SEED))(test)


# One failure is shrunk, not each distinct one: every example compiles several derivatives.
@_seeded
@settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
          report_multiple_bugs=False, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(program=programs())
def test_random_program_gradients(modules, program):
    digest = hashlib.sha1(program.source.encode()).hexdigest()[:12]
    names = [f"random_program_{digest}_{copy}" for copy in "ab"]
    library = modules(program.library, program.library_name) if program.library else None
    try:
        first, second = (modules(program.source, name) for name in names)
        value = first.f(*program.arguments())
        assume(np.all(np.isfinite(value)))
        check_program(program, first, second, names, value)
    except Exception as error:  # noqa: BLE001 - any failure, with the program
        # Raised from here, without the chain: the generated code's file names change with
        # every compilation, and hypothesis would take a replay for a different failure.
        trace = "".join(traceback.format_exception(error)[-6:])
        raise AssertionError(f"{trace}\nthe program:{program!r}") from None
    finally:  # let the modules, rules and derivatives go: a long run makes thousands
        for name in names:
            sys.modules.pop(name, None)
        if library is not None:
            forget_library(library)


def forget_library(library) -> None:
    """Remove the library's gradient rules (its module-level register_gradient calls) and the
    module itself."""
    for value in vars(library).values():
        if getattr(value, "__module__", None) == library.__name__ \
                and registry.callable_binding(value) is not None:
            registry.unalias(value)
    sys.modules.pop(library.__name__, None)
