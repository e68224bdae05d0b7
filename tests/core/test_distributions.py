"""The distribution functions of core/distributions.py against scipy.stats, which the rest of
ragtui no longer imports: the same figures over the ranges the statistics use."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragtui.core import distributions as dist

SAMPLE_RUNS = Path(__file__).resolve().parents[2] / "sample_runs"

DFS = (1, 2, 3, 7, 29, 30, 47, 199, 10_000)
QS = (0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.05, 0.001)


@pytest.mark.parametrize("df", DFS)
def test_t_quantiles_and_p_values_are_scipy_stats_own(df: int) -> None:
    for q in QS:
        assert dist.t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-12, abs=1e-12)
    for t in (0.0, 0.3, -1.7, 2.0, 4.5, -12.0):
        assert dist.t_two_sided_p(t, df) == pytest.approx(
            2 * stats.t.sf(abs(t), df), rel=1e-10, abs=1e-300
        )
    for nc in (0.0, 0.8, -2.5, 6.0):
        for x in (-2.0, 0.0, 1.96, 3.0):
            assert dist.noncentral_t_cdf(x, df, nc) == pytest.approx(
                stats.nct.cdf(x, df, nc), rel=1e-7, abs=1e-12
            )


def test_normal_functions_are_scipy_stats_own() -> None:
    for q in QS:
        assert dist.normal_quantile(q) == pytest.approx(stats.norm.ppf(q), rel=1e-14)
    x = np.linspace(-9, 9, 721)
    np.testing.assert_allclose(dist.normal_cdf(x), stats.norm.cdf(x), rtol=1e-14, atol=0)
    np.testing.assert_allclose(dist.normal_pdf(x), stats.norm.pdf(x), rtol=1e-13, atol=0)


def test_a_verdict_is_reached_without_importing_scipy_stats(tmp_path: Path) -> None:
    """scipy.stats takes 0.8 s to import: `ragtui compare` needs none of it."""
    folder = tmp_path / "runs"
    shutil.copytree(SAMPLE_RUNS, folder, ignore=shutil.ignore_patterns(".ragtui.duckdb*"))
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from ragtui.cli import cli\n"
        f"args = ['compare', 'baseline-2026-11-02', 'strict-v2-2026-11-16', '-p', {str(folder)!r}]\n"
        "result = CliRunner().invoke(cli, args)\n"
        "print(result.exit_code, 'faithfulness' in result.output, 'scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True", "False"], out.stdout
