"""Case history classes: is a case newly broken, newly fixed, flaky, or stable?

A case *passes* a metric in a run when its value reaches the pass threshold: the one the user
gave for that metric, else the score's own threshold when the source stated one (DeepEval
does), else 0.5 (so PARTIAL and 3 on a 1-5 scale pass). An errored score neither passes nor
fails. Classes of one case and metric, first match wins:

- flaky             the candidate's config disagrees with itself: its reruns (the runs
                    compare averages as B, newer ones included) pass and fail
- newly broken      passed in every baseline run that scored it, fails in the candidate
- newly fixed       failed in every baseline run, passes in the candidate
- flaky             passes and fails across reruns of one config (the base's, the
                    candidate's, or any in the history)
- stable pass/fail  passes (fails) in every run
- varies by config  passes under some configs and fails under others, never flipping within one
- no history / unscored   no baseline run scored it / the candidate did not score it

The baseline is the base run and its reruns (`base` given), else every earlier run of the same
dataset (name and version) under another config: the candidate's own config's runs are its
side, never its baseline. With no baseline run a case is *no history*, or *flaky* where the
candidate's own reruns disagree on it. Without a base, runs newer than the candidate are not its history.
The candidate's own reruns count whenever they were made, and with a base so do all the base's
reruns: they are B and A, which compare averages per case whatever their dates, so a case whose
reruns disagree is flaky wherever it is shown, never newly broken on one rerun and fine on
another (a rerun of A made after B that fails a case shows A fails it too).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtui.core.errors import RagtuiError, UnknownMetricError
from ragtui.core.store import Store

DEFAULT_PASS = 0.5
CLASSES = (
    "newly broken",
    "newly fixed",
    "flaky",
    "stable pass",
    "stable fail",
    "varies by config",
    "no history",
    "unscored",
)
_SLACK = 1e-12


@dataclass(frozen=True)
class Outcome:
    run_id: str
    value: float | None  # None: errored or not scored
    passed: bool | None
    baseline: bool  # part of the baseline


@dataclass(frozen=True)
class CaseClass:
    case_id: str
    metric: str
    klass: str  # one of CLASSES
    threshold: float
    threshold_from: str  # "user", "source" or "default"
    candidate: Outcome
    history: tuple[Outcome, ...]  # every run of the history that has the case, oldest first

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "metric": self.metric,
            "class": self.klass,
            "threshold": self.threshold,
            "threshold_from": self.threshold_from,
            "value": self.candidate.value,
            "passed": self.candidate.passed,
            "history": [o.__dict__ for o in self.history],
        }


@dataclass(frozen=True)
class History:
    run: str
    base: str | None
    baseline_runs: tuple[str, ...]
    runs: tuple[str, ...]  # the whole history considered, oldest first, the candidate included
    metrics: tuple[str, ...]
    cases: tuple[CaseClass, ...]
    notes: tuple[str, ...] = ()
    # the candidate and its reruns (its config's runs of the dataset, as compare pools them)
    candidate_runs: tuple[str, ...] = ()

    def counts(self) -> dict[str, dict[str, int]]:
        """metric -> class -> number of cases (every class present, zeros included)."""
        out = {m: dict.fromkeys(CLASSES, 0) for m in self.metrics}
        for c in self.cases:
            out[c.metric][c.klass] += 1
        return out

    def of_class(self, klass: str) -> list[CaseClass]:
        return [c for c in self.cases if c.klass == klass]

    def to_json(self, klass: str | None = None) -> dict[str, Any]:
        """`klass`: list only the cases of this class (the counts stay whole), as the text
        form of `ragtui history --class` does."""
        return {
            "run": self.run,
            "base": self.base,
            "baseline_runs": list(self.baseline_runs),
            "runs": list(self.runs),
            "candidate_runs": list(self.candidate_runs),
            "metrics": list(self.metrics),
            "pass_rule": "value >= threshold: the user's, else the source's, else 0.5",
            "counts": self.counts(),
            "notes": list(self.notes),
            "class": klass,
            "cases": [c.to_json() for c in (self.of_class(klass) if klass else self.cases)],
        }


def _dataset_runs(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Runs of the candidate's dataset (name and version) up to the candidate, oldest first."""
    rows = store.runs().to_pylist()  # oldest first
    me = next(r for r in rows if r["run_id"] == run_id)
    return [
        r
        for r in rows
        if (r["dataset_name"], r["dataset_version"]) == (me["dataset_name"], me["dataset_version"])
        and (r["created_at"], r["run_id"]) <= (me["created_at"], me["run_id"])
    ]


def _classify(
    cand: bool,
    own: list[bool],
    base: list[bool],
    groups: list[list[bool]],
    everything: list[bool],
) -> str:
    """`own`: the case in every run of the candidate's config (the candidate included). Its
    reruns disagreeing make it flaky before anything else: which of them would be "the"
    candidate is chance, so it is never newly broken or fixed on one of them."""
    if any(p != cand for p in own):
        return "flaky"
    if base and all(base) and not cand:
        return "newly broken"
    if base and not any(base) and cand:
        return "newly fixed"
    if any(len(set(g)) > 1 for g in groups):
        return "flaky"
    if all(everything):
        return "stable pass"
    if not any(everything):
        return "stable fail"
    return "varies by config"


def _runs_considered(
    store: Store, run_id: str, base: str | None, notes: list[str]
) -> tuple[str | None, list[str], list[str], list[list[str]]]:
    """(base id, history oldest first, baseline runs, config groups checked for flakiness).
    The history always holds the candidate's reruns (see the module's docstring)."""
    when = {r["run_id"]: (r["created_at"], r["run_id"]) for r in store.runs().to_pylist()}
    own = store.reruns(run_id)
    if base is None:
        dataset = _dataset_runs(store, run_id)
        earlier = [r["run_id"] for r in dataset]
        by_config: dict[str, list[str]] = {}
        for r in dataset:
            by_config.setdefault(r["config_key"], []).append(r["run_id"])
        # the candidate's own config is its side, never its baseline: two reruns of one
        # config get the same classes whichever of them is asked about
        baseline = [r for r in earlier if r not in own and r != run_id]
        if not baseline and len(own) > 1:
            notes.append(
                f"no earlier run of another config of {run_id}'s dataset: its own config's "
                f"{len(own)} runs tell only whether a case is flaky"
            )
        elif not baseline:
            notes.append(f"{run_id} is the first run of its dataset: there is no history yet")
        groups = [g for g in by_config.values() if run_id not in g]
        history = sorted(set(earlier) | set(own), key=lambda r: when[r])
        return None, history, baseline, [*groups, own]
    base_id = store.resolve_run(base)
    if base_id == run_id:
        raise RagtuiError(f"base and candidate are the same run ({run_id})")
    # every rerun of the base, as compare averages them all into A (see the module docstring)
    baseline = [r for r in store.reruns(base_id) if r != run_id]
    if store.run(base_id).dataset != store.run(run_id).dataset:
        notes.append(
            f"the base {base_id} and the candidate {run_id} are on different datasets "
            "(or versions): a case id may not be the same question"
        )
    history = sorted(set(baseline) | set(own), key=lambda r: when[r])
    return base_id, history, baseline, [baseline, own]


def case_classes(
    store: Store,
    run_ref: str,
    *,
    base: str | None = None,
    metrics: Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    case_ids: Collection[str] | None = None,
) -> History:
    """Classes of the candidate's cases (of `case_ids` only, when given)."""
    run_id = store.resolve_run(run_ref)
    thresholds = dict(thresholds or {})
    for metric, value in thresholds.items():
        if not 0.0 <= value <= 1.0:
            raise RagtuiError(
                f"pass threshold for {metric}: expected a fraction in [0, 1], got {value}"
            )
    notes: list[str] = []
    base_id, history, baseline, groups = _runs_considered(store, run_id, base, notes)
    have = store.metrics([run_id])
    names = list(dict.fromkeys(metrics)) if metrics else have
    missing = [m for m in [*names, *thresholds] if m not in have]
    if missing:
        raise UnknownMetricError(
            f"metric {missing[0]!r} is not scored in {run_id} (it has: {', '.join(have) or 'none'})"
        )
    # (metric, case) -> run -> (value or None when errored, the threshold the source stated)
    cells: dict[tuple[str, str], dict[str, tuple[float | None, float | None]]] = {}
    table = store.scores_with_thresholds(history, names)
    columns = ("run_id", "metric", "case_id", "value", "error", "threshold")
    for run, metric, case_id, value, error, stated in zip(
        *(table[c].to_pylist() for c in columns), strict=True
    ):
        if case_ids is None or case_id in case_ids:
            cells.setdefault((metric, case_id), {})[run] = (
                None if error is not None else value,
                stated,
            )
    in_baseline = set(baseline)
    own = set(store.reruns(run_id))  # (once: the set was queried again for every run)
    own_runs = [r for r in history if r in own]

    def threshold(metric: str, stated: float | None) -> tuple[float, str]:
        if metric in thresholds:
            return thresholds[metric], "user"
        return (stated, "source") if stated is not None else (DEFAULT_PASS, "default")

    cases: list[CaseClass] = []
    for metric, case_id in sorted(
        (k for k, per_run in cells.items() if run_id in per_run),
        key=lambda k: (names.index(k[0]), k[1]),
    ):
        per_run = cells[(metric, case_id)]
        outcomes: dict[str, Outcome] = {}
        for r in history:
            if r in per_run:
                value, stated = per_run[r]
                passed = None if value is None else value >= threshold(metric, stated)[0] - _SLACK
                outcomes[r] = Outcome(r, value, passed, r in in_baseline)
        cand = outcomes[run_id]
        thr, thr_from = threshold(metric, per_run[run_id][1])
        judged = {r: o.passed for r, o in outcomes.items() if o.passed is not None}
        base_pass = [p for r, p in judged.items() if r in in_baseline]
        own_pass = [judged[r] for r in own_runs if r in judged]
        if cand.passed is None:
            klass = "unscored"
        elif not base_pass:
            # no baseline run: the candidate's own reruns still show a case that flips
            klass = "flaky" if any(p != cand.passed for p in own_pass) else "no history"
        else:
            per_group = [[judged[r] for r in g if r in judged] for g in groups]
            klass = _classify(cand.passed, own_pass, base_pass, per_group, list(judged.values()))
        cases.append(
            CaseClass(case_id, metric, klass, thr, thr_from, cand, tuple(outcomes.values()))
        )
    return History(
        run=run_id,
        base=base_id,
        baseline_runs=tuple(r for r in history if r in in_baseline),
        runs=tuple(history),
        metrics=tuple(names),
        cases=tuple(cases),
        notes=tuple(notes),
        candidate_runs=tuple(own_runs),
    )


def new_failures(
    store: Store,
    base: str,
    candidate: str,
    metric: str | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> list[CaseClass]:
    """For `gate --no-new-failures`: the cases that passed in every run of the base's config
    and fail in the candidate, each with its history (empty list: none)."""
    history = case_classes(
        store,
        candidate,
        base=base,
        metrics=None if metric is None else [metric],
        thresholds=thresholds,
    )
    return history.of_class("newly broken")
