"""The run: its plan of cells (`plan`), the results file (`results`, its layout `schema`), and the provenance of
the engine builds it graded (`provenance`)."""
