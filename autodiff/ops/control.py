"""Ops that carry no arithmetic: reading a variable of the user's module or closure."""

from __future__ import annotations

from autodiff.ops.registry import defop


@defop("variable", lambda named: named["name"].value, nondiff_output=True, floating=None,
       fresh=False)
def variable(name, scope): ...


# A global or closure variable is read where it is used, at call time.
variable.inline = True
