"""The house rules a reviewer checks by hand, checked by machine: sizes, import cycles, one
writer of LlamaIndex's global Settings, and no reaching into the library's private members."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "engines", "evals")
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 200


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_classes_stay_small(name: str) -> None:
    path = MODULES[name]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path}: {lines} lines (max {MAX_MODULE_LINES}): split it by job"
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            assert size <= MAX_CLASS_LINES, f"{path}: class {node.name} is {size} lines (max {MAX_CLASS_LINES})"


def _imports(name: str, path: Path) -> set[str]:
    """Project modules ``name`` imports anywhere (function bodies too), except under TYPE_CHECKING."""
    out: set[str] = set()
    tree = _tree(path)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def test_no_import_cycles() -> None:
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    # a package's __init__ importing its own submodules is not a cycle worth reporting
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_llamaindex_global_settings_are_written_in_one_module_at_most() -> None:
    writers = set()
    for name, path in MODULES.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and ast.unparse(target.value) in ("Settings", "LlamaSettings"):
                        writers.add(name)
    assert len(writers) <= 1, f"LlamaIndex Settings written in {sorted(writers)}"
    assert writers <= {"app.compose"}


def test_app_and_evals_touch_no_private_member_of_ours() -> None:
    offenders = []
    for name, path in MODULES.items():
        if not name.startswith(("app", "evals")):
            continue
        source = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(_tree(path)):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and ast.unparse(node.value) not in ("self", "cls", "super()")
                    and "not ours" not in source[node.lineno - 1]):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert not offenders, "private members used from outside: " + "; ".join(offenders)


def test_only_cli_entry_points_of_evals_import_app() -> None:
    """The measuring library goes through engines' public API; only the command lines (and pytest's
    conftest) compose a pipeline with app."""
    entry_points = {"evals.replay", "evals.variants", "evals.headroom", "evals.calibrate", "evals.conflicts",
                    "evals.routes", "evals.conftest", "evals.bench.__main__"}
    importers = {name for name, path in MODULES.items()
                 if name.startswith("evals") and any(m.startswith("app") for m in _imports(name, path))}
    assert importers <= entry_points, f"evals modules importing app: {sorted(importers - entry_points)}"
