"""The package list in pyproject.toml is written by hand: it must name every package."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_and_examples_ship():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(path.parent.relative_to(ROOT).parts)
               for path in (ROOT / "autodiff").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"autodiff.examples"}
    assert config["package-dir"] == {"autodiff.examples": "examples"}
    assert (ROOT / "examples" / "__init__.py").exists()
