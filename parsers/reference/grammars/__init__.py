"""Section grammars: one codec per way of writing calls, configured per family by markers."""
