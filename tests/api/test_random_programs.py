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
Some arguments come in structures (``tests/fuzz/structures.py``): in a dict
``params`` (read as ``params["W"]``, ``params.get("W", 0.0)`` or ``W =
params["W"]``, with settings that have no gradient: a string tested by
``params["act"] == "tanh"``, a ``None`` tested by ``params["bias"] is None``,
the int ``params["n"]``, and a key it lacks, ``params.get("gain", 0.5)``), a
tuple or a list (``pair[0]``, ``W, b = pair``), a namedtuple or a dataclass
(``layer.W``); and a group of equal arrays or floats: a list ``vs``, a tuple
``ts``, a dict ``ws`` or a list of pairs ``layers`` (also inside ``params``),
looped over (``for v in vs``, ``enumerate``, ``zip(vs, vs[1:])``, ``zip(vs,
X)``, ``vs[1:]``, ``range(len(vs))``, ``ws.items()``, ``for Wl, bl in
layers``), read by constant indices and keys, stacked, or summed over in
comprehensions.
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
argument's gradient against central differences (leaf by leaf for a
structure, whose gradient must have its structure, with None for every leaf
that has no gradient), the forward mode against
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

``--hypothesis-show-statistics`` counts the programs that ran (and the structured
arguments they took), and
``AUTODIFF_FUZZ_SHRINK=0`` reports a failing program without shrinking it.

Bugs it found are kept as plain tests in ``tests/api/test_fuzz_regressions.py``;
those not fixed yet, as strict xfails at the end of this file, each naming the
flag (``tests/fuzz/programs.py``, ``tests/fuzz/statements.py``) that keeps the
generator away from it where it does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sys
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, seed, settings

import autodiff as ad
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


# What the generator must write in a sample of 100 programs (and 60 with structured arguments);
# each pattern is one construct.
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
    # structured arguments: read in place, unpacked at the top, settings, missing keys
    r"def f\(.*\bparams\b", r'(?<!= )params\["\w+"\](?! =)', r'\n    \w+ = params\["\w+"\]\n',
    r'params\.get\("\w+", 0\.0\)', r'params\.get\("gain", 0\.5\)', r'params\["act"\] [!=]= "\w+"',
    r'params\["bias"\] is (not )?None', r'params\["n"\]', r"\b(pair|parts)\[-?\d\]",
    r"\n    \w+, \w+(, \w+)* = (pair|parts|layer)\n", r"\blayer\.\w+", r"\bblock\.\w+",
    r"\n    \w+ = (layer|block)\.\w+\n",
    # groups: loops, reads by constant indices and keys, stacks, comprehensions
    r"for \w+ in (vs|ts):", r"for \w+, \w+ in enumerate\((vs|ts)\):",
    r"for \w+(, \w+)? in (zip\((vs|ts), )?(vs|ts)\[1:\]\)?:", r"for \w+, \w+ in zip\((vs|ts), (?!(vs|ts)\[1:\])",
    r"for \w+ in range\(len\((vs|ts)\)\):",
    r"for (key, |\w+, )?\w+ in (enumerate\()?ws\.(values|items)\(\)\)?:", r"for Wl, bl in layers:",
    r"for \w+, \(Wl, bl\) in enumerate\(layers\):", r'params\["(vs|ts|ws|layers)"\]',
    r"\b(vs|ts)\[-?\d\]", r'ws\["\w"\]', r"layers\[-?\d\]\[\d\]", r"np\.(stack|array)\((vs|ts)\)",
    r"for r in (vs|ts|ws\.values\(\))[\])]", r"(sum\(np\.mean\(v\) for v in |np\.mean\(np\.stack\()",
]


def test_generator_reaches_every_construct():
    # The generator itself: a sample of programs uses every construct it can write.
    found = []

    @settings(max_examples=100, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(programs())
    def collect(program):
        found.append(program)

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(programs(structured=True))
    def collect_structured(program):
        found.append(program)

    collect()
    collect_structured()  # and programs that all take structures, for their rarer forms
    text = "\n".join(p.library + p.source for p in found)
    missing = [pattern for pattern in CONSTRUCTS if not re.search(pattern, text)]
    assert not missing, missing
    assert {p.composition for p in found} == {None, *COMPOSITIONS}
    assert max(_loop_nesting(p.source) for p in found) >= 2
    kinds = {_kind(a) for p in found for arg in p.args for a in ad.tree.leaves(arg)
             if type(a) not in (int, str)}
    assert kinds == {"float", "0-d", "vector", "row", "matrix", "batch", "square", "column"}, kinds
    structures = {_structure(a) for p in found for a in p.args}
    assert structures == {None, "dict", "list", "tuple", "namedtuple", "dataclass",
                          "list of pairs", "dict of a group"}, structures


def _structure(arg) -> str | None:
    """What kind of structure ``arg`` is, None if it is an array or a number."""
    if isinstance(arg, dict):
        return "dict of a group" if any(ad.tree.items(v) for v in arg.values()) else "dict"
    if hasattr(type(arg), "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(arg):
        return "dataclass"
    if isinstance(arg, list) and arg and isinstance(arg[0], tuple):
        return "list of pairs"
    return type(arg).__name__ if isinstance(arg, (list, tuple)) else None


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


# ----- bugs the generator found, not fixed yet -----
# Each is the smallest program we made that shows it. Where the generator steers clear of
# it, the flag that says so (tests/fuzz/programs.py, tests/fuzz/statements.py) is named:
# once the test passes, turn the flag on and make the test a plain one.

LOOPING_CELL = """
import numpy as np

import autodiff as ad


def cell(h):
    return np.array([np.mean(np.sin(r)) for r in h])[0]
"""
X = np.array([[0.3, -0.5, 0.2], [0.7, 0.1, -0.4]])


def test_a_derivative_of_a_looping_helper_keeps_float32(user_module):
    # f is differentiated by forward mode over the helper's derivative (ForwardGradient),
    # whose assembly gave a 0-d array a float64 gradient and a NumPy scalar a 0-d array
    module = user_module(LOOPING_CELL + """

def f(y, c):
    return np.sum(np.sin(ad.grad(cell)(y))) + 2.0 * c * np.sum(y)
""")
    expected = ad.numeric_grad(module.f, X, np.array(0.5), wrt=(0, 1))
    for dtype in (np.float32, np.float64):
        for c in (np.array(0.5, dtype), dtype(0.5)):
            dy, dc = ad.grad(module.f, wrt=(0, 1))(X.astype(dtype), c)
            assert dy.dtype == dtype and dy.shape == X.shape
            assert type(dc) is type(c) and dc.dtype == dtype
            tolerance = 1e-5 if dtype is np.float32 else 1e-8
            np.testing.assert_allclose(dy, expected[0], rtol=tolerance, atol=tolerance)
            np.testing.assert_allclose(dc, expected[1], rtol=tolerance)
    dy, dc = ad.grad(module.f, wrt=(0, 1))(X, 0.5)
    assert type(dc) is float
    np.testing.assert_allclose(dc, expected[1], rtol=1e-8)


def test_vjp_of_jvp_over_a_list_of_pairs(user_module):
    module = user_module("""
import numpy as np


def f(layers, x):
    return np.sum(np.tanh(layers[0][0] * x))
""")
    layers, x = [(np.array([0.3, -0.5]), np.array([0.1, 0.2]))], np.array([0.7, 1.1])
    push = ad.jvp(module.f)
    tangent = [(np.array([1.0, 0.5]), np.array([0.2, -0.3]))]
    got = ad.vjp(push, wrt=(0, 1, 2))(layers, x, tangent, (0.7, -1.3))

    def weighted(*args):
        value, along = push(*args)
        return 0.7 * value - 1.3 * along

    expected = ad.numeric_grad(weighted, layers, x, tangent, wrt=(0, 1, 2))
    for (path, leaf), (_, want) in zip(ad.tree.paths(got), ad.tree.paths(expected)):
        np.testing.assert_allclose(leaf, want, atol=1e-6, err_msg=path)
    assert len(ad.tree.paths(got)) == 5


ZIP_OF_A_LIST_WITH_ROWS = """
import numpy as np


def f(xs, x):
    total = 0.0
    for v, row in zip(xs, x):
        total = total + np.sum(v * np.sin(row))
    return total


def comprehension(xs, x):
    return np.sum(np.stack([v * row for v, row in zip(xs, x)]) ** 2)


def counted(xs, x):
    total = 0.0
    for i, (v, row) in enumerate(zip(xs, x), 1):
        total = total + i * np.sum(v * row)
    return total
"""


# zip() of a list (unrolled while compiling) with an array's rows (known only at run time)
# stops at the shorter, as Python's: the unrolled steps beyond the array's rows do not run
# (they read past its end: 'index 2 is out of bounds'), whether the derivative is compiled
# for all shapes or for these (jit=True)
@pytest.mark.parametrize("rows", [1, 2, 3, 4])
@pytest.mark.parametrize("name", ["f", "comprehension", "counted"])
@pytest.mark.parametrize("jit", [False, True])
def test_zip_of_a_list_with_an_array_of_fewer_rows(user_module, rows, name, jit):
    fn = getattr(user_module(ZIP_OF_A_LIST_WITH_ROWS), name)
    xs = [np.array([0.3, -0.5]), np.array([0.7, 0.2]), np.array([-0.4, 0.9])]
    x = np.array([[0.5, -0.3], [0.8, 0.4], [-0.6, 0.1], [1.2, 0.7]])[:rows]
    value, (dxs, dx) = ad.value_and_grad(fn, wrt=(0, 1), jit=jit)(xs, x)
    expected = ad.numeric_grad(fn, xs, x, wrt=(0, 1))
    np.testing.assert_allclose(value, fn(xs, x), rtol=1e-12)
    for got, want in zip(dxs, expected[0], strict=True):
        np.testing.assert_allclose(got, want, atol=1e-8)
    np.testing.assert_allclose(dx, expected[1], atol=1e-8)


# The second-order sweep builds the adjoint of the comprehension's list as the
# first-order sweep it differentiates did (list_adjoint, sum_list_grad or list_index_grad
# of the same operands, from the same seed 1.0); merged into one list, both sweeps popped
# it: 'pop from empty list'. (The items' adjoints do not vary when the item is linear:
# reverse mode over reverse mode; np.sin(r) * r goes through forward mode.)
@pytest.mark.parametrize("result", [
    "np.sum(np.stack([r * 2.0 for r in x]))", "np.sum(sum([r * 2.0 for r in x]))",
    "np.sum([r * 2.0 for r in x][1])", "np.sum([r * 2.0 for r in x])",
    "np.sum(np.stack([np.sin(r) * r for r in x]))"])
def test_grad_of_value_and_grad_of_a_comprehension(user_module, result):
    module = user_module(f"""
import numpy as np

import autodiff as ad


def f(x):
    return {result}


f_value_and_grad = ad.value_and_grad(f)


def f2(x):
    value, gradient = f_value_and_grad(x)
    return value + np.sum(np.sin(gradient))
""")
    np.testing.assert_allclose(ad.grad(module.f2)(X), ad.numeric_grad(module.f2, X), atol=1e-6)


def test_jit_gradient_of_nested_loops_from_a_view(user_module):
    # jit=True updated 'score' in place in its loop, while 'ans', carried into the inner
    # loop beside it, was still a view of it (score[::-1]): a wrong gradient
    module = user_module("""
import numpy as np


def f(c, x):
    score = np.sin(x)
    ans = score[::-1]
    for i in range(1):
        score = np.tanh(score)
        for x_t in c:
            ans = np.tanh(ans + x_t)
    return np.sum(c) * np.sum(score) + np.mean(ans)
""")
    c, x = np.array([-0.64, 1.11, 0.76]), np.array([-0.38, 0.66, 1.21])
    np.testing.assert_allclose(ad.grad(module.f, jit=True)(c, x), ad.grad(module.f)(c, x),
                               rtol=1e-9)


def test_jit_gradient_that_is_a_module_constant(user_module):
    # the specialised gradient is the global SCALE itself: jit=True took it for a variable
    # to update in place, and wrote 'if .__class__ is not float' (a global has no variable)
    module = user_module("""
import numpy as np

import autodiff as ad

SCALE = 1.3


def f(x):
    return SCALE * x


def f_sum(x):
    return np.sum(SCALE * x)


def f_stopped(x):
    return x * ad.stop_gradient(x)
""")
    for x in (np.array(-0.24), np.array(-0.24, np.float32)):
        got = ad.grad(module.f, jit=True)(x)
        assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == x.dtype
        np.testing.assert_allclose(got, 1.3, rtol=1e-6)
        got = ad.grad(module.f_stopped, jit=True)(x)
        assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == x.dtype
        np.testing.assert_allclose(got, x, rtol=1e-6)
    for x in (X, X.astype(np.float32)):
        got = ad.grad(module.f_sum, jit=True)(x)
        assert got.shape == x.shape and got.dtype == x.dtype
        np.testing.assert_allclose(got, ad.numeric_grad(module.f_sum, X), rtol=1e-6)
    assert ad.grad(module.f, jit=True)(-0.24) == 1.3


def test_a_field_of_the_gradient_of_a_function_unpacking_a_namedtuple(user_module):
    # h unpacks its argument, so h_grad also has a graph for arrays (their rows): calling it
    # in g, built first for arrays, gave a gradient read as '.xs', refused ('the attribute
    # '.xs' is not supported') instead of compiling g for the namedtuple
    module = user_module("""
import collections

import numpy as np

import autodiff as ad

Layer = collections.namedtuple("Layer", "xs W")


def h(layer, x):
    xs, W = layer
    return np.sum(np.sin(xs * W * x))


h_value_and_grad = ad.value_and_grad(h, wrt=0)


def g(layer, x):
    value, gradient = h_value_and_grad(layer, x)
    return value + np.sum(np.sin(gradient.xs)) + np.sum(np.sin(gradient.W))
""")
    layer, x = module.Layer(X[0], X[1]), np.array([0.4, 0.9, -0.3])
    got = ad.grad(module.g, wrt=(0, 1))(layer, x)
    expected = ad.numeric_grad(module.g, layer, x, wrt=(0, 1))
    assert type(got[0]) is module.Layer
    for ours, theirs in zip(ad.tree.leaves(got), ad.tree.leaves(expected)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
    with pytest.raises(ad.AutodiffError, match="the attribute '.xs' is not supported"):
        ad.grad(module.g)(X[:2], x)  # an array has no field 'xs'
