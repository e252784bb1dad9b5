"""The run: its plan of cells (`plan`), its record (`record`), the results file (`results`, its layout `schema`),
and the provenance of the engine builds it graded (`provenance`)."""
