"""Every op either has its rules or says why it has none, and every op with rules is
checked by the op tables.

- An op a gradient can reach (its ``diff`` parameters) has a VJP rule and a JVP rule
  for each of them; an op missing one states why in its ``no_gradient`` (a gradient
  reaching it is then an error that gives the reason, see test_missing_rules_...).
  An op with every rule states it only to say why its other parameters take none
  (``jv``'s order): a gradient reaching one is refused with that reason.
- An op that passes no gradient at all (no ``diff`` parameters, or ``nondiff_output``)
  but takes parameters states why too: np.linspace was once declared gradient-free
  by mistake, and an op whose values could carry a gradient must not drop it unsaid.
- Every op with rules appears in a graph the op tables build: the function of a case,
  its gradient and JVP, and the second-order derivatives of both (ops only rules use,
  such as unbroadcast or product_of_others, appear in those). An op no case can
  reach, because an API writes it rather than code, says so in ``outside_tables``.
"""

from __future__ import annotations

import pytest

import autodiff as ad
from autodiff.graph.ir import Node, walk
from autodiff.ops import OPS, registry
from tests.helpers import derivatives_of
from tests.ops import (
    test_along_axis,
    test_elementwise,
    test_linalg,
    test_numerical,
    test_reduce,
    test_shape,
)
from tests.ops.table import shared_module, signatures


def _has_rules(op) -> bool:
    return op.vjp is not None or bool(op.jvps)


def _missing_rules(op) -> list[str]:
    missing = [] if op.vjp is not None else ["VJP"]
    if op.jvp in ("linear", "lockstep"):  # its JVP is the op itself (on tangents)
        return missing
    return missing + [f"JVP for '{p}'" for p in op.diff if p not in op.jvps]


def test_every_op_has_its_rules_or_says_why_not():
    problems = []
    for name, op in OPS.items():
        reason = op.no_gradient
        if reason is not None and not (isinstance(reason, str) and reason.strip()):
            problems.append(f"{name}: no_gradient must be a sentence, not {reason!r}")
        passes_none = not op.diff or op.nondiff_output
        if passes_none:
            if op.params and not reason:
                problems.append(f"{name}: takes ({', '.join(op.params)}) but passes no gradient "
                                "(no diff parameters or nondiff_output): say why in no_gradient")
            if _has_rules(op):
                problems.append(f"{name}: has rules but passes no gradient")
            continue
        missing = _missing_rules(op)
        if missing and not reason:
            problems.append(f"{name}: no {', no '.join(missing)}, and no no_gradient saying why")
        if not missing and reason and set(op.params) <= set(op.diff):
            problems.append(f"{name}: has every rule, yet no_gradient says {reason!r}")
    assert not problems, "\n".join(problems)


def test_missing_rules_are_errors_that_give_the_reason(user_module):
    module = user_module("""
        import numpy as np
        def f(x):
            return np.sum(np.arange(x, 4.0))
    """)
    with pytest.raises(ad.AutodiffError, match=r"has no gradient rule.*\(np\.arange has no"):
        ad.grad(module.f)(0.5)
    with pytest.raises(ad.AutodiffError, match=r"no forward-mode \(JVP\) rule.*\(np\.arange"):
        ad.jvp(module.f)(0.5, 1.0)


# ----- coverage by the op tables -----


def _tables() -> list[tuple]:
    """Each op table as (its shared module, its signatures, whether its values are complex)."""
    tables = [(shared_module(test_elementwise.SIGNATURES), test_elementwise.SIGNATURES)]
    for cases, preamble in ((test_linalg.CASES, ""), (test_reduce.CASES, ""), (test_along_axis.CASES, ""),
                            (test_shape.CASES, test_shape.PREAMBLE), (test_numerical.CASES, "")):
        tables.append((shared_module(signatures(cases), preamble), signatures(cases)))
    from tests.ops import test_conversions
    tables.append((shared_module(signatures(test_conversions.FLOAT_CASES)),
                   signatures(test_conversions.FLOAT_CASES)))
    tables.append((shared_module(signatures(test_conversions.DISCRETE_CASES)),
                   signatures(test_conversions.DISCRETE_CASES)))
    if "weighted_logsumexp" in OPS:  # scipy.special's ops, registered when SciPy imports
        from tests.ops.test_special import CASES, PREAMBLE
        tables.append((shared_module(signatures(CASES), PREAMBLE), signatures(CASES)))
    if "signal_convolve" in OPS:  # scipy.signal's, likewise
        from tests.ops import test_signal
        tables.append((shared_module(signatures(test_signal.CASES), test_signal.PREAMBLE),
                       signatures(test_signal.CASES)))
    if "norm_logpdf" in OPS:  # scipy.stats's ops, registered when SciPy imports
        from tests.ops import test_stats
        tables.append((shared_module(signatures(test_stats.CASES), test_stats.PREAMBLE),
                       signatures(test_stats.CASES)))
    if "solve_sylvester" in OPS:  # scipy.linalg's ops, registered when SciPy imports
        from tests.ops import test_scipy_linalg
        cases, preamble = test_scipy_linalg.CASES, test_scipy_linalg.PREAMBLE
        tables.append((shared_module(signatures(cases), preamble), signatures(cases)))
    from tests.ops import test_numpy2_names  # NumPy 2's names, where this NumPy has them
    for cases in (test_numpy2_names.AVAILABLE, test_numpy2_names.SINGULAR,
                  test_numerical.POLYFIT_CASES):
        tables.append((shared_module(signatures(cases)), signatures(cases)))
    from tests.ops import test_statistics
    tables.append((shared_module(signatures(test_statistics.CASES)),
                   signatures(test_statistics.CASES)))
    tables = [(module, table, False) for module, table in tables]
    from tests.ops import test_complex, test_fft  # tables of complex values
    for cases in (test_complex.CASES, test_fft.CASES):
        tables.append((shared_module(signatures(cases), "", True), signatures(cases), True))
    return tables


def _graphs(derivative):
    jacobian = getattr(derivative, "jacobian", None)  # ad.grad of a loop's gradient
    if jacobian is not None:
        derivative = jacobian.jvp
    for name in ("original_graph", "graph"):
        graph = getattr(derivative, name, None)
        if graph is not None:
            yield graph


def test_every_op_with_rules_is_checked_by_an_op_table():
    seen = set()
    for module, table, complex_values in _tables():
        for index, (_, arity) in enumerate(table):
            loss = getattr(module, f"loss_{index}")
            for derivative in derivatives_of(loss, arity + 1, (0, 1) if arity == 2 else 0,
                                             complex_values):
                for graph in _graphs(derivative):
                    seen.update(node.op.name for node in walk(graph.nodes)
                                if hasattr(node, "op"))
    unchecked = sorted(name for name, op in OPS.items() if _has_rules(op) and name not in seen
                       and not op.outside_tables)
    assert not unchecked, ("ops with rules that no op-table case goes through: "
                           + ", ".join(unchecked))


# ----- the SymPy route -----


def _written_by_users(op) -> bool:
    """Whether code can name ``op``: a callable of NumPy, Python or SciPy, a method or
    an attribute (the ops only rules and transforms write are autodiff's own calls)."""
    return bool(op.method_names or op.attribute_names) or any(
        not (getattr(fn, "__module__", None) or "").startswith("autodiff")
        for fn in registry.callables_of(op))


def test_every_op_users_write_has_a_sympy_form_or_says_why_not():
    seen = set()
    for module, table, _ in _tables():
        for index in range(len(table)):
            graph = ad.grad(getattr(module, f"loss_{index}")).original_graph
            seen.update(node.op for node in walk(graph.nodes) if isinstance(node, Node))
    problems = sorted(op.name for op in {*seen, *(o for o in OPS.values() if _written_by_users(o))}
                      if op.sympy is None and not op.no_sympy)
    assert not problems, "ops users write with neither sympy= nor no_sympy=: " + ", ".join(problems)
