"""The package's shape, checked statically (STYLE.md rule 11): no import cycle, op folders are
leaves (they import no tool layer), and nothing is imported by a module-name string. Every
module under ``ortops/`` is parsed with ``ast``; imports inside functions count as much as the
ones at the top."""

from __future__ import annotations

import ast
from pathlib import Path

TOOL_LAYERS = ("conformance", "compare", "bench", "reporting", "cli")
#: Modules that may import by a computed name, and why.
DYNAMIC_IMPORTS_ALLOWED = {
    "ortops.onnx_vectors",  # onnx's own backend-test case modules, not ortops'
}
#: Known breaks, each as :func:`violations` words it.
KNOWN: set[str] = set()


def _modules(root: Path) -> dict[str, Path]:
    def name(path):
        parts = path.relative_to(root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    return {name(p): p for p in sorted(root.rglob("*.py"))}


def _imports(modules: dict[str, Path], module: str, nodes) -> set[str]:
    """The package's modules that the statements ``nodes`` of ``module`` import. ``from package
    import submodule`` imports the submodule, not what the package's ``__init__`` defines."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            submodules = {f"{base}.{a.name}" for a in node.names} & set(modules)
            found |= submodules
            if len(submodules) < len(node.names):  # a name defined in the module itself
                found.add(base)
    return {name for name in found if name in modules and name != module}


def _cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, found = {}, {}, [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _imports_by_string(tree: ast.AST) -> bool:
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        f = call.func
        if (isinstance(f, ast.Attribute) and f.attr == "import_module") or (
                isinstance(f, ast.Name) and f.id in ("import_module", "__import__")):
            return True
    return False


def violations(root: Path) -> list[str]:
    """Every break of the package's shape under ``root`` (a package directory), as lines."""
    modules = _modules(root)
    trees = {m: ast.parse(p.read_text()) for m, p in modules.items()}
    graph = {m: _imports(modules, m, ast.walk(tree)) for m, tree in trees.items()}
    ops, layers = f"{root.name}.ops", tuple(f"{root.name}.{layer}" for layer in TOOL_LAYERS)
    found = ["cycle: " + " <-> ".join(c) for c in _cycles(graph)]
    found += [f"{m} imports {name}" for m in modules if m == ops or m.startswith(ops + ".")
              for name in sorted(graph[m]) if name in layers or name.startswith(tuple(f"{t}." for t in layers))]
    found += [f"{m} imports by a name string" for m, tree in trees.items()
              if m not in DYNAMIC_IMPORTS_ALLOWED and _imports_by_string(tree)]
    return found


def test_the_package_keeps_its_shape():
    found = violations(Path(__file__).resolve().parents[1] / "ortops")
    print("\n".join(found))
    assert not set(found) - KNOWN, "new: " + "\n".join(sorted(set(found) - KNOWN))
    assert not KNOWN - set(found), "fixed, so remove from KNOWN: " + "\n".join(sorted(KNOWN - set(found)))


def test_the_check_can_fail(tmp_path):
    root = tmp_path / "pkg"
    (root / "ops" / "op").mkdir(parents=True)
    (root / "conformance").mkdir()
    files = {
        "__init__.py": "", "a.py": "def f():\n    from . import b\n", "b.py": "from .a import f\n",
        "ops/__init__.py": "from .op import spec\n", "ops/op/__init__.py": "",
        "ops/op/judge.py": "from ... import ops\n",  # imports the op list, which reaches it below
        "ops/op/spec.py": "def link():\n    from . import judge\ndef g():\n    from ...conformance import cases\n",
        "conformance/__init__.py": "import importlib\nimportlib.import_module('pkg.ops.op.spec')\n",
        "conformance/cases.py": "",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    assert sorted(violations(root)) == [
        "cycle: pkg.a <-> pkg.b", "cycle: pkg.ops <-> pkg.ops.op.judge <-> pkg.ops.op.spec",
        "pkg.conformance imports by a name string",
        "pkg.ops.op.spec imports pkg.conformance.cases"]
