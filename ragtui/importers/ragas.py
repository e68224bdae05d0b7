"""ragas importer (being written)."""
