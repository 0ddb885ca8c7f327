"""Calibration: expected calibration error with stated bins, and the Brier score."""

from __future__ import annotations

import numpy as np

from twinbench.metrics._util import BoolArray, FloatArray

#: Ten equal-width bins [0.0, 0.1), [0.1, 0.2), ..., [0.9, 1.0]; the last bin includes 1.0.
ECE_EDGES: tuple[float, ...] = tuple(i / 10 for i in range(11))


def expected_calibration_error(confidence: FloatArray, correct: BoolArray) -> float | None:
    """ECE = sum_b (n_b / n) * |accuracy_b - mean confidence_b| over the bins of ECE_EDGES."""
    if confidence.size == 0:
        return None
    bins = np.searchsorted(np.array(ECE_EDGES[1:-1]), confidence, side="right")
    counts = np.bincount(bins, minlength=10)
    hits = np.bincount(bins, weights=correct.astype(np.float64), minlength=10)
    mass = np.bincount(bins, weights=confidence, minlength=10)
    gaps = np.abs(hits - mass)  # n_b * |acc_b - conf_b|
    return float(gaps.sum() / confidence.size) if counts.sum() else None


def brier_score(confidence: FloatArray, correct: BoolArray) -> float | None:
    """Brier = mean over rows of (confidence - 1[correct])^2."""
    if confidence.size == 0:
        return None
    return float(np.mean((confidence - correct.astype(np.float64)) ** 2))


def reliability_bins(confidence: FloatArray, correct: BoolArray) -> list[dict[str, float]]:
    """Per non-empty bin of ECE_EDGES: its edges, row count, mean confidence and accuracy."""
    bins = np.searchsorted(np.array(ECE_EDGES[1:-1]), confidence, side="right")
    out = []
    for b in range(10):
        rows = bins == b
        if rows.any():
            out.append(
                {
                    "low": ECE_EDGES[b],
                    "high": ECE_EDGES[b + 1],
                    "count": int(rows.sum()),
                    "confidence": float(confidence[rows].mean()),
                    "accuracy": float(correct[rows].mean()),
                }
            )
    return out
