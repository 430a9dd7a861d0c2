"""Jacobians assembled from generated products, one call per row (vector-Jacobian
products) or, in forward mode, one call of the batched Jacobian-vector product pushing
every column's tangent through one sweep (``transforms/batching.py``; one call per
column where the product cannot be batched), and the gradient of a derivative whose
reverse sweep reads a loop's tape, by forward mode over it."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from autodiff import tree
from autodiff.derivatives.build import build_grad, parts, primal
from autodiff.derivatives.cache import Assembled, cached, checked_budget, jvp_of, vjp_of
from autodiff.derivatives.structured import call_facts_may_answer, per_structure
from autodiff.derivatives.wrt import Wrt, resolve_parts, wrt_key
from autodiff.errors import ArgumentKindError, AutodiffError, NonScalarOutputError, raised_at_call
from autodiff.frontend.structures import NeedsStructure, has_gradient
from autodiff.graph.ir import Location
from autodiff.ops import registry
from autodiff.ops.runtime import as_gradient_of, complex_among, dtype_with, gradient_dtype
from autodiff.transforms.batching import Unbatchable
from autodiff.transforms.reverse import TapedDerivativeError


def build_gradient(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool = True,
                   has_aux: bool = False, check_finite: bool = False, specs=None,
                   by_structure=None, complex_values: bool = False, known=None,
                   checkpoint: int | str | None = None) -> Callable:
    """The gradient of ``fn`` by reverse mode, or, for a derivative whose reverse sweep
    reads a loop's tape (``grad(grad(f))`` with ``f`` looping), by forward mode over it."""
    try:
        return build_grad(fn, wrt, with_value=with_value, optimize=optimize,
                          has_aux=has_aux, check_finite=check_finite, specs=specs,
                          by_structure=by_structure, complex_values=complex_values,
                          known=known, checkpoint=checkpoint)
    except TapedDerivativeError:
        if has_aux:
            raise
        return ForwardGradient(fn, wrt, with_value, optimize)


def grad_of(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool = True,
            has_aux: bool = False, jit: bool | str = False, check_finite: bool = False,
            checkpoint: int | str | None = None):
    """The gradient of ``fn`` (:func:`autodiff.grad`, :func:`autodiff.value_and_grad`),
    built once."""
    checked_budget(checkpoint, jit)
    kind = "value_and_grad" if with_value else "grad"
    options = {"with_value": with_value, "optimize": optimize, "has_aux": has_aux,
               "check_finite": check_finite, "checkpoint": checkpoint}

    def build() -> Callable:
        return per_structure(fn, f"{fn.__name__}_{kind}",
                             lambda **given: build_gradient(fn, wrt, **options, **given))

    return cached(fn, (kind, wrt_key(wrt), optimize, has_aux, check_finite, checkpoint), build,
                  jit, optimize, check_finite)


class Jacobian(Assembled):
    """The Jacobian of a function, row by row (reverse) or, in forward mode, every column
    in one batched call (column by column where the product cannot be batched, or with
    ``_per_column`` set, which the benchmarks compare against)."""

    _per_column = False

    def __init__(self, fn: Callable, wrt: Wrt, mode: str | None, optimize: bool,
                 jit: bool | str = False) -> None:
        self.fn, self.wrt, self.mode, self.optimize, self.jit = fn, wrt, mode, optimize, jit
        try:
            graph, where = primal(fn)
            self.named, self.several = parts(graph, wrt, where)
            self.names = [p.hint for p in graph.params]
        except AutodiffError as reason:  # compiled per structure or per call signature:
            if not (isinstance(reason, NeedsStructure)  # its own parameters
                    or call_facts_may_answer(fn, reason)):
                raise
            self.names = list(inspect.signature(fn).parameters)
            indices, self.several, paths = resolve_parts(
                wrt, self.names, fn.__name__,
                Location(reason.filename, reason.lineno, reason.source_line or ""))
            self.named = list(zip(indices, paths))
        self.__name__ = fn.__name__ + "_jacobian"
        self.__doc__ = f"The Jacobian of {fn.__name__}."

    @property
    def vjp(self) -> Callable:
        return vjp_of(self.fn, self.wrt, optimize=self.optimize, jit=self.jit)

    @property
    def jvp(self) -> Callable:
        return jvp_of(self.fn, self.wrt, optimize=self.optimize, jit=self.jit)

    @property
    def batched_jvp(self) -> Callable | None:
        """The Jacobian-vector product of tangents stacked along a leading axis, one call
        for every column; None where it cannot be batched (or ``_per_column`` is set)."""
        if self._per_column or self.__dict__.get("_unbatchable") or self.jit == "numba":
            return None  # (numba compiles no batched helper: one call per column there)
        generation, product = self.__dict__.get("_batched_product", (None, None))
        if generation == registry.generation:  # (built again when a rule changes)
            return product
        try:
            product = jvp_of(self.fn, self.wrt, optimize=self.optimize, jit=self.jit,
                             batched=True)
        except Unbatchable:
            self._unbatchable = True
            return None
        self._batched_product = (registry.generation, product)
        return product

    @property
    def source(self) -> str:
        """The generated product(s) the Jacobian is assembled from."""
        modes = [self.mode] if self.mode else ["rev", "fwd"]
        parts = []
        for mode in modes:
            product = self.vjp if mode == "rev" else self.batched_jvp
            how = ("one call per output element, seeded with that element" if mode == "rev"
                   else "one call, the tangents along every argument element stacked on a "
                   "leading axis")
            if product is None:
                product, how = self.jvp, "one call per argument element, tangent along it"
            parts.append(f"# mode={mode!r}: {how}\n{product.source}")
        return "\n".join(parts)

    @raised_at_call
    def __call__(self, *args, **kwargs):
        if self.mode == "fwd":
            return self._forward(args, kwargs)
        value = self.fn(*args, **kwargs)
        self._refuse_complex_to_complex(value, args, kwargs)
        if self.mode == "rev":
            return self._reverse(args, kwargs, value)
        outputs = sum(np.size(leaf) for leaf in tree.leaves(value))
        inputs = sum(np.size(leaf) for leaf in tree.leaves(self.inputs(args, kwargs)))
        if outputs < inputs:
            return self._reverse(args, kwargs, value)
        return self._forward(args, kwargs)

    def _refuse_complex_to_complex(self, value, args: tuple, kwargs: dict) -> None:
        """A complex output of a complex argument has a Jacobian for holomorphic functions
        alone (JAX's holomorphic=True): refused, where a real one (of a real output, or
        in a real argument) is always defined."""
        if complex_among(value) and complex_among(self.inputs(args, kwargs)):
            raise ArgumentKindError(
                f"the Jacobian of {self.fn.__name__}'s complex output in a complex argument "
                "is defined for holomorphic functions alone",
                hint="use ad.vjp or ad.jvp, or the Jacobian of its real and imaginary parts "
                "(np.real, np.imag) apart",
                **Location.error_fields(Location.of_function(inspect.unwrap(self.fn))))

    def _reverse(self, args: tuple, kwargs: dict, value):
        """One vector-Jacobian product per element of the output (of each of its array
        leaves, for a structure): a block per output leaf and input leaf, in the
        output's structure of the inputs' structures. A complex output element (of real
        arguments) takes two: along 1 and 1j, d Re / dx + i d Im / dx."""
        pull = self.vjp
        flat, differentiated = self.leaves(args, kwargs)
        outputs, out_structure = tree.flatten(value)

        def row(k: int, element: tuple, unit) -> list:
            seed = [np.zeros(np.shape(o), dtype=dtype_with(unit, o)) if _is_numeric(o) else 0.0
                    for o in outputs]
            seed[k][element] = unit
            grads = pull(*args, **kwargs, **{pull.seed_name: tree.unflatten(out_structure, seed)})
            return [_leaf_gradients(g, mask) for g, mask in
                    zip(grads if self.several else (grads,), differentiated)]

        per_output = []
        for k, out in enumerate(outputs):
            rows = []  # per output element, per input, the gradient of each input leaf
            for element in np.ndindex(np.shape(out)) if _is_numeric(out) else ():
                rows.append(row(k, element, 1.0))
                if np.iscomplexobj(out):
                    rows[-1] = tree.map(lambda re, im: None if re is None else re - 1j * im,
                                        rows[-1], row(k, element, 1j))
            per_input = []
            for w, (leaves, structure) in enumerate(flat):
                blocks = [assemble([np.asarray(r[w][j]) for r in rows],
                                   np.shape(out), leaf, first="output",
                                   complex_output=np.iscomplexobj(out))
                          if differentiated[w][j] and _is_numeric(out) else None
                          for j, leaf in enumerate(leaves)]
                per_input.append(tree.unflatten(structure, blocks))
            per_output.append(tuple(per_input) if self.several else per_input[0])
        return tree.unflatten(out_structure, per_output)

    def _forward(self, args: tuple, kwargs: dict):
        """One Jacobian-vector product per element of the differentiated arguments (of
        each leaf with a gradient, for a structure): a block per output leaf and input
        leaf, in the output's structure of the inputs' structures."""
        flat, differentiated = self.leaves(args, kwargs)
        if any(np.size(leaf) for (leaves, _), mask in zip(flat, differentiated)
               for leaf, has in zip(leaves, mask) if has):
            try:
                batched = self._batched(args, kwargs, flat, differentiated)
            except Unbatchable:
                self._unbatchable = True
                batched = None
            except Exception:  # noqa: BLE001 - a form the batched product cannot run
                batched = None  # (an op run per example giving a list): the columns one
                # call each, which raise an error of the code itself as it is
            if batched is not None:
                return batched
        zeros = [[np.zeros(np.shape(leaf), dtype=gradient_dtype(leaf)) if has else None
                  for leaf, has in zip(leaves, mask)]
                 for (leaves, _), mask in zip(flat, differentiated)]
        push = self.jvp
        columns: dict[tuple[int, int], list] = {}
        value = None
        for w, (leaves, structure) in enumerate(flat):
            for j, leaf in enumerate(leaves):
                if zeros[w][j] is None:
                    continue
                for element in np.ndindex(np.shape(leaf)):
                    column = []
                    # a complex leaf: along 1 and 1j, the gradient's d / dx - i d / dy
                    for unit in (1.0, 1j) if np.iscomplexobj(leaf) else (1.0,):
                        tangents = [list(z) for z in zeros]
                        tangents[w][j] = np.zeros(np.shape(leaf), dtype=dtype_with(unit, leaf))
                        tangents[w][j][element] = unit
                        trees = [tree.unflatten(f[1], t) for f, t in zip(flat, tangents)]
                        tangent = tuple(trees) if self.several else trees[0]
                        value, out = push(*args, **kwargs, **{push.tangent_name: tangent})
                        column.append(tree.leaves(out))
                    if len(column) == 2:
                        column = [[re - 1j * im for re, im in zip(*column)]]
                    columns.setdefault((w, j), []).append(column[0])
        if value is None:  # every argument is empty: one call for the output's shape
            value = self.fn(*args, **kwargs)
        self._refuse_complex_to_complex(value, args, kwargs)
        outputs, out_structure = tree.flatten(value)
        per_output = []
        for k, out in enumerate(outputs):
            per_input = []
            for w, (leaves, structure) in enumerate(flat):
                blocks = [assemble([np.asarray(c[k]) for c in columns.get((w, j), [])],
                                   np.shape(out), leaf, first="input", complex_output=np.iscomplexobj(out))
                          if zeros[w][j] is not None and _is_numeric(out) else None
                          for j, leaf in enumerate(leaves)]
                per_input.append(tree.unflatten(structure, blocks))
            per_output.append(tuple(per_input) if self.several else per_input[0])
        return tree.unflatten(out_structure, per_output)

    def _batched(self, args: tuple, kwargs: dict, flat: list, differentiated: list):
        """The Jacobian from one call of the batched product: example ``r`` of the
        tangents is the basis tangent of column ``r`` (two for a complex leaf's element:
        along 1 and 1j); None where the product cannot be batched."""
        push = self.batched_jvp
        if push is None:
            return None
        units = {(w, j): (1.0, 1j) if np.iscomplexobj(flat[w][0][j]) else (1.0,)
                 for w, mask in enumerate(differentiated) for j, has in enumerate(mask) if has}
        count = sum(np.size(flat[w][0][j]) * len(u) for (w, j), u in units.items())
        rows: dict[tuple[int, int], int] = {}
        tangents = [[None] * len(mask) for mask in differentiated]
        row = 0
        for (w, j), unit in units.items():
            leaf = flat[w][0][j]
            size = np.size(leaf)
            tangent = np.zeros((count, *np.shape(leaf)), dtype=dtype_with(unit[-1], leaf))
            spread = tangent.reshape(count, size)
            for u, one in enumerate(unit):  # example row + u + k * len(unit): along k
                np.fill_diagonal(spread[row + u:row + size * len(unit):len(unit)], one)
            tangents[w][j], rows[(w, j)] = tangent, row
            row += size * len(unit)
        trees = [_unflatten(f[1], t) for f, t in zip(flat, tangents)]
        value, out = push(*args, **kwargs,
                          **{push.tangent_name: tuple(trees) if self.several else trees[0]})
        self._refuse_complex_to_complex(value, args, kwargs)
        outputs, out_structure = _flatten(value)
        pushed = _flatten(out)[0]
        per_output = []
        for k, output in enumerate(outputs):
            numeric = _is_numeric(output)
            if numeric:
                out_shape, complex_output = np.shape(output), np.iscomplexobj(output)
                part = np.asarray(pushed[k])
                if part.ndim == len(out_shape):  # not computed from the tangents
                    part = np.broadcast_to(part, (count, *out_shape))
            per_input = []
            for w, (leaves, structure) in enumerate(flat):
                blocks = []
                for j, leaf in enumerate(leaves):
                    unit = units.get((w, j))
                    if unit is None or not numeric:
                        blocks.append(None)
                        continue
                    columns = part[rows[(w, j)]:rows[(w, j)] + np.size(leaf) * len(unit)]
                    if len(unit) == 2:
                        columns = columns[0::2] - 1j * columns[1::2]
                    blocks.append(assemble_columns(columns, out_shape, leaf, complex_output))
                per_input.append(_unflatten(structure, blocks))
            per_output.append(tuple(per_input) if self.several else per_input[0])
        return _unflatten(out_structure, per_output)

    def leaves(self, args: tuple, kwargs: dict) -> tuple[list, list[list[bool]]]:
        """``(leaves, structure)`` of each differentiated input, and which of its leaves
        have a gradient (an array input's one leaf always does)."""
        flat = [tree.flatten(x) for x in self.inputs(args, kwargs)]
        return flat, [[structure == tree.LEAF or has_gradient(leaf) for leaf in leaves]
                      for leaves, structure in flat]

    def inputs(self, args: tuple, kwargs: dict) -> list:
        """What a call differentiates: each argument ``wrt`` names (given by position or
        name), or the part of it at the path ``wrt`` names."""
        return [tree.part(args[index] if index < len(args) else kwargs[self.names[index]],
                          path) for index, path in self.named]

    def __repr__(self) -> str:
        return f"<jacobian of {self.fn.__name__}, mode={self.mode or 'auto'}>"


class ForwardGradient(Assembled):
    """The gradient of a scalar derivative whose reverse sweep reads a loop's tape
    (``grad(grad(f))`` with ``f`` looping), by forward mode over it: one
    Jacobian-vector product per element of the differentiated arguments."""

    def __init__(self, fn: Callable, wrt: Wrt, with_value: bool, optimize: bool) -> None:
        self.jacobian = Jacobian(fn, wrt, "fwd", optimize)
        self.fn, self.with_value = fn, with_value
        self.__name__ = fn.__name__ + ("_value_and_grad" if with_value else "_grad")

    @property
    def source(self) -> str:
        return self.jacobian.source

    @raised_at_call
    def __call__(self, *args, **kwargs):
        value = self.fn(*args, **kwargs)
        if np.size(value) != 1:
            raise NonScalarOutputError(f"grad needs a scalar output, but {self.fn.__name__} "
                                       f"returns an array of shape {np.shape(value)}")
        gradient = self.jacobian(*args, **kwargs)
        # with the kinds, shapes and dtypes of the arguments, as a generated gradient's
        arguments = tuple(self.jacobian.inputs(args, kwargs))
        gradient = tree.map(lambda x, g: None if g is None else as_gradient_of(g, x),
                            arguments if self.jacobian.several else arguments[0], gradient)
        return (value, gradient) if self.with_value else gradient


def _flatten(value) -> tuple[list, object]:
    """``tree.flatten``, without its walk for an array."""
    if type(value) is np.ndarray:
        return [value], tree.LEAF
    return tree.flatten(value)


def _unflatten(structure, leaves: list):
    """``tree.unflatten``, without its walk for one leaf."""
    return leaves[0] if structure is tree.LEAF else tree.unflatten(structure, leaves)


def _is_numeric(leaf) -> bool:
    """Whether an output leaf has rows in a Jacobian (an array or a number, not a string)."""
    return isinstance(leaf, (np.ndarray, np.generic, float, int, complex))


def _leaf_gradients(gradient, differentiated: list[bool]) -> list:
    """The gradient of each leaf of an argument, ``None`` where ``differentiated`` says
    a leaf has none (a structure's gradient holds ``None`` there, which is no leaf)."""
    given = iter(tree.leaves(gradient))
    return [next(given) if has else None for has in differentiated]


def assemble_columns(part, out_shape: tuple, x, complex_output: bool = False):
    """The block ``out_shape + shape(x)`` from ``part``, the columns stacked on a leading
    axis (one per element of ``x``), as :func:`assemble` gives it."""
    dtype = gradient_dtype(x)
    if complex_output:
        dtype = np.result_type(dtype, np.complex64)
    if part.shape[1:] != out_shape:  # (a tangent of a shape the output's broadcasts)
        part = np.broadcast_to(part, (part.shape[0], *out_shape))
    # (size(x), *out_shape) -> (*out_shape, size(x)) -> out_shape + shape(x)
    moved = part.transpose((*range(1, part.ndim), 0)) if part.ndim > 1 else part
    block = np.array(moved.reshape(out_shape + np.shape(x)), dtype=dtype)
    if block.ndim == 0 and isinstance(x, (float, int)):
        return block.item()
    return block


def assemble(parts: list, out_shape: tuple, x, first: str, complex_output: bool = False):
    """The block ``out_shape + shape(x)`` from rows (one per output element) or
    columns (one per element of ``x``): of x's gradient dtype, complex for a complex
    output."""
    in_shape = np.shape(x)
    dtype = gradient_dtype(x)
    if complex_output:
        dtype = np.result_type(dtype, np.complex64)
    if not parts:
        block = np.zeros(out_shape + in_shape, dtype=dtype)
    elif first == "output":
        block = np.stack(parts).reshape(out_shape + in_shape).astype(dtype, copy=False)
    else:
        stacked = np.stack([np.broadcast_to(p, out_shape) for p in parts], axis=-1)
        block = stacked.reshape(out_shape + in_shape).astype(dtype, copy=False)
    if block.ndim == 0 and isinstance(x, (float, int)):
        return block.item()  # a Python float (complex, of a complex output)
    return block
