"""Parsers under test: `reference/` (this project's own) and one adapter per external engine.

This module is the adapter's whole view of the project (`docs/adapters.md`): an adapter imports its own
engine and what `__all__` names here, nothing else of `contract/`. `assemble` loads the OpenAI SDK, a third
of a second of CPU, when first used, so importing an adapter's `MAPPING` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from contract.cases.family import Family, ReasoningStyle, ResponseTemplate, Sample
from contract.cases.forced import (
    ForcedText,
    TaggedCalls,
    UnwritableText,
    Written,
    calls_end,
    reasoning_end,
    shape_of_schema,
    tagged_calls,
)
from contract.cases.model import (
    Chunk,
    Delta,
    Message,
    NamedChoice,
    RequestContext,
    Tool,
    ToolCall,
    ToolCallDelta,
    choice_json,
    forced,
)
from contract.grading.adapter import (
    Engine,
    EngineRepro,
    ParserFactory,
    ParserUnderTest,
    StreamSession,
)
from contract.grading.pipeline import Coverage, Pipeline, coverage, kept_in_content, mapping
from contract.streams.tokenizer import encode_markup, family_tokenizer, family_tokenizer_file

from .harmony_tokens import HarmonyTokens
from .hf import hf_template_tokenizer, hf_tokenizer
from .requests import USER, chat_request, messages, parallel_flag, responses_request, thinking_flags

__all__ = [
    # the protocol (contract.grading.adapter)
    "Engine", "ParserFactory", "ParserUnderTest", "StreamSession",
    # what a parser is handed and returns (contract.cases.model, contract.cases.family)
    "Family", "ReasoningStyle", "ResponseTemplate", "Sample",
    "Chunk", "Delta", "Message", "RequestContext", "Tool", "ToolCall", "ToolCallDelta",
    # the tool_choice a request sends, and what a forced one has the model write (contract.cases.model, .forced)
    "NamedChoice", "choice_json", "forced", "ForcedText", "TaggedCalls", "UnwritableText", "Written", "shape_of_schema", "tagged_calls", "reasoning_end", "calls_end",
    # what a model writes under a structural tag, checked with xgrammar (parsers.structural_tags), loaded when used
    "written_under",
    # a server's parser pairs and the registry's coverage (contract.grading.pipeline)
    "Coverage", "Pipeline", "coverage", "kept_in_content", "mapping",
    # tokenizers of the current vocabulary tier (contract.streams.tokenizer, parsers.hf)
    "encode_markup", "family_tokenizer", "family_tokenizer_file", "hf_template_tokenizer", "hf_tokenizer",
    # the request a client sends (parsers.requests)
    "USER", "chat_request", "messages", "parallel_flag", "responses_request", "thinking_flags",
    # what a standalone repro needs of the adapter (contract.cli.repro); o200k_harmony ids for Harmony parsers
    "EngineRepro", "HarmonyTokens",
    # the client's delta accumulation (contract.grading.assembly), loaded when first used
    "assemble",
]


def __getattr__(name: str) -> Any:
    if name == "assemble":
        return importlib.import_module("contract.grading.assembly").assemble
    if name == "written_under":  # xgrammar's verdicts, which only the engines that install it use
        return importlib.import_module("parsers.structural_tags").written_under
    raise AttributeError(f"module 'parsers' has no attribute {name!r}")
