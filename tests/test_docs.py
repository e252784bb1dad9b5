"""The guides name what exists: every repository path they cite in backticks, and the codec list of
docs/families.md and README is the set of codecs the reference's families use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("README.md", "docs/adapters.md", "docs/families.md", "docs/known-broken.md", "tests/README.md")
TOP = ("contract/", "fixtures/", "parsers/", "reports/", "tests/", "docs/", ".ci/")


def cited_paths(text: str) -> set[str]:
    """Backticked repository paths, placeholders (NAME, <engine>, …) and globs left out."""
    found = set()
    for token in re.findall(r"`([^`\s]+)`", text):
        token = token.rstrip(".,:")
        if not token.startswith(TOP) or token.startswith("reports/out") or re.search(r"[<>*{}]|NAME", token):
            continue
        found.add(token)
    return found


@pytest.mark.parametrize("guide", GUIDES)
def test_every_cited_path_exists(guide: str) -> None:
    text = (ROOT / guide).read_text(encoding="utf-8")
    base = ROOT if guide != "tests/README.md" else ROOT / "tests"
    paths = cited_paths(text)
    assert paths, f"{guide} cites no path: the pattern is wrong"
    missing = sorted(p for p in paths if not (ROOT / p).exists() and not (base / p).exists())
    assert missing == [], f"{guide} cites paths that do not exist"


def _codecs_used() -> set[str]:
    families = ROOT / "parsers" / "reference" / "families"
    used: set[str] = set()
    for module in families.glob("*.py"):
        used.update(re.findall(r"from \.\.grammars\.(\w+) import", module.read_text()))
    return used


def test_the_guides_list_every_codec_the_families_use() -> None:
    used = _codecs_used() - {"raw_value", "object_writer", "python_literals", "stepper"}  # building blocks
    families_doc = (ROOT / "docs" / "families.md").read_text(encoding="utf-8")
    listed = re.search(r"existing codec in `parsers/reference/grammars/` with their own markers: (.*?)\. ",
                       families_doc, re.S)
    assert listed is not None
    assert set(re.findall(r"`(\w+)`", listed.group(1))) == used
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"existing codec in `grammars/` — (.*?) —", readme, re.S)
    assert listed is not None
    assert set(re.split(r",\s*", listed.group(1).strip())) == used


def test_the_command_line_tools_run_as_printed() -> None:
    """Every tool `contract/cli/__init__.py` lists answers `--help` under the module path it prints, and the two
    checks the tests tell a contributor to run (`catalog_doc --check`, `draws --check`) pass as printed."""
    import subprocess
    import sys

    from contract import cli

    listed = re.findall(r"python -m (contract\.cli\.\w+)", cli.__doc__ or "")
    assert {m.rsplit(".", 1)[1] for m in listed} == {p.stem for p in (ROOT / "contract" / "cli").glob("[!_]*.py")}
    for command in ([sys.executable, "-m", module, "--help"] for module in listed):
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and f"usage: python -m {command[2]}" in done.stdout, done.stderr[-2000:]
    for tool in ("contract.cli.catalog_doc", "contract.cli.draws"):
        done = subprocess.run([sys.executable, "-m", tool, "--check"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
