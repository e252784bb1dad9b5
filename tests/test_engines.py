"""The engine registry (`contract/grading/engines.py`) is the one place an engine is declared: the adapters, the pin
files, README's engine table and the CI workflow's engine matrix all agree with it."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

from workflow import workflow

from contract.grading.adapter import BUILTIN_ENGINES
from contract.grading.engines import ENGINES

ROOT = Path(__file__).resolve().parents[1]


def _readme_engine_rows() -> dict[str, list[str]]:
    """README's "Engines" table: first column -> the row's cells."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Engines\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| engine ")]
    return {cells[0]: cells for cells in ([c.strip() for c in row.strip("|").split(" | ")] for row in rows)}


def test_every_adapter_declares_the_name_it_is_registered_under() -> None:
    for name, entry in ENGINES.items():
        assert BUILTIN_ENGINES[name] == entry.module
        assert name == importlib.import_module(entry.module).ENGINE  # importable with the engine absent


def test_every_pinned_engine_has_its_pin_file() -> None:
    for entry in ENGINES.values():
        if entry.pins_file is not None:
            assert (ROOT / "parsers" / "pins" / entry.pins_file).is_file(), entry.pins_file
    pinned = {entry.pins_file for entry in ENGINES.values()}
    assert {path.name for path in (ROOT / "parsers" / "pins").glob("*.pins.txt")} <= pinned


def test_readme_lists_every_engine_with_its_version_adapter_and_parser_count() -> None:
    rows = _readme_engine_rows()
    wanted = {entry.title + (f" {entry.version}" if entry.version else ""): entry for entry in ENGINES.values()}
    assert set(rows) == set(wanted)
    for label, entry in wanted.items():
        assert rows[label][1].startswith(f"`parsers/{entry.package}/`"), rows[label][1]
        if entry.distribution:  # how many parsers it grades (the one's name, for an engine with one)
            parsers = list(importlib.import_module(entry.module).MAPPING)
            shown = parsers[0] if len(parsers) == 1 else str(len(parsers))
            assert re.match(rf"{re.escape(shown)}\b", rows[label][2]), (label, rows[label][2], shown)
        assert ("on 127.0.0.1" in rows[label][1]) == entry.server, (label, "a server engine's row says where it binds")
    layout = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    for entry in ENGINES.values():
        assert f"`{entry.package}/`" in layout, entry.package


def test_the_ci_workflow_grades_every_engine() -> None:
    matrix = workflow("conformance matrix")["jobs"]["grade"]["strategy"]["matrix"]
    graded = set(matrix["engine"]) | {row["engine"] for row in matrix.get("include", [])}
    assert graded == set(ENGINES)


def _noxfile_project_imports() -> list[str]:
    """The modules of `contract/` that noxfile.py imports."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    return sorted(name for name in names if name.split(".")[0] == "contract")


def test_what_noxfile_imports_of_the_project_needs_only_the_standard_library() -> None:
    """nox imports noxfile.py under its own interpreter, where no project dependency is installed: the modules it
    takes from `contract/` (and the packages above them) import the standard library and each other alone. They
    are imported here by an interpreter without site-packages (`-S -I`), which then lists any module it loaded
    from neither."""
    modules = _noxfile_project_imports()
    assert {"contract.grading.engines", "contract.grading.cell_id", "contract.run.receipt"} <= set(modules)
    code = "\n".join([
        "import sys",
        f"sys.path.insert(0, {str(ROOT)!r})",
        *(f"import {module}" for module in modules),
        "print(sorted({name.split('.')[0] for name in sys.modules} - set(sys.stdlib_module_names)"
        " - {'contract', '__main__'}))",
    ])
    done = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


SURFACE_MODULES = {"parsers", "parsers.requests", "parsers.hf", "parsers.harmony_tokens",  # what `parsers` exports
                   "parsers.structural_tags"}


def _imports(path: Path) -> set[str]:
    """The modules a file imports, relative imports left out (they stay inside its own package)."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_adapters_import_their_engine_and_the_public_surface_alone() -> None:
    """Every adapter (the reference's included) sees the project through `parsers` alone: no `contract` module,
    no other adapter's package; `parsers.__all__` names what it may use, and all of it resolves."""
    import parsers

    root = Path(parsers.__file__).parent
    offending = []
    for path in sorted(root.rglob("*.py")):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        if name in SURFACE_MODULES:
            continue
        own = ".".join(name.split(".")[:2])
        for module in _imports(path):
            top = module.split(".")[0]
            if top == "contract" or (top == "parsers" and module != "parsers" and not module.startswith(own)):
                offending.append(f"{path.relative_to(root.parent)}: imports {module}")
    assert offending == []
    assert all(getattr(parsers, name) is not None for name in parsers.__all__)


STAGES = ("cases", "streams", "grading", "expectations", "run", "cli")  # contract/'s sub-packages, in data-flow order


def test_each_stage_of_the_core_imports_only_the_stages_before_it() -> None:
    """contract/'s folders follow the data: cases -> streams -> grading -> expectations (the verdict) -> run (the
    plan and the results file), with the command-line tools on top. A module may import its own stage and earlier
    ones, never a later one (a type named only for annotations, under TYPE_CHECKING, aside)."""
    core = ROOT / "contract"
    offending = []
    for path in sorted(core.rglob("*.py")):
        stage = path.relative_to(core).parts[0]
        if stage not in STAGES:
            continue
        for module in _runtime_imports(path):
            parts = module.split(".")
            if parts[0] == "contract" and len(parts) > 1 and parts[1] in STAGES and (
                    STAGES.index(parts[1]) > STAGES.index(stage)):
                offending.append(f"{path.relative_to(ROOT)}: imports {module}")
    assert offending == []
    assert sorted(p.name for p in core.iterdir() if p.suffix == ".py") == ["__init__.py"]  # every module has a stage


def _runtime_imports(path: Path) -> list[str]:
    """The absolute names of the modules a file imports at run time (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and ast.unparse(block.test) == "TYPE_CHECKING" for node in ast.walk(block)}
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    names = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names += [f"{module}.{alias.name}" for alias in node.names] if not node.module else [module]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def test_the_core_is_handed_its_families_and_engines() -> None:
    """`contract/` outside `contract/cli/` imports no families (`fixtures`), no adapter (`parsers`), no report
    and no test: the run gives it the families it grades and the engines' module paths, and writes results that
    reports read. The dependencies run one way, `fixtures` -> `contract` <- `reports`; the command-line tools
    and `conftest.py` compose them."""
    core = ROOT / "contract"
    offending = []
    for path in sorted(core.rglob("*.py")):
        if path.is_relative_to(core / "cli"):
            continue
        for module in _imports(path):
            if module.split(".")[0] in ("fixtures", "parsers", "reports", "tests"):
                offending.append(f"{path.relative_to(ROOT)}: imports {module}")
    assert offending == []
