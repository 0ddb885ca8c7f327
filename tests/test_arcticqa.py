"""`twinbench import arcticqa` + `twinbench report` reproduce the ArcticAbstain v1 tables.

The release (CC BY 4.0) is vendored in tests/data/arcticqa-v1 with its LICENSE and SOURCE.md.
Exact figures must match to the printed precision; bootstrap intervals within +/-0.3 pp; the
per-model p-values within Monte-Carlo error (our 20,000 draws and theirs are independent).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from twinbench.cli import app

RELEASE = Path(__file__).parent / "data" / "arcticqa-v1"


def _csv(name: str) -> dict[str, dict[str, str]]:
    with (RELEASE / "results" / name).open(encoding="utf-8") as handle:
        return {row["model_id"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("arctic")
    runner = CliRunner()
    imported = runner.invoke(app, ["import", "arcticqa", str(RELEASE), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert (out / "report.md").is_file()
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_outcome_counts_and_metrics_match_the_release(report: dict[str, Any]) -> None:
    counts, metrics = _csv("outcome-counts.csv"), _csv("metrics.csv")
    systems = report["paired"]["systems"]
    assert set(systems) == set(metrics)
    for model, block in systems.items():
        assert block["outcome_counts"] == {f"N{i}": int(counts[model][f"N{i}"]) for i in range(6)}
        published = metrics[model]
        for ours, theirs in [
            ("acc", "acc"),
            ("abstention_rate", "abstention_rate"),
            ("f1_abs", "f1_abs"),
            ("r_acc", "r_acc"),
        ]:
            assert round(block["pooled"][ours], 3) == round(float(published[f"{theirs}_pooled"]), 3)
            median = block["trials"]["median"][ours]
            assert round(median, 3) == round(float(published[f"{theirs}_trial_median"]), 3)


def test_condition_rates_shifts_and_intervals(report: dict[str, Any]) -> None:
    shifts = _csv("condition-shifts.csv")
    for model, block in report["paired"]["systems"].items():
        c, published = block["conditions"], shifts[model]
        assert (
            f"{100 * c['present_abstention']['estimate']:.1f}"
            == f"{100 * float(published['present_abstention']):.1f}"
        )
        assert (
            f"{100 * c['absent_abstention']['estimate']:.1f}"
            == f"{100 * float(published['absent_abstention']):.1f}"
        )
        assert f"{100 * c['shift']['estimate']:.2f}" == f"{100 * float(published['shift']):.2f}"
        for ours, theirs in [("low", "shift_ci_low"), ("high", "shift_ci_high")]:
            assert abs(c["shift"][ours] - float(published[theirs])) <= 0.003, (model, ours)
        assert c["shift"]["resamples"] == 10_000 and c["shift"]["seed"] == 7
        assert c["present_valid_responses"] == int(published["present_valid_responses"])


def test_p_values_within_monte_carlo_error(report: dict[str, Any]) -> None:
    shifts = _csv("condition-shifts.csv")
    for model, block in report["paired"]["systems"].items():
        ours, theirs = block["shift_test"]["p_value"], float(shifts[model]["permutation_p"])
        # two independent 20,000-draw estimates: 3 standard errors of their difference
        tolerance = 3 * math.sqrt(2 * theirs * (1 - theirs) / 20_000) + 2 / 20_001
        assert abs(ours - theirs) <= tolerance, (model, ours, theirs)
        assert block["shift_test"]["draws"] == 20_000


def test_pooled_sign_flip_line(report: dict[str, Any]) -> None:
    pooled = report["paired"]["pooled_shift_test"]
    assert f"{100 * pooled['mean']:+.2f}" == "+5.05"
    assert (pooled["positive"], pooled["negative"], pooled["zero"]) == (91, 65, 38)
    assert pooled["p_value"] == pytest.approx(5.0e-05, abs=1e-5)
    assert f"{100 * report['paired']['mean_of_system_shifts']:+.2f}" == "+5.06"
