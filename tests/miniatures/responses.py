"""Miniature Responses API servers, each the reference's (`parsers.reference.responses`) with one defect, graded as an
engine of their own that serves both APIs; their parsers are the reference's, so every failing cell is the defect's.

- `message_first`: one shot, the message item is put before the function calls whatever the text's order (vLLM
  0.33.0's `build_response_output_items` does so); its stream follows the text.
- `reused_output_index`: streamed, a function_call item is announced at the output index of the item before it (an
  off-by-one transformers 5.23.0's handler has the other way round), which the OpenAI SDK's stream state rejects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.grading.adapter import Engine
from parsers import RequestContext
from parsers.reference import load as load_reference
from parsers.reference.responses import EventWriter, ServedOnResponses, _EventStream

ENGINE = "responses_miniature"
SURFACES = ("chat", "responses")
FAMILY = "hermes"
MAPPING: dict[str, str | None] = {"message_first": FAMILY, "reused_output_index": FAMILY}


@dataclass(frozen=True)
class MessageFirst(ServedOnResponses):
    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        response = super().respond(text, token_ids, context, stop)
        output = response["output"]
        response["output"] = [i for i in output if i["type"] != "function_call"] + [
            i for i in output if i["type"] == "function_call"]
        return response


class _ReusingWriter(EventWriter):
    """Announces a function_call item one output index early (where an item came before it)."""

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        item = fields.get("item") or {}
        if kind == "response.output_item.added" and item.get("type") == "function_call" and fields["output_index"]:
            fields["output_index"] -= 1
        return super()._event(kind, **fields)


@dataclass(frozen=True)
class ReusedOutputIndex(ServedOnResponses):
    def open_response_stream(self, context: RequestContext) -> _EventStream:
        return _EventStream(self.parser.open_stream(context), _ReusingWriter())

    def respond(self, text: str, token_ids: tuple[int, ...] | None, context: RequestContext,
                stop: str) -> dict[str, Any]:
        return ServedOnResponses(self.parser).respond(text, token_ids, context, stop)  # one shot is right


def load() -> Engine:
    reference = load_reference().factories[FAMILY]

    def build(kind: type[ServedOnResponses]) -> Any:
        return lambda family: kind(reference(family).parser)  # type: ignore[attr-defined]

    return Engine(ENGINE, "0", {"message_first": build(MessageFirst), "reused_output_index": build(ReusedOutputIndex)})
