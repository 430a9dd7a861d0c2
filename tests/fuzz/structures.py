"""Structured arguments: float arguments of ``f`` packed into one structure, and groups.

A *packing* puts some of ``f``'s float arguments (and maybe the int ``n``) into
a dict ``params``, a tuple ``pair``, a list ``parts``, a namedtuple ``layer`` or
a dataclass ``block``. ``f`` reads each of them where it needs it
(``params["W"]``, ``pair[0]``, ``layer.W``, ``params.get("W", 0.0)``) or once
at its top (``W = params["W"]``, ``W, b = pair``). A dict may also hold
settings that have no gradient: a string (``params["act"] == "tanh"``), a
``None`` (``params["bias"] is None``), the int ``n`` (``range(params["n"])``),
and be asked for a key it lacks (``params.get("gain", 0.5)``).

A *group* is an argument holding two or three arrays of one shape (or Python
floats): a list ``vs``, a tuple ``ts``, a dict ``ws``, or a list of pairs
``layers``; it may also sit in the dict of a packing (``params["vs"]``). ``f``
loops over it (``tests/fuzz/statements.py``), reads its elements by constant
indices or keys, stacks it, or sums over it in a comprehension.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

from tests.fuzz.expressions import Variable

PACKINGS = ["dict", "dict", "tuple", "list", "namedtuple", "dataclass"]
PACK_NAMES = {"dict": "params", "tuple": "pair", "list": "parts", "namedtuple": "layer",
              "dataclass": "block"}
CLASS_NAMES = {"namedtuple": "Layer", "dataclass": "Block"}
GROUPS = ["list", "tuple", "dict", "layers"]
GROUP_NAMES = {"list": "vs", "tuple": "ts", "dict": "ws", "layers": "layers"}
GROUP_KEYS = ("u", "v", "w")
ACTIVATIONS = ["tanh", "sin"]


@functools.cache
def record_class(kind: str, fields: tuple[str, ...]) -> type:
    """The namedtuple ``Layer`` or the dataclass ``Block`` with these fields (one class per
    fields, made once)."""
    if kind == "namedtuple":
        return collections.namedtuple(CLASS_NAMES[kind], fields)
    return dataclasses.make_dataclass(CLASS_NAMES[kind], fields)


def class_text(kind: str, fields: tuple[str, ...]) -> str:
    """How the failing program's report says what ``Layer`` or ``Block`` is."""
    if kind == "namedtuple":
        return f'Layer = collections.namedtuple("Layer", "{" ".join(fields)}")'
    return f'Block = dataclasses.make_dataclass("Block", {list(fields)!r})'


@dataclass
class Group:
    """An argument of equal arrays: ``container`` "list", "tuple", "dict" or "layers"."""

    container: str
    length: int
    shape: tuple | None  # each element's (None: a Python float); "layers": None
    parts: tuple = ()  # "layers": the shapes of each pair's two arrays
    inside: bool = False  # in the packing's dict, under its name

    @property
    def name(self) -> str:
        return GROUP_NAMES[self.container]

    def leaf_shapes(self) -> list:
        if self.container == "layers":
            return list(self.parts) * self.length
        return [self.shape] * self.length

    def value(self, leaves: list):
        if self.container == "layers":
            return [tuple(leaves[2 * i:2 * i + 2]) for i in range(self.length)]
        if self.container == "dict":
            return dict(zip(GROUP_KEYS, leaves))
        return list(leaves) if self.container == "list" else tuple(leaves)

    def variable(self, text: str, bound: float) -> Variable:
        return Variable(text, "group", () if self.shape is None else self.shape, bound,
                        python=self.shape is None and self.container != "layers",
                        argument=True, frozen=True, container=self.container,
                        length=self.length, parts=self.parts,
                        keys=GROUP_KEYS[:self.length] if self.container == "dict" else ())


@dataclass
class Packing:
    """Float arguments (and maybe ``n``) in one structure argument, and how ``f`` reads them."""

    kind: str  # one of PACKINGS
    members: list  # the float arguments' names, in the structure's order
    reads: dict = field(default_factory=dict)  # member: "inline", "top" or "get"
    unpack: bool = False  # all members unpacked at f's top in one line: W, b = pair
    settings: dict = field(default_factory=dict)  # "act": a string, "bias": None
    int_name: str | None = None  # the int argument moved into the dict
    missing: bool = False  # params.get("gain", 0.5): a key the dict lacks

    @property
    def name(self) -> str:
        return PACK_NAMES[self.kind]

    def value(self, values: dict, group: Group | None, group_value):
        if self.kind in ("namedtuple", "dataclass"):
            made = record_class(self.kind, tuple(self.members))
            return made(*(values[m] for m in self.members))
        if self.kind != "dict":
            items = [values[m] for m in self.members]
            return items if self.kind == "list" else tuple(items)
        made = {m: values[m] for m in self.members}
        made.update(self.settings)
        if self.int_name:
            made[self.int_name] = values[self.int_name]
        if group is not None and group.inside:
            made[group.name] = group_value
        return made

    def read(self, member: str) -> str:
        """The text that reads ``member`` from the structure."""
        position = self.members.index(member)
        if self.kind == "dict":
            key = f'"{member}"'
            return f"{self.name}.get({key}, 0.0)" if self.reads[member] == "get" \
                else f"{self.name}[{key}]"
        if self.kind in ("tuple", "list"):
            last = position == len(self.members) - 1 and position and self.reads[member] == "get"
            return f"{self.name}[{-1 if last else position}]"
        return f"{self.name}.{member}"

    def scope(self, shapes: dict, bound: float, int_bound: int) -> tuple[list, list[str]]:
        """The variables ``f`` starts with for the structure, and the lines at its top."""
        variables, lines = [], []
        if self.unpack:
            lines.append(f"{', '.join(self.members)} = {self.name}")
        for member in self.members:
            shape = shapes[member]
            top = self.unpack or self.reads[member] == "top"
            if top and not self.unpack:
                lines.append(f"{member} = {self.read(member)}")
            variables.append(Variable(member if top else self.read(member), "array",
                                      () if shape is None else shape, bound,
                                      python=shape is None, argument=True, frozen=not top))
        for key in self.settings:
            variables.append(Variable(f'{self.name}["{key}"]', "setting", argument=True,
                                      frozen=True, setting=key))
        if self.int_name:
            variables.append(Variable(f'{self.name}["{self.int_name}"]', "int", (), int_bound,
                                      argument=True, frozen=True))
        if self.missing:
            variables.append(Variable(f'{self.name}.get("gain", 0.5)', "array", (), 0.5,
                                      python=True, argument=True, frozen=True))
        return variables, lines


def draw_packing(draw, floats: list, ints: list, always: bool = False) -> Packing | None:
    """Half the programs (or all) pack some float arguments into a structure."""
    kind = draw(st.sampled_from(([] if always else [None] * len(PACKINGS)) + PACKINGS))
    if kind is None:
        return None
    names = [p for p, _ in floats]
    members = [p for p in names if draw(st.booleans())] or [draw(st.sampled_from(names))]
    if kind == "namedtuple" or kind == "dataclass":  # fields in the order drawn
        members = draw(st.permutations(members))
    reads = {m: draw(st.sampled_from(["inline", "inline", "top", "get"])) for m in members}
    packing = Packing(kind, list(members), reads)
    if kind in ("tuple", "list", "namedtuple") and len(members) >= 2:
        packing.unpack = draw(st.integers(0, 2)) == 0
    if kind == "dict":
        if draw(st.booleans()):
            packing.settings["act"] = draw(st.sampled_from(ACTIVATIONS))
        if draw(st.integers(0, 2)) == 0:
            packing.settings["bias"] = None
        if draw(st.booleans()):
            packing.int_name = ints[0][0]
        packing.missing = draw(st.integers(0, 3)) == 0
    return packing


def draw_group(draw, floats: list, budget: int, packing: Packing | None,
               always: bool = False) -> Group | None:
    """Two programs in five (or all) take a group too, of elements that fit in ``budget``
    float elements."""
    container = draw(st.sampled_from(([] if always else [None] * 6) + GROUPS))
    if container is None:
        return None
    length = draw(st.sampled_from([2, 3, 2]))
    shapes = [s for _, s in floats]
    size = (lambda s: 1 if s is None else math.prod(s))
    if container == "layers":
        fitting = [(a, b) for a in shapes for b in shapes if a is not None and b is not None
                   and (size(a) + size(b)) * length <= budget]
        if not fitting:
            return None
        group = Group(container, length, None, draw(st.sampled_from(fitting)))
    else:
        fitting = [s for s in shapes if size(s) * length <= budget]
        if not fitting:
            return None
        group = Group(container, length, draw(st.sampled_from(fitting)))
    if packing is not None and packing.kind == "dict":
        group.inside = draw(st.integers(0, 2)) == 0
    return group
