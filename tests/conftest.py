"""Shared fixtures: a factory for user functions written to real source files."""

from __future__ import annotations

import os

import pytest

# The doctests of ./autodiff are collected by path. Where autodiff is installed
# (CI tests the installed copy, .ci/run), importing them by name gives the
# installed modules, whose docstrings are the same: run those, rather than
# failing on the path that differs.
os.environ.setdefault("PY_IGNORE_IMPORTMISMATCH", "1")

from tests.helpers import UserModules


@pytest.fixture
def user_module(tmp_path):
    """``user_module(source)`` imports ``source`` as a module of its own file."""
    return UserModules(tmp_path)
