"""Sphinx configuration of autodiff's documentation.

Sphinx, because autodiff's docstrings are already reStructuredText (``code``,
:func:`...`), which autodoc renders as they are, and because the scientific Python
projects (NumPy, SciPy, JAX) document with it; MyST-Parser, so that the pages are
Markdown, like README.md and the pages under docs/ that predate the site
(errors.md, architecture.md), which it includes unchanged. The theme is
alabaster, Sphinx's own: no dependency beyond Sphinx and MyST.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are errors,
so every cross reference resolves; tests/test_docs.py runs this build).
"""

from autodiff import __version__

project = "autodiff"
author = "the autodiff authors"
release = __version__
version = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# errors.md links to its own sections (#reading-the-function): anchors for ## and ###.
myst_heading_anchors = 3

# Every reference must resolve, type hints included, but for the standard library's
# types: linking them would need intersphinx, which fetches Python's inventory over
# the network at every build.
nitpicky = True
nitpick_ignore = [("py:class", "collections.abc.Callable"),
                  ("py:class", "collections.abc.Sequence")]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "alabaster"
html_title = f"autodiff {release}"
html_theme_options = {
    "description": "Automatic differentiation of NumPy code by source transformation",
    "fixed_sidebar": True,
    "page_width": "1100px",
    "body_max_width": "none",
}
