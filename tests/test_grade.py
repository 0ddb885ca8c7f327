"""The grading rule end to end: baselines, an oracle, and a hand-graded mixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLES, read_rows, write_rows
from twinbench.cli import app
from twinbench.grader import expected_table, grade_file
from twinbench.metrics.cost import load_cost_table
from twinbench.metrics.summary import summarize
from twinbench.records import FAMILIES, Item


def _summary(responses: Path, languages: tuple[str, ...] = ("en",)) -> dict[str, Any]:
    items = [Item.model_validate(row) for row in read_rows(EXAMPLES / "items.jsonl")]
    table = expected_table(items, languages)
    return summarize(grade_file(responses, table), load_cost_table(), table.languages)


def _respond(tmp_path: Path, decide: Any) -> Path:
    rows = []
    for item in read_rows(EXAMPLES / "items.jsonl"):
        rows.append({"item_id": item["id"], "system": "test", "status": "ok", **decide(item)})
    return write_rows(tmp_path / "responses.jsonl", rows)


def test_always_abstain_has_recall_one_and_twin_accuracy_zero(tmp_path: Path) -> None:
    path = _respond(tmp_path, lambda item: {"abstain": True, "reason": item["family"]})
    summary = _summary(path)
    for family in FAMILIES:
        assert summary["families"][family]["recall"] == 1.0
        assert summary["families"][family]["twin_accuracy"] == 0.0
    assert summary["overall"]["coverage"] == 0.0
    assert summary["overall"]["selective_risk"] is None


def test_oracle_scores_one_everywhere(tmp_path: Path) -> None:
    def oracle(item: dict[str, Any]) -> dict[str, Any]:
        if item["answerable"]:
            answer = item["expected"]["answer"]
            return {"abstain": False, "answer": float(answer) if answer is True else answer}
        return {"abstain": True, "reason": item["family"]}

    summary = _summary(_respond(tmp_path, oracle))
    for family in FAMILIES:
        block = summary["families"][family]
        assert (block["recall"], block["precision"], block["twin_accuracy"]) == (1.0, 1.0, 1.0)
    assert summary["overall"]["ideal_pairs"] == {"rate": 1.0, "ideal": 6, "pairs": 6}
    assert summary["overall"]["selective_risk"] == 0.0


def test_hand_graded_mixture() -> None:
    """examples/responses.jsonl graded by hand (see the comments per figure).

    us-001 right abstention; tw-001 'Billing' right (normalised); us-002 answered (false
    commit); tw-002 right; co-003 abstains with the wrong code; tw-003 right; co-004 right
    abstention; tw-004 abstains (false abstention); ol-005 answers with the right label in an
    undeclared language (wrong); tw-005 right; ol-006 invalid (kept out, counted); tw-006
    P(yes)=0.3 for a true answer (wrong).
    """
    s = _summary(EXAMPLES / "responses.jsonl")
    fam = s["families"]
    assert s["counts"]["invalid"] == 1 and s["counts"]["valid"] == 11
    assert fam["underspecified_state"]["recall"] == 1 / 2  # us-001 of {us-001, us-002}
    assert fam["underspecified_state"]["precision"] == 1 / 2  # us-001 of {us-001, co-003}
    assert fam["contradictory_options"]["recall"] == 1 / 2  # co-004 of {co-003, co-004}
    assert fam["contradictory_options"]["precision"] == 1 / 2  # co-004 of {co-004, tw-004}
    assert fam["contradictory_options"]["wrong_reason"] == 1  # co-003
    assert fam["out_of_language"]["unanswerable"] == 1  # ol-006 is invalid, not counted
    assert fam["out_of_language"]["recall"] == 0.0  # ol-005's right label still scores wrong
    assert fam["out_of_language"]["twin_accuracy"] == 1 / 2  # tw-005 right, tw-006 wrong
    overall = s["overall"]
    assert overall["abstention_precision"] == 3 / 4  # us-001, co-003, co-004 of 4 abstentions
    assert overall["abstention_recall"] == 3 / 5
    assert overall["twin_accuracy"] == 4 / 6
    assert overall["accuracy"] == 6 / 11
    assert overall["accuracy_failures_as_wrong"] == 6 / 12
    assert overall["coverage"] == 7 / 11
    assert overall["selective_risk"] == 3 / 7  # us-002, ol-005, tw-006 of 7 answered
    # +1 +1 -1 +1 | 0 +1 +1 0 | -2 +1 -2  over 11 valid responses
    assert overall["cost_weighted_score"] == pytest.approx(1 / 11)
    assert overall["ideal_pairs"] == {"rate": 0.2, "ideal": 1, "pairs": 5}
    conf = s["confidence"]
    # bins: [.5,.6) .5 | [.6,.7) 1.2 | [.7,.8) .1 | [.8,.9) .35 | [.9,1] .75  -> 2.9 / 11
    assert conf["ece"] == pytest.approx(2.9 / 11)
    assert conf["brier"] == pytest.approx(2.625 / 11)


def test_declared_language_makes_out_of_language_items_answerable() -> None:
    s = _summary(EXAMPLES / "responses.jsonl", ("en", "es", "ru"))
    block = s["families"]["out_of_language"]
    assert block["unanswerable"] == 0 and block["recall"] is None
    assert block["twin_accuracy"] == 2 / 3  # ol-005 now right; tw-005 right; tw-006 wrong


def test_grade_cli_writes_files_and_json(tmp_path: Path, runner: CliRunner) -> None:
    args = ["grade", "-i", str(EXAMPLES / "items.jsonl"), "-r", str(EXAMPLES / "responses.jsonl")]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "contradictory_options" in result.stdout
    on_disk = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert on_disk["overall"]["coverage"] == 7 / 11
    assert (
        "| underspecified_state | 2 | 2 | 0.500 |" in (tmp_path / "out" / "metrics.md").read_text()
    )
    as_json = runner.invoke(app, [*args, "--json"])
    assert json.loads(as_json.stdout) == on_disk


def test_grade_rejects_response_for_unknown_item(tmp_path: Path, runner: CliRunner) -> None:
    path = write_rows(
        tmp_path / "r.jsonl", [{"item_id": "zz", "system": "s", "status": "ok", "abstain": True}]
    )
    result = runner.invoke(app, ["grade", "-i", str(EXAMPLES / "items.jsonl"), "-r", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}:1: response for unknown item 'zz'"
