"""Random programs mixing the gradient path with Python that carries no gradient.

Hypothesis draws a module (``tests/fuzz/off_path.py``) whose ``f`` runs, stage by
stage, code on the gradient path that reads run-time shapes and types
(``x.shape[0]``, ``np.zeros((N, H), dtype=x.dtype)``, ``np.finfo(x.dtype).eps``,
``h.ndim``, ``np.random.rand(*x.shape)``), calls objects (a layer with ``__call__``, a
``functools.partial``, a dict of lambdas) and generators, and may return a cache
beside its output (``has_aux=True``); and off the path, writes into the dict, the
object and the list it was passed, prints, and calls functions autodiff has no
gradient rule for whose results the output does not read.

``test_off_path_effects_and_gradients`` checks (``tests/fuzz/off_path_checks.py``)
that every derivative (``grad``, ``value_and_grad``, ``jit=True``, ``jvp``, and
``hvp`` on some programs) leaves in the containers and prints what the plain
function does, once per call, with its forward values, and that the gradient
matches central differences and is the gradient of the program without its
off-path lines; also with float32 arguments, and with an ``x`` of another number
of rows passed to the same derivative.
``test_a_construct_without_a_rule_is_refused_on_the_path_only`` puts such a
function on the gradient path (in ``f``, or in a helper, a lambda or a generator
``f`` calls): autodiff must refuse it, naming its line, and accept the same call
once its result is unused.

Forms autodiff refuses today where it should not (``state.get`` on a caller's dict,
``reshape(*x.shape)``, a method called for its effect alone, a helper writing into
the caller's dict...) are left out of the generator, each named with its smallest
program at the top of ``tests/fuzz/off_path.py``.

CI runs a fixed sequence of 40 programs (and 20 with a refusal on the path, about 20 s
of CPU in all); ``AUTODIFF_FUZZ_EXAMPLES`` and
``AUTODIFF_FUZZ_SEED`` set another, as for ``tests/api/test_random_programs.py``
(``AUTODIFF_FUZZ_EXAMPLES`` scales both tests' counts).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import traceback

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

import autodiff as ad
from tests.fuzz.off_path import REFUSED, line_number, off_path_programs
from tests.fuzz.off_path_checks import check_off_path
from tests.helpers import UserModules

EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("AUTODIFF_FUZZ_SEED")
PHASES = tuple(Phase) if os.environ.get("AUTODIFF_FUZZ_SHRINK", "1") != "0" else tuple(
    p for p in Phase if p is not Phase.shrink)
SETTINGS = dict(deadline=None, derandomize=SEED is None, database=None,
                report_multiple_bugs=False, phases=PHASES,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# What a sample of 250 programs must hold; each pattern is one construct.
CONSTRUCTS = [
    # run-time shapes and types
    r"N = h\.shape\[0\]", r"N = x\.shape\[0\]\n", r"\+ 0\.1 \* x\.reshape\(N, -1\)",
    r"N, H = h\.shape", r"N = x\.shape\[0\]\n\s+H = x\.shape\[1\]",
    r"\.reshape\(N, -1\)", r"\.reshape\(x\.shape\)", r"\.reshape\(N \* H\)",
    r"np\.zeros\(\(N, H\), dtype=[xh]\.dtype\)", r"for i in range\(N\):", r"\w+\[-1\] \+= ",
    r"np\.finfo\([xh]\.dtype\)\.eps\)", r"= np\.finfo\(h\.dtype\)\.eps\n", r"axis=h\.ndim - 1",
    r"if [xh]\.ndim == 2:", r"np\.random\.rand\(\*h\.shape\)", r"np\.random\.rand\(\*x\.shape\)",
    # objects called
    r"\n\w+ = Dense\(np\.array", r"h = (layer|dense)\(h\)", r"\n    def blend\(",
    r"\ndef blend\(", r"functools\.partial\(blend, weight=", r"functools\.partial\(blend, h\)",
    r'\nACTS = \{', r'h = ACTS\["\w+"\]\(h\)', r'h = acts\["\w+"\]\(h\)',
    # generators
    r"in doubled\(h\)", r"in scaled_rows\(h, 0\.5\)", r"np\.stack\(\[np\.sin\(v\) for v in ",
    r"for i, v in enumerate\((doubled|scaled_rows)\(", r"= sum\(np\.sum\(np\.sin\(v\)\) for v in ",
    # caches
    r"cache\.append\(\(r, z\)\)", r"cache\.append\(\(i, z\)\)", r"return out_value, cache",
    # effects on what the caller passed, prints
    r'state\["mean"\] = ', r'state\["last"\] = h', r'state\["count"\] = state\["count"\] \+ 1',
    r'state\["count"\] \+= 1',
    r'state\["total"\] = ', r'state\["shape"\] = h\.shape', r"obj\.last = h", r"obj\.calls \+= 1",
    r"obj\.calls = obj\.calls \+ 1", r"obj\.norm = ", r"log\.append\(float\(np\.sum\(h\)\)\)",
    r"log\.append\(h\.shape\)", r"log\.append\(np\.max\(h\)\)", r"log\.append\(\(h\.ndim, ",
    r'if float\(np\.sum\(h\)\) > 0\.0:\n\s+state\["positive"\] = True', r'print\("row", ',
    r'\ndef step\(h, log\):\n    log\.append',
    r"h = step\(h, log\)", r'h = np\.sin\(state\["h"\] \* 1\.1\)',
    r'print\("step", ', r'print\(f"mean ', r'print\("shape", h\.shape',
    # functions without a gradient rule, off the path
    *(re.escape(c.format(h="h")) for c in REFUSED),
    r"\n    (unused|ignored) = np\.", r'print\("parts", ', r'state\["parts"\] = ',
    r"log\.append\(float\(np\.sum\(np\.",
]


def test_generator_reaches_every_construct():
    found = []

    @settings(max_examples=250, deadline=None, derandomize=True, database=None)
    @given(off_path_programs())
    def collect(program):
        found.append(program)

    @settings(max_examples=60, deadline=None, derandomize=True, database=None)
    @given(off_path_programs(on_path_refusal=True))
    def collect_refusals(program):
        refusals.append(program)

    refusals = []
    collect()
    collect_refusals()
    places = [r"\n    h = h \+ 0\.5 \* np\.", r"\n    h = np\.sin\(np\.",
              r"\n    h = np\.tanh\(h - np\.",
              r"\n    h = rough\(h\)", r'\n    h = ROUGH\["rough"\]\(h\)',
              r"\n    h = np\.stack\(list\(rough_rows\(h\)\)\)"]
    missing = [place for place in places if not any(re.search(place, p.source)
                                                   for p in refusals)]
    assert not missing, missing
    text = "\n".join(p.source for p in found)
    missing = [pattern for pattern in CONSTRUCTS if not re.search(pattern, text)]
    assert not missing, missing
    assert {p.has_aux for p in found} == {True, False}
    assert {len(p.floats) for p in found} == {1, 2}
    assert {(p.state is not None, p.recorder, p.log) for p in found} >= {
        (True, False, False), (False, True, False), (False, False, True), (True, True, True)}
    for program in found:  # the stripped program has every line but the off-path ones
        assert program.stripped != program.source
        assert set(program.stripped.splitlines()) <= set(program.source.splitlines())


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    return UserModules(tmp_path_factory.mktemp("random_off_path"))


def _seeded(test):
    return test if SEED is None else seed(int(SEED))(test)


def _report(error: Exception, program) -> AssertionError:
    """The failure with the program, without the chain (its file names change with every
    compilation, and hypothesis would take a replay for another failure)."""
    trace = "".join(traceback.format_exception(error)[-6:])
    return AssertionError(f"{trace}\nthe program:{program!r}")


@_seeded
@settings(max_examples=EXAMPLES, **SETTINGS)
@given(program=off_path_programs())
def test_off_path_effects_and_gradients(modules, program):
    digest = hashlib.sha1(program.source.encode()).hexdigest()[:12]
    names = [f"random_off_path_{digest}", f"random_off_path_{digest}_stripped"]
    try:
        module = modules(program.source, names[0])
        stripped = modules(program.stripped, names[1])
        check_off_path(program, module, stripped)
    except Exception as error:  # noqa: BLE001 - any failure, with the program
        raise _report(error, program) from None
    finally:
        for name in names:
            sys.modules.pop(name, None)


@_seeded
@settings(max_examples=max(EXAMPLES // 2, 1), **SETTINGS)
@given(program=off_path_programs(on_path_refusal=True))
def test_a_construct_without_a_rule_is_refused_on_the_path_only(modules, program):
    digest = hashlib.sha1(program.source.encode()).hexdigest()[:12]
    names = [f"random_refusal_{digest}", f"random_refusal_{digest}_off",
             f"random_refusal_{digest}_without"]
    line = line_number(program.source, program.refused)
    # the call with its result unused (off the path), and the program without the call
    call = f"    {program.refusal_call}\n"
    off = program.source.replace(call, f"    spare = {program.refusal_call.split(' = ', 1)[1]}\n")
    without = program.source.replace(call, "")
    assert off != program.source and without != program.source
    try:
        module, spare, plain = (modules(text, name)
                                for text, name in zip((program.source, off, without), names))
        tangents = tuple(map(np.ones_like, program.floats))
        attempts = [lambda: ad.grad(module.f, wrt=program.wrt, has_aux=program.has_aux)(
            *program.arguments(), *program.containers(module))]
        if program.forward and not program.has_aux:
            attempts.append(lambda: ad.jvp(module.f, wrt=program.wrt)(
                *program.arguments(), *program.containers(module), tangents))
        function, = {c.split("(")[0] for c in REFUSED if c.split("(")[0] in program.refused}
        for attempt in attempts:  # (refused as the derivative is made, or at its first call)
            with pytest.raises(ad.AutodiffError) as refused:
                attempt()
            message = str(refused.value)
            assert f"{names[0]}.py:{line}: '{function}' is not a function autodiff knows how " \
                "to differentiate" in message, message
            assert program.refused in message, message  # the line itself, and a hint
            assert f"ad.register_gradient({function}, vjp)" in message, message
            assert "ad.stop_gradient" in message, message
        got = ad.grad(spare.f, wrt=program.wrt, has_aux=program.has_aux)(
            *program.arguments(), *program.containers(spare))
        want = ad.grad(plain.f, wrt=program.wrt, has_aux=program.has_aux)(
            *program.arguments(), *program.containers(plain))
        for ours, theirs in zip(got[0] if program.has_aux else got,
                                want[0] if program.has_aux else want):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)
    except Exception as error:  # noqa: BLE001 - any failure, with the program
        raise _report(error, program) from None
    finally:
        for name in names:
            sys.modules.pop(name, None)
