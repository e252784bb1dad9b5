"""Reports: read a results file and turn it into the HTML matrix and terminal/markdown summaries."""

from reports.html import render_matrix, write_matrix
from reports.load import load_results
from reports.summary import markdown_summary, outcome_counts, parser_scores, terminal_summary

__all__ = [
    "load_results",
    "markdown_summary",
    "outcome_counts",
    "parser_scores",
    "render_matrix",
    "terminal_summary",
    "write_matrix",
]
