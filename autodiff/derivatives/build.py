"""Building one derivative: the function's graph (:func:`primal`), differentiated by
reverse or forward mode, its outputs arranged for the transform asked for, and
finished as a function (:func:`autodiff.codegen.derivative.finish`)."""

from __future__ import annotations

from collections.abc import Callable

from autodiff.codegen.derivative import finish
from autodiff.derivatives.wrt import Wrt, resolve_parts, resolve_wrt
from autodiff.errors import ArgumentKindError, AutodiffError, NonScalarOutputError, WrtError
from autodiff.frontend import function_to_graph, structures
from autodiff.frontend.builder import GraphBuilder
from autodiff.frontend.structures import NeedsStructure
from autodiff.graph.ir import (
    Const,
    Graph,
    Location,
    Node,
    Region,
    Signature,
    Value,
    operand_values,
    walk,
)
from autodiff.jit.specialize import always_fresh
from autodiff.ops import OPS
from autodiff.ops import structures as structure_ops
from autodiff.ops.custom import CustomGradient
from autodiff.transforms import reverse_mode
from autodiff.transforms.aliases import copy_aliased_gradients, copy_node
from autodiff.transforms.batching import batch
from autodiff.transforms.forward import forward_mode
from autodiff.transforms.optimize import eliminate_dead_code
from autodiff.transforms.optimize import optimize as run_passes
from autodiff.transforms.reverse import TapedDerivativeError


def primal(fn: Callable, specs: dict[str, tuple] | None = None,
           complex_values: bool = False, known: dict | None = None
           ) -> tuple[Graph, Location]:
    """The graph of ``fn`` and where errors about it as a whole point (its ``def``):
    from its source, from the derivative it is, or the call of a function with a
    custom gradient. ``specs`` gives the structures of arguments passed as dicts,
    lists, ... (see :func:`autodiff.frontend.function_to_graph`); ``complex_values``
    says the arguments may be complex (the graph computes with complex values);
    ``known``: the facts of a call signature, for code compiled per call signature
    (see :mod:`autodiff.frontend.signature`)."""
    derived = getattr(fn, "graph", None)
    by_structure = getattr(fn, "by_structure", None)
    if by_structure is not None and (specs is not None or complex_values and not (
            isinstance(derived, Graph) and derived.complex)):
        # that derivative for these specs (and call signature), or compiled for complex
        # values
        return _structured_derivative(by_structure.for_specs(specs or {}, complex_values,
                                                             known), specs or {})
    if by_structure is not None and derived is None:  # compiled per structure alone
        raise fn.reason
    if specs and (isinstance(derived, Graph) or isinstance(fn, CustomGradient)):
        raise ArgumentKindError(
            f"'{fn.__name__}' has a custom gradient: its derivatives take arrays and "
            "numbers, not dicts, lists, tuples or objects of them, yet",
            hint="pass each array as an argument of its own")
    if isinstance(derived, Graph) and getattr(fn, "original", None) is not None:
        graph, _ = derived.copy()
        graph.complex |= complex_values
        # A derivative returning several things (jvp's value and tangent,
        # value_and_grad's pair) is, to a transform, a function returning a tuple.
        if len(graph.outputs) > 1:
            graph.outputs = [tuple(graph.outputs)]
        return graph, fn.where
    if isinstance(fn, CustomGradient):
        graph = _call_graph(fn)
        graph.complex = complex_values
        return graph, _def_line(fn.fn)
    graph, source = function_to_graph(fn, specs, complex_values, known)
    # Loops carry every name they assign: drop what nothing reads (a loop
    # variable unused after its loop), so the graph reads like the function. The
    # leaves of a structured argument stay: each has a gradient, zero if unused.
    leaves = tuple(leaf for group in graph.argument_leaves.values() for leaf in group
                   if isinstance(leaf, Value))
    graph.outputs.append(leaves)
    eliminate_dead_code(graph)
    graph.outputs.pop()
    tree = source.tree
    return graph, Location(source.filename, tree.lineno, source.line(tree.lineno))


def _structured_derivative(derivative: Callable, specs: dict[str, tuple]
                           ) -> tuple[Graph, Location]:
    """The graph of a derivative compiled for ``specs`` (differentiated again), with
    the leaves of its structured params bound as :func:`function_to_graph` binds them:
    the reads it has, and reads of the leaves it does not read."""
    graph, _ = derivative.graph.copy()
    if len(graph.outputs) > 1:
        graph.outputs = [tuple(graph.outputs)]
    existing, reads = {}, {}
    for node in graph.nodes:
        found = None if isinstance(node, Region) else structure_ops.part_read(node, True)
        if found is not None:
            existing[found] = node.out
            reads[node.out] = node
    added = Graph(graph.name, graph.params)
    builder = GraphBuilder(added)
    binder = structures.Binder(lambda op, args, hint: builder.emit(op, args, hint), existing)
    graph.argument_leaves = {}
    for index, param in enumerate(graph.params):
        spec = specs.get(param.hint)
        if spec is not None and structures.is_structured(spec):
            bound = binder.bind(spec, param, param.hint)
            graph.argument_leaves[index] = [leaf for _, leaf in structures.leaves(spec, bound)]
    # The reads the binder found are moved to the top, in the order it found them (a
    # structure before its parts): a part it adds can read a structure inside the
    # argument (``layers_0_1 = layers_0[1]``) that the derivative reads further down.
    moved = [reads[value] for value in binder.reused]
    ids = {id(read) for read in moved}
    kept = [node for node in graph.nodes if id(node) not in ids]
    graph.nodes = moved + added.nodes + kept
    bound = set(binder.reused) | {node.out for node in added.nodes}
    _only_read_by_parts(graph, binder.containers, bound, derivative.where)
    return graph, derivative.where


def _only_read_by_parts(graph: Graph, containers: dict[Value, tuple], bound: set[Value],
                        where: Location) -> None:
    """A structure a derivative uses other than by reading its parts would carry a
    gradient its leaves do not see: refuse it rather than return a wrong one. So would
    a read of a part that is not the one bound to it (``bound``: a second read of the
    same part, or one inside a loop). A gradient copying the structure it is of
    (``p._replace(W=dp_W)``, ``with_fields(self, ...)``) reads its settings alone, when
    it replaces each of its arrays (:func:`_copies_settings_only`). An op passing no gradient may use it whole (a
    write into it: ``params['running_mean'] = m``)."""
    for node in walk(graph.nodes):
        if isinstance(node, Region):
            used = [v for v in operand_values(node.args) if v in containers]
        elif node.op.nondiff_output:
            continue
        else:
            found = structure_ops.part_read(node, True)
            copied = _copies_settings_only(node, containers, where)
            used = [v for v in operand_values(node.args) if v in containers
                    and not (found is not None and found[0] is v and node.out in bound)
                    and not (v is copied and v is node.args[0])]
        if used:
            raise ArgumentKindError(
                f"cannot differentiate this derivative with respect to '{used[0].hint}': "
                "it uses the structure as a whole, not only its parts",
                **Location.error_fields(where),
                hint="differentiate with respect to its arrays passed one by one")
    if any(v in containers for output in graph.outputs for v in operand_values(output)):
        raise ArgumentKindError(
            "cannot differentiate this derivative with respect to a structure it returns "
            "as it is", **Location.error_fields(where),
            hint="differentiate with respect to its arrays passed one by one")


def _copies_settings_only(node: Node, containers: dict[Value, tuple],
                          where: Location) -> Value | None:
    """The structure ``node`` copies (a namedtuple's ``_replace``, ``with_fields``),
    when it is one of ``containers`` and the copy replaces each of its arrays: it reads
    only what carries no gradient (its kind, settings, data). Refuses a copy keeping
    one of its arrays, whose gradient its leaves would not see."""
    op = node.op
    if op.name != "structure" or op.params[:1] != ["like"] or node.args[0] not in containers:
        return None
    like = node.args[0]
    try:
        held, _, _ = structures.part_at(containers[like], op.like_path, like.hint)
    except KeyError:
        return None
    kept = structures.kept_from_like(op.spec, held,
                                     structures.path_text(like.hint, op.like_path))
    if kept:
        raise ArgumentKindError(
            f"cannot differentiate this derivative with respect to '{like.hint}': the "
            f"structure it builds as a copy of it keeps its array {kept[0]} as it is, "
            "whose gradient would not be counted",
            **Location.error_fields(where),
            hint="differentiate with respect to its arrays passed one by one")
    return like


def parameters(graph: Graph, wrt: Wrt, where: Location) -> tuple[list[int], bool]:
    """The params of ``graph`` that ``wrt`` names, and whether it names several."""
    return resolve_wrt(wrt, [p.hint for p in graph.params], graph.name, where)


def parts(graph: Graph, wrt: Wrt, where: Location) -> tuple[list[tuple[int, tuple]], bool]:
    """The params of ``graph`` that ``wrt`` names, each with the path of the part of it
    named (``()`` for all of it), and whether it names several."""
    indices, several, paths = resolve_parts(wrt, [p.hint for p in graph.params], graph.name,
                                            where)
    return list(zip(indices, paths)), several


def _def_line(fn) -> Location:
    return Location.of_function(fn) or Location("<unknown>", 0, "")


def _call_graph(fn: CustomGradient) -> Graph:
    """``def f(*params): return f(*params)`` for a function with a custom gradient."""
    op = fn.op
    params = [Value(name) for name in op.params]
    where = _def_line(fn.fn)
    signature = Signature(positional=list(op.params),
                          default_values=getattr(fn.fn, "__defaults__", None))
    graph = Graph(fn.__name__, params, filename=where.filename, signature=signature)
    out = Value()
    loc = Location(where.filename, where.lineno, f"{fn.__name__}({', '.join(op.params)})")
    graph.nodes.append(Node(op, tuple(params), out, loc, "forward"))
    graph.outputs = [out]
    graph.return_location = loc
    return graph


def add_param(graph: Graph, name: str, param: Value | None = None,
              optional: bool = False) -> Value:
    """A new parameter after the others, named ``name`` unless the function has one of
    that name (see :meth:`~autodiff.graph.ir.Signature.with_parameter`)."""
    taken = {p.hint for p in graph.params}
    while name in taken:
        name += "_"
    param = param if param is not None else Value()
    param.hint = name
    graph.signature, positional = graph.signature.with_parameter(name, optional)
    if positional:
        signature = graph.signature
        graph.params.insert(len(signature.positional_only) + len(signature.positional) - 1,
                            param)
    else:
        graph.params.append(param)
    return param


def build_grad(fn: Callable, wrt: Wrt, *, with_value: bool, optimize: bool, has_aux: bool,
               check_finite: bool = False, specs: dict[str, tuple] | None = None,
               by_structure: Callable | None = None, complex_values: bool = False,
               known: dict | None = None, checkpoint: int | str | None = None) -> Callable:
    """The gradient of ``fn`` by reverse mode. Raises
    :class:`~autodiff.transforms.reverse.TapedDerivativeError` for a derivative whose
    reverse sweep would read a loop's tape (its gradient is then taken by forward mode).

    ``specs``: the structures of the arguments (the gradient of a dict argument is a
    dict with its keys); ``by_structure``: where calls with other structures go;
    ``complex_values``: compiled for complex arguments."""
    graph, where = primal(fn, specs, complex_values, known)
    named, several = parts(graph, wrt, where)
    targets, groups = _targets(graph, named, specs, where)
    output = graph.outputs[0]
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise AutodiffError("has_aux=True needs a function returning (loss, aux)",
                                **Location.error_fields(where),
                                hint="return a pair: the loss, then the rest")
        graph.outputs = list(output)
        output = output[0]
    if isinstance(output, tuple):
        raise NonScalarOutputError(
            "grad needs a function returning one scalar, but this one returns a tuple",
            **Location.error_fields(graph.return_location or where),
            hint="return the loss alone, pass has_aux=True to return (loss, aux), "
            "or use a vector-Jacobian product (ad.vjp)")
    try:
        derivative = reverse_mode(graph, targets, with_value=with_value, optimized=optimize,
                                  checkpoint=checkpoint)
    except TapedDerivativeError:
        if check_finite and not has_aux:
            raise AutodiffError(
                "check_finite=True is not available for the gradient of a derivative "
                "whose reverse sweep reads a loop's tape (it runs by forward mode)",
                **Location.error_fields(where),
                hint="check the inner derivative: ad.grad(f, check_finite=True)") from None
        raise
    derivative.name = fn.__name__ + ("_value_and_grad" if with_value else "_grad")
    outputs = derivative.outputs
    value = outputs[0] if with_value else None
    gradients = outputs[1:] if with_value else outputs
    aux = gradients[len(targets):]
    gradients = _regrouped(derivative, groups, gradients[:len(targets)])
    result = tuple(gradients) if several else gradients[0]
    if has_aux:
        derivative.outputs = ([(value, aux[0]), result] if with_value else [(result, aux[0])])
    else:
        derivative.outputs = [value, result] if with_value else [result]
    return finish(derivative, fn, graph, where, check_finite, by_structure)


def _targets(graph: Graph, named: list[tuple[int, tuple]], specs: dict[str, tuple] | None,
             where: Location):
    """What reverse mode differentiates for the params (and paths into them) ``named``:
    a param itself, or the leaves of one passed as a structure that have gradients (its
    arrays and floats), those under the path. Also, per param, ``(index, spec, kinds,
    path)``: the spec of the part differentiated (None for an array) and its leaves'."""
    targets: list[int | Value] = []
    groups = []
    for index, path in named:
        leaves = graph.argument_leaves.get(index)
        name = graph.params[index].hint
        if leaves is None and not path:
            targets.append(index)
            groups.append((index, None, None, path))
            continue
        if leaves is None and specs is not None:  # passed as an array
            raise WrtError(f"wrt={structures.path_text(name, path)!r}: {name} is an array "
                           "or a number here, with no parts", **Location.error_fields(where),
                           hint=f"pass {name} as a structure, or name it whole")
        if leaves is None:  # a part of an argument compiled as an array
            raise NeedsStructure(
                f"wrt names a part of '{name}', which autodiff compiles for the structure "
                "a call passes", **Location.error_fields(where),
                hint="call the derivative with the structure")
        spec = specs[name]
        try:
            spec, start, stop = structures.part_at(spec, path, name)
        except KeyError as error:
            raise WrtError(f"wrt={structures.path_text(name, path)!r}: {error.args[0]}",
                           **Location.error_fields(where),
                           hint="name a part that the argument passed holds") from None
        if spec[0] in ("static", "opaque"):  # a string, None, an object: no gradient
            what = type(spec[1]).__name__ if spec[0] == "static" else "object"
            setting = spec[0] == "static" and type(spec[1]) in (int, bool) and not path
            raise ArgumentKindError(
                f"cannot differentiate with respect to "
                f"'{structures.path_text(name, path)}', a {what}" + (
                    ": its code is compiled for each call's ints, which are settings there"
                    if setting else ": only floats, ints, arrays and structures of them "
                    "have gradients"),
                hint="pass the value as a float array, or leave the argument out of wrt",
                **Location.error_fields(where))
        leaves = leaves[start:stop]
        if spec == structures.ARRAY:  # one leaf: its gradient alone
            targets.append(leaves[0])
            groups.append((index, None, None, path))
            continue
        kinds = [leaf_spec for leaf_spec, _ in structures.leaves(spec, None, flat=leaves)]
        differentiated = [leaf for kind, leaf in zip(kinds, leaves) if kind == structures.ARRAY]
        targets.extend(differentiated)
        groups.append((index, spec, kinds, path))
    return targets, groups


def _regrouped(derivative: Graph, groups: list, gradients: list) -> list:
    """The gradients of each differentiated param: one value, or for a structure one
    value its leaves' gradients are built into (``{'W': dparams_W, ...}``)."""
    # one array for two gradients (merged as common subexpressions): two arrays
    derivative.outputs = list(gradients)
    copy_aliased_gradients(derivative)
    gradients = iter(derivative.outputs)
    builder = GraphBuilder(derivative, phase="backward")
    result = []
    for index, spec, kinds, path in groups:
        if spec is None:
            result.append(next(gradients))
            continue
        parts_ = [next(gradients) if kind == structures.ARRAY else Const(None) for kind in kinds]
        like = structures.needs_like(spec)
        param = derivative.params[index]
        names = iter(f"a{i}" for i in range(len(parts_)))
        template = structures.structure_template(spec, structures.path_text("like", path),
                                                 names, with_like=like)
        op = structure_ops.structure(template, len(parts_), like, spec, path)
        result.append(builder.emit(op, ((param,) if like else ()) + tuple(parts_),
                                   "d" + param.hint + "".join(
                                       f"_{structures.word(key)}" for key in path)))
    return result


def build_vjp(fn: Callable, wrt: Wrt, *, optimize: bool, check_finite: bool = False,
              specs: dict[str, tuple] | None = None,
              by_structure: Callable | None = None, complex_values: bool = False,
              known: dict | None = None, checkpoint: int | str | None = None) -> Callable:
    """The vector-Jacobian product of ``fn``: ``(*args, seed)``; the gradient of a
    structured argument has its structure."""
    graph, where = primal(fn, specs, complex_values, known)
    named, several = parts(graph, wrt, where)
    targets, groups = _targets(graph, named, specs, where)
    seed = add_param(graph, "seed", optional=True)
    derivative = reverse_mode(graph, targets, optimized=optimize, seed=seed,
                              checkpoint=checkpoint)
    graph.params = [param for param in graph.params if param is not seed]  # fn's own graph
    derivative.name = fn.__name__ + "_vjp"
    # the seed handed back as it is (f(x) = x): a copy
    copy_aliased_gradients(derivative, lambda g: g in derivative.params)
    gradients = _regrouped(derivative, groups, list(derivative.outputs))
    derivative.outputs = [tuple(gradients) if several else gradients[0]]
    function = finish(derivative, fn, graph, where, check_finite, by_structure)
    function.seed_name = seed.hint
    return function


def build_jvp(fn: Callable, wrt: Wrt, *, optimize: bool, with_value: bool,
              name: str = "jvp", tangent: str = "tangent", check_finite: bool = False,
              specs: dict[str, tuple] | None = None,
              by_structure: Callable | None = None, complex_values: bool = False,
               known: dict | None = None, batched: bool = False) -> Callable:
    """The Jacobian-vector product of ``fn`` by forward mode: ``(*args, tangent)``; the
    tangent of a structured argument has its structure. ``batched``: each tangent leaf
    carries a leading axis of examples, and so does each output tangent computed from
    them (``transforms/batching.py``; ``Unbatchable`` where it cannot)."""
    graph, where = primal(fn, specs, complex_values, known)
    named, several = parts(graph, wrt, where)
    targets, groups = _targets(graph, named, specs, where)
    derivative = forward_mode(graph, targets, optimized=False)
    derivative.name = fn.__name__ + "_" + name
    tangents = derivative.tangent_params
    derivative.params = [p for p in derivative.params if p not in set(tangents)]
    if not several and groups[0][1] is None:
        param = add_param(derivative, tangent, tangents[0])
    else:  # x_dot, y_dot = tangent; params_W_dot = tangent['W']
        param = add_param(derivative, tangent)
        leaf_tangents = iter(tangents)
        reads = []
        for position, (index, spec, _, path) in enumerate(groups):
            if several:
                whole = next(leaf_tangents) if spec is None else Value(
                    derivative.params[index].hint + "".join(
                        f"_{structures.word(key)}" for key in path) + "_dot")
                reads.append(Node(OPS["getitem"], (param, Const(position)), whole, None,
                                  "tangent"))
            else:
                whole = param
            if spec is not None:
                reads += structures.leaf_reads(spec, whole, leaf_tangents, "tangent")
        derivative.nodes[:0] = reads
    pairs = tuple((derivative.params[target], tangent) for target, tangent in zip(
        targets, tangents) if isinstance(target, int))
    if derivative.complex and pairs:  # a real argument's tangent is real
        derivative.nodes.append(Node(OPS["real_tangents"], (pairs,), Value("checked"), None,
                                     "tangent"))
    half = len(derivative.outputs) // 2
    values, outs = derivative.outputs[:half], derivative.outputs[half:]
    # an output tangent that is the caller's tangent or a view of it (f(x) = x.T), or
    # one array for two outputs: a copy
    seen: set = set()

    def fresh(out):
        if isinstance(out, tuple):
            return tuple(fresh(o) for o in out)
        if isinstance(out, Value) and (out in seen or not always_fresh(out, set())):
            node = copy_node(out, "tangent")
            derivative.nodes.append(node)
            out = node.out
        seen.add(out)
        return out

    outs = [fresh(o) for o in outs]
    derivative.outputs = [values[0], outs[0]] if with_value else [outs[0]]
    if optimize:
        run_passes(derivative)
    else:
        eliminate_dead_code(derivative)
    if batched:
        batch(derivative, tangents)
        eliminate_dead_code(derivative)
    function = finish(derivative, fn, graph, where, check_finite, by_structure)
    function.tangent_name = param.hint
    return function
