"""``jit="numba"``: the specialised derivative compiled by ``numba.njit``.

The specialised graph (see :mod:`autodiff.jit.specialize`) is written in
the forms numba takes (sums over one axis at a time, no ``del``, reversed
ranges counted down) and handed to ``numba.njit``. What numba cannot compile is
refused with the construct and the user's line, never run some other way:

- a helper the compiler keeps when shapes are not known statically
  (``unbroadcast`` of a value whose shape depends on the data);
- a call to SciPy (``scipy.special``'s ops) or to a Python function with a rule
  of its own, which numba cannot call;
- anything numba's own type inference rejects (its message, the generated
  line and the user's line it comes from).
"""

from __future__ import annotations

import ast
import linecache
import re
import warnings
from collections.abc import Callable

from autodiff.codegen.compile import compile_generated
from autodiff.codegen.derivative import anchor
from autodiff.codegen.python import RUNTIME_NAMES, generate
from autodiff.errors import AutodiffError
from autodiff.frontend.builder import complex_constant
from autodiff.graph.ir import Const, Graph, Location, Region, walk
from autodiff.graph.scopes import MISSING, Home
from autodiff.jit.leaves import cut

_HINT = 'install it with: pip install "autodiff[jit]"'


def require_numba(derivative: Callable) -> None:
    """Raise a clear error when numba is not installed."""
    try:
        import numba  # noqa: F401
    except ImportError:
        raise AutodiffError(f"jit='numba' needs the numba package to compile "
                            f"{derivative.__name__}", hint=_HINT) from None


def _helpers_called(kernel_text: str) -> list[str]:
    tree = ast.parse(kernel_text)
    return sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
                   and node.id in RUNTIME_NAMES and node.id not in ("np", "math")})


def check_graph(graph: Graph, where: dict | None = None) -> None:
    """Refuse, naming the construct and the user's line, what numba cannot compile.

    The first helper with a line of the user's is named; one without (the
    gradients' final conversion) points at ``where``, the user's ``def``."""
    if graph.complex:  # (its checks of real values are Python's: see transforms.complex_values)
        maker = next((node for node in walk(graph.nodes) if not isinstance(node, Region)
                      and node.loc is not None and (node.op.makes_complex or any(
                          complex_constant(arg) for arg in node.args))), None)
        raise AutodiffError(
            "jit='numba' compiles derivatives of real values, and this one computes with "
            "complex values" + ("" if maker is None else " (from this line on)"),
            **(Location.error_fields(maker.loc) if maker is not None else where or {}),
            hint="use jit=True (NumPy) for this function")
    found = []
    for node in walk(graph.nodes):
        if isinstance(node, Region) and node.kind == "try":
            raise AutodiffError(
                "jit='numba' cannot compile a try statement: numba does not catch exceptions "
                "by their classes as Python does", **Location.error_fields(node.loc),
                hint="use jit=True (NumPy) for this function")
        if isinstance(node, Region):
            continue
        if node.op.raises and not all(isinstance(arg, Const) for arg in node.args):
            raise AutodiffError(
                "jit='numba' raises an exception made of constants only (numba cannot "
                "format its message or raise one the code holds)",
                **Location.error_fields(node.loc),
                hint="give the exception a constant message, or use jit=True (NumPy)")
        kernel = node.op.kernel
        if node.op.inplace is not None and kernel is None:
            text = node.op.inplace(node.named_args)
        else:
            text = kernel(node.named_args) if callable(kernel) else kernel or ""
        helpers = _helpers_called(text) if text else []
        if helpers or "__class__" in text:
            found.append((helpers[0] if helpers else node.op.name, node.loc, False))
        elif node.op.runtime:
            found.append((_called(text, node.op.runtime) or node.op.name, node.loc, True))
    if not found:
        return
    what, loc, library = next((f for f in found if f[1] is not None), found[0])
    fields = Location.error_fields(loc) or where or {}
    if library:
        raise AutodiffError(
            f"jit='numba' cannot compile the call to {what} in the derivative: numba "
            "compiles NumPy's functions and Python's math, not SciPy's or other Python "
            "functions", **fields, hint="use jit=True (NumPy) for this function")
    raise AutodiffError(
        f"jit='numba' cannot compile {what!r}, which stays in the derivative when "
        "shapes or kinds of values are not known before the call", **fields,
        hint="use jit=True (NumPy) for this function, or keep the shapes "
        "independent of the data")


def _called(kernel_text: str, names: dict) -> str | None:
    """The function a kernel calls through one of ``names`` (``scipy.special.i1``)."""
    for node in ast.walk(ast.parse(kernel_text)):
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in names:
                return ast.unparse(node.func)
    return None


def compile_numba(graph: Graph, general: Callable, args: tuple, kwargs: dict,
                  values: dict, env: dict) -> Callable:
    """The specialised graph as a numba-compiled function, compiled for ``args`` now
    (``values``: the same arguments by name; ``env``: what is known of each value of
    the graph). Structured arguments pass their leaves: numba compiles the graph
    between the reads of the leaves and the building of the results, a Python
    function around it does those (:mod:`autodiff.jit.leaves`)."""
    import numba

    around = cut(graph, values, general, env)
    kernel = around.kernel if around is not None else graph
    check_graph(kernel, Location.error_fields(general.where))
    user = anchor(general)
    generated = generate(kernel, Home.of_function(user), numba=True)
    python = compile_generated(generated, user, defaults=kernel.signature.default_values,
                               kwdefaults=kernel.signature.kwdefault_values)
    compiled = numba.njit(python)
    if generated.variables:
        compiled = _reading_variables(compiled, generated.variables)
    function = around.wrap(compiled, general) if around is not None else compiled
    if around is not None and around.variables:  # the global objects it reads as structures
        function = _reading_variables(function, around.variables)
    try:
        with warnings.catch_warnings():  # "np.dot is faster on contiguous arrays"
            warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
            function(*args, **kwargs)
    except (numba.core.errors.NumbaError, NotImplementedError) as error:
        raise _explain(error, general) from None
    function.source = (around.text() + "\n\n" if around is not None else "") + generated.text
    function.graph = graph
    return function


def _reading_variables(compiled: Callable, variables: dict) -> Callable:
    """``compiled``, given the global and closure variables it reads at each call: numba
    would freeze their values when it compiles, and a changed global would be ignored."""
    def call(*args, **kwargs):
        for parameter, (name, scope) in variables.items():
            value = scope.read(name)
            if value is MISSING:
                raise NameError(f"name '{name}' is not defined")
            kwargs[parameter] = value
        return compiled(*args, **kwargs)

    return call


def _explain(error: Exception, general: Callable) -> AutodiffError:
    """numba's complaint, with the generated line and the user's line it comes from."""
    message = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    first = next((line.strip() for line in message.splitlines()
                  if line.strip() and not line.startswith("Failed in")), message.strip())
    fields = {}
    found = re.search(r"File \"(<autodiff .*?>)\", line (\d+)", message)
    if found:
        lines = linecache.getlines(found.group(1))
        index = int(found.group(2)) - 1
        if 0 <= index < len(lines):
            first += f"\n  generated line: {lines[index].strip()}"
            user = _user_line(lines, index)
            if user is not None:
                where = getattr(general, "where", None)
                fields = {"filename": getattr(where, "filename", None), "lineno": user[0],
                          "source_line": user[1]}
    return AutodiffError(f"numba cannot compile the derivative of {general.__name__}: {first}",
                         hint="jit=True runs the same specialised code with NumPy; "
                         ".source_for(*args) shows it", **fields)


def _user_line(lines: list[str], index: int) -> tuple[int, str] | None:
    """(line, text) of the user's line the generated line ``index`` comes from."""
    for line in reversed(lines[:index + 1]):
        match = re.match(r"\s*# (?:grad of |tangent of )?line (\d+)(?: \(in [^)]*\))?: (.*)",
                         line)
        if match:
            return int(match.group(1)), match.group(2).strip()
    return None
