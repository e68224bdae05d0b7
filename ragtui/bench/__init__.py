"""`ragtui bench`: speed figures measured on this machine, each beside a baseline.

Kept out of `ragtui.core` (a harness is not product logic):

- `figures`   the Figure row, timing helpers and the table `ragtui bench` prints
- `synthetic` seeded synthetic run histories (also used by scale tests)
- `data`      indexing, Inspect import, comparison, memory (no UI)
- `startup`   `ragtui --help` and the Runs screen's first paint, as fresh processes
- `tui`       headless paint of big tables beside stock DataTable and textual-fastdatatable
- `run`       the whole bench, in order
"""
