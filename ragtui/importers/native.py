"""native importer (being written)."""
