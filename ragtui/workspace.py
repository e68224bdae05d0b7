"""Opening a runs folder: convert foreign result files once, then index everything."""

from __future__ import annotations

from pathlib import Path

from ragtui.core.store import Store
from ragtui.importers.folder import import_foreign_files


def open_folder(folder: str | Path) -> Store:
    """The folder's index, after importing foreign result files (RAGAS CSVs, Inspect logs, …)
    into `folder/imported/` on the fly. Import notices join the store's notices."""
    folder = Path(folder)
    written, notices = import_foreign_files(folder)
    store = Store.open(folder)
    if written:
        store.notices.append(
            f"imported {len(written)} foreign result file(s) into {folder / 'imported'}"
        )
    store.notices.extend(notices)
    return store
