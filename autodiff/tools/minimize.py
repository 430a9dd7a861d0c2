"""``ad.minimize``: ``scipy.optimize.minimize`` for a loss of structured parameters,
given its exact gradient (and Hessian-vector products, for the methods that use them).

SciPy works on one 1-D float64 vector. ``minimize`` lays the parameters' floating
leaves end to end into it (each raveled, in ``ad.tree.leaves`` order), gives SciPy
the loss and its gradient from one call of ``ad.value_and_grad`` (``jac=True``), and
returns SciPy's result with ``x`` back in the parameters' structure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autodiff import tree
from autodiff.api import hvp, value_and_grad
from autodiff.errors import ArgumentKindError, AutodiffError, raised_at_call
from autodiff.tools.optimizers import as_leaf, leaves_at, trained

# Methods that take Hessian-vector products (hessp=), and those that need the Hessian
# itself (hess=), which minimize assembles from as many products as there are entries.
HESSP_METHODS = ("newton-cg", "trust-ncg", "trust-krylov", "trust-constr")
HESS_METHODS = ("dogleg", "trust-exact")


class Flattened:
    """The floating leaves of a structure as one float64 vector, and back."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.leaves, self.structure = tree.flatten(params)
        self.positions = [i for i, leaf in enumerate(self.leaves) if trained(leaf)]
        if not self.positions:
            kinds = sorted({type(leaf).__name__ for leaf in self.leaves})
            raise ArgumentKindError(
                f"minimize: x0 holds no floating leaf to optimise (its leaves: "
                f"{', '.join(kinds) or 'none'})",
                hint="give x0 as float arrays or floats (np.asarray(x0, dtype=float))")
        sizes = [np.size(self.leaves[i]) for i in self.positions]
        self.offsets = np.cumsum([0, *sizes])
        self.size = int(self.offsets[-1])

    def vector(self, tree_: Any) -> np.ndarray:
        """The vector of ``tree_``'s leaves at the floating ones (a gradient's ``None``,
        a leaf without one, is zeros)."""
        leaves = leaves_at(self.params, tree_)
        vector = np.zeros(self.size)
        for i, start, stop in zip(self.positions, self.offsets, self.offsets[1:]):
            if leaves[i] is not None:
                vector[start:stop] = np.ravel(leaves[i])
        return vector

    def tree(self, vector: np.ndarray, kept: bool = True) -> Any:
        """The structure with ``vector``'s parts at the floating leaves, each in its
        leaf's shape and dtype; the other leaves kept, or ``None`` (``kept=False``: a
        gradient, a direction)."""
        leaves = list(self.leaves) if kept else [None] * len(self.leaves)
        for i, start, stop in zip(self.positions, self.offsets, self.offsets[1:]):
            like = self.leaves[i]
            leaves[i] = as_leaf(np.reshape(vector[start:stop], np.shape(like)), like)
        return tree.unflatten(self.structure, leaves)


@raised_at_call
def minimize(fun: Callable, x0: Any, args: tuple = (), method: str | None = None, *,
             hessp: bool | None = None, bounds: Any = None, tol: float | None = None,
             callback: Callable | None = None, options: dict | None = None):
    """Minimise ``fun(params, *args)`` over ``params`` from ``x0`` with
    ``scipy.optimize.minimize``, giving it the exact gradient.

    ``x0`` is an array, a float, or a structure of them (a dict, list, tuple,
    namedtuple, dataclass or object of your class, nested): its floating leaves are
    optimised; its other leaves (ints, strings) are passed to ``fun`` as they are.
    SciPy sees one float64 vector, the floating leaves raveled end to end in
    ``ad.tree.leaves`` order; ``fun`` sees the structure, each leaf in its own shape
    and dtype (float32 stays float32).

    The loss and its gradient come from one call of ``ad.value_and_grad(fun)``
    (SciPy's ``jac=True``). For ``"Newton-CG"``, ``"trust-ncg"``, ``"trust-krylov"``
    and ``"trust-constr"``, Hessian-vector products from ``ad.hvp(fun)`` are passed
    as ``hessp`` (``hessp=False`` leaves them out; ``True`` passes them to any
    method); ``"dogleg"`` and ``"trust-exact"`` get the Hessian, assembled from one
    product per entry of the vector.

    ``method``, ``tol`` and ``options`` are SciPy's. ``bounds`` are SciPy's too,
    over the vector (one ``(low, high)`` pair per entry, in the order above): bounds
    in the parameters' structure, and constraints, are not taken. ``callback``, if
    given, is called after each iteration with the current parameters, in their
    structure (it may raise ``StopIteration`` to stop early).

    Returns SciPy's ``OptimizeResult``: ``x`` and the gradient (``jac``; ``grad`` for
    ``"trust-constr"``) are in the parameters' structure (the gradient ``None`` at
    the leaves not optimised); ``hess_inv`` and ``hess``, where the method gives
    them, are over the vector.

    >>> import numpy as np, autodiff as ad
    >>> def loss(p, target):
    ...     return np.sum((p["w"] - target) ** 2) + (p["b"] - 1.0) ** 2
    >>> result = ad.minimize(loss, {"w": np.zeros(2), "b": 0.0}, args=(np.array([3.0, 4.0]),))
    >>> result.success, np.round(result.x["w"], 6), round(result.x["b"], 6)
    (True, array([3., 4.]), 1.0)
    """
    try:
        from scipy import optimize
    except ImportError:
        raise ImportError("ad.minimize calls scipy.optimize.minimize: install SciPy "
                          "(pip install scipy)") from None
    args = args if isinstance(args, tuple) else (args,)
    flat = Flattened(x0)
    loss_and_gradient = value_and_grad(fun)

    def fun_and_jac(vector, *args):
        value, gradient = loss_and_gradient(flat.tree(vector), *args)
        return float(value), flat.vector(gradient)

    def product(vector, direction, *args):
        products = hvp(fun)  # compiled at its first call, kept on fun
        try:
            return flat.vector(products(flat.tree(vector), *args,
                                        flat.tree(direction, kept=False)))
        except AutodiffError as error:  # the hint says what minimize can do without them
            raise type(error)(
                error.message, filename=error.filename, lineno=error.lineno,
                source_line=error.source_line,
                hint=f"method={method!r} takes Hessian-vector products, from ad.hvp, which "
                "refused this: pass hessp=False, or use a method that needs none "
                "(L-BFGS-B, BFGS)") from None

    def hessian(vector, *args):
        matrix = np.array([product(vector, column, *args) for column in np.eye(vector.size)])
        return (matrix + matrix.T) / 2

    name = method.lower() if isinstance(method, str) else ""
    extra = {}
    if hessp or (hessp is None and name in HESSP_METHODS):
        extra["hessp"] = product
    if name in HESS_METHODS:
        extra["hess"] = hessian
    if callback is not None:
        def each_iteration(intermediate_result):  # SciPy passes the result by this name
            callback(flat.tree(getattr(intermediate_result, "x", intermediate_result)))

        extra["callback"] = each_iteration
    result = optimize.minimize(fun_and_jac, flat.vector(x0), args=args, method=method,
                               jac=True, bounds=bounds, tol=tol, options=options, **extra)
    result.x = flat.tree(result.x)
    for key in ("jac", "grad"):  # the gradient ("grad": trust-constr's, whose jac is
        value = result.get(key)  # its constraints')
        if isinstance(value, np.ndarray) and value.shape == (flat.size,):
            result[key] = flat.tree(value, kept=False)
    return result


__all__ = ["minimize"]
