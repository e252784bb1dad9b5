"""The family's tokenizer as the Hugging Face fast tokenizer most engines hold (imports `transformers`, which
every engine that calls this has among its own dependencies; importing this module imports nothing)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from contract.cases.family import Family
from contract.streams.tokenizer import family_tokenizer


@cache
def hf_tokenizer(family: Family) -> Any:
    """A `PreTrainedTokenizerFast` over the family's tokenizer of its vocabulary tier, built once per family (a
    family in each tier is its own object) and shared: an adapter that must change it builds its own."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=family_tokenizer(family))


@cache
def hf_template_tokenizer(family: Family) -> Any:
    """The family's tokenizer as its model's tokenizer config loads it with the `response_template` it declares
    (a tokenizer_config.json key is a constructor keyword: transformers keeps it as `response_template` and in
    `init_kwargs`), for template-driven parsers. A family without one: its plain `hf_tokenizer`."""
    from transformers import PreTrainedTokenizerFast

    if family.response_template is None:
        return hf_tokenizer(family)
    template = json.loads(json.dumps(family.response_template.template))  # a tokenizer_config.json value
    return PreTrainedTokenizerFast(tokenizer_object=family_tokenizer(family), response_template=template)
