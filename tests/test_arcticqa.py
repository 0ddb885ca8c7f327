"""`twinbench import arcticqa` + `twinbench report` reproduce the ArcticAbstain v1 tables.

The release (CC BY 4.0, with its LICENSE and SOURCE.md) is third-party data and is not
committed here: it is read from the shared data folder (`../shared/data/arcticqa-v1`, or
$TWINBENCH_SHARED_DATA/arcticqa-v1), and these tests skip when it is absent (fail when
TWINBENCH_REQUIRE_SHARED_DATA=1).
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

from conftest import shared_data
from twinbench.cli import app
from twinbench.importers.arcticqa import import_items
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion
from twinbench.validate import validate_files


@pytest.fixture(scope="module")
def release() -> Path:
    return shared_data("arcticqa-v1")


def _csv(release: Path, name: str) -> dict[str, dict[str, str]]:
    with (release / "results" / name).open(encoding="utf-8") as handle:
        return {row["model_id"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def imported(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("arctic")
    result = CliRunner().invoke(app, ["import", "arcticqa", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def report(imported: Path) -> dict[str, Any]:
    out = imported
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert (out / "report.md").is_file()
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_imported_benchmark_and_runs_are_valid(imported: Path) -> None:
    items = imported / "benchmark" / "items.jsonl"
    assert validate_files(items) == []
    runs = sorted((imported / "runs").iterdir())
    assert len(runs) == 8
    for run in runs:
        assert validate_files(items, run / "responses.jsonl") == [], run.name


def test_language_comes_from_the_script_share_not_the_release_tag(release: Path) -> None:
    items = {item.id: item for item in import_items(release)}
    assert len(items) == 2 * 194
    # English with one Cyrillic "О" in "δ 18 О": the release tags it `mixed`
    mixed = items["aqa-597db15f0e10886f1aa2:absent"]
    assert mixed.provenance["language_script"] == "mixed"
    assert mixed.language == "en" and items["aqa-597db15f0e10886f1aa2:present"].language == "en"
    # the 11 `cyrillic` and the 3 other `mixed` questions are mostly Cyrillic
    russian = sorted({i.pair_id for i in items.values() if i.language == "ru"})
    assert len(russian) == 14
    assert "aqa-fb55a8cc981e5256093a" in russian and "aqa-345e80fe334525391a4c" in russian


def test_no_two_options_collide_after_normalisation(release: Path) -> None:
    for item in import_items(release):
        assert isinstance(item.question, ChoiceQuestion)
        normalised = [normalize_option(o) for o in item.question.options]
        assert len(set(normalised)) == len(normalised) == 4, item.id


def test_outcome_counts_and_metrics_match_the_release(
    release: Path, report: dict[str, Any]
) -> None:
    counts, metrics = _csv(release, "outcome-counts.csv"), _csv(release, "metrics.csv")
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


def test_condition_rates_shifts_and_intervals(release: Path, report: dict[str, Any]) -> None:
    shifts = _csv(release, "condition-shifts.csv")
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


def test_p_values_within_monte_carlo_error(release: Path, report: dict[str, Any]) -> None:
    shifts = _csv(release, "condition-shifts.csv")
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
