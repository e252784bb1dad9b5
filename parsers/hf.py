"""The family's tokenizer as the Hugging Face fast tokenizer most engines hold (imports `transformers`, which
every engine that calls this has among its own dependencies; importing this module imports nothing)."""

from __future__ import annotations

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
