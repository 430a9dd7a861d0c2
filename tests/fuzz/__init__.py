"""The generator of random programs that ``tests/api/test_random_programs.py`` differentiates.

``text`` writes expressions with the parentheses precedence needs, ``shapes``
knows which shapes each operation turns which shapes into, ``tables`` lists
the operations with a bound on their results, ``expressions`` and
``statements`` write a function's body, ``structures`` puts arguments into
dicts, tuples, lists, namedtuples and dataclasses (and draws groups of equal
arrays for ``f`` to loop over), and ``programs`` assembles modules
(with, for some programs, a second module of helpers and gradient rules),
runs them once at the test point to place thresholds away from the values
conditions see (and rejects a program that runs close to a kink), and draws
the inputs. ``checks`` holds everything each program is checked for, leaf by
leaf for a structured argument.

``off_path`` writes the programs of ``tests/api/test_random_off_path.py``: a
function whose stages mix the gradient path (run-time shapes and dtypes, a layer
object called, ``functools.partial``, a dict of lambdas, generators, a cache
returned with ``has_aux``) with Python that carries no gradient (writes into a
dict, an object and a list it was passed, ``print``, functions without a gradient
rule whose results the output does not read); ``off_path_checks`` checks that
every derivative has the plain function's effects, once per call, and its
gradient unchanged by them.

Statements and loops are hypothesis' choices, so that a failing program
shrinks to fewer and simpler statements; each expression is written by a
``random.Random`` seeded from one hypothesis draw (drawing each of its many
small choices from hypothesis took most of the generator's time).
"""
