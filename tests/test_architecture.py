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


def _imports(name: str, path: Path, *, typing_only: bool = False) -> set[str]:
    """Project modules ``name`` imports anywhere (function bodies too); those under TYPE_CHECKING only
    when ``typing_only`` (a dependency all the same: the module cannot be read without the other)."""
    out: set[str] = set()
    tree = _tree(path)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if not typing_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
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


def test_no_import_cycles_in_any_form() -> None:
    """No module needs another that needs it back, at run time or for typing alone."""
    graph = {name: _imports(name, path, typing_only=True) for name, path in MODULES.items()}
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
                    "evals.routes", "evals.conftest", "evals.bench.__main__", "evals.formats", "evals.sql"}
    importers = {name for name, path in MODULES.items()
                 if name.startswith("evals") and any(m.startswith("app") for m in _imports(name, path))}
    assert importers <= entry_points, f"evals modules importing app: {sorted(importers - entry_points)}"


#: Modules ``engines/`` keeps at its root: the pipeline, session, record, chat face and small shared
#: kernels. Everything else lives in a package named for its concern.
MAX_ENGINES_ROOT_MODULES = 10


def test_engines_root_holds_only_the_turn_and_its_kernels() -> None:
    root = sorted(p.stem for p in (ROOT / "engines").glob("*.py") if p.name != "__init__.py")
    assert len(root) <= MAX_ENGINES_ROOT_MODULES, (
        f"engines/ has {len(root)} modules at its root ({', '.join(root)}); move each into the package of "
        f"its concern (corpus, retrieval, conversation, answering, ...)")


@pytest.mark.parametrize("package", sorted(p.parent.name for p in (ROOT / "engines").glob("*/*.py")))
def test_every_engines_package_says_what_it_holds(package: str) -> None:
    init = ROOT / "engines" / package / "__init__.py"
    assert init.exists(), f"engines/{package}/ has no __init__.py: make it a package with a docstring"
    doc = ast.get_docstring(_tree(init))
    assert doc and len(doc.split()) >= 20, f"engines/{package}/__init__.py needs a paragraph saying what it holds"
