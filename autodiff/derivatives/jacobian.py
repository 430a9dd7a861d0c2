"""Jacobians assembled from generated products, one call per row (vector-Jacobian
products) or per column (Jacobian-vector products), and the gradient of a
derivative whose reverse sweep reads a loop's tape, by forward mode over it."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from autodiff import tree
from autodiff.derivatives.build import build_grad, parameters, primal
from autodiff.derivatives.cache import Assembled, cached, jvp_of, vjp_of
from autodiff.derivatives.structured import per_structure
from autodiff.derivatives.wrt import Wrt, resolve_wrt, wrt_key
from autodiff.errors import ArgumentKindError, NonScalarOutputError
from autodiff.frontend.structures import NeedsStructure, has_gradient
from autodiff.graph.ir import Location
from autodiff.ops.runtime import as_gradient_of, gradient_dtype
from autodiff.transforms.reverse import TapedDerivativeError


def build_gradient(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool = True,
                   has_aux: bool = False, check_finite: bool = False, specs=None,
                   by_structure=None) -> Callable:
    """The gradient of ``fn`` by reverse mode, or, for a derivative whose reverse sweep
    reads a loop's tape (``grad(grad(f))`` with ``f`` looping), by forward mode over it."""
    try:
        return build_grad(fn, wrt, with_value=with_value, optimize=optimize,
                          has_aux=has_aux, check_finite=check_finite, specs=specs,
                          by_structure=by_structure)
    except TapedDerivativeError:
        if has_aux:
            raise
        return ForwardGradient(fn, wrt, with_value, optimize)


def grad_of(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool = True,
            has_aux: bool = False, jit: bool | str = False, check_finite: bool = False):
    """The gradient of ``fn`` (:func:`autodiff.grad`, :func:`autodiff.value_and_grad`),
    built once."""
    kind = "value_and_grad" if with_value else "grad"
    options = {"with_value": with_value, "optimize": optimize, "has_aux": has_aux,
                   "check_finite": check_finite}

    def build() -> Callable:
        return per_structure(fn, f"{fn.__name__}_{kind}",
                             lambda **given: build_gradient(fn, wrt, **options, **given))

    return cached(fn, (kind, wrt_key(wrt), optimize, has_aux, check_finite), build,
                  jit, optimize, check_finite)


def _arrays_only(fn: Callable, reason: NeedsStructure | None = None) -> ArgumentKindError:
    where = {"filename": reason.filename, "lineno": reason.lineno,
             "source_line": reason.source_line} if reason is not None else {}
    return ArgumentKindError(
        f"ad.jacobian(..., mode='rev') takes arrays and numbers, and {fn.__name__} reads, "
        "is given or returns a structure (a dict, a list, a tuple or an object)", **where,
        hint="mode='fwd' (the default for structures) takes them: one product per "
        "element of the arguments")


class Jacobian(Assembled):
    """The Jacobian of a function, row by row (reverse) or column by column (forward)."""

    def __init__(self, fn: Callable, wrt: Wrt, mode: str | None, optimize: bool) -> None:
        self.fn, self.wrt, self.mode, self.optimize = fn, wrt, mode, optimize
        try:
            graph, where = primal(fn)
            self.indices, self.several = parameters(graph, wrt, where)
            self.names = [p.hint for p in graph.params]
        except NeedsStructure as reason:  # compiled per structure: its own parameters
            if mode == "rev":
                raise _arrays_only(fn, reason) from None
            self.names = list(inspect.signature(fn).parameters)
            self.indices, self.several = resolve_wrt(wrt, self.names, fn.__name__,
                                                     Location(reason.filename, reason.lineno,
                                                              reason.source_line or ""))
        self.__name__ = fn.__name__ + "_jacobian"
        self.__doc__ = f"The Jacobian of {fn.__name__}."

    @property
    def vjp(self) -> Callable:
        return vjp_of(self.fn, self.wrt, optimize=self.optimize)

    @property
    def jvp(self) -> Callable:
        return jvp_of(self.fn, self.wrt, optimize=self.optimize)

    @property
    def source(self) -> str:
        """The generated product(s) the Jacobian is assembled from."""
        modes = [self.mode] if self.mode else ["rev", "fwd"]
        parts = []
        for mode in modes:
            product = self.vjp if mode == "rev" else self.jvp
            how = ("one call per output element, seeded with that element"
                   if mode == "rev" else "one call per argument element, tangent along it")
            parts.append(f"# mode={mode!r}: {how}\n{product.source}")
        return "\n".join(parts)

    def __call__(self, *args, **kwargs):
        structured = any(tree.items(self.argument(args, kwargs, i)) is not None
                         for i in self.indices)
        if self.mode == "fwd" or structured and self.mode is None:
            return self._forward(args, kwargs)
        if structured:
            raise _arrays_only(self.fn)
        value = self.fn(*args, **kwargs)
        if self.mode == "rev" or _is_structure(value):
            if _is_structure(value):
                raise _arrays_only(self.fn)
            return self._reverse(args, kwargs, value)
        outputs = value if isinstance(value, tuple) else (value,)
        inputs = sum(np.size(self.argument(args, kwargs, i)) for i in self.indices)
        if sum(np.size(o) for o in outputs) < inputs:
            return self._reverse(args, kwargs, value)
        return self._forward(args, kwargs)

    def _reverse(self, args: tuple, kwargs: dict, value):
        pull = self.vjp
        outputs = value if isinstance(value, tuple) else (value,)
        inputs = [self.argument(args, kwargs, i) for i in self.indices]
        blocks = []
        for k, out in enumerate(outputs):
            rows = []
            for element in np.ndindex(np.shape(out)):
                seeds = [np.zeros(np.shape(o)) for o in outputs]
                seeds[k][element] = 1.0
                seed = tuple(seeds) if isinstance(value, tuple) else seeds[0]
                grads = pull(*args, **kwargs, **{pull.seed_name: seed})
                rows.append(grads if self.several else (grads,))
            blocks.append(tuple(
                assemble([np.asarray(r[w], dtype=float) for r in rows], np.shape(out), x,
                          first="output")
                for w, x in enumerate(inputs)))
        return self._shape(blocks, isinstance(value, tuple))

    def _forward(self, args: tuple, kwargs: dict):
        """One Jacobian-vector product per element of the differentiated arguments (of
        each leaf with a gradient, for a structure): a block per output leaf and input
        leaf, in the output's structure of the inputs' structures."""
        push = self.jvp
        inputs = [self.argument(args, kwargs, i) for i in self.indices]
        flat = [tree.flatten(x) for x in inputs]
        zeros = [[np.zeros(np.shape(leaf)) if structure == tree.LEAF or has_gradient(leaf) else None
                  for leaf in leaves] for leaves, structure in flat]
        columns: dict[tuple[int, int], list] = {}
        value = None
        for w, (leaves, structure) in enumerate(flat):
            for j, leaf in enumerate(leaves):
                if zeros[w][j] is None:
                    continue
                for element in np.ndindex(np.shape(leaf)):
                    tangents = [list(z) for z in zeros]
                    tangents[w][j] = np.zeros(np.shape(leaf))
                    tangents[w][j][element] = 1.0
                    trees = [tree.unflatten(f[1], t) for f, t in zip(flat, tangents)]
                    tangent = tuple(trees) if self.several else trees[0]
                    value, out = push(*args, **kwargs, **{push.tangent_name: tangent})
                    columns.setdefault((w, j), []).append(tree.leaves(out))
        if value is None:  # every argument is empty: one call for the output's shape
            value = self.fn(*args, **kwargs)
        outputs, out_structure = tree.flatten(value)
        per_output = []
        for k, out in enumerate(outputs):
            per_input = []
            for w, (leaves, structure) in enumerate(flat):
                blocks = [assemble([np.asarray(c[k], dtype=float)
                                    for c in columns.get((w, j), [])], np.shape(out), leaf,
                                   first="input") if zeros[w][j] is not None else None
                          for j, leaf in enumerate(leaves)]
                per_input.append(tree.unflatten(structure, blocks))
            per_output.append(tuple(per_input) if self.several else per_input[0])
        return tree.unflatten(out_structure, per_output)

    def argument(self, args: tuple, kwargs: dict, index: int):
        """The differentiated argument ``index`` of a call, given by position or name."""
        return args[index] if index < len(args) else kwargs[self.names[index]]

    def _shape(self, blocks: list[tuple], tuple_output: bool):
        per_output = [b if self.several else b[0] for b in blocks]
        return tuple(per_output) if tuple_output else per_output[0]

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

    def __call__(self, *args, **kwargs):
        value = self.fn(*args, **kwargs)
        if np.size(value) != 1:
            raise NonScalarOutputError(f"grad needs a scalar output, but {self.fn.__name__} "
                                       f"returns an array of shape {np.shape(value)}")
        gradient = self.jacobian(*args, **kwargs)
        # with the kinds, shapes and dtypes of the arguments, as a generated gradient's
        arguments = tuple(self.jacobian.argument(args, kwargs, i) for i in self.jacobian.indices)
        gradient = tree.map(lambda x, g: None if g is None else as_gradient_of(g, x),
                            arguments if self.jacobian.several else arguments[0], gradient)
        return (value, gradient) if self.with_value else gradient


def _is_structure(value) -> bool:
    return not isinstance(value, tuple) and tree.items(value) is not None


def assemble(parts: list, out_shape: tuple, x, first: str):
    """The block ``out_shape + shape(x)`` from rows (one per output element) or
    columns (one per element of ``x``)."""
    in_shape = np.shape(x)
    dtype = gradient_dtype(x)
    if not parts:
        block = np.zeros(out_shape + in_shape, dtype=dtype)
    elif first == "output":
        block = np.stack(parts).reshape(out_shape + in_shape).astype(dtype, copy=False)
    else:
        stacked = np.stack([np.broadcast_to(p, out_shape) for p in parts], axis=-1)
        block = stacked.reshape(out_shape + in_shape).astype(dtype, copy=False)
    if block.ndim == 0 and isinstance(x, (float, int)):
        return float(block)
    return block
