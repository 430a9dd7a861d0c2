"""The public transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp``,
``jacobian`` and ``hessian``.

What ``grad``, ``value_and_grad``, ``vjp``, ``jvp`` and ``hvp`` return is the
generated derivative itself, a plain Python function, so calling it costs
nothing beyond the generated code. It carries ``.source`` (the generated
text), ``.graph`` (the derivative graph), ``.original_graph`` and
``.original`` (the function it was derived from); a notebook shows it as its
highlighted source. A generated derivative is
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

import functools
import inspect
from collections.abc import Callable

from autodiff.derivatives.arity import by_call_form, has_star_parameters
from autodiff.derivatives.bound import BoundDerivative, shifted_wrt, unbound
from autodiff.derivatives.build import build_jvp
from autodiff.derivatives.cache import cached, jvp_of, vjp_of
from autodiff.derivatives.jacobian import Jacobian, grad_of
from autodiff.derivatives.structured import per_structure
from autodiff.derivatives.wrt import Wrt, wrt_key
from autodiff.errors import WrtError, raised_at_call
from autodiff.ops import registry

# ----- the transforms -----


def _transform(fn: Callable) -> Callable:
    """A public transform: called in code being differentiated (``ad.grad(f)(x)``), it
    runs while compiling; its errors end the traceback at the user's call. It takes
    JAX's ``argnums=`` for ``wrt=``."""

    default_wrt = inspect.signature(fn).parameters["wrt"].default

    @functools.wraps(fn)
    def transform(*args, **options):
        if "argnums" in options:
            if "wrt" in options:
                raise WrtError(f"{fn.__name__} takes wrt= or argnums= (its JAX name), "
                               "not both", hint=f"{fn.__name__}(f, wrt=...)")
            options["wrt"] = options.pop("argnums")
        bound = unbound(args[0]) if args else None
        if bound is not None:  # a bound method or a partial: its function's derivative
            function, leading, keywords, self_name = bound
            options["wrt"] = shifted_wrt(options.get("wrt", default_wrt), len(leading),
                                         self_name)
            derivative = (by_call_form(fn, function, options) if has_star_parameters(function)
                          and len(args) == 1 else fn(function, *args[1:], **options))
            return BoundDerivative(derivative, leading, keywords)
        if args and has_star_parameters(args[0]) and len(args) == 1:
            return by_call_form(fn, args[0], options)  # built for each call's form
        return fn(*args, **options)

    transform = raised_at_call(transform)
    transform.builds_derivative = True
    return transform



@_transform
def grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True,
         has_aux: bool = False, jit: bool | str = False, check_finite: bool = False,
         checkpoint: int | str | None = None):
    """The gradient of the scalar function ``fn``, as generated Python source.

    ``wrt`` picks the arguments: an index, a name, or a tuple of them (the
    derivative then returns a tuple of gradients in that order); a name may
    pick a part of a structure, written as ``check_grad`` names leaves
    (``"params['enc']"``, ``"layers[0][1]"``, ``"self.W"``): the gradient of
    that part alone. Every transform also takes ``wrt`` by JAX's name,
    ``argnums``. With
    ``has_aux``, ``fn`` returns ``(loss, aux)`` and the derivative returns
    ``(gradient, aux)``; ``aux`` is passed through, not differentiated.

    ``jit=True`` specialises the derivative to each new signature of argument
    kinds, shapes and dtypes on first call (``.source_for(*args)`` shows that
    code); ``jit="numba"`` compiles the specialised code with numba.

    ``check_finite=True`` checks the arguments and the result of every
    generated statement, and raises :class:`~autodiff.errors.NonFiniteError` at
    the first NaN or infinity, naming the statement and the user's line it
    comes from (slower: a debugging mode, like anomaly detection).

    ``checkpoint`` bounds the memory of each loop's reverse sweep: a number of states
    to keep (``checkpoint=20``) or a size of memory for them (``checkpoint="200MB"``).
    The loop keeps those states, chosen by Revolve's binomial schedule (an online one
    for a ``while`` loop), instead of taping every step, and its reverse sweep runs
    each step again from the nearest one (see docs/loops.md).

    >>> import numpy as np, autodiff as ad
    >>> @ad.grad
    ... def f(x):
    ...     return np.sum(np.sin(x))
    >>> f(np.zeros(2))
    array([1., 1.])
    """
    if fn is None:
        return lambda f: grad(f, wrt=wrt, optimize=optimize, has_aux=has_aux, jit=jit,
                              check_finite=check_finite, checkpoint=checkpoint)
    return grad_of(fn, wrt, with_value=False, optimize=optimize, has_aux=has_aux, jit=jit,
                   check_finite=check_finite, checkpoint=checkpoint)


@_transform
def value_and_grad(fn: Callable | None = None, *, wrt: Wrt = 0, optimize: bool = True,
                   has_aux: bool = False, jit: bool | str = False, check_finite: bool = False,
                   checkpoint: int | str | None = None):
    """Like :func:`grad`, but the derivative returns ``(fn(...), gradient)``; with
    ``has_aux``, ``((loss, aux), gradient)``.

    >>> import autodiff as ad
    >>> ad.value_and_grad(lambda x: x * x)(3.0)
    (9.0, 6.0)
    """
    if fn is None:
        return lambda f: value_and_grad(f, wrt=wrt, optimize=optimize, has_aux=has_aux,
                                        jit=jit, check_finite=check_finite,
                                        checkpoint=checkpoint)
    return grad_of(fn, wrt, with_value=True, optimize=optimize, has_aux=has_aux, jit=jit,
                   check_finite=check_finite, checkpoint=checkpoint)


@_transform
def vjp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False,
        check_finite: bool = False, checkpoint: int | str | None = None):
    """The vector-Jacobian product of ``fn``: a function ``(*args, seed)`` returning
    the gradients of ``sum(seed * fn(*args))`` (like ``out.backward(seed)``).

    The seed has the output's shape; for a function returning a tuple it is a
    tuple with one seed per output (``None`` for an output that carries no seed,
    which is then weighed by zero: the cache beside ``(out, cache)``, as PyTorch's
    ``backward`` takes ``None``), and for one returning a dict, a list or
    another structure, a structure with the same keys and nesting (leaves with
    no gradient, such as a string or a count, may hold anything). Omitted, it
    is 1.0 and the output must be a scalar: then ``vjp`` is ``grad``.

    >>> import numpy as np, autodiff as ad
    >>> pull = ad.vjp(lambda x: x * x)
    >>> pull(np.array([1.0, 2.0]), np.array([1.0, 10.0]))
    array([ 2., 40.])
    """
    return vjp_of(fn, wrt, optimize=optimize, jit=jit, check_finite=check_finite,
                  checkpoint=checkpoint)


@_transform
def jvp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False,
        check_finite: bool = False):
    """The Jacobian-vector product of ``fn`` by forward mode: a function
    ``(*args, tangent)`` returning ``(fn(*args), tangent of the output)``.

    The tangent has the shape of the differentiated argument (a tuple of them
    when ``wrt`` names several); the output's tangent has the output's shape
    (a tuple for a tuple output).

    >>> import numpy as np, autodiff as ad
    >>> push = ad.jvp(lambda x: x ** 3)
    >>> push(2.0, 1.0)  # (f(2), f'(2) * 1)
    (8.0, 12.0)
    """
    return jvp_of(fn, wrt, optimize=optimize, jit=jit, check_finite=check_finite)


@_transform
def hvp(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False):
    """The Hessian-vector product of the scalar ``fn``: ``(*args, v)`` returning
    ``H @ v``, by forward mode over the gradient, without building ``H``.

    ``jit`` as in :func:`grad`: the product specialised per call signature.

    >>> import numpy as np, autodiff as ad
    >>> ad.hvp(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]), np.ones(2))
    array([ 6., 12.])
    """
    return cached(fn, ("hvp", wrt_key(wrt), optimize),
                  lambda: per_structure(fn, f"{fn.__name__}_hvp", lambda **given: build_jvp(
                      grad(fn, wrt=wrt, optimize=optimize), wrt, optimize=optimize,
                      with_value=False, name="hvp", tangent="v", **given),
                      extra=(("v", False),)), jit, optimize)


@_transform
def jacobian(fn: Callable, *, wrt: Wrt = 0, mode: str | None = None, optimize: bool = True,
             jit: bool | str = False):
    """The Jacobian of ``fn``, shaped ``output.shape + argument.shape``.

    ``mode="rev"`` runs one vector-Jacobian product per output element,
    ``mode="fwd"`` the Jacobian-vector products of every argument element in one
    call, the tangents stacked along a leading axis (JAX's ``vmap`` of ``jvp``; one
    call per element where the product cannot be batched, or with ``jit="numba"``); by default
    the cheaper one, reverse when the output has fewer elements than the
    arguments. Several ``wrt`` give a tuple (one block per argument), a tuple
    output a tuple of those. Structures (a dict of parameters, a dict returned)
    give a block per output leaf and argument leaf, in the output's structure of
    the arguments' structures, as JAX gives them; a leaf without a gradient
    (a string, a count) has ``None``. ``.source`` shows the generated
    product(s) it calls; with ``jit`` (as in :func:`grad`), they are specialised per
    call signature.

    >>> import numpy as np, autodiff as ad
    >>> ad.jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    if mode not in (None, "rev", "fwd"):
        raise ValueError(f"mode must be 'rev', 'fwd' or None (automatic), not {mode!r}")
    return cached(fn, ("jacobian", wrt_key(wrt), mode, optimize, jit),
                  lambda: Jacobian(fn, wrt, mode, optimize, jit))


@_transform
def hessian(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True, jit: bool | str = False):
    """The Hessian of the scalar ``fn``: forward mode over the reverse-mode gradient,
    every column in one batched call (see :func:`jacobian`).

    Shaped ``argument.shape + argument.shape``; several ``wrt`` give a tuple of
    tuples of blocks, ``H[i][j]`` the derivative of gradient ``i`` w.r.t. argument ``j``.
    ``jit`` as in :func:`grad`: the products it is assembled from specialised per call
    signature.

    >>> import numpy as np, autodiff as ad
    >>> ad.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return cached(fn, ("hessian", wrt_key(wrt), optimize, jit),
                  lambda: jacobian(grad(fn, wrt=wrt, optimize=optimize), wrt=wrt,
                                   mode="fwd", optimize=optimize, jit=jit))


@_transform
def jacrev(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True):
    """JAX's name for :func:`jacobian` by reverse mode (``mode="rev"``)."""
    return jacobian(fn, wrt=wrt, mode="rev", optimize=optimize)


@_transform
def jacfwd(fn: Callable, *, wrt: Wrt = 0, optimize: bool = True):
    """JAX's name for :func:`jacobian` by forward mode (``mode="fwd"``)."""
    return jacobian(fn, wrt=wrt, mode="fwd", optimize=optimize)


# The transforms the runtime helpers of ops/integrate.py differentiate the user's model with.
registry.TRANSFORMS.update(vjp=vjp, jvp=jvp)

__all__ = ["Wrt", "grad", "hessian", "hvp", "jacfwd", "jacobian", "jacrev", "jvp",
           "value_and_grad", "vjp"]
