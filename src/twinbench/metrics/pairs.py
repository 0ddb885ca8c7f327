"""The ideal pair rate: twin answered right and item abstained on right, together."""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.grader import GradedTable, Outcome
from twinbench.metrics._util import BoolArray, ratio

IntArray = np.ndarray[tuple[int], np.dtype[np.int64]]


def _matched(pair: IntArray, run_key: IntArray, answerable: BoolArray) -> tuple[IntArray, IntArray]:
    """Row positions (twin, item) of every pair graded on both sides for one run key.

    A pair is counted once per run key (trial and permutation), and only where both its
    answerable twin and its unanswerable item have a valid response for that key.
    """
    key = pair * (int(run_key.max(initial=0)) + 1) + run_key
    twin_keys, twin_first = np.unique(key[answerable], return_index=True)
    item_keys, item_first = np.unique(key[~answerable], return_index=True)
    _, twin_at, item_at = np.intersect1d(
        twin_keys, item_keys, assume_unique=True, return_indices=True
    )
    twin_rows, item_rows = np.flatnonzero(answerable), np.flatnonzero(~answerable)
    return twin_rows[twin_first[twin_at]], item_rows[item_first[item_at]]


def _ideal(correct: BoolArray, twins: IntArray, items: IntArray) -> dict[str, Any]:
    ideal = int((correct[twins] & correct[items]).sum())
    return {"rate": ratio(ideal, twins.size), "ideal": ideal, "pairs": int(twins.size)}


def _score(outcome: IntArray, twins: IntArray, items: IntArray) -> float | None:
    if not twins.size:
        return None
    return float(((PAIR_VALUES[outcome[items]] + PAIR_VALUES[outcome[twins]]) / 2).mean())


def ideal_pair_rate(
    pair: IntArray, run_key: IntArray, answerable: BoolArray, correct: BoolArray
) -> dict[str, Any]:
    """ideal pair rate = #(pairs with twin correct and item correct) / #(pairs with both graded)
    (pairs matched as `_matched` says)."""
    return _ideal(correct, *_matched(pair, run_key, answerable))


def _pair_values() -> np.ndarray:
    values = np.zeros(len(Outcome))  # failures never reach it: pairs match valid rows only
    values[[Outcome.CORRECT_ABSTAIN, Outcome.CORRECT_ANSWER]] = 1.0
    values[[Outcome.FALSE_COMMIT, Outcome.WRONG_ANSWER, Outcome.FALSE_ABSTAIN]] = -1.0
    return values  # WRONG_REASON stays 0


#: the pair score's value of each outcome (docs/grading.md, "The pair score"): an item's
#: correct abstention +1, wrong code 0, committed answer -1; a twin's right answer +1, wrong
#: answer -1, false abstention -1. Abstaining on everything with the right code scores 0.
PAIR_VALUES = _pair_values()


def pair_score(
    pair: IntArray, run_key: IntArray, answerable: BoolArray, outcome: IntArray
) -> float | None:
    """Mean over graded pairs of (item value + twin value) / 2, in [-1, 1] (None: no pair).

    Only telling an item from its twin scores above 0: abstaining on both members (with the
    right code) scores 0, answering both at most 0, and an ideal pair 1."""
    return _score(outcome, *_matched(pair, run_key, answerable))


def pair_figures(
    pair: IntArray, run_key: IntArray, answerable: BoolArray, correct: BoolArray, outcome: IntArray
) -> tuple[dict[str, Any], float | None]:
    """(`ideal_pair_rate`, `pair_score`) from one matching of the pairs."""
    twins, items = _matched(pair, run_key, answerable)
    return _ideal(correct, twins, items), _score(outcome, twins, items)


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
