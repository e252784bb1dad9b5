"""Framework core: importable with no engine installed."""
