"""Errors met while a derivative runs, pointed back at the user's source line.

Generated code marks each block with a comment naming the user's line it
comes from (``# grad of line 5: w = z @ y``). Codegen records which location
each such comment stands for; compiling registers that table under the
generated file's name (in memory, like the text itself in ``linecache``) and
forgets both when the derivative is garbage collected.

Two runtime helpers read the table:

- ``at_user_line(error)``, called by the handler around every generated body,
  turns a ``ValueError``, ``TypeError``, ``IndexError``, ... raised inside the
  derivative into a :class:`~autodiff.errors.DerivativeError` naming the
  user's file, line and source, with the generated statement and the shapes
  of the values it read;
- ``check_finite(value)``, written after every statement when a derivative is
  built with ``check_finite=True``, raises a
  :class:`~autodiff.errors.NonFiniteError` at the first NaN or infinity,
  naming the statement that produced it (like anomaly detection).
"""

from __future__ import annotations

import ast
import builtins
import itertools
import linecache
import math
import os
import re
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass

import numpy as np

from autodiff.errors import ArgumentKindError, AutodiffError, DerivativeError, NonFiniteError
from autodiff.graph.ir import Location
from autodiff.line_names import line_name
from autodiff.ops import runtime

PHASES = {
    "forward": "while computing this line",
    "backward": "while computing the gradient of this line",
    "tangent": "while computing the tangent of this line",
}


@dataclass
class Origins:
    """Where the lines of one compiled derivative come from."""

    name: str  # the generated function's name
    first_line: int  # the line of its ``def`` in the compiled text
    marks: dict[int, tuple[Location | None, str]]  # line of a comment -> (location, phase)
    where: tuple[str, int | None, str]  # the user's ``def``: file, line, text

    def mark(self, line: int) -> tuple[Location | None, str] | None:
        """The location of the comment at or above ``line`` (None above the first)."""
        above = [n for n in self.marks if n <= line]
        return self.marks[max(above)] if above else None


_registry: dict[str, Origins] = {}
_lock = threading.Lock()


def register(function, filename: str, origins: Origins | None) -> None:
    """Keep ``origins`` and the text of ``filename`` (in ``linecache``) while ``function``,
    compiled from it, lives."""
    if origins is not None:
        with _lock:
            _registry[filename] = origins
    weakref.finalize(function, _forget, filename)


def _forget(filename: str) -> None:
    with _lock:
        _registry.pop(filename, None)
    linecache.cache.pop(filename, None)


def generated_files() -> set[str]:
    """The names of the generated files alive now (for tests of the bookkeeping)."""
    with _lock:
        return set(_registry)


# ----- errors raised inside generated code -----


def at_user_line(error: BaseException) -> BaseException:
    """``error``, or a DerivativeError of the same built-in kind at the user's line."""
    found = _innermost_generated_frame(error)
    if found is None:
        return error
    origins, frame, line = found
    loc, phase = origins.mark(line) or (None, "forward")
    fields = _location_fields(loc, origins)
    if isinstance(error, AutodiffError):  # a runtime helper's: give it the user's line
        return error if error.filename is not None else _located_copy(
            error, fields, _statement_at(frame.f_code.co_filename, line))
    structured = _structured_argument(frame)
    if structured is not None:  # it got this far by chance: the error is about the argument
        name, value = structured
        refused = runtime.not_differentiable(value)
        return _located_copy(type(refused)(refused.message.replace("an argument", f"'{name}'", 1),
                                           hint=refused.hint), _location_fields(None, origins), "")
    kind = _builtin_kind(type(error))
    if kind is None:  # a class of the user's or a library's: the error itself, noted
        _note_user_line(error, fields)
        return error
    doing = PHASES.get(phase, PHASES["forward"]) if loc is not None else (
        "while giving the gradients the kinds and shapes of the arguments")
    located = _located_error(error, kind, f"{type(error).__name__} {doing}: {error}", fields,
                             _generated_statement_hint(origins, frame, line))
    located.__cause__ = error
    return located


def _located_error(error: BaseException, kind: type, message: str, fields: dict,
                   hint: str) -> DerivativeError:
    """A DerivativeError that is also an instance of ``error``'s own class (NumPy's
    ``LinAlgError`` stays one, for the caller's ``except``), or else of its built-in
    ``kind``."""
    for cls in dict.fromkeys((type(error), kind)):
        try:
            return _derivative_error_class(cls)(message, **fields, hint=hint)
        except TypeError:  # a class whose constructor takes other arguments
            continue
    return DerivativeError(message, **fields, hint=hint)


def _note_user_line(error: BaseException, fields: dict) -> None:
    """Name the user's line in the notes of an error whose class is not Python's or
    NumPy's (shown under its traceback; Python 3.11 and later)."""
    add_note = getattr(error, "add_note", None)
    if add_note is None or fields.get("filename") is None:
        return
    note = (f"raised at {line_name(fields['filename'], fields['lineno'])}: "
            f"{(fields.get('source_line') or '').strip()}")
    if note not in getattr(error, "__notes__", ()):
        add_note(note)


_GRADIENT_OF = re.compile(r"as_gradient_of\(\w+, (\w+)")


def _structured_argument(frame) -> tuple[str, object] | None:
    """The first differentiated argument that is a list, tuple or dict, if any (the
    arguments gradients are returned for are those ``as_gradient_of`` converts)."""
    text = "".join(linecache.getlines(frame.f_code.co_filename))
    for name in dict.fromkeys(_GRADIENT_OF.findall(text)):
        value = frame.f_locals.get(name)
        if isinstance(value, runtime.STRUCTURES):
            return name, value
    return None


def _located_copy(error: AutodiffError, fields: dict, statement: str) -> AutodiffError:
    """``error`` again, at the user's line; an argument of the wrong kind by its name."""
    message = error.message
    argument = _GRADIENT_OF.search(statement)
    if isinstance(error, ArgumentKindError) and argument:
        message = message.replace("an argument", f"'{argument.group(1)}'", 1)
    try:
        located = type(error)(message, **fields, hint=error.hint)
    except TypeError:  # a subclass taking other arguments: leave it as it is
        return error
    located.__cause__ = error.__cause__
    located.__suppress_context__ = True
    return located


def _builtin_kind(kind: type) -> type | None:
    """The nearest built-in exception class of ``kind`` (NumPy's AxisError: ValueError),
    when the error comes from Python or NumPy rather than from the user's own code."""
    if not kind.__module__.split(".")[0] in ("builtins", "numpy"):
        return None
    return next((k for k in kind.__mro__ if k.__module__ == "builtins"
                 and issubclass(k, Exception) and k is not Exception), None)


_classes: dict[type, type] = {}


def _derivative_error_class(kind: type) -> type:
    """A DerivativeError that is also a ``kind`` (``except ValueError`` still catches it)."""
    cls = _classes.get(kind)
    if cls is None:
        try:
            cls = type("DerivativeError", (DerivativeError, kind),
                       {"__module__": DerivativeError.__module__,
                        "__qualname__": DerivativeError.__qualname__})
        except TypeError:  # a built-in whose layout cannot be combined
            cls = DerivativeError
        _classes[kind] = cls
    return cls


def warn_at_user_line(message, category=None, stacklevel=1, source=None) -> None:
    """``warnings.warn``, called by a derivative where the user's code calls it. The
    warning names the user's line for ``stacklevel=1``; for 2 and more, the frames
    that called the derivative, the generated ones and autodiff's passed over, as the
    user's function would have been called. It is registered (shown once, by default)
    in the module the warning names."""
    frame = sys._getframe(1)
    origins = _registry.get(frame.f_code.co_filename)
    mark = origins.mark(frame.f_lineno) if origins is not None else None
    if isinstance(message, Warning):
        category = type(message)
    category = category or UserWarning
    if stacklevel > 1 or mark is None or mark[0] is None:
        frame = frame.f_back
        while frame is not None and _ours(frame.f_code.co_filename):
            frame = frame.f_back
        for _ in range(max(stacklevel, 2) - 2):
            frame = frame.f_back if frame is not None else None
        if frame is None:
            warnings.warn(message, category, stacklevel=2)
            return
        filename, lineno, module_globals = frame.f_code.co_filename, frame.f_lineno, frame.f_globals
    else:
        loc = mark[0]
        filename, lineno, module_globals = loc.filename, loc.lineno, frame.f_globals
    # (warn_explicit reads the line through module_globals' loader, which must then be
    # the file's: a derivative inlined into another module's has that module's globals)
    own = module_globals.get("__file__") is not None and os.path.abspath(
        module_globals["__file__"]) == os.path.abspath(filename)
    warnings.warn_explicit(message, category, filename, lineno,
                           module=module_globals.get("__name__", "__main__"),
                           registry=module_globals.setdefault("__warningregistry__", {}),
                           module_globals=module_globals if own else None, source=source)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ours(filename: str) -> bool:
    """Whether code of this file is generated by autodiff or is autodiff's own."""
    return filename.startswith("<autodiff") or os.path.abspath(filename).startswith(_PACKAGE)


def _innermost_generated_frame(error: BaseException):
    found = None
    tb = error.__traceback__
    while tb is not None:
        origins = _registry.get(tb.tb_frame.f_code.co_filename)
        if origins is not None:
            found = (origins, tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _location_fields(loc: Location | None, origins: Origins) -> dict:
    if loc is None:
        filename, lineno, text = origins.where
        return {"filename": filename, "lineno": lineno, "source_line": text}
    return {"filename": loc.filename, "lineno": loc.lineno, "source_line": loc.text}


def _generated_statement_hint(origins: Origins, frame, line: int) -> str:
    """``generated line 12 of f_grad: dz = ...; with dw: float64 array (3, 2), ...``."""
    statement = _statement_at(frame.f_code.co_filename, line)
    number = line - origins.first_line + 1
    text = f"generated line {number} of {origins.name}: {statement}"
    described = _describe_names(statement, frame.f_locals)
    return text + ("; " + ", ".join(described) if described else "")


def _statement_at(filename: str, line: int) -> str:
    return linecache.getline(filename, line).strip()


_NAME = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)\b(?!\s*=[^=])")


def _describe_names(statement: str, variables: dict) -> list[str]:
    """``name: <kind, shape>`` for each local the statement reads."""
    seen, described = set(), []
    for name in _NAME.findall(statement):
        if (name in seen or name not in variables or hasattr(builtins, name)
                or callable(variables[name]) or isinstance(variables[name], type(np))):
            continue
        seen.add(name)
        described.append(f"{name}: {describe(variables[name])}")
    return described


def describe(value) -> str:
    """A short description of a value for an error message: kind, dtype and shape."""
    if isinstance(value, np.ndarray):
        text = f"{value.dtype} array of shape {value.shape}"
        if value.size and value.dtype.kind in "fiu":
            finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
            low, high = (finite.min(), finite.max()) if finite.size else (np.nan, np.nan)
            text += f" in [{low:.4g}, {high:.4g}]" + (
                "" if finite.size == value.size else " and non-finite values")
        return text
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__} {value}"
    if isinstance(value, (bool, int, float, complex)):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


# ----- check_finite=True -----


def check_finite(value) -> None:
    """Raise NonFiniteError if ``value`` holds NaN or infinity (written after each
    statement of a derivative built with ``check_finite=True``)."""
    if type(value) is float:
        if math.isfinite(value):
            return
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "fc" or np.isfinite(value).all():
            return
    elif isinstance(value, np.inexact):
        if np.isfinite(value):
            return
    else:
        return
    raise _non_finite(value, sys._getframe(1))


_CHECK = re.compile(r"check_finite\((\w+)\)")


def _non_finite(value, frame) -> NonFiniteError:
    filename, line = frame.f_code.co_filename, frame.f_lineno
    origins = _registry.get(filename)
    called = _CHECK.search(_statement_at(filename, line))
    name = called.group(1) if called else "a value"
    what = _what_is_wrong(value)
    if origins is None:  # not ours to explain: say what we know
        return NonFiniteError(f"'{name}' holds {what}")
    mark = origins.mark(line)
    if mark is None:  # the checks of the arguments come before the first comment
        filename, lineno, text = origins.where
        return NonFiniteError(
            f"argument '{name}' holds {what} (check_finite=True)", filename=filename,
            lineno=lineno, source_line=text,
            hint="the value came in from the caller: nothing in the derivative produced it")
    loc, phase = mark
    start, statement = _statement_before(filename, line)
    doing = {"backward": "the gradient of this line", "tangent": "the tangent of this line"}.get(
        phase, "this line")
    described = _describe_names(statement.partition("=")[2] or statement, frame.f_locals)
    hint = (f"generated line {start - origins.first_line + 1} of {origins.name}: "
            f"{statement}" + ("; " + ", ".join(described) if described else ""))
    return NonFiniteError(
        f"{doing} produced {what} in '{name}': the derivative's first non-finite value "
        "(check_finite=True)", **_location_fields(loc, origins), hint=hint)


def _what_is_wrong(value) -> str:
    """``nan``, ``-inf``, or ``nan (3 of 4 values) and inf (1 of 4 values)``."""
    values = np.asarray(value)
    parts = []
    counts = (("nan", np.isnan(values).sum()), ("inf", np.isposinf(values).sum()),
              ("-inf", np.isneginf(values).sum()))
    for kind, count in counts:
        if count:
            parts.append(kind if values.ndim == 0 else f"{kind} ({count} of {values.size} values)")
    return " and ".join(parts)


def _statement_before(filename: str, line: int) -> tuple[int, str]:
    """The line and text of the statement just before the one at ``line``: the one a
    ``check_finite`` call checks (astor may have wrapped it over several lines)."""
    lines = linecache.getlines(filename)
    for node in ast.walk(ast.parse("".join(lines))):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for previous, statement in itertools.pairwise(block):
                if statement.lineno == line:
                    text = " ".join(t.strip() for t in
                                    lines[previous.lineno - 1:previous.end_lineno])
                    return previous.lineno, text
    return line, _statement_at(filename, line)
