"""Shared fixtures: a factory for user functions written to real source files."""

from __future__ import annotations

import pytest

from tests.helpers import UserModules


@pytest.fixture
def user_module(tmp_path):
    """``user_module(source)`` imports ``source`` as a module of its own file."""
    return UserModules(tmp_path)
