"""examples/tour.ipynb runs from top to bottom in a Jupyter kernel, and each object it
shows displays as a notebook shows it: HTML, a picture, LaTeX, never a bare repr.

The kernel is ``python3`` from this environment (ipykernel, in the test extra,
installs its kernelspec with it), so it imports the autodiff under test.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "tour.ipynb"
BARE_REPR = re.compile(r"<[\w.]+ (object )?at 0x[0-9a-f]+>|<function ")


def _run() -> nbformat.NotebookNode:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return notebook


def _seen(output: dict) -> str:
    """The text a notebook shows for ``output``: a stream's text, or a result's plain
    text when it has no richer form (Jupyter shows the richest; a derivative's plain
    text, beside its HTML, is Python's repr of a function, which no one sees)."""
    if output.output_type == "stream":
        return output.text
    data = output.get("data", {})
    return data.get("text/plain", "") if set(data) == {"text/plain"} else ""


def _result(notebook: nbformat.NotebookNode, source_start: str) -> dict:
    """The data the cell whose source starts with ``source_start`` displays last."""
    cell = next(c for c in notebook.cells
                if c.cell_type == "code" and c.source.startswith(source_start))
    shown = [o for o in cell.outputs if o.output_type in ("execute_result", "display_data")]
    assert shown, f"the cell {source_start!r} shows nothing"
    return shown[-1].data


def test_the_tour_runs_and_every_result_displays_itself():
    notebook = _run()  # raises CellExecutionError at a cell that errors
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "a cell did not run"
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", cell.source
            text = _seen(output)
            assert not BARE_REPR.search(text), f"a bare repr from {cell.source!r}: {text}"

    derivative = _result(notebook, "dloss = ad.grad(")
    assert "text/html" in derivative and "<b>loss_grad</b>(W1, b1, W2, b2, x, t)" in derivative["text/html"]
    graph = _result(notebook, "dloss.graph")
    if shutil.which("dot"):
        assert graph["image/svg+xml"].lstrip().startswith(("<svg", "<?xml"))
    else:  # without Graphviz a graph shows its text
        assert "graph loss_grad(" in graph["text/plain"]
    assert "passed" in _result(notebook, "ad.check_grad(")["text/html"]
    assert "reverse mode (autodiff)" in _result(notebook, "def deep(")["text/html"]
    assert "text/latex" in _result(notebook, "symbolic = ad.symbolic_grad(")
    # plot_comparison's figure shows inline as a PNG, without %matplotlib inline
    figure = _result(notebook, "from autodiff.tools.plot import")
    assert figure["image/png"]
