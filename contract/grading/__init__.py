"""Grading: the engines (`engines`, `adapter`), a cell, its id and what it records (`cell`, `cell_id`, `record`,
`outcome`), a parser driven through its adapter and checked (`subject`, `checks`, `compare`, `assembly`), and the
grader with its isolated workers (`grader`, `isolation`, `progress`, `schedule`, `pipeline`). Imports nothing
itself: `reports` reads `record` without the machinery, and nox `engines` and `cell_id`."""
