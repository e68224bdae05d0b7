"""Figures as the user reads them: no "-0.0" from float dust, signs only where they mean something."""

from __future__ import annotations

from ragtui.core.gate import GateCheck, Outcome
from ragtui.core.ppi import PPIEstimate
from ragtui.core.verdict import RerunRule
from ragtui.format import cost_figure, pts, short_pts, signed_pts
from ragtui.format.verdicts import gate_check_text, ppi_text, rule_text


def test_a_value_that_rounds_to_zero_has_no_minus_sign() -> None:
    assert pts(-0.0000004) == "0.0"
    assert short_pts(-0.0000004) == "0"
    assert signed_pts(-0.0000004) == "0.0"
    assert pts(-0.0006) == "-0.1"  # a real negative keeps its sign
    assert signed_pts(-0.0006) == "-0.1"


def test_an_icc_of_float_dust_below_zero_reads_0_00() -> None:
    # seen on screen: "ICC -0.00" for seven reruns of one config on synthetic data
    note = RerunRule(
        metric="faithfulness",
        side="A",
        runs=7,
        n=1000,
        rerun_delta=0.025,
        margin=0.05,
        holds=True,
        noise_floor=0.029,
        chance_range=0.043,
        icc=-0.0004,
        source="full",
    )
    text = rule_text(note)
    assert "ICC 0.00 ·" in text and "-0.00" not in text
    assert "differ by 2.5 points" in text and "noise floor ±2.9" in text


def test_costs_are_written_out_with_four_significant_digits() -> None:
    # seen on the Trends screen: "2.659e-05" for a config's mean cost per case
    assert cost_figure("cost", 2.659e-05) == "0.00002659"
    assert cost_figure("cost", 3.56e-05) == "0.0000356"
    assert cost_figure("judge_cost", 0.001239) == "0.001239"
    assert cost_figure("cost", 12345.6) == "12,346"
    assert cost_figure("cost", 0.0) == "0"
    assert cost_figure("latency_ms", 1168.4) == "1,168 ms"
    assert cost_figure("total_tokens", 430.25) == "430.2"


def test_a_corrected_mean_names_the_run_it_corrects() -> None:
    """A side with reruns shows their mean; human labels correct one run: name it."""
    est = PPIEstimate("faithfulness", "A", 48, 32, 0.8229, 0.8229, 0.711, 0.934, run="strict-16")
    text = ppi_text(est)
    assert text.startswith("faithfulness: mean of A (strict-16) corrected by 32 human labels")
    assert text.endswith("82.3 [71.1, 93.4] beside the judge's 82.3")


def test_an_undecided_gate_says_plainly_when_no_case_count_can_be_had() -> None:
    # seen: "need — cases to show non-inferiority" when all 48 deltas were 0
    unknown = GateCheck("context_recall", Outcome.UNDECIDED, "undecided", value=-0.074)
    text = gate_check_text(unknown, 0.05)
    assert "—" not in text
    assert text.endswith("cannot be estimated from these deltas")
    known = GateCheck("f", Outcome.UNDECIDED, "undecided", value=-0.06, n_needed=1200)
    assert gate_check_text(known, 0.05).endswith("need ~1,200 cases to show non-inferiority")


def test_a_value_just_under_its_threshold_never_reads_as_the_threshold() -> None:
    """0.7999 with --pass 80 printed "fails in the candidate (80; pass ≥ 80)"."""
    from ragtui.format import pts_apart
    from ragtui.format.diagnosis import new_failure_line

    assert pts_apart(0.7999, 0.8) == "79.99"
    assert pts_apart(0.799999, 0.8) == "79.9999"
    assert pts_apart(0.5, 0.8) == "50" and pts_apart(0.8, 0.8) == "80"
    assert pts_apart(None, 0.8) == "—"
    line = new_failure_line("k1", "faithfulness", [1.0], 0.7999, 0.8)
    assert line.endswith("fails in the candidate (79.99; pass ≥ 80)")
    below = GateCheck("f", Outcome.FAILED, "below_floor", 0.79996, 0.8)
    assert gate_check_text(below, 0.05).endswith("candidate mean 79.996 is below the floor 80.0")


def test_a_floor_held_within_float_rounding_reads_as_rounded() -> None:
    held = GateCheck("f", Outcome.PASSED, "floor_held", 0.8000000000000003, 0.8)
    assert gate_check_text(held, 0.05).endswith("mean 80.0 ≥ floor 80.0")
    from ragtui.format import pts_apart

    assert pts_apart(0.8000000000000003, 0.8) == "80"


def test_a_name_cut_in_the_middle_fits_its_cells_whatever_its_script() -> None:
    """Widths were counted in characters: an id of CJK characters, two cells each, took
    twice its room and pushed the case table's figures off an 80-column pane."""
    import pyarrow as pa
    from rich.cells import cell_len  # the terminal's count, independent of ragtui's

    from ragtui.format import middle_cut
    from ragtui.tui.widgets.case_table import display_table

    for name in ("案例" * 40 + "-009", "case-" * 20 + "009", "é́" * 30 + "end"):
        cut = middle_cut(name, 20)
        assert cell_len(cut) <= 20 and "…" in cut, cut
        assert cut.endswith(name[-3:])  # the distinct end stays
    # no combining mark left without its letter, on top of the "…"
    assert middle_cut("a\u0301bcdefg\u0301h", 3) == "a\u0301…h"
    ids = ["案例" * 15 + f"{i:03d}" for i in range(3)]
    rows = pa.table(
        {
            "case_id": ids,
            "metric": ["m"] * 3,
            "a": [0.5] * 3,
            "b": [0.4] * 3,
            "delta": [-0.1] * 3,
            "question": ["q" * 100] * 3,
        }
    )
    table = display_table(rows, pane_width=80)
    used = sum(
        max(cell_len(str(v)) for v in [n, *table[n].to_pylist()]) + 2 for n in table.column_names
    )
    assert used <= 80 and len(set(table["case"].to_pylist())) == 3


def test_a_rescan_that_found_a_file_still_being_written_says_so() -> None:
    """`r` right after a tool wrote its CSV said "nothing changed"; the run came a second
    later, unannounced."""
    from ragtui.format import rescan_text

    assert rescan_text(0, 0, 0) == "nothing changed"
    assert rescan_text(0, 0, 0, 1) == "1 result file still being written"
    assert rescan_text(2, 0, 1, 2) == (
        "2 runs new or changed · 1 file skipped · 2 result files still being written"
    )


def test_an_id_copied_as_markdown_code_reads_as_it_is_in_a_viewer() -> None:
    """`y` on Runs, Cases and Compare many writes ids as code spans: a backslash escape is
    literal there (`run_a` showed `run\\_a`), and a backtick in the id ended the span."""
    from markdown_it import MarkdownIt

    from ragtui.tui.widgets.case_grid import RAW_ID, case_row_markdown

    viewer = MarkdownIt("commonmark").enable("table")
    for case_id in ("refund_01", "a`b|c*d*", "``x", "y`"):
        row = {RAW_ID: case_id, "question": "q", "answer": "a", "f": 50.0}
        html = viewer.render(case_row_markdown(row, ["f"], "base_run"))
        shown = case_id.replace("<", "&lt;").replace(">", "&gt;")
        assert html.startswith(f"<h2>case <code>{shown}</code> of base_run</h2>"), html
    # in a table cell (Compare many's candidate column) too, the row keeping its cells
    from ragtui.format import md_code

    html = viewer.render(f"| id | n |\n|---|---|\n| {md_code('x|y_`z', in_table=True)} | 1 |\n")
    assert "<td><code>x|y_`z</code></td>\n<td>1</td>" in html
