"""Shape inference for one call signature: what every value of a graph will be.

Given the kinds, shapes and dtypes of the arguments, each node is evaluated
abstractly: on stand-in arrays of the right shape and dtype (values do not
matter), through the very kernel codegen emits. A value ends up as

- :class:`Known`: its exact value, for values that depend on shapes only
  (``np.shape(x)``, ``x.shape[0]``, ``np.size(y) * 2``, a ``result_type``);
- :class:`Spec`: its Python type, shape and dtype, not its value;
- ``None``: not known statically (a shape that depends on data).

Soundness comes first: a shape is trusted only when it cannot depend on the
values of the stand-ins. Float values never decide a shape; an integer or
boolean one may (``x[:n]``, ``x[mask]``, ``np.zeros(n)``), so an op reading a
non-constant integer is trusted only when it is elementwise, or an index by
a whole integer (``x[t]`` in a loop). Loops are evaluated to a fixed point;
branches on unknown conditions join what both sides give.

>>> import numpy as np
>>> from autodiff.jit.infer import describe
>>> describe(np.zeros((2, 3)))
Spec(kind=<class 'numpy.ndarray'>, shape=(2, 3), dtype=dtype('float64'))
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff import tree
from autodiff.frontend.structures import argument_spec, is_container
from autodiff.graph.ir import (
    UNDEFINED,
    Const,
    Graph,
    Operand,
    Region,
    SliceSpec,
    Value,
    operand_values,
)
from autodiff.ops import registry, runtime
from autodiff.ops.control import tape_new, tape_pop, tape_push
from autodiff.ops.control import variable as variable_op
from autodiff.ops.shape import getitem as getitem_op
from autodiff.ops.structures import part_read

# ----- abstract values -----


@dataclass(frozen=True)
class Known:
    """A value known exactly at specialisation time."""

    value: Any

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Known) and type(other.value) is type(self.value)
                and _equal(self.value, other.value))

    def __hash__(self) -> int:
        return hash(type(self.value))


@dataclass(frozen=True)
class Spec:
    """A value of known shape and dtype, and of known Python type unless ``kind`` is
    ``object``: a 0-d value that is a float on one path and a NumPy scalar on another."""

    kind: type
    shape: tuple
    dtype: np.dtype


@dataclass(frozen=True)
class Parts:
    """A structure passed as an argument (a dict, a list, a dataclass of arrays): what is
    known of each part, by key; the generated code reads the parts."""

    items: tuple  # ((key, Abstract), ...)

    def part(self, key: Any) -> Abstract:
        return next((abstract for k, abstract in self.items if _equal(k, key)), None)


Abstract = Known | Spec | Parts | None

# Values small and immutable enough to write into generated code as constants.
_IMMUTABLE = (bool, int, float, complex, str, type(None), np.dtype, slice)


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def describe(value: Any) -> Spec | None:
    """The :class:`Spec` of a concrete value, or None for anything but numbers and arrays."""
    # type(), not isinstance: isinstance reads __class__, which loads a lazy proxy.
    if issubclass(type(value), (np.ndarray, np.generic, bool, int, float, complex)):
        return Spec(type(value), np.shape(value), np.result_type(value))
    return None


def of_argument(value: Any) -> Abstract:
    """What specialisation may assume about an argument: flags (``None``, ``True``, a
    string) are exact, numbers and arrays by type, shape and dtype."""
    if value is None or issubclass(type(value), (bool, str)):
        return Known(value)
    spec = describe(value)
    if spec is None and is_container(argument_spec(value)):
        return Parts(tuple((key, of_argument(child)) for key, child in tree.items(value)))
    return spec


def signature_key(value: Any) -> Any:
    """The part of an argument that a specialisation depends on (a cache key): of a
    structure, its structure with its settings (see ``argument_spec``) and its leaves'."""
    kind = type(value)
    if kind is np.ndarray:
        return (kind, value.shape, value.dtype.str)
    if value is None or kind in (bool, str):
        return (kind, value)
    if issubclass(kind, np.generic):
        return (kind, value.dtype.str)
    if issubclass(kind, (int, float, complex)):
        return kind
    spec = argument_spec(value)
    if is_container(spec):
        return (spec, tuple(signature_key(leaf) for leaf in tree.leaves(value)))
    return spec if spec[0] == "static" else kind


def is_small(known: Abstract) -> bool:
    """Whether a known value can become a constant in the generated code."""
    if not isinstance(known, Known):
        return False
    value = known.value
    if isinstance(value, tuple):
        return all(is_small(Known(v)) for v in value)
    return isinstance(value, _IMMUTABLE)


def join(a: Abstract, b: Abstract) -> Abstract:
    """What is known of a value that is ``a`` on one path and ``b`` on another."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if isinstance(a, Parts) or isinstance(b, Parts):
        return None
    spec_a = a if isinstance(a, Spec) else describe(a.value)
    spec_b = b if isinstance(b, Spec) else describe(b.value)
    if spec_a is None or spec_b is None or (spec_a.shape, spec_a.dtype) != (
            spec_b.shape, spec_b.dtype):
        return None
    return spec_a if spec_a.kind is spec_b.kind else Spec(object, spec_a.shape, spec_a.dtype)


# ----- stand-ins -----


def stand_in(spec: Spec) -> Any:
    """A concrete value of the spec's type, shape and dtype."""
    if spec.kind is np.ndarray:
        return np.full(spec.shape, _fill(spec.dtype), dtype=spec.dtype)
    if spec.kind is object or issubclass(spec.kind, np.generic):
        return spec.dtype.type(_fill(spec.dtype))
    return spec.kind(_fill(spec.dtype))


def _fill(dtype: np.dtype) -> Any:
    # Integers 0 (a valid index), booleans True, floats 0.5 (no pole of log or 1/x).
    return {"b": True, "i": 0, "u": 0}.get(dtype.kind, 0.5)


def _risky(spec: Spec) -> str | None:
    """How the value of such a value may decide a shape: as a number (a 0-d integer
    or boolean: ``x[:n]``, ``np.zeros(n)``) or as a mask (``x[mask]``)."""
    if spec.shape == () and spec.dtype.kind in "iub":
        return "number"
    return "mask" if spec.dtype.kind == "b" else None


# ----- evaluating ops -----


@functools.cache
def _kernel_function(op: registry.Op, text: str):
    namespace = {"np": np, "math": math, "float": float, "len": len, "slice": slice,
                 **{name: getattr(runtime, name) for name in dir(runtime)
                    if not name.startswith("_")}, **op.runtime}
    return eval(f"lambda {', '.join(op.params)}: {text}", namespace)


def _callable(node) -> Any:
    if node.op.opaque:
        return None
    kernel = node.op.kernel
    if kernel is None:  # only an in-place form: the runtime function it is an alias of
        for fn in registry.callables_of(node.op):
            count = len(inspect.signature(fn).parameters)
            return lambda *args: fn(*args[:count])
        return None
    text = kernel(node.named_args) if callable(kernel) else kernel
    return _kernel_function(node.op, text)


class _Operands:
    """Concrete stand-ins for a node's operands, and what they say about safety."""

    def __init__(self, env: dict) -> None:
        self.env = env
        self.exact = True
        self.number = False  # a non-constant integer among the operands
        self.mask = False  # a non-constant boolean array among them
        self.in_slice = False  # a non-constant integer inside a slice
        self.unknown = False
        self.vague = False  # an operand of unknown kind: so is a 0-d result

    def value(self, operand: Operand, in_slice: bool = False) -> Any:
        if isinstance(operand, Value):
            abstract = self.env.get(operand)
            if abstract is None or isinstance(abstract, (_Tape, Parts)):
                self.unknown = True
                return None
            if isinstance(abstract, Known):
                return abstract.value
            self.exact = False
            self.vague |= abstract.kind is object
            risk = _risky(abstract)
            self.number |= risk == "number"
            self.mask |= risk == "mask"
            self.in_slice |= in_slice and risk == "number"
            return stand_in(abstract)
        if isinstance(operand, Const):
            return operand.value
        if isinstance(operand, SliceSpec):
            return slice(*(self.value(p, True) for p in (operand.start, operand.stop,
                                                        operand.step)))
        if isinstance(operand, tuple):
            return tuple(self.value(item, in_slice) for item in operand)
        self.unknown = True
        return None


def _trusted(node, operands: _Operands) -> bool:
    """Whether the result's shape is the same for any values of the operands."""
    if node.op.values_decide_shape:
        return operands.exact
    if not (operands.number or operands.mask):
        return True
    if node.op is getitem_op:  # x[t] is fine, x[:t] and x[mask] are not
        return not operands.in_slice and not _has_mask(node, operands.env)
    rule = node.op.shape
    if rule is None:
        return False
    return rule.by_shapes or rule.by_mask_shapes and not operands.number  # summing a mask


def _has_mask(node, env: dict) -> bool:
    for value in operand_values(node.args[1]):
        abstract = env.get(value)
        if isinstance(abstract, Spec) and abstract.dtype.kind == "b" and abstract.shape:
            return True
    return False


def _evaluate(node, env: dict) -> Abstract:
    operands = _Operands(env)
    args = [operands.value(arg) for arg in node.args]
    if operands.unknown or not _trusted(node, operands):
        return None
    fn = _callable(node)
    if fn is None:
        return None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*args)
    except Exception:  # noqa: BLE001 - a stand-in the op refuses: not known statically
        return None
    if operands.exact or node.op.query:
        known = Known(result)
        if is_small(known):
            return known
    spec = describe(result)
    if spec is not None and operands.vague and spec.shape == ():
        return Spec(object, (), spec.dtype)
    return spec


# ----- the graph -----


class _Tape:
    """What is known of everything pushed onto a tape so far."""

    def __init__(self) -> None:
        self.pushed: Abstract = None
        self.empty = True

    def push(self, value: Abstract) -> None:
        self.pushed = value if self.empty else join(self.pushed, value)
        self.empty = False


def infer(graph: Graph, arguments: list[Abstract],
          variables: dict[tuple, Abstract] | None = None) -> dict[Value, Abstract]:
    """The abstract value of every value of ``graph`` for arguments like ``arguments``
    (and global or closure variables like ``variables``, by name and scope)."""
    env: dict = dict(zip(graph.params, arguments))
    env[_VARIABLES] = variables or {}
    _block(graph.nodes, env)
    del env[_VARIABLES]
    return env


_VARIABLES = object()  # where in the environment the variables' values are kept


def _block(nodes: list, env: dict) -> None:
    for node in nodes:
        if isinstance(node, Region):
            _region(node, env)
        elif node.op is tape_new:
            env[node.out] = _Tape()
        elif node.op is tape_push:
            tape = env.get(node.args[0])
            if isinstance(tape, _Tape):
                tape.push(_operand(node.args[1], env))
        elif node.op is tape_pop:
            tape = env.get(node.args[0])
            env[node.out] = tape.pushed if isinstance(tape, _Tape) else None
        elif node.op is variable_op:
            env[node.out] = env[_VARIABLES].get((node.args[0].value, node.args[1].value))
        elif part_read(node) is not None:
            whole, key = part_read(node)
            parts = env.get(whole)
            env[node.out] = parts.part(key) if isinstance(parts, Parts) else None
        else:
            env[node.out] = _evaluate(node, env)


def _operand(operand: Operand, env: dict) -> Abstract:
    if isinstance(operand, Value):
        abstract = env.get(operand)
        return None if isinstance(abstract, _Tape) else abstract
    if isinstance(operand, Const):
        known = Known(operand.value)
        return known if is_small(known) else describe(operand.value)
    return None


# A loop index: an integer of unknown value (its stand-in, 0, is a valid index).
_INDEX = Spec(int, (), np.dtype(np.int64))
_ROUNDS = 4  # a carried value whose kind still changes after this many passes is unknown


def _region(region: Region, env: dict) -> None:
    if region.branches:
        taken = _taken(region, env)
        results = []
        for index, block in enumerate(region.blocks):
            _block(block.nodes, env)
            if (taken is None or taken == index) and not block.raises():
                results.append([_operand(r, env) for r in block.results])
        outs = [functools.reduce(join, values) for values in zip(*results)] if results else [
            None] * len(region.outs)
        env.update(zip(region.outs, outs))
        return
    carried = [_operand(v, env) for v in region.init]
    # A value first bound in the loop (UNDEFINED before it) is read after the loop only
    # once an iteration ran: what the loop leaves it is what an iteration makes it.
    unbound = [v is UNDEFINED for v in region.init]
    if region.kind == "for":
        env[region.body.params[0]] = _INDEX
    for attempt in range(_ROUNDS + 1):
        after = _pass(region, carried, env)
        if attempt == 0:
            after = [_operand(r, env) if fresh else a
                     for a, r, fresh in zip(after, region.body.results, unbound)]
        if after == carried:
            break
        carried = after if attempt < _ROUNDS - 1 else [
            a if a == c else None for a, c in zip(after, carried)]
    else:  # no fixed point: nothing is known of the carried values
        carried = [None] * len(carried)
        _pass(region, carried, env)
    env.update(zip(region.outs, carried))


def _taken(region: Region, env: dict) -> int | None:
    """The block of a branching region the signature decides, if it does."""
    if region.kind == "try":
        return None
    decided = _operand(region.args[0], env)
    if not isinstance(decided, Known):
        return None
    if region.kind == "if":
        return 0 if decided.value else 1
    return decided.value


def _pass(region: Region, carried: list, env: dict) -> list:
    """Evaluate the loop's blocks once with ``carried``; what is known after a pass."""
    for block in region.blocks:
        params = block.params[1:] if region.kind == "for" and block is region.body \
            else block.params
        env.update(zip(params, carried))
        _block(block.nodes, env)
    return [join(before, _operand(r, env)) for before, r in zip(carried, region.body.results)]

