"""The public transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp``,
``jacobian`` and ``hessian``.

What ``grad``, ``value_and_grad``, ``vjp``, ``jvp`` and ``hvp`` return is the
generated derivative itself, a plain Python function, so calling it costs
nothing beyond the generated code. It carries ``.source`` (the generated
text), ``.graph`` (the derivative graph), ``.original_graph`` and
``.original`` (the function it was derived from). A generated derivative is
valid input to every transform, and may be called from a function being
differentiated, which gives higher derivatives: ``grad(grad(f))``,
``hessian`` (forward mode over the reverse-mode gradient), ``hvp``.

>>> import numpy as np
>>> import autodiff as ad
>>> def f(x):
...     return np.sum(x ** 2)
>>> ad.grad(f)(np.array([1.0, 2.0]))  # doctest: +SKIP
array([2., 4.])
"""

from __future__ import annotations

import ast
import copy
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from autodiff.codegen import compile_generated, generate
from autodiff.errors import AutodiffError, NonScalarOutputError, WrtError, raised_at_call
from autodiff.frontend import function_to_graph
from autodiff.graph.ir import Const, Graph, Location, Node, Region, Value
from autodiff.graph.scopes import Home
from autodiff.jit.dispatch import backend_of, specialized_derivative
from autodiff.jit.specialize import always_fresh
from autodiff.ops import OPS, registry
from autodiff.ops.custom import CustomGradient
from autodiff.transforms import reverse_mode
from autodiff.transforms.forward import forward_mode
from autodiff.transforms.optimize import eliminate_dead_code
from autodiff.transforms.reverse import TapedDerivativeError

Wrt = int | str | Sequence[int | str]

# Derivatives built are kept on the user's function itself, keyed by the
# transform and its options, at most MAX_PER_FUNCTION each. A derivative refers
# back to its function (``.original``), so a table outside it would keep every
# function alive; on the function, the two go together when it is collected.
_CACHE = "__autodiff_derivatives__"
_lock = threading.RLock()
MAX_PER_FUNCTION = 32


# ----- the transforms -----


def _transform(fn: Callable) -> Callable:
    """A public transform: called in code being differentiated (``ad.grad(f)(x)``), it
    runs while compiling; its errors end the traceback at the user's call."""
    fn = raised_at_call(fn)
    fn.builds_derivative = True
    return fn



@_transform
def grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True,
         has_aux: bool = False, jit: bool | str = False, check_finite: bool = False):
    """The gradient of the scalar function ``fn``, as generated Python source.

    ``wrt`` picks the arguments: an index, a name, or a tuple of them (the
    derivative then returns a tuple of gradients in that order). With
    ``has_aux``, ``fn`` returns ``(loss, aux)`` and the derivative returns
    ``(gradient, aux)``; ``aux`` is passed through, not differentiated.

    ``jit=True`` specialises the derivative to each new signature of argument
    kinds, shapes and dtypes on first call (``.source_for(*args)`` shows that
    code); ``jit="numba"`` compiles the specialised code with numba.

    ``check_finite=True`` checks the arguments and the result of every
    generated statement, and raises :class:`~autodiff.errors.NonFiniteError` at
    the first NaN or infinity, naming the statement and the user's line it
    comes from (slower: a debugging mode, like anomaly detection).

    >>> import numpy as np, autodiff as ad
    >>> @ad.grad
    ... def f(x):
    ...     return np.sum(np.sin(x))
    >>> f(np.zeros(2))  # doctest: +SKIP
    array([1., 1.])
    """
    if fn is None:
        return lambda f: grad(f, wrt=wrt, optimize=optimize, has_aux=has_aux, jit=jit,
                              check_finite=check_finite)
    return _derivative(fn, ("grad", _wrt_key(wrt), optimize, has_aux, check_finite),
                       lambda: _build_grad(fn, wrt, with_value=False, optimize=optimize,
                                           has_aux=has_aux, check_finite=check_finite),
                       jit, optimize, check_finite)


@_transform
def value_and_grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True,
                   has_aux: bool = False, jit: bool | str = False, check_finite: bool = False):
    """Like :func:`grad`, but the derivative returns ``(fn(...), gradient)``; with
    ``has_aux``, ``((loss, aux), gradient)``.

    >>> import autodiff as ad
    >>> ad.value_and_grad(lambda x: x * x)(3.0)  # doctest: +SKIP
    (9.0, 6.0)
    """
    if fn is None:
        return lambda f: value_and_grad(f, wrt=wrt, optimize=optimize, has_aux=has_aux,
                                        jit=jit, check_finite=check_finite)
    return _derivative(fn, ("value_and_grad", _wrt_key(wrt), optimize, has_aux, check_finite),
                       lambda: _build_grad(fn, wrt, with_value=True, optimize=optimize,
                                           has_aux=has_aux, check_finite=check_finite),
                       jit, optimize, check_finite)


@_transform
def vjp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False,
        check_finite: bool = False):
    """The vector-Jacobian product of ``fn``: a function ``(*args, seed)`` returning
    the gradients of ``sum(seed * fn(*args))`` (like ``out.backward(seed)``).

    The seed has the output's shape; for a function returning a tuple it is a
    tuple with one seed per output. Omitted, it is 1.0 and the output must be
    a scalar: then ``vjp`` is ``grad``.

    >>> import numpy as np, autodiff as ad
    >>> pull = ad.vjp(lambda x: x * x)
    >>> pull(np.array([1.0, 2.0]), np.array([1.0, 10.0]))  # doctest: +SKIP
    array([ 2., 40.])
    """
    return _derivative(fn, ("vjp", _wrt_key(wrt), optimize, check_finite),
                       lambda: _build_vjp(fn, wrt, optimize=optimize, check_finite=check_finite),
                       jit, optimize, check_finite)


@_transform
def jvp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False,
        check_finite: bool = False):
    """The Jacobian-vector product of ``fn`` by forward mode: a function
    ``(*args, tangent)`` returning ``(fn(*args), tangent of the output)``.

    The tangent has the shape of the differentiated argument (a tuple of them
    when ``wrt`` names several); the output's tangent has the output's shape
    (a tuple for a tuple output).

    >>> import numpy as np, autodiff as ad
    >>> push = ad.jvp(np.sin)  # doctest: +SKIP
    """
    return _derivative(fn, ("jvp", _wrt_key(wrt), optimize, check_finite),
                       lambda: _build_jvp(fn, wrt, optimize=optimize, with_value=True,
                                          check_finite=check_finite),
                       jit, optimize, check_finite)


@_transform
def hvp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True):
    """The Hessian-vector product of the scalar ``fn``: ``(*args, v)`` returning
    ``H @ v``, by forward mode over the gradient, without building ``H``.

    >>> import numpy as np, autodiff as ad
    >>> ad.hvp(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]), np.ones(2))  # doctest: +SKIP
    array([ 6., 12.])
    """
    return _derivative(fn, ("hvp", _wrt_key(wrt), optimize),
                       lambda: _build_jvp(grad(fn, wrt=wrt, optimize=optimize), wrt,
                                          optimize=optimize, with_value=False, name="hvp",
                                          tangent="v"))


@_transform
def jacobian(fn: Callable, *, wrt: Wrt = 0, mode: str | None = None, optimize: bool = True):
    """The Jacobian of ``fn``, shaped ``output.shape + argument.shape``.

    ``mode="rev"`` runs one vector-Jacobian product per output element,
    ``mode="fwd"`` one Jacobian-vector product per argument element; by default
    the cheaper one, reverse when the output has fewer elements than the
    arguments. Several ``wrt`` give a tuple (one block per argument), a tuple
    output a tuple of those. ``.source`` shows the generated product(s) it calls.

    >>> import numpy as np, autodiff as ad
    >>> ad.jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))  # doctest: +SKIP
    array([[2., 0.],
           [0., 4.]])
    """
    if mode not in (None, "rev", "fwd"):
        raise ValueError(f"mode must be 'rev', 'fwd' or None (automatic), not {mode!r}")
    return _derivative(fn, ("jacobian", _wrt_key(wrt), mode, optimize),
                       lambda: Jacobian(fn, wrt, mode, optimize))


@_transform
def hessian(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True):
    """The Hessian of the scalar ``fn``: forward mode over the reverse-mode gradient.

    Shaped ``argument.shape + argument.shape``; several ``wrt`` give a tuple of
    tuples of blocks, ``H[i][j]`` the derivative of gradient ``i`` w.r.t. argument ``j``.

    >>> import numpy as np, autodiff as ad
    >>> ad.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))  # doctest: +SKIP
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return _derivative(fn, ("hessian", _wrt_key(wrt), optimize),
                       lambda: jacobian(grad(fn, wrt=wrt, optimize=optimize), wrt=wrt,
                                        mode="fwd", optimize=optimize))


# ----- building -----


def _derivative(fn: Callable, key: tuple, build: Callable[[], Callable],
                jit: bool | str = False, optimize: bool = True, check_finite: bool = False):
    backend = backend_of(jit)
    if check_finite and backend == "numba":
        raise ValueError("check_finite=True runs in Python: use it with jit=True or "
                         "jit=False, not jit='numba'")
    if backend is not None:  # the general derivative, specialised per signature on call
        return _derivative(fn, (*key, "jit", backend),
                           lambda: specialized_derivative(_derivative(fn, key, build), backend,
                                                          optimize))
    key = (*key, registry.generation)  # a rule registered since: build again
    with _lock:
        built = _derivatives_of(fn)
        cached = built.get(key) if built is not None else None
        if cached is not None:
            return cached
        derivative = build()
        if built is not None:
            if len(built) >= MAX_PER_FUNCTION:  # drop the oldest
                del built[next(iter(built))]
            built[key] = derivative
        return derivative


def _derivatives_of(fn: Callable) -> dict | None:
    """The derivatives built of ``fn`` (None if it cannot hold them).

    ``functools.wraps`` copies a function's ``__dict__`` to its wrapper: the
    table names its owner, so a wrapper never takes its wrapped function's."""
    if not isinstance(fn, (types.FunctionType, CustomGradient, Jacobian, ForwardGradient)):
        return None
    owner, built = fn.__dict__.get(_CACHE, (None, None))
    if owner is not fn:
        built = {}
        fn.__dict__[_CACHE] = (fn, built)
    return built


@dataclass
class _Where:
    """Where errors about the function as a whole point: its ``def`` line."""

    filename: str
    lineno: int | None
    source_line: str

    def __call__(self) -> dict:
        return {"filename": self.filename, "lineno": self.lineno,
                "source_line": self.source_line}


def _primal(fn: Callable) -> tuple[Graph, _Where]:
    """The graph of ``fn``: from its source, from the derivative it is, or the call of
    a function with a custom gradient."""
    derived = getattr(fn, "graph", None)
    if isinstance(derived, Graph) and getattr(fn, "original", None) is not None:
        graph, _ = derived.copy()
        # A derivative returning several things (jvp's value and tangent,
        # value_and_grad's pair) is, to a transform, a function returning a tuple.
        if len(graph.outputs) > 1:
            graph.outputs = [tuple(graph.outputs)]
        return graph, fn.where
    if isinstance(fn, CustomGradient):
        return _call_graph(fn), _where_of(fn.fn)
    graph, source = function_to_graph(fn)
    # Loops carry every name they assign: drop what nothing reads (a loop
    # variable unused after its loop), so the graph reads like the function.
    eliminate_dead_code(graph)
    tree = source.tree
    return graph, _Where(source.filename, tree.lineno, source.line(tree.lineno))


def _where_of(fn) -> _Where:
    code = getattr(fn, "__code__", None)
    if code is None:
        return _Where("<unknown>", None, "")
    return _Where(code.co_filename, code.co_firstlineno, "")


def _call_graph(fn: CustomGradient) -> Graph:
    """``def f(*params): return f(*params)`` for a function with a custom gradient."""
    op = fn.op
    params = [Value(name) for name in op.params]
    graph = Graph(fn.__name__, params, filename=_where_of(fn.fn).filename)
    out = Value()
    where = _where_of(fn.fn)
    loc = Location(where.filename, where.lineno or 0, f"{fn.__name__}({', '.join(op.params)})")
    graph.nodes.append(Node(op, tuple(params), out, loc, "forward"))
    graph.outputs = [out]
    graph.return_location = loc
    graph.arguments = ast.parse(f"def f({', '.join(op.params)}): pass").body[0].args
    graph.defaults = getattr(fn.fn, "__defaults__", None)
    return graph


def _anchor(fn: Callable) -> types.FunctionType:
    """The user function whose module, closure and defaults a derivative runs with."""
    while getattr(fn, "original", None) is not None:
        fn = fn.original
    if isinstance(fn, CustomGradient):
        fn = fn.fn
    return fn if isinstance(fn, types.FunctionType) else _blank


def _blank(): ...


def _finish(graph: Graph, fn: Callable, original_graph: Graph, where: _Where,
            check_finite: bool = False) -> Callable:
    _distinct_gradients(graph)
    anchor = _anchor(fn)
    generated = generate(graph, Home.of_function(anchor), check_finite=check_finite)
    function = compile_generated(generated, anchor, defaults=getattr(graph, "defaults", None),
                                 kwdefaults=getattr(graph, "kwdefaults", None),
                                 where=(where.filename, where.lineno, where.source_line))
    function.source = generated.text
    function.check_finite = check_finite
    function.graph = graph
    function.original_graph = original_graph
    function.original = fn
    function.where = where
    return function


def _distinct_gradients(graph: Graph) -> None:
    """Two gradients computed as one value (merged as common subexpressions) are
    returned as two arrays: the second is converted from a copy."""
    converted: set = set()
    nodes = []
    for node in graph.nodes:
        if not isinstance(node, Region) and node.op.name == "as_gradient_of":
            g = node.args[0]
            if isinstance(g, Value) and g in converted:
                copy_node = _copy_node(g, node.phase)
                nodes.append(copy_node)
                node.args = (copy_node.out, *node.args[1:])
            converted.add(g)
        nodes.append(node)
    graph.nodes = nodes


def _copy_node(value: Value, phase: str) -> Node:
    """A copy of ``value``: a result the caller may write into without changing an
    argument."""
    return Node(OPS["copy"], (value,), Value(value.hint), None, phase)


def _new_array(graph: Graph, value: Value, phase: str) -> Value:
    """A copy of ``value`` made at the end of ``graph``."""
    node = _copy_node(value, phase)
    graph.nodes.append(node)
    return node.out


def _add_param(graph: Graph, name: str, param: Value | None = None,
               optional: bool = False) -> Value:
    """A new parameter after the others, named ``name`` unless the function has one of
    that name: positional (``None`` by default if ``optional``), or keyword-only when
    the function has defaults, which would make a positional one ambiguous."""
    taken = {p.hint for p in graph.params}
    while name in taken:
        name += "_"
    param = param if param is not None else Value()
    param.hint = name
    arguments = copy.deepcopy(graph.arguments)
    if arguments.defaults or getattr(graph, "defaults", None):
        arguments.kwonlyargs.append(ast.arg(name))
        arguments.kw_defaults.append(ast.Constant(None) if optional else None)
        if optional:
            graph.kwdefaults = {**(getattr(graph, "kwdefaults", None) or {}), name: None}
        graph.params.append(param)
    else:
        arguments.args.append(ast.arg(name))
        if optional:
            arguments.defaults.append(ast.Constant(None))
            graph.defaults = (None,)
        positional = len(arguments.posonlyargs) + len(arguments.args) - 1
        graph.params.insert(positional, param)
    graph.arguments = arguments
    return param


def _build_grad(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool, has_aux: bool,
                check_finite: bool = False):
    graph, where = _primal(fn)
    indices, several = _resolve_wrt(graph, wrt, where)
    output = graph.outputs[0]
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise AutodiffError("has_aux=True needs a function returning (loss, aux)",
                                **where(), hint="return a pair: the loss, then the rest")
        primal = graph
        primal.outputs = list(output)
        output = output[0]
    else:
        primal = graph
    if isinstance(output, tuple):
        loc = graph.return_location
        at = _Where(loc.filename, loc.lineno, loc.text) if loc else where
        raise NonScalarOutputError(
            "grad needs a function returning one scalar, but this one returns a tuple",
            **at(), hint="return the loss alone, pass has_aux=True to return (loss, aux), "
            "or use a vector-Jacobian product (ad.vjp)")
    try:
        derivative = reverse_mode(primal, indices, with_value=with_value, optimized=optimize)
    except TapedDerivativeError:
        if has_aux:
            raise
        if check_finite:
            raise AutodiffError(
                "check_finite=True is not available for the gradient of a derivative "
                "whose reverse sweep reads a loop's tape (it runs by forward mode)", **where(),
                hint="check the inner derivative: ad.grad(f, check_finite=True)") from None
        # A derivative with a loop (grad of grad): its gradient by forward mode over it.
        return ForwardGradient(fn, wrt, with_value, optimize)
    derivative.name = fn.__name__ + ("_value_and_grad" if with_value else "_grad")
    outputs = derivative.outputs
    value = outputs[0] if with_value else None
    gradients = outputs[1:] if with_value else outputs
    aux = gradients[len(indices):]
    gradients = gradients[:len(indices)]
    result = tuple(gradients) if several else gradients[0]
    if has_aux:
        derivative.outputs = ([(value, aux[0]), result] if with_value else [(result, aux[0])])
    else:
        derivative.outputs = [value, result] if with_value else [result]
    return _finish(derivative, fn, graph, where, check_finite)


def _build_vjp(fn: Callable, wrt: Wrt, *, optimize: bool, check_finite: bool = False):
    graph, where = _primal(fn)
    indices, several = _resolve_wrt(graph, wrt, where)
    seed = _add_param(graph, "seed", optional=True)
    derivative = reverse_mode(graph, indices, optimized=optimize, seed=seed)
    graph.params = [param for param in graph.params if param is not seed]  # fn's own graph
    derivative.name = fn.__name__ + "_vjp"
    nodes = []
    for node in derivative.nodes:  # the seed handed back as it is (f(x) = x): a copy
        if node.op.name == "as_gradient_of" and node.args[0] in derivative.params:
            copy_node = _copy_node(node.args[0], node.phase)
            nodes.append(copy_node)
            node.args = (copy_node.out, *node.args[1:])
        nodes.append(node)
    derivative.nodes = nodes
    result = tuple(derivative.outputs) if several else derivative.outputs[0]
    derivative.outputs = [result]
    function = _finish(derivative, fn, graph, where, check_finite)
    function.seed_name = seed.hint
    return function


def _build_jvp(fn: Callable, wrt: Wrt, *, optimize: bool, with_value: bool,
               name: str = "jvp", tangent: str = "tangent", check_finite: bool = False):
    graph, where = _primal(fn)
    indices, several = _resolve_wrt(graph, wrt, where)
    derivative = forward_mode(graph, indices, optimized=False)
    derivative.name = fn.__name__ + "_" + name
    tangents = derivative.tangent_params
    derivative.params = derivative.params[:len(derivative.params) - len(tangents)]
    if several:  # x_dot, y_dot = tangent
        param = _add_param(derivative, tangent)
        derivative.nodes[:0] = [Node(OPS["getitem"], (param, Const(index)), value, None,
                                     "tangent") for index, value in enumerate(tangents)]
    else:
        param = _add_param(derivative, tangent, tangents[0])
    half = len(derivative.outputs) // 2
    values, outs = derivative.outputs[:half], derivative.outputs[half:]
    # an output tangent that is the caller's tangent or a view of it (f(x) = x.T), or
    # one array for two outputs: a copy
    seen: set = set()

    def fresh(out):
        if isinstance(out, tuple):
            return tuple(fresh(o) for o in out)
        if isinstance(out, Value) and (out in seen or not always_fresh(out, set())):
            out = _new_array(derivative, out, "tangent")
        seen.add(out)
        return out

    outs = [fresh(o) for o in outs]
    derivative.outputs = [values[0], outs[0]] if with_value else [outs[0]]
    if optimize:
        from autodiff.transforms.optimize import optimize as run_passes

        run_passes(derivative)
    else:
        eliminate_dead_code(derivative)
    function = _finish(derivative, fn, graph, where, check_finite)
    function.tangent_name = param.hint
    return function


# ----- Jacobians from products -----


class Jacobian:
    """The Jacobian of a function, row by row (reverse) or column by column (forward)."""

    def __init__(self, fn: Callable, wrt: Wrt, mode: str | None, optimize: bool) -> None:
        self.fn, self.wrt, self.mode, self.optimize = fn, wrt, mode, optimize
        graph, where = _primal(fn)
        self.indices, self.several = _resolve_wrt(graph, wrt, where)
        self.__name__ = fn.__name__ + "_jacobian"
        self.__doc__ = f"The Jacobian of {fn.__name__}."

    @property
    def vjp(self) -> Callable:
        return vjp(self.fn, wrt=self.wrt, optimize=self.optimize)

    @property
    def jvp(self) -> Callable:
        return jvp(self.fn, wrt=self.wrt, optimize=self.optimize)

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
        if self.mode == "fwd":
            return self._forward(args, kwargs)
        value = self.fn(*args, **kwargs)
        if self.mode == "rev":
            return self._reverse(args, kwargs, value)
        outputs = value if isinstance(value, tuple) else (value,)
        inputs = sum(np.size(_argument(self.fn, args, kwargs, i)) for i in self.indices)
        if sum(np.size(o) for o in outputs) < inputs:
            return self._reverse(args, kwargs, value)
        return self._forward(args, kwargs)

    def _reverse(self, args: tuple, kwargs: dict, value):
        pull = self.vjp
        outputs = value if isinstance(value, tuple) else (value,)
        inputs = [_argument(self.fn, args, kwargs, i) for i in self.indices]
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
                _assemble([np.asarray(r[w], dtype=float) for r in rows], np.shape(out), x,
                          first="output")
                for w, x in enumerate(inputs)))
        return self._shape(blocks, isinstance(value, tuple))

    def _forward(self, args: tuple, kwargs: dict):
        push = self.jvp
        inputs = [_argument(self.fn, args, kwargs, i) for i in self.indices]
        columns: list[list] = [[] for _ in inputs]
        value = None
        for w, x in enumerate(inputs):
            for element in np.ndindex(np.shape(x)):
                tangents = [np.zeros(np.shape(v)) for v in inputs]
                tangents[w][element] = 1.0
                tangent = tuple(tangents) if self.several else tangents[0]
                value, out = push(*args, **kwargs, **{push.tangent_name: tangent})
                columns[w].append(out if isinstance(value, tuple) else (out,))
        if value is None:  # every argument is empty: one call for the output's shape
            value = self.fn(*args, **kwargs)
        outputs = value if isinstance(value, tuple) else (value,)
        blocks = [tuple(_assemble([np.asarray(c[k], dtype=float) for c in columns[w]],
                                  np.shape(out), x, first="input")
                        for w, x in enumerate(inputs))
                  for k, out in enumerate(outputs)]
        return self._shape(blocks, isinstance(value, tuple))

    def _shape(self, blocks: list[tuple], tuple_output: bool):
        per_output = [b if self.several else b[0] for b in blocks]
        return tuple(per_output) if tuple_output else per_output[0]

    def __repr__(self) -> str:
        return f"<jacobian of {self.fn.__name__}, mode={self.mode or 'auto'}>"


class ForwardGradient:
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
        return (value, gradient) if self.with_value else gradient


def _argument(fn: Callable, args: tuple, kwargs: dict, index: int):
    if index < len(args):
        return args[index]
    graph, _ = _primal(fn)
    return kwargs[graph.params[index].hint]


def _assemble(parts: list, out_shape: tuple, x, first: str):
    """The block ``out_shape + shape(x)`` from rows (one per output element) or
    columns (one per element of ``x``)."""
    in_shape = np.shape(x)
    dtype = np.result_type(x, 1.0) if np.ndim(x) or isinstance(x, np.generic) else np.float64
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


# ----- arguments -----


def _wrt_key(wrt: Wrt) -> tuple:
    # wrt=1 returns a gradient, wrt=(1,) a 1-tuple: they are different derivatives.
    return ("several", *wrt) if isinstance(wrt, (tuple, list)) else ("one", wrt)


def _resolve_wrt(graph: Graph, wrt: Wrt, where: _Where) -> tuple[list[int], bool]:
    names = [p.hint for p in graph.params]
    several = isinstance(wrt, (tuple, list))
    items = list(wrt) if several else [wrt]
    signature = f"{graph.name}({', '.join(names)})"
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise WrtError(f"wrt must name arguments by index or name, got {item!r}", **where())
        if isinstance(item, str):
            if item not in names:
                raise WrtError(f"wrt={item!r} is not an argument of {signature}", **where())
            index = names.index(item)
        else:
            if not -len(names) <= item < len(names):
                raise WrtError(f"wrt={item} is out of range: {signature} has "
                               f"{len(names)} argument(s)", **where())
            index = item % len(names)
        if index in indices:
            raise WrtError(f"wrt names the argument {names[index]!r} twice", **where())
        indices.append(index)
    if several and not indices:
        raise WrtError("wrt is empty: name at least one argument", **where())
    return indices, several

