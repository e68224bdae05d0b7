"""The core, importers and judge must not need the UI toolkits.

Checked in a fresh process where `textual` and `rich` cannot be imported at all: every module
of the three packages must still import. (A plain "not in sys.modules" check would trip over
httpx, whose optional command-line client pulls in rich when it happens to be installed; with
rich blocked, httpx falls back by itself.)
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import importlib, importlib.abc, pkgutil, sys

class BlockUI(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("textual", "rich"):
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None

sys.meta_path.insert(0, BlockUI())
import ragtui.core, ragtui.importers, ragtui.judge
names = []
for pkg in (ragtui.core, ragtui.importers, ragtui.judge):
    for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(mod.name)
        names.append(mod.name)
print(len(names), ",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "rich"))))
"""


def test_core_importers_judge_import_with_textual_and_rich_blocked() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, f"a core module needs textual or rich:\n{out.stderr}"
    count, loaded = (
        out.stdout.strip().split(" ", 1) if " " in out.stdout.strip() else (out.stdout.strip(), "")
    )
    assert int(count) >= 5  # the walk really imported the packages' modules
    assert loaded == ""


def test_the_blocker_catches_a_ui_import() -> None:
    probe = SCRIPT.replace("import ragtui.core, ragtui.importers, ragtui.judge", "import rich.text")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "blocked: rich" in out.stderr
