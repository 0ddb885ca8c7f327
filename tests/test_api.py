"""The public Python API drives the whole job, and agrees with the CLI on the same files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

import twinbench
from twinbench import Request, Response, SystemCard
from twinbench.cli import app
from twinbench.records import ChoiceQuestion, GradedRow, NoulQuestion


class Keyword:
    """A user-defined system: answers the first option its state names, else abstains."""

    card = SystemCard(name="keyword", version="1", languages=("en",))

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            question, state = req.question, req.state.lower()
            fields: dict[str, object]
            if isinstance(question, ChoiceQuestion):
                named = [o for o in question.options if o.lower() in state]
                fields = (
                    {"abstain": False, "answer": named[0]}
                    if len(named) == 1
                    else {
                        "abstain": True,
                        "reason": "contradictory_options" if named else "underspecified_state",
                    }
                )
            elif isinstance(question, NoulQuestion):
                fields = {"abstain": False, "answer": 0.8 if " not " not in state else 0.2}
            else:
                fields = {"abstain": False, "answer": next(iter(question.legend.values()))}
            out.append(
                Response(
                    item_id=req.item_id,
                    system=self.card.name,
                    trial=req.trial,
                    permutation=req.permutation,
                    status="ok",
                    **fields,  # type: ignore[arg-type]
                )
            )
        return out


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("job")
    built = twinbench.build(root / "benchmark", per_generator=3)
    # 3 sources per generator; the equal shares and question types keep 2 pairs per family
    assert len(built.public) == 18
    record = twinbench.run(Keyword(), root / "benchmark", root / "runs" / "keyword")
    assert record.status == "finished" and record.responses == 18
    assert twinbench.run("always-abstain", root / "benchmark", root / "runs" / "abstain")
    return root


def test_the_api_metrics_equal_the_cli_metrics(job: Path) -> None:
    metrics = twinbench.grade(job / "benchmark", job / "runs" / "keyword")
    assert isinstance(metrics, twinbench.Metrics)
    assert metrics.counts["responses"] == 18
    cli = CliRunner().invoke(
        app,
        [
            "grade",
            "-i",
            str(job / "benchmark" / "items.jsonl"),
            "-r",
            str(job / "runs" / "keyword" / "responses.jsonl"),
            "--json",
        ],
    )
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout) == metrics.to_json()
    # the always-abstain baseline, by hand: it abstains on all 9 unanswerable items with
    # underspecified_state, so recall is 3/3 there and 0/3 elsewhere; twin accuracy 0
    abstain = twinbench.grade(job / "benchmark", job / "runs" / "abstain")
    assert abstain.family("underspecified_state").recall == 1.0
    assert abstain.family("contradictory_options").recall == 0.0
    assert abstain.overall.twin_accuracy == 0.0


def test_the_api_report_equals_the_cli_report(job: Path) -> None:
    report = twinbench.report(job, write=False)
    assert set(report.systems) == {"keyword", "abstain"}
    cli = CliRunner().invoke(app, ["report", str(job), "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout) == report.to_json()
    assert json.loads((job / "metrics.json").read_text()) == report.to_json()


def test_graded_rows_are_written_and_re_read(job: Path, tmp_path: Path) -> None:
    out = tmp_path / "graded"
    cli = CliRunner().invoke(
        app,
        [
            "grade",
            "-i",
            str(job / "benchmark" / "items.jsonl"),
            "-r",
            str(job / "runs" / "abstain" / "responses.jsonl"),
            "--out",
            str(out),
        ],
    )
    assert cli.exit_code == 0, cli.output
    rows = [
        GradedRow.model_validate_json(line)
        for line in (out / "graded.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 18
    outcomes = {(r.answerable, r.family.value, r.outcome) for r in rows}
    assert (False, "underspecified_state", "correct_abstain") in outcomes
    assert (False, "out_of_language", "wrong_reason") in outcomes
    assert {r.outcome for r in rows if r.answerable} == {"false_abstain"}


def test_evaluate_runs_a_custom_system_beside_the_references(tmp_path: Path) -> None:
    result = twinbench.evaluate(tmp_path / "out", Keyword(), per_family=2)
    assert result.items_sent == 12
    assert set(result.report.systems) == {"keyword", "shortcut", "abstain-by-form"}
    on_disk = json.loads((result.run_folder / "metrics.json").read_text())
    assert on_disk == result.metrics.to_json() == result.report.systems["keyword"].to_json()


def test_report_and_compare_grade_a_router_run_the_same(tmp_path: Path) -> None:
    root = tmp_path / "job"
    twinbench.build(root / "benchmark", per_generator=4, generators=["translation", "redaction"])
    router = "router:en=always-answer:first+es=always-answer:first"
    twinbench.run(router, root / "benchmark", root / "runs" / "router")
    twinbench.run("always-abstain:out_of_language", root / "benchmark", root / "runs" / "ool")
    report = twinbench.report(root, write=False)
    assert report.languages["router"] == ["en", "es"]  # from the router's card, not `en`
    comparison = twinbench.compare([root / "runs" / "router", root / "runs" / "ool"])
    names = {"router": report.systems["router"], "ool": report.systems["ool"]}
    card_name = {"router": _card(root / "runs" / "router"), "ool": _card(root / "runs" / "ool")}
    checked = 0
    # compare reads the clusters of pairs both systems have graded: all of the router's (ool
    # answers every item, the router only en and es), so the router's figures are its report's
    for row in comparison.comparisons:
        for side, value in (("a", row["value_a"]), ("b", row["value_b"])):
            folder = next(k for k, v in card_name.items() if v == row[side])
            if folder != "router":
                continue
            summary = names[folder]
            block = summary.overall if row["family"] == "all" else summary.families[row["family"]]
            assert getattr(block, row["metric"]) == pytest.approx(value)
            checked += 1
    assert checked >= 4
    assert [r["metric"] for r in comparison.comparisons[:2]] == ["ideal_pair_rate", "pair_score"]


def _card(folder: Path) -> str:
    return str(json.loads((folder / "run.json").read_text())["system"]["name"])
