"""Parity with ranx and ir_measures (trec_eval) on seeded random graded qrels and runs.

The random runs have tied scores. twinbench ranks ties by passage id; trec_eval breaks them by
DOCID descending and ranx by its own sort, so the references get the ranking twinbench
resolved, as distinct scores (len − position): the three then rank the same lists, and must
agree to 1e-9 on every query that has a relevant passage (the ones twinbench averages).
"""

from __future__ import annotations

import warnings
from typing import Any

import ir_measures
import numpy as np
import pytest
from ir_measures import RR, R, nDCG
from ranx import Qrels, Run, evaluate

from twinbench.rag.metrics import QueryStatus, parse_metrics
from twinbench.rag.metrics import evaluate as twinbench_evaluate
from twinbench.rag.trec import ranked_ids

CUTOFFS = (1, 3, 5, 10, 20)
GAINS = {grade: 2**grade - 1 for grade in range(4)}  # ir_measures' spelling of 2^g − 1
TOLERANCE = 1e-9


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, float]]]]:
    """30 queries over 30 passages: graded judgments (0-3), unjudged hits, tied scores; the
    first two queries have no relevant passage."""
    rng = np.random.default_rng(seed)
    passages = [f"p{i:02d}" for i in range(30)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(30):
        qid = f"q{q:02d}"
        judged = rng.choice(30, size=int(rng.integers(1, 16)), replace=False)
        grades = rng.choice([0, 0, 1, 2, 3], size=judged.size) * (q >= 2)  # q00, q01: all 0
        qrels[qid] = {passages[i]: int(g) for i, g in zip(judged, grades, strict=True)}
        ranked = rng.choice(30, size=int(rng.integers(1, 26)), replace=False)
        scores = rng.integers(0, 5, size=ranked.size).astype(float)  # few values: many ties
        run[qid] = [(passages[i], float(s)) for i, s in zip(ranked, scores, strict=True)]
    return qrels, run


def reference_inputs(
    seed: int,
) -> tuple[Any, dict[str, dict[str, int]], dict[str, dict[str, float]], list[str]]:
    qrels, run = random_case(seed)
    labels = ",".join(f"{name}@{k}" for k in CUTOFFS for name in ("recall", "mrr", "ndcg"))
    ours = twinbench_evaluate(qrels, run, parse_metrics(labels))
    eligible = ours.queries()
    assert eligible and ours.queries(QueryStatus.NO_RELEVANT)  # both kinds occur in each seed
    assert eligible == sorted(
        q for q, grades in qrels.items() if any(g > 0 for g in grades.values())
    )
    distinct = {}
    for qid in eligible:
        ids = ranked_ids(run[qid])
        distinct[qid] = {pid: float(len(ids) - i) for i, pid in enumerate(ids)}
    return ours, {q: qrels[q] for q in eligible}, distinct, eligible


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_parity_with_ranx(seed: int) -> None:
    ours, qrels, run, eligible = reference_inputs(seed)
    names = [f"{name}@{k}" for k in CUTOFFS for name in ("recall", "mrr", "ndcg_burges")]
    reference = Run.from_dict(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's type-safety notes on ranx's kernels
        evaluate(Qrels.from_dict(qrels), reference, names, return_mean=False)
    for name in names:
        label = name.replace("ndcg_burges", "ndcg")
        for qid in eligible:
            expected = float(reference.scores[name][qid])
            assert ours.per_query[qid].scores[label] == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_parity_with_ir_measures_trec_eval(seed: int) -> None:
    ours, qrels, run, eligible = reference_inputs(seed)
    trec_eval = ir_measures.pytrec_eval
    for k in CUTOFFS:
        measures = {nDCG(gains=GAINS) @ k: f"ndcg@{k}", R @ k: f"recall@{k}"}
        got = {
            (m.query_id, measures[m.measure]): m.value
            for m in trec_eval.iter_calc(list(measures), qrels, run)
        }
        # trec_eval's recip_rank has no cutoff: RR@k is RR of the run cut at k
        top = {q: {p: s for p, s in hits.items() if s > len(hits) - k} for q, hits in run.items()}
        got |= {(m.query_id, f"mrr@{k}"): m.value for m in trec_eval.iter_calc([RR], qrels, top)}
        assert len(got) == len(eligible) * 3
        for (qid, label), expected in got.items():
            assert ours.per_query[qid].scores[label] == pytest.approx(expected, abs=TOLERANCE)


def test_judged_at_k_matches_ir_measures() -> None:
    qrels, run = random_case(11)
    ours = twinbench_evaluate(qrels, run, parse_metrics("judged@5,judged@20"))
    distinct = {
        q: {pid: float(len(run[q]) - i) for i, pid in enumerate(ranked_ids(run[q]))} for q in run
    }
    judged = [ir_measures.Judged @ 5, ir_measures.Judged @ 20]
    for m in ir_measures.judged.iter_calc(judged, qrels, distinct):
        label = f"judged@{m.measure['cutoff']}"
        if ours.per_query[m.query_id].status is QueryStatus.EVALUATED:
            assert ours.per_query[m.query_id].scores[label] == pytest.approx(m.value, abs=TOLERANCE)
