"""Coverage, selective risk, the risk-coverage curve, AURC and the best abstention threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.metrics._util import BoolArray, FloatArray, ratio


def coverage(answered: BoolArray) -> float | None:
    """coverage = #answered / #rows (rows are valid responses)."""
    return ratio(answered.sum(), answered.size)


def selective_risk(answered: BoolArray, wrong: BoolArray) -> float | None:
    """selective risk = #(answered and wrong) / #answered (answering an unanswerable is wrong)."""
    return ratio((answered & wrong).sum(), answered.sum())


def risk_coverage_curve(
    answered: BoolArray, wrong: BoolArray, confidence: FloatArray
) -> list[dict[str, float]]:
    """Points (threshold t, coverage, risk) answering only rows with confidence >= t.

    Explicit abstentions stay abstentions at every threshold. For each distinct confidence t of
    an answered row (descending): coverage(t) = #(answered, conf >= t) / #rows and
    risk(t) = #(answered, conf >= t, wrong) / #(answered, conf >= t).
    """
    conf = confidence[answered]
    bad = wrong[answered].astype(np.int64)
    order = np.argsort(-conf, kind="stable")
    conf, bad = conf[order], bad[order]
    last_of_group = np.r_[conf[1:] != conf[:-1], True] if conf.size else np.array([], bool)
    kept = np.arange(1, conf.size + 1)[last_of_group]
    wrong_kept = np.cumsum(bad)[last_of_group]
    return [
        {"threshold": float(t), "coverage": float(k) / answered.size, "risk": float(w) / k}
        for t, k, w in zip(conf[last_of_group], kept, wrong_kept, strict=True)
    ]


def aurc(curve: list[dict[str, float]]) -> float | None:
    """AURC = sum_i risk_i * (coverage_i - coverage_{i-1}) / coverage_last (coverage_0 = 0).

    The mean selective risk over the coverage range the system reaches, as a step function of
    the curve from :func:`risk_coverage_curve`.
    """
    if not curve:
        return None
    area, previous = 0.0, 0.0
    for point in curve:
        area += point["risk"] * (point["coverage"] - previous)
        previous = point["coverage"]
    return area / previous


def best_threshold(
    answered: BoolArray, correct_answer: BoolArray, unanswerable: BoolArray, confidence: FloatArray
) -> dict[str, Any]:
    """The confidence threshold that maximises code-agnostic exact score (SQuAD 2.0 best_exact).

    exact = (#abstentions on unanswerable rows + #correct answers) / #rows. Abstaining below a
    threshold t turns an answered row into an abstention: +1 on an unanswerable item, -1 on a
    correctly answered one, 0 on a wrongly answered twin. Candidates t are the answered rows'
    distinct confidences plus +inf (abstain always); the smallest best t wins ties.
    """
    n = answered.size
    base = int((~answered & unanswerable).sum() + (answered & correct_answer).sum())
    conf = confidence[answered]
    delta = unanswerable[answered].astype(np.int64) - correct_answer[answered].astype(np.int64)
    order = np.argsort(conf, kind="stable")
    conf, delta = conf[order], delta[order]
    candidates = np.unique(conf)
    # gating rows with conf < t: cumulative delta up to the first row with conf >= t
    gated = np.searchsorted(conf, candidates, side="left")
    cumulative = np.r_[0, np.cumsum(delta)]
    scores = np.r_[cumulative[gated], cumulative[-1]] + base
    thresholds = [*candidates.tolist(), float("inf")]
    best = int(np.argmax(scores))
    return {
        "best_exact": ratio(scores[best], n),
        "threshold": thresholds[best] if np.isfinite(thresholds[best]) else None,
        "abstain_always": not np.isfinite(thresholds[best]),
        "exact_without_threshold": ratio(base, n),
    }
