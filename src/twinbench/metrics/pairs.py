"""The ideal pair rate: twin answered right and item abstained on right, together."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from twinbench.metrics._util import BoolArray, ratio

if TYPE_CHECKING:
    from twinbench.grader import GradedTable

IntArray = np.ndarray[tuple[int], np.dtype[np.int64]]


def ideal_pair_rate(
    pair: IntArray, run_key: IntArray, answerable: BoolArray, correct: BoolArray
) -> dict[str, Any]:
    """ideal pair rate = #(pairs with twin correct and item correct) / #(pairs with both graded).

    A pair is counted once per run key (trial and permutation), and only where both its
    answerable twin and its unanswerable item have a valid response for that key.
    """
    key = pair * (int(run_key.max(initial=0)) + 1) + run_key
    twin_keys, twin_first = np.unique(key[answerable], return_index=True)
    item_keys, item_first = np.unique(key[~answerable], return_index=True)
    both, twin_at, item_at = np.intersect1d(
        twin_keys, item_keys, assume_unique=True, return_indices=True
    )
    twin_ok = correct[answerable][twin_first[twin_at]]
    item_ok = correct[~answerable][item_first[item_at]]
    ideal = int((twin_ok & item_ok).sum())
    return {"rate": ratio(ideal, both.size), "ideal": ideal, "pairs": int(both.size)}


def pair_counts(pair: IntArray, mask: BoolArray, pairs: int) -> np.ndarray:
    """Rows selected by `mask`, counted per pair (length `pairs`, float64): the one per-pair
    tally behind every clustered interval and paired test (pairs are the resampling unit)."""
    return np.bincount(pair[mask], minlength=pairs).astype(np.float64)


def outcome_tallies(
    g: GradedTable, family: int, answerable: bool, outcome: int, pairs: int
) -> tuple[np.ndarray, np.ndarray]:
    """(rows with `outcome`, valid rows) per pair over a family's items (`answerable`
    False) or twins: e.g. recall's numerator and denominator, pair by pair."""
    rows = g.valid & (g.family == family) & (g.answerable == answerable)
    return pair_counts(g.cluster, rows & (g.outcome == outcome), pairs), pair_counts(
        g.cluster, rows, pairs
    )
