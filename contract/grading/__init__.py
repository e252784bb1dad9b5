"""Grading: engines' parsers driven through their adapters, their output checked, in isolated workers."""
