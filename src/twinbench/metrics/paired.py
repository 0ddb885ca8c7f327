"""The paired answer-present / answer-absent protocol (ArcticAbstain, seed 001).

On a pair, the answerable twin is the answer-present condition and the unanswerable item the
answer-absent one. Outcome classes over graded rows:

* N0 — invalid, rejected or error (outside every denominator);
* N1 — present, right answer; N2 — present, wrong answer; N3 — present, abstained;
* N4 — absent, answered (false commitment); N5 — absent, abstained (any code: the protocol
  shows one abstain option, so it is code-agnostic).

With V = N1 + ... + N5: ACC = (N1 + N5) / V; P_abs = N5 / (N3 + N5);
R_abs = N5 / (N5 + N2 + N4) (the denominator counts wrong substantive answers in both
conditions); narrow R_abs = N5 / (N4 + N5); F1_abs = 2 P R / (P + R);
abstention rate = (N3 + N5) / V; R-Acc = N1 / (N1 + N2 + N4); SSR = (N1 + N3 + N5) / V
(the share of responses that are safe: right, or withheld).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.grader import GradedTable, Outcome
from twinbench.metrics._util import BoolArray, ratio
from twinbench.metrics.pairs import pair_counts

OUTCOME_CLASSES = ("N0", "N1", "N2", "N3", "N4", "N5")


def outcome_classes(g: GradedTable) -> np.ndarray:
    """The class 0..5 (N0..N5) of every graded row."""
    classes = np.zeros(len(g), dtype=np.int64)
    present, absent = g.answerable, ~g.answerable
    classes[present & (g.outcome == Outcome.CORRECT_ANSWER)] = 1
    classes[present & (g.outcome == Outcome.WRONG_ANSWER)] = 2
    classes[present & (g.outcome == Outcome.FALSE_ABSTAIN)] = 3
    classes[absent & (g.outcome == Outcome.FALSE_COMMIT)] = 4
    classes[
        absent & ((g.outcome == Outcome.CORRECT_ABSTAIN) | (g.outcome == Outcome.WRONG_REASON))
    ] = 5
    return classes


def counts(classes: np.ndarray, mask: BoolArray | None = None) -> dict[str, int]:
    """N0..N5 over the rows in `mask` (all rows when None)."""
    chosen = classes if mask is None else classes[mask]
    tally = np.bincount(chosen, minlength=6)
    return {name: int(tally[i]) for i, name in enumerate(OUTCOME_CLASSES)}


def paired_metrics(n: dict[str, int]) -> dict[str, float | None]:
    """ACC, P_abs, R_abs (wide and narrow), F1_abs, abstention rate, R-Acc, SSR from N0..N5."""
    valid = n["N1"] + n["N2"] + n["N3"] + n["N4"] + n["N5"]
    precision = ratio(n["N5"], n["N3"] + n["N5"])
    recall = ratio(n["N5"], n["N5"] + n["N2"] + n["N4"])
    f1 = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "acc": ratio(n["N1"] + n["N5"], valid),
        "precision_abs": precision,
        "recall_abs": recall,
        "recall_abs_narrow": ratio(n["N5"], n["N4"] + n["N5"]),
        "f1_abs": f1,
        "abstention_rate": ratio(n["N3"] + n["N5"], valid),
        "r_acc": ratio(n["N1"], n["N1"] + n["N2"] + n["N4"]),
        "ssr": ratio(n["N1"] + n["N3"] + n["N5"], valid),
    }


def per_cluster_rates(g: GradedTable, classes: np.ndarray) -> dict[str, np.ndarray]:
    """Per cluster (a pair, or the pairs of one source): abstentions and valid responses in
    each condition (trials pooled)."""
    pairs = int(g.cluster.max(initial=-1)) + 1

    def tally(mask: BoolArray) -> np.ndarray:
        return pair_counts(g.cluster, mask, pairs)

    present, absent = g.answerable, ~g.answerable
    return {
        "present_abstain": tally(present & (classes == 3)),
        "present_valid": tally(present & (classes >= 1)),
        "absent_abstain": tally(absent & (classes == 5)),
        "absent_valid": tally(absent & (classes >= 1)),
    }


def trial_medians(g: GradedTable, classes: np.ndarray) -> dict[str, Any]:
    """Every paired metric per trial, and the median over trials beside the pooled value."""
    per_trial = {}
    for trial in np.unique(g.trial):
        n = counts(classes, g.trial == trial)
        per_trial[str(int(trial))] = {**n, **paired_metrics(n)}
    keys = list(paired_metrics(counts(classes)))
    medians = {}
    for key in keys:
        values = [float(v) for m in per_trial.values() if (v := m[key]) is not None]
        medians[key] = float(np.median(values)) if values else None
    return {"per_trial": per_trial, "median": medians}
