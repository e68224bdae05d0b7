"""generic importer (being written)."""
