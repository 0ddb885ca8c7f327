"""Stage metrics: candidate Recall@40 beside nDCG@5, before and after the prompt is cut."""

from __future__ import annotations

from math import log2

import pytest

from twinbench.rag.metrics import stage_metrics

QRELS = {"deadlock": {"deadlock-definition": 3, "deadlock-example": 1}, "exam": {"timetable": 0}}
FILLER = [f"filler-{i:02d}" for i in range(45)]
# the pool: the definition at rank 30, the example at rank 42 (outside the top 40)
POOL = [*FILLER[:29], "deadlock-definition", *FILLER[29:40], "deadlock-example"]
# the reranker moves both up: example first, definition third
RERANKED = ["deadlock-example", "filler-00", "deadlock-definition", *FILLER[1:]]
# context assembly keeps two passages: the definition is cut
PROMPT = ["deadlock-example", "filler-00"]


def test_each_stage_scores_recall_at_40_beside_ndcg_at_5_and_lists_what_was_lost() -> None:
    report = stage_metrics(
        QRELS,
        {
            "pool": {"deadlock": POOL},
            "reranked": {"deadlock": RERANKED},
            "prompt": {"deadlock": PROMPT},
        },
    )
    means = {name: ev.means() for name, ev in report.stages.items()}
    idcg5 = 7 + 1 / log2(3)
    # pool: only the definition is in the top 40 -> 1/2; none in the top 5 -> nDCG@5 = 0
    assert means["pool"] == {"recall@40": 0.5, "ndcg@5": 0.0}
    # reranked: both within 40; DCG@5 = 1/log2(2) + 7/log2(4) = 1 + 3.5
    assert means["reranked"]["recall@40"] == 1.0
    assert means["reranked"]["ndcg@5"] == pytest.approx(4.5 / idcg5)
    # prompt: the example alone -> recall 1/2, DCG@5 = 1
    assert means["prompt"]["recall@40"] == 0.5
    assert means["prompt"]["ndcg@5"] == pytest.approx(1 / idcg5)
    assert report.dropped == {"reranked": {}, "prompt": {"deadlock": ["deadlock-definition"]}}
    payload = report.as_dict()
    assert payload["gain"] == "2^g-1"
    assert payload["stages"]["prompt"]["queries"]["evaluated"] == 1
    assert payload["stages"]["prompt"]["queries"]["no_relevant"] == 1  # exam: counted apart


def test_other_metrics_can_be_named() -> None:
    report = stage_metrics(QRELS, {"prompt": {"deadlock": PROMPT}}, metrics="mrr@1")
    assert report.stages["prompt"].means() == {"mrr@1": 1.0}
    assert report.dropped == {}
