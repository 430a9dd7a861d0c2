"""The ops of ``raise`` and ``try``: statements of the forward sweep, never differentiated.

- ``raise``: a new exception (``raise ValueError(f"...")``), one held
  (``raise error``), or the one being handled (``raise``), with ``from cause``;
- ``caught``: the exception a handler is handling, which codegen binds with
  ``except E as e:`` (it reaches only statements run for their effect);
- ``try_else``: where the part of a ``try``'s body its handlers guard ends and its
  ``else:`` begins (see :class:`autodiff.graph.nodes.Region`);
- ``tape_length`` and ``tape_truncate``: a handler takes back what the guarded part
  pushed onto a tape before it raised, so that the backward sweep pops what the
  paths that completed pushed.

>>> raise_op("new", 1, ("code",), True).kernel
'raise function(arg0, code=kw_code) from cause'
"""

from __future__ import annotations

import functools

from autodiff.graph import nodes
from autodiff.ops.registry import Op, stub_taking
from autodiff.ops.shape_rules import scalar_result

_RAISES = "a raise statement leaves the function: it passes no gradient"


def _statement(op: Op, why: str) -> Op:
    op.opaque = op.effect = op.statement = True
    op.outside_tables = why
    return op


@functools.cache
def raise_op(form: str, positional: int = 0, keywords: tuple[str, ...] = (),
             cause: bool = False) -> Op:
    """``raise`` as a statement op. ``form`` is ``"new"`` (``raise function(arg0, ...)``,
    an exception class called with ``positional`` arguments and ``keywords``),
    ``"object"`` (``raise exception``) or ``"again"`` (a bare ``raise``, inside a
    handler); ``cause`` adds ``from cause``."""
    if form == "again":
        params, text = [], "raise"
    elif form == "object":
        params, text = ["exception"], "raise exception"
    else:
        args = [f"arg{i}" for i in range(positional)]
        kwargs = [f"kw_{name}" for name in keywords]
        params = ["function", *args, *kwargs]
        words = [*args, *(f"{name}={kw}" for name, kw in zip(keywords, kwargs))]
        text = f"raise function({', '.join(words)})"
    if cause:
        params, text = [*params, "cause"], text + " from cause"
    op = Op("raise", stub_taking(params), text, nondiff_output=True, no_gradient=_RAISES,
            fresh=False, floating=None)
    op.raises = True
    return _statement(op, "written by the frontend for a raise statement")


CAUGHT = Op(nodes.CAUGHT, stub_taking([]), "caught()", nondiff_output=True, fresh=False, floating=None,
            no_gradient="the exception a handler caught is read by statements run for "
            "their effect alone")
CAUGHT.opaque = CAUGHT.distinct = True  # (each handler catches its own)
CAUGHT.outside_tables = "written by the frontend for 'except E as e:'"

TRY_ELSE = _statement(Op(nodes.TRY_ELSE, stub_taking([]), "pass", nondiff_output=True, floating=None,
                         no_gradient="a mark between a try's body and its else: block"),
                      "written by the frontend for a try statement's else: block")

_TAPE = "a tape's length, which a handler cuts it back to"

TAPE_LENGTH = Op("tape_length", stub_taking(["tape"]), "len(tape)", nondiff_output=True,
                 fresh=False, floating=None, shape=scalar_result, no_gradient=_TAPE,
                 jvp="lockstep", per_call=True, batching="container")
TAPE_LENGTH.opaque = TAPE_LENGTH.distinct = True  # (the length at its place, never moved)
TAPE_LENGTH.outside_tables = "written by reverse mode around a try inside a loop"

TAPE_TRUNCATE = _statement(Op("tape_truncate", stub_taking(["tape", "length"]), "del tape[length:]",
                              nondiff_output=True, fresh=False, floating=None,
                              no_gradient=_TAPE, jvp="lockstep"),
                           "written by reverse mode around a try inside a loop")


__all__ = ["CAUGHT", "TAPE_LENGTH", "TAPE_TRUNCATE", "TRY_ELSE", "raise_op"]
