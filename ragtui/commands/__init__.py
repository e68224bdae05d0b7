"""Click commands, one module per area; `ragtui.cli` loads each lazily by name."""
