"""What counts as "the same output" for the diagnosis, on hand-built runs: the regraded rule
(a re-judge) and the "answers changed" count, each checked against the case view's word diff.
Expectations worked out by hand from README's Diagnosis section."""

from __future__ import annotations

from pathlib import Path

from ragtui.core.answer_diff import diff_answers
from ragtui.core.diagnosis import diagnose, diagnose_case
from ragtui.core.store import Store
from tests.core.diagnosis_builder import case, chunks, write


def test_a_rejudge_with_an_empty_answer_in_both_runs_is_still_regraded(tmp_path: Path) -> None:
    # B re-grades A's very outputs; j0's answer is empty in both runs. j1 and j2 fall 100 -> 0:
    # the judge's doing, not a stage's
    def cases(values: list[float]) -> list:
        return [
            case(
                f"j{i}",
                {"faithfulness": v, "context_recall": 1.0},
                contexts=chunks("x-1", "y-1"),
                answer="" if i == 0 else f"answer number {i}",
            )
            for i, v in enumerate(values)
        ]

    write(tmp_path, "A", cases([1, 1, 1, 1]), day=1)
    write(tmp_path, "B", cases([1, 0, 0, 1]), day=2, config={"judge": "other"})
    with Store.open(tmp_path) as store:
        d = diagnose(store, "A", "B")
        assert d.same_output
        assert d.answers_changed == 0
        assert [(c.case_id, c.cause) for m in d.metrics for c in m.cases] == [
            ("j1", "regraded"),
            ("j2", "regraded"),
        ]


def test_runs_that_recorded_no_output_at_all_are_not_a_rejudge(tmp_path: Path) -> None:
    # every answer empty and no chunks: nothing shows A and B gave the same outputs
    def cases(v: float) -> list:
        return [case(f"e{i}", {"faithfulness": v}, answer="") for i in range(3)]

    write(tmp_path, "A", cases(1.0), day=1)
    write(tmp_path, "B", cases(0.0), day=2, config={"generator": "b"})
    with Store.open(tmp_path) as store:
        assert not diagnose(store, "A", "B").same_output


PAIRS = {
    "t1": ("Refunds take 5 days.", "REFUNDS take 5 days."),  # case: changed
    "t2": ("Refunds take\n5 days.", "Refunds  take 5 days."),  # whitespace only: same
    "t3": ("ｆｕｌｌｗｉｄｔｈ file", "fullwidth file"),  # width: changed
    "t4": ("", ""),  # both empty: same
    "t5": ("5 days.", "5 days!"),  # punctuation: changed
    "t6": ("Refunds take 5 days.", "Refunds take 5 days ."),  # a space before the stop: changed
    "t7": ("  Refunds take 5 days.  ", "Refunds take 5 days."),  # trimmed ends: same
}
CHANGED = {"t1", "t3", "t5", "t6"}


def test_answers_changed_counts_what_the_word_diff_shows(tmp_path: Path) -> None:
    ctx = chunks("x-1")
    a = [case(k, {"faithfulness": 1.0}, contexts=ctx, answer=x) for k, (x, _) in PAIRS.items()]
    b = [case(k, {"faithfulness": 1.0}, contexts=ctx, answer=y) for k, (_, y) in PAIRS.items()]
    write(tmp_path, "A", a, day=1)
    write(tmp_path, "B", b, day=2, config={"generator": "b"})
    with Store.open(tmp_path) as store:
        d = diagnose(store, "A", "B")
        assert d.answers_changed == len(CHANGED)
        shown = {k for k in PAIRS if not diagnose_case(store, "A", "B", k).answer.identical}
    assert shown == CHANGED
    # a changed answer's diff marks something; a space that appeared is marked too
    moved = diff_answers(*PAIRS["t6"])
    assert [s.kind for s in moved.segments if s.kind != "equal"]
    assert moved.text("a") == PAIRS["t6"][0] and moved.text("b") == PAIRS["t6"][1]


def test_one_case_is_said_in_the_singular(tmp_path: Path) -> None:
    from ragtui.format import diagnosis_summary_lines

    ctx = chunks("x-1")
    # one paired case whose recall B copied; A also has a case B lacks and B one A lacks
    write(
        tmp_path,
        "A",
        [
            case("p", {"faithfulness": 1.0, "context_recall": 1.0}, contexts=ctx, answer="a"),
            case("only-a", {"faithfulness": 1.0}, contexts=ctx),
        ],
        day=1,
    )
    write(
        tmp_path,
        "B",
        [
            case("p", {"faithfulness": 0.0, "context_recall": 1.0}, contexts=ctx, answer="b"),
            case("only-b", {"faithfulness": 1.0}, contexts=ctx),
        ],
        day=2,
        config={"generator": "b"},
    )
    with Store.open(tmp_path) as store:
        lines = diagnosis_summary_lines(diagnose(store, "A", "B"))
    assert lines[0].endswith(" · 1 paired case")
    assert "answers changed in 1 of 1 case" in lines
    assert (
        "! context_recall: B equals A on 1 case: a cached grade, or a metric this change "
        "cannot move" in lines
    )
    assert "! faithfulness: 1 case only in A, 1 only in B; compared on the 1 both scored" in lines
