"""The benchmark cases: a plain NumPy function, its hand-written gradient, and inputs.

Each hand-written gradient is what a careful NumPy programmer would write: every
subexpression computed once, no work whose result is thrown away. That is the
bar the generated gradient is measured against.

The functions live by kind in `scalar_cases.py`, `array_cases.py` and
`loop_cases.py`. To add a case, write the three pieces there and append a
`Case` to `CASES`; tag it `OVERHEAD` when a call does only a few flops on
Python floats (the issue's overhead-bound cases: the polynomial and the scalar
chain; per-operation overhead then decides everything), `SCALAR_LOOP` when it loops over
an array's elements in Python (what `jit="numba"` is for). A case taking a
structure (a dict of parameters) may name its `positional` twin, the same
function taking each array as an argument: the harness then times our gradient
of both in the same rounds, for the structured/positional ratio.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import array_cases as arrays
import loop_cases as loops
import scalar_cases as scalars

Wrt = int | str | tuple[int | str, ...]

OVERHEAD = "overhead-bound"
SCALAR_LOOP = "scalar loop"


@dataclass(frozen=True)
class Case:
    """One function to differentiate, with everything needed to time it.

    `wrt` is passed unchanged to `autodiff.grad`; when it is a tuple, the
    gradient functions return a tuple of gradients in the same order. The
    gradient with respect to a dict argument is a dict with its keys.
    `make_args` returns the positional arguments, from a fixed seed.
    `positional`, for a case taking a structure: the same function and inputs
    with each array passed as an argument of its own.
    """

    name: str
    func: Callable[..., Any]
    hand_grad: Callable[..., Any]
    wrt: Wrt
    make_args: Callable[[], tuple[Any, ...]]
    tags: frozenset[str] = frozenset()
    positional: Case | None = None


MLP_PARAMETERS = ("W1", "b1", "W2", "b2")
RNN_PARAMETERS = ("W", "U", "h")
XW = ("x", "w")

MLP_SMALL = Case("mlp 64x32-64-1", arrays.mlp_loss, arrays.mlp_loss_hand_grad, MLP_PARAMETERS,
                 arrays.mlp_args(64, 32, 64, 1))

CASES: list[Case] = [
    Case("poly (float)", scalars.poly, scalars.poly_hand_grad, 0, scalars.poly_args,
         frozenset({OVERHEAD})),
    Case("scalar chain, 15 ops (floats)", scalars.scalar_chain, scalars.scalar_chain_hand_grad,
         ("x", "y"), scalars.scalar_chain_args, frozenset({OVERHEAD})),
    Case("rosenbrock n=10", arrays.rosenbrock, arrays.rosenbrock_hand_grad, "x",
         arrays.rosenbrock_args(10)),
    Case("rosenbrock n=1e3", arrays.rosenbrock, arrays.rosenbrock_hand_grad, "x",
         arrays.rosenbrock_args(1_000)),
    Case("rosenbrock n=1e5", arrays.rosenbrock, arrays.rosenbrock_hand_grad, "x",
         arrays.rosenbrock_args(100_000)),
    # ord=p from an int argument: compiled for each call's p (the dispatch per call)
    Case("p-norm n=10 (p an argument)", arrays.p_norm, arrays.p_norm_hand_grad, "x",
         arrays.p_norm_args(10, 3)),
    Case("p-norm n=1e5 (p an argument)", arrays.p_norm, arrays.p_norm_hand_grad, "x",
         arrays.p_norm_args(100_000, 3)),
    MLP_SMALL,
    Case("mlp 64x32-64-1, params in a dict", arrays.mlp_dict_loss, arrays.mlp_dict_loss_hand_grad,
         "params", arrays.mlp_dict_args(64, 32, 64, 1), positional=MLP_SMALL),
    Case("mlp 512x784-256-10", arrays.mlp_loss, arrays.mlp_loss_hand_grad, MLP_PARAMETERS,
         arrays.mlp_args(512, 784, 256, 10)),
    Case("softmax xent 512x10", arrays.softmax_cross_entropy,
         arrays.softmax_cross_entropy_hand_grad, "z", arrays.softmax_args(512, 10)),
    Case("elementwise chain n=1e6", arrays.elementwise_chain, arrays.elementwise_chain_hand_grad,
         "x", arrays.vector_args(1_000_000)),
    Case("pairwise kernel 200x150x8", arrays.pairwise_loss, arrays.pairwise_loss_hand_grad,
         ("X", "Y"), arrays.pairwise_args(200, 150, 8)),
    Case("rnn h=32", loops.rnn, loops.rnn_bptt_grad, RNN_PARAMETERS, loops.rnn_args(50, 16, 32)),
    Case("rnn h=256", loops.rnn, loops.rnn_bptt_grad, RNN_PARAMETERS,
         loops.rnn_args(50, 16, 256)),
    # The same, against a gradient that turns the per-step outer products into
    # one matrix product after the loop: faster than any step-by-step gradient.
    Case("rnn h=32 (batched hand)", loops.rnn, loops.rnn_hand_grad, RNN_PARAMETERS,
         loops.rnn_args(50, 16, 32)),
    Case("rnn h=256 (batched hand)", loops.rnn, loops.rnn_hand_grad, RNN_PARAMETERS,
         loops.rnn_args(50, 16, 256)),
    Case("while doubling", loops.doubling, loops.doubling_hand_grad, "x",
         loops.doubling_args(1_000)),
    Case("scalar loop: tanh recurrence n=500", scalars.recurrence, scalars.recurrence_hand_grad,
         XW, scalars.scalar_loop_args(500), frozenset({SCALAR_LOOP})),
    Case("scalar loop: leaky recurrence n=500", scalars.leaky_recurrence,
         scalars.leaky_recurrence_hand_grad, XW, scalars.scalar_loop_args(500),
         frozenset({SCALAR_LOOP})),
]
