"""Case: one case of a run (and of the run it is compared with), its evidence and its history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ragtui.core.model import Case, Run
from ragtui.format import printable, short_pts
from ragtui.tui.widgets.chunks_view import ChunksView
from ragtui.tui.widgets.claims_view import ClaimsView
from ragtui.tui.widgets.literal import join, lit

SPARK = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class CaseData:
    case_id: str
    run: Run
    case: Case | None
    other_run: Run | None
    other: Case | None
    history: list[dict[str, Any]]


def load_case(store: Any, run_id: str, case_id: str, other_run_id: str | None) -> CaseData:
    """Everything the screen shows for one case, read in a worker thread."""
    other_run = None if other_run_id is None else store.run(other_run_id)
    return CaseData(
        case_id=case_id,
        run=store.run(run_id),
        case=store.case(run_id, case_id),
        other_run=other_run,
        other=None if other_run_id is None else store.case(other_run_id, case_id),
        history=store.case_history(case_id).to_pylist(),
    )


def spark(values: list[float | None]) -> str:
    return "".join("·" if v is None else SPARK[round(max(0.0, min(1.0, v)) * 7)] for v in values)


def value_of(case: Case | None, metric: str) -> str:
    if case is None:
        return "absent"
    if metric in case.errors:
        return "error"
    score = case.scores.get(metric)
    return "—" if score is None else short_pts(score.value)


class CaseScreen(Screen):
    """`]`/`[` step through `case_ids`; with `other_run_id`, A (other) and B (run) side by side."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket", "step(1)", "Next case", key_display="]"),
        Binding("left_square_bracket", "step(-1)", "Prev case", key_display="["),
        Binding(
            "tab",
            "switch_side",
            "A/B",
            priority=True,
            tooltip="Show the claims and chunks of A or B",
        ),
        Binding("m", "next_metric", "Metric", tooltip="Next metric: title, claims and judge reply"),
        Binding("R", "rejudge", "re-judge", tooltip="Re-judge this case with a configured judge"),
    ]

    def __init__(
        self,
        run_id: str,
        case_ids: list[str],
        index: int,
        other_run_id: str | None = None,
        metric: str | None = None,
    ) -> None:
        super().__init__()
        self.run_id, self.other_run_id = run_id, other_run_id
        self.case_ids = list(case_ids)
        self.index = max(0, min(index, len(self.case_ids) - 1))
        self.metric = metric
        self.side = "B" if other_run_id else ""  # whose claims and chunks are shown
        self.data: CaseData | None = None
        self._focused_once = False

    def compose(self) -> ComposeResult:
        yield Static(id="case-title", classes="screen-title", markup=False)
        with VerticalScroll(id="case-body"):
            yield Static(id="case-question", markup=False)
            yield Static(id="case-reference", markup=False)
            with Horizontal(id="case-answers"):
                if self.other_run_id:
                    yield Static(id="answer-a", classes="answer", markup=False)
                yield Static(id="answer-b", classes="answer", markup=False)
            with Horizontal(id="case-evidence"):
                yield ClaimsView(id="claims")
                with Vertical(id="chunks-box"):
                    yield ChunksView(id="chunks")
            yield Static(id="case-scores", markup=False)
            yield Static(id="case-judge", markup=False)
            yield Static(id="case-history", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        if not self.case_ids:  # an empty list (a filter that matched nothing): nothing to show
            self.query_one("#case-title", Static).update(
                Text("ragtui · Case  (no case in the list)")
            )
            return
        self.load()

    @property
    def case_id(self) -> str:
        return self.case_ids[self.index]

    # ------------------------------------------------------------ loading

    def load(self) -> None:
        self.query_one("#case-body").loading = True
        self.fetch(self.case_id)

    @work(thread=True, exclusive=True, group="case")
    def fetch(self, case_id: str) -> None:
        try:
            data = load_case(self.app.store, self.run_id, case_id, self.other_run_id)  # type: ignore[attr-defined]
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._show, data)

    def _failed(self, message: str) -> None:
        if self.is_attached:
            self.query_one("#case-body").loading = False
            self.notify(printable(message), severity="error", markup=False)

    async def _show(self, data: CaseData) -> None:
        if not self.is_attached or data.case_id != self.case_id:
            return
        self.data = data
        if self.metric is None or not self._metrics():
            metrics = self._metrics()
            self.metric = metrics[0] if metrics else None
        self.query_one("#case-body").loading = False
        main = data.case or data.other
        self.query_one("#case-question", Static).update(
            join(("Question   ", "bold"), (main.question if main else "(case not found)", ""))
        )
        ref = main.reference if main else None
        self.query_one("#case-reference", Static).update(
            join(("Reference  ", "bold"), (ref, "") if ref else Text("(none)", style="dim"))
        )
        for wid, run, case, side in self._sides():
            box = self.query_one(wid, Static)
            box.border_title = join(f"Answer {side} · ", (run.name, "")) if side else Text("Answer")
            box.update(
                lit(case.answer)
                if case
                else Text(f"not in run {printable(run.name)}", style="yellow")
            )
        await self._show_evidence()
        self._show_scores()
        self._refresh_title()
        if not self._focused_once:  # arrows walk the claims from the start
            self._focused_once = True
            self.query_one(ClaimsView).focus()

    def _sides(self) -> list[tuple[str, Run, Case | None, str]]:
        d = self.data
        assert d is not None
        if d.other_run is None:
            return [("#answer-b", d.run, d.case, "")]
        return [("#answer-a", d.other_run, d.other, "A"), ("#answer-b", d.run, d.case, "B")]

    def _metrics(self) -> list[str]:
        d = self.data
        if d is None:
            return []
        names: dict[str, None] = {}
        for c in (d.case, d.other):
            if c is not None:
                names.update(dict.fromkeys([*c.scores, *c.errors]))
        return sorted(names)

    def _side_case(self) -> tuple[Run, Case | None]:
        d = self.data
        assert d is not None
        if self.side == "A" and d.other_run is not None:
            return d.other_run, d.other
        return d.run, d.case

    async def _show_evidence(self) -> None:
        run, case = self._side_case()
        side = f" of {self.side}" if self.side else ""
        claims = [] if case is None else [c for c in case.claims if c.metric == self.metric]
        about = self.metric or ""
        if case is not None and not claims and case.claims:
            claims = list(case.claims)  # this metric has none: show the case's claims anyway
            about = " ".join(dict.fromkeys(c.metric for c in claims))
        view = self.query_one(ClaimsView)
        view.border_title = join(f"Claims{side} · ", (about, ""))
        box = self.query_one("#chunks-box")
        box.border_title = join(f"Chunks{side} · ", (run.name, ""))
        await self.query_one(ChunksView).show(() if case is None else case.contexts)
        view.show(claims)

    def _show_scores(self) -> None:
        d = self.data
        assert d is not None
        lines: list[Text] = []
        metrics = self._metrics()
        pad = max((len(printable(m)) for m in metrics), default=0)
        for m in metrics:
            mark = "▶ " if m == self.metric else "  "
            name = lit(m, "bold" if m == self.metric else "")
            name.pad_right(pad - len(name))
            line = join(mark, name, "  ")
            for _, _run, case, side in self._sides():
                line.append_text(join(f"{side} " if side else "", f"{value_of(case, m):>6}   "))
            lines.append(line)
        self.query_one("#case-scores", Static).update(
            Text("\n").join(lines) or Text("no scores", style="dim")
        )
        self._show_judge()
        self._show_history()

    def _show_judge(self) -> None:
        run, case = self._side_case()
        m = self.metric or ""
        out = join(("judge ", "bold"), (run.judge.model or "unknown", ""))
        if run.judge.provider:
            out.append_text(join(" (", (run.judge.provider, ""), ")"))
        score = None if case is None else case.scores.get(m)
        prompt = (score.prompt_hash if score else None) or run.judge.prompt_hash
        out.append_text(join(" · prompt ", (prompt or "unknown", ""), " · ", (m, "bold")))
        if case is not None and m in case.errors:
            out.append_text(join("\n", ("error: ", "bold red"), (case.errors[m], "red")))
        elif score is not None:
            out.append_text(
                join(
                    f" {short_pts(score.value)}",
                    (f" ({score.label})" if score.label else "", "bold"),
                )
            )
            if score.raw is not None:
                out.append_text(join(" · raw ", (json.dumps(score.raw, ensure_ascii=False), "")))
            if score.reason:
                out.append_text(join("\n", ("reason ", "bold"), (score.reason, "")))
            if score.reply:
                out.append_text(join("\n", ("reply  ", "bold"), (score.reply, "")))
        self.query_one("#case-judge", Static).update(out)

    def _show_history(self) -> None:
        d = self.data
        assert d is not None
        by_metric: dict[str, list[dict[str, Any]]] = {}
        for row in d.history:
            by_metric.setdefault(row["metric"], []).append(row)
        n_runs = len({r["run_id"] for r in d.history})
        lines = [Text(f"history · this case in {n_runs} runs (oldest → newest)", style="bold")]
        pad = max((len(printable(m)) for m in by_metric), default=0)
        for m, rows in by_metric.items():
            values = [r["value"] for r in rows]
            tail = " ".join(short_pts(v) for v in values[-8:])
            lines.append(
                join(
                    ("  ", ""),
                    (m, "bold" if m == self.metric else ""),
                    " " * (pad - len(printable(m)) + 2),
                    (spark(values), "cyan"),
                    f"  {tail}",
                )
            )
        self.query_one("#case-history", Static).update(Text("\n").join(lines))

    def _refresh_title(self) -> None:
        d = self.data
        m = self.metric or ""
        parts: list[Text | str | tuple[object, str]] = [
            ("ragtui · Case ", "bold"),
            (self.case_id, "bold"),
        ]
        if d is not None and m:
            parts += ["  ", (m, ""), " "]
            if d.other_run is not None:
                label = self._label(d.case, m)
                parts += [
                    f"A {value_of(d.other, m)} → B {value_of(d.case, m)}",
                    (f" ({label})" if label else "", "bold"),
                ]
            else:
                label = self._label(d.case, m)
                parts += [value_of(d.case, m), (f" ({label})" if label else "", "bold")]
        parts.append(f"  {self.index + 1} / {len(self.case_ids)} in list")
        if self.side:
            parts.append(Text(f"  showing {self.side}", style="dim"))
        self.query_one("#case-title", Static).update(join(*parts))

    @staticmethod
    def _label(case: Case | None, metric: str) -> str | None:
        score = None if case is None else case.scores.get(metric)
        return None if score is None else score.label

    # ------------------------------------------------------------ events and actions

    @on(ClaimsView.Cited)
    def _cited(self, event: ClaimsView.Cited) -> None:
        self.query_one(ChunksView).highlight(event.chunks)

    def action_step(self, delta: int) -> None:
        target = self.index + delta
        if not 0 <= target < len(self.case_ids):
            self.notify("first case in the list" if target < 0 else "last case in the list")
            return
        self.index = target
        self.load()

    async def action_switch_side(self) -> None:
        if not self.other_run_id or self.data is None:
            return
        self.side = "A" if self.side == "B" else "B"
        await self._show_evidence()
        self._show_judge()
        self._refresh_title()

    async def action_next_metric(self) -> None:
        metrics = self._metrics()
        if not metrics or self.data is None:
            return
        i = metrics.index(self.metric) if self.metric in metrics else -1
        self.metric = metrics[(i + 1) % len(metrics)]
        await self._show_evidence()
        self._show_scores()
        self._refresh_title()

    def action_rejudge(self) -> None:
        """Re-judge this case of the run on the shown side; the history then includes it."""
        if self.data is None:
            return  # still loading, or an empty list
        run_id = self.other_run_id if self.side == "A" and self.other_run_id else self.run_id

        def judged(result: str | None) -> None:
            if result is not None:
                self.load()

        self.app.open_rejudge_case(run_id, self.case_id, judged)  # type: ignore[attr-defined]

    def action_back(self) -> None:
        self.app.pop_screen()
