"""``wrt=``: which arguments a derivative is taken with respect to."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from autodiff.errors import WrtError
from autodiff.graph.ir import Location

Wrt = int | str | Sequence[int | str]


def resolve_wrt(wrt: Wrt, names: list[str], function: str,
                where: Location | None = None) -> tuple[list[int], bool]:
    """The positions among ``names`` (the arguments of ``function``) that ``wrt`` names,
    and whether it names several (a tuple or list, even of one); errors point at ``where``.
    A part of an argument (``"params['W1']"``) is refused here: see :func:`resolve_parts`.

    >>> resolve_wrt(("y", 0), ["x", "y"], "f")
    ([1, 0], True)
    >>> resolve_wrt(-1, ["x", "y"], "f")
    ([1], False)
    """
    indices, several, paths = resolve_parts(wrt, names, function, where)
    named = next((item for item, path in zip(_items(wrt), paths) if path), None)
    if named is not None:
        raise WrtError(f"wrt={named!r} names a part of an argument, which this takes whole",
                       **Location.error_fields(where),
                       hint="name the whole argument, or take ad.grad with that wrt")
    return indices, several


def resolve_parts(wrt: Wrt, names: list[str], function: str,
                  where: Location | None = None) -> tuple[list[int], bool, list[tuple]]:
    """As :func:`resolve_wrt`, with, for each item, the path of keys it names into its
    argument (``"params['W1']"``, ``"layers[0][1]"``, ``"self.W"``): ``()`` for the
    whole argument, else ``(key, ...)``, a field name read as ``.name``.

    >>> resolve_parts(("params['W'][0]", "x"), ["params", "x"], "f")
    ([0, 1], True, [('W', 0), ()])
    """
    fields = Location.error_fields(where)
    several = isinstance(wrt, (tuple, list))
    items = _items(wrt)
    signature = f"{function}({', '.join(names)})"
    indices: list[int] = []
    paths: list[tuple] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must name arguments by index or name, got {item!r}", **fields)
        path: tuple = ()
        if isinstance(item, str):
            name, path = _path(item, fields)
            if name not in names:
                raise WrtError(f"wrt={item!r} is not an argument of {signature}", **fields)
            index = names.index(name)
        else:
            if not -len(names) <= item < len(names):
                raise WrtError(f"wrt={item} is out of range: {signature} has "
                               f"{len(names)} argument(s)", **fields)
            index = item % len(names)
        for other, other_path in zip(indices, paths):
            if other == index and (other_path[:len(path)] == path
                                   or path[:len(other_path)] == other_path):
                raise WrtError(f"wrt names the argument {names[index]!r} twice", **fields)
        indices.append(index)
        paths.append(path)
    if several and not indices:
        raise WrtError("wrt is empty: name at least one argument", **fields)
    return indices, several, paths


def _items(wrt: Wrt) -> list:
    return list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]


def _path(text: str, fields: dict) -> tuple[str, tuple]:
    """``"params['W1'].b"`` -> ``("params", ("W1", Field("b")))``; a plain name, no keys."""
    if text.isidentifier():
        return text, ()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        node = None
    keys: list = []
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Attribute):
            keys.append(Field(node.attr))
        else:
            try:
                key = ast.literal_eval(node.slice)  # (-1 too)
            except ValueError:
                key = None
            if type(key) not in (int, str):
                node = None
                break
            keys.append(key)
        node = node.value
    if not isinstance(node, ast.Name):
        raise WrtError(f"wrt={text!r} is not an argument's name or a part of one",
                       hint="name a part with constant keys and fields, as ad.check_grad "
                            "writes them: \"params['W1']\", \"layers[0][1]\", \"self.W\"",
                       **fields)
    return node.id, tuple(reversed(keys))


class Field(str):
    """A key of a ``wrt`` path read as a field (``.W``), not an item (``['W']``)."""

    __slots__ = ()
    is_field = True

    def __repr__(self) -> str:
        return f"Field({str.__repr__(self)})"


def wrt_key(wrt: Wrt) -> tuple:
    """``wrt`` as part of a cache key: ``wrt=1`` returns a gradient, ``wrt=(1,)`` a
    1-tuple, so they are different derivatives."""
    return ("several", *wrt) if isinstance(wrt, (tuple, list)) else ("one", wrt)
