"""Optimisers over structures of arrays, as ``ad.optim``: :class:`SGD` (with momentum,
Nesterov's momentum and weight decay), :class:`Adam` and :class:`AdamW`.

An optimiser is used one of two ways, which share one implementation:

- **functional**, as in optax: ``state = opt.init(params)``, then
  ``params, state = opt.update(grads, state, params)`` returns new parameters and a
  new state and changes nothing it was given. ``params`` is any structure ``ad.tree``
  reads: a dict, list, tuple, namedtuple, dataclass or object of your class, nested.
  Unlike optax's, ``update`` returns the parameters, not the steps to add to them.
- **in place**, as in PyTorch: ``opt.step(params, grads)`` writes the new values into
  the arrays ``params`` holds and keeps the state in the optimiser (``opt.state``),
  so that a dict of arrays, or a model object holding its arrays, is trained
  without rebinding a name.

Both, because neither serves everyone: only the functional form takes values that
cannot change in place (a Python float, a frozen dataclass) and hands the state to
you (to save it, or restart from it); the in-place form is the three-line loop
PyTorch users write.

>>> import numpy as np, autodiff as ad
>>> def loss(params, x, y):
...     return np.mean((x @ params["w"] + params["b"] - y) ** 2)
>>> x = np.array([[0.0], [1.0], [2.0]]); y = np.array([1.0, 3.0, 5.0])
>>> params = {"w": np.zeros(1), "b": 0.0}
>>> opt = ad.optim.Adam(lr=0.1)
>>> state = opt.init(params)
>>> for _ in range(500):
...     params, state = opt.update(ad.grad(loss)(params, x, y), state, params)
>>> np.round(params["w"], 3), round(params["b"], 3)
(array([2.]), 1.0)

Leaves that are real floating arrays or floats are trained, in their own dtype
(float32 stays float32). Other leaves (ints, strings, bools, ``None``) are carried
unchanged; their gradient is ``None``. A leaf whose gradient is ``None`` is left as
it is, its state too (as PyTorch skips a parameter without ``.grad``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from autodiff import tree
from autodiff.errors import ArgumentKindError, raised_at_call


class OptimizerState(NamedTuple):
    """What an optimiser carries from one update to the next: ``step``, the number of
    updates made, and ``slots``, its statistics by name (SGD's ``"momentum"``, Adam's
    ``"m"`` and ``"v"``), each in the parameters' structure (``None`` at a leaf not
    trained). A namedtuple, so ``ad.tree`` reads it: ``ad.tree.leaves(state)``."""

    step: int
    slots: dict


def trained(leaf: Any) -> bool:
    """Whether an optimiser trains ``leaf``: a real floating array or number."""
    if isinstance(leaf, np.ndarray):
        return leaf.dtype.kind == "f"
    return isinstance(leaf, (float, np.floating))


def leaves_at(params: Any, other: Any) -> list:
    """``other``'s leaves at ``params``' leaves, in ``params``' order: ``other`` has
    ``params``' structure, with ``None`` allowed where ``params`` has a leaf (a
    gradient's leaf with none). ``tree.map`` checks the structures and visits the
    leaves in that order."""
    found: list = []
    tree.map(lambda _, leaf: found.append(leaf), params, other)
    return found


def as_leaf(value: Any, like: Any) -> Any:
    """``value`` in the kind and dtype of the leaf ``like``: float32 stays float32, a
    Python float a float."""
    if isinstance(like, np.ndarray):
        return np.asarray(value, dtype=like.dtype)
    if isinstance(like, np.generic):
        return like.dtype.type(value)
    return float(value)


class Optimizer:
    """What every optimiser shares: ``init``, ``update`` (functional) and ``step`` (in
    place). A subclass names its statistics (``slots``) and gives the update of one
    leaf (``leaf_update``).

    ``lr`` is a number, or a schedule: a function of the number of updates made so
    far (0 at the first), returning the learning rate, as optax's schedules take.
    It is read at each update, so ``opt.lr = 0.01`` between steps changes it too.
    """

    def __init__(self, lr: float | Callable[[int], float]) -> None:
        if not callable(lr) and not lr >= 0:
            raise ValueError(f"{type(self).__name__}: lr must be a number >= 0 or a "
                             f"schedule, not {lr!r}")
        self.lr = lr
        self.state: OptimizerState | None = None  # step()'s, made at its first call
        self.structure: tree.Structure | None = None  # of the parameters step() trains

    def slots(self) -> tuple[str, ...]:
        """The names of the statistics kept per leaf."""
        return ()

    def leaf_update(self, p, g, slots: dict, step: int, lr: float) -> tuple[Any, dict]:
        """The new value of the leaf ``p`` with gradient ``g``, and its statistics, at
        update number ``step`` (1 at the first)."""
        raise NotImplementedError

    def settings(self) -> dict:
        return {"lr": self.lr}

    def __repr__(self) -> str:
        text = ", ".join(f"{name}={value!r}" for name, value in self.settings().items())
        return f"{type(self).__name__}({text})"

    def init(self, params: Any) -> OptimizerState:
        """The state before the first update: each statistic zero, at each leaf trained."""
        zeros = tree.map(lambda p: as_leaf(np.zeros_like(p), p) if trained(p) else None, params)
        return OptimizerState(0, {name: zeros for name in self.slots()})

    @raised_at_call
    def update(self, grads: Any, state: OptimizerState | None, params: Any
               ) -> tuple[Any, OptimizerState]:
        """``(new params, new state)``: one step from ``params`` along ``grads`` (the
        gradient of the loss, in ``params``' structure, as ``ad.grad`` returns it), with
        ``state`` the last update's (``None`` at the first: ``init(params)``). Nothing
        given is changed."""
        name = f"{type(self).__name__}.update"
        state = self.init(params) if state is None else state
        leaves, structure = tree.flatten(params)
        gradients = _aligned(params, grads, name, "the gradients are")
        slots = {slot: _aligned(params, state.slots[slot], name, "the state is")
                 for slot in self.slots()}
        step = state.step + 1
        lr = self.lr(state.step) if callable(self.lr) else self.lr
        new_leaves = list(leaves)
        for index, (p, g) in enumerate(zip(leaves, gradients)):
            if g is None:
                continue
            _check_leaf(params, index, p, g, name)
            value, statistics = self.leaf_update(
                p, g, {slot: slots[slot][index] for slot in slots}, step, lr)
            new_leaves[index] = as_leaf(value, p)
            for slot, statistic in statistics.items():
                slots[slot][index] = as_leaf(statistic, p)
        new_slots = {slot: tree.unflatten(structure, values) for slot, values in slots.items()}
        return tree.unflatten(structure, new_leaves), OptimizerState(step, new_slots)

    @raised_at_call
    def step(self, params: Any, grads: Any) -> Any:
        """One update written into the arrays of ``params`` (which it returns), the
        state kept in the optimiser: at its first call it is ``init(params)``; later
        calls take the same structure. Each leaf with a gradient must be a writable
        floating array: a Python float or a tuple of floats cannot change in place
        (use :meth:`update`). Nothing is written unless every leaf can be."""
        structure = tree.structure(params)
        if self.state is not None and structure != self.structure:
            raise tree.StructureError(
                f"{type(self).__name__}.step: params are {structure!r}, and were "
                f"{self.structure!r} at the first step",
                hint="use one optimiser for each set of parameters (opt.state = None "
                "starts again)")
        new, state = self.update(grads, self.state, params)
        changed = [(index, old, value) for index, (old, value)
                   in enumerate(zip(tree.leaves(params), tree.leaves(new))) if value is not old]
        for index, old, _ in changed:
            if not (isinstance(old, np.ndarray) and old.flags.writeable):
                what = ("a read-only array" if isinstance(old, np.ndarray) else
                        f"a NumPy scalar ({type(old).__name__})" if isinstance(old, np.generic)
                        else f"a {type(old).__name__}")
                raise ArgumentKindError(
                    f"{type(self).__name__}.step updates arrays in place: "
                    f"{_path(params, index)} is {what}",
                    hint="hold it as a writable array (np.array(...)), or use the "
                    "functional form: params, state = opt.update(grads, state, params)")
        for _, old, value in changed:
            old[...] = value
        self.state, self.structure = state, structure
        return params


def _aligned(params: Any, other: Any, name: str, what: str) -> list:
    try:
        return leaves_at(params, other)
    except tree.StructureError as error:
        raise tree.StructureError(
            f"{name}: {what} not in the parameters' structure ({error.message})",
            hint="pass the gradient of the loss with respect to params, as ad.grad returns "
            "it (a tuple of gradients from wrt=(0, 1, ...) goes with a tuple of "
            "parameters), and the state init(params) made") from None


def _check_leaf(params: Any, index: int, p: Any, g: Any, name: str) -> None:
    if not trained(p):
        kind = f"{p.dtype} array" if isinstance(p, np.ndarray) else type(p).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise ArgumentKindError(
            f"{name}: {_path(params, index)} is {article} {kind}, which an optimiser does not "
            "update, but it was given a gradient",
            hint="make the parameter a real floating array (np.asarray(p, dtype=float))")
    if np.iscomplexobj(g):
        raise ArgumentKindError(f"{name}: the gradient of {_path(params, index)} is complex, "
                                "for a real parameter")
    if np.shape(g) != np.shape(p):
        raise ArgumentKindError(
            f"{name}: the gradient of {_path(params, index)} has shape {np.shape(g)}, "
            f"the parameter {np.shape(p)}")


def _path(params: Any, index: int) -> str:
    return tree.paths(params, "params")[index][0]


class SGD(Optimizer):
    """Stochastic gradient descent, as PyTorch's ``torch.optim.SGD`` defines it (without
    dampening). With gradient ``g``, parameter ``p`` and learning rate ``lr``::

        g = g + weight_decay * p                  # weight_decay: an L2 penalty's gradient
        b = momentum * b + g                      # b starts at zero
        g = g + momentum * b if nesterov else b   # when momentum > 0
        p = p - lr * g
    """

    def __init__(self, lr: float | Callable[[int], float], momentum: float = 0.0,
                 nesterov: bool = False, weight_decay: float = 0.0) -> None:
        super().__init__(lr)
        if not momentum >= 0 or not weight_decay >= 0:
            raise ValueError("SGD: momentum and weight_decay must be >= 0")
        if nesterov and not momentum > 0:
            raise ValueError("SGD: Nesterov's momentum needs momentum > 0")
        self.momentum, self.nesterov, self.weight_decay = momentum, nesterov, weight_decay

    def settings(self) -> dict:
        return {"lr": self.lr, "momentum": self.momentum, "nesterov": self.nesterov,
                "weight_decay": self.weight_decay}

    def slots(self) -> tuple[str, ...]:
        return ("momentum",) if self.momentum else ()

    def leaf_update(self, p, g, slots, step, lr):
        if self.weight_decay:
            g = g + self.weight_decay * p
        if not self.momentum:
            return p - lr * g, {}
        buffer = self.momentum * slots["momentum"] + g
        direction = g + self.momentum * buffer if self.nesterov else buffer
        return p - lr * direction, {"momentum": buffer}


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), as ``torch.optim.Adam`` defines it. At update ``t``
    (1 at the first), with gradient ``g``::

        g = g + weight_decay * p                 # an L2 penalty's gradient (see AdamW)
        m = beta1 * m + (1 - beta1) * g          # m and v start at zero
        v = beta2 * v + (1 - beta2) * g ** 2
        p = p - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps)

    ``betas`` is ``(beta1, beta2)``.
    """

    decoupled = False  # AdamW's weight decay

    def __init__(self, lr: float | Callable[[int], float] = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(lr)
        if not all(0 <= beta < 1 for beta in betas) or len(betas) != 2:
            raise ValueError(f"{type(self).__name__}: betas must be two numbers in [0, 1), "
                             f"not {betas!r}")
        if not eps >= 0 or not weight_decay >= 0:
            raise ValueError(f"{type(self).__name__}: eps and weight_decay must be >= 0")
        self.betas, self.eps, self.weight_decay = tuple(betas), eps, weight_decay

    def settings(self) -> dict:
        return {"lr": self.lr, "betas": self.betas, "eps": self.eps,
                "weight_decay": self.weight_decay}

    def slots(self) -> tuple[str, ...]:
        return ("m", "v")

    def leaf_update(self, p, g, slots, step, lr):
        beta1, beta2 = self.betas
        if self.weight_decay and self.decoupled:
            p = p * (1 - lr * self.weight_decay)
        elif self.weight_decay:
            g = g + self.weight_decay * p
        m = beta1 * slots["m"] + (1 - beta1) * g
        v = beta2 * slots["v"] + (1 - beta2) * (g * g)
        m_hat = m / (1 - beta1 ** step)
        v_hat = v / (1 - beta2 ** step)
        return p - lr * m_hat / (np.sqrt(v_hat) + self.eps), {"m": m, "v": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019), as
    ``torch.optim.AdamW`` defines it: the parameter shrinks by ``lr * weight_decay``
    of itself before Adam's step, rather than the decay entering the gradient::

        p = p * (1 - lr * weight_decay)
        ... Adam's update of p, with g unchanged

    ``weight_decay`` is 0.01 by default, PyTorch's.
    """

    decoupled = True

    def __init__(self, lr: float | Callable[[int], float] = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01) -> None:
        super().__init__(lr, betas, eps, weight_decay)


__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "OptimizerState"]
