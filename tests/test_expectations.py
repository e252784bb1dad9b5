"""KnownBroken end to end: update-expectations puts new failures in untriaged bugs, a still-broken cell is
xfail, a passing one is `fixed`, a different failure is `changed` with its diff; the files are edited in place
(comments, order and untouched rows kept); every kind of bad file stops the load with one line naming it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from grading_run import ROOT, Run, grade

from contract import expectations
from contract.expectations import Bug, Place, compress_modes, expand_modes
from contract.expectations.edit import mirror, render, update
from contract.grading.outcome import Outcome
from contract.grading.record import CellRecord
from contract.run.record import CitedBug
from contract.run.results import write as write_results

PARSER = "miniature/rewrites_native_ids"
SELECT = ("--engine", "tests.miniatures", "--case", "tool.native_id", "--case", "tool.single",
          "--mode", "batch", "--mode", "tokens", "-k", "rewrites_native_ids")
SIGNATURE = {"status": "fail", "checks": ["markers"], "observed": None}


def _update(results: dict, tmp: Path, directory: Path) -> str:
    path = tmp / "results-for-update.json"
    write_results(path, results)
    done = subprocess.run([sys.executable, "-m", "contract.cli.update_expectations", str(path), "--dir", str(directory)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def _outcomes(run: Run) -> dict[tuple[str, str], str]:
    return {(c.case, c.mode): c.outcome for c in run.cells(parser=PARSER)}


def test_known_broken_lifecycle(tmp_path: Path) -> None:
    directory = tmp_path / "expectations"
    first = grade(tmp_path / "1", *SELECT, expectations=directory)
    assert first.returncode == 1
    assert _outcomes(first) == {("tool.native_id", "batch"): "fail", ("tool.native_id", "tokens"): "fail",
                                ("tool.single", "batch"): "pass", ("tool.single", "tokens"): "pass"}

    assert "2 cells added (untriaged)" in _update(first.results, tmp_path, directory)
    toml = directory / "miniature.toml"
    [bug] = tomllib.loads(toml.read_text(encoding="utf-8"))["bug"]
    assert (bug["id"], bug["untriaged"], bug["reason"]) == ("untriaged-1", True, "untriaged: fails expected")
    assert bug["cells"] == [{"parser": PARSER, "case": "tool.native_id", "modes": ["batch", "tokens"]}]
    recorded = [json.loads(line) for line in expectations.signatures_path(toml).read_text().splitlines()]
    assert sorted(m for r in recorded for m in r["modes"]) == ["batch", "tokens"]
    assert all(r["signature"]["status"] == "fail" for r in recorded)

    second = grade(tmp_path / "2", *SELECT, expectations=directory)
    assert second.returncode == 0, second.output[-2000:]
    assert _outcomes(second)[("tool.native_id", "batch")] == "xfail"
    assert all(c.untriaged and c.bugs == ("untriaged-1",) for c in second.cells(parser=PARSER, outcome="xfail"))

    # triage the bug (an id, a reason, a comment), claim a passing cell is broken in a bug of its own, and
    # record the batch failure as if it had once looked different (the tokens mode keeps its own signature)
    text = toml.read_text(encoding="utf-8").replace('"untriaged-1"', '"strips-id-punctuation"')
    text = text.replace('"untriaged: fails expected"', '"strips punctuation from native ids"\n# seen in o/r#1')
    text = text.replace("untriaged = true\n", "")
    text += ('\n[[bug]]\nid = "believed-broken"\nreason = "believed broken"\n'
             f'cells = [{{parser = "{PARSER}", case = "tool.single", modes = ["batch"]}}]\n')
    toml.write_text(text, encoding="utf-8")
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
    assert "functions_get_weather_2" in changed.diff and "functionsget_weather2" in changed.diff
    assert (changed.reason, changed.bugs) == ("strips punctuation from native ids", ("strips-id-punctuation",))
    assert third.results["run"].engines["miniature"].bugs == {
        "strips-id-punctuation": CitedBug("strips punctuation from native ids"),
        "believed-broken": CitedBug("believed broken")}

    assert "1 signatures refreshed, 1 cells removed" in _update(third.results, tmp_path, directory)
    after = toml.read_text(encoding="utf-8")
    assert "believed-broken" not in after  # its only cell passes: the bug is gone
    assert after.startswith(text.split("\n[[bug]]\nid = \"believed-broken\"")[0].rstrip("\n"))  # the rest, as written
    refreshed = expectations.load(toml)
    assert list(refreshed.bugs) == ["strips-id-punctuation"] and not refreshed.bugs["strips-id-punctuation"].untriaged
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


HANDWRITTEN = """\
# Known-broken cells of engine 'e', in the order a person keeps them.
schema = 3

[[bug]]
id = "drops-narration"
reason = "drops the narration after the call"
link = "https://example.org/1"
# the detector keeps only the text before the first call
cells = [
    {parsers = ["e/a", "e/b"], cases = ["tool.content_after", "tool.content_between"], modes = ["batch", "token"]},
    {parser = "e/c", case = "tool.content_after", modes = "*"},  # c as well
]

[[bug]]
id = "greedy-regex"
reason = "a greedy regex merges two calls"
cells = [{parser = "e/a", case = "tool.content_between", modes = ["tokens"]}]
"""


def test_a_cell_may_cite_several_bugs() -> None:
    from contract.expectations import judge

    known = _loaded(HANDWRITTEN)
    assert [b.id for b in known.lookup("e/a", "tool.content_between", "tokens")] == ["drops-narration", "greedy-regex"]
    assert known.lookup("e/a", "tool.content_between", "chars") == ()
    assert known.bugs["drops-narration"].places[0] == Place(("e/a", "e/b"), ("tool.content_after",
                                                            "tool.content_between"), expand_modes(["batch", "token"]))
    judged = judge(_cell("e/a", "tool.content_between", "tokens", "fail"), known)
    assert (judged.outcome, judged.bugs, judged.link) == (
        "xfail", ("drops-narration", "greedy-regex"), "https://example.org/1")
    assert judged.reason == ("drops-narration: drops the narration after the call; "
                             "greedy-regex: a greedy regex merges two calls")


def _loaded(text: str, directory: Path | None = None) -> expectations.Expectations:
    import tempfile

    folder = directory or Path(tempfile.mkdtemp())
    path = folder / "e.toml"
    path.write_text(text, encoding="utf-8")
    return expectations.load(path, {"e/a", "e/b", "e/c"})


def _cell(parser: str, case: str, mode: str, outcome: str) -> CellRecord:
    return CellRecord(engine=parser.split("/")[0], parser=parser, family=None, case=case, kind="tool", mode=mode,
                      tier="batch", vocabulary=None, outcome=Outcome(outcome), signature=SIGNATURE)


def test_update_edits_the_file_in_place(tmp_path: Path) -> None:
    """A cell that passes now leaves its row (the row is rewritten as the rows of its other cells, where it
    stood); rows and bugs not touched keep their text, comments and order; a new failure goes to an untriaged
    bug at the end."""
    path = tmp_path / "e.toml"
    path.write_text(HANDWRITTEN, encoding="utf-8")
    cells = [_cell("e/b", "tool.content_after", "tokens", "fixed"), _cell("e/a", "tool.content_between", "tokens",
             "changed"), _cell("e/c", "tool.single", "chars", "fail"), _cell("other/x", "tool.single", "batch", "fail")]
    assert update(path, "e", cells) == (1, 1, 1)
    text = path.read_text(encoding="utf-8")
    first, rest = HANDWRITTEN.split("cells = [\n    {parsers")
    assert text.startswith(first) and "# c as well" in text and "# the detector keeps" in text
    assert text.index("drops-narration") < text.index("greedy-regex") < text.index("untriaged-1")
    known = expectations.load(path)
    assert known.lookup("e/b", "tool.content_after", "tokens") == ()
    assert known.lookup("e/b", "tool.content_after", "whole")[0].id == "drops-narration"
    assert {c for c in known.bugs["drops-narration"].cells()} == {
        (p, c, m) for p in ("e/a", "e/b") for c in ("tool.content_after", "tool.content_between")
        for m in expand_modes(["batch", "token"])} - {("e/b", "tool.content_after", "tokens")} | {
        ("e/c", "tool.content_after", m) for m in expand_modes("*")}
    new = known.bugs["untriaged-1"]
    assert (new.untriaged, new.reason, list(new.cells())) == (True, "untriaged: fails markers",
                                                              [("e/c", "tool.single", "chars")])
    assert known.recorded("e/c", "tool.single", "chars") == SIGNATURE
    assert update(path, "e", cells[1:3]) == (0, 0, 0) and path.read_text(encoding="utf-8") == text  # settled


def test_render_writes_what_load_reads(tmp_path: Path) -> None:
    bugs = [Bug("a-bug", "drops the call", (Place(("e/a",), ("tool.single", "tool.parallel"), ("batch",)),),
                "https://example.org/2"),
            Bug("b-bug", "keeps a marker", (Place(("e/a", "e/b"), ("tool.single",), expand_modes("char")),))]
    path = tmp_path / "e.toml"
    path.write_text(render("e", [(bugs[0], ["a note on where it shows"]), (bugs[1], [])]), encoding="utf-8")
    assert list(expectations.load(path, {"e/a", "e/b"}).bugs.values()) == bugs
    assert "# a note on where it shows" in path.read_text(encoding="utf-8")


GOOD = 'schema = 3\n[[bug]]\nid = "b"\nreason = "r"\ncells = [{parser = "e/a", case = "tool.single", modes = "*"}]\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (GOOD.replace('modes = "*"', 'mode = "batch", modes = "*"'), "bug 'b' cells[0]: unknown key 'mode'"),
        (GOOD + "[bugs]\n", "unknown table or key 'bugs'"),
        (GOOD.replace('reason = "r"', 'reason = "r"\nuntriaged = "false"'),
         "bug 'b': key 'untriaged' has the wrong type: 'false'"),
        (GOOD.replace('reason = "r"', 'reason = "  "'), "bug 'b': key 'reason' is empty"),
        (GOOD.replace('reason = "r"', 'reason = "drops the call (bursts / boundaries)"'),
         "bug 'b': key 'reason' restates modes ('bursts'"),
        (GOOD.replace('reason = "r"', 'reason = "chars: drops the call"'), "key 'reason' restates modes ('chars')"),
        (GOOD.replace('"e/a"', '"e/zz"'), "bug 'b' cells[0]: key 'parser': no parser 'e/zz'"),
        (GOOD.replace('"e/a"', '"other/a"'), "key 'parser': 'other/a' is not a parser of engine 'e'"),
        (GOOD.replace("tool.single", "tool.singel"), "key 'case': no case 'tool.singel' in the catalog"),
        (GOOD.replace('"*"', '["tokenz"]'), "key 'modes': unknown mode 'tokenz'"),
        (GOOD.replace(', modes = "*"', ""), "bug 'b' cells[0]: key 'modes' is missing"),
        (GOOD + GOOD.split("\n", 1)[1], "bug[1]: key 'id': 'b' names an earlier bug too"),
        (GOOD.replace('id = "b"', 'id = "Bad Id"'), "key 'id': 'Bad Id' is not an id"),
        (GOOD.replace('id = "b"\n', ""), "bug[0]: key 'id' is missing"),
        (GOOD.replace('modes = "*"}]', 'modes = "*"}, {parsers = ["e/a"], case = "tool.single", modes = ["batch"]}]'),
         "bug 'b' cells[1]: cell e/a:tool.single:batch is in an earlier row too"),
        (GOOD.replace('parser = "e/a"', 'parser = "e/a", parsers = ["e/a"]'),
         "give exactly one of 'parser' and 'parsers'"),
        (GOOD.replace('reason = "r"', 'reason = "r"\nlink = "issue 12"'), "key 'link' is not an http(s) URL"),
        ("bug = [", "not valid TOML"),
        (GOOD.replace("cells = [{", "cells = []\nx = [{"), "bug 'b': unknown key 'x'"),
        (GOOD.replace("schema = 3", "schema = 2"), "key 'schema': 2, expected 3"),
        ('[[known_broken]]\nparser = "e/a"\n', "[[known_broken]] entries are the old form"),
    ],
)
def test_bad_expectation_file_names_file_bug_and_key(tmp_path: Path, body: str, message: str) -> None:
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
    """Every shipped file loads against its engine's parsers (which rejects a reason that restates modes); no
    reason is written twice, no bug is left untriaged, and every bug explains a cell."""
    from contract.grading.adapter import engine_module
    from contract.run.plan import parser_names
    from fixtures import EXPECTATIONS_DIR

    for path in sorted([*EXPECTATIONS_DIR.glob("*.toml"), *EXPECTATIONS_DIR.glob("synthetic/*.toml")]):
        known = expectations.load(path, parser_names(engine_module(path.stem)))
        reasons = [bug.reason for bug in known.bugs.values()]
        assert len(reasons) == len(set(reasons)), f"{path}: a reason written twice"
        assert all(not bug.untriaged for bug in known.bugs.values()), f"{path}: untriaged bugs left"


def test_tiers_agree_on_families_without_a_real_vocabulary() -> None:
    """Both tiers grade those families on the same synthetic tokens: the bugs their cells cite must not drift
    apart; and an id names the same bug in both tiers' files."""
    from contract.grading.adapter import engine_module
    from fixtures import EXPECTATIONS_DIR, all_families, family

    synthetic_only = {name for name, f in all_families().items() if f.vocabulary is None}

    def cited(path: Path) -> dict[tuple[str, str, str], set[str]]:
        mapping = engine_module(path.stem).mapping
        return {cell: set(bugs) for cell, bugs in expectations.load(path).cited.items()
                if mapping.get(cell[0].split("/", 1)[1]) in synthetic_only}

    assert family("kimi_k2").vocabulary is None
    for path in sorted(EXPECTATIONS_DIR.glob("*.toml")):
        assert cited(path) == cited(EXPECTATIONS_DIR / "synthetic" / path.name), path.name
        real, synthetic = (expectations.load(p).bugs for p in (path, EXPECTATIONS_DIR / "synthetic" / path.name))
        assert {i: real[i].reason for i in real.keys() & synthetic.keys()} == {
            i: synthetic[i].reason for i in real.keys() & synthetic.keys()}, f"{path.name}: one id, two reasons"


def test_unmapped_parsers_are_unimplemented_and_fail_the_run(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.unmapped", "--mode", "batch")
    assert run.returncode == 1
    outcomes = {(c.parser, c.outcome) for c in run.results["cells"]}
    assert outcomes == {("unmapped/mystery_parser", "unimplemented"), ("unmapped/future_format", "unimplemented")}
    assert all(c.reason for c in run.results["cells"])


def test_missing_engine_is_skip_not_failure(tmp_path: Path) -> None:
    run = grade(tmp_path, "--engine", "tests.miniatures.absent", "--case", "tool.single", "--case", "tool.entities")
    assert run.returncode == 0, run.output[-2000:]
    assert {c.outcome for c in run.cells(case="tool.single")} == {"skip"}
    assert {c.outcome for c in run.cells(case="tool.entities")} == {"n/a"}
    engine = run.results["run"].engines["absent"]
    assert engine.available is False and "engine_that_is_not_installed" in (engine.skip_reason or "")
    assert json.dumps(run.results, default=lambda record: record.to_json())  # the document is JSON, its cells records


def test_mirror_copies_only_the_given_parsers(tmp_path: Path) -> None:
    """The synthetic tier's file takes the real tier's bugs (same ids) and signatures for the parsers of families
    both tiers tokenize alike, and keeps its own for the rest."""
    real, synthetic = tmp_path / "e.toml", tmp_path / "synthetic" / "e.toml"
    synthetic.parent.mkdir()
    real.write_text(render("e", [
        (Bug("kimi-leak", "kimi leaks a fragment", (Place(("e/kimi",), ("tool.single",), ("chars",)),)), []),
        (Bug("hermes-real", "real-tier hermes bug", (Place(("e/hermes",), ("tool.single",), ("batch",)),)), [])]))
    (tmp_path / "e.signatures.jsonl").write_text(json.dumps(
        {"parser": "e/kimi", "case": "tool.single", "modes": ["chars"], "signature": SIGNATURE}) + "\n")
    synthetic.write_text(render("e", [
        (Bug("kimi-stale", "stale kimi bug", (Place(("e/kimi", "e/hermes"), ("tool.none",), ("batch",)),)), []),
        (Bug("hermes-synthetic", "synthetic hermes bug", (Place(("e/hermes",), ("tool.none",), ("tokens",)),)),
         [])]))
    assert mirror(real, synthetic, "e", {"e/kimi"}) == 1
    mirrored = expectations.load(synthetic)
    assert {cell: bugs for cell, bugs in mirrored.cited.items()} == {
        ("e/kimi", "tool.single", "chars"): ("kimi-leak",), ("e/hermes", "tool.none", "batch"): ("kimi-stale",),
        ("e/hermes", "tool.none", "tokens"): ("hermes-synthetic",)}
    assert mirrored.bugs["kimi-leak"].reason == "kimi leaks a fragment"
    assert mirrored.recorded("e/kimi", "tool.single", "chars") == SIGNATURE
    before = synthetic.read_text(encoding="utf-8")
    assert mirror(real, synthetic, "e", {"e/kimi"}) == 1
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
