"""Filling templates with operand text, adding parentheses only where precedence needs them."""

from __future__ import annotations

# How tightly a top-level operator binds; atoms, calls and subscripts bind tightest (6).
_LEVELS = {"if": 0, "else": 0, "or": 0, "and": 0, "<": 0, ">": 0, "==": 0, "!=": 0,
           "<=": 0, ">=": 0, "+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "**": 4}


def looseness(text: str) -> int:
    """1 for a sum, 2 a product, 3 a negation, 4 a power, 6 an atom, call or subscript."""
    depth, level = 0, 6
    for i, character in enumerate(text):
        depth += (character in "([") - (character in ")]")
        if depth == 0 and character == " ":
            word = text[i + 1:].split(" ")[0]
            if word in _LEVELS:
                level = min(level, _LEVELS[word])
    if text.startswith("-"):
        return min(level, 3)
    if text[:1].isdigit() and level == 6:
        return 5  # a number: `0.5.sum()` and `2[0]` are not what they seem
    return level


def needs(template: str, name: str) -> int:
    """How tightly an operand must bind to sit in every one of ``template``'s slots ``name``
    as it is (``{a} * {a}`` needs more of its second ``a`` than of its first)."""
    parts = template.split("{" + name + "}")
    return max(_needs(before, after) for before, after in
               (("".join(parts[:i + 1]), "".join(parts[i + 1:])) for i in range(len(parts) - 1)))


def _needs(before: str, after: str) -> int:
    if after.startswith((".", "[")):
        return 6
    if after.startswith(" **"):
        return 5
    if before.endswith(" - "):  # a - (b + c)
        return 2
    if before.endswith("-"):  # -(a * b) is -a * b, but -(a ** b) is not (-a) ** b
        return 4
    if before.endswith(("* ", "/ ", "@ ", "** ")):
        return 3 if not before.endswith("** ") else 4
    if after.startswith((" *", " /", " @")):
        return 2
    return 1 if after.startswith((" if", " <", " >")) or before.endswith("else ") else 0


def fill(template: str, **operands: str) -> str:
    """``template`` with its slots filled, each operand parenthesised if it binds too loosely."""
    return template.format(**{name: text if looseness(text) >= needs(template, name)
                              else f"({text})" for name, text in operands.items()
                              if "{" + name + "}" in template})
