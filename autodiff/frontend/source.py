"""Reading a function's source: the AST of its definition and where it lives.

>>> def square(x):
...     return x * x
>>> read_function(square).tree.name  # doctest: +SKIP
'square'
"""

from __future__ import annotations
import __future__

import ast
import functools
import inspect
import linecache
import sys
import textwrap
import types
from dataclasses import dataclass, field

from autodiff.errors import SourceUnavailableError, UnsupportedSyntaxError


@dataclass
class FunctionSource:
    """A parsed function: its ``def`` (line numbers are the file's), file and lines."""

    tree: ast.FunctionDef
    filename: str
    lines: list[str]
    # the names its body binds, once found (a rule's body is converted at each use)
    local_names: list[str] | None = field(default=None, compare=False, repr=False)

    def line(self, lineno: int) -> str:
        if 1 <= lineno <= len(self.lines):
            return self.lines[lineno - 1].strip()
        return ""


def read_function(fn) -> FunctionSource:
    """Parse the source of the Python function ``fn``."""
    if not isinstance(fn, types.FunctionType):
        kind = type(fn).__name__
        raise SourceUnavailableError(
            f"cannot read the source of {fn!r} (a {kind}): only Python functions "
            "defined with 'def' can be differentiated",
            hint="wrap it in a def, or give it a gradient with a custom rule",
        )
    code = fn.__code__
    filename = code.co_filename
    if getattr(fn, "__wrapped__", None) is not None:
        # inspect would show the wrapped function's source, not the wrapper's code
        raise SourceUnavailableError(
            f"{fn.__qualname__} is a wrapper made by a decorator (it has __wrapped__): its "
            "source is that of the function it wraps, which is not the code that runs",
            filename=filename, lineno=code.co_firstlineno,
            hint=f"differentiate {fn.__name__}.__wrapped__ if the decorator leaves the values "
            "unchanged, or decorate the derivative instead")
    if filename == "<string>":
        _remember_command_line()
    lam = _lambda_at(fn) if fn.__name__ == "<lambda>" else None
    if lam is not None:  # found in its file by its code's positions, however it is written
        return FunctionSource(_as_def(fn, lam), filename, linecache.getlines(filename))
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as error:
        if filename == "<string>":
            raise _run_from_a_string(fn) from None
        raise SourceUnavailableError(
            f"cannot read the source of {fn.__qualname__}: {error}",
            filename=filename,
            lineno=code.co_firstlineno,
            hint="functions typed at an interactive prompt, or run by exec() from a string, "
            "have no source file; put the function in a file (Jupyter cells and python -c "
            "work), or compile the text under a file name whose text linecache holds",
        ) from None
    text = textwrap.dedent("".join(lines))
    try:
        module = ast.parse(text)
    except SyntaxError as error:
        lam = fn.__name__ == "<lambda>"
        raise SourceUnavailableError(
            "cannot read the source of a lambda that is part of a longer statement" if lam
            else f"cannot parse the source of {fn.__qualname__}: {error.msg}",
            filename=filename, lineno=code.co_firstlineno,
            hint="define the function with 'def'" if lam else None,
        ) from None
    ast.increment_lineno(module, max(first, 1) - 1)
    tree = module.body[0] if module.body else None
    all_lines = linecache.getlines(filename) or text.splitlines()
    if isinstance(tree, ast.FunctionDef) and tree.name == fn.__name__:
        _check_unchanged(fn)
        return FunctionSource(tree, filename, all_lines)
    if isinstance(tree, ast.AsyncFunctionDef):
        raise UnsupportedSyntaxError(
            "'async def' functions cannot be differentiated",
            filename=filename, lineno=tree.lineno,
        )
    lam = _the_lambda(module, fn)
    if lam is not None:
        return FunctionSource(_as_def(fn, lam), filename, all_lines)
    if fn.__name__ != "<lambda>":
        _check_unchanged(fn)
    raise SourceUnavailableError(
        f"cannot find the definition of {fn.__qualname__} in its source",
        filename=filename, lineno=code.co_firstlineno,
        hint="give the function a name with 'def'",
    )


def _as_def(fn, lam: ast.Lambda) -> ast.FunctionDef:
    """The lambda ``lam`` as the ``def`` of one ``return`` the converter reads."""
    wrapper = ast.FunctionDef(
        name=fn.__name__, args=lam.args, body=[ast.Return(lam.body)], decorator_list=[],
        returns=None, type_comment=None,
    )
    ast.copy_location(wrapper, lam)
    ast.copy_location(wrapper.body[0], lam.body)
    return wrapper


def _lambda_at(fn) -> ast.Lambda | None:
    """The lambda whose code ``fn`` runs, found in its whole file (a lambda inside a
    dict display written over several lines, whose own lines are no statement): the
    one starting on its first line, with its parameters, whose body spans every
    position its instructions have (``co_positions``: several lambdas on one line are
    told apart by their columns). None when the file's text does not tell."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    module = _parsed("".join(lines)) if lines else None
    if module is None:
        return None
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    spans = [(line, column, end_line, end_column)
             for line, end_line, column, end_column in code.co_positions()
             if None not in (line, end_line, column, end_column)
             and (column, end_column) != (0, 0)]  # (0, 0): the code's own entry and exit
    found = [node for node in ast.walk(module)
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args,
                                       *node.args.kwonlyargs)) == tuple(names)
             and spans and all(_inside(span, node.body) for span in spans)]
    return found[0] if len(found) == 1 else None


def _inside(span: tuple, node: ast.expr) -> bool:
    line, column, end_line, end_column = span
    return ((node.lineno, node.col_offset) <= (line, column)
            and (end_line, end_column) <= (node.end_lineno, node.end_col_offset))


@functools.lru_cache(maxsize=8)
def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _remember_command_line() -> None:
    """The text of ``python -c TEXT`` under its file name, ``<string>``, as IPython does
    for its cells: Python keeps it nowhere else."""
    argv = getattr(sys, "orig_argv", [])
    if "<string>" in linecache.cache or "-c" not in argv[:-1]:
        return
    text = argv[argv.index("-c") + 1]
    linecache.cache["<string>"] = (len(text), None, text.splitlines(True), "<string>")


def _the_lambda(module: ast.Module, fn) -> ast.Lambda | None:
    """The one lambda on fn's line whose parameters match fn's, if unambiguous: what
    tells a lambda when its code has no positions (``python -X no_debug_ranges``)."""
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    found = [
        node for node in ast.walk(module)
        if isinstance(node, ast.Lambda)
        and node.lineno == fn.__code__.co_firstlineno
        and tuple(a.arg for a in node.args.args) == tuple(names)
    ]
    if len(found) == 1:
        return found[0]
    if found:
        raise SourceUnavailableError(
            "several lambdas with the same parameters on one line: cannot tell which "
            "one to differentiate",
            filename=fn.__code__.co_filename, lineno=fn.__code__.co_firstlineno,
            hint="define the function with 'def'",
        )
    return None


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _check_unchanged(fn) -> None:
    """Refuse a function whose file no longer holds the code that runs."""
    code = fn.__code__
    if not _is_the_running_code(linecache.getlines(code.co_filename), fn):
        if code.co_filename == "<string>":  # exec() of a string inside python -c
            raise _run_from_a_string(fn)
        raise SourceUnavailableError(
            f"the source of {fn.__qualname__} in its file is not the code that runs: the "
            "file was changed after the function was defined",
            filename=code.co_filename, lineno=code.co_firstlineno,
            hint="reload the module (importlib.reload) or restart Python, so that the "
            "function and its derivative come from the same text")


def _run_from_a_string(fn) -> SourceUnavailableError:
    """The error for a function exec() made from a string: the same whether or not the
    process itself runs a string (python -c, which linecache is then given)."""
    code = fn.__code__
    return SourceUnavailableError(
        f"cannot read the source of {fn.__qualname__}: it was run by exec() from a string, "
        "which Python does not keep", filename=code.co_filename, lineno=code.co_firstlineno,
        hint="put the function in a file, or compile the text under a file name whose text "
        "linecache holds")


def _is_the_running_code(lines: list[str], fn) -> bool:
    """Whether the file's text compiles ``fn``'s ``def`` to ``fn``'s own bytecode, names
    and constants: a file edited after import would otherwise be differentiated from its
    new text. The whole file is compiled, as CPython compiles a call differently when the
    module imports the name it is made on. Code rewritten by pytest is trusted."""
    code = fn.__code__
    if any(name.startswith("@py") for name in code.co_names + code.co_varnames):
        return True
    if not lines:
        return True
    text, flags = "".join(lines), code.co_flags & _FUTURE_FLAGS
    module = _compiled(text, code.co_filename, flags)
    if module is None:
        return True  # not ours to judge: the parse that follows reports what is wrong
    found = _code_at(module, code.co_name, code.co_firstlineno)
    if found is not None and _same_code(found, code):
        return True
    # IPython (Jupyter) compiles each top-level statement of a cell on its own
    alone = _compiled(text, code.co_filename, flags, statement_at=code.co_firstlineno)
    found = _code_at(alone, code.co_name, code.co_firstlineno) if alone is not None else None
    return found is not None and _same_code(found, code)


@functools.lru_cache(maxsize=8)
def _compiled(text: str, filename: str, flags: int,
              statement_at: int | None = None) -> types.CodeType | None:
    """``text`` compiled whole, or only its top-level statement spanning ``statement_at``."""
    try:
        if statement_at is None:
            return compile(text, filename, "exec", flags=flags, dont_inherit=True)
        tree = ast.parse(text)
        for statement in tree.body:
            first = min([statement.lineno] + [d.lineno for d in
                                              getattr(statement, "decorator_list", ())])
            if first <= statement_at <= (statement.end_lineno or statement.lineno):
                return compile(ast.Module([statement], type_ignores=[]), filename, "exec",
                               flags=flags, dont_inherit=True)
        return None
    except (SyntaxError, ValueError):
        return None


def _code_at(code: types.CodeType, name: str, line: int) -> types.CodeType | None:
    """The code object of the function ``name`` defined at ``line``, however nested."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == line:
                return const
            found = _code_at(const, name, line)
            if found is not None:
                return found
    return None


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Equal bytecode, names and constants (nested functions alike); not line numbers."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_argcount,
            a.co_kwonlyargcount) != (b.co_code, b.co_names, b.co_varnames, b.co_freevars,
                                     b.co_cellvars, b.co_argcount, b.co_kwonlyargcount):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType)
                    and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):
            return False
    return True
