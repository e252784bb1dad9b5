"""The engine-independent parts of standalone repros and build records, and the cell ids that name them.

Repros of real engine cells are checked where the engines are installed: `nox -s repro -- --verify`
(run by .ci/run after grading) writes and runs a sample of them; `tests/test_ci_recipe.py` records a build.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contract.cli import repro
from contract.grading.cell_id import CellId, cell_in_args, parse_cell_id
from contract.grading.outcome import Outcome
from contract.grading.record import CellRecord
from contract.run.provenance import checkout_state, installed_build

KIMI = CellId("sglang", "kimi_k2", "tool.missing_end", "tokens")


@pytest.mark.parametrize(("given", "mode"), [
    ("sglang/kimi_k2:tool.missing_end:tokens", None),
    ("sglang/kimi_k2:tool.missing_end:tokens", "tokens"),
    ("tests/test_matrix.py::test_cells[sglang/kimi_k2:tool.missing_end]", "tokens"),
    ("'tests/test_matrix.py::test_cells[sglang/kimi_k2:tool.missing_end]'", "tokens"),
])
def test_a_cell_is_named_by_its_id_or_its_rerun_node_id(given: str, mode: str | None) -> None:
    cell = parse_cell_id(given, mode)
    assert cell == KIMI and cell.parser == "sglang/kimi_k2" and str(cell) == "sglang/kimi_k2:tool.missing_end:tokens"


def test_a_node_id_without_its_mode_says_what_is_missing() -> None:
    node = "tests/test_matrix.py::test_cells[sglang/kimi_k2:tool.missing_end]"
    with pytest.raises(ValueError, match=rf"^{re.escape(repr(node))}: a node id names .*add the cell's --mode"):
        parse_cell_id(node)


@pytest.mark.parametrize("given", [
    "sglang/kimi_k2:tool.missing_end",  # no mode
    "kimi_k2:tool.missing_end:tokens",  # no engine
    "sglang/kimi_k2:tool.missing_end:tokens:extra",
    "tests/test_matrix.py::test_cells[sglang/kimi_k2]",
    "",
])
def test_text_that_names_no_cell_is_named_with_the_forms_expected(given: str) -> None:
    with pytest.raises(ValueError, match=rf"^{re.escape(repr(given))} is not a cell: expected ENGINE/PARSER:CASE:MODE "
                                         r"\(e\.g\. .*\) or a rerun's node id"):
        parse_cell_id(given, "tokens")


def test_a_cell_id_and_another_mode_disagree() -> None:
    with pytest.raises(ValueError, match="names mode 'tokens', but --mode says 'batch'"):
        parse_cell_id("sglang/kimi_k2:tool.missing_end:tokens", "batch")


@pytest.mark.parametrize("args", [
    ["--out", "reports/out/x", "tests/test_matrix.py::test_cells[sglang/kimi_k2:tool.missing_end]", "--mode", "tokens"],
    ["'tests/test_matrix.py::test_cells[sglang/kimi_k2:tool.missing_end]'", "--mode=batch", "--mode=tokens"],
    ["--candidate", "sglang/kimi_k2:tool.missing_end:tokens", "--out", "elsewhere/repro"],
])
def test_nox_finds_the_cell_among_a_repro_commands_arguments(args: list[str]) -> None:
    assert cell_in_args(args) == KIMI


def test_a_repro_command_without_a_cell_says_what_it_expects() -> None:
    with pytest.raises(ValueError, match=r"^no cell given: expected ENGINE/PARSER:CASE:MODE"):
        cell_in_args(["--out", "reports/out/x", "--candidate"])


def test_the_repro_tool_finds_a_cell_or_says_which_part_is_unknown() -> None:
    assert repro.find_cell("reference/hermes:tool.single:tokens").id == "reference/hermes:tool.single:tokens"
    node = "tests/test_matrix.py::test_cells[reference/hermes:tool.single]"
    assert repro.find_cell(node, "chars").id == "reference/hermes:tool.single:chars"
    with pytest.raises(SystemExit, match=r"^repro: 'reference/hermes' is not a cell: expected"):
        repro.find_cell("reference/hermes")
    with pytest.raises(SystemExit, match=r"^repro: no cell 'reference/hermes:tool\.nope:sometimes': engine "
                                         r"'reference' grades no case 'tool\.nope' and no mode 'sometimes'"):
        repro.find_cell("reference/hermes:tool.nope:sometimes")


# a stand-in engine for the concurrent repro's own machinery: a stream echoes its chunks as content; the leaky one
# keeps what it has seen in a module global, as a parser with class-level state does (vllm-mlx #649)
_ECHO_ENGINE = """
SEEN: list[str] = []


def run_stream(chunks, final_ids, request=None, stop="stop"):
    own: list[str] = [] if not LEAKY else SEEN
    per_chunk = []
    for chunk in chunks:
        own.append(chunk.text)
        per_chunk.append([Delta(content="".join(own)[-len(chunk.text):] if not LEAKY else own[-1])])
        STEPS.append((request["name"], chunk.text))
    return per_chunk, [Delta(content=f"[{request['name']} saw {len(own)}]", finish_reason=stop)]
"""


def _concurrent_script(leaky: bool) -> str:
    data = textwrap.dedent(f"""
        CELL = "e/p:c:concurrent"
        KEEP_IDS = PARTNER_KEEP_IDS = False
        REPLAYS_AT_FINISH = False
        LEAKY = {leaky!r}
        STEPS: list = []
        CHUNKINGS = [([("a1", []), ("a2", []), ("a3", [])], [])]
        PARTNER_CASE = "other"
        PARTNER_CHUNKING = ([("b1", []), ("b2", [])], [])
        PARTNER_REQUEST = {{"request": {{"name": "B"}}}}
        SCHEDULE = [(0, 0), (1, 0), (0, 1), (1, 1), (1, None), (0, 2), (0, None)]
    """)
    default = 'run_stream.__defaults__ = ({"name": "A"}, "stop")'
    return "\n\n".join(["from __future__ import annotations", "import threading", "\n".join(repro.CHECKS_IMPORTS),
                         data, _ECHO_ENGINE, default, repro.CONCURRENT_MAIN, repro._checks_source(),
                         "main()\nprint(STEPS[-5:])"])


@pytest.mark.parametrize("leaky", [False, True])
def test_a_concurrent_repro_interleaves_as_scheduled_and_fails_only_on_leaked_state(tmp_path: Path,
                                                                                    leaky: bool) -> None:
    (tmp_path / "concurrent.py").write_text(_concurrent_script(leaky), encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", "concurrent.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    if not leaky:
        assert done.returncode == 0, done.stderr
        assert "OK: e/p:c:concurrent behaves as expected" in done.stdout
        # the interleaved run's steps, in SCHEDULE's order (the two runs alone came first)
        assert done.stdout.strip().splitlines()[-1] == "[('A', 'a1'), ('B', 'b1'), ('A', 'a2'), ('B', 'b2'), ('A', 'a3')]"
    else:
        assert done.returncode == 1
        assert re.search(r"AssertionError: concurrent: this request: alone .* vs concurrent ", done.stderr)
        assert "concurrent: the partner request (other): alone" in done.stderr


def test_the_inlined_checks_run_with_nothing_of_this_project(tmp_path: Path) -> None:
    """The matrix's checks as a repro carries them judge a stream on their own, in an isolated interpreter."""
    script = "\n\n".join([
        "from __future__ import annotations",
        "\n".join(repro.CHECKS_IMPORTS),
        repro._checks_source(),
        textwrap.dedent("""
            wanted = Expected((ExpectedMessage("exact", "Hi.", "", (ExpectedCall("f", {"a": 1}),), "tool_calls"),))
            chunks = (Chunk("Hi."), Chunk("<call>"))
            good = StreamRun(chunks, ((Delta(content="Hi."),),
                                      (Delta(tool_calls=(ToolCallDelta(0, "c1", "function", "f", '{"a": 1}'),)),)),
                             (Delta(finish_reason="tool_calls"),))
            failures, _, observed = judge_stream(wanted, ("<call>",), ("Hi.",), good, None,
                                                 keep_ids=False)
            assert failures == [], failures
            leaked = StreamRun(chunks, ((Delta(content="Hi.<call>"),),), (Delta(finish_reason="stop"),))
            failures, _, _ = judge_stream(wanted, ("<call>",), ("Hi.",), leaked, observed, keep_ids=False)
            print(sorted({f.check for f in failures}))
        """),
    ])
    (tmp_path / "standalone.py").write_text(script, encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", "standalone.py"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['expected', 'finish_reason', 'markers', 'stream_equals_batch']"


def test_inlined_modules_lose_only_their_docstring_and_imports_of_this_project() -> None:
    source = repro._without_project_imports(repro)
    assert "from .adapter import" not in source and "from fixtures import" not in source
    assert "import argparse" in source and "def verify(" in source
    assert not source.startswith('"""')


def test_the_sample_spreads_over_modes_and_parsers() -> None:
    cells = [CellRecord(engine="e", parser=f"e/p{p}", family=None, case=f"c{c}", kind="tool", mode=m, tier="batch",
                        vocabulary=None, outcome=Outcome.XFAIL) for p in range(3) for c in range(4)
             for m in ("batch", "tokens", "chars")]
    picked = repro._spread(cells, 6)
    assert len(picked) == 6 and {c.mode for c in picked} == {"batch", "tokens", "chars"}
    assert {c.parser for c in picked} == {"e/p0", "e/p1", "e/p2"}
    assert picked == repro._spread(list(reversed(cells)), 6)  # stable, whatever the order of the file


def test_a_build_from_the_index_and_a_dirty_checkout(tmp_path: Path) -> None:
    assert installed_build("pytest").source == "index"
    assert checkout_state(tmp_path) == (None, None)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "parser.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert checkout_state(tmp_path) == (head, False)
    (tmp_path / "parser.py").write_text("x = 2\n")
    assert checkout_state(tmp_path) == (head, True)
