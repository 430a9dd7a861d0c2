"""Calls to functions autodiff has no rule for, run as they are.

A function that is no op and is not the user's own code (``np.tril``,
``scipy.signal.get_window``, a builtin, a library's Python function) is never
compiled: the derivative calls it as the user's code does. Its result is a
constant of the derivative as long as no argument carries a gradient; if one
does, differentiating stops with an error at the user's call, suggesting a rule
(``ad.register_gradient``), never a zero gradient. Such a call is never merged
with another, removed, or run while compiling (it may draw random numbers or
print).

>>> op = call_op(1, ("k",))
>>> op.kernel
'function(arg0, k=kw_k)'
"""

from __future__ import annotations

import functools

from autodiff.errors import UnknownFunctionError
from autodiff.ops.registry import Op, stub_taking, without_rule


@functools.cache
def call_op(positional: int, keywords: tuple[str, ...], method: str | None = None,
            starred: tuple[int, ...] = ()) -> Op:
    """The op calling its first operand (or, given ``method``, that method of it: a
    library's object, ``rng.normal(size=3)``) with ``positional`` arguments and
    ``keywords``; the positional arguments at ``starred`` are unpacked when it runs
    (``np.random.rand(*x.shape)``)."""
    args = [f"arg{i}" for i in range(positional)]
    kwargs = [f"kw_{name}" for name in keywords]
    params = ["function", *args, *kwargs]
    words = [*(f"*{a}" if i in starred else a for i, a in enumerate(args)),
             *(f"{name}={kw}" for name, kw in zip(keywords, kwargs))]
    called = f"function.{method}" if method else "function"
    op = Op("call", stub_taking(params), f"{called}({', '.join(words)})",
            diff=tuple(args + kwargs), fresh=False,
            no_sympy="a function run as it is: SymPy cannot see what it computes")
    op.opaque = op.effect = True
    op.missing_rule = functools.partial(_missing_rule, method=method)
    return op


@functools.cache
def attribute_op(name: str) -> Op:
    """The attribute ``name`` of a library's object, read when the derivative runs
    (``np.finfo(x.dtype).eps``, a random generator's ``rng.bit_generator``). A gradient
    reaching the object is refused, as it is for a call of one of its methods."""
    op = Op("attribute", stub_taking(["obj"]), f"obj.{name}", diff=("obj",), fresh=False,
            floating=None, no_sympy="an attribute of a library's object, read as it is")
    op.opaque = True
    op.missing_rule = functools.partial(_missing_attribute, name=name)
    op.outside_tables = "written by the frontend for an attribute of a library's object"
    return op


def _missing_attribute(named: dict, where: dict, name: str) -> UnknownFunctionError:
    return UnknownFunctionError(
        f"'.{name}' of a library's object is read as it is, and the result depends on it "
        "through a value that carries a gradient", **where,
        hint="wrap that value in ad.stop_gradient if no gradient should flow through it")


_FOR_ITS_EFFECT = ("called for its side effects (print, logging, warnings), in the forward "
                   "sweep as written: its result is discarded and no gradient flows through it")


_MAY_CHANGE = ("called for its effect, in the forward sweep as written: it may change its "
               "arguments in place (np.random.shuffle(x)), which the derivative would not "
               "follow, so no value carrying a gradient may reach it")


@functools.cache
def effect_call_op(positional: int, keywords: tuple[str, ...], method: str | None = None,
                   changes_arguments: bool = False) -> Op:
    """The op calling its first operand (or, given ``method``, that method of it) for its
    side effects alone (``print(...)``, ``logger.info(...)``, ``warnings.warn(...)``): a
    statement of the forward sweep, written where the user wrote it. One that
    ``changes_arguments`` is any other call made for its effect (``np.random.seed(s)``,
    ``rng.shuffle(order)``): it may change what it is passed, so a value carrying a
    gradient that reaches it is refused (``transforms/activity``)."""
    args = [f"arg{i}" for i in range(positional)]
    kwargs = [f"kw_{name}" for name in keywords]
    called = f"function.{method}" if method else "function"
    op = Op("effect_call", stub_taking(["function", *args, *kwargs]),
            f"{called}({', '.join([*args, *(f'{n}={k}' for n, k in zip(keywords, kwargs))])})",
            nondiff_output=True, no_gradient=_MAY_CHANGE if changes_arguments
            else _FOR_ITS_EFFECT, fresh=False, floating=None)
    op.opaque = op.effect = op.statement = True
    op.changes_arguments = changes_arguments
    op.outside_tables = "written by the frontend for a call made for its side effects"
    return op


def _warning_stub(message, category=None, stacklevel=1, source=None): ...


# warnings.warn(...) as a statement: warned where the user's code warns. Generated code
# calls codegen's warn_at_user_line, which names the user's line (stacklevel 1) or the
# code that called the derivative (2 and more), never the generated code.
WARNING = Op("warning", _warning_stub,
             "warn_at_user_line(message, category=category, stacklevel=stacklevel, "
             "source=source)", nondiff_output=True, no_gradient=_FOR_ITS_EFFECT, fresh=False,
             floating=None)
WARNING.opaque = WARNING.effect = WARNING.statement = True
WARNING.outside_tables = "written by the frontend for warnings.warn (tests/frontend/test_effects.py)"


@functools.cache
def assertion_op(with_message: bool) -> Op:
    """``assert condition, message``: checked in the forward sweep, where it was written."""
    params = ["condition", "message"] if with_message else ["condition"]
    op = Op("assertion", stub_taking(params),
            "assert condition, message" if with_message else "assert condition",
            nondiff_output=True, no_gradient="an assert checks a value; it passes no gradient",
            fresh=False, floating=None)
    op.opaque = op.effect = op.statement = True
    op.outside_tables = "written by the frontend for an assert statement"
    return op


@functools.cache
def formatted_op(template: str, count: int) -> Op:
    """A string formatted from ``count`` operands ``a0, a1, ...``: an f-string or ``%``
    formatting, ``template`` written with those names (``f'{a0:.3f}'``)."""
    op = Op("formatted", stub_taking([f"a{i}" for i in range(count)]), template,
            nondiff_output=True, no_gradient="a string made for printing passes no gradient",
            floating=None)
    op.opaque = True
    op.outside_tables = "written by the frontend for an f-string or % formatting"
    return op


def _missing_rule(named: dict, where: dict, method: str | None = None) -> UnknownFunctionError:
    function = named["function"]
    if method is not None:  # a method of a library's object: no rule can be registered
        return UnknownFunctionError(
            f"'.{method}()' of a library's object is not a function autodiff knows how to "
            "differentiate, and the result depends on it through an argument that carries "
            "a gradient", **where,
            hint="compute it from NumPy operations autodiff knows (rng.normal(loc=mu) is "
            "mu + rng.normal()), or wrap the argument in ad.stop_gradient if no gradient "
            "should flow through it")
    text = function.path or getattr(function.value, "__name__", "this function")
    stated = without_rule(function.value)
    if stated is not None:  # a library function whose lack of a rule has a reason
        reason, hint = stated
        return UnknownFunctionError(f"'{text}' is not differentiated: {reason}", **where,
                                    hint=hint)
    return UnknownFunctionError(
        f"'{text}' is not a function autodiff knows how to differentiate, and the result "
        "depends on it through an argument that carries a gradient", **where,
        hint=f"give it a rule with ad.register_gradient({text}, vjp), compute it from NumPy "
        "operations autodiff knows, or wrap the argument in ad.stop_gradient if no gradient "
        "should flow through it")
