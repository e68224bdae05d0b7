"""deepeval importer (being written)."""
