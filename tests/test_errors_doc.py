"""Every entry of docs/errors.md, run: the documented program raises the documented message.

Each ``###`` entry holds three blocks: ``model.py`` (a module, written to its
own directory and imported under that file name), the call, and the message
the user sees (``ErrorClass: text``; ``...`` stands for any text). With
``AUTODIFF_UPDATE_GOLDEN=1`` the messages in the page are rewritten from
what the calls raise now, for review in the diff.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import autodiff as ad

PAGE = Path(__file__).resolve().parent.parent / "docs" / "errors.md"
UPDATE = os.environ.get("AUTODIFF_UPDATE_GOLDEN") == "1"
_modules = itertools.count()


@dataclass
class Entry:
    title: str
    module: str
    call: str
    message: str
    message_span: tuple[int, int]  # where the message sits in the page's text
    requires: str | None = None


def _entries(text: str) -> list[Entry]:
    entries = []
    for match in re.finditer(r"^### (.+?)\n(.*?)(?=^##|\Z)", text, re.MULTILINE | re.DOTALL):
        title, body = match.group(1), match.group(2)
        start = match.start(2)
        blocks = list(re.finditer(r"^```(\w+)\n(.*?)^```", body, re.MULTILINE | re.DOTALL))
        kinds = [b.group(1) for b in blocks]
        assert kinds == ["python", "python", "text"], f"{title}: blocks {kinds}"
        requires = re.search(r"<!-- requires: ([\w ]+) -->", body)  # modules, by spaces
        entries.append(Entry(title, blocks[0].group(2), blocks[1].group(2),
                             blocks[2].group(2).rstrip("\n"),
                             (start + blocks[2].start(2), start + blocks[2].end(2)),
                             requires.group(1) if requires else None))
    return entries


ENTRIES = _entries(PAGE.read_text())


def _raised(entry: Entry, directory: Path) -> str:
    """``ErrorClass: message`` of what the entry's call raises."""
    directory.mkdir()
    path = directory / "model.py"
    path.write_text(entry.module)
    spec = importlib.util.spec_from_file_location(f"errors_doc_model_{next(_modules)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace = vars(module)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's own warnings about NaN are not the point
            exec(compile(entry.call, str(directory / "call.py"), "exec"), namespace)  # noqa: S102
    except Exception as error:  # noqa: BLE001 - any error is what the page documents
        return f"{type(error).__name__}: {error}"
    return "(no error)"


def _matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual, re.DOTALL) is not None


def test_the_page_lists_the_errors_the_issue_names():
    titles = " ".join(e.title for e in ENTRIES)
    for construct in ["`try`", "`with`", "`yield`", "`async def`", "`global`", "`nonlocal`",
                      "`del`", "`class`", "`*x` of an array", "(`:=`)", "Set comprehensions",
                      "A dict comprehension", "Attribute assignment", "A dict key",
                      "Changing a dict the caller passed", "without a gradient rule",
                      "Recursion", "without Python source", "missing argument", "a string",
                      "returning an array", "Shapes that do not fit", "`check_finite=True`"]:
        assert construct in titles, construct
    assert len({e.title for e in ENTRIES}) == len(ENTRIES), "two entries share a title"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.title for e in ENTRIES])
def test_documented_error(entry, tmp_path):
    for module in (entry.requires or "").split():
        pytest.importorskip(module)
    actual = _raised(entry, tmp_path / "example")
    if UPDATE and not _matches(entry.message, actual):
        text = PAGE.read_text()
        current = next(e for e in _entries(text) if e.title == entry.title)
        start, end = current.message_span
        PAGE.write_text(text[:start] + actual + "\n" + text[end:])
        return
    assert _matches(entry.message, actual), f"documented:\n{entry.message}\nraised:\n{actual}"
    error_class = actual.split(":", 1)[0]
    if error_class == "ValueError":  # a bad option, not about the user's code
        return
    # (a structure's error is ad.tree's: StructureError)
    found = getattr(ad, error_class, None) or getattr(ad.tree, error_class)
    assert issubclass(found, ad.AutodiffError), error_class
    if entry.title not in WITHOUT_A_LINE:
        assert re.match(r"\w+: (model\.py|<string>):\d+: ", actual), "no file and line"


# A built-in function has no file to point at.
WITHOUT_A_LINE = {"A function without Python source"}


def test_messages_name_the_users_line_not_only_the_generated_one():
    documented = {e.title: e.message for e in ENTRIES}
    shape = documented["Shapes that do not fit"]
    assert shape.startswith("DerivativeError: model.py:6:") and "h = np.tanh(x @ W)" in shape
    assert "x: float64 array of shape (5, 3)" in shape
    assert "W: float64 array of shape (4, 2)" in shape
    nan = documented["NaN in the gradient, with `check_finite=True`"]
    assert nan.startswith("NonFiniteError: model.py:6: the gradient of this line produced inf")


def test_runtime_errors_stay_the_builtin_kind(tmp_path):
    entry = next(e for e in ENTRIES if e.title == "Shapes that do not fit")
    (tmp_path / "model.py").write_text(entry.module)
    spec = importlib.util.spec_from_file_location("errors_doc_shapes", tmp_path / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ValueError) as info:  # code catching NumPy's ValueError still does
        ad.grad(module.f)(np.ones((5, 3)), np.ones((4, 2)))
    assert isinstance(info.value, ad.DerivativeError)
    cause = info.value.__cause__
    assert type(cause) is ValueError and "matmul" in str(cause)
    assert "t1 = x @ W" in "".join(traceback.format_tb(cause.__traceback__))  # generated line
