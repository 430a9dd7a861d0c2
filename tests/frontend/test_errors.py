"""Every error autodiff raises about user code: its class, and a message naming the
user's file and line, the construct, and a hint where one helps.

User functions are written to real files named ``mod.py`` (the compiler reads
source), so the line numbers below are counted in the sources as written here:
``HEADER`` takes lines 1-3, so ``def f`` is line 4 and its body starts on line 5.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import autodiff as ad
from tests.helpers import check_against_finite_differences

HEADER = "import fractions\nimport numpy as np\n\n"  # 'def f' comes on line 4, its body on 5


def _check(error: ad.AutodiffError, kind: type, where: str | None, *words: str) -> str:
    """Assert ``error`` is a ``kind`` whose text starts at ``where`` and holds ``words``."""
    text = str(error)
    assert type(error) is kind, f"{type(error).__name__} raised, {kind.__name__} expected"
    assert isinstance(error, ad.AutodiffError)
    if where is not None:
        assert text.startswith(where + " "), text
        assert error.lineno == int(where.rstrip(":").rpartition(":")[2])
    for word in words:
        assert word in text, f"{word!r} not in:\n{text}"
    # The user sees their own code, never our internals or a chained internal traceback.
    assert "autodiff/" not in text and "Traceback" not in text, text
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__
    return text


def _compile_error(user_module, body: str, signature: str = "x, y", **grad_options):
    """Write ``def f(signature)`` with ``body`` to mod.py and return what ``ad.grad`` raises."""
    source = HEADER + f"def f({signature}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    module = user_module(source, name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f, **grad_options)
    return info.value


# (id, body of f(x, y), line of the offending statement, words the message must hold)
UNSUPPORTED = [
    ("name a try may leave", ("try:\n    s = np.sum(x)\n    t = np.log(s)\nexcept ValueError:\n"
     "    t = 0.0\nreturn s + t\n"), 10, "'s' is read after the try statement of line 5",
     "hint:"),
    ("with", "with np.errstate(all='ignore'):\n    s = np.sum(np.log(x))\nreturn s\n", 5,
     "'with'"),
    ("read after del", "z = x * 2\ndel z\nreturn np.sum(z)\n", 7, "'z' is read after 'del z' "
     "at line 6", "hint:"),
    ("global", "global G\nreturn np.sum(x)\n", 5, "'global'"),
    ("import", "z = x * 2\nimport math\nreturn np.sum(z)\n", 6, "'import'"),
    ("class", "class Box:\n    pass\nreturn np.sum(x)\n", 5, "class definitions"),
    ("bare raise", "if np.sum(x) > 0:\n    raise\nreturn np.sum(x)\n", 6,
     "'raise' with no exception"),
    ("walrus in a while test with else", ("while (w := np.sum(x)) > 9.0:\n    x = x / 2\n"
     "else:\n    x = x * w\nreturn np.sum(x)\n"), 5, "(:=)", "'else:'"),
    ("set display", "s = {1.0, 2.0}\nreturn np.sum(x)\n", 5, "set displays"),
    ("argument element assignment", "v = x[1:]\nv[0] = y\nreturn np.sum(x)\n", 6,
     "in-place update of 'v'", "argument", "hint:"),
    ("argument element augmented", "v = x[1:]\nv[0] += y\nreturn np.sum(x)\n", 6,
     "in-place update of 'v'", "argument"),
    ("aliased element update", "z = x * 2\nw = z\nz[0] = y\nreturn np.sum(z + w)\n", 7,
     "also named 'w'", "hint:"),
    ("element update of a reshaped view", "z = x * 2\nv = z.reshape(-1)\nv[0] = y\n"
     "return np.sum(z)\n", 7, "in-place update of 'v', a view made by reshape", "hint:"),
    ("list element augmented assignment", "acc = []\nacc.append(x)\nacc[0] += y\n"
     "return np.sum(x)\n", 7, "augmented assignment to an item of the list 'acc'"),
    ("yield", "yield x\nreturn np.sum(x)\n", 5, "'yield'"),
    ("used before assignment", "s = s + x\nreturn np.sum(s)\n", 5, "'s' is used before"),
    ("loop over a number", "for v in 3.0:\n    x = x * v\nreturn np.sum(x)\n", 5,
     "cannot loop over '3.0'"),
    ("break in an unrolled loop", ("for v in (1.0, 2.0):\n    if np.sum(x) > v:\n        break\n"
     "    x = x * v\nreturn np.sum(x)\n"), 5, "supported in its last step only"),
    ("attribute assignment", "z = x * 2\nz.a = 1\nreturn np.sum(z)\n", 6, "attribute",
     "z.a = ..."),
    ("effect", "z = x * 2\nz.sort()\nreturn np.sum(z)\n", 6, "is called for its effect",
     "z.sort()"),
    ("no return", "z = x * 2\ns = np.sum(z)\n", 6, "no 'return'"),
    ("bare return", "z = x * 2\nreturn\n", 6, "returns None"),
    ("'is' on values", "if x is y:\n    x = x * 2\nreturn np.sum(x)\n", 5, "'is' is decided",
     "'x is y'", "hint: compare values with =="),
    ("'in' on a value", "z = x * 2\nif 1.0 in z:\n    z = z + 1\nreturn np.sum(z)\n", 6,
     "'in' is decided"),
    ("view read after an update", "z = x * 2\nv = z[:2]\nz[0] = y\nreturn np.sum(v)\n", 8,
     "'v' may be a view of 'z', which line 7 updates", "hint:"),
]


@pytest.mark.parametrize("body, line, words", [c[1:3] + (c[3:],) for c in UNSUPPORTED],
                         ids=[c[0] for c in UNSUPPORTED])
def test_unsupported_syntax_names_file_line_and_construct(user_module, body, line, words):
    error = _compile_error(user_module, body)
    text = _check(error, ad.UnsupportedSyntaxError, f"mod.py:{line}:", *words)
    statement = textwrap.dedent(body).splitlines()[line - 5].strip()
    assert statement in text  # the offending line is quoted


@pytest.mark.parametrize("signature", ["x, *rest", "x, **options", "x, *a, k=1, **kw"])
def test_wrt_naming_a_keyword_the_call_does_not_pass(user_module, signature):
    module = user_module(HEADER + f"def f({signature}):\n    return np.sum(x)\n", name="mod")
    with pytest.raises(ad.WrtError) as info:
        ad.grad(module.f, wrt="s")(np.ones(3))  # (compiled at the call, for its arguments)
    _check(info.value, ad.WrtError, "mod.py:4:", "wrt='s' is not an argument of f(x)")


def test_nonlocal_declaration(user_module):
    module = user_module(HEADER + textwrap.dedent("""\
        def make():
            total = 0.0

            def f(x):
                nonlocal total
                return np.sum(x)
            return f
    """), name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.make())
    _check(info.value, ad.UnsupportedSyntaxError, "mod.py:8:", "'nonlocal'")


# ----- calls the compiler cannot follow -----

CALLS = [
    ("np.polyder", "return np.sum(np.polyder(x) ** 2)", "'np.polyder'", "hint:"),
    ("fractions", "return fractions.Fraction(x)", "'fractions.Fraction'", "hint:"),
    ("np.histogram", "return np.sum(np.histogram(x)[0])", "'np.histogram'", "hint:"),
    ("method", "return np.sum(x.compress([True, False, True]))", "'.compress()'"),
    ("unknown attribute", "return np.sum(np.not_a_function(x))", "'np.not_a_function'"),
]


@pytest.mark.parametrize("line, words", [(c[1], c[2:]) for c in CALLS], ids=[c[0] for c in CALLS])
def test_unknown_functions_are_named(user_module, line, words):
    module = user_module(HEADER + f"def f(x):\n    {line}\n\n\ndef helper(v):\n    return v\n",
                         name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f)
    _check(info.value, ad.UnknownFunctionError, "mod.py:5:", *words)


def test_recursion_is_reported_at_the_recursive_call(user_module):
    module = user_module(HEADER + textwrap.dedent("""\
        def f(x, depth):
            return np.sum(x) + descend(x, depth)


        def descend(x, depth):
            if np.sum(x) < depth:
                return 0.0
            return np.sum(np.sin(x)) + descend(x * 0.5, depth)
    """), name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f)(np.ones(3), 1.0)
    _check(info.value, ad.UnsupportedSyntaxError, "mod.py:11:", "recursive call to 'descend'",
           "hint:", "descend(x * 0.5, depth)")


def test_recursion_ending_on_an_int_argument_is_unrolled_per_call(user_module):
    module = user_module(HEADER + textwrap.dedent("""\
        def f(x, depth):
            return np.sum(x) + descend(x, depth)


        def descend(x, depth):
            if depth == 0:
                return 0.0
            return np.sum(np.sin(x)) + descend(x * 0.5, depth - 1)
    """), name="mod")
    x = np.array([0.3, -1.2, 2.0])
    for depth in (0, 3):
        check_against_finite_differences(module.f, [x, depth], second_order=True)


def test_errors_inside_a_helper_name_the_helper_line(user_module):
    module = user_module(HEADER + textwrap.dedent("""\
        def f(x):
            return helper(x, scale=2.0)


        def helper(v, scale=1.0):
            out = v * scale
            out.sort()
            return np.sum(out)
    """), name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f)
    _check(info.value, ad.UnsupportedSyntaxError, "mod.py:10:", "is called for its effect",
           "out.sort()")


def test_unsupported_call_arguments(user_module):
    error = _compile_error(user_module, "s = np.sum(x, dtype=float)\nreturn s * y\n")
    _check(error, ad.UnsupportedSyntaxError, "mod.py:5:", "np.sum", "dtype")
    module = user_module("import math\n\ndef f(x):\n    return math.log(x, 2.0)\n", name="mod")
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(module.f)
    _check(info.value, ad.UnsupportedSyntaxError, "mod.py:4:", "math.log",
           "write math.log(x) / math.log(base)")


# ----- functions whose source cannot be read -----


@pytest.mark.parametrize("fn", [np.sin, math.exp, len], ids=["ufunc", "math builtin", "builtin"])
def test_builtins_have_no_source(fn):
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(fn)
    _check(info.value, ad.SourceUnavailableError, None, "cannot read the source", "def", "hint:")


def test_exec_defined_function_has_no_source():
    namespace = {"np": np}
    exec("def from_exec(x):\n    return np.sum(x * x)\n", namespace)  # noqa: S102
    with pytest.raises(ad.AutodiffError) as info:
        ad.grad(namespace["from_exec"])
    _check(info.value, ad.SourceUnavailableError, "<string>:1:", "from_exec", "hint:", "file")


# ----- wrt -----


@pytest.mark.parametrize("wrt, words", [
    ("V", ("wrt='V'", "not an argument", "f(x, y)")),
    (2, ("wrt=2", "out of range", "f(x, y)", "2 argument")),
    (-3, ("wrt=-3", "out of range")),
    ((0, 0), ("'x' twice",)),
    ((1, "y"), ("'y' twice",)),
    (1.5, ("1.5",)),
    (True, ("True",)),
    ((), ("empty",)),
], ids=repr)
def test_wrt_errors(user_module, wrt, words):
    error = _compile_error(user_module, "return np.sum(x * y)\n", wrt=wrt)
    _check(error, ad.WrtError, "mod.py:4:", *words)


# ----- outputs that are not one scalar -----


def test_tuple_output_is_rejected_when_compiling(user_module):
    error = _compile_error(user_module, "s = np.sum(x * y)\nreturn s, x\n")
    _check(error, ad.NonScalarOutputError, "mod.py:6:", "tuple", "hint:")


@pytest.mark.parametrize("body, scalar_gradient, line", [
    ("return np.sin(x) * y\n", np.cos(2.0) * 3.0, 5),  # output shape unrelated to x's
    ("return 3.0 * x ** 2\n", 12.0, 5),  # the output has x's shape
    ("z = np.sin(x) * y\nreturn z\n", np.cos(2.0) * 3.0, 6),
    ("z = 3.0 * x ** 2\nreturn z\n", 12.0, 6),
], ids=["other shape", "shape of x", "other shape, returned later", "shape of x, returned later"])
def test_array_output_is_rejected_when_called(user_module, body, scalar_gradient, line):
    module = user_module(HEADER + "def f(x, y):\n" + textwrap.indent(body, "    "), name="mod")
    gradient = ad.grad(module.f)  # shapes are only known at call time
    assert gradient(2.0, 3.0) == pytest.approx(scalar_gradient)
    with pytest.raises(ad.AutodiffError) as info:
        gradient(np.array([1.0, 2.0, 3.0]), 2.0)
    # the message points at the return statement, even when z was computed above it
    _check(info.value, ad.NonScalarOutputError, f"mod.py:{line}:", "shape (3,)", "vjp")
    assert "vjp" in info.value.hint


# ----- operations without a gradient -----


def test_norm_without_gradient_rule(user_module):
    error = _compile_error(user_module, "n = np.linalg.norm(x, ord=-1)\nreturn n * y\n")
    _check(error, ad.NonDifferentiableError, "mod.py:5:", "np.linalg.norm", "ord=-1")


@pytest.mark.parametrize("expression", ["np.sign(x)", "np.floor(x) * 2.0", "np.round(x)",
                                        "(x > 0) * 1.0"])
def test_piecewise_constant_ops_give_zero_gradient(user_module, expression):
    module = user_module(HEADER + f"def f(x):\n    return np.sum({expression} * 3.0)\n")
    x = np.array([-1.3, 0.4, 2.6])
    gradient = ad.grad(module.f)(x)
    assert gradient.shape == x.shape and gradient.dtype == np.float64
    assert np.array_equal(gradient, np.zeros(3))
    # sign(x) is a constant factor of the differentiated part, as in JAX and PyTorch
    module = user_module(HEADER + f"def g(x):\n    return np.sum({expression} * x)\n")
    np.testing.assert_allclose(ad.grad(module.g)(x), eval(expression, {"np": np, "x": x}))


def test_inactive_argument_may_flow_through_an_op_without_gradient(user_module):
    module = user_module(HEADER + "def f(x, y):\n    return np.sum(x) * np.linalg.norm(y, ord=-1)\n")
    x, y = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    np.testing.assert_allclose(ad.grad(module.f, wrt="x")(x, y), [12.0 / 7.0, 12.0 / 7.0])
    with pytest.raises(ad.NonDifferentiableError):
        ad.grad(module.f, wrt="y")
