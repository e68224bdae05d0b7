"""The noise budget: where the variance of a per-case delta comes from, and what shrinks it.

Model per case i and side: y = μ_i + g (a generation: the system's answer) + j (one grading of
that answer), with var(g) = σ²_gen and var(j) = σ²_judge. A side with k_gen generations each
graded k_judge times averages to a per-case value with noise σ²_gen/k_gen +
σ²_judge/(k_gen·k_judge). So for d_i = b_i - a_i:

    var(d) = σ²_case + Σ_sides (σ²_gen/k_gen + σ²_judge/(k_gen·k_judge))

- σ²_judge: the pooled within-case variance of runs that graded the SAME answers (judge-only
  reruns, e.g. `ragtui noise`);
- σ²_gen + σ²_judge: the same across runs with different answers (full reruns of a config);
- σ²_case: what is left of the observed var(d): real per-case differences, which only more
  cases average away.
Levers, each to reach a target MDE: more cases; grading every answer k times; regenerating
(and grading) k times. A lever whose variance part is unknown is not offered.

The MDE is the verdict's own (from its standard error and degrees of freedom: clustered
metrics resample by cluster, whose SE is not sqrt(var(d)/N)); the levers scale that SE by
the design effect SE²·N/var(d), taken to stay as the variance parts shrink.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragtui.core import power

MAX_TIMES = 20


@dataclass(frozen=True)
class SideNoise:
    """One side's replicate structure and what its reruns measured (variances per grading)."""

    k_gen: int  # distinct generations (answer sets) averaged per case
    k_judge: float  # gradings per generation, on average
    var_judge: float | None  # from runs grading the same answers
    var_total: float | None  # from runs with different answers: σ²_gen + σ²_judge


@dataclass(frozen=True)
class NoiseBudget:
    metric: str
    n: int
    var_delta: float  # observed variance of the per-case deltas
    var_case: float
    var_gen: float | None  # None: not measured (no full reruns)
    var_judge: float | None  # None: not measured (no judge-only reruns)
    gen_part: float | None  # what generation noise adds to var(d) as the runs stand
    judge_part: float | None  # what judge noise adds
    rerun_part: float | None  # what both add (known even when the split is not)
    mde: float
    target_mde: float  # the margin when the MDE is above it, else half the MDE
    add_cases: int | None  # cases to add to reach the target
    judge_times: int | None  # grade every answer k times (both sides); None: not within 20
    regen_times: int | None  # regenerate and grade k times (both sides); None: not within 20
    judge_lever: bool = False  # whether the judge lever could be assessed at all
    regen_lever: bool = False


def side_noise(x: np.ndarray, groups: Sequence[object]) -> SideNoise:
    """From a k × N matrix of one side's replicate runs over common cases and, per run, the
    fingerprint of its answers (equal fingerprints: the same answers, re-graded)."""
    labels = list(groups)
    distinct = list(dict.fromkeys(labels))
    members = [[i for i, g in enumerate(labels) if g == d] for d in distinct]
    k_gen = len(distinct)
    k_judge = len(labels) / k_gen if k_gen else 1.0
    var_judge = _pooled([x[m] for m in members if len(m) >= 2])
    var_total = _pooled([x[[m[0] for m in members]]]) if k_gen >= 2 else None
    return SideNoise(k_gen, k_judge, var_judge, var_total)


def _pooled(blocks: list[np.ndarray]) -> float | None:
    """Pooled within-case variance of several (k × N) blocks of replicates."""
    ss = df = 0.0
    for block in blocks:
        if block.shape[0] < 2 or block.shape[1] == 0:
            continue
        ss += float(((block - block.mean(axis=0)) ** 2).sum())
        df += block.shape[1] * (block.shape[0] - 1)
    return ss / df if df else None


def _combine(values: list[tuple[float | None, int]]) -> float | None:
    known = [(v, w) for v, w in values if v is not None and w > 0]
    if not known:
        return None
    return sum(v * w for v, w in known) / sum(w for _, w in known)


def noise_budget(
    metric: str,
    d: np.ndarray,
    sides: Sequence[SideNoise],
    margin: float,
    *,
    df: int | None = None,
    se: float | None = None,
    mde: float | None = None,
) -> NoiseBudget | None:
    """`se` and `mde`: the verdict's standard error and MDE for these deltas (without them,
    independent cases: sqrt(var(d)/N) and its t-based MDE on `df`, else N - 1)."""
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    if n < 2:
        return None
    var_d = float(d.var(ddof=1))
    if var_d <= 0:
        return None
    var_judge = _combine([(s.var_judge, 1) for s in sides])
    var_total = _combine([(s.var_total, 1) for s in sides])
    var_gen = None if var_total is None else max(0.0, var_total - (var_judge or 0.0))
    if var_total is not None and var_judge is None:
        var_gen = None  # total known, split unknown: the judge lever stays unknown too
    noise_now = _noise(sides, var_gen or 0.0, var_judge, var_total, 1, 1)
    var_case = max(0.0, var_d - noise_now)
    if se is None or mde is None or se <= 0:
        se = math.sqrt(var_d / n)
        mde = power.mde(se, df if df is not None else n - 1) or 0.0
    deff = se * se * n / var_d  # 1 for independent cases
    target = margin if mde > margin else mde / 2
    factor = mde / se  # the quantiles of this N and method

    def reaches(var: float) -> bool:
        return factor * math.sqrt(deff * var / n) <= target

    judge_times = regen_times = None
    if var_judge is not None:
        judge_times = _times(
            lambda k: reaches(var_case + _noise(sides, var_gen or 0.0, var_judge, None, 1, k))
        )
    if var_gen is not None and var_judge is not None:
        regen_times = _times(
            lambda k: reaches(var_case + _noise(sides, var_gen, var_judge, None, k, 1))
        )
    elif var_total is not None:
        regen_times = _times(
            lambda k: reaches(var_case + _noise(sides, 0.0, None, var_total, k, 1))
        )
    total = power.n_to_detect(math.sqrt(deff * var_d), target)
    return NoiseBudget(
        metric=metric,
        n=n,
        var_delta=var_d,
        var_case=var_case,
        var_gen=var_gen,
        var_judge=var_judge,
        gen_part=None if var_gen is None else _noise(sides, var_gen, 0.0, None, 1, 1),
        judge_part=None if var_judge is None else _noise(sides, 0.0, var_judge, None, 1, 1),
        rerun_part=None if var_judge is None and var_total is None else noise_now,
        mde=mde,
        target_mde=target,
        add_cases=None if total is None else max(0, total - n),
        judge_times=judge_times,
        regen_times=regen_times,
        judge_lever=var_judge is not None,
        regen_lever=(var_gen is not None and var_judge is not None) or var_total is not None,
    )


def _noise(
    sides: Sequence[SideNoise],
    var_gen: float,
    var_judge: float | None,
    var_total: float | None,
    gen_times: int,
    judge_times: int,
) -> float:
    """The rerun noise in var(d) when every side regenerates ×gen_times and grades each answer
    ×judge_times more. With only the total known, it is treated as one per-run part."""
    out = 0.0
    for s in sides:
        k_gen = s.k_gen * gen_times
        k_judge = s.k_judge * judge_times
        if var_judge is not None:
            out += var_gen / k_gen + var_judge / (k_gen * k_judge)
        elif var_total is not None:
            out += var_total / k_gen
    return out


def _times(ok) -> int | None:
    for k in range(2, MAX_TIMES + 1):
        if ok(k):
            return k
    return None
