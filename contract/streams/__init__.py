"""Streams: tokenizers and vocabularies, and the chunkings that cut a rendered sample into deltas."""
