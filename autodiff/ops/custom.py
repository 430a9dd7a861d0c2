"""Taking control of gradients: custom rules, registered rules, and cutting the flow.

- ``@custom_grad`` makes a function opaque to the compiler: derivatives call it
  as it is and use the rules attached with ``@f.defvjp`` (and ``@f.defjvp``
  for forward mode). Its body may use anything Python allows.
- ``register_gradient(func, rule)`` gives a rule to a function the compiler
  does not know (``scipy.special.erf``) or replaces the rule of one it knows
  (``np.tanh``); the returned handle removes it, and works as a ``with`` block.
- ``stop_gradient(x)`` is ``x`` with a zero gradient; inside a differentiated
  function, ``with no_grad():`` makes everything computed in the block a constant.

Rules are written like the built-in ones: ``vjp(g, ans, *params)`` returns one
gradient per parameter (``None`` for a parameter without one), and
``jvp(t, ans, *params)`` the result's tangent due to one parameter's tangent
``t``. They are plain NumPy code that the compiler inlines into the derivative,
so they appear in the generated source and can be differentiated again.

A parameter may be a dict, a list or a tuple of arrays (nested too): the function
gets the structure as it is (built once by the generated code, ``{'W': params_W,
...}``), the VJP rule returns that parameter's gradient in the same structure
(``None`` for a leaf without one) and a JVP rule gets its tangent in it.

>>> import numpy as np, autodiff as ad
>>> @ad.custom_grad
... def clip_grad(x):
...     return x
>>> @clip_grad.defvjp
... def _(g, ans, x):
...     return np.clip(g, -1.0, 1.0)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from autodiff.errors import AutodiffError
from autodiff.ops import registry
from autodiff.ops.registry import OPS, Op, helper_op

# ----- stop_gradient and no_grad -----


def stop_gradient(x):
    """``x`` itself, through which no gradient flows (like ``tensor.detach()``).

    >>> import numpy as np, autodiff as ad
    >>> ad.grad(lambda x: x * ad.stop_gradient(x))(3.0)
    3.0
    """
    return x


registry.alias(stop_gradient, OPS["stop_gradient"])


class no_grad:
    """``with ad.no_grad():`` inside a differentiated function: everything computed
    in the block is a constant of the derivative. Outside one, it does nothing.

    >>> import numpy as np, autodiff as ad
    >>> def f(x):
    ...     with ad.no_grad():
    ...         scale = np.max(np.abs(x))
    ...     return np.sum(x / scale)
    """

    def __enter__(self) -> no_grad:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        return None


# ----- the gradients a rule returns, checked where they are only known at run time -----


def rule_gradients(result, count, rule):
    """``result`` if it is ``count`` gradients (a tuple or list), else an error naming
    the rule that returned it (``rule``: its name, file and line)."""
    if isinstance(result, (tuple, list)) and len(result) == count:
        return result
    got = (f"{len(result)} values" if isinstance(result, (tuple, list))
           else f"one {type(result).__name__}" + (
               f" of shape {result.shape}" if hasattr(result, "shape") else ""))
    raise AutodiffError(
        f"the gradient rule {rule} returned {got}, but it must return {count} gradients, "
        "one per parameter", hint="return a tuple with one gradient per parameter, None "
        "for a parameter without one (an axis, a flag)")


helper_op(rule_gradients, diff=("result",), fresh=False)
OPS["rule_gradients"].effect = True  # the check runs even if no gradient is read
OPS["rule_gradients"].outside_tables = "it wraps the result of a user's VJP rule"


@OPS["rule_gradients"].defvjp
def _(g, ans, result, count, rule):
    return g


@OPS["rule_gradients"].defjvp
def _(t, ans, result, count, rule):
    return t


# ----- functions with rules of their own -----

_runtime_names: set[str] = set()


def _opaque_op(fn: Callable, params: list[str], name: str) -> Op:
    """An op calling ``fn`` by name, with every parameter differentiable."""
    base = name if name.isidentifier() else "custom"
    runtime_name, k = base, 1
    while runtime_name in _runtime_names:
        k += 1
        runtime_name = f"{base}_{k}"
    _runtime_names.add(runtime_name)
    op = helper_op(fn, name=runtime_name, params=params, register=False,
                   diff=tuple(params), fresh=False)
    op.takes_structures = True  # a dict passed to it is built and passed whole
    return op


class CustomGradient:
    """A function the compiler calls as it is, with the gradient rules attached to it."""

    def __init__(self, fn: Callable) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            raise TypeError(f"custom_grad needs a function with a signature, got {fn!r}") from None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind not in kinds for p in signature.parameters.values()):
            raise TypeError(f"custom_grad: {fn.__qualname__} must take plain positional "
                            "parameters (no *args, **kwargs or keyword-only ones)")
        self.op = _opaque_op(fn, list(signature.parameters), fn.__name__)
        registry.alias(self, self.op)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def defvjp(self, rule: Callable) -> Callable:
        """Attach ``rule(g, ans, *params)``, returning one gradient per parameter."""
        self.op.defvjp(rule)
        return rule

    def defjvp(self, param: str | Callable) -> Callable:
        """Attach a forward-mode rule ``rule(t, ans, *params)``, per parameter:
        ``@f.defjvp`` for a function of one parameter, else ``@f.defjvp("x")``."""
        return self.op.defjvp(param)

    def __repr__(self) -> str:
        return f"<custom_grad {self.fn.__qualname__}>"


def custom_grad(fn: Callable) -> CustomGradient:
    """Decorator: derivatives call ``fn`` as it is and use the rules attached to it.

    >>> import numpy as np, autodiff as ad
    >>> @ad.custom_grad
    ... def round_ste(x):
    ...     return np.round(x)
    >>> @round_ste.defvjp
    ... def _(g, ans, x):
    ...     return g  # straight-through: the gradient of the identity
    """
    return CustomGradient(fn)


class Registration:
    """The handle :func:`~autodiff.register_gradient` returns: ``remove()`` it, or use it as a
    ``with`` block to have the rule only inside the block."""

    def __init__(self, undo: Callable[[], None], description: str) -> None:
        self._undo = undo
        self.description = description
        self.active = True

    def remove(self) -> None:
        """Restore what was there before (no effect the second time)."""
        if self.active:
            self.active = False
            self._undo()

    def __enter__(self) -> Registration:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __repr__(self) -> str:
        state = "active" if self.active else "removed"
        return f"<gradient registration for {self.description} ({state})>"


def register_gradient(func: Callable, rule: Callable | None = None, *,
                      jvp: Callable | dict[str, Callable] | None = None) -> Registration:
    """Give ``func`` the VJP ``rule(g, ans, *params)`` (and optionally forward rules).

    For a function the compiler knows (``np.tanh``) this replaces the built-in
    rule: its forward rules are set aside too unless ``jvp`` gives new ones, so
    the two modes never disagree. For one it does not know, calls to ``func``
    become calls in the derivative, with the parameters named as in ``rule``.
    ``jvp`` is a rule ``(t, ans, *params)`` for a one-parameter function, or a
    dict of them by parameter name.

    >>> import numpy as np, autodiff as ad
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> def softplus_vjp(g, ans, x):
    ...     return g / (1.0 + np.exp(-x))
    >>> with ad.register_gradient(softplus, softplus_vjp):
    ...     pass
    """
    if rule is None and jvp is None:
        raise TypeError("register_gradient needs a rule (and/or jvp=...)")
    binding = registry.callable_binding(func)
    if binding is not None and binding[1] is None:
        op = binding[0]
        saved = (op.vjp, dict(op.jvps), op.jvp)
        if rule is not None:  # the built-in forward rules, derived or not, no longer agree
            op.vjp, op.jvps, op.jvp = None, {}, None
            op.defvjp(rule)
        _attach_jvps(op, jvp)

        def undo() -> None:
            op.vjp, op.jvps, op.jvp = saved
            registry.changed()

        return Registration(undo, f"'{op.name}'")
    if binding is not None:
        raise TypeError(f"{func!r} is a form of '{binding[0].name}' that is rewritten before "
                        f"differentiation: register the gradient of that op instead")
    source = rule if rule is not None else next(iter(_as_dict(jvp).values()))
    params = list(inspect.signature(source).parameters)[2:]
    name = getattr(func, "__name__", "custom")
    op = _opaque_op(func, params, name)
    if rule is not None:
        op.defvjp(rule)
    _attach_jvps(op, jvp)
    registry.alias(func, op)

    def forget() -> None:
        registry.unalias(func)

    return Registration(forget, f"'{name}'")


def _as_dict(jvp) -> dict:
    return jvp if isinstance(jvp, dict) else {None: jvp}


def _attach_jvps(op: Op, jvp) -> None:
    if jvp is None:
        return
    for param, rule in _as_dict(jvp).items():
        op.defjvp(param)(rule) if param is not None else op.defjvp(rule)


__all__ = ["CustomGradient", "Registration", "custom_grad", "no_grad", "register_gradient",
           "stop_gradient"]
