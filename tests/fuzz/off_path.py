"""Random programs whose ``f`` mixes the gradient path with Python that carries no gradient.

``tests/api/test_random_off_path.py`` differentiates them. ``f(x[, W][, state][, obj][,
log])`` takes a float matrix ``x`` (2 or 3 by 2 or 3), sometimes a square ``W``, and
the containers its effects write into: a dict ``state``, an object ``obj`` of the
module's class ``Recorder`` and a list ``log``. Its body is a sequence of *stages*,
each one hypothesis choice (so a failing program shrinks to fewer, simpler stages),
over the current value ``h`` (of ``x``'s shape throughout):

- on the gradient path, run-time shapes and types: ``N = x.shape[0]``,
  ``N, H = h.shape``, ``x.reshape(N, -1)``, ``.reshape(x.shape)``, ``np.zeros((N,
  H), dtype=x.dtype)`` written row by row in ``for i in range(N)``,
  ``np.finfo(x.dtype).eps`` added to a norm, ``h.ndim`` in an axis and a test, a
  dropout mask ``np.random.rand(*x.shape)`` after ``np.random.seed``;
- objects called: a module-level ``layer = Dense(W, b)`` whose ``__call__`` reads
  its weight arrays, a ``functools.partial`` made in ``f`` of a helper (at module
  level or defined in ``f``), a dict of lambdas (at module level or built in ``f``)
  selected by a constant string;
- generator helpers (``def doubled(xs): for v in xs: yield v * 2``, ``def
  scaled_rows(xs, scale)``) iterated in ``for`` loops, comprehensions and ``sum``;
- a cache: ``cache.append((r, z))`` in a loop over ``h``'s rows, ``f`` then
  returning ``(out, cache)`` (differentiated with ``has_aux=True``);
- a helper appending to the list ``f`` passes it (``log.append``) before computing
  the value ``f`` goes on with, and a value written into ``state`` then read back
  (``h = np.sin(state["h"] * 1.1)``: on the path);
- off the path, effects on what the caller passed, each a statement of its own:
  ``state["mean"] = np.mean(h)``, ``state["last"] = h``, ``state["count"] =
  state["count"] + 1``, ``state["count"] += 1``, ``obj.last = h``, ``obj.calls +=
  1``, a method writing ``self.seen`` and ``self.calls`` (``recorded =
  obj.record(h)``), ``log.append(float(np.sum(h)))``, ``log.append(h.shape)`` (also
  once per row, in a loop), a branch on data choosing what to write, ``print`` of a
  value computed (also once per row);
- off the path, a construct with no gradient rule (``REFUSED``: ``np.frexp(h)[0]``,
  ``np.trunc(h)``...), its result unused, printed, logged or written into ``state``.

Every off-path line is one the program runs the same without: ``stripped`` is the
program with them taken out (from the helpers too), whose gradient must be the
same. ``on_path_refusal`` puts one of ``REFUSED`` on the gradient path as well (in a
line of ``f``, or in a helper, a lambda of a dict or a generator that ``f`` calls on
``h``), for the test that autodiff refuses it there, naming its line.

Every value stays within a few units of 1 (``tanh``, ``sin``, a normalisation by the
root mean square), and nothing has a kink: no program is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

# Constructs autodiff has no gradient rule for (it refuses each on the gradient path,
# with the user's line; see autodiff/ops: ``np.floor`` and ``np.round`` are not here,
# their gradient is zero).
REFUSED = ["np.frexp({h})[0]", "np.modf({h})[0]", "np.trunc({h})", "np.spacing({h})",
           "np.nextafter({h}, 2.0)"]
# The forms these programs found refused where they should not have been (forward mode
# over a construct off the path, ``state.get``, a method called for its effect, a helper
# writing into the caller's dict or appending to its list after a loop did, a refused
# value written out and another read back, a generator yielding tuples,
# ``(1, *x.shape)``) are accepted now, each tested on its own in
# tests/frontend/test_off_path_forms.py, tests/frontend/test_tuples_in_run_time_lists.py
# and tests/api/test_call_signatures.py.
# Stages on the gradient path and off it, and how often each is drawn.
ON_PATH = ["reshape", "zeros", "eps", "ndim", "dropout", "layer", "partial", "lambdas",
           "generator", "cache", "helper", "readback"]
OFF_PATH = ["state", "state", "object", "object", "log", "log", "print", "refused"]
GRID = np.array([v for v in np.arange(-24, 25) * 0.05 + 0.0137 if abs(v) > 0.04])


@dataclass
class OffPathProgram:
    """A generated module, the float arguments of its ``f``, and what else ``f`` takes."""

    source: str
    stripped: str  # the source without its off-path lines
    params: list[str]  # f's parameters: the float ones first, then the containers
    floats: list  # the float arguments' values
    state: dict | None = None  # the dict passed as ``state`` (copied for each call)
    recorder: bool = False  # f takes ``obj``, a fresh ``Recorder()`` each call
    log: bool = False  # f takes ``log``, a fresh empty list each call
    has_aux: bool = False  # f returns (out, cache)
    forward: bool = True  # also checked in forward mode
    second_order: bool = False  # also checked by ad.hvp (some programs with ``forward``)
    refused: str = ""  # the line holding on_path_refusal's construct (stripped)
    refusal_call: str = ""  # the line of f that puts it on the gradient path (stripped)

    @property
    def wrt(self) -> tuple:
        return tuple(range(len(self.floats)))

    def containers(self, module) -> list:
        """Fresh containers for one call of ``f``: ``state``, ``obj``, ``log`` as it takes them."""
        made = []
        if self.state is not None:
            made.append(dict(self.state))
        if self.recorder:
            made.append(module.Recorder())
        if self.log:
            made.append([])
        return made

    def arguments(self) -> list:
        return [a.copy() for a in self.floats]

    def __repr__(self) -> str:  # hypothesis prints this for a failing example
        values = [f"{p} = np.array({a.tolist()!r})" for p, a in zip(self.params, self.floats)]
        return "\n".join(["", self.source, "# at", *values,
                          f"# state = {self.state!r}" if self.state is not None else "",
                          f"# has_aux={self.has_aux}, forward={self.forward}, "
                          f"second_order={self.second_order}", ""])

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))


@dataclass
class _Body:
    """What the stages write: f's lines, each marked off the path or not, and what the
    module needs."""

    lines: list = field(default_factory=list)  # (text, off_path)
    module: dict = field(default_factory=dict)  # name: lines at module level, in order
    stripped: dict = field(default_factory=dict)  # name: those lines without off-path ones
    totals: list = field(default_factory=list)  # scalars f adds to its output
    # what f takes ("state", "obj", "log") and needs ("functools", "cache"), and what
    # later stages must know ("refused", "readback", "log in a loop"...)
    uses: set = field(default_factory=set)
    taken: set = field(default_factory=set)
    indent: int = 1

    def emit(self, text: str, off_path: bool = False) -> None:
        for line in text.split("\n"):
            self.lines.append(("    " * self.indent + line, off_path))

    def name(self, *choices: str) -> str:
        """The first of ``choices`` not taken yet (numbered once all are)."""
        for choice in choices:
            if choice not in self.taken:
                self.taken.add(choice)
                return choice
        count = 2
        while f"{choices[0]}{count}" in self.taken:
            count += 1
        self.taken.add(f"{choices[0]}{count}")
        return f"{choices[0]}{count}"


_DENSE = """class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, h):
        return np.tanh(h @ self.W + self.b)"""
_RECORDER = """class Recorder:
    def __init__(self):
        self.calls = 0

    def record(self, h):
        self.seen = h
        self.calls += 1"""
_ACTS = ('{{"tanh": lambda v: np.tanh(v), "sin": lambda v: np.sin(1.5 * v), '
         '"soft": lambda v: np.log(1.0 + np.exp(v)) - 0.5}}')
_GENERATORS = {  # name: (its text, how f calls it)
    "doubled": ("def doubled(xs):\n    for v in xs:\n        yield v * 2", "doubled({h})"),
    "scaled_rows": ("def scaled_rows(xs, scale):\n    for v in xs:\n        yield v * scale",
                    "scaled_rows({h}, 0.5)"),
}


def _array(rng: np.random.Generator, shape: tuple) -> str:
    return f"np.array({np.round(rng.uniform(-0.8, 0.8, shape), 2).tolist()!r})"


def _on_path(draw, stage: str, body: _Body, rng: np.random.Generator, n: int) -> None:
    """One stage on the gradient path: ``h`` becomes a new value of its shape."""
    pick = (lambda options: draw(st.sampled_from(options)))
    if stage == "reshape":
        form = pick(["N", "NH", "flat"])
        if form == "N":
            body.emit(f"N = {pick(['h', 'x'])}.shape[0]")
            body.emit(pick(["h = np.tanh(h.reshape(N, -1) * 0.9)",
                            "h = np.tanh(h.reshape(N, -1) * 0.9 + 0.1 * x.reshape(N, -1))"]))
        elif form == "NH":
            body.emit("N, H = h.shape")
            body.emit("h = np.sin(h.reshape(N * H) * 0.8).reshape(N, H)")
        else:
            flat = body.name("flat")
            body.emit(f"{flat} = h.reshape(-1)")
            body.emit(f"h = np.sin({flat} * 1.2).reshape(x.shape)")
    elif stage == "zeros":
        buf = body.name("buf", "out")
        body.emit(pick(["N, H = h.shape", "N = x.shape[0]\nH = x.shape[1]"]))
        body.emit(f"{buf} = np.zeros((N, H), dtype={pick(['x', 'h'])}.dtype)")
        if draw(st.booleans()):
            body.emit(f"for i in range(N):\n    {buf}[i] = np.sin(h[i]) * (i + 1) * 0.5")
        else:
            body.emit(f"{buf}[0] = np.tanh(h[0])\n{buf}[-1] += 0.5 * h[-1]")
        body.emit(f"h = np.tanh(h + {buf})")
    elif stage == "eps":
        if draw(st.booleans()):
            body.emit(f"h = h / (np.sqrt(np.mean(h ** 2)) + np.finfo({pick(['x', 'h'])}"
                      ".dtype).eps)")
        else:
            eps = body.name("eps", "tiny")
            body.emit(f"{eps} = np.finfo(h.dtype).eps")
            body.emit(f"h = np.log(h ** 2 + 0.5 + {eps})")
    elif stage == "ndim":
        if draw(st.booleans()):
            body.emit("h = np.tanh(h * (1.0 / h.ndim) + np.mean(h, axis=h.ndim - 1, "
                      "keepdims=True))")
        else:
            body.emit(f"if {pick(['x', 'h'])}.ndim == 2:\n    h = np.sin(h)\nelse:\n"
                      "    h = np.tanh(h)")
    elif stage == "dropout":
        mask = body.name("mask", "keep")
        body.emit(f"np.random.seed({draw(st.integers(0, 9))})")
        body.emit(f"{mask} = np.random.rand(*{pick(['h', 'x'])}.shape) < 0.5")
        body.emit(f"h = h * (0.5 + {mask})")
    elif stage == "layer":
        name = body.name("layer", "dense")
        body.module["Dense"] = [_DENSE]
        body.module[name] = [f"{name} = Dense({_array(rng, (n, n))}, {_array(rng, (n,))})"]
        body.emit(f"h = {name}(h)")
    elif stage == "partial":
        body.uses.add("functools")
        weight = pick(["0.3", "0.7", "-0.4"])
        if "blend" not in body.taken:  # the helper: defined in f or at module level
            body.taken.add("blend")
            helper = "def blend(h, weight):\n    return np.sin(h) * weight + 0.5 * h"
            if draw(st.booleans()):
                body.emit(helper)
            else:
                body.module["blend"] = [helper]
        partial = body.name("mix", "half")
        if draw(st.booleans()):  # the weight bound, or h
            body.emit(f"{partial} = functools.partial(blend, weight={weight})")
            body.emit(f"h = {partial}(h)")
        else:
            body.emit(f"{partial} = functools.partial(blend, h)")
            body.emit(f"h = {partial}({weight})")
    elif stage == "lambdas":
        key = pick(["tanh", "sin", "soft"])
        if draw(st.booleans()):
            body.module["ACTS"] = ["ACTS = " + _ACTS.format()]
            body.emit(f'h = ACTS["{key}"](h)')
        else:
            acts = body.name("acts")
            body.emit(f"{acts} = " + _ACTS.format())
            body.emit(f'h = {acts}["{key}"](h)')
    elif stage == "generator":
        helper = pick(sorted(_GENERATORS))
        text, call = _GENERATORS[helper]
        body.module[helper] = [text]
        form = pick(["stack", "loop", "sum"])
        if form == "stack":
            body.emit(f"h = np.stack([np.sin(v) for v in {call.format(h='h')}])")
        elif form == "loop":
            rows = body.name("rows", "parts")
            body.emit(f"{rows} = []\nfor i, v in enumerate({call.format(h='h')}):\n"
                      f"    {rows}.append(np.tanh(v) * (1.0 - 0.2 * i))\nh = np.stack({rows})")
        else:
            total = body.name("total", "extra")
            body.emit(f"{total} = sum(np.sum(np.sin(v)) for v in {call.format(h='h')})")
            body.totals.append(total)
    elif stage == "helper":  # a helper appending to the list f passes it, then computing
        # (a helper writing into the dict f passes it is refused: see HELPER_WRITES above)
        body.uses.add("log")
        body.module["step"] = ["def step(h, log):\n    log.append(float(np.sum(h)))\n"
                               "    return np.tanh(h)"]
        body.stripped["step"] = ["def step(h, log):\n    return np.tanh(h)"]
        body.emit("h = step(h, log)")
    elif stage == "readback":  # what f wrote into state, read back: on the path
        body.uses.update(("state", "readback"))
        body.emit('state["h"] = h\nh = np.sin(state["h"] * 1.1)')
    elif stage == "cache":
        body.uses.add("cache")
        rows = body.name("rows", "parts")
        if draw(st.booleans()):
            body.emit(f"{rows} = []\nfor r in h:\n    z = np.tanh(r * 1.1)\n"
                      f"    cache.append((r, z))\n    {rows}.append(z)\nh = np.stack({rows})")
        else:
            body.emit(f"{rows} = []\nfor i in range(h.shape[0]):\n    z = np.sin(h[i] + 0.1 * i)\n"
                      f"    cache.append((i, z))\n    {rows}.append(z)\nh = np.stack({rows})")


def _off_path(draw, stage: str, body: _Body, rng: np.random.Generator) -> None:
    """One off-path line: what the caller passed is written, something printed, or a
    function without a gradient rule called for a result the output does not read (which
    of ``REFUSED``, and where its result goes: ``rng``'s choices, for an even spread);
    ``h`` does not change."""
    pick = (lambda options: draw(st.sampled_from(options)))
    if stage == "state":
        body.uses.add("state")
        body.emit(pick(['state["mean"] = np.mean(h)', 'state["last"] = h',
                        'state["count"] = state["count"] + 1', 'state["count"] += 1',
                        'state["total"] = state["total"] + float(np.sum(h))',
                        'state["shape"] = h.shape',
                        'if float(np.sum(h)) > 0.0:\n    state["positive"] = True\nelse:\n'
                        '    state["positive"] = False']), off_path=True)
    elif stage == "object":
        body.uses.add("obj")
        body.module["Recorder"] = [_RECORDER]
        # (a method called for its effect alone, 'obj.record(h)', is refused: see
        # tests/api/test_random_off_path.py)
        body.emit(pick(["obj.last = h", "obj.calls += 1", "obj.calls = obj.calls + 1",
                        "obj.norm = float(np.sqrt(np.sum(h ** 2)))",
                        f"{body.name('recorded', 'noted')} = obj.record(h)"]), off_path=True)
    elif stage == "log":
        body.uses.add("log")
        body.emit(pick(["log.append(float(np.sum(h)))", "log.append(h.shape)",
                        "log.append(np.max(h))", "log.append((h.ndim, float(np.mean(h))))",
                        "for r in h:\n    log.append(float(np.sum(r ** 2)))"]), off_path=True)
        if body.lines[-1][0].strip().startswith("log.append(float(np.sum(r"):
            body.uses.add("log in a loop")
    elif stage == "print":
        body.emit(pick(['print("step", round(float(np.sum(h ** 2)), 6))',
                        'print(f"mean {np.mean(h):.6f}")',
                        'print("shape", h.shape, "sum", round(float(np.sum(h)), 6))',
                        'for r in h:\n    print("row", round(float(np.sum(r)), 6))']),
                  off_path=True)
    elif stage == "refused":
        construct = REFUSED[rng.integers(len(REFUSED))].format(h="h")
        forms = ["unused", "print", "log", "state"]
        form = forms[rng.integers(len(forms))]
        if form == "unused":
            body.emit(f"{body.name('unused', 'ignored')} = {construct}", off_path=True)
        elif form == "print":
            body.emit(f'print("parts", round(float(np.sum({construct})), 6))', off_path=True)
        elif form == "state":
            body.uses.add("state")
            body.emit(f'state["parts"] = {construct}', off_path=True)
            body.uses.add("refused into state")
        else:
            body.uses.add("log")
            body.emit(f"log.append(float(np.sum({construct})))", off_path=True)
        body.uses.add("refused")


def _refusal(draw, body: _Body, rng: np.random.Generator) -> tuple[str, str]:
    """One of ``REFUSED`` on the gradient path: in a line of ``f``, or in a helper, a lambda
    of a dict or a generator ``f`` calls on ``h``. Returns the line that holds it and the
    line of ``f`` that puts it on the path."""
    construct = REFUSED[rng.integers(len(REFUSED))]
    where = draw(st.sampled_from(["f", "helper", "lambda", "generator"]))
    if where == "f":
        line = draw(st.sampled_from(["h = h + 0.5 * {c}", "h = np.sin({c}) * h",
                                     "h = np.tanh(h - {c})"])).format(c=construct.format(h="h"))
        body.emit(line)
        return line, line
    if where == "helper":
        line = f"return h + 0.5 * {construct.format(h='h')}"
        body.module["rough"] = [f"def rough(h):\n    {line}"]
        call = "h = rough(h)"
    elif where == "lambda":
        line = f'ROUGH = {{"rough": lambda v: v + 0.5 * {construct.format(h="v")}}}'
        body.module["ROUGH"] = [line]
        call = 'h = ROUGH["rough"](h)'
    else:
        line = f"yield np.tanh({construct.format(h='v')}) * v"
        body.module["rough_rows"] = [f"def rough_rows(xs):\n    for v in xs:\n        {line}"]
        call = "h = np.stack(list(rough_rows(h)))"
    body.emit(call)
    return line, call


@st.composite
def off_path_programs(draw, on_path_refusal: bool = False) -> OffPathProgram:
    """A program with off-path Python among its stages; with ``on_path_refusal``, one with a
    construct autodiff has no gradient rule for on the gradient path too (``refused``)."""
    m, n = draw(st.sampled_from([2, 3])), draw(st.sampled_from([2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    weighted = draw(st.booleans())
    body = _Body(taken={"x", "W", "h", "state", "obj", "log", "cache", "N", "H", "i", "r",
                        "v", "z", "out_value"})
    body.emit("h = np.tanh(x @ W)" if weighted else
              draw(st.sampled_from(["h = np.tanh(x)", "h = np.sin(x) * 0.9"])))
    stages = draw(st.lists(st.sampled_from(ON_PATH + OFF_PATH), min_size=2, max_size=8))
    if not any(s in OFF_PATH for s in stages):
        stages.append(draw(st.sampled_from(OFF_PATH)))
    refusal_at = draw(st.integers(0, len(stages))) if on_path_refusal else None
    refused = call = ""
    for index, stage in enumerate(stages):
        if index == refusal_at:
            refused, call = _refusal(draw, body, rng)
        if stage == "cache" and "cache" in body.uses or \
                stage == "helper" and "log in a loop" in body.uses or \
                stage == "readback" and "refused into state" in body.uses:  # (see above)
            continue
        if stage in OFF_PATH:
            _off_path(draw, stage, body, rng)
        else:
            _on_path(draw, stage, body, rng, n)
    if refusal_at == len(stages):
        refused, call = _refusal(draw, body, rng)
    out = draw(st.sampled_from(["np.sum(np.sin(h) * h)", "np.sum(h ** 2) + np.sum(h * x)",
                                "np.mean(np.exp(0.5 * h))"]))
    out = " + ".join([out, *body.totals])
    if "cache" in body.uses:
        body.lines.insert(0, ("    cache = []", False))
        body.emit(f"out_value = {out}\nreturn out_value, cache")
    else:
        body.emit(f"return {out}")
    params = ["x", "W"] if weighted else ["x"]
    params += [p for p in ("state", "obj", "log") if p in body.uses]
    header = ["import functools", ""] if "functools" in body.uses else []
    header += ["import numpy as np", "", ""]
    signature = f"def f({', '.join(params)}):"

    def text(keep_off_path: bool) -> str:
        module = [line for name, lines in body.module.items()
                  for line in [*(lines if keep_off_path else body.stripped.get(name, lines)),
                               "", ""]]
        lines = [line for line, off in body.lines if keep_off_path or not off]
        return "\n".join([*header, *module, signature, *lines, ""])

    values = rng.choice(GRID, size=m * n + (n * n if weighted else 0), replace=False)
    values = values + rng.uniform(-0.003, 0.003, size=values.shape)
    floats = [values[:m * n].reshape(m, n)] + ([values[m * n:].reshape(n, n)] if weighted
                                               else [])
    state = None
    if "state" in body.uses:
        state = draw(st.sampled_from([{"count": 0, "total": 0.0},
                                      {"count": 2, "total": 0.25, "mean": 0.0}]))
    return OffPathProgram(text(True), text(False), params, floats, state,
                          "obj" in body.uses, "log" in body.uses, "cache" in body.uses,
                          forward=True,
                          second_order=draw(st.integers(0, 2)) == 0 and "cache" not in body.uses,
                          refused=refused, refusal_call=call)


def line_number(source: str, line: str) -> int:
    """The line of ``source`` (from 1) that is ``line``, stripped of its indent."""
    numbers = [i + 1 for i, text in enumerate(source.splitlines()) if text.strip() == line]
    assert numbers, line
    return numbers[0]

