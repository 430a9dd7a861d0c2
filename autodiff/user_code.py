"""Whose code is it: the user's, or an installed library's or Python's own.

autodiff compiles the user's functions and methods from their source, and calls
a library's as they are; an object of a class of the user's is a structure of
its attributes (``ad.tree``), an object of a library's class is one value.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
import types


def is_library_code(fn: types.FunctionType, caller_file: str) -> bool:
    """Whether ``fn`` is code of an installed library or of Python itself (never compiled
    by autodiff: its own text is not the user's to differentiate), rather than the
    user's. A function of the caller's own file is the user's wherever that file is."""
    filename = fn.__code__.co_filename
    if filename == caller_file or filename.startswith("<"):  # exec'd text, notebook cells
        return False
    return _in_library(filename)


def is_user_class(kind: type) -> bool:
    """Whether ``kind`` is a class of the user's own code (its module is not an
    installed library's or Python's): its instances are structures of their
    attributes, and its methods are compiled like the user's functions."""
    module = sys.modules.get(getattr(kind, "__module__", None) or "")
    if getattr(kind, "__module__", None) == "builtins":
        return False
    if module is None:  # a module imported without sys.modules: by its methods' file
        files = [f.__code__.co_filename for f in vars(kind).values()
                 if isinstance(f, types.FunctionType)]
        return bool(files) and not any(_in_library(f) for f in files if not f.startswith("<"))
    filename = getattr(module, "__file__", None)
    if filename is None:  # __main__ of python -c, a notebook's cells
        return kind.__module__ == "__main__" or kind.__module__.startswith("__")
    return not _in_library(filename)


@functools.lru_cache(maxsize=4096)
def _in_library(filename: str) -> bool:
    """Whether the file is in a library's folder or Python's (asked for each object a
    function reads: each file's real path is resolved once)."""
    return os.path.realpath(filename).startswith(_library_folders())


@functools.cache
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")
               if key in paths}
    folders.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        folders.add(site.getusersitepackages())
    folders.add(os.path.dirname(os.path.abspath(__file__)))  # autodiff's own
    return tuple(os.path.join(os.path.realpath(folder), "") for folder in folders)


__all__ = ["is_library_code", "is_user_class"]
