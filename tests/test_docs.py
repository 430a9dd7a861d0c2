"""The documentation site builds without a warning, and the generated code its pages
show is what autodiff generates today.

A page marks a module with ``<!-- model.py -->`` before its ``python`` block, and
output computed from it with ``<!-- EXPRESSION -->`` before the block that shows
it; EXPRESSION is evaluated with ``ad`` and ``model`` (that module, written to its
own file as the page shows it, so its line numbers are the page's). With
``AUTODIFF_UPDATE_GOLDEN=1`` the blocks are rewritten from what autodiff gives
now, for review in the diff.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import autodiff as ad
from autodiff.tools.cli import build_parser

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["index", "tour", "how-it-works", "api", "three-ways", "cli", "coming-from", "ode",
         "loops", "errors", "architecture"]
CHECKED_PAGES = ["tour.md", "how-it-works.md", "ode.md", "loops.md"]
UPDATE = os.environ.get("AUTODIFF_UPDATE_GOLDEN") == "1"
_modules = itertools.count()

# <!-- marker --> then a fenced block: the marker, the block's text and its span
MARKED_BLOCK = re.compile(r"^<!-- (.+?) -->\n```\w+\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_the_site_builds_without_warnings(tmp_path):
    output = tmp_path / "html"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(output)],
        capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr
    for page in PAGES:
        assert (output / f"{page}.html").is_file(), page
    api = (output / "api.html").read_text()
    for name in ad.__all__:  # every public name has its entry (a namespace its members)
        anchor = {"tree": "autodiff.tree.map", "optim": "autodiff.optim.Adam"}.get(
            name, f"autodiff.{name}")
        assert f'id="{anchor}"' in api, name


def _blocks(text: str) -> tuple[str, list[re.Match]]:
    """The page's module, and the blocks marked with an expression."""
    blocks = list(MARKED_BLOCK.finditer(text))
    modules = [b.group(2) for b in blocks if b.group(1) == "model.py"]
    assert len(modules) == 1, "a page with generated code shows one model.py"
    return modules[0], [b for b in blocks if b.group(1) != "model.py"]


def _model(source: str, directory: Path):
    path = directory / "model.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"docs_model_{next(_modules)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", CHECKED_PAGES)
def test_generated_code_on_the_page_is_what_autodiff_generates(page, tmp_path):
    path = DOCS / page
    text = path.read_text()
    source, blocks = _blocks(text)
    assert blocks, f"{page} shows no generated code"
    model = _model(source, tmp_path)
    stale = []
    for block in reversed(blocks):  # from the end, so that earlier spans stay valid
        expression, shown = block.group(1), block.group(2)
        actual = str(eval(expression, {"ad": ad, "model": model})).rstrip("\n") + "\n"
        if actual != shown:
            stale.append(expression)
            text = text[:block.start(2)] + actual + text[block.end(2):]
    if UPDATE and stale:
        path.write_text(text)
        return
    assert not stale, f"{page}: out of date: {stale} (AUTODIFF_UPDATE_GOLDEN=1 rewrites them)"


def test_every_command_on_the_command_line_page_parses():
    text = (DOCS / "cli.md").read_text()
    commands = [line.split("#")[0].split(">")[0].split()
                for block in re.findall(r"^```bash\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
                for line in block.splitlines() if line.startswith("autodiff ")]
    assert {command[1] for command in commands} == {"grad", "graph", "check", "compare", "demo"}
    for command in commands:
        build_parser().parse_args(command[1:])  # argparse exits on an unknown option
