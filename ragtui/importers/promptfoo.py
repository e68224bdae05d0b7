"""promptfoo importer (being written)."""
