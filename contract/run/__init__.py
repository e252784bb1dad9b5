"""The run: its plan of cells (`plan`), its record (`record`), the results file (`results`, its layout `schema`),
the receipt saying which results file it wrote (`receipt`), and the provenance of the engine builds it graded
(`provenance`). Imports nothing itself: nox imports `receipt` with the standard library alone."""
