"""The generated derivative as a product: golden texts, valid Python, no unused names.

Set ``AUTODIFF_UPDATE_GOLDEN=1`` to rewrite the golden files after an intended change,
then review the diff like any other code change.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import traceback
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad
from autodiff.derivatives.build import build_grad, build_jvp, build_vjp
from tests.codegen import corpus

GOLDEN_DIR = Path(__file__).parent / "golden"


def _compare_with_golden(name: str, source: str) -> None:
    path = GOLDEN_DIR / f"{name}.py"
    if os.environ.get("AUTODIFF_UPDATE_GOLDEN"):
        path.write_text(source)
    assert source == path.read_text()


@pytest.mark.parametrize("name", sorted(corpus.GOLDEN))
def test_golden_source(name):
    _compare_with_golden(name, ad.grad(getattr(corpus, name), wrt=corpus.GOLDEN[name]).source)


def _unused_assignments(source: str) -> set[str]:
    function = ast.parse(source).body[0]
    stored, loaded = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.add(node.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loaded.add(node.id)
    return stored - loaded - {"_"}


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("fn", corpus.FUNCTIONS, ids=lambda f: f.__name__)
def test_generated_code_is_clean_and_deterministic(fn, optimize):
    wrt = tuple(range(len(inspect.signature(fn).parameters)))
    first = build_grad(fn, wrt, with_value=False, optimize=optimize, has_aux=False).source
    second = build_grad(fn, wrt, with_value=False, optimize=optimize, has_aux=False).source
    assert first == second
    compile(first, "<generated>", "exec")
    assert _unused_assignments(first) == set()
    body = ast.parse(first).body[0].body
    # One operation per line: no assignment holds a nested call or operator.
    for statement in body:
        if isinstance(statement, ast.Assign):
            nested = [n for n in ast.walk(statement.value)
                      if isinstance(n, (ast.BinOp, ast.Call)) and n is not statement.value]
            assert not nested, ast.unparse(statement)
    assert "# grad of line" in first


def test_optimized_and_unoptimized_agree():
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=4),
            rng.normal(size=(4, 2)), rng.normal(size=2), rng.normal(size=(5, 2))]
    wrt = (1, 2, 3, 4)
    fast = ad.grad(corpus.two_layer_net, wrt=wrt)(*args)
    plain = ad.grad(corpus.two_layer_net, wrt=wrt, optimize=False)(*args)
    for a, b in zip(fast, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_no_repeated_computation():
    source = ad.grad(corpus.fan_out, wrt=(0, 1)).source
    right_hand_sides = [ast.unparse(s.value) for s in ast.parse(source).body[0].body
                        if isinstance(s, ast.Assign)]
    assert len(right_hand_sides) == len(set(right_hand_sides))


def test_loops_and_branches_print_as_blocks():
    g = ad.grad(corpus.rnn, wrt=(0, 1))
    text = str(g.original_graph)
    assert "h = for t in range(0, t2, 1) with h from (h):" in text and "yield h" in text
    backward = str(g.graph)
    assert "reversed range" in backward and "tape_push(" in backward
    assert "if " in str(ad.grad(corpus.huber).graph)
    dot = g.graph.to_dot()
    assert "subgraph" in dot and 'label="for"' in dot


def test_traceback_shows_the_generated_line_and_the_error_the_users():
    g = ad.grad(corpus.two_layer_net, wrt=1)
    x = np.ones((5, 3))
    with pytest.raises(ValueError) as info:  # a DerivativeError, still a ValueError
        g(x, np.ones((4, 4)), np.ones(4), np.ones((4, 1)), np.ones(1), np.ones((5, 1)))
    assert isinstance(info.value, ad.errors.DerivativeError)
    assert "h = np.tanh(x @ W1 + b1)" in str(info.value)  # the user's line
    frames = traceback.extract_tb(info.value.__cause__.__traceback__)  # NumPy's error
    generated = [f for f in frames if f.filename.startswith("<autodiff")]
    assert generated and generated[-1].line == "t1 = x @ W1"
    assert linecache.getline(generated[-1].filename, generated[-1].lineno).strip() == "t1 = x @ W1"


def test_graph_prints_and_exports_dot():
    g = ad.grad(corpus.two_layer_net, wrt=1)
    text = str(g.original_graph)
    assert text.splitlines()[0] == "graph two_layer_net(x, W1, b1, W2, b2, t):"
    assert "h = tanh(t2)" in text and "# line 13" in text
    assert "grad of line" in str(g.graph)
    dot = g.graph.to_dot()
    assert dot.startswith('digraph "two_layer_net_grad" {')
    assert 'label="h = tanh(t2)"' in dot and '"W1" -> ' in dot


def test_user_names_win_over_helper_names(user_module):
    module = user_module("""
        import numpy as np
        unbroadcast = np.array([1.0, 2.0, 3.0])
        def f(x, as_gradient_of):
            return np.sum(x * unbroadcast * as_gradient_of)
    """)
    g = ad.grad(module.f)
    np.testing.assert_allclose(g(np.ones((2, 3)), 2.0), np.tile([2.0, 4.0, 6.0], (2, 1)))
    assert "unbroadcast_(" in g.source and "= as_gradient_of_(" in g.source


def test_a_variable_named_like_a_needed_builtin_is_rejected(user_module):
    module = user_module("""
        import numpy as np
        def f(x, float):
            return np.sum(x * float)
    """)
    with pytest.raises(ad.UnsupportedSyntaxError, match="shadows a Python builtin"):
        ad.grad(module.f)


TOOLKIT_GOLDEN = {
    "doubling_vjp": lambda: ad.vjp(corpus.doubling),
    "two_layer_net_jvp": lambda: ad.jvp(corpus.two_layer_net, wrt=(1, 2)),
    "rnn_jvp": lambda: ad.jvp(corpus.rnn, wrt=0),
    "rosenbrock_hvp": lambda: ad.hvp(corpus.rosenbrock),
    "robust_solve_jvp": lambda: ad.jvp(corpus.robust_solve, wrt=(0, 1)),
}


@pytest.mark.parametrize("name", sorted(TOOLKIT_GOLDEN))
def test_golden_source_of_the_other_transforms(name):
    _compare_with_golden(name, TOOLKIT_GOLDEN[name]().source)


@pytest.mark.parametrize("transform", ["vjp", "jvp"])
@pytest.mark.parametrize("fn", corpus.FUNCTIONS, ids=lambda f: f.__name__)
def test_other_transforms_generate_clean_code(fn, transform):
    wrt = tuple(range(len(inspect.signature(fn).parameters)))
    if transform == "vjp":
        first, second = (build_vjp(fn, wrt, optimize=True).source for _ in range(2))
    else:
        first, second = (build_jvp(fn, wrt, optimize=True, with_value=True).source
                         for _ in range(2))
    assert first == second
    compile(first, "<generated>", "exec")
    assert _unused_assignments(first) == set()
    assert ("# tangent of line" if transform == "jvp" else "# grad of line") in first


def _specialised_cases() -> dict:
    rng = np.random.default_rng(0)
    net_args = [rng.normal(size=s) for s in [(32, 3), (3, 8), (8,), (8, 1), (1,), (32, 1)]]
    rnn_args = [rng.normal(size=s) for s in [(4, 4), (4, 2), (5, 2), (4,)]]
    return {
        "two_layer_net_jit": (corpus.two_layer_net, (1, 2, 3, 4), net_args),
        "rnn_jit": (corpus.rnn, (0, 1, 3), rnn_args),
        "scalar_chain_jit": (corpus.scalar_chain, (0, 1), [0.3, 1.2]),
    }


@pytest.mark.parametrize("name", sorted(_specialised_cases()))
def test_golden_specialised_source(name):
    """What jit=True writes for one signature: constants for shapes, no run-time helpers,
    updates in place; clean like any generated code."""
    fn, wrt, args = _specialised_cases()[name]
    source = ad.grad(fn, wrt=wrt, jit=True).source_for(*args)
    compile(source, "<generated>", "exec")
    assert _unused_assignments(source) == set()
    _compare_with_golden(name, source)


def test_comments_quote_only_the_users_lines(user_module):
    """Every '# line N' comment of a derivative, of any order, quotes line N of the
    user's file (or of a function it calls): nodes a gradient rule brings in take the
    user's line, never one of autodiff's own files."""
    module = user_module("""
        import numpy as np

        def helper(z):
            return np.sum(np.diff(z, n=2) ** 2)

        def f(x):
            y = np.cumsum(np.tanh(x))
            return helper(y) + np.sum(np.flip(y) * x)
    """)
    x = np.linspace(-1.0, 1.0, 6)
    lines = Path(module.__file__).read_text().splitlines()
    for derivative in (ad.grad(module.f), ad.hvp(module.f), ad.hessian(module.f),
                       ad.grad(module.f, jit=True), ad.jvp(module.f)):
        source = derivative.source_for(x) if getattr(derivative, "jit", False) else (
            derivative.source)
        for comment in (line.strip() for line in source.splitlines()):
            if " line " not in comment or not comment.startswith("#"):
                continue
            head, _, text = comment.partition(": ")
            number = int(head.split("line ")[1].split()[0])
            assert number <= len(lines) and lines[number - 1].strip() == text, comment
