"""The command-line tools: each composes the core with this repository's families (`fixtures/`), its
KnownBroken files and its engines. Only they (and `conftest.py`) name `fixtures`; the core is handed the
families it grades (`tests/test_engines.py` holds it to that).

    python -m contract.cli.repro CELL | --verify RESULTS     a standalone repro of a cell
    python -m contract.cli.update_expectations RESULTS...     refresh KnownBroken files from runs
    python -m contract.cli.vocabularies fetch | check        the pinned real vocabularies
    python -m contract.cli.draws --check | --update          the stored hypothesis draws
    python -m contract.cli.catalog_doc [--check]             docs/CATALOG.md
    python -m contract.cli.bench                             what grading costs
"""
