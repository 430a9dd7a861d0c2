"""What every program of ``tests/fuzz/off_path.py`` is checked for.

The plain Python function, run on copies of the arguments with fresh containers,
says what each call must do: the value (and the cache, for ``has_aux``), what it
leaves in ``state``, ``obj`` and ``log``, and what it prints; run twice on the same
containers, what two calls leave. Each derivative (``grad``, ``value_and_grad``,
``grad`` with ``jit=True``, and ``jvp`` and ``hvp`` where they apply) must do the
same, once per call: the same entries of the same types holding the same forward
values, the same text printed, after one call and after two. Its gradient must
match central differences, the other derivatives, and the gradient of
``stripped`` (the program without its off-path lines): what runs off the path
changes no gradient. ``hvp`` must match central differences of the gradient. The
float arguments are left untouched. With float32 arguments, ``grad`` (plain and
``jit=True``) leaves what the plain function leaves, of the same types and dtypes,
and gives float32 gradients close to the float64 ones. Called again with an ``x`` of
another number of rows, they read this call's shapes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io

import numpy as np

import autodiff as ad
from tests.fuzz.off_path import OffPathProgram


def same(got, want, what: str, rtol: float = 1e-12) -> None:
    """``got`` equals ``want``: the same types all the way down, arrays of the same shape
    and dtype, numbers equal to rounding (``rtol``)."""
    assert type(got) is type(want), f"{what}: {type(got)} != {type(want)}"
    if isinstance(want, np.ndarray):
        assert got.shape == want.shape and got.dtype == want.dtype, what
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol / 10, err_msg=what)
    elif isinstance(want, (float, np.floating)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol / 10, err_msg=what)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{what}: {len(got)} items, not {len(want)}"
        for index, (a, b) in enumerate(zip(got, want)):
            same(a, b, f"{what}[{index}]", rtol)
    elif isinstance(want, dict):
        assert list(got) == list(want), f"{what}: keys {list(got)} != {list(want)}"
        for key in want:
            same(got[key], want[key], f"{what}[{key!r}]", rtol)
    else:
        assert got == want, f"{what}: {got!r} != {want!r}"


def _snapshot(program: OffPathProgram, containers: list) -> dict:
    """What the containers hold now (shallow copies: the values in them are not changed
    later)."""
    snapshot, rest = {}, list(containers)
    if program.state is not None:
        snapshot["state"] = dict(rest.pop(0))
    if program.recorder:
        snapshot["obj"] = dict(vars(rest.pop(0)))
    if program.log:
        snapshot["log"] = list(rest.pop(0))
    return snapshot


def _calls(program: OffPathProgram, module, function, times: int, *extra,
           dtype=np.float64) -> tuple:
    """``function`` called ``times`` times on the same fresh containers (of ``module``'s
    ``Recorder``), on the arguments as ``dtype``: what the last call returned, and after
    each call what the containers hold and the text printed."""
    containers = program.containers(module)
    after = []
    for _ in range(times):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            result = function(*(a.astype(dtype) for a in program.floats), *containers,
                              *extra)
        after.append((_snapshot(program, containers), printed.getvalue()))
    return result, after


def check_off_path(program: OffPathProgram, module, stripped) -> None:
    """Every check of one program; ``module`` holds its source, ``stripped`` its source
    without the off-path lines."""
    wrt, aux = program.wrt, program.has_aux
    expected, effects = _calls(program, module, module.f, 2)
    value = expected[0] if aux else expected
    derivatives = {"grad": ad.grad(module.f, wrt=wrt, has_aux=aux),
                   "value_and_grad": ad.value_and_grad(module.f, wrt=wrt, has_aux=aux),
                   "grad, jit=True": ad.grad(module.f, wrt=wrt, has_aux=aux, jit=True)}
    tangents = tuple(np.random.default_rng(3).uniform(-1, 1, a.shape) for a in program.floats)
    extra = {name: () for name in derivatives}
    if program.forward and not aux:
        derivatives["jvp"], extra["jvp"] = ad.jvp(module.f, wrt=wrt), (tangents,)
    if program.second_order:
        derivatives["hvp"], extra["hvp"] = ad.hvp(module.f, wrt=wrt), (tangents,)
    results = {}
    for name, derivative in derivatives.items():
        results[name], after = _calls(program, module, derivative, 2, *extra[name])
        for calls, ((got, printed), (want, want_printed)) in enumerate(zip(after, effects), 1):
            same(got, want, f"{name}: what {calls} call(s) left in the containers")
            assert printed == want_printed, \
                f"{name}: {calls} call(s) printed {printed!r}, not {want_printed!r}"
    for got, original in zip(program.arguments(), program.floats):
        np.testing.assert_array_equal(got, original)
    gradients = results["grad"]
    if aux:
        gradients, cache = gradients
        same(cache, expected[1], "grad's cache (has_aux)")
    computed, by_value_and_grad = results["value_and_grad"]
    if aux:
        computed, cache = computed
        same(cache, expected[1], "value_and_grad's cache (has_aux)")
    np.testing.assert_allclose(computed, value, rtol=1e-12, err_msg="value_and_grad's value")

    def loss(*floats):
        with contextlib.redirect_stdout(io.StringIO()):
            out = module.f(*floats, *program.containers(module))
        return out[0] if aux else out

    numeric = ad.numeric_grad(loss, *program.arguments(), wrt=wrt)
    jitted = results["grad, jit=True"][0] if aux else results["grad, jit=True"]
    without = ad.grad(stripped.f, wrt=wrt, has_aux=aux)(*program.arguments(),
                                                        *program.containers(stripped))
    without = without[0] if aux else without
    for k, name in enumerate(program.params[:len(wrt)]):
        assert type(gradients[k]) is np.ndarray and gradients[k].shape == program.floats[k].shape
        np.testing.assert_allclose(gradients[k], numeric[k], rtol=1e-5, atol=1e-7,
                                   err_msg=f"the gradient of {name} against finite differences")
        for other, what in [(by_value_and_grad[k], "value_and_grad"), (jitted[k], "jit=True"),
                            (without[k], "the program without its off-path lines")]:
            np.testing.assert_allclose(other, gradients[k], rtol=1e-10, atol=1e-13,
                                       err_msg=f"the gradient of {name}: {what}")
    if "jvp" in results:
        computed, along = results["jvp"]
        np.testing.assert_allclose(computed, value, rtol=1e-12, err_msg="jvp's value")
        np.testing.assert_allclose(
            along, sum(float(np.sum(g * t)) for g, t in zip(gradients, tangents)),
            rtol=1e-7, atol=1e-9, err_msg="jvp's directional derivative against the gradient")
    if "hvp" in results:
        derivative = ad.grad(module.f, wrt=wrt)

        def along(*floats):  # <gradient, tangents>, whose gradient is the Hessian's product
            with contextlib.redirect_stdout(io.StringIO()):
                gradient = derivative(*floats, *program.containers(module))
            return sum(float(np.sum(g * t)) for g, t in zip(gradient, tangents))

        product = ad.numeric_grad(along, *program.arguments(), wrt=wrt)
        for k, name in enumerate(program.params[:len(wrt)]):
            np.testing.assert_allclose(results["hvp"][k], product[k], rtol=1e-5, atol=1e-6,
                                       err_msg=f"hvp, {name}: against finite differences")
    _float32(program, module, gradients)
    _other_rows(program, module, {name: derivatives[name] for name in
                                  ("grad", "grad, jit=True")})


def _float32(program: OffPathProgram, module, reference) -> None:
    """float32 arguments: the derivatives leave what the plain function leaves (of the same
    types and dtypes: shapes, dtypes and eps are read from the arguments as the code runs),
    print as many lines, and give float32 gradients close to the float64 ones."""
    wrt, aux = program.wrt, program.has_aux
    _, [(effects, printed)] = _calls(program, module, module.f, 1, dtype=np.float32)
    scale = max([1.0] + [float(np.max(np.abs(g))) for g in reference])
    for name, derivative in [("grad", ad.grad(module.f, wrt=wrt, has_aux=aux)),
                             ("grad, jit=True", ad.grad(module.f, wrt=wrt, has_aux=aux,
                                                        jit=True))]:
        gradients, [(got, got_printed)] = _calls(program, module, derivative, 1,
                                                 dtype=np.float32)
        same(got, effects, f"float32, {name}: what a call left in the containers", rtol=1e-5)
        assert len(got_printed.splitlines()) == len(printed.splitlines()), (got_printed,
                                                                            printed)
        for k, parameter in enumerate(program.params[:len(wrt)]):
            gradient = gradients[0][k] if aux else gradients[k]
            assert type(gradient) is np.ndarray and gradient.dtype == np.float32, \
                f"float32, {name}, {parameter}: {type(gradient)} {gradient.dtype}"
            np.testing.assert_allclose(gradient, reference[k], rtol=1e-3, atol=1e-3 * scale,
                                       err_msg=f"float32, {name}, {parameter}")


def _other_rows(program: OffPathProgram, module, derivatives: dict) -> None:
    """The same derivatives called again with an ``x`` of another number of rows: the
    shapes read as the code runs are this call's (the effects the plain function's, the
    gradient against central differences)."""
    rows = 5 - program.floats[0].shape[0]  # 3 rows for 2, 2 for 3
    x = np.random.default_rng(11).uniform(-1.2, 1.2, (rows, program.floats[0].shape[1]))
    other = dataclasses.replace(program, floats=[x, *program.floats[1:]])
    _, [(effects, printed)] = _calls(other, module, module.f, 1)

    def loss(*floats):
        with contextlib.redirect_stdout(io.StringIO()):
            out = module.f(*floats, *other.containers(module))
        return out[0] if other.has_aux else out

    numeric = ad.numeric_grad(loss, *other.arguments(), wrt=other.wrt)
    for name, derivative in derivatives.items():
        gradients, [(got, got_printed)] = _calls(other, module, derivative, 1)
        same(got, effects, f"{rows} rows, {name}: what a call left in the containers")
        assert got_printed == printed, (name, got_printed, printed)
        for k, parameter in enumerate(other.params[:len(other.wrt)]):
            gradient = gradients[0][k] if other.has_aux else gradients[k]
            np.testing.assert_allclose(gradient, numeric[k], rtol=1e-5, atol=1e-7,
                                       err_msg=f"{rows} rows, {name}, {parameter}")
