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

Statements and loops are hypothesis' choices, so that a failing program
shrinks to fewer and simpler statements; each expression is written by a
``random.Random`` seeded from one hypothesis draw (drawing each of its many
small choices from hypothesis took most of the generator's time).
"""
