"""``wrt=``: which arguments a derivative is taken with respect to."""

from __future__ import annotations

from collections.abc import Sequence

from autodiff.errors import WrtError
from autodiff.graph.ir import Location

Wrt = int | str | Sequence[int | str]


def resolve_wrt(wrt: Wrt, names: list[str], function: str,
                where: Location | None = None) -> tuple[list[int], bool]:
    """The positions among ``names`` (the arguments of ``function``) that ``wrt`` names,
    and whether it names several (a tuple or list, even of one); errors point at ``where``.

    >>> resolve_wrt(("y", 0), ["x", "y"], "f")
    ([1, 0], True)
    >>> resolve_wrt(-1, ["x", "y"], "f")
    ([1], False)
    """
    fields = Location.error_fields(where)
    several = isinstance(wrt, (tuple, list))
    items = list(wrt) if several else [wrt]
    signature = f"{function}({', '.join(names)})"
    indices: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must name arguments by index or name, got {item!r}", **fields)
        if isinstance(item, str):
            if item not in names:
                raise WrtError(f"wrt={item!r} is not an argument of {signature}", **fields)
            index = names.index(item)
        else:
            if not -len(names) <= item < len(names):
                raise WrtError(f"wrt={item} is out of range: {signature} has "
                               f"{len(names)} argument(s)", **fields)
            index = item % len(names)
        if index in indices:
            raise WrtError(f"wrt names the argument {names[index]!r} twice", **fields)
        indices.append(index)
    if several and not indices:
        raise WrtError("wrt is empty: name at least one argument", **fields)
    return indices, several


def wrt_key(wrt: Wrt) -> tuple:
    """``wrt`` as part of a cache key: ``wrt=1`` returns a gradient, ``wrt=(1,)`` a
    1-tuple, so they are different derivatives."""
    return ("several", *wrt) if isinstance(wrt, (tuple, list)) else ("one", wrt)
