"""Permutation sensitivity: does the abstain decision survive a reordering of the options?"""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.grader import GradedTable, Outcome
from twinbench.metrics._util import ratio
from twinbench.records import FAMILIES


def flip_rate(group: np.ndarray, abstain: np.ndarray) -> tuple[int, int]:
    """(#groups whose rows disagree on abstaining, #groups with at least two rows)."""
    order = np.argsort(group, kind="stable")
    group, abstain = group[order], abstain[order]
    starts = np.r_[0, np.flatnonzero(group[1:] != group[:-1]) + 1]
    sizes = np.diff(np.r_[starts, group.size])
    abstained = np.add.reduceat(abstain.astype(np.int64), starts) if group.size else starts
    multi = sizes >= 2
    flipped = multi & (abstained > 0) & (abstained < sizes)
    return int(flipped.sum()), int(multi.sum())


def permutation_sensitivity(g: GradedTable) -> dict[str, Any] | None:
    """Per family: how often the abstain decision flips across option orders of one item and
    trial (flip rate = #(item, trial) groups with mixed decisions / #groups with >= 2 valid
    orders), and twin accuracy under each option order. None with a single order."""
    if int(g.permutation.max(initial=0)) == 0:
        return None
    valid = g.valid
    group = g.item * (int(g.trial.max(initial=0)) + 1) + g.trial
    out: dict[str, Any] = {}
    for f, family in enumerate(FAMILIES):
        rows = valid & (g.family == f)
        flipped, groups = flip_rate(group[rows], g.abstain[rows])
        twins = rows & g.answerable
        by_order = {
            str(int(k)): ratio(
                ((g.outcome == Outcome.CORRECT_ANSWER) & twins & (g.permutation == k)).sum(),
                (twins & (g.permutation == k)).sum(),
            )
            for k in np.unique(g.permutation[rows])
        }
        values = [v for v in by_order.values() if v is not None]
        out[family] = {
            "flip_rate": ratio(flipped, groups),
            "flipped": flipped,
            "groups": groups,
            "twin_accuracy_by_order": by_order,
            "twin_accuracy_range": (max(values) - min(values)) if values else None,
        }
    return out
