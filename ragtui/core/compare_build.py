"""The body of `compare_runs`: reads the store once, pivots, and builds every per-metric figure
and note. Split from compare.py, which keeps the public types."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ragtui.core import stats
from ragtui.core.agreement import Agreement, agreement
from ragtui.core.analysis import MetricResult, analyse_metric
from ragtui.core.budget import NoiseBudget, SideNoise, noise_budget, side_noise
from ragtui.core.compare_data import (
    Profile,
    bottom_cases,
    comparability_notes,
    drift_notes,
    human_agreement,
    human_labels,
    judged_same_answers,
    mean_or_none,
    metadata_clusters,
    profiles,
    rerun_source,
)
from ragtui.core.errors import RagtuiError, UnknownMetricError
from ragtui.core.intervals import SIGN_FLIPS, has_clusters
from ragtui.core.model import Run
from ragtui.core.ppi import PPIEstimate, ppi_mean
from ragtui.core.score_grid import ScoreGrid, metric_replicates, replicates
from ragtui.core.store import Store
from ragtui.core.verdict import (
    Clustered,
    ClusterFieldUnused,
    ErrorCounts,
    IdenticalMetric,
    IdenticalRuns,
    JudgeOnlyFloor,
    JudgesDisagree,
    LowAgreement,
    Method,
    NoReruns,
    NoRerunsLeft,
    Note,
    NotScored,
    RerunErrors,
    RerunIdentical,
    RerunMean,
    RerunMissing,
    RerunRule,
    RunsDiffer,
    SameConfig,
    ScalesDiffer,
    SeedNote,
    UnevenReruns,
    Unpaired,
    Verdict,
)

if TYPE_CHECKING:
    from ragtui.core.compare import Comparison, JudgeVerdict, Replicates


def refuse_summary_only(store: Store, run_ids: Sequence[str]) -> None:
    """A run with no cases (a tool saved only run-level figures) has nothing to pair."""
    runs = store.runs().select(["run_id", "n_cases"]).to_pylist()
    cases = {r["run_id"]: r["n_cases"] for r in runs}
    for rid in run_ids:
        if not cases.get(rid):
            raise RagtuiError(
                f"run {rid} has no cases: it is a summary-only run (its tool saved run-level "
                "figures, not per-case scores), and a comparison pairs cases; compare runs "
                "that have cases (`ragtui runs` lists them)"
            )


@dataclass
class Built:
    run_a: Run
    run_b: Run
    results: list[MetricResult] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)
    noise: list[Note] = field(default_factory=list)
    bottom: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)
    agreement: list[Agreement] = field(default_factory=list)
    human: list[Agreement] = field(default_factory=list)
    reruns_a: list[str] = field(default_factory=list)
    reruns_b: list[str] = field(default_factory=list)
    replicates: dict[str, Replicates] = field(default_factory=dict)
    ppi: list[PPIEstimate] = field(default_factory=list)
    budget: list[NoiseBudget] = field(default_factory=list)


class Builder:
    def __init__(
        self,
        store: Store,
        a_id: str,
        b_id: str,
        metrics: Sequence[str] | None,
        margin: float,
        seed: int,
        cluster_field: str | None = None,
    ) -> None:
        self.store, self.a_id, self.b_id = store, a_id, b_id
        self.requested, self.margin, self.seed = metrics, margin, seed
        self.cluster_field = cluster_field
        self.cluster_source: tuple[np.ndarray, np.ndarray] | None = None
        self.out = Built(store.run(a_id), store.run(b_id))

    # ------------------------------------------------------------ set-up

    def _names(self) -> list[str]:
        have_a, have_b = self.store.metrics([self.a_id]), self.store.metrics([self.b_id])
        if self.requested is None:
            names = [m for m in have_a if m in set(have_b)]
            candidates = sorted({*have_a, *have_b})
        else:
            names = candidates = list(dict.fromkeys(self.requested))
            unknown = [m for m in names if m not in have_a and m not in have_b]
            if unknown:
                known = ", ".join(sorted({*have_a, *have_b})) or "none"
                raise UnknownMetricError(
                    f"metric {unknown[0]!r} is in neither run (they have: {known})"
                )
        for m in candidates:
            for side, have in (("A", have_a), ("B", have_b)):
                if m not in have:
                    self.out.warnings.append(NotScored(m, side))
        return names

    def _clusters(self, grid: ScoreGrid) -> np.ndarray | None:
        """Each case's cluster: its own `cluster` field (A's, else B's), else the metadata
        field the configuration names (A's, else B's); a case with neither is its own
        cluster. None when no case names one."""
        n = grid.case_ids.size
        if n == 0:  # no case scored on both sides: nothing to cluster (and nothing to index)
            return None
        names = np.full(n, None, dtype=object)
        named = np.zeros(n, dtype=bool)
        for rid in (self.a_id, self.b_id):
            table = self.store.case_clusters(rid)
            if table is None or table.num_rows == 0:
                continue
            pos = grid.index_of(table["case_id"])
            values = np.asarray(table["cluster"].to_pylist(), dtype=object)
            take = (pos >= 0) & ~named[np.maximum(pos, 0)]
            names[pos[take]] = values[take]
            named[pos[take]] = True
        filled = np.zeros(n, dtype=bool)
        if self.cluster_field is not None:
            unused = True
            for rid in (self.a_id, self.b_id):
                found = metadata_clusters(self.store, rid, self.cluster_field)
                unused = unused and not found
                for i, case_id in enumerate(grid.case_ids.tolist()):
                    if not named[i] and not filled[i] and case_id in found:
                        names[i] = found[case_id]
                        filled[i] = True
            if unused:  # a misspelt field would leave the cases unclustered without a word
                self.out.warnings.append(ClusterFieldUnused(self.cluster_field, bool(named.any())))
        if not (named.any() or filled.any()):
            return None
        self.cluster_source = (named, filled)
        # "\x00" keeps a case's own cluster apart from any cluster a run file could name
        return np.array(
            [
                c if c is not None else f"\x00{cid}"
                for c, cid in zip(names, grid.case_ids, strict=True)
            ],
            dtype=object,
        )

    def _same_answers(self, pooled: list[str]) -> None:
        """A judge that differs between the sides of one set of answers (a re-judge against
        its parent, whatever the files call themselves) is all that differs: its note says
        so instead of "deltas mix judge and system changes"."""
        out = self.out
        judged = [
            w for w in out.warnings if isinstance(w, RunsDiffer) and w.what.startswith("judge")
        ]
        if not judged:
            return
        prints = self.prints or self.store.answer_fingerprints(pooled)
        if rerun_source(prints, pooled) != "judge-only":
            return
        out.warnings = [replace(w, same_answers=True) if w in judged else w for w in out.warnings]

    # ------------------------------------------------------------ build

    def build(self) -> Built:
        out, store = self.out, self.store
        a_id, b_id = self.a_id, self.b_id
        out.warnings += comparability_notes(out.run_a, out.run_b)
        names = self._names()
        family_a = store.reruns(a_id)
        self.same_config = b_id in family_a
        if self.same_config:  # the other reruns would all land on A: on neither side
            out.noise.append(SameConfig(len([r for r in family_a if r not in (a_id, b_id)])))
            sib_a, sib_b = [], []
        else:
            sib_a = [r for r in family_a if r not in (a_id, b_id)]
            sib_b = [r for r in store.reruns(b_id) if r not in (a_id, b_id, *sib_a)]
        ids = [a_id, b_id, *sib_a, *sib_b]
        grid = ScoreGrid(store.scores(ids, names, ordered=False), ids, names)
        self.grid, self.ids = grid, ids
        # a cached copy: every score equal over the same answers; equal scores over other
        # answers are a judge grading them alike (each metric's own line says so)
        if names and grid.case_ids.size and grid.same(0, 1):
            prints = store.answer_fingerprints([a_id, b_id])
            if prints.get(a_id) == prints.get(b_id):
                out.warnings.append(IdenticalRuns())
        rows_a = replicates(grid, [0, *(grid.runs[r] for r in sib_a)], ids, "A", out.warnings)
        rows_b = replicates(grid, [1, *(grid.runs[r] for r in sib_b)], ids, "B", out.warnings)
        out.reruns_a, out.reruns_b = [ids[i] for i in rows_a], [ids[i] for i in rows_b]
        prof = profiles(store.score_profile([a_id, b_id], names))
        many = len(rows_a) > 1 or len(rows_b) > 1
        pooled = [ids[i] for i in rows_a + rows_b]
        self.prints = store.answer_fingerprints(pooled) if many else {}
        self._same_answers(pooled)
        clusters = self._clusters(grid)
        empty = Profile((), 0, 0, 0)
        pro = {
            (s, m): prof.get((rid, m), empty)
            for s, rid in (("A", a_id), ("B", b_id))
            for m in names
        }
        comparable = [
            m
            for m in names
            if not (pro["A", m].scales and pro["B", m].scales)
            or set(pro["A", m].scales) == set(pro["B", m].scales)
        ]
        tests = max(1, len(comparable))
        self.dupes: dict[tuple[str, str, str], list[str]] = {}
        for mi, m in enumerate(names):
            self._metric(mi, m, pro["A", m], pro["B", m], rows_a, rows_b, clusters, tests)
        out.warnings += [RerunIdentical(*key, tuple(ms)) for key, ms in self.dupes.items()]
        self._cluster_note(clusters)
        self._noise_notes(names, rows_a, rows_b)
        self._agreement(names)
        self._ppi(names)
        self._count_notes()
        return out

    def _metric(
        self,
        mi: int,
        m: str,
        pa_: Profile,
        pb_: Profile,
        rows_a: list[int],
        rows_b: list[int],
        clusters: np.ndarray | None,
        tests: int,
    ) -> None:
        from ragtui.core.compare import Replicates

        out, grid, ids = self.out, self.grid, self.ids
        st, val = grid.state[:, mi], grid.value[:, mi]
        counts = {
            "only_a": int(np.count_nonzero((st[0] == 1) & (st[1] == 0))),
            "only_b": int(np.count_nonzero((st[0] == 0) & (st[1] == 1))),
            "errors": int(np.count_nonzero((st[0] == 2) | (st[1] == 2))),
            "errors_a": pa_.errors,
            "errors_b": pb_.errors,
            "parse_failures_a": pa_.parse_failures,
            "parse_failures_b": pb_.parse_failures,
            "parse_scored_a": pa_.parse_scored,
            "parse_scored_b": pb_.parse_scored,
            "scale_a": pa_.scales,
            "scale_b": pb_.scales,
        }
        if pa_.scales and pb_.scales and set(pa_.scales) != set(pb_.scales):
            out.warnings.append(ScalesDiffer(m, pa_.scales, pb_.scales))
            out.results.append(MetricResult(m, 0, verdict=Verdict.NOT_COMPARABLE, **counts))
            return
        ka = metric_replicates(grid, rows_a, mi, ids, "A", self.dupes)
        kb = metric_replicates(grid, rows_b, mi, ids, "B", self.dupes)
        paired = (st[0] == 1) & (st[1] == 1)
        rep = Replicates(
            grid.case_ids[paired],
            [ids[r] for r in ka],
            val[ka][:, paired],
            [ids[r] for r in kb],
            val[kb][:, paired],
        )
        out.replicates[m] = rep
        for side, rows in (("A", ka), ("B", kb)):
            failed = {ids[r]: int(np.count_nonzero(st[r][paired] == 2)) for r in rows[1:]}
            if sum(failed.values()):
                runs = tuple(r for r, n in failed.items() if n)
                out.warnings.append(RerunErrors(m, side, sum(failed.values()), runs))
            gaps = [st[r][paired] == 0 for r in rows[1:]]
            if gaps and np.any(gaps):
                runs = tuple(ids[r] for r, g in zip(rows[1:], gaps, strict=True) if g.any())
                cases = int(np.count_nonzero(np.any(gaps, axis=0)))
                out.warnings.append(RerunMissing(m, side, cases, runs))
        r = analyse_metric(
            m,
            rep.a,
            rep.b,
            rng=stats.rng_for(self.seed, m),
            margin=self.margin,
            clusters=None if clusters is None else clusters[paired],
            tests=tests,
        )
        floors, sides = {}, []
        for side, rows in (("A", ka), ("B", kb)):
            floor, noise = self._floor(m, side, rows, st, val)
            sides.append(noise)
            if floor is not None:
                floors[side] = floor
        nf = floors.get("A") or floors.get("B")
        bottom = {}
        # each side's worst 10% among the cases both scored, as every other figure of the row
        # (over each side's own cases, a B whose judge failed on A's worst cases looked better)
        for key, rows in (("a", ka), ("b", kb)):
            with warnings.catch_warnings():  # cases no rerun scored stay NaN, unused
                warnings.simplefilter("ignore", RuntimeWarning)
                per_case = np.nanmean(val[rows], axis=0)  # the reruns' mean: one A everywhere
            bottom[key] = bottom_cases(grid, per_case, paired)
        out.bottom[m] = bottom
        out.results.append(
            replace(
                r,
                runs_a=len(ka),
                runs_b=len(kb),
                noise_floor=None if nf is None else nf.noise_floor,
                rerun_delta=None if nf is None else nf.rerun_delta,
                icc=None if nf is None or nf.icc is None else float(nf.icc),
                noise_runs=0 if nf is None else nf.k,
                bottom_a=mean_or_none([v for _, v in bottom["a"]]),
                bottom_b=mean_or_none([v for _, v in bottom["b"]]),
                **counts,
            )
        )
        if r.spread and r.n >= 2 and r.se is not None:  # (a few moves plan nothing: no SE)
            b = noise_budget(m, rep.b - rep.a, sides, self.margin, se=r.se, mde=r.mde)
            if b is not None:
                out.budget.append(b)

    def _floor(
        self, m: str, side: str, rows: list[int], st: np.ndarray, val: np.ndarray
    ) -> tuple[stats.NoiseFloor | None, SideNoise]:
        if len(rows) < 2:
            return None, SideNoise(1, 1.0, None, None)
        full = np.all(st[rows] == 1, axis=0)
        x = val[rows][:, full]
        run_ids = [self.ids[i] for i in rows]
        nf = stats.noise_floor(x)
        if nf is None:
            return None, SideNoise(len(rows), 1.0, None, None)
        drift_notes(m, x, run_ids, side, self.out.warnings)
        source = rerun_source(self.prints, run_ids)
        self.out.noise.append(
            RerunRule(
                metric=m,
                side=side,
                runs=nf.k,
                n=nf.n,
                rerun_delta=nf.rerun_delta,
                margin=self.margin,
                holds=stats.rule_holds(nf.rerun_delta, self.margin),
                noise_floor=nf.noise_floor,
                chance_range=nf.chance_range,
                icc=None if nf.icc is None else float(nf.icc),
                source=source,
            )
        )
        groups = [self.prints.get(r) if source != "unknown" else r for r in run_ids]
        return nf, side_noise(x, groups)

    # ------------------------------------------------------------ notes

    def _cluster_note(self, clusters: np.ndarray | None) -> None:
        """Say so when the comparison went by cluster: over the cases some metric paired."""
        if clusters is None or self.cluster_source is None:
            return
        paired = np.zeros(clusters.size, dtype=bool)
        for rep in self.out.replicates.values():
            paired[self.grid.index_of(pa.array(rep.case_ids.tolist(), pa.string()))] = True
        if not has_clusters(clusters[paired]):
            return
        named, filled = self.cluster_source
        self.out.noise.append(
            Clustered(
                clusters=int(np.unique(clusters[paired]).size),
                cases=int(paired.sum()),
                named=int((named & paired).sum()),
                field=self.cluster_field,
                from_field=int((filled & paired).sum()),
            )
        )

    def _noise_notes(self, names: list[str], rows_a: list[int], rows_b: list[int]) -> None:
        noise = self.out.noise
        if len(rows_a) > 1 or len(rows_b) > 1:  # reruns, but perhaps none left for a metric
            measured = {n.metric for n in noise if isinstance(n, RerunRule)}
            twins = [w for w in self.out.warnings if isinstance(w, RerunIdentical)]
            for m in names:
                if m not in measured:
                    left_out = sum(not w.metrics or m in w.metrics for w in twins)
                    noise.append(NoRerunsLeft(m, left_out))
        for side, rows in (("A", rows_a), ("B", rows_b)):
            if len(rows) > 1:
                noise.append(RerunMean(side, len(rows)))
            rules = [n for n in noise if isinstance(n, RerunRule) and n.side == side]
            if rules and all(n.source == "judge-only" for n in rules):
                noise.append(JudgeOnlyFloor(side))
        ka, kb = len(rows_a), len(rows_b)
        if min(ka, kb) == 1 and max(ka, kb) > 1 and not self.same_config:
            # a warning, not a noise line: the gate shows it, and a one-sided reading needs it
            side, single = ("A", "B") if ka > 1 else ("B", "A")
            self.out.warnings.append(UnevenReruns(side, max(ka, kb), single))
        if len(rows_a) < 2 and len(rows_b) < 2 and not self.same_config:
            twins = sum(isinstance(w, RerunIdentical) for w in self.out.warnings)
            noise.append(NoReruns(twins))
        drawn = any(
            r.method in (Method.SIGN_FLIP, Method.CLUSTER_SIGN_FLIP) and not r.exact
            for r in self.out.results
        )
        noise.append(SeedNote(self.seed, SIGN_FLIPS, drawn))

    def _count_notes(self) -> None:
        out = self.out
        identical = any(isinstance(w, IdenticalRuns) for w in out.warnings)
        for r in out.results:
            if r.errors_a or r.errors_b or r.parse_failures_a or r.parse_failures_b:
                out.warnings.append(
                    ErrorCounts(
                        r.metric, r.errors_a, r.errors_b, r.parse_failures_a, r.parse_failures_b
                    )
                )
            if r.only_a or r.only_b:
                out.warnings.append(Unpaired(r.metric, r.only_a, r.only_b, r.n))
            rep = out.replicates.get(r.metric)
            same = rep is not None and r.n > 0 and np.array_equal(rep.a, rep.b)
            if same and not identical:
                out.warnings.append(IdenticalMetric(r.metric, r.n))
        for g in [*out.agreement, *out.human]:
            if g.flagged:
                out.warnings.append(
                    LowAgreement(
                        g.metric, g.between, g.n, g.kappa, g.rho, len(g.flipped), g.constant
                    )
                )

    def _agreement(self, names: list[str]) -> None:
        grid, out = self.grid, self.out
        if judged_same_answers(out.run_a, out.run_b):
            for mi, m in enumerate(names):
                p = (grid.state[0, mi] == 1) & (grid.state[1, mi] == 1)
                if p.any():
                    out.agreement.append(
                        agreement(
                            m,
                            "A judge vs B judge",
                            grid.case_ids[p],
                            grid.value[0, mi, p],
                            grid.value[1, mi, p],
                            grid.labels(0, mi)[p],
                            grid.labels(1, mi)[p],
                        )
                    )
        self.labels = human_labels(self.store, grid, names, (self.a_id, self.b_id))
        out.human = human_agreement(grid, names, self.labels)

    def _ppi(self, names: list[str]) -> None:
        grid, out = self.grid, self.out
        for mi, m in enumerate(names):
            for ri in (0, 1):
                if (ri, mi) not in self.labels:
                    continue
                idx, human = self.labels[(ri, mi)]
                unlabelled = grid.state[ri, mi] == 1
                unlabelled[idx] = False
                est = ppi_mean(
                    m, "AB"[ri], grid.value[ri, mi, unlabelled], grid.value[ri, mi, idx], human
                )
                if est is not None:
                    out.ppi.append(replace(est, run=(self.a_id, self.b_id)[ri]))
            rep = out.replicates.get(m)
            if rep is None or (0, mi) not in self.labels or (1, mi) not in self.labels:
                continue
            # the change, corrected on the cases labelled on both sides
            (ia, ha), (ib, hb) = self.labels[(0, mi)], self.labels[(1, mi)]
            paired_pos = np.flatnonzero((grid.state[0, mi] == 1) & (grid.state[1, mi] == 1))
            common = np.intersect1d(np.intersect1d(ia, ib), paired_pos)
            if not common.size:
                continue
            human_a = dict(zip(ia.tolist(), ha.tolist(), strict=True))
            human_b = dict(zip(ib.tolist(), hb.tolist(), strict=True))
            at = np.searchsorted(paired_pos, common)
            d = rep.b - rep.a
            rest = np.ones(d.size, dtype=bool)
            rest[at] = False
            human_d = np.array([human_b[c] - human_a[c] for c in common.tolist()])
            est = ppi_mean(m, "B - A", d[rest], d[at], human_d)
            if est is not None:
                out.ppi.append(est)


# ---------------------------------------------------------------- judge robustness


JudgeKey = tuple[str | None, str | None]  # a judge: its model and its prompts


def _other_judges(
    store: Store, c: Comparison
) -> tuple[dict[JudgeKey, list[str]], dict[JudgeKey, list[str]], JudgeKey, list[JudgeKey]]:
    """A's and B's re-judges by judge (latest first), the runs' own judge, and the judges
    other than it that re-graded both."""
    from ragtui.judge.prompts import prompt_set

    rows = store.runs().select(["run_id", "kind", "parent", "judge_model", "judge_prompt_hash"])
    runs = rows.to_pylist()

    # a judge is its model and its prompts, whichever metrics a re-judge graded: a re-judge of
    # A on every metric and one of B on faithfulness alone are one judge on faithfulness
    def rejudges(parent: str) -> dict[JudgeKey, list[str]]:
        found: dict[JudgeKey, list[str]] = {}
        for r in runs:  # oldest first: the latest re-judge of a judge comes first
            if r["kind"] == "rejudge" and r["parent"] == parent:
                key = (r["judge_model"], prompt_set(r["judge_prompt_hash"]))
                found.setdefault(key, []).insert(0, r["run_id"])
        return found

    by_a, by_b = rejudges(c.a), rejudges(c.b)
    own = (c.run_a.judge.model, prompt_set(c.run_a.judge.prompt_hash))
    return by_a, by_b, own, [k for k in by_a if k in by_b and k != own]


def judged_by_others(store: Store, c: Comparison) -> dict[str, set[str]]:
    """The re-judges of A and of B ("A", "B") under every judge that re-graded both (the runs'
    own judge aside): what the verdict per judge would be made from if it were made now."""
    by_a, by_b, _, others = _other_judges(store, c)
    return {
        "A": {r for k in others for r in by_a[k]},
        "B": {r for k in others for r in by_b[k]},
    }


def judge_verdicts(store: Store, c: Comparison) -> tuple[list[JudgeVerdict], list[Note]]:
    """A vs B under every judge that re-graded both A's and B's answers (re-judge runs), beside
    the runs' own judge; a note per metric whose decided verdicts differ between judges."""
    from ragtui.core.compare import JudgeVerdict, compare_runs

    by_a, by_b, own, others = _other_judges(store, c)
    if not others:
        return [], []

    def label(key: tuple[str | None, str | None]) -> str:
        return f"{key[0] or 'unknown'} ({key[1] or 'no prompt hash'})"

    names = [m.metric for m in c.metrics if m.verdict is not Verdict.NOT_COMPARABLE]
    out = [
        JudgeVerdict(label(own), c.a, c.b, m.metric, m.verdict, m.delta, m.ci_low, m.ci_high)
        for m in c.metrics
        if m.metric in names
    ]
    for key in others:
        # per metric, the latest re-judge of each side that graded it
        pairs: dict[tuple[str, str], list[str]] = {}
        graded = {r: set(store.metrics([r])) for r in (*by_a[key], *by_b[key])}  # (once each)
        for m in names:
            ra = next((r for r in by_a[key] if m in graded[r]), None)
            rb = next((r for r in by_b[key] if m in graded[r]), None)
            if ra is not None and rb is not None:
                pairs.setdefault((ra, rb), []).append(m)
        for (ra, rb), chosen in pairs.items():
            other = compare_runs(
                store,
                ra,
                rb,
                metrics=chosen,
                margin=c.margin,
                seed=c.seed,
                other_judges=False,
                cluster_field=c.cluster_field,
            )
            out += [
                JudgeVerdict(label(key), ra, rb, m.metric, m.verdict, m.delta, m.ci_low, m.ci_high)
                for m in other.metrics
            ]
    notes: list[Note] = []
    for m in names:
        verdicts = tuple((j.judge, j.verdict) for j in out if j.metric == m)
        decided = {v for _, v in verdicts if v.decided}
        if len(verdicts) > 1 and len(decided) > 1:
            notes.append(JudgesDisagree(m, verdicts))
    return out, notes
