"""docs/CATALOG.md, generated from the catalog and the families' positions, so the two cannot drift.

`python -m contract.cli.catalog_doc` rewrites it; `--check` exits 1 when it is stale (a test runs that).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from contract.cases.catalog import (
    CATALOG,
    DEFAULT_TOOLS,
    Call,
    Case,
    Content,
    EmptySection,
    Reasoning,
    Rule,
    Stray,
    Style,
    Truncation,
)
from contract.cases.family import Family, NotApplicable
from contract.cases.model import choice_json
from contract.grading.cell import NOT_ON_RESPONSES
from contract.grading.checks import INCREMENTAL_BOUND, INCREMENTAL_MODES
from contract.streams.interleave import NOT_INTERLEAVED, PARTNERS
from fixtures import all_families

DOC = Path(__file__).resolve().parents[2] / "docs" / "CATALOG.md"

INTRO = """\
# Universal case catalog

Generated from `contract/cases/catalog.py` and the families' positions (`fixtures/families/*.py`) by
`python -m contract.cli.catalog_doc`; a test fails when this file is stale. It supersedes the starting spec's
`CASES.md`: the catalog in code is the source, this page its reading copy.

Every family takes a position on every case: a rendered Sample, or NotApplicable with an honest reason
(a case a family is silent on is Unimplemented, a hard failure). Ids are stable: expectations, baselines and
history key on them; never renumber, only add. The expected result is derived from the scenario, never written
by hand; where behaviour is implementation-defined the case lists its acceptable outcomes, and anything else
(above all a crash or a silent loss of text) fails. `{markers}`, `{opener}`, `{closer}`, `{quoted_call}`,
`{stray}` and `{start}` are filled with each family's own spellings.

Default tools, declared in every request unless a case says otherwise: {tools}.
"""

RULES = """\
## Rules the cases encode

- **No markup in content or reasoning.** A marker of the format never reaches `content` or
  `reasoning_content` unless the expected text itself holds it (a quoted marker), or the case accepts the raw
  text back (`raw text as content` outcomes). A lone control marker outside any section (`tool.stray_marker`)
  and a start marker followed by prose (`tool.false_start`) are dropped; the prose around them is kept.
- **Calls inside reasoning** (`reasoning.quoted_call`, `reasoning.tool_inside`, `reasoning.implicit_end`).
  Tool-call markup inside a reasoning block that is later closed is reasoning text: the model was thinking
  about the format. A tool-section start inside reasoning ends the reasoning only when no reasoning closer
  follows it: the output ends inside the block (the call is extracted, reasoning is the text before it). A
  streaming parser therefore holds the text from such a start marker until the closer (it was reasoning) or
  the end of the stream (it was a call).
- **Malformed next to well-formed** (`tool.malformed_neighbour`): the good call always survives; the bad one
  comes back as a call with its raw argument text or as its own text in content, never half-converted and never
  as a call whose name swallowed the markup after it.
- **Untyped values** (XML and argument-pair formats): a value is typed by its parameter's schema. With `anyOf`,
  `oneOf` or a type list, the first non-string type that accepts the parsed value wins, else the value stays a
  string; a parameter declared `string` keeps its text even when it parses as JSON (`tool.string_like_json`).
- **Incremental streaming** (the `incremental` check, its own column in the reports). In the streaming modes
  {modes}, once a chunk has been fed, a parser may still hold at most {bound} characters of the payload
  (narration, reasoning and argument text, whitespace aside) that arrived before that chunk, leaving out what an
  unfinished marker at the end of the received text requires: it may lag one delta, never a whole call.
  Argument text counts as passed on however it is re-encoded. The bound is twice the longest
  single non-string value the catalog writes (the `filters` object of `tool.complex_args`, which a schema-typed
  format cannot type before it ends); a parser that buffers whole calls passes it on ordinary calls and fails it
  on `tool.long_args`. On `reasoning.quoted_call` the bound grows by the quoted call's own payload: only the
  reasoning's closer shows that the call was quoted, so every parser holds it (PLaMo 3's call alone is longer
  than the bound). Engines graded where deltas cannot be attributed to chunks are not measured.
- **Isolation between requests** (the `concurrent` mode). Each case's stream and a partner request's (the first
  of {partners} the parser grades, other than the case) go through one parser under test at once, one token per
  step, the partner's steps spread evenly between the case's; each must come out exactly as it does alone. The
  cell judges isolation only, so a parser fails it by keeping request state where another request reaches it
  (a module global, a class attribute, a shared instance), never for what it gets wrong alone. Left out:
  {left_out}.
- **The Responses API** (the `responses` and `responses-tokens` modes, where the engine's server serves
  `/v1/responses`). Every case is asked again on that API, one shot and streamed a token a delta, and read as a
  client reads it (`contract/grading/responses.py`): reasoning items are the reasoning, message items the content,
  each `function_call` a call whose id is its `call_id`; the events go through the OpenAI SDK's own stream state.
  The same expected result and checks apply, and the `responses` check adds what only this API can get wrong: an
  event the SDK rejects, a stream without its terminal event, a completed response whose output differs from the
  events streamed before it, a done event that contradicts its deltas, a call without a `call_id` or two sharing
  one. Stream equals batch also compares the output items' order (blank message items aside). Left out:
  {not_on_responses}.
"""

OUTCOMES = {
    Rule.EXACT: "",
    Rule.TRUNCATED_ARGUMENTS: "the fragment as a call's arguments, or as content; the earlier call kept",
    Rule.MALFORMED_ARGUMENTS: "a call with the raw argument text, or the raw text as content",
    Rule.UNKNOWN_TOOL: "surfaced as a call, or the raw text as content",
    Rule.MALFORMED_NEIGHBOUR: "both calls (the bad one with raw argument text), or the good call and the bad "
                              "call's own text as content",
    Rule.INFERRED_NAME: "the call named from its argument keys, or the raw text as content",
    Rule.TRUNCATED_NAME: "one outcome only: the calls before the cut; no call named by the fragment",
    Rule.NO_TOOL_CHOSEN: "one outcome only: no call, the raw text (after any reasoning) as content",
    Rule.ONE_CALL_ASKED: "the first call alone (the others dropped whole), or every call as written",
    Rule.FORCED_FUNCTION: "the call, finished tool_calls, or stop as OpenAI answers a named choice",
}


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"


def _segment(segment: Any) -> str:
    if isinstance(segment, Reasoning):
        return f"reasoning {_value(segment.text)}"
    if isinstance(segment, Content):
        return ("preamble " if segment.preamble else "narration ") + _value(segment.text)
    if isinstance(segment, Call):
        arguments = segment.raw_arguments if segment.raw_arguments is not None else _value(segment.arguments)
        return f"call `{segment.name}` {arguments}".rstrip()
    if isinstance(segment, EmptySection):
        return "an empty section"
    if isinstance(segment, Stray):
        return f"a lone `{segment.marker}`"
    raise TypeError(f"unknown segment {segment!r}")  # pragma: no cover


def scenario_text(case: Case) -> str:
    scenario = case.scenario
    parts = [_segment(s) for s in scenario.segments]
    if scenario.style is not Style.CANONICAL:
        parts.append(f"style {scenario.style.value}")
    if scenario.truncation is not Truncation.NONE:
        parts.append(f"cut: {scenario.truncation.value}")
    if scenario.context.prompt_tail:
        parts.append(f"prompt ends with {_value(scenario.context.prompt_tail)}")
    if scenario.context.thinking is None:
        parts.append("the request sends no thinking flag")
    if scenario.context.tool_choice != "auto":
        parts.append(f"the request sends tool_choice {_value(choice_json(scenario.context.tool_choice))}")
    if not scenario.context.parallel_tool_calls:
        parts.append("the request sends parallel_tool_calls false")
    if case.variant_of:
        parts.append(f"a request variant of `{case.variant_of}` (families hold their position on it)")
    return "; ".join(parts).replace("|", "\\|").replace("\n", " ")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _positions(case: Case, families: dict[str, Family]) -> str:
    rendered = [name for name, f in families.items() if not isinstance(f.position(case), NotApplicable)]
    return f"{len(rendered)}/{len(families)}"


def render(families: dict[str, Family]) -> str:
    tools = ", ".join(f"`{t.name}`({', '.join(t.parameters['properties'])})" for t in DEFAULT_TOOLS)
    lines = [INTRO.replace("{tools}", tools),
             RULES.replace("{modes}", ", ".join(INCREMENTAL_MODES)).replace("{bound}", str(INCREMENTAL_BOUND))
             .replace("{partners}", ", ".join(f"`{p}`" for p in PARTNERS))
             .replace("{left_out}", "; ".join(f"`{c}` ({why})" for c, why in NOT_INTERLEAVED.items()))
             .replace("{not_on_responses}", "; ".join(f"`{c}` ({why})" for c, why in NOT_ON_RESPONSES.items()))]
    for kind, title in (("tool", "Tool calls"), ("reasoning", "Reasoning"), ("harmony", "Harmony (gpt-oss)")):
        lines += [f"## {title}", "",
                  "| id | since | scenario | expected | acceptable outcomes | bug class | families |",
                  "|---|---|---|---|---|---|---|"]
        for case in (c for c in CATALOG if c.kind == kind):
            lines.append(f"| `{case.id}` | v{case.version} | {_cell(case.title)}: {scenario_text(case)} | "
                         f"{_cell(case.expected)} | {_cell(OUTCOMES[case.rule])} | {_cell(case.origin)} | "
                         f"{_positions(case, families)} |")
        lines.append("")
    lines += ["`families`: how many families render the case (the rest are NotApplicable, with their reason in the",
              "matrix). Each family's positions and notes are in `fixtures/families/<family>.py`.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contract.cli.catalog_doc", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/CATALOG.md is not current")
    args = parser.parse_args(argv)
    text = render(all_families())
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is stale: run python -m contract.cli.catalog_doc", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
