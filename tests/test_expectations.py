"""KnownBroken end to end: update-expectations writes untriaged entries grouped per (parser, case), a
still-broken cell is xfail, a passing one is `fixed`, a different failure is `changed` with its diff;
the compact format round-trips; every kind of bad entry stops the load with one line naming it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from grading_run import ROOT, Run, grade

from contract import expectations
from contract.expectations import KnownBroken, compress_modes, expand_modes
from reports.load import write_results

PARSER = "miniature/rewrites_native_ids"
SELECT = ("--engine", "tests.miniatures", "--case", "tool.native_id", "--case", "tool.single",
          "--mode", "batch", "--mode", "tokens", "-k", "rewrites_native_ids")
MINIATURE_PARSERS = {PARSER, "miniature/hangs"}


def _update(results: dict, tmp: Path, directory: Path) -> str:
    path = tmp / "results-for-update.json"
    write_results(path, results)
    done = subprocess.run([sys.executable, "-m", "contract.cli.update_expectations", str(path), "--dir", str(directory)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def _outcomes(run: Run) -> dict[tuple[str, str], str]:
    return {(c["case"], c["mode"]): c["outcome"] for c in run.cells(parser=PARSER)}


def test_known_broken_lifecycle(tmp_path: Path) -> None:
    directory = tmp_path / "expectations"
    first = grade(tmp_path / "1", *SELECT, expectations=directory)
    assert first.returncode == 1
    assert _outcomes(first) == {("tool.native_id", "batch"): "fail", ("tool.native_id", "tokens"): "fail",
                                ("tool.single", "batch"): "pass", ("tool.single", "tokens"): "pass"}

    assert "2 modes added (untriaged)" in _update(first.results, tmp_path, directory)
    toml = directory / "miniature.toml"
    tables = tomllib.loads(toml.read_text(encoding="utf-8"))["known_broken"]
    assert len(tables) == 1 and tables[0]["untriaged"] is True  # one entry for the (parser, case)
    assert {k: tables[0][k] for k in ("parser", "case", "modes")} == {
        "parser": PARSER, "case": "tool.native_id", "modes": ["batch", "tokens"]}
    assert tables[0]["reason"].startswith("untriaged: fails expected")
    lines = expectations.signatures_path(toml).read_text(encoding="utf-8").splitlines()
    recorded = [json.loads(line) for line in lines]
    assert sorted(m for r in recorded for m in r["modes"]) == ["batch", "tokens"]
    assert all(r["signature"]["status"] == "fail" for r in recorded)

    second = grade(tmp_path / "2", *SELECT, expectations=directory)
    assert second.returncode == 0, second.output[-2000:]
    assert _outcomes(second)[("tool.native_id", "batch")] == "xfail"
    assert all(c["untriaged"] for c in second.cells(parser=PARSER, outcome="xfail"))

    # triage the entry, tamper with one mode's recorded behaviour, and claim a passing cell is broken
    text = toml.read_text(encoding="utf-8").replace(tables[0]["reason"], "strips punctuation from native ids")
    text = text.replace("untriaged = true\n", "")
    text += (f'\n[[known_broken]]\nparser = "{PARSER}"\ncase = "tool.single"\nmodes = ["batch"]\n'
             'reason = "believed broken"\n')
    toml.write_text(text, encoding="utf-8")
    # record the batch failure as if it had once looked different (the tokens mode keeps its own signature)
    batch_only = {**recorded[0], "modes": ["batch"]}
    batch_only["signature"] = json.loads(json.dumps(batch_only["signature"]).replace(
        "functionsget_weather2", "functions_get_weather_2", 1))
    tokens_only = {**recorded[0], "modes": ["tokens"]} if len(recorded) == 1 else recorded[1]
    expectations.signatures_path(toml).write_text(
        "".join(json.dumps(r) + "\n" for r in (batch_only, tokens_only)), encoding="utf-8")

    third = grade(tmp_path / "3", *SELECT, expectations=directory)
    assert third.returncode == 1
    outcomes = _outcomes(third)
    assert outcomes[("tool.single", "batch")] == "fixed"
    assert (outcomes[("tool.native_id", "batch")], outcomes[("tool.native_id", "tokens")]) == ("changed", "xfail")
    changed = next(c for c in third.cells(parser=PARSER, outcome="changed"))
    assert "functions_get_weather_2" in changed["diff"] and "functionsget_weather2" in changed["diff"]
    assert changed["reason"] == "strips punctuation from native ids"

    assert "1 signatures refreshed, 1 modes removed" in _update(third.results, tmp_path, directory)
    refreshed = expectations.load(toml)
    assert set(refreshed.entries) == {(PARSER, "tool.native_id")}
    assert refreshed.entries[(PARSER, "tool.native_id")].reason == "strips punctuation from native ids"
    assert not refreshed.entries[(PARSER, "tool.native_id")].untriaged
    assert grade(tmp_path / "4", *SELECT, expectations=directory).returncode == 0


def test_modes_spell_tiers_and_every_mode() -> None:
    assert expand_modes("*") == expand_modes(["batch", "token", "char"])
    assert expand_modes(["token"]) == ("whole", "tokens", "bursts-2", "bursts-3", "bursts-5", "bursts-8",
                                       "boundaries", "random")
    assert compress_modes(expand_modes("*")) == "*"
    assert compress_modes(expand_modes(["batch", "token"])) == ["batch", "token"]
    assert compress_modes(("chars", "whole", "random")) == ["whole", "random", "chars"]
    with pytest.raises(ValueError, match="unknown mode 'tokenz'"):
        expand_modes(["tokenz"])


def test_entries_sharing_a_bug_are_written_once_and_read_back(tmp_path: Path) -> None:
    """One reason for several parsers and cases is one table; loading it gives every pair back."""
    modes = expand_modes(["batch", "token"])
    entries = [KnownBroken(p, c, modes, "drops narration after the call")
               for p in ("e/a", "e/b") for c in ("tool.content_after", "tool.content_between")]
    entries.append(KnownBroken("e/a", "tool.single", ("chars",), "leaks a split marker", "https://example.org/1"))
    signatures = {("e/a", "tool.single", "chars"): {"status": "fail", "checks": ["markers"], "observed": None}}
    path = tmp_path / "e.toml"
    expectations.write(path, "e", entries, signatures)
    tables = tomllib.loads(path.read_text(encoding="utf-8"))["known_broken"]
    assert len(tables) == 2
    assert tables[0] == {"parsers": ["e/a", "e/b"], "cases": ["tool.content_after", "tool.content_between"],
                         "modes": ["batch", "token"], "reason": "drops narration after the call"}
    loaded = expectations.load(path, {"e/a", "e/b"})
    assert sorted(loaded.entries.values(), key=lambda e: e.key) == sorted(entries, key=lambda e: e.key)
    assert loaded.recorded("e/a", "tool.single", "chars") == signatures[("e/a", "tool.single", "chars")]
    assert loaded.lookup("e/a", "tool.single", "tokens") is None


def test_one_bug_in_different_modes_keeps_its_reason_once(tmp_path: Path) -> None:
    """A bug that shows in other modes for another case is one table with a `cells` sub-table per place."""
    reason = "drops the second of two calls in one delta"
    entries = [KnownBroken("e/a", "tool.parallel", expand_modes(["whole", "chars"]), reason),
               KnownBroken("e/a", "tool.duplicate", expand_modes(["whole", "bursts-8", "chars"]), reason)]
    path = tmp_path / "e.toml"
    expectations.write(path, "e", entries, {})
    text = path.read_text(encoding="utf-8")
    assert text.count(reason) == 1 and text.count("[[known_broken.cells]]") == 2
    tables = tomllib.loads(text)["known_broken"]
    assert tables == [{"reason": reason, "cells": [
        {"parser": "e/a", "case": "tool.duplicate", "modes": ["whole", "bursts-8", "chars"]},
        {"parser": "e/a", "case": "tool.parallel", "modes": ["whole", "chars"]}]}]
    assert sorted(expectations.load(path, {"e/a"}).entries.values(), key=lambda e: e.key) == \
        sorted(entries, key=lambda e: e.key)


GOOD = '[[known_broken]]\nparser = "e/a"\ncase = "tool.single"\nmodes = "*"\nreason = "r"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (GOOD + 'mode = "batch"\n', "known_broken[0] (e/a, tool.single): unknown key 'mode'"),
        (GOOD + "[known_brokn]\n", "unknown table or key 'known_brokn'"),
        (GOOD.replace('reason = "r"', 'reason = "r"\nuntriaged = "false"'),
         "known_broken[0] (e/a, tool.single): key 'untriaged' has the wrong type: 'false'"),
        (GOOD.replace('reason = "r"', 'reason = "  "'), "known_broken[0] (e/a, tool.single): key 'reason' is empty"),
        (GOOD.replace('"e/a"', '"e/zz"'), "known_broken[0] (e/zz, tool.single): key 'parser': no parser 'e/zz'"),
        (GOOD.replace('"e/a"', '"other/a"'), "key 'parser': 'other/a' is not a parser of engine 'e'"),
        (GOOD.replace("tool.single", "tool.singel"), "key 'case': no case 'tool.singel' in the catalog"),
        (GOOD.replace('"*"', '["tokenz"]'), "key 'modes': unknown mode 'tokenz'"),
        (GOOD.replace('modes = "*"\n', ""), "key 'modes' is missing"),
        (GOOD + "\n" + GOOD, "known_broken[1] ('e/a', 'tool.single'): this (parser, case) is in an earlier entry"),
        (GOOD.replace('parser = "e/a"', 'parser = "e/a"\nparsers = ["e/a"]'),
         "give exactly one of 'parser' and 'parsers'"),
        (GOOD.replace('reason = "r"', 'reason = "r"\nlink = "issue 12"'), "key 'link' is not an http(s) URL"),
        ("known_broken = [", "not valid TOML"),
        ('[[known_broken]]\nreason = "r"\n[[known_broken.cells]]\nparser = "e/a"\ncase = "tool.single"\n'
         'modes = "*"\nreason = "again"\n', "known_broken[0].cells[0] (e/a, tool.single): unknown key 'reason'"),
        ('[[known_broken]]\nreason = "r"\ncells = []\n', "known_broken[0]: key 'cells' is empty"),
    ],
)
def test_bad_expectation_file_names_file_entry_and_key(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "e.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(expectations.ExpectationError) as error:
        expectations.load(path, {"e/a"})
    assert str(error.value).startswith(str(path)) and message in str(error.value)
    assert "\n" not in str(error.value).split(": not valid TOML")[0]


def test_bad_signature_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(GOOD, encoding="utf-8")
    expectations.signatures_path(path).write_text('{"parser": "e/a"}\n', encoding="utf-8")
    with pytest.raises(expectations.ExpectationError, match=r"e\.signatures\.jsonl: line 1: not a signature"):
        expectations.load(path, {"e/a"})


def test_shipped_expectation_files_are_valid_and_reviewable() -> None:
    """Every shipped file loads against its engine's parsers; none repeats a (parser, case) or a reason;
    each is small enough to review."""
    from contract.adapter import engine_module
    from contract.matrix import parser_names
    from fixtures import EXPECTATIONS_DIR

    for path in sorted([*EXPECTATIONS_DIR.glob("*.toml"), *EXPECTATIONS_DIR.glob("synthetic/*.toml")]):
        known = expectations.load(path, parser_names(engine_module(path.stem)))
        assert path.stat().st_size < 200_000, path
        reasons = [t["reason"] for t in tomllib.loads(path.read_text(encoding="utf-8")).get("known_broken", [])]
        assert len(reasons) == len(set(reasons)), f"{path}: a reason written twice"
        assert all(not e.untriaged for e in known.entries.values()), f"{path}: untriaged entries left"


def test_tiers_agree_on_families_without_a_real_vocabulary() -> None:
    """Both tiers grade those families on the same synthetic tokens: their known-broken cells must not drift
    apart (a reason shared with a real-vocabulary family may be worded for both)."""
    from contract.adapter import engine_module
    from fixtures import EXPECTATIONS_DIR, all_families, family

    synthetic_only = {name for name, f in all_families().items() if f.vocabulary is None}

    def entries(path: Path) -> dict[tuple[str, str], tuple[str, ...]]:
        mapping = engine_module(path.stem).mapping
        return {key: e.modes for key, e in expectations.load(path).entries.items()
                if mapping.get(key[0].split("/", 1)[1]) in synthetic_only}

    assert family("kimi_k2").vocabulary is None
    for path in sorted(EXPECTATIONS_DIR.glob("*.toml")):
        assert entries(path) == entries(EXPECTATIONS_DIR / "synthetic" / path.name), path.name


def test_unmapped_parsers_are_unimplemented_and_fail_the_run(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.unmapped", "--mode", "batch")
    assert run.returncode == 1
    outcomes = {(c["parser"], c["outcome"]) for c in run.results["cells"]}
    assert outcomes == {("unmapped/mystery_parser", "unimplemented"), ("unmapped/future_format", "unimplemented")}
    assert all(c["reason"] for c in run.results["cells"])


def test_missing_engine_is_skip_not_failure(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.absent", "--case", "tool.single", "--case", "tool.entities")
    assert run.returncode == 0, run.output[-2000:]
    assert {c["outcome"] for c in run.cells(case="tool.single")} == {"skip"}
    assert {c["outcome"] for c in run.cells(case="tool.entities")} == {"n/a"}
    engine = run.results["run"]["engines"]["absent"]
    assert engine["available"] is False and "engine_that_is_not_installed" in engine["skip_reason"]
    assert json.dumps(run.results)  # the document is plain JSON


def test_mirror_copies_only_the_given_parsers(tmp_path: Path) -> None:
    """The synthetic tier's file takes the real tier's entries (and signatures) for the parsers of families both
    tiers tokenize alike, and keeps its own for the rest."""
    real, synthetic = tmp_path / "e.toml", tmp_path / "synthetic" / "e.toml"
    signature = {"status": "fail", "checks": ["markers"], "observed": None}
    expectations.write(real, "e", [KnownBroken("e/kimi", "tool.single", ("chars",), "kimi leaks a fragment"),
                                   KnownBroken("e/hermes", "tool.single", ("batch",), "real-tier hermes bug")],
                       {("e/kimi", "tool.single", "chars"): signature})
    expectations.write(synthetic, "e", [KnownBroken("e/kimi", "tool.none", ("batch",), "stale kimi entry"),
                                        KnownBroken("e/hermes", "tool.none", ("tokens",), "synthetic hermes bug")], {})
    assert expectations.mirror(real, synthetic, "e", {"e/kimi"}) == 1
    mirrored = expectations.load(synthetic)
    assert set(mirrored.entries) == {("e/kimi", "tool.single"), ("e/hermes", "tool.none")}
    assert mirrored.entries[("e/kimi", "tool.single")].reason == "kimi leaks a fragment"
    assert mirrored.recorded("e/kimi", "tool.single", "chars") == signature
    before = synthetic.read_text(encoding="utf-8")
    assert expectations.mirror(real, synthetic, "e", {"e/kimi"}) == 1
    assert synthetic.read_text(encoding="utf-8") == before


def test_mirror_command_is_a_no_op_on_main() -> None:
    """The closing note's command, run verbatim: on main the synthetic tier already holds the real tier's triage
    of the synthetic-only families, so mirroring changes no file."""
    from fixtures import EXPECTATIONS_DIR

    files = sorted((EXPECTATIONS_DIR / "synthetic").iterdir())
    before = {p: p.read_bytes() for p in files}
    done = subprocess.run([sys.executable, "-m", "contract.cli.update_expectations", "--mirror", "vllm", "sglang", "lmdeploy",
                           "vllm-mlx", "dynamo"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert {p: p.read_bytes() for p in files} == before
