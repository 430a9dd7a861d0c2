"""The machine and software a run measured, for the head of RESULTS.md.

Timings mean little without the CPU, the library versions and the number of
BLAS threads, so all of them are written next to the tables.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
from implementations import numba_version
from threads import THREAD_VARIABLES

import autodiff as ad

PEER_DISTRIBUTIONS = ("jax", "jaxlib", "torch", "autograd", "tangent")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, or what `platform` knows elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores() -> str:
    """Logical CPUs, and how many of them this process may use."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{os.cpu_count()} logical, {usable} usable by this process"


def blas() -> str:
    """The BLAS NumPy was built against, from its build configuration."""
    config = getattr(np.__config__, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    return f"{config.get('name', 'unknown')} {config.get('version', '')}".strip()


def package_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def autodiff_revision() -> str:
    """Where the measured autodiff lives, and its git commit when it is a checkout."""
    root = Path(ad.__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "not a git checkout"
    return f"{root} (commit {commit})"


def thread_settings(set_by_run: list[str]) -> str:
    """Each thread variable's value, and whether run.py set it or the user did."""
    parts = []
    for name in THREAD_VARIABLES:
        value = os.environ.get(name, "unset")
        origin = "set by run.py" if name in set_by_run else "from the environment"
        parts.append(f"{name}={value} ({origin})")
    return "; ".join(parts)


def machine_details(set_by_run: list[str], peer_problems: dict[str, str]) -> str:
    """Platform, interpreter, library versions and thread settings, as bullet points."""
    details = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "CPU": cpu_model(),
        "cores": cores(),
        "OS": platform.platform(),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "NumPy": f"{np.__version__} (BLAS: {blas()})",
        "threads": thread_settings(set_by_run),
        "numba": numba_version() or "not installed",
        "autodiff": autodiff_revision(),
    }
    details.update({name: package_version(name) for name in PEER_DISTRIBUTIONS})
    lines = [f"- {key}: {value}" for key, value in details.items()]
    lines += [f"- {column} column left out: {why}" for column, why in peer_problems.items()]
    return "\n".join(lines)
