"""Assemble every metric of a graded table into one JSON-ready summary."""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench import __version__
from twinbench.grader import OUTCOME_NAMES, GradedTable, Outcome
from twinbench.metrics import registry
from twinbench.metrics._util import ratio
from twinbench.metrics.abstention import abstention_precision, abstention_recall, twin_accuracy
from twinbench.metrics.calibration import (
    ECE_EDGES,
    brier_score,
    expected_calibration_error,
    reliability_bins,
)
from twinbench.metrics.cost import CostTable, cost_weighted_score
from twinbench.metrics.pairs import pair_figures
from twinbench.metrics.permutation import permutation_sensitivity
from twinbench.metrics.selective import (
    aurc,
    best_threshold,
    coverage,
    risk_coverage_curve,
    selective_risk,
)
from twinbench.records import FAMILIES

METRICS_SCHEMA = "twinbench.metrics/1"


#: the per-family rates whose unweighted mean over families is the `macro` block
MACRO_KEYS = registry.MACRO


def _family_block(g: GradedTable, valid: np.ndarray, f: int, run_key: np.ndarray) -> dict[str, Any]:
    unanswerable = valid & ~g.answerable & (g.family == f)
    twins = valid & g.answerable & (g.family == f)
    claimed = valid & g.abstain & (g.reason == f)
    correct_abstain = g.outcome == Outcome.CORRECT_ABSTAIN
    member = valid & (g.family == f)
    pairs, score = pair_figures(
        g.pair[member], run_key[member], g.answerable[member], g.correct[member], g.outcome[member]
    )
    return {
        "unanswerable": int(unanswerable.sum()),
        "twins": int(twins.sum()),
        "recall": abstention_recall(correct_abstain, unanswerable),
        "precision": abstention_precision(correct_abstain & unanswerable, claimed),
        "twin_accuracy": twin_accuracy(g.outcome == Outcome.CORRECT_ANSWER, twins),
        "abstained_with_code": int(claimed.sum()),
        "wrong_reason": int((unanswerable & (g.outcome == Outcome.WRONG_REASON)).sum()),
        "accuracy": ratio(g.correct[member].sum(), int(member.sum())),
        "ideal_pair_rate": pairs["rate"],
        "pair_score": score,
        "ideal_pairs": pairs,
    }


def macro_means(families: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """macro m = mean over the families where m is defined (None where none is); `families`
    names which ones each mean covers. Every family weighs the same, however many items."""
    out: dict[str, Any] = {}
    for key in MACRO_KEYS:
        defined = {name: b[key] for name, b in families.items() if b[key] is not None}
        out[key] = float(np.mean(list(defined.values()))) if defined else None
        out[f"{key}_families"] = sorted(defined)
    return out


def _confidence_block(g: GradedTable, valid: np.ndarray) -> dict[str, Any] | None:
    has_conf = valid & ~np.isnan(g.confidence)
    if not has_conf.any():
        return None
    answered = valid & ~g.abstain
    complete = bool(has_conf[answered].all())
    block: dict[str, Any] = {
        "rows_with_confidence": int(has_conf.sum()),
        "ece": expected_calibration_error(g.confidence[has_conf], g.correct[has_conf]),
        "ece_bin_edges": list(ECE_EDGES),
        "brier": brier_score(g.confidence[has_conf], g.correct[has_conf]),
        "reliability": reliability_bins(g.confidence[has_conf], g.correct[has_conf]),
        "risk_coverage": None,
        "aurc": None,
        "best_threshold": None,
    }
    if complete:  # the curve needs a confidence on every answered row
        rows = valid
        wrong = ~g.correct[rows]
        curve = risk_coverage_curve(answered[rows], wrong, g.confidence[rows])
        block["risk_coverage"] = curve
        block["aurc"] = aurc(curve)
        block["best_threshold"] = best_threshold(
            answered[rows],
            (g.outcome == Outcome.CORRECT_ANSWER)[rows],
            ~g.answerable[rows],
            g.confidence[rows],
        )
    return block


def summarize(g: GradedTable, costs: CostTable, languages: tuple[str, ...]) -> dict[str, Any]:
    """Compute every metric of DESIGN.md's list (bar the paired protocol) over a graded table."""
    valid = g.valid
    outcome_counts = np.bincount(g.outcome, minlength=len(OUTCOME_NAMES))
    n_valid = int(valid.sum())
    answered = valid & ~g.abstain
    unanswerable = valid & ~g.answerable
    any_abstain = valid & g.abstain
    run_key = g.trial * (int(g.permutation.max(initial=0)) + 1) + g.permutation
    correct = g.correct
    families = {name: _family_block(g, valid, f, run_key) for f, name in enumerate(FAMILIES)}
    overall_pairs, overall_score = pair_figures(
        g.pair[valid], run_key[valid], g.answerable[valid], correct[valid], g.outcome[valid]
    )
    return {
        "schema": METRICS_SCHEMA,
        "twinbench_version": __version__,
        "systems": list(g.systems),
        "languages": list(languages),
        "counts": {
            "responses": len(g),
            "valid": n_valid,
            **{name: int(outcome_counts[i]) for i, name in enumerate(OUTCOME_NAMES)},
        },
        "families": families,
        "macro": macro_means(families),
        "overall": {
            "ideal_pair_rate": overall_pairs["rate"],
            "pair_score": overall_score,
            "abstention_precision": abstention_precision(any_abstain & unanswerable, any_abstain),
            "abstention_recall": abstention_recall(any_abstain, unanswerable),
            "twin_accuracy": twin_accuracy(
                g.outcome == Outcome.CORRECT_ANSWER, valid & g.answerable
            ),
            "accuracy": ratio(correct[valid].sum(), n_valid),
            "accuracy_failures_as_wrong": ratio(correct.sum(), len(g)),
            "coverage": coverage(answered[valid]),
            "selective_risk": selective_risk(answered[valid], ~correct[valid]),
            "cost_weighted_score": cost_weighted_score(
                g.family[valid],
                correct[valid],
                ((g.outcome == Outcome.WRONG_REASON) | (g.outcome == Outcome.FALSE_ABSTAIN))[valid],
                costs,
            ),
            "ideal_pairs": overall_pairs,
        },
        "confidence": _confidence_block(g, valid),
        "permutation": permutation_sensitivity(g),
        "costs": costs.model_dump(),
    }
