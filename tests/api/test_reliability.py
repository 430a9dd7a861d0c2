"""Nothing corrupted, nothing shared (issue 7).

- Derivatives never modify their inputs: every corpus program through every
  transform with read-only arguments (and read-only seeds, tangents and ``v``);
  the results are fresh, writable arrays that alias no input and no other result.
- Compilation is thread-safe: many threads asking for a brand-new derivative at
  once compile it once and all get their own correct result; functions that share
  a name (in two modules, in two directories, two closures of one factory, a
  redefinition) never share generated code.
- Kinds and dtypes are preserved (float32 stays float32, 0-d arrays, Python floats
  and NumPy scalars come back as what they went in as); empty arrays and loops that
  run zero times work.
- Generated code lives in memory only, and compiling a function runs nothing but
  that function's own code: no attribute, property, ``__array__``, ``__len__``,
  ``__bool__``... of the user's objects, no decorator, no annotation.

Values are checked against central finite differences in float64.
"""

from __future__ import annotations

import functools
import gc
import importlib.util
import inspect
import linecache
import os
import runpy
import sys
import tempfile
import textwrap
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from tests.corpus.control_flow import CONTROL_FLOW
from tests.corpus.programs import CORPUS, Program
from tests.helpers import UserModules, central_difference

# ----- helpers -----


def _as_tuple(value, several: bool) -> tuple:
    return value if several else (value,)


def _positions(program: Program) -> list[int]:
    code = program.fn.__code__
    names = code.co_varnames[: code.co_argcount]
    items = program.wrt if isinstance(program.wrt, tuple) else (program.wrt,)
    return [names.index(i) if isinstance(i, str) else i for i in items]


def _read_only(value):
    """A read-only copy of an array (anything else as it is)."""
    if isinstance(value, np.ndarray):
        value = np.array(value)
        value.setflags(write=False)
    return value


def _arrays(result) -> list[np.ndarray]:
    """Every array in a (nested tuple of) result(s)."""
    if isinstance(result, (tuple, list)):
        return [a for item in result for a in _arrays(item)]
    return [result] if isinstance(result, np.ndarray) else []


def _assert_fresh(result, inputs: list, what: str) -> None:
    """Every array of ``result`` is writable and shares memory with no input and no
    other array of the result: a caller may update any of them in place."""
    arrays = _arrays(result)
    sources = _arrays(list(inputs))
    for k, array in enumerate(arrays):
        assert array.flags.writeable, f"{what}: result {k} is read-only"
        for j, source in enumerate(sources):
            assert not np.shares_memory(array, source), (
                f"{what}: result {k} shares memory with input array {j}")
        for j in range(k):
            assert not np.shares_memory(array, arrays[j]), (
                f"{what}: results {j} and {k} share memory")


def _snapshot(values: list) -> list:
    return [(v.shape, v.dtype, v.tobytes()) if isinstance(v, np.ndarray) else v
            for v in values]


def _assert_untouched(values: list, snapshot: list, what: str) -> None:
    for k, (value, before) in enumerate(zip(values, snapshot, strict=True)):
        if isinstance(value, np.ndarray):
            assert (value.shape, value.dtype, value.tobytes()) == before, (
                f"{what} changed input {k}")
            assert not value.flags.writeable, f"{what} made input {k} writable again"
        else:
            assert value == before, f"{what} changed input {k}"


def _close(ours, expected, what: str, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    ours, expected = _arrays_or_values(ours), _arrays_or_values(expected)
    assert len(ours) == len(expected), what
    for k, (a, b) in enumerate(zip(ours, expected)):
        assert np.shape(a) == np.shape(b), f"{what}, part {k}: shape {np.shape(a)} != {np.shape(b)}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what}, part {k}")


def _arrays_or_values(result) -> list:
    if isinstance(result, (tuple, list)):
        return [v for item in result for v in _arrays_or_values(item)]
    return [result]


def _float64(value):
    """``value`` in float64, of the same shape and kind, for finite differences."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    return float(value)


def _finite_differences(fn, args: list, positions: list[int]) -> list:
    """Central differences in float64 w.r.t. each of ``positions``."""
    args = list(args)
    for p in positions:
        args[p] = _float64(args[p])
    return [central_difference(fn, args, p) for p in positions]


@pytest.fixture
def compilations(monkeypatch):
    """The texts of every generated function compiled during the test: the one door,
    ``autodiff.codegen.compile.compile_generated``, wrapped wherever autodiff
    imported it."""
    import autodiff.codegen.compile as compile_module

    original = compile_module.compile_generated
    texts: list[str] = []
    lock = threading.Lock()

    @functools.wraps(original)
    def counting(generated, *args, **kwargs):
        with lock:
            texts.append(getattr(generated, "text", repr(generated)))
        return original(generated, *args, **kwargs)

    patched = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "autodiff" or name.startswith("autodiff.")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                monkeypatch.setattr(module, attribute, counting)
                patched += 1
    assert patched, "found no reference to compile_generated to count compilations"
    return texts


@pytest.fixture
def busy_switching():
    """Threads switch as often as possible: races show up."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def _in_threads(count: int, work) -> list:
    """``work(i)`` in ``count`` threads released together; their results in order."""
    barrier = threading.Barrier(count)

    def run(i):
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


# ----- 1. read-only inputs -----

# Second derivatives (hvp, hessian) cost the most to build: on the straight-line
# corpus and on every fifth control-flow program, to keep this file fast.
ALL_PROGRAMS = [pytest.param(p, True, id=p.fn.__name__) for p in CORPUS] + [
    pytest.param(p, i % 5 == 0, id=p.fn.__name__) for i, p in enumerate(CONTROL_FLOW)]


@pytest.mark.parametrize("program, second_order", ALL_PROGRAMS)
def test_read_only_inputs_stay_untouched_and_results_are_fresh(program, second_order):
    """Every transform on read-only arguments (and read-only seed, tangents and v):
    no error, the inputs bit for bit as they were, results right, writable, aliasing
    nothing they were given and not each other."""
    fn, wrt = program.fn, program.wrt
    several = isinstance(wrt, tuple)
    positions = _positions(program)
    writable = program.make_args(np.random.default_rng(0))
    args = [_read_only(a) for a in writable]
    rng = np.random.default_rng(1)
    directions = [_read_only(rng.uniform(-1.0, 1.0, np.shape(args[p])))
                  if isinstance(args[p], np.ndarray) else float(rng.uniform(-1.0, 1.0))
                  for p in positions]
    direction = tuple(directions) if several else directions[0]
    seed = _read_only(np.array(0.75))
    extra = [seed, *directions]
    snapshot = _snapshot(args + extra)

    def check(what, call):
        result = call()
        _assert_untouched(args + extra, snapshot, what)
        _assert_fresh(result, args + extra, what)
        return result

    reference = _as_tuple(ad.grad(fn, wrt=wrt)(*writable), several)
    for position, expected, ours in zip(positions, _finite_differences(fn, writable, positions),
                                        reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-7,
                                   err_msg=f"gradient w.r.t. argument {position}")

    gradients = _as_tuple(check("grad", lambda: ad.grad(fn, wrt=wrt)(*args)), several)
    _close(gradients, reference, "grad on read-only inputs")
    jitted = _as_tuple(check("grad(jit=True)", lambda: ad.grad(fn, wrt=wrt, jit=True)(*args)),
                       several)
    _close(jitted, reference, "grad(jit=True) on read-only inputs")
    value, gradients = check("value_and_grad", lambda: ad.value_and_grad(fn, wrt=wrt)(*args))
    np.testing.assert_allclose(value, fn(*writable), rtol=1e-12)
    _close(_as_tuple(gradients, several), reference, "value_and_grad")

    pull = ad.vjp(fn, wrt=wrt)
    pulled = check("vjp", lambda: pull(*args, **{pull.seed_name: seed}))
    _close(_as_tuple(pulled, several), [0.75 * np.asarray(g) for g in reference], "vjp")

    push = ad.jvp(fn, wrt=wrt)
    value, directional = check("jvp", lambda: push(*args, **{push.tangent_name: direction}))
    np.testing.assert_allclose(value, fn(*writable), rtol=1e-12)
    expected = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(reference, directions))
    np.testing.assert_allclose(directional, expected, rtol=1e-7, atol=1e-9)

    jacobian = _as_tuple(check("jacobian", lambda: ad.jacobian(fn, wrt=wrt)(*args)), several)
    _close(jacobian, reference, "jacobian of a scalar function")

    if not second_order:
        return
    hessian = check("hessian", lambda: ad.hessian(fn, wrt=wrt)(*args))
    blocks = hessian if several else ((hessian,),)
    product = ad.hvp(fn, wrt=wrt)
    hv = check("hvp", lambda: product(*args, **{product.tangent_name: direction}))
    expected = [sum(np.tensordot(blocks[i][j], directions[j], axes=np.ndim(directions[j]))
                    for j in range(len(positions))) for i in range(len(positions))]
    _close(_as_tuple(hv, several), expected, "hvp against hessian @ v", rtol=1e-6, atol=1e-8)


def identity(x):
    return x


def add(x, y):
    return x + y


def doubled_sum(x, y):
    return np.sum(x * 2.0 + y * 2.0)


def transposed(x):
    return x.T


def two_outputs(x):
    return x, x * 3.0


def scaled_tanh(x, W):
    return np.tanh(x @ W)


def _small_programs():
    x = np.array([[0.5, -1.0], [1.5, 0.25]])
    y = np.array([[1.0, 2.0], [-0.5, 0.75]])
    seed = np.array([[1.0, -1.0], [0.5, 2.0]])
    return [  # fn, args, wrt, seed (None: scalar output)
        (identity, [x], 0, seed),
        (add, [x, y], (0, 1), seed),
        (add, [x, y[0]], (0, 1), seed),
        (doubled_sum, [x, y], (0, 1), None),
        (transposed, [x], 0, seed.T.copy()),
        (two_outputs, [x], 0, (seed, seed[::-1].copy())),
        (scaled_tanh, [x, y], (0, 1), seed),
    ]


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "jit"])
@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
@pytest.mark.parametrize("case", range(len(_small_programs())),
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(_small_programs())])
def test_products_never_return_their_seed_tangent_or_input(case, read_only, jit):
    """``vjp`` and ``jvp`` of functions whose adjoint or tangent is the seed or tangent
    itself (identity, ``x + y``, transpose, a tuple output) and gradients that are equal
    (``2x + 2y``): each result is a fresh writable array, aliasing no argument, seed or
    tangent and no other result; and the seed and tangents are left as they were."""
    fn, args, wrt, seed = _small_programs()[case]
    several = isinstance(wrt, tuple)
    prepare = _read_only if read_only else np.array
    args = [prepare(a) for a in args]
    positions = list(wrt) if several else [wrt]
    tangents = [prepare(np.full(np.shape(args[p]), 0.5) + 0.1 * p) for p in positions]
    seeds = [] if seed is None else [prepare(s) for s in _as_tuple(seed, isinstance(seed, tuple))]
    given = args + tangents + seeds
    snapshot = [np.array(a) for a in given]

    if seed is None:
        result = ad.grad(fn, wrt=wrt, jit=jit)(*args)
        expected = _finite_differences(fn, args, positions)
    else:
        pull = ad.vjp(fn, wrt=wrt, jit=jit)
        seed_value = tuple(seeds) if isinstance(seed, tuple) else seeds[0]
        result = pull(*args, **{pull.seed_name: seed_value})

        def weighted(*a):
            out = fn(*a)
            return sum(np.sum(o * s) for o, s in zip(_as_tuple(out, isinstance(out, tuple)),
                                                      seeds))

        expected = _finite_differences(weighted, args, positions)
    _close(_as_tuple(result, several), expected, "vjp / grad", rtol=1e-6, atol=1e-8)
    _assert_fresh(result, given, "vjp / grad")

    push = ad.jvp(fn, wrt=wrt, jit=jit)
    _, tangent_out = push(*args, **{push.tangent_name: tuple(tangents) if several
                                    else tangents[0]})
    _assert_fresh(tangent_out, given, "jvp's output tangent")
    for k, (before, after) in enumerate(zip(snapshot, given)):
        np.testing.assert_array_equal(after, before, err_msg=f"input {k} changed")


# ----- 2. threads -----

THREADED_SOURCE = """
import numpy as np

def loss(x, w):
    h = np.tanh(x * w)
    total = 0.0
    for i in range(x.shape[0]):
        total = total + h[i] ** 2
    return total + np.sum(np.sin(w))
"""

THREADS = 16


@pytest.mark.parametrize("variant", ["grad", "value_and_grad", "jit", "jit-3-signatures"])
def test_threads_asking_for_a_new_derivative_compile_it_once(variant, user_module,
                                                             compilations, busy_switching):
    loss = user_module(THREADED_SOURCE).loss  # brand new: nothing cached
    sizes = [3 + i % 3 for i in range(THREADS)] if variant == "jit-3-signatures" else [4] * THREADS

    def work(i):
        rng = np.random.default_rng(i)
        x, w = rng.normal(size=sizes[i]), rng.normal(size=sizes[i])
        if variant == "value_and_grad":
            derivative = ad.value_and_grad(loss, wrt=(0, 1))
        else:
            derivative = ad.grad(loss, wrt=(0, 1), jit=variant.startswith("jit"))
        return derivative, (x, w), derivative(x, w)

    results = _in_threads(THREADS, work)
    derivatives = {id(d) for d, _, _ in results}
    assert len(derivatives) == 1, f"{len(derivatives)} derivatives built for one function"
    for i, (_, args, result) in enumerate(results):  # each thread got its own, right answer
        if variant == "value_and_grad":
            value, result = result
            np.testing.assert_allclose(value, loss(*args), rtol=1e-12)
        _close(result, _finite_differences(loss, list(args), [0, 1]), f"thread {i}",
               rtol=1e-6, atol=1e-8)
    assert compilations, "no compilation was counted"
    assert len(compilations) == len(set(compilations)), (
        f"{len(compilations)} compilations of {len(set(compilations))} distinct sources: "
        "some derivative was compiled more than once")
    signatures = len(set(sizes)) if variant.startswith("jit") else 0
    assert len(compilations) <= 1 + signatures


def test_threads_compiling_different_functions_at_once(user_module, compilations,
                                                       busy_switching):
    source = "import numpy as np\n" + "".join(
        f"\ndef f{i}(x, w):\n    y = np.sin({0.5 + 0.1 * i} * x) * w ** {1 + i % 3}\n"
        f"    for k in range({i % 4}):\n        y = y * np.cos(y)\n    return np.sum(y)\n"
        for i in range(THREADS))
    module = user_module(source)

    def work(i):
        fn = getattr(module, f"f{i}")
        rng = np.random.default_rng(i)
        x, w = rng.normal(size=3), rng.uniform(0.5, 1.5, size=3)
        plain = ad.grad(fn, wrt=(0, 1))(x, w)
        jitted = ad.grad(fn, wrt=(0, 1), jit=True)(x, w)
        pushed = ad.jvp(fn, wrt=0)(x, w, np.ones(3))
        return fn, (x, w), plain, jitted, pushed

    for fn, args, plain, jitted, (value, directional) in _in_threads(THREADS, work):
        expected = _finite_differences(fn, list(args), [0, 1])
        _close(plain, expected, fn.__name__, rtol=1e-6, atol=1e-8)
        _close(jitted, expected, f"{fn.__name__} (jit)", rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        np.testing.assert_allclose(directional, np.sum(expected[0]), rtol=1e-6, atol=1e-8)
    assert len(compilations) == len(set(compilations)), "a derivative was compiled twice"


# ----- 3. same names, different code -----

LOSS_A = """
import numpy as np

def helper(v):
    return np.sin(v)

def loss(x, w):
    return np.sum(helper(x) * w)
"""

LOSS_B = """
import numpy as np

def helper(v):
    return np.cos(v) ** 2

def loss(p, q, r=1.5):
    return np.sum(helper(p) * q ** 3) * r
"""


def _import_as(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _shown_source(derivative) -> str:
    """The text Python shows for ``derivative`` (tracebacks, debuggers, inspect)."""
    linecache.checkcache()  # what traceback and pytest do; must not drop generated code
    return inspect.getsource(derivative)


def _assert_own_derivatives(functions: list, args: list) -> None:
    """Each function's derivatives (every transform, plain and jit) are its own: right
    by finite differences, and their shown source is their own."""
    shown: dict[str, list[str]] = {}
    for fn in functions:
        expected = _finite_differences(fn, args, [0, 1])
        names = list(inspect.signature(fn).parameters)
        for jit in (False, True):
            label = f"{fn.__module__}.{fn.__name__} (jit={jit})"
            g = ad.grad(fn, wrt=(0, 1), jit=jit)
            _close(g(*args), expected, label, rtol=1e-6, atol=1e-8)
            value, gradients = ad.value_and_grad(fn, wrt=(0, 1), jit=jit)(*args)
            np.testing.assert_allclose(value, fn(*args), rtol=1e-12, err_msg=label)
            _close(gradients, expected, label, rtol=1e-6, atol=1e-8)
            push = ad.jvp(fn, wrt=0, jit=jit)
            _, directional = push(*args, **{push.tangent_name: np.ones_like(args[0])})
            np.testing.assert_allclose(directional, np.sum(expected[0]), rtol=1e-6,
                                       err_msg=label)
            text = _shown_source(g)
            first = text.lstrip().splitlines()[0]
            assert first.startswith("def ") and f"({names[0]}, {names[1]}" in first, (
                f"{label}: the source shown for its derivative starts {first!r}")
            shown.setdefault(f"jit={jit}", []).append(text)
        shown.setdefault("source", []).append(ad.grad(fn, wrt=(0, 1)).source)
    for kind, texts in shown.items():
        assert len(set(texts)) == len(texts), f"two functions show the same {kind} derivative"


def test_same_named_functions_in_different_modules_and_directories(tmp_path):
    args = [np.array([0.3, -0.8, 1.1]), np.array([0.7, 1.2, -0.4])]
    modules = UserModules(tmp_path)
    a, b = modules(LOSS_A, name="reliability_model_a"), modules(LOSS_B, name="reliability_model_b")
    _assert_own_derivatives([a.loss, b.loss], args)
    # the same module name, ``model``, imported from two directories
    for directory, source in (("first", LOSS_B), ("second", LOSS_A)):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "model.py").write_text(textwrap.dedent(source))
    try:
        first = _import_as("model", tmp_path / "first" / "model.py")
        second = _import_as("model", tmp_path / "second" / "model.py")
        assert first.loss.__qualname__ == second.loss.__qualname__ == "loss"
        _assert_own_derivatives([first.loss, second.loss], args)
    finally:
        sys.modules.pop("model", None)


def _factory(scale, activation):
    def loss(x, w):
        return np.sum(activation(scale * x) * w)

    return loss


def test_closures_of_one_factory_get_their_own_derivatives():
    args = [np.array([0.3, -0.8, 1.1]), np.array([0.7, 1.2, -0.4])]
    tanh2, tanh3, sin2 = _factory(2.0, np.tanh), _factory(3.0, np.tanh), _factory(2.0, np.sin)
    assert tanh2.__code__ is sin2.__code__  # one code object, three functions
    for fn in (tanh2, tanh3, sin2):
        expected = _finite_differences(fn, args, [0, 1])
        for jit in (False, True):
            _close(ad.grad(fn, wrt=(0, 1), jit=jit)(*args), expected,
                   f"closure (jit={jit})", rtol=1e-6, atol=1e-8)
            pull = ad.vjp(fn, wrt=(0, 1), jit=jit)
            _close(pull(*args, **{pull.seed_name: 2.0}), [2.0 * e for e in expected],
                   f"closure vjp (jit={jit})", rtol=1e-6, atol=1e-8)
    assert ad.grad(tanh2, wrt=(0, 1)).source != ad.grad(sin2, wrt=(0, 1)).source


REDEFINED_V1 = """
import numpy as np

def loss(x, w):
    return np.sum(x ** 2 * w)
"""

REDEFINED_V2 = """
import numpy as np

def loss(x, w):
    # the new version, longer than the old one
    return np.sum(np.exp(0.5 * x) * np.sin(w) * 3.0)
"""


@pytest.mark.parametrize("how", ["reimport", "run_path"])
def test_a_redefined_function_gets_the_new_derivative(tmp_path, how):
    args = [np.array([0.3, -0.8, 1.1]), np.array([0.7, 1.2, -0.4])]
    path = tmp_path / "redefined_model.py"

    def load(source):
        path.write_text(textwrap.dedent(source))
        if how == "reimport":
            return _import_as("redefined_model", path).loss
        return runpy.run_path(str(path))["loss"]

    try:
        old = load(REDEFINED_V1)
        old_grad, old_jit = ad.grad(old, wrt=(0, 1)), ad.grad(old, wrt=(0, 1), jit=True)
        old_expected = _finite_differences(old, args, [0, 1])
        _close(old_jit(*args), old_expected, "old function (jit)", rtol=1e-6, atol=1e-8)
        new = load(REDEFINED_V2)
        new_expected = _finite_differences(new, args, [0, 1])
        for jit in (False, True):
            _close(ad.grad(new, wrt=(0, 1), jit=jit)(*args), new_expected,
                   f"redefined function (jit={jit})", rtol=1e-6, atol=1e-8)
            push = ad.jvp(new, wrt=0, jit=jit)
            _, directional = push(*args, **{push.tangent_name: np.ones(3)})
            np.testing.assert_allclose(directional, np.sum(new_expected[0]), rtol=1e-6)
        # derivatives built before the redefinition keep computing the old function's
        bigger = [2.0 * a for a in args]  # a new signature: jit specialises again
        _close(old_grad(*args), old_expected, "old derivative", rtol=1e-6, atol=1e-8)
        _close(old_jit(*bigger), _finite_differences(old, bigger, [0, 1]),
               "old derivative (jit, new signature)", rtol=1e-6, atol=1e-8)
        assert ad.grad(new, wrt=(0, 1)).source != old_grad.source
    finally:
        sys.modules.pop("redefined_model", None)


def test_derivatives_of_many_short_lived_functions_are_freed():
    """200 closures and lambdas, each differentiated and called: once the user drops
    them, nothing keeps them or their generated code alive; a derivative still in use
    stays right."""
    x = np.array([0.2, -0.4, 0.9])
    kept = _factory(1.5, np.tanh)
    kept_grad = ad.grad(kept, wrt=0, jit=True)
    expected = _finite_differences(kept, [x, np.ones(3)], [0])[0]
    functions, derivatives = [], []
    for i in range(200):
        if i % 2:
            fn = _factory(0.01 * i, np.sin)
        else:
            fn = lambda x, w, c=0.01 * i: np.sum(np.sin(c * x) * w)
        for jit in (False, True) if i % 10 == 0 else (False,):
            derivative = ad.grad(fn, wrt=0, jit=jit)
            np.testing.assert_allclose(derivative(x, np.ones(3)), 0.01 * i * np.cos(0.01 * i * x),
                                       rtol=1e-12, atol=1e-15)
            derivatives.append(weakref.ref(derivative))
            compiled = getattr(getattr(derivative, "specializations", None), "compiled", {})
            derivatives.extend(weakref.ref(c) for c in compiled.values())
        functions.append(weakref.ref(fn))
    del fn, derivative, compiled
    gc.collect()
    alive = sum(r() is not None for r in functions)
    assert alive == 0, f"{alive} of 200 deleted user functions are still alive"
    alive = sum(r() is not None for r in derivatives)
    assert alive == 0, f"{alive} generated functions of deleted user functions are still alive"
    _close(kept_grad(x, np.ones(3)), expected, "a derivative in use", rtol=1e-6, atol=1e-8)


def _shifted_factory(scale):
    def loss(x):
        return np.sum(np.sin(scale * x[1:]) * x[:-1]) + np.sum(x[::2, None] * x[1::2])

    return loss


def test_what_compiling_learns_of_shapes_is_freed_with_the_function():
    """The compiler knows x[1:] and x[:-1] have one shape; that fact, kept for each
    array indexed, goes when the function does."""
    from autodiff.ops import shape_rules

    gc.collect()
    before = len(shape_rules._derived)
    x = np.array([0.2, -0.4, 0.9, 1.3])
    for i in range(50):
        fn = _shifted_factory(0.1 * i)
        gradient = ad.grad(fn, jit=i % 2 == 0)(x)
        np.testing.assert_allclose(gradient, _finite_differences(fn, [x], [0])[0],
                                   rtol=1e-6, atol=1e-8)
    del fn
    gc.collect()
    assert len(shape_rules._derived) <= before


EDITED_SOURCE = """
import numpy as np


def other(x):
    return np.sum(x * 2.0)


def model(x, w):
    h = np.tanh(x * w)
    return np.sum(h * h)
"""


@pytest.mark.parametrize("edit, refused", [
    (("h * h", "h * h * h"), True),  # the function's own code
    (("np.tanh", "np.sin"), True),
    (("x * 2.0", "x * 3.0"), False),  # another function, the same lines
    (("import numpy as np\n", "import numpy as np\nSCALE = 2.0\n"), True),  # lines moved
])
def test_a_file_edited_after_import_is_not_differentiated_from_its_new_text(
        tmp_path, edit, refused):
    path = tmp_path / "edited_model.py"
    path.write_text(EDITED_SOURCE)
    sys.path.insert(0, str(tmp_path))
    x, w = np.array([0.3, -0.2]), np.array([1.1, 0.7])
    try:
        module = importlib.import_module("edited_model")
        path.write_text(path.read_text().replace(*edit))
        os.utime(path, (time.time() + 5, time.time() + 5))  # a new mtime, however fast
        if not refused:
            expected = _finite_differences(module.model, [x, w], [0])[0]
            np.testing.assert_allclose(ad.grad(module.model)(x, w), expected, rtol=1e-6)
            return
        with pytest.raises(ad.SourceUnavailableError, match="the file was changed after") as info:
            ad.grad(module.model)(x, w)
        assert "edited_model.py:" in str(info.value) and "importlib.reload" in str(info.value)
        module = importlib.reload(module)  # the advice works
        expected = _finite_differences(module.model, [x, w], [0])[0]
        np.testing.assert_allclose(ad.grad(module.model)(x, w), expected, rtol=1e-6)
    finally:
        sys.modules.pop("edited_model", None)
        sys.path.remove(str(tmp_path))


# ----- 4. kinds and dtypes -----

KINDS = {
    "float64 array": np.array([0.4, 1.3, -0.7]),
    "float32 array": np.array([0.4, 1.3, -0.7], dtype=np.float32),
    "0-d float64 array": np.array(0.8),
    "0-d float32 array": np.array(0.8, dtype=np.float32),
    "Python float": 0.8,
    "np.float64": np.float64(0.8),
    "np.float32": np.float32(0.8),
    "Python int": 2,
    "int array": np.array([1, 2, 3]),
    "np.int64": np.int64(2),
}


def scalar_loss(x):
    return np.sum(np.sin(x) * x)


def elementwise(x):
    return np.sin(x) * x


def _floating(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _gradient_kind(x) -> tuple:
    """What a gradient w.r.t. ``x`` must be: its type, shape and dtype."""
    if type(x) is np.ndarray:
        return np.ndarray, x.shape, _floating(x.dtype)
    if type(x) in (int, float):
        return float, (), np.dtype(np.float64)
    dtype = _floating(x.dtype)
    return dtype.type, (), dtype


def _kind(value) -> tuple:
    return type(value), np.shape(value), np.result_type(value)


def _value_kind(value) -> tuple:
    """Array or scalar, shape and dtype (a float and an np.float64 are one kind here)."""
    return isinstance(value, np.ndarray), np.shape(value), np.result_type(value)


def _tolerance(*values) -> dict:
    single = any(np.result_type(v) == np.float32 for v in values)
    return {"rtol": 2e-3, "atol": 2e-4} if single else {"rtol": 1e-6, "atol": 1e-8}


def _tangent_like(x, fill: float):
    if isinstance(x, np.ndarray):
        return np.full(x.shape, fill, dtype=_floating(x.dtype))
    if isinstance(x, np.generic):
        return _floating(x.dtype).type(fill)
    return fill


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "jit"])
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jvp"])
def test_kinds_and_dtypes_are_preserved(transform, jit):
    problems = []
    for label, x in KINDS.items():
        expected = _finite_differences(scalar_loss, [x], [0])[0]
        if transform in ("grad", "value_and_grad", "vjp"):
            if transform == "grad":
                gradient = ad.grad(scalar_loss, jit=jit)(x)
            elif transform == "value_and_grad":
                value, gradient = ad.value_and_grad(scalar_loss, jit=jit)(x)
                if _value_kind(value) != _value_kind(scalar_loss(x)):
                    problems.append(f"{label}: value {_kind(value)}, but the function "
                                    f"returns {_kind(scalar_loss(x))}")
                np.testing.assert_allclose(value, scalar_loss(x), **_tolerance(x))
            else:
                out = elementwise(x)
                pull = ad.vjp(elementwise, jit=jit)
                gradient = pull(x, **{pull.seed_name: np.ones_like(out)
                                      if isinstance(out, np.ndarray) else type(out)(1.0)})
            if _kind(gradient) != _gradient_kind(x):
                problems.append(f"{label}: gradient {_kind(gradient)}, expected "
                                f"{_gradient_kind(x)}")
            np.testing.assert_allclose(gradient, expected, err_msg=label, **_tolerance(x))
        else:
            tangent = _tangent_like(x, 0.5)
            push = ad.jvp(elementwise, jit=jit)
            value, tangent_out = push(x, **{push.tangent_name: tangent})
            want = elementwise(x)
            for what, got in (("value", value), ("output tangent", tangent_out)):
                if _value_kind(got) != _value_kind(want):
                    problems.append(f"{label}: {what} {_kind(got)}, but the function "
                                    f"returns {_kind(want)}")
            np.testing.assert_allclose(value, want, err_msg=label, **_tolerance(x))
            np.testing.assert_allclose(tangent_out, 0.5 * np.asarray(expected), err_msg=label,
                                       **_tolerance(x))
    assert not problems, "\n".join(problems)


GLOBAL_WEIGHTS = np.array([0.3, -0.2, 0.5])  # float64, read by a float32 computation


def mixed_loss(x, w, s, k):
    return np.sum(np.tanh(x * w) * s + GLOBAL_WEIGHTS * x) * k


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "jit"])
def test_mixed_precision_arguments_keep_their_own_dtypes(jit):
    rng = np.random.default_rng(4)
    for args in (
        [rng.normal(size=3).astype(np.float32), rng.normal(size=3), np.float32(0.5), 2],
        [rng.normal(size=3), rng.normal(size=3).astype(np.float32), 0.5, 4],
        [rng.normal(size=(2, 3)).astype(np.float32), np.array(0.7), np.float32(2.0), 3.0],
    ):
        positions = [0, 1, 2, 3]
        expected = _finite_differences(mixed_loss, args, positions)
        gradients = ad.grad(mixed_loss, wrt=(0, 1, 2, 3), jit=jit)(*args)
        value, again = ad.value_and_grad(mixed_loss, wrt=(0, 1, 2, 3), jit=jit)(*args)
        assert _value_kind(value) == _value_kind(mixed_loss(*args))
        for position, g, h, e in zip(positions, gradients, again, expected):
            x = args[position]
            assert _kind(g) == _gradient_kind(x), f"argument {position}: {_kind(g)}"
            assert _kind(h) == _gradient_kind(x), f"argument {position}: {_kind(h)}"
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=2e-4, err_msg=str(position))


# ----- 5. empty arrays and loops that run zero times -----


def sum_of_squares(x):
    return np.sum(x ** 2)


def tanh_energy(x):
    return np.sum(np.tanh(x) * x)


def matmul_energy(x, W):
    return np.sum((x @ W) ** 2)


def broadcast_energy(x, b):
    return np.sum((x + b) ** 2)


def steps_of_a_loop(x, n):
    y = x
    for _ in range(n):
        y = y * np.sin(y)
    return np.sum(y ** 2)


def rows_of_a_matrix(X, w):
    total = np.sum(w ** 2)
    for row in X:
        total = total + np.sum(row * w)
    return total


def while_never_runs(x):
    y = x
    while np.sum(y ** 2) > 1e6:
        y = 0.5 * y
    return np.sum(y ** 3)


def indexed_loop(x, w):
    total = np.sum(w ** 2)
    for i in range(len(x)):
        total = total + x[i] ** 2 * w[0]
    return total


# Known bug: np.array(acc) of a list a zero-length loop left empty becomes np.stack,
# which needs at least one array (issue 7's closing note).
def list_built_in_a_loop(x, w):
    acc = []
    for v in x:
        acc.append(v * w[0])
    return np.sum(np.array(acc)) + np.sum(w ** 2)


def list_summed(x, w):
    acc = []
    for v in x:
        acc.append(v * w[0])
    return sum(acc) + np.sum(w ** 2)


def comprehension_over_range(x, n):
    return np.sum(np.array([x[i] ** 2 for i in range(n)])) + np.sum(np.sin(x))


def generator_over_range(x, n):
    return sum(x[i] ** 3 for i in range(n)) + np.sum(np.cos(x))


W3 = np.array([0.5, -1.0, 2.0])
EMPTY_CASES = [
    (sum_of_squares, [np.zeros(0)], 0),
    (sum_of_squares, [np.zeros((0, 3))], 0),
    (sum_of_squares, [np.zeros((3, 0))], 0),
    (tanh_energy, [np.zeros((0, 3))], 0),
    (matmul_energy, [np.ones((2, 0)), np.ones((0, 3))], (0, 1)),
    (matmul_energy, [np.ones((0, 2)), np.full((2, 3), 0.5)], (0, 1)),
    (matmul_energy, [np.full((2, 3), 0.5), np.ones((3, 0))], (0, 1)),
    (broadcast_energy, [np.zeros((0, 3)), W3], (0, 1)),
    (broadcast_energy, [np.zeros((3, 0)), np.ones((3, 1))], (0, 1)),
    (broadcast_energy, [np.zeros((0, 3)), 1.5], (0, 1)),
    (steps_of_a_loop, [np.array([0.5, 1.0]), 0], 0),
    (rows_of_a_matrix, [np.zeros((0, 3)), W3], (0, 1)),
    (while_never_runs, [np.array([0.5, 1.0])], 0),
    (indexed_loop, [np.zeros(0), W3], (0, 1)),
    (list_built_in_a_loop, [np.zeros(0), W3], (0, 1)),
    (list_summed, [np.zeros(0), W3], (0, 1)),
    (comprehension_over_range, [np.array([0.5, 1.0]), 0], 0),
    (generator_over_range, [np.array([0.5, 1.0]), 0], 0),
]


@pytest.mark.parametrize("jit", [False, True], ids=["plain", "jit"])
@pytest.mark.parametrize("case", [pytest.param(i, id=f"{c[0].__name__}-{i}")
                                  for i, c in enumerate(EMPTY_CASES)])
def test_empty_arrays_and_loops_that_never_run(case, jit):
    fn, args, wrt = EMPTY_CASES[case]
    several = isinstance(wrt, tuple)
    positions = list(wrt) if several else [wrt]
    expected = _finite_differences(fn, args, positions)
    gradients = _as_tuple(ad.grad(fn, wrt=wrt, jit=jit)(*args), several)
    for position, g, e in zip(positions, gradients, expected):
        assert _kind(g) == _gradient_kind(args[position]), f"argument {position}: {_kind(g)}"
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    value, again = ad.value_and_grad(fn, wrt=wrt, jit=jit)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    _close(_as_tuple(again, several), expected, "value_and_grad", rtol=1e-6, atol=1e-8)
    tangents = [_tangent_like(args[p], 0.25) for p in positions]
    push = ad.jvp(fn, wrt=wrt, jit=jit)
    value, directional = push(*args, **{push.tangent_name: tuple(tangents) if several
                                        else tangents[0]})
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(directional, sum(np.sum(e * t) for e, t in zip(expected, tangents)),
                               rtol=1e-6, atol=1e-8)


# ----- 6. in memory only; nothing but the function's own code runs -----

_audit = {"writes": None, "thread": None, "installed": False}


def _audit_hook(event: str, args: tuple) -> None:
    writes = _audit["writes"]
    if writes is None or threading.get_ident() != _audit["thread"]:
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing:
            writes.append((event, str(path)))
    elif event in ("os.rename", "os.mkdir", "os.symlink", "os.link", "shutil.copyfile"):
        writes.append((event, str(args[0])))


class _FileWrites:
    """Files this thread opens for writing (or creates) while the block runs."""

    def __enter__(self):
        if not _audit["installed"]:
            sys.addaudithook(_audit_hook)  # for the process's life; idle outside this block
            _audit["installed"] = True
        self.writes = []
        _audit["thread"] = threading.get_ident()
        _audit["writes"] = self.writes
        return self

    def __exit__(self, *exc):
        _audit["writes"] = None


def _files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


DISK_SOURCE = """
import numpy as np

def helper(v, scale=2.0):
    return scale * np.tanh(v)

def loss(x, w):
    h = helper(x * w)
    total = 0.0
    for i in range(x.shape[0]):
        total = total + h[i] ** 2
    return total + np.sum(np.sin(w))

def with_aux(x, w):
    return np.sum(x * w), x * 2.0

def vector(x, w):
    return np.tanh(x) * w
"""


def test_generated_code_is_kept_in_memory_only(tmp_path, monkeypatch):
    source_dir, cwd, temp = tmp_path / "src", tmp_path / "cwd", tmp_path / "tmp"
    for directory in (source_dir, cwd, temp):
        directory.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.setenv(name, str(temp))
    # everything autodiff imports lazily, imported now, outside the watched block
    warm = UserModules(tmp_path)(DISK_SOURCE, name="reliability_disk_warmup")
    ad.grad(warm.loss, jit=True)(np.ones(2), np.ones(2))
    ad.hessian(warm.loss)(np.ones(2), np.ones(2))
    module = UserModules(source_dir)(DISK_SOURCE, name="reliability_disk_model")
    before = _files_under(tmp_path)
    x, w = np.array([0.3, -0.5, 0.8]), np.array([1.1, 0.4, -0.9])
    with _FileWrites() as watched:
        calls = [  # derivative, arguments, name of the extra one (seed, tangent) if any
            (ad.grad(module.loss, wrt=(0, 1)), (x, w), None),
            (ad.grad(module.loss, wrt=(0, 1), jit=True), (x, w), None),
            (ad.grad(module.loss, optimize=False), (x, w), None),
            (ad.value_and_grad(module.loss, jit=True), (x, w), None),
            (ad.vjp(module.vector, wrt=(0, 1)), (x, w), "seed_name"),
            (ad.vjp(module.vector, jit=True), (x, w), "seed_name"),
            (ad.jvp(module.loss), (x, w), "tangent_name"),
            (ad.jvp(module.vector, jit=True), (x, w), "tangent_name"),
            (ad.grad(module.with_aux, has_aux=True), (x, w), None),
            (ad.hvp(module.loss), (x, w), "tangent_name"),
            (ad.grad(ad.grad(module.helper)), (0.3,), None),
        ]
        for d, args, extra in calls:
            d(*args, **({getattr(d, extra): np.ones(3)} if extra else {}))
        derivatives = [d for d, _, _ in calls]
        ad.hessian(module.loss)(x, w)
        ad.jacobian(module.vector, wrt=(0, 1))(x, w)
        shown = []
        for d in derivatives:
            shown.append((d, _shown_source(d)))
            shown.extend((c, _shown_source(c)) for c in getattr(
                getattr(d, "specializations", None), "compiled", {}).values())
            assert d.source  # the text itself
    after = _files_under(tmp_path)
    assert after == before, f"new files: {sorted(after - before)}"
    own = [path for _, path in watched.writes
           if not ("__pycache__" in Path(path).parts and not Path(path).is_relative_to(tmp_path))]
    assert not own, f"compiling and running derivatives wrote {own}"
    for function, text in shown:
        code = function.__code__
        assert text.lstrip().startswith("def "), text[:200]
        assert not os.path.exists(code.co_filename), (
            f"{function.__name__}'s code claims a file on disk: {code.co_filename}")
        line = linecache.getline(code.co_filename, code.co_firstlineno)
        assert line.strip().startswith("def "), f"linecache shows {line!r}"


SIDE_EFFECTS_SOURCE = """
import functools
import numpy as np

CALLS = []


class Recorder:
    \"\"\"A user object that writes down every use anyone makes of it (but the
    __class__ that isinstance reads: see LAZY_SOURCE for that one).\"\"\"

    def __init__(self, label):
        object.__setattr__(self, "label", label)

    def __getattribute__(self, name):
        if name != "__class__":
            CALLS.append((object.__getattribute__(self, "label"), "." + name))
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        raise AttributeError(name)

    @property
    def weight(self):
        CALLS.append((self.label, "weight property"))
        return 2.0

    def __array__(self, dtype=None, copy=None):
        CALLS.append((self.label, "__array__"))
        return np.ones(3)

    def __len__(self):
        CALLS.append((self.label, "__len__"))
        return 3

    def __bool__(self):
        CALLS.append((self.label, "__bool__"))
        return True

    def __iter__(self):
        CALLS.append((self.label, "__iter__"))
        return iter([1.0, 2.0, 3.0])

    def __float__(self):
        CALLS.append((self.label, "__float__"))
        return 1.0

    def __index__(self):
        CALLS.append((self.label, "__index__"))
        return 1

    def __eq__(self, other):
        CALLS.append((self.label, "__eq__"))
        return False

    def __hash__(self):
        CALLS.append((self.label, "__hash__"))
        return 1

    def __repr__(self):
        CALLS.append((self.label, "__repr__"))
        return "Recorder()"

    def __getitem__(self, key):
        CALLS.append((self.label, "__getitem__"))
        return 1.0

    def __mul__(self, other):
        CALLS.append((self.label, "__mul__"))
        return other

    __rmul__ = __mul__

    def __copy__(self):
        CALLS.append((self.label, "__copy__"))
        return self

    def __deepcopy__(self, memo):
        CALLS.append((self.label, "__deepcopy__"))
        return self

    def __reduce_ex__(self, protocol):
        CALLS.append((self.label, "__reduce_ex__"))
        raise TypeError("not picklable")


class CallableRecorder(Recorder):
    def __call__(self, *args):
        CALLS.append((self.label, "__call__"))
        return args[0]


def annotate(label):
    CALLS.append(("annotation", label))
    return float


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLS.append(("decorator", fn.__name__))
        return fn(*args, **kwargs)
    return wrapper


DATA = Recorder("DATA")
MODEL = CallableRecorder("MODEL")
DEFAULT = Recorder("DEFAULT")
SEQUENCE = Recorder("SEQUENCE")
FLAG = Recorder("FLAG")


def data_in_untaken_branch(x, flag=False):
    if flag:
        return np.sum(x * DATA)
    return np.sum(x ** 2)


def model_attribute_in_untaken_branch(x, flag=False):
    if flag:
        return np.sum(x * MODEL.weight)
    return np.sum(x ** 2)


def unused_default(x, options=DEFAULT):
    return np.sum(np.sin(x))


def annotated(x: annotate("x"), scale: annotate("scale") = 2.0) -> annotate("return"):
    y: annotate("y") = scale * x
    return np.sum(y ** 2)


@logged
def logged_helper(v):
    return np.tanh(v)


def decorated_helper_in_untaken_branch(x, flag=False):
    if flag:
        return np.sum(logged_helper(x))
    return np.sum(np.cos(x))


def loop_over_global_in_untaken_branch(x, flag=False):
    total = np.sum(x ** 2)
    if flag:
        for v in SEQUENCE:
            total = total + v * np.sum(x)
        total = total + len(SEQUENCE)
    return total


def global_condition_in_untaken_branch(x, flag=False):
    if flag:
        if FLAG:
            return np.sum(x)
    return np.sum(x ** 3)


def _make_closure(captured):
    def closure_in_untaken_branch(x, flag=False):
        if flag:
            return np.sum(x * captured)
        return np.sum(np.exp(x))
    return closure_in_untaken_branch


closure_in_untaken_branch = _make_closure(Recorder("CLOSURE"))
"""

SIDE_EFFECT_CASES = ["data_in_untaken_branch", "model_attribute_in_untaken_branch",
                     "unused_default", "annotated", "decorated_helper_in_untaken_branch",
                     "loop_over_global_in_untaken_branch", "global_condition_in_untaken_branch",
                     "closure_in_untaken_branch"]


def _build_and_call(transform: str, fn, x):
    """Make the derivative and call it (a build may be lazy) with arguments for which
    ``fn``'s own code never touches the recording objects."""
    jit = transform.endswith("jit")
    name = transform.removesuffix(" jit")
    if name in ("grad", "value_and_grad"):
        return getattr(ad, name)(fn, jit=jit)(x)
    if name == "vjp":
        pull = ad.vjp(fn, jit=jit)
        return pull(x, **{pull.seed_name: 1.0})
    if name in ("jvp", "hvp"):
        push = ad.jvp(fn, jit=jit) if name == "jvp" else ad.hvp(fn)
        return push(x, **{push.tangent_name: np.ones_like(x)})
    return getattr(ad, name)(fn)(x)  # jacobian, hessian: they call fn itself


TRANSFORMS = ["grad", "value_and_grad", "vjp", "jvp", "hvp", "jacobian", "hessian", "grad jit",
              "jvp jit"]


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_compiling_runs_nothing_but_the_functions_own_code(transform, tmp_path):
    """The user's objects (globals, closure cells, defaults) that the call never
    reaches are never touched: no attribute read, property, ``__array__``, ``__len__``,
    ``__bool__``, ``__eq__``, ``__hash__``, copy; annotations are not evaluated again;
    decorated helpers are not called."""
    module = UserModules(tmp_path)(SIDE_EFFECTS_SOURCE)  # fresh: nothing cached
    x = np.array([0.2, -0.4, 0.7])
    touched = []
    refused = set()
    for case in SIDE_EFFECT_CASES:
        fn = getattr(module, case)
        module.CALLS.clear()
        try:
            _build_and_call(transform, fn, x)
        except ad.AutodiffError:  # refused before running anything: fine, if expected
            refused.add(case)
        if module.CALLS:
            touched.append(f"{case}: {sorted(set(module.CALLS))}")
        if case not in refused:
            expected = _finite_differences(fn, [x], [0])[0]
            np.testing.assert_allclose(ad.grad(fn)(x), expected, rtol=1e-6, atol=1e-8)
    assert not touched, f"{transform} touched the user's objects:\n" + "\n".join(touched)
    # A property is the object's own code and a decorated helper's source is not the code
    # that runs: both are refused with an AutodiffError rather than run or misread.
    assert refused == {"model_attribute_in_untaken_branch", "decorated_helper_in_untaken_branch"}


LAZY_SOURCE = """
import numpy as np

LOADS = []


class LazyArray:
    \"\"\"An array loaded on first use, like a lazy_object_proxy.Proxy: reading its
    __class__ (as isinstance does) loads it, to answer with the real class.\"\"\"

    def __init__(self, name):
        self.name, self.value = name, None

    def load(self):
        if self.value is None:
            LOADS.append(self.name)
            self.value = np.linspace(1.0, 2.0, 3)
        return self.value

    @property
    def __class__(self):
        return type(self.load())

    def __getattr__(self, name):
        return getattr(self.load(), name)

    def __array__(self, dtype=None, copy=None):
        return self.load()

    def __mul__(self, other):
        return self.load() * other

    __rmul__ = __mul__


TABLE = LazyArray("TABLE")


def table_in_untaken_branch(x, flag=False):
    if flag:
        return np.sum(x * TABLE)
    return np.sum(x ** 2)


def unused_default(x, table=LazyArray("DEFAULT")):
    return np.sum(np.sin(x))


def _make_closure(captured):
    def closure_in_untaken_branch(x, flag=False):
        if flag:
            return np.sum(x * captured)
        return np.sum(np.exp(x))
    return closure_in_untaken_branch


closure_in_untaken_branch = _make_closure(LazyArray("CLOSURE"))
"""


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "grad jit", "jvp jit"])
def test_compiling_never_loads_a_lazy_object_it_does_not_need(transform, tmp_path):
    """Lazy proxies (a data set loaded on first use) resolve themselves when their
    ``__class__`` is read; an ``isinstance`` test on a global, closure variable or
    default that the call does not reach must not load it."""
    module = UserModules(tmp_path)(LAZY_SOURCE)
    x = np.array([0.2, -0.4, 0.7])
    loaded = {}
    for case in ("table_in_untaken_branch", "unused_default", "closure_in_untaken_branch"):
        module.LOADS.clear()
        _build_and_call(transform, getattr(module, case), x)
        if module.LOADS:
            loaded[case] = list(module.LOADS)
    assert not loaded, f"{transform} loaded lazy objects the call never reaches: {loaded}"
    if transform.startswith("grad"):  # and a call that reaches them reads them right
        for case in ("table_in_untaken_branch", "closure_in_untaken_branch"):
            gradient = ad.grad(getattr(module, case), jit=transform == "grad jit")(x, True)
            np.testing.assert_allclose(gradient, np.linspace(1.0, 2.0, 3), rtol=1e-12)


DECORATED_SOURCE = """
import functools
import numpy as np

def doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper

@doubled
def helper(v):
    return np.tanh(v)

def calls_decorated_helper(x):
    return np.sum(helper(x) ** 2)

@doubled
def decorated_loss(x):
    return np.sum(x ** 3)
"""


@pytest.mark.parametrize("name", ["decorated_loss", "calls_decorated_helper"])
def test_decorators_are_not_silently_dropped(name, user_module):
    """A decorator changes what a function computes: the derivative includes it, or
    autodiff refuses with an AutodiffError; never the gradient of the undecorated body."""
    fn = getattr(user_module(DECORATED_SOURCE), name)
    x = np.array([0.3, -0.6, 0.9])
    expected = _finite_differences(fn, [x], [0])[0]
    for transform in ("grad", "grad jit", "jvp"):
        try:
            if transform == "jvp":
                push = ad.jvp(fn)
                _, got = push(x, **{push.tangent_name: np.ones(3)})
                want = np.sum(expected)
            else:
                got, want = ad.grad(fn, jit=transform == "grad jit")(x), expected
        except ad.AutodiffError:
            continue  # refused: fine
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{transform} of {name} ignores its decorator")
