"""KnownBroken: what each engine's parsers are known to get wrong, and the verdicts it gives.

Two files per engine and vocabulary tier, under `fixtures/expectations/` (`synthetic/` for that tier):

- `<engine>.toml`, written by people: named bugs (`[[bug]]`: `id`, `reason`, optional `link`, and the
  `cells` it explains as rows of parser(s) x case(s) x modes); a cell may cite several bugs. The format is
  docs/known-broken.md.
- `<engine>.signatures.jsonl`, written only by `nox -s update_expectations`: how each cited cell fails.

A cited cell that fails with its recorded signature is `xfail`; one that passes is `fixed`; one that fails
differently is `changed`, with a diff of recorded vs now. `model` holds the types, `read` validates the
files, `verdict` judges a cell, `edit` refreshes the files in place (imported by
the tools that write them, not by a grade).
"""

from .model import EVERY_MODE, MODE_NAMES, NONE, TIERS, Bug, Expectations, Place, compress_modes, expand_modes
from .read import ExpectationError, load, signatures_path
from .verdict import Verdict, judge, resolve

__all__ = [
    "EVERY_MODE", "MODE_NAMES", "NONE", "TIERS", "Bug", "ExpectationError", "Expectations", "Place", "Verdict",
    "compress_modes", "expand_modes", "judge", "load", "resolve", "signatures_path",
]
