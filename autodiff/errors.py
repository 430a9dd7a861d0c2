"""Errors raised by autodiff.

Every error that concerns the user's code names the file, the line and the
construct, in the form ``model.py:14: 'try' statements are not supported``,
followed by a hint when there is one.

>>> str(UnsupportedSyntaxError("'try' statements are not supported",
...                            filename="model.py", lineno=14))
"model.py:14: 'try' statements are not supported"
"""

from __future__ import annotations

import functools
import os

from autodiff.line_names import line_name


class AutodiffError(Exception):
    """Base class of every error autodiff raises about the user's code or call."""

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        source_line: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        self.hint = hint
        self.path: str | None = None
        super().__init__(self._render())

    def on_path(self, path: str | None) -> "AutodiffError":
        """This error, showing the gradient's path through the refused construct (from
        the differentiated argument to the output: ``transforms/paths.py``)."""
        if path:
            self.path = path
            self.args = (self._render(),)
        return self

    def _render(self) -> str:
        where = ""
        if self.filename is not None:
            where = line_name(self.filename, self.lineno) + ": "
        text = where + self.message
        if self.source_line:
            text += f"\n    {self.source_line.strip()}"
        if self.path:
            text += f"\n  path: {self.path}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class SourceUnavailableError(AutodiffError):
    """The function's source code cannot be read (builtins, REPL, lambdas in eval)."""


class UnsupportedSyntaxError(AutodiffError):
    """A statement or expression outside the subset the compiler differentiates."""


class UnknownFunctionError(AutodiffError):
    """A call to something the compiler neither knows nor can differentiate."""


class NonDifferentiableError(AutodiffError):
    """A value flows into the gradient through an operation that has no gradient rule."""


class WrtError(AutodiffError):
    """``wrt`` names an argument the function does not have, or names one twice."""


class NonScalarOutputError(AutodiffError):
    """``grad`` was asked for the gradient of a function whose result is not a scalar."""


class ArgumentKindError(AutodiffError, TypeError):
    """A derivative was called with a value it cannot differentiate with respect to
    (a string, a bool, None, an object array)."""


class DerivativeError(AutodiffError):
    """An error raised while a derivative runs (a shape mismatch, a bad index),
    pointed at the user's line. It is also an instance of the original error's
    built-in class, so ``except ValueError`` catches a shape error as before; the
    original is its ``__cause__``."""


class UndefinedNameError(AutodiffError, NameError):
    """A name the differentiated code reads is bound nowhere (no local, global, closure
    cell or builtin) when the derivative is compiled. Python would raise ``NameError``
    where the code reads it; the derivative raises it while compiling, even where the
    derivative never needs the value (a misspelt ``W`` for ``w`` is never a zero
    gradient). It is also a ``NameError``, so ``except NameError`` catches it."""


class NonFiniteError(AutodiffError, FloatingPointError):
    """A derivative built with ``check_finite=True`` met NaN or infinity: the error
    names the first statement that produced one and the user's line it comes from."""


class CheckpointWarning(UserWarning):
    """A loop ``checkpoint=`` leaves taped whole: its steps cannot be run again (see
    ``autodiff/transforms/checkpoint.py``); the warning names the user's line."""


def raised_at_call(entry):
    """Decorator for a public entry point (``ad.grad``, the first call of a ``jit``
    derivative, ``ad.check_grad``, a Jacobian's call): an AutodiffError raised inside
    (but for one raised while a derivative ran) leaves without autodiff's own frames, so
    the traceback ends at the user's call with the message. ``AUTODIFF_DEBUG=1`` keeps
    the whole chain, for bug reports."""

    @functools.wraps(entry)
    def at_call(*args, **kwargs):
        try:
            return entry(*args, **kwargs)
        except AutodiffError as error:
            raise shortened(error)  # (AUTODIFF_DEBUG=1 shows autodiff's frames)

    return at_call


def shortened(error: AutodiffError) -> AutodiffError:
    """``error`` without autodiff's frames, for the ``raise`` of a frame that user code
    calls (``raise shortened(error)``: that frame is the one line of autodiff the
    traceback shows); with ``AUTODIFF_DEBUG=1``, as it is."""
    if os.environ.get("AUTODIFF_DEBUG") or isinstance(error, (DerivativeError, NonFiniteError)):
        return error  # (raised while a derivative ran: its frames show the generated line)
    return error.with_traceback(None)
