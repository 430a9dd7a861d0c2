"""The ``autodiff`` command line: derivatives, graphs and gradient checks of a file's function.

Each command takes a function as ``FILE.py:FUNC``, imports the file as a module
of its own and hands the function to the public API. Errors are one line on
stderr, ``autodiff: error: ...``; the exit code is 2 for a mistake on the
command line, 1 when the user's code or the check fails.

>>> main(["grad", "model.py:loss", "--wrt", "W1,b1"])  # doctest: +SKIP
def loss_grad(W1, b1, W2, b2, x, t):
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import itertools
import os
import pkgutil
import runpy
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from autodiff import api, errors, tree
from autodiff.codegen.highlight import highlight, supports_color
from autodiff.tools import check, compare
from autodiff.version import __version__


class UsageError(Exception):
    """A mistake on the command line: a missing file, an unknown name, a bad shape."""


class CommandError(Exception):
    """The command ran but could not do its job (exit code 1)."""


# ----- FILE.py:FUNC -----

_module_ids = itertools.count()
_PREFIX = "_autodiff_cli_"  # of the names user files are imported under


def _import_file(path: Path):
    """Import ``path`` as a module registered in sys.modules, as the compiler reads
    source through ``inspect``, which finds a function's file via its module."""
    name = f"{_PREFIX}{next(_module_ids)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # The file's own imports (a helper module beside it) must resolve as when run directly.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        where = _describe(error, {path}) or f"{type(error).__name__}: {error}"
        raise CommandError(f"importing {path.name} failed: {where}") from error
    finally:
        sys.path.remove(str(path.parent))
    return module


def load_function(target: str) -> Callable:
    """The function named by ``FILE.py:FUNC``, imported from its file.

    >>> load_function("model.py:loss")  # doctest: +SKIP
    <function loss at 0x...>
    """
    file, sep, name = target.rpartition(":")
    if not sep or not file or "/" in name or "\\" in name or name.endswith(".py"):
        file, name = target, ""  # "C:\model.py" has a colon but no function
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"no such file: {file!r}")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as error:
        raise UsageError(f"{path.name}:{error.lineno}: syntax error: {error.msg}") from None
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    defined = f"{path.name} defines " + (", ".join(functions) or "no functions")
    if not name:
        example = f"{path.name}:{functions[0] if functions else 'loss'}"
        raise UsageError(f"name the function after the file, as in {example} ({defined})")
    function = getattr(_import_file(path.resolve()), name, None)
    if function is None or not callable(function):
        raise UsageError(f"{path.name} has no function {name!r} ({defined})")
    return function


def _describe(error: BaseException, files: set[Path]) -> str | None:
    """``model.py:12: ValueError: ...``: where in the user's ``files`` ``error`` was raised."""
    frames = [frame for frame in inspect.getinnerframes(error.__traceback__, context=0)
              if Path(frame.filename) in files]
    if not frames:
        return None
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}: {type(error).__name__}: {error}"


def _parameters(function: Callable) -> list[inspect.Parameter]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _signature(function: Callable) -> str:
    names = ", ".join(p.name for p in _parameters(function))
    return f"{getattr(function, '__name__', 'function')}({names})"


# ----- --wrt and --shape -----


def parse_wrt(text: str | None, function: Callable) -> int | str | tuple:
    """``--wrt``: names or indices, comma separated, or ``all``; the first argument if omitted.

    >>> parse_wrt("x,1", lambda x, W: 0)
    ('x', 1)
    """
    names = [p.name for p in _parameters(function)]
    if text is None or text.strip() == "all":
        return 0 if text is None else tuple(names)
    items = [int(item) if item.lstrip("-").isdigit() else item
             for item in (part.strip() for part in text.split(","))]
    for item in items:
        known = item in names if isinstance(item, str) else -len(names) <= item < len(names)
        if names and not known:
            raise UsageError(f"--wrt {item}: {_signature(function)} has no argument {item!r}")
    # One name gives one gradient; several, a tuple of them.
    return items[0] if len(items) == 1 else tuple(items)


def parse_shape(spec: str) -> tuple[str, tuple[int, ...]]:
    """``x=3,4`` -> ``("x", (3, 4))``; ``x=`` or ``x=()`` is a scalar; ``params.W1=3,4``
    is the item ``"W1"`` of the dict ``params``.

    >>> parse_shape("W=4,4")
    ('W', (4, 4))
    >>> parse_shape("params.b1=4")
    ('params.b1', (4,))
    """
    usage = "write NAME=DIMS, e.g. x=3,4, or NAME.KEY=DIMS for an item of a dict"
    name, sep, dims = (part.strip() for part in spec.partition("="))
    if not sep or not all(part.isidentifier() for part in name.split(".", 1)):
        raise UsageError(f"bad --shape {spec!r}: {usage}")
    # "3," is (3,), as in Python: empty items are skipped.
    dims = [dim.strip() for dim in dims.removeprefix("(").removesuffix(")").split(",")]
    for dim in dims:
        if dim and not dim.isdigit():
            raise UsageError(f"bad --shape {spec!r}: {dim!r} is not a whole number; {usage}")
    return name, tuple(int(dim) for dim in dims if dim)


def random_arguments(function: Callable, specs: list[str], seed: int, wrt) -> list:
    """Arguments for ``function``: standard normal float64 arrays of the ``--shape``
    sizes (a dict of them for ``NAME.KEY`` shapes), a Python float for the others
    (defaults kept for trailing ones)."""
    parameters = _parameters(function)
    names = [p.name for p in parameters]
    shapes: dict[str, tuple[int, ...]] = {}
    items: dict[str, dict[str, tuple[int, ...]]] = {}
    for spec in specs:
        name, shape = parse_shape(spec)
        name, _, key = name.partition(".")
        if name not in names:
            raise UsageError(f"--shape {spec}: {_signature(function)} has no argument {name!r}")
        if key:
            items.setdefault(name, {})[key] = shape
        shapes[name] = shape
    wanted = set(wrt if isinstance(wrt, tuple) else (wrt,))
    needed = [i for i, p in enumerate(parameters) if p.default is p.empty or p.name in shapes
              or {p.name, i, i - len(parameters)} & wanted]
    rng = np.random.default_rng(seed)
    arguments = []
    for index, parameter in enumerate(parameters[:max(needed, default=-1) + 1]):
        if parameter.name in items:
            arguments.append({key: rng.standard_normal(shape)
                              for key, shape in items[parameter.name].items()})
        elif shapes.get(parameter.name):
            arguments.append(rng.standard_normal(shapes[parameter.name]))
        elif index in needed:
            arguments.append(float(rng.standard_normal()))
        else:
            arguments.append(parameter.default)
    return arguments


# ----- the commands -----


def run_grad(args: argparse.Namespace) -> int:
    """Print the generated derivative's source (``--standalone``: as a module of its own)."""
    function = load_function(args.function)
    wrt = parse_wrt(args.wrt, function)
    transform = api.grad if args.mode == "rev" else api.jvp
    colors = args.color == "always" or (args.color == "auto" and supports_color(sys.stdout))
    derivative = transform(function, wrt=wrt)
    source = derivative.export() if args.standalone and not args.shape else derivative.source
    if args.shape:  # the code compiled for arguments of these shapes and structures
        arguments = random_arguments(function, args.shape, args.seed, wrt)
        if args.mode == "fwd":
            several = isinstance(wrt, tuple)
            names = [p.name for p in _parameters(function)]
            picked = [arguments[w if isinstance(w, int) else names.index(w)]
                      for w in (wrt if several else (wrt,))]
            tangents = [tree.map(np.zeros_like, a) for a in picked]
            arguments.append(tuple(tangents) if several else tangents[0])
        source = (derivative.export_for if args.standalone else derivative.source_for)(
            *arguments)
    elif getattr(derivative, "reason", None) is not None:
        raise UsageError(f"{_signature(function)} reads an argument as a structure "
                         f"({derivative.reason.source_line.strip()}): its code is compiled "
                         "for the structure a call passes; give its items' shapes, e.g. "
                         "--shape params.W=3,4 --shape params.b=4")
    print(highlight(source.rstrip("\n"), colors=colors))
    return 0


_GRAPH_FORMATS = {".dot": None, ".svg": "svg", ".png": "png"}


def _run_dot(dot_text: str, output: Path, fmt: str) -> None:
    program = shutil.which("dot")
    if program is None:
        raise CommandError(f"the Graphviz 'dot' program is not installed, so it cannot draw "
                           f"{output.name}: write {output.stem}.dot instead, or install graphviz")
    result = subprocess.run([program, f"-T{fmt}", "-o", str(output)], input=dot_text,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise CommandError(f"Graphviz 'dot' failed to draw {output.name}: {message}")


def run_graph(args: argparse.Namespace) -> int:
    """Write the graph of the function, or of its derivative, as DOT, SVG or PNG."""
    output = Path(args.output) if args.output else None
    if output is not None and output.suffix.lower() not in _GRAPH_FORMATS:
        raise UsageError(f"cannot write {output.name!r}: the graph is written to a .dot, "
                         ".svg or .png file")
    function = load_function(args.function)
    wrt = parse_wrt(args.wrt, function)
    # vjp accepts any output shape, so the function's own graph needs no scalar loss.
    derivative = api.grad(function, wrt=wrt) if args.derivative else api.vjp(function, wrt=wrt)
    graph = derivative.graph if args.derivative else derivative.original_graph
    dot_text = graph.to_dot()
    if output is None:
        print(dot_text.rstrip("\n"))
        return 0
    fmt = _GRAPH_FORMATS[output.suffix.lower()]
    if fmt is None:
        output.write_text(dot_text.rstrip("\n") + "\n")
    else:
        _run_dot(dot_text, output, fmt)
    print(f"wrote {output}")
    return 0


def _function_and_arguments(args: argparse.Namespace) -> tuple[Callable, list, object]:
    function = load_function(args.function)
    wrt = parse_wrt(args.wrt, function)
    return function, random_arguments(function, args.shape, args.seed, wrt), wrt


def run_check(args: argparse.Namespace) -> int:
    """Check the gradient against finite differences: exit 0 if it passes, 1 if not."""
    function, arguments, wrt = _function_and_arguments(args)
    try:
        report = check.check_grad(function, *arguments, wrt=wrt, rtol=args.rtol, atol=args.atol)
    except check.GradientCheckError as error:
        print(error.report)
        # Its first line says where and what: "model.py:3: gradient check failed for x:".
        raise CommandError(str(error).splitlines()[0].rstrip(":")) from None
    print(report)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """Print automatic, numerical and symbolic derivatives side by side."""
    # Before the table, which takes a while: the figures need an optional dependency.
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise CommandError('--plot needs matplotlib, which is not installed: '
                           'pip install "autodiff[plot]"')
    function, arguments, wrt = _function_and_arguments(args)
    print(compare.compare(function, *arguments, wrt=wrt, verbose=False))
    if args.plot:
        from autodiff.tools.plot import plot_comparison

        plot_comparison(function, *arguments, wrt=wrt, path=args.plot)
        print(f"wrote {args.plot}")
    return 0


def _examples() -> dict[str, Path]:
    """The example scripts by name: ``examples/`` ships as the package ``autodiff.examples``."""
    # Found, not imported: the examples are programs built on autodiff, run by path.
    examples = importlib.util.find_spec("autodiff.examples")
    found = {info.name: Path(info.module_finder.path) / f"{info.name}.py"
             for info in pkgutil.iter_modules(examples.submodule_search_locations)
             if not info.name.startswith("_")}
    return dict(sorted(found.items()))


def _summary(path: Path) -> str:
    try:
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        docstring = ""
    return (docstring.strip().splitlines() or [""])[0]


def run_demo(args: argparse.Namespace) -> int:
    """Run an example script, or list them."""
    examples = _examples()
    if args.list:
        width = max(map(len, examples), default=0)
        for name, path in examples.items():
            print(f"{name:<{width}}  {_summary(path)}".rstrip())
        return 0
    if args.name not in examples:
        raise UsageError(f"no example {args.name!r}; available: {', '.join(examples) or 'none'}")
    saved_argv, sys.argv = sys.argv, [args.name, *args.args]
    try:
        runpy.run_module(f"autodiff.examples.{args.name}", run_name="__main__")
    except SystemExit as stop:  # the example's own argparse: --help, a bad option
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    finally:
        sys.argv = saved_argv
    return 0


# ----- the parser -----


def _command(commands, name: str, summary: str, example: str, run: Callable, wrt: str = "",
             takes_function: bool = True):
    """A subcommand taking FILE.py:FUNC and --wrt, whose --help shows an example."""
    parser = commands.add_parser(name, help=summary, description=summary,
                                 epilog=f"example:\n  {example}",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(run=run)
    if not takes_function:
        return parser
    parser.add_argument("function", help="the function, as FILE.py:FUNC")
    parser.add_argument("--wrt", help="arguments to differentiate, by name or index, comma "
                                      f"separated (default: the first){wrt}")
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                        help="shape of an argument's random input, e.g. x=3,4 (x= for a "
                             "scalar), or of an item of a dict argument, params.W=3,4; "
                             "repeat for each; others get a float")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``autodiff`` argument parser, one subcommand per task."""
    parser = argparse.ArgumentParser(
        prog="autodiff", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Differentiate a NumPy function in a file: print, draw and check it.",
        epilog="example:\n  autodiff grad model.py:loss --wrt W,b")
    parser.add_argument("--version", action="version", version=f"autodiff {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    grad = _command(commands, "grad", "Print the derivative autodiff generates for a function.",
                    "autodiff grad model.py:loss --wrt W,b", run_grad)
    _add_inputs(grad)
    grad.add_argument("--mode", choices=["rev", "fwd"], default="rev",
                      help="reverse mode (grad, the default) or forward mode (jvp)")
    grad.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="syntax highlighting (default: auto, when printing to a terminal)")
    grad.add_argument("--standalone", action="store_true",
                      help="print a module that runs without autodiff: the derivative, the "
                      "helpers it calls and the imports it needs")

    graph = _command(commands, "graph", "Write the computational graph of a function "
                     "(or of its derivative) as DOT, SVG or PNG.",
                     "autodiff graph model.py:loss --derivative -o loss_grad.svg", run_graph)
    graph.add_argument("-o", "--output", metavar="FILE",
                       help="graph.dot, graph.svg or graph.png (svg and png need Graphviz); "
                            "default: DOT text on stdout")
    graph.add_argument("--derivative", action="store_true",
                       help="the graph of the derivative instead of the function's")

    check = _command(commands, "check", "Check the gradient against finite differences "
                     "at random inputs (exit 1 if it fails).",
                     "autodiff check model.py:loss --shape x=3,4 --shape W=4,4 --wrt all",
                     run_check, wrt="; all: every argument")
    _add_inputs(check)
    check.add_argument("--rtol", type=float, help="relative tolerance")
    check.add_argument("--atol", type=float, help="absolute tolerance")

    compare = _command(commands, "compare", "Compare automatic, finite-difference and "
                       "symbolic derivatives side by side.",
                       "autodiff compare model.py:loss --shape x=5 --plot compare.png",
                       run_compare, wrt="; all: every argument")
    _add_inputs(compare)
    compare.add_argument("--plot", metavar="FILE.png",
                         help="also save the comparison figures (needs matplotlib)")

    demo = _command(commands, "demo", "Run one of the bundled examples.",
                    "autodiff demo train_regression --fast", run_demo, takes_function=False)
    demo.add_argument("--list", action="store_true", help="list the examples and exit")
    demo.add_argument("name", nargs="?", default="quickstart", help="default: quickstart")
    demo.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the example")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or argparse's own usage error
        return stop.code if isinstance(stop.code, int) else 0
    try:
        return args.run(args)
    except BrokenPipeError:  # `autodiff graph f.py:f | head`: the reader has gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as error:
        code, message = 2, str(error)
    except (CommandError, errors.AutodiffError) as error:  # "model.py:12: ...", maybe with a hint
        code, message = 1, str(error)
    except Exception as error:
        # The user's function failed (a shape mismatch, say): say where, in one line.
        # Anything else is a bug of autodiff's own, whose traceback is worth seeing.
        user_files = {Path(m.__file__) for n, m in list(sys.modules.items())
                      if n.startswith(_PREFIX) and getattr(m, "__file__", None)}
        code, message = 1, _describe(error, user_files)
        if message is None:
            raise
    print(f"autodiff: error: {message}", file=sys.stderr)
    return code
