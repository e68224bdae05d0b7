"""inspect importer (being written)."""
