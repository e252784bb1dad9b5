"""What build of an engine was graded: its installed distribution, where pip took it from, its commit.

Read from the installed metadata (PEP 610 `direct_url.json`), not from what was asked for, so a
results file says what actually ran: a release from the index, a wheel file, a local checkout
(editable or not, with its git commit and whether the tree had uncommitted changes) or a VCS URL.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse


@dataclass(frozen=True)
class Build:
    distribution: str
    version: str
    source: str  # index | directory | editable | archive | vcs
    url: str | None = None
    commit: str | None = None
    dirty: bool | None = None  # a checkout with uncommitted changes (None: not a git checkout)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _git(folder: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def head_commit(folder: Path) -> str | None:
    """The HEAD commit of the git work tree holding `folder`, or None outside one."""
    head = _git(folder, "rev-parse", "HEAD")
    return (head.strip() or None) if head else None


def checkout_state(folder: Path) -> tuple[str | None, bool | None]:
    """(HEAD commit, has uncommitted changes) of the git work tree holding `folder`, or (None, None)."""
    head = head_commit(folder)
    if not head:
        return None, None
    status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    return head, None if status is None else bool(status.strip())


def installed_build(distribution: str) -> Build:
    """The installed distribution's version and origin."""
    dist = importlib.metadata.distribution(distribution)
    version = dist.version
    raw = dist.read_text("direct_url.json")
    if not raw:
        return Build(distribution, version, "index")
    origin = json.loads(raw)
    url = origin.get("url")
    if "vcs_info" in origin:
        return Build(distribution, version, "vcs", url, origin["vcs_info"].get("commit_id"))
    if "archive_info" in origin:
        return Build(distribution, version, "archive", url)
    source = "editable" if origin.get("dir_info", {}).get("editable") else "directory"
    parsed = urlparse(url or "")
    folder = Path(unquote(parsed.path)) if parsed.scheme == "file" else None
    commit, dirty = checkout_state(folder) if folder is not None and folder.is_dir() else (None, None)
    return Build(distribution, version, source, str(folder) if folder else url, commit, dirty)
