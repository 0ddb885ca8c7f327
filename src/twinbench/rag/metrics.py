"""Retrieval metrics per query, and their means over the queries that have evidence.

Relevant means grade > 0. For a ranking r (best first) and cutoff k:

- Recall@k = |relevant ∩ r[:k]| / |relevant|
- RR@k = 1 / rank of the first relevant passage in r[:k], else 0; MRR@k is its mean
- nDCG@k = DCG@k / IDCG@k, DCG@k = Σ_{i<=k} (2^g_i − 1) / log2(i + 1), with g = 0 for an
  unjudged passage, and IDCG@k the DCG@k of all judged passages sorted by grade (the seed's
  gain convention, `GAIN`, stated in every output)
- judged@k = judged passages in r[:k] / min(k, |r|) (undefined for an empty ranking)

A query without a relevant passage is not averaged in but counted apart (`no_relevant`): there
"nothing should be retrieved" is not "the retriever missed". A query of the qrels that the run
lacks is evaluated with an empty ranking (it scores 0); a query of the run that the qrels lack
is not scored (`not_in_qrels`). A ranking that repeats a passage id is an input error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from math import log2
from typing import Any

import numpy as np
import numpy.typing as npt

from twinbench.jsonl import InputError
from twinbench.rag.trec import check_ranking, ranked_ids
from twinbench.stats.bootstrap import Interval, ratio_interval
from twinbench.stats.signflip import TIE, SignFlipResult, sign_flip_test

GAIN = "2^g-1"
GAIN_NOTE = "nDCG gain 2^g − 1, IDCG from all judged passages sorted by grade, same cutoff"
DEFAULT_METRICS = "recall@5,mrr@10,ndcg@10"
Grades = Mapping[str, int]
#: per query, a ranking: passage ids best first, or (passage id, score) pairs to be ranked
Rankings = Mapping[str, Sequence[str]] | Mapping[str, Sequence[tuple[str, float]]]


def recall_at(ranking: Sequence[str], grades: Grades, k: int) -> float:
    """|relevant ∩ top k| / |relevant| (the query must have a relevant passage)."""
    relevant = {pid for pid, grade in grades.items() if grade > 0}
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def reciprocal_rank_at(ranking: Sequence[str], grades: Grades, k: int) -> float:
    """1 / rank of the first relevant passage within the top k, else 0."""
    return next(
        (1 / rank for rank, pid in enumerate(ranking[:k], 1) if grades.get(pid, 0) > 0), 0.0
    )


def dcg(grades: Sequence[int]) -> float:
    """Σ (2^g − 1) / log2(rank + 1) over grades in rank order."""
    return sum((2.0**grade - 1) / log2(rank + 1) for rank, grade in enumerate(grades, 1))


def ndcg_at(ranking: Sequence[str], grades: Grades, k: int) -> float:
    """DCG@k / IDCG@k, IDCG from all judged passages sorted by grade (a relevant one must exist)."""
    actual = dcg([grades.get(pid, 0) for pid in ranking[:k]])
    return actual / dcg(sorted(grades.values(), reverse=True)[:k])


def judged_at(ranking: Sequence[str], grades: Grades, k: int) -> float | None:
    """Judged passages in the top k / min(k, retrieved); None for an empty ranking."""
    top = ranking[:k]
    return sum(pid in grades for pid in top) / len(top) if top else None


@dataclass(frozen=True)
class MetricKind:
    """One retrieval metric: its name in `--metrics`, its formula, its per-query kernel."""

    name: str
    formula: str
    kernel: Callable[[Sequence[str], Grades, int], float | None]
    # a diagnostic (judged@k) is defined without a relevant passage and is not compared
    diagnostic: bool = False


KINDS = {
    kind.name: kind
    for kind in (
        MetricKind("recall", "|relevant ∩ top k| / |relevant|", recall_at),
        MetricKind(
            "mrr", "mean of 1 / rank of the first relevant in the top k", reciprocal_rank_at
        ),
        MetricKind("ndcg", "DCG@k / IDCG@k, gain 2^g − 1, discount log2(rank + 1)", ndcg_at),
        MetricKind("judged", "judged in the top k / min(k, retrieved)", judged_at, diagnostic=True),
    )
}


@dataclass(frozen=True)
class Metric:
    """A metric at a cutoff, e.g. `ndcg@10`."""

    kind: MetricKind
    k: int

    @property
    def label(self) -> str:
        """The metric's name as `--metrics` and every output spell it."""
        return f"{self.kind.name}@{self.k}"

    def score(self, ranking: Sequence[str], grades: Grades) -> float | None:
        """The metric of one query's ranking."""
        return self.kind.kernel(ranking, grades, self.k)


def parse_metrics(text: str) -> tuple[Metric, ...]:
    """Parse `recall@5,mrr@10,ndcg@10` (names as KINDS spells them, a cutoff k >= 1 each)."""
    metrics: list[Metric] = []
    for part in (p.strip().lower() for p in text.split(",") if p.strip()):
        name, at, cutoff = part.partition("@")
        known = ", ".join(f"{n}@K" for n in KINDS)
        if name not in KINDS:
            raise InputError(f"--metrics: unknown metric {part!r} (known: {known})")
        if not at or not cutoff.isdigit() or int(cutoff) < 1:
            raise InputError(f"--metrics: {part!r} needs a cutoff k >= 1, e.g. {name}@10")
        metric = Metric(KINDS[name], int(cutoff))
        if metric not in metrics:
            metrics.append(metric)
    if not metrics:
        raise InputError(f"--metrics: expected a comma-separated list, got {text!r}")
    return tuple(metrics)


class QueryStatus(StrEnum):
    """Whether a query is averaged in, and if not, why."""

    EVALUATED = "evaluated"  # the qrels give it a relevant passage
    NO_RELEVANT = "no_relevant"  # judged, none relevant: counted apart, not averaged in
    NOT_IN_QRELS = "not_in_qrels"  # ranked but never judged: not scored


@dataclass(frozen=True)
class QueryScores:
    """One query's row: status, counts and each metric (None where undefined)."""

    status: QueryStatus
    in_run: bool  # False: a qrels query the run lacks, evaluated with an empty ranking
    relevant: int
    retrieved: int
    scores: dict[str, float | None]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        head = {"status": str(self.status), "in_run": self.in_run, "relevant": self.relevant}
        return {**head, "retrieved": self.retrieved, **self.scores}


@dataclass(frozen=True)
class Evaluation:
    """Per-query rows and the means over the evaluated queries."""

    metrics: tuple[Metric, ...]
    per_query: dict[str, QueryScores]

    def queries(self, status: QueryStatus = QueryStatus.EVALUATED) -> list[str]:
        """The query ids with `status`, sorted."""
        return sorted(q for q, row in self.per_query.items() if row.status is status)

    def missing(self) -> list[str]:
        """The evaluated queries the run lacks (evaluated with an empty ranking), sorted."""
        return [q for q in self.queries() if not self.per_query[q].in_run]

    def values(self, label: str) -> npt.NDArray[np.float64]:
        """The metric over the evaluated queries (sorted by id); NaN where undefined."""
        scores = [self.per_query[q].scores[label] for q in self.queries()]
        return np.array([np.nan if s is None else s for s in scores], dtype=np.float64)

    def means(self) -> dict[str, float | None]:
        """Each metric's mean over the evaluated queries where it is defined (None if none)."""
        out: dict[str, float | None] = {}
        for metric in self.metrics:
            values = self.values(metric.label)
            values = values[~np.isnan(values)]
            out[metric.label] = float(values.mean()) if values.size else None
        return out

    def counts(self) -> dict[str, int]:
        """How many queries were evaluated (of them, how many with an empty ranking because
        the run lacks them), counted apart for want of a relevant passage, or not scored."""
        return {
            "evaluated": len(self.queries()),
            "no_relevant": len(self.queries(QueryStatus.NO_RELEVANT)),
            "empty_ranking": len(self.missing()),
            "not_in_qrels": len(self.queries(QueryStatus.NOT_IN_QRELS)),
        }

    def as_dict(self) -> dict[str, Any]:
        """`{"metrics", "queries", "per_query", "gain"}`, the `twinbench rag metrics --json`."""
        return {
            "metrics": self.means(),
            "queries": self.counts(),
            "per_query": {q: row.as_dict() for q, row in sorted(self.per_query.items())},
            "gain": GAIN,
        }


def with_judged(metrics: Sequence[Metric]) -> tuple[Metric, ...]:
    """`metrics` plus judged@K at their largest cutoff K (unjudged passages are reported)."""
    judged = Metric(KINDS["judged"], max(m.k for m in metrics))
    return tuple(metrics) if judged in metrics else (*metrics, judged)


def evaluate(qrels: Mapping[str, Grades], run: Rankings, metrics: Sequence[Metric]) -> Evaluation:
    """Score every query of the qrels (and list the run's unjudged ones) on `metrics`."""
    rows: dict[str, QueryScores] = {}
    for qid in sorted(set(qrels) | set(run)):
        ranking = ranked_ids(run.get(qid, []))
        check_ranking(qid, ranking)
        grades = qrels.get(qid)
        if grades is None:
            status = QueryStatus.NOT_IN_QRELS
        else:
            negative = next((p for p, g in grades.items() if g < 0), None)
            if negative is not None:
                raise InputError(f"query {qid!r}: passage {negative!r} has a negative grade")
            relevant = any(g > 0 for g in grades.values())
            status = QueryStatus.EVALUATED if relevant else QueryStatus.NO_RELEVANT
        scores = {
            m.label: m.score(ranking, grades)
            if grades is not None and (status is QueryStatus.EVALUATED or m.kind.diagnostic)
            else None
            for m in metrics
        }
        count = sum(g > 0 for g in (grades or {}).values())
        rows[qid] = QueryScores(status, qid in run, count, len(ranking), scores)
    return Evaluation(tuple(metrics), rows)


STAGE_METRICS = "recall@40,ndcg@5"


@dataclass(frozen=True)
class StageReport:
    """The same metrics on each stage of a pipeline, and the evidence each stage lost."""

    stages: dict[str, Evaluation]
    #: stage -> query -> relevant passages the previous stage had and this one does not
    dropped: dict[str, dict[str, list[str]]]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: per stage its means and counts, and the dropped evidence."""
        return {
            "stages": {
                name: {"metrics": ev.means(), "queries": ev.counts()}
                for name, ev in self.stages.items()
            },
            "dropped": self.dropped,
            "gain": GAIN,
        }


def stage_metrics(
    qrels: Mapping[str, Grades], stages: Mapping[str, Rankings], metrics: str = STAGE_METRICS
) -> StageReport:
    """Score each stage of a pipeline (in the mapping's order) on the same metrics.

    The usual stages are the candidate pool before reranking, the reranked list and what
    reached the prompt after context assembly (a list of passage ids per query), with the
    default metrics candidate Recall@40 beside nDCG@5: high recall in the pool does not excuse
    a relevant passage silently dropped from the prompt, so each later stage also lists, per
    query, the relevant passages the stage before it had and it lacks.
    """
    chosen = parse_metrics(metrics)
    scored = {name: evaluate(qrels, rankings, chosen) for name, rankings in stages.items()}
    dropped: dict[str, dict[str, list[str]]] = {}
    names = list(stages)
    for before, after in pairwise(names):
        lost: dict[str, list[str]] = {}
        for qid in scored[after].queries():
            kept = set(ranked_ids(stages[after].get(qid, [])))
            earlier = ranked_ids(stages[before].get(qid, []))
            gone = [p for p in earlier if qrels[qid].get(p, 0) > 0 and p not in kept]
            if gone:
                lost[qid] = gone
        dropped[after] = lost
    return StageReport(scored, dropped)


@dataclass(frozen=True)
class MetricComparison:
    """One metric of two runs over the same queries: B − A, its interval and sign-flip test."""

    label: str
    mean_a: float
    mean_b: float
    difference: Interval
    test: SignFlipResult
    improved: list[str]  # queries where B scores higher than A
    worsened: list[str]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "a": self.mean_a,
            "b": self.mean_b,
            "difference": self.difference.as_dict(),
            "test": self.test.as_dict(),
            "improved": self.improved,
            "worsened": self.worsened,
        }


@dataclass(frozen=True)
class RunComparison:
    """Two runs compared query by query on the queries both are evaluated on."""

    a: Evaluation
    b: Evaluation
    comparisons: tuple[MetricComparison, ...]

    def as_dict(self) -> dict[str, Any]:
        """`{"metrics", "queries", "per_query", "gain", "difference"}` (per query A, B, B − A)."""
        per_query: dict[str, dict[str, dict[str, float | None]]] = {}
        for qid in self.a.queries():
            row = per_query.setdefault(qid, {})
            for c in self.comparisons:
                va, vb = (
                    self.a.per_query[qid].scores[c.label],
                    self.b.per_query[qid].scores[c.label],
                )
                diff = None if va is None or vb is None else vb - va
                row[c.label] = {"a": va, "b": vb, "difference": diff}
        counts_a, counts_b = self.a.counts(), self.b.counts()
        return {
            "metrics": {c.label: c.as_dict() for c in self.comparisons},
            "queries": {
                "evaluated": counts_a["evaluated"],
                "no_relevant": counts_a["no_relevant"],
                "empty_ranking": {"a": counts_a["empty_ranking"], "b": counts_b["empty_ranking"]},
            },
            "per_query": per_query,
            "gain": GAIN,
            "difference": "B - A (queries resampled; sign-flip over queries)",
        }


def paired_comparison(
    qrels: Mapping[str, Grades],
    run_a: Rankings,
    run_b: Rankings,
    metrics: str = DEFAULT_METRICS,
    seed: int = 7,
    resamples: int = 10_000,
    draws: int = 20_000,
) -> RunComparison:
    """Per-query differences B − A over the evaluated queries, for each metric: the mean
    difference with a query-bootstrap percentile interval and a two-sided sign-flip test."""
    chosen = parse_metrics(metrics)
    diagnostic = [m.label for m in chosen if m.kind.diagnostic]
    if diagnostic:
        raise InputError(f"--metrics: {', '.join(diagnostic)} is a diagnostic, not compared")
    a, b = evaluate(qrels, run_a, chosen), evaluate(qrels, run_b, chosen)
    queries = a.queries()
    if not queries:
        raise InputError("no query of the qrels has a relevant passage; nothing to compare")
    rows: list[MetricComparison] = []
    for metric in chosen:
        va, vb = a.values(metric.label), b.values(metric.label)
        d = vb - va
        ones = np.ones_like(d)
        interval = ratio_interval(d, ones, resamples, np.random.default_rng(seed), seed)
        test = sign_flip_test(d, draws, np.random.default_rng(seed), seed)
        improved = [q for q, x in zip(queries, d, strict=True) if x > TIE]
        worsened = [q for q, x in zip(queries, d, strict=True) if x < -TIE]
        mean_a, mean_b = float(va.mean()), float(vb.mean())
        rows.append(
            MetricComparison(metric.label, mean_a, mean_b, interval, test, improved, worsened)
        )
    return RunComparison(a, b, tuple(rows))
