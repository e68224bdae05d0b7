"""Opening a runs folder: which folder, its configuration (read once), foreign files converted,
the index refreshed. Both shells start here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ragtui.config import Config, load_config
from ragtui.core.errors import InputError, RagtuiError
from ragtui.core.store import Store
from ragtui.importers.folder import SETTLE_SECONDS, import_foreign_files

DEFAULT_FOLDER = Path("runs")


def bundled_samples() -> Path:
    """The demo history: inside the package when installed from a wheel, else beside it."""
    here = Path(__file__).resolve().parents[1]  # the ragtui package
    for candidate in (here / "_sample_runs", here.parent / "sample_runs"):
        if candidate.is_dir():
            return candidate
    raise RagtuiError("the bundled sample_runs/ folder is missing from this installation")


def resolve_folder(path: str | Path | None) -> tuple[Path, str | None]:
    """The folder to open and a notice when it is not the one the user named.

    No path: ./runs when it holds run files (or foreign result files), else the bundled samples.
    """
    if path is not None:
        folder = Path(path)
        if not folder.is_dir():
            raise InputError(f"{folder}: no such folder")
        return folder, None
    if DEFAULT_FOLDER.is_dir() and any(
        p.is_file() and not p.name.startswith(".") for p in DEFAULT_FOLDER.rglob("*")
    ):
        return DEFAULT_FOLDER, None
    samples = bundled_samples()
    return samples, f"no run files in ./runs: showing the bundled demo history in {samples}"


def writable_folder(path: str | Path | None) -> Path:
    """The runs folder a command writes into; never the bundled demo history."""
    folder, notice = resolve_folder(path)
    if notice:
        raise InputError(
            "no run files in ./runs, and the bundled demo history is not written to: name "
            f"a runs folder (PATH), or try it on a copy (cp -r {folder} runs)"
        )
    refusal = demo_refusal(folder)
    if refusal is not None:
        raise InputError(refusal)
    return folder


def demo_refusal(folder: Path) -> str | None:
    """Why no run is written into `folder` when it is the bundled demo history (named by its
    path too, not only reached as the fallback), else None."""
    try:
        samples = bundled_samples()
    except RagtuiError:
        return None
    if Path(folder).resolve() != samples.resolve():
        return None
    return (
        f"{folder} is the bundled demo history, which is not written to: try it on a copy "
        f"(cp -r {samples} runs)"
    )


def read_config(folder: Path | None) -> tuple[Config, str | None]:
    """The configuration for `folder`, or the defaults and the one-line reason it is unusable."""
    try:
        return load_config(folder), None
    except RagtuiError as err:
        return Config(), f"{err}; using the defaults"


@dataclass
class Workspace:
    """An open runs folder. `notices` are one-line messages for the user (the demo fallback, a
    bad ragtui.toml, converted foreign files, the index's own notices); `store.problems` are the
    run files that could not be read."""

    folder: Path
    store: Store
    config: Config
    notices: list[str] = field(default_factory=list)
    config_error: str | None = None

    @property
    def margin(self) -> float:
        return self.config.margin

    def require_config(self) -> Config:
        """The configuration, for workflows that cannot run on defaults (judges, reruns)."""
        if self.config_error:
            raise InputError(self.config_error.removesuffix("; using the defaults"))
        return self.config

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _import_options(config: Config) -> dict[str, object]:
    """The configuration's settings for converting foreign files (declared metric scales)."""
    scales = getattr(config, "scales", None)
    return {"scales": dict(scales)} if scales else {}


def _import_foreign(
    store: Store, config: Config, waiting: list[Path] | None = None
) -> tuple[list[Path], list[str]]:
    """Convert the folder's new foreign files; files in no known format are mentioned once
    (the index remembers them), not on every open. `waiting` (the live watch): files changed
    a moment ago are left for later, their writer may be mid-way; an open converts every file
    as it is (`eval.py && ragtui gate …` runs right after the harness closed its file)."""
    known = store.not_results()
    found = set(known)
    written, notices = import_foreign_files(
        store.folder,
        **_import_options(config),
        not_results=found,
        waiting=waiting,
        settle=0.0 if waiting is None else SETTLE_SECONDS,
    )
    if found != known:
        store.remember_not_results(found)
    return written, notices


def open_folder(folder: str | Path, config: Config | None = None) -> Store:
    """The folder's index, after importing foreign result files (RAGAS CSVs, Inspect logs, …)
    into `folder/imported/` on the fly. Import notices join the store's notices."""
    folder = Path(folder)
    store = Store.open(folder, refresh=False)
    try:
        written, notices = _import_foreign(store, config or Config())
        notices += store.refresh().notes
    except BaseException:
        store.close()
        raise
    if written:  # one run file per run: a foreign file may hold several runs
        store.notices.append(
            f"imported {len(written)} run(s) from foreign result files into {folder / 'imported'}"
        )
    store.notices.extend(n for n in notices if n not in store.notices)
    return store


def open_workspace(path: str | Path | None) -> Workspace:
    """Resolve the folder, read its configuration once, convert foreign files, open the index."""
    folder, notice = resolve_folder(path)
    config, config_error = read_config(folder)
    store = open_folder(folder, config)
    store.kept_as_is = demo_refusal(folder)  # the TUI's re-judge and noise check refuse too
    notices = [n for n in (notice, config_error, *config.notices) if n]
    return Workspace(
        folder=folder,
        store=store,
        config=config,
        notices=[*notices, *store.notices],
        config_error=config_error,
    )


@dataclass(frozen=True)
class FolderChanges:
    """What a refresh found: runs (re)indexed, runs whose file is gone, files that failed."""

    changed: list[str]  # run ids indexed anew (new or grown files)
    removed: list[str]
    failed: list[str]  # one line per file that could not be read
    notices: list[str]
    # foreign result files changed a moment ago, not converted yet: look again shortly
    waiting: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.changed or self.removed or self.failed)

    @property
    def look_again(self) -> float | None:
        """Seconds after which a waiting file may hold still (None: nothing waits)."""
        return SETTLE_SECONDS + 0.25 if self.waiting else None


def refresh_workspace(workspace: Workspace) -> FolderChanges:
    """Convert new foreign files, then index new and changed run files (a stat per unchanged
    file): what the live folder watch and the `r` key run. Call it off the UI thread."""
    waiting: list[Path] = []
    _, notices = _import_foreign(workspace.store, workspace.config, waiting)
    report = workspace.store.refresh()
    notices += report.notes
    by_path = {row.file.resolve(): row.id for row in workspace.store.run_rows()}
    changed = [by_path[key] for p in report.indexed if (key := Path(p).resolve()) in by_path]
    return FolderChanges(
        changed=changed,
        removed=list(report.removed),
        failed=[str(f) for f in report.failed],
        notices=notices,
        waiting=[str(p) for p in waiting],
    )
