"""The workflows both shells call: open a folder, compare, gate, report, import, re-judge,
noise check. The CLI (`ragtui/commands`) and the TUI (`ragtui/tui`) keep only input, rendering
and navigation. No rich, no textual here; the configuration is read once, in `open_workspace`.
"""
