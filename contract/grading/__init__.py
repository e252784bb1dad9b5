"""Grading: the engines (`engines`, `adapter`), a cell and what it records (`cell`, `record`, `outcome`), a
parser driven through its adapter and checked (`subject`, `checks`, `compare`, `assembly`), and the grader with
its isolated workers (`grader`, `isolation`, `progress`, `schedule`, `pipeline`). Imports nothing itself:
`reports` reads `record` without the machinery."""
