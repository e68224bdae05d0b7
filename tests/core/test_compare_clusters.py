"""Clustered comparisons from a case metadata field ([compare] cluster in ragtui.toml): cases
whose own `cluster` is unset take the field's value, and the comparison resamples and
sign-flips by cluster, and says so. Checked against a brute-force enumeration of the cluster
sign-flips."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ragtui.core.compare import compare_runs
from ragtui.core.verdict import Clustered, Method
from ragtui.format import note_text

N, PER = 36, 3  # 12 source documents, 3 questions each


def _history(run_writer, *, own_clusters: dict[str, str] | None = None):
    ids = [f"q{i:02d}" for i in range(N)]
    rng = np.random.default_rng(15)
    doc_effect = np.repeat(rng.normal(0.02, 0.2, N // PER), PER)  # cases of a doc move together
    a = rng.uniform(0.3, 0.7, N)
    b = np.clip(a + doc_effect, 0, 1)
    meta = {c: {"doc": f"doc-{i // PER}", "tokens": 10} for i, c in enumerate(ids)}
    run_writer.write("A", {"m": dict(zip(ids, a.tolist(), strict=True))}, metadata=meta)
    run_writer.write(
        "B",
        {"m": dict(zip(ids, b.tolist(), strict=True))},
        metadata=meta,
        clusters=own_clusters,
        config={"p": 2},
    )
    return ids, a, b


def _brute_p(d: np.ndarray, clusters: list[str]) -> float:
    """The two-sided sign-flip p over cluster totals, by enumerating every sign pattern."""
    names = list(dict.fromkeys(clusters))
    totals = [sum(x for x, c in zip(d, clusters, strict=True) if c == name) for name in names]
    observed = abs(sum(totals))
    patterns = list(itertools.product((1, -1), repeat=len(names)))
    hits = sum(
        abs(sum(s * t for s, t in zip(signs, totals, strict=True))) >= observed - 1e-12
        for signs in patterns
    )
    return hits / len(patterns)


def test_metadata_field_names_the_clusters(run_writer) -> None:
    _, a, b = _history(run_writer)
    store = run_writer.store()
    plain = compare_runs(store, "A", "B").metric("m")
    assert plain.method is Method.T and plain.units == N  # no field named: cases independent
    c = compare_runs(store, "A", "B", cluster_field="doc")
    m = c.metric("m")
    assert m.method is Method.CLUSTER_SIGN_FLIP and m.units == N // PER
    docs = [f"doc-{i // PER}" for i in range(N)]
    assert m.p == pytest.approx(_brute_p(b - a, docs))
    (note,) = [n for n in c.noise if isinstance(n, Clustered)]
    assert (note.clusters, note.cases, note.named, note.from_field) == (12, N, 0, N)
    assert note_text(note) == (
        "36 cases in 12 clusters (36 by metadata field 'doc' ([compare] cluster)): tested by "
        "cluster (a cluster's total is one unit), since cases of one cluster are not independent"
    )
    assert c.to_json()["cluster_field"] == "doc"


def test_a_cases_own_cluster_wins_over_the_metadata_field(run_writer) -> None:
    # B names its own cluster for the first 6 cases: two documents of 3 become one "manual"
    own = {f"q{i:02d}": "manual" for i in range(6)}
    _, a, b = _history(run_writer, own_clusters=own)
    c = compare_runs(run_writer.store(), "A", "B", cluster_field="doc")
    m = c.metric("m")
    docs = ["manual" if i < 6 else f"doc-{i // PER}" for i in range(N)]
    assert m.units == 11
    assert m.p == pytest.approx(_brute_p(b - a, docs))
    (note,) = [n for n in c.noise if isinstance(n, Clustered)]
    assert (note.named, note.from_field, note.clusters) == (6, N - 6, 11)


def test_a_field_no_case_carries_changes_nothing(run_writer) -> None:
    _history(run_writer)
    c = compare_runs(run_writer.store(), "A", "B", cluster_field="section")
    assert c.metric("m").method is Method.T
    assert not [n for n in c.noise if isinstance(n, Clustered)]


def test_a_field_with_one_case_per_value_is_no_clustering(run_writer) -> None:
    # every case its own value ("tokens" differs per case): nothing to resample by cluster
    ids = [f"q{i:02d}" for i in range(20)]
    rng = np.random.default_rng(3)
    meta = {c: {"case_no": i} for i, c in enumerate(ids)}
    run_writer.write("A", {"m": dict(zip(ids, rng.uniform(size=20).tolist(), strict=True))})
    run_writer.write(
        "B",
        {"m": dict(zip(ids, rng.uniform(size=20).tolist(), strict=True))},
        metadata=meta,
        config={"p": 2},
    )
    c = compare_runs(run_writer.store(), "A", "B", cluster_field="case_no")
    assert c.metric("m").method is not Method.CLUSTER_SIGN_FLIP
    assert not [n for n in c.noise if isinstance(n, Clustered)]


def test_any_json_value_of_the_field_names_a_cluster(run_writer) -> None:
    """Values that are not strings group by their JSON text; null means no cluster."""
    kinds = [{"doc": 1}, [1, 2], True, 3, "3", "\x1b[31mred", None, 2.5]
    ids = [f"q{i:02d}" for i in range(len(kinds) * 3)]
    meta = {c: {"doc": kinds[i // 3]} for i, c in enumerate(ids)}
    rng = np.random.default_rng(2)
    a = rng.uniform(0.2, 0.8, len(ids))
    run_writer.write("A", {"m": dict(zip(ids, a.tolist(), strict=True))}, metadata=meta)
    b = np.clip(a + rng.normal(0.05, 0.1, len(ids)), 0, 1)
    run_writer.write(
        "B", {"m": dict(zip(ids, b.tolist(), strict=True))}, metadata=meta, config={"p": 2}
    )
    c = compare_runs(run_writer.store(), "A", "B", cluster_field="doc")
    m = c.metric("m")
    # 3 and "3" share one cluster; the three null cases are one cluster each
    groups = ['{"doc": 1}', "[1, 2]", "true", "3", "3", "\x1b[31mred", None, "2.5"]
    labels = [g if g is not None else f"own-{i}" for i, g in enumerate(groups) for _ in range(3)]
    labels = [f"{x}-{i}" if x.startswith("own") else x for i, x in enumerate(labels)]
    assert m.units == len(set(labels)) == 6 + 3
    assert m.p == pytest.approx(_brute_p(b - a, labels))
    (note,) = [n for n in c.noise if isinstance(n, Clustered)]
    assert (note.from_field, note.cases) == (21, 24)
    assert "3 on their own" in note_text(note)
