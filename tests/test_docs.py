"""The guides name what exists: every repository path they cite in backticks, and the codec list of
docs/families.md and README is the set of codecs the reference's families use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("README.md", "docs/adapters.md", "docs/families.md", "tests/README.md")
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
