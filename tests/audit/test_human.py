"""The human audit: hand-worked statistics and a 3-annotator, two-pass round trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import read_rows, write_rows
from twinbench.audit.human import fleiss_kappa_yesno, reweighted_error, threshold_analysis
from twinbench.cli import app


def test_fleiss_kappa_by_hand() -> None:
    # 4 items x 3 raters. Item agreement P_i = (sum n_ij^2 - 3) / 6: 1, 1, 1/3, 1/3 -> mean 2/3.
    # p(yes) = 6/12 = 0.5 -> chance agreement 0.5. kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    votes = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 0], [1, 0, 0]])
    assert fleiss_kappa_yesno(votes) == pytest.approx(1 / 3)


def test_fleiss_kappa_is_undefined_when_every_vote_agrees() -> None:
    # chance agreement is 1, so kappa = 0/0: reported as None (null in JSON), not NaN
    assert fleiss_kappa_yesno(np.ones((5, 3), dtype=int)) is None


def test_reweighted_error_rate_by_hand() -> None:
    # stratum A: share 0.9, 1 wrong of 10; stratum B (over-drawn): share 0.1, 5 wrong of 10.
    # raw rate 6/20 = 0.30, reweighted 0.9 * 0.1 + 0.1 * 0.5 = 0.14
    wrong = np.array([True] + [False] * 9 + [True] * 5 + [False] * 5)
    strata = np.array(["A"] * 10 + ["B"] * 10)
    result = reweighted_error(wrong, strata, {"A": 0.9, "B": 0.1}, 2_000, 0)
    assert result["estimate"] == pytest.approx(0.14)
    assert result["low"] < 0.14 < result["high"]


def test_threshold_analysis_by_hand() -> None:
    # items scored 4 and 5 were audited wrong, 6, 8 and 9 right: keeping >= 6 makes no error
    values = np.array([4.0, 5, 6, 8, 9])
    wrong = np.array([True, True, False, False, False])
    result = threshold_analysis(values, wrong)
    assert (result["best_threshold"], result["errors_at_best"]) == (6.0, 0)


def test_three_annotators_two_passes_end_to_end(tmp_path: Path, runner: CliRunner) -> None:
    bench = tmp_path / "bench"
    assert runner.invoke(app, ["build", "--out", str(bench)]).exit_code == 0
    sample_file = tmp_path / "sample.jsonl"
    result = runner.invoke(
        app,
        [
            "audit",
            "sample",
            str(bench / "items.jsonl"),
            "--strata",
            "family,generator.name",
            "--n",
            "60",
            "--seed",
            "3",
            "--out",
            str(sample_file),
        ],
    )
    assert result.exit_code == 0, result.output
    drawn = read_rows(sample_file)
    # one stratum per (family, generator) of the default build: six generators
    assert len(drawn) >= 60 and len({json.dumps(d["stratum"]) for d in drawn}) == 6
    shares = {json.dumps(d["stratum"]): d["stratum_share"] for d in drawn}
    assert sum(shares.values()) == pytest.approx(1.0)
    package = tmp_path / "package"
    result = runner.invoke(
        app,
        [
            "audit",
            "package",
            str(sample_file),
            "--annotators",
            "a,b,c",
            "--out",
            str(package),
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    blind = json.loads((package / "a_pass1.json").read_text())
    # pass one shows what a model sees, nothing about construction
    assert set(blind["items"][0]) == {"blind_id", "item", "twin"}
    assert set(blind["items"][0]["item"]) == {"state", "question"}
    orders = {
        a: [r["blind_id"] for r in json.loads((package / f"{a}_pass1.json").read_text())["items"]]
        for a in "abc"
    }
    assert orders["a"] != orders["b"] and sorted(orders["a"]) == sorted(orders["b"])
    # fill the pass-two verdicts: everyone agrees except on the first 3 blind ids, where a
    # and b say the item is answerable after all (majority: audited wrong)
    key = json.loads((package / "KEY.json").read_text())
    wrong_ids = sorted(key["items"])[:3]
    for annotator in "abc":
        for number in (1, 2):
            path = package / "verdicts" / f"{annotator}_pass{number}.jsonl"
            rows = read_rows(path)
            for row in rows:
                flagged = row["blind_id"] in wrong_ids and annotator in "ab"
                row["answers"] = {
                    "item_unanswerable": "no" if flagged else "yes",
                    "twin_answerable": "yes",
                    "why": "checked",
                }
            write_rows(path, rows)
    errata = tmp_path / "errata.json"
    result = runner.invoke(app, ["audit", "score", str(package), "--errata", str(errata)])
    assert result.exit_code == 0, result.output
    scored = json.loads((package / "audit-score.json").read_text())
    assert scored["audited_wrong"] == 3
    listed = json.loads(errata.read_text())
    assert listed["version"] == 1 and len(listed["entries"]) == 3
    rebuilt = tmp_path / "rebuilt"
    result = runner.invoke(app, ["build", "--out", str(rebuilt), "--errata", str(errata)])
    assert result.exit_code == 0, result.output
    ids = {r["id"] for r in read_rows(rebuilt / "items.jsonl")}
    assert not {e["item_id"] for e in listed["entries"]} & ids
    assert json.loads((rebuilt / "manifest.json").read_text())["errata"]["dropped_pairs"] == 3
