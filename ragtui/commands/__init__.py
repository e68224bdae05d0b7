"""Click commands beyond the basics, one module per area; `ragtui.cli` adds them all.

Each module exposes `COMMANDS: list[click.Command]`.
"""
