"""The report's cluster-bootstrap intervals: per family and pooled over every family.

Each figure is a ratio of per-cluster tallies (`pair_counts`, `pair_tallies`), so its interval
is `stats.bootstrap.ratio_interval` over clusters of pairs (`grader.cluster_key`): the same
unit as the paired analysis. Every interval is drawn from its own `numpy.random.Generator`
seeded with the report's seed, so adding a figure never moves another figure's interval.
A figure whose denominator is 0 is undefined and has no interval (absent from the block).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.grader import GradedTable, Outcome
from twinbench.metrics.pairs import outcome_tallies as tallies
from twinbench.metrics.pairs import pair_counts, pair_tallies
from twinbench.records import FAMILIES
from twinbench.stats.bootstrap import ratio_interval

RESAMPLES = 2_000
Tally = tuple[np.ndarray, np.ndarray]


def _block(tallied: dict[str, Tally], seed: int, resamples: int) -> dict[str, Any]:
    """{figure: interval} for the figures whose denominator is not 0."""
    out: dict[str, Any] = {}
    for name, (num, den) in tallied.items():
        if den.sum() > 0:
            rng = np.random.default_rng(seed)
            out[name] = ratio_interval(num, den, resamples, rng, seed).as_dict()
    return out


def _clusters(g: GradedTable) -> int:
    return int(g.cluster.max(initial=-1)) + 1  # the resampling unit (grader.cluster_key)


def family_intervals(g: GradedTable, seed: int, resamples: int = RESAMPLES) -> dict[str, Any]:
    """Per family: ideal pair rate, pair score, recall, precision and twin accuracy."""
    clusters = _clusters(g)
    out: dict[str, Any] = {}
    for f, family in enumerate(FAMILIES):
        recall_hits, recall_n = tallies(g, f, False, Outcome.CORRECT_ABSTAIN, clusters)
        twin_hits, twin_n = tallies(g, f, True, Outcome.CORRECT_ANSWER, clusters)
        claimed = pair_counts(g.cluster, g.valid & g.abstain & (g.reason == f), clusters)
        ideal, score, graded = pair_tallies(g, f, clusters)
        tallied = {
            "ideal_pair_rate": (ideal, graded),
            "pair_score": (score, graded),
            "recall": (recall_hits, recall_n),
            "precision": (recall_hits, claimed),
            "twin_accuracy": (twin_hits, twin_n),
        }
        out[family] = _block(tallied, seed, resamples)
    return out


def overall_intervals(g: GradedTable, seed: int, resamples: int = RESAMPLES) -> dict[str, Any]:
    """Pooled over every family: the rates of the report's pooled table (the cost-weighted
    score, a mean of costs, has none)."""
    clusters = _clusters(g)
    valid = g.valid

    def count(mask: np.ndarray) -> np.ndarray:
        return pair_counts(g.cluster, mask, clusters)

    items, abstained = valid & ~g.answerable, valid & g.abstain
    twins, answered = valid & g.answerable, valid & ~g.abstain
    ideal, score, graded = pair_tallies(g, None, clusters)
    tallied = {
        "ideal_pair_rate": (ideal, graded),
        "pair_score": (score, graded),
        "abstention_precision": (count(abstained & ~g.answerable), count(abstained)),
        "abstention_recall": (count(abstained & ~g.answerable), count(items)),
        "twin_accuracy": (count(g.outcome == Outcome.CORRECT_ANSWER), count(twins)),
        "coverage": (count(answered), count(valid)),
        "selective_risk": (count(answered & ~g.correct), count(answered)),
    }
    return _block(tallied, seed, resamples)
