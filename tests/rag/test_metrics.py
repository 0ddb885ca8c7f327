"""Retrieval metrics against the seed's worked example and hand-computed values."""

from __future__ import annotations

import json
from math import log2
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.jsonl import InputError
from twinbench.rag.metrics import (
    GAIN,
    QueryStatus,
    evaluate,
    judged_at,
    ndcg_at,
    parse_metrics,
    recall_at,
    reciprocal_rank_at,
    with_judged,
)

# the seed's deadlock question: two relevant passages, the strongest ranked last
GRADES = {"deadlock-definition": 3, "deadlock-example": 1}
RANKING = ["cpu-scheduling", "deadlock-example", "deadlock-definition"]


def test_the_seeds_deadlock_ranking() -> None:
    # Recall@3: both relevant passages are in the top 3 -> 2 / 2 = 1.0
    # RR: the first relevant passage (the example) is at rank 2 -> 1 / 2
    # DCG@3 = (2^0 − 1)/log2(2) + (2^1 − 1)/log2(3) + (2^3 − 1)/log2(4)
    #       = 0 + 1/1.58496 + 7/2 = 0.63093 + 3.5 = 4.13093
    # IDCG@3 (grades sorted 3, 1) = 7/log2(2) + 1/log2(3) = 7 + 0.63093 = 7.63093
    # nDCG@3 = 4.13093 / 7.63093 = 0.54134
    assert recall_at(RANKING, GRADES, 3) == 1.0
    assert reciprocal_rank_at(RANKING, GRADES, 3) == 0.5
    assert ndcg_at(RANKING, GRADES, 3) == pytest.approx((1 / log2(3) + 7 / 2) / (7 + 1 / log2(3)))
    assert round(ndcg_at(RANKING, GRADES, 3), 3) == 0.541


def test_moving_the_definition_first_keeps_recall_and_raises_the_ranking_metrics() -> None:
    moved = ["deadlock-definition", "cpu-scheduling", "deadlock-example"]
    assert recall_at(moved, GRADES, 3) == 1.0
    assert reciprocal_rank_at(moved, GRADES, 3) == 1.0
    # DCG@3 = 7/1 + 0 + 1/log2(4) = 7.5; IDCG@3 = 7 + 1/log2(3)
    assert ndcg_at(moved, GRADES, 3) == pytest.approx(7.5 / (7 + 1 / log2(3)))


def test_cutoffs_and_the_ideal_from_all_judged_passages() -> None:
    # the seed: 2 relevant, 1 of them in the first 5 -> Recall@5 = 0.5
    assert recall_at(["a", "x", "y", "z", "w", "b"], {"a": 1, "b": 1}, 5) == 0.5
    # no relevant passage within the cutoff -> RR@2 = 0 (one at rank 3 does not count)
    assert reciprocal_rank_at(["x", "y", "a"], {"a": 1}, 2) == 0.0
    # IDCG@2 takes the two best judged grades (3, 3), even though one was never retrieved:
    # DCG@2 = 7/1 + 1/log2(3); IDCG@2 = 7 + 7/log2(3)
    grades = {"a": 3, "b": 1, "c": 3, "n": 0}
    assert ndcg_at(["a", "b"], grades, 2) == pytest.approx((7 + 1 / log2(3)) / (7 + 7 / log2(3)))


def test_unjudged_passages_score_zero_and_are_reported() -> None:
    grades = {"rel": 1, "irrelevant": 0}
    ranking = ["unjudged-1", "rel", "unjudged-2", "irrelevant"]
    # judged in the top 3: rel -> 1/3; in the top 10 of 4 ranked: rel, irrelevant -> 2/4
    assert judged_at(ranking, grades, 3) == pytest.approx(1 / 3)
    assert judged_at(ranking, grades, 10) == 0.5
    assert judged_at([], grades, 10) is None
    assert ndcg_at(ranking, grades, 3) == pytest.approx((1 / log2(3)) / 1)


QRELS = {
    "deadlock": {**GRADES, "cpu-scheduling": 0},
    "exam-date": {"timetable": 0},  # judged, nothing relevant: an unanswerable case
    "missing": {"m1": 1},  # judged, but the run has no ranking for it
}
RUN = {
    "deadlock": RANKING,
    "exam-date": ["timetable", "other"],
    "stray": ["p"],  # ranked, never judged
}


def test_no_relevant_queries_are_counted_apart_and_absent_queries_rank_nothing() -> None:
    result = evaluate(QRELS, RUN, with_judged(parse_metrics("recall@3,mrr@3,ndcg@3")))
    rows = result.per_query
    assert rows["exam-date"].status is QueryStatus.NO_RELEVANT
    assert rows["exam-date"].scores["recall@3"] is None
    assert rows["exam-date"].scores["judged@3"] == 0.5  # a diagnostic, still reported
    assert rows["stray"].status is QueryStatus.NOT_IN_QRELS
    assert not rows["missing"].in_run and rows["missing"].scores["recall@3"] == 0.0
    # means over the 2 evaluated queries (deadlock, missing): missing scores 0 on each
    means = result.means()
    assert means["recall@3"] == 0.5
    assert means["mrr@3"] == 0.25
    assert means["ndcg@3"] == pytest.approx(ndcg_at(RANKING, GRADES, 3) / 2)
    assert means["judged@3"] == 1.0  # missing ranks nothing: judged@3 undefined there
    assert result.counts() == {
        "evaluated": 2,
        "no_relevant": 1,
        "empty_ranking": 1,
        "not_in_qrels": 1,
    }


def test_scored_rankings_are_ordered_by_score_then_passage_id() -> None:
    # a tie at 2.0: deadlock-definition sorts before deadlock-example -> first relevant rank 1
    scored = [("deadlock-example", 2.0), ("cpu-scheduling", 1.0), ("deadlock-definition", 2.0)]
    result = evaluate({"q": GRADES}, {"q": scored}, parse_metrics("mrr@3,ndcg@1"))
    assert result.per_query["q"].scores == {"mrr@3": 1.0, "ndcg@1": 1.0}


def test_a_repeated_passage_or_a_negative_grade_is_refused() -> None:
    with pytest.raises(InputError, match="'deadlock-example' ranked twice"):
        evaluate({"q": GRADES}, {"q": ["deadlock-example", "x", "deadlock-example"]}, [])
    with pytest.raises(InputError, match="negative grade"):
        evaluate({"q": {"a": -1}}, {"q": ["a"]}, parse_metrics("ndcg@3"))


def test_metric_names() -> None:
    assert [m.label for m in parse_metrics("nDCG@10, recall@5,recall@5")] == [
        "ndcg@10",
        "recall@5",
    ]
    for bad, problem in [
        ("precision@5", "unknown metric 'precision@5'"),
        ("ndcg", "needs a cutoff"),
        ("mrr@0", "needs a cutoff"),
        ("recall@x", "needs a cutoff"),
        (" , ", "expected a comma-separated list"),
    ]:
        with pytest.raises(InputError, match=problem):
            parse_metrics(bad)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {p} {g}\n" for q, grades in QRELS.items() for p, g in grades.items())
    )
    run = tmp_path / "run.txt"
    lines = [
        f"{q} Q0 {p} {rank} {10 - rank} bm25\n"
        for q, ranking in RUN.items()
        for rank, p in enumerate(ranking, 1)
    ]
    run.write_text("".join(lines))
    return qrels, run


def test_cli_json_is_the_documented_document(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    args = ["rag", "metrics", str(qrels), str(run), "--metrics", "recall@3,mrr@3,ndcg@3"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)  # stdout holds the JSON and nothing else
    assert set(payload) == {"metrics", "queries", "per_query", "gain"}
    assert payload["gain"] == GAIN == "2^g-1"
    assert payload["queries"]["evaluated"] == 2 and payload["queries"]["no_relevant"] == 1
    assert payload["metrics"]["recall@3"] == 0.5 and payload["metrics"]["mrr@3"] == 0.25
    deadlock = payload["per_query"]["deadlock"]
    assert (deadlock["recall@3"], deadlock["mrr@3"]) == (1.0, 0.5)
    assert round(deadlock["ndcg@3"], 3) == 0.541
    assert payload["per_query"]["missing"]["in_run"] is False


def test_cli_table_states_the_gain_and_the_query_accounting(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    result = CliRunner().invoke(app, ["rag", "metrics", str(qrels), str(run), "--per-query"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "gain 2^g − 1" in text
    assert (
        "1 of them are not in the run: evaluated with an empty ranking (they score 0): missing"
        in text
    )
    assert "no relevant passage are counted apart" in text
    assert "have no judgments: not scored: stray" in text


def test_cli_refuses_a_repeated_passage_with_its_line(tmp_path: Path) -> None:
    qrels, _ = _files(tmp_path)
    run = tmp_path / "dup.txt"
    run.write_text("q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n")
    result = CliRunner().invoke(app, ["rag", "metrics", str(qrels), str(run)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {run}:3: 'a' ranked twice")


def test_cli_refuses_an_unknown_metric(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    result = CliRunner().invoke(app, ["rag", "metrics", str(qrels), str(run), "--metrics", "map"])
    assert result.exit_code == 2
    assert "unknown metric 'map'" in result.stderr
