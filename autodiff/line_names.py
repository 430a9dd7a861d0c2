"""The name a user sees for a line of code: ``model.py:12``, or ``Cell In[16], line 2``.

IPython compiles each cell it runs under a file name of its own making (a Jupyter
kernel's ``/tmp/ipykernel_1234/2861871040.py``) and keeps, in its compiler's
``_filename_map``, the execution count of the cell each such name belongs to; its
tracebacks name the cell by that count. Errors about a function defined in a cell
name it the same way. IPython is never imported: an IPython session sets
``get_ipython`` among the builtins, which is all this reads.

>>> line_name("/home/me/model.py", 12)
'model.py:12'
>>> line_name("model.py")
'model.py'
"""

from __future__ import annotations

import builtins
import os


def line_name(filename: str, lineno: int | None = None) -> str:
    """``Cell In[16], line 2`` for a line of a cell IPython ran in this process, else the
    file's base name and the line, ``model.py:12`` (without a line: the cell or the file)."""
    cell = cell_number(filename)
    if cell is not None:
        return f"Cell In[{cell}]" + ("" if lineno is None else f", line {lineno}")
    return os.path.basename(filename) + ("" if lineno is None else f":{lineno}")


def cell_number(filename: str) -> int | None:
    """The execution count of the IPython cell compiled under ``filename``, or None when
    this is no IPython session or the file is not one of its cells."""
    get_ipython = getattr(builtins, "get_ipython", None)
    if get_ipython is None:
        return None
    try:
        # IPython's CachingCompiler: {file name a cell was compiled under: execution count}
        return get_ipython().compile._filename_map.get(filename)
    except (AttributeError, TypeError):  # no shell running (None), or another IPython
        return None
