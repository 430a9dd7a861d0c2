"""The direction of imports inside ``autodiff/`` (docs/architecture.md, "Direction of imports").

Every module is parsed, and every import of an autodiff module it makes, at
module level or inside a function, is an edge (an import under ``if TYPE_CHECKING:``,
which never runs, is not). The test fails on a circle of
imports, on an import reaching up the layer order below, and on an import of
another module's private (``_name``) name.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "autodiff"

# Bottom first. A module may import from its own layer and the layers below it.
# A module's layer is the first part of its name after ``autodiff.``; the package
# itself (``autodiff/__init__.py``) and ``__main__`` are the top.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "line_names", "version", "user_code", "tree"),
    ("graph",),
    ("ops",),
    ("frontend",),
    ("transforms",),
    ("codegen",),
    ("jit",),           # the per-signature specialisation pipeline
    ("derivatives",),   # building derivatives and assembling Jacobians
    ("api",),           # the public transforms
    ("tools",),
    ("", "__main__", "examples"),  # the package's namespace, the command line entry
]

# Imports of private names allowed for now, (importer, imported), each with its reason.
PRIVATE_EXCEPTIONS: set[tuple[str, str]] = set()


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_names()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def resolve(name: str) -> str | None:
    """The autodiff module ``name`` is, or the nearest enclosing one (None if not ours)."""
    if name != "autodiff" and not name.startswith("autodiff."):
        return None
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


class Import:
    def __init__(self, importer: str, imported: str, names: list[str], line: int) -> None:
        self.importer, self.imported, self.names, self.line = importer, imported, names, line

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}) imports {self.imported}"


def imports_of(module: str, text: str | None = None) -> list[Import]:
    """The imports of autodiff modules anywhere in ``module`` (functions included), and,
    for a module imported as a name, the private attributes read from it."""
    path = MODULES.get(module)
    tree = ast.parse(path.read_text() if text is None else text)
    package = module if path is not None and is_package(module) else module.rpartition(".")[0]
    found: list[Import] = []
    aliases: dict[str, str] = {}  # local name -> module it is bound to
    for node in ast.walk(tree):  # imports for type checkers only never run
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = resolve(alias.name)
                if target is not None:
                    found.append(Import(module, target, [], node.lineno))
                    aliases[alias.asname or alias.name.split(".")[0]] = (
                        target if alias.asname else "autodiff")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            if resolve(base) is None:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:  # a module imported from its package
                    found.append(Import(module, full, [], node.lineno))
                    aliases[alias.asname or alias.name] = full
                else:
                    found.append(Import(module, resolve(base), [alias.name], node.lineno))
    for node in ast.walk(tree):  # module._private
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            found.append(Import(module, aliases[node.value.id], [node.attr], node.lineno))
    return found


ALL_IMPORTS = [i for module in MODULES for i in imports_of(module)]


def layer_of(module: str) -> int:
    first = module.split(".")[1] if "." in module else ""
    for index, layer in enumerate(LAYERS):
        if first in layer:
            return index
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_imports_go_down_the_layers():
    upward = [f"{i} ({LAYERS[layer_of(i.importer)][0] or 'autodiff'} -> "
              f"{LAYERS[layer_of(i.imported)][0] or 'autodiff'})"
              for i in ALL_IMPORTS if layer_of(i.imported) > layer_of(i.importer)]
    assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_no_private_names_from_other_modules():
    private = [f"{i}: {', '.join(n for n in i.names if _private(n))}" for i in ALL_IMPORTS
               if i.imported != i.importer and any(_private(n) for n in i.names)
               and (i.importer, i.imported) not in PRIVATE_EXCEPTIONS]
    assert not private, "private names imported from another module:\n" + "\n".join(private)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_import_circles():
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in ALL_IMPORTS:
        if i.imported != i.importer and i.imported in MODULES:
            edges[i.importer].add(i.imported)
    circles = [sorted(c) for c in strongly_connected(edges) if len(c) > 1]
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root, children in edges.items():
        if root in index:
            continue
        work = [(root, iter(sorted(children)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def test_the_checks_see_function_level_imports_and_private_attributes():
    text = (
        "from autodiff.graph import ir\n"
        "def f():\n"
        "    from autodiff.api import _lock\n"
        "    from autodiff.ops import registry\n"
        "    return ir._secret, registry.alias\n")
    found = {(i.imported, tuple(i.names)) for i in imports_of("autodiff.graph.dot", text)}
    assert found == {("autodiff.graph.ir", ()), ("autodiff.api", ("_lock",)),
                     ("autodiff.ops.registry", ()), ("autodiff.graph.ir", ("_secret",)),
                     ("autodiff.ops.registry", ("alias",))}
    assert sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"a"}}))) == [
        ["a", "b"], ["c"]]


def test_the_worked_example_of_adding_an_op_is_the_code():
    """docs/architecture.md shows np.cumsum's block and its table line as they are."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    section = text[text.index("## Adding an op"):text.index("## Adding a transform")]
    blocks = section.split("```python\n")[1:]
    block, line = (b[:b.index("```")] for b in blocks)
    assert block.strip() in (PACKAGE / "ops" / "along_axis.py").read_text()
    assert line.strip() in (PACKAGE.parent / "tests" / "ops" / "test_along_axis.py").read_text()
