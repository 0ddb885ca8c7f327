"""Vectorised cluster bootstrap of ratio statistics (percentile intervals)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
CHUNK = 500  # resamples per vectorised block (bounds memory at CHUNK x clusters indices)


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval and how it was made."""

    estimate: float
    low: float
    high: float
    resamples: int
    seed: int | None
    level: float = 0.95
    method: str = "cluster bootstrap, percentile"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "resamples": self.resamples,
            "seed": self.seed,
        }


def resample_ratios(
    numerators: FloatArray, denominators: FloatArray, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """sum(num[c]) / sum(den[c]) for each of `resamples` draws of clusters with replacement.

    `numerators` and `denominators` are (k, C): k statistics sharing the same C clusters, so
    all statistics of one resample use the same drawn clusters (a cluster carries all its
    trials and conditions). Returns (resamples, k); NaN where a resample's denominator is 0.

    Two exact kernels (same distribution): when clusters repeat a few distinct profiles (counts
    of small integers, the usual case for per-question tallies), the resample draws how many
    clusters of each profile it takes (one multinomial over profiles); otherwise it draws C
    cluster indices per resample, CHUNK resamples at a time, and counts them with bincount.
    """
    num = np.atleast_2d(np.asarray(numerators, dtype=np.float64))
    den = np.atleast_2d(np.asarray(denominators, dtype=np.float64))
    clusters = num.shape[1]
    profiles, weight = np.unique(np.vstack([num, den]).T, axis=0, return_counts=True)
    if len(profiles) * 10 <= clusters:
        counts = rng.multinomial(clusters, weight / clusters, size=resamples).astype(np.float64)
        k = num.shape[0]
        return _ratio(counts @ profiles[:, :k], counts @ profiles[:, k:])
    out = np.empty((resamples, num.shape[0]))
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        idx = rng.integers(0, clusters, size=(size, clusters), dtype=np.int32)
        # counts[r, c] = how often cluster c was drawn in resample r (one bincount per block)
        flat = (np.arange(size, dtype=np.int64)[:, None] * clusters + idx).ravel()
        drawn = np.bincount(flat, minlength=size * clusters).reshape(size, clusters)
        weights = drawn.astype(np.float64)
        out[start : start + size] = _ratio(weights @ num.T, weights @ den.T)
    return out


def _ratio(top: FloatArray, bottom: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = np.where(bottom > 0, top / bottom, np.nan)
    return result


def percentile_interval(
    estimate: float, draws: FloatArray, resamples: int, seed: int | None, level: float = 0.95
) -> Interval:
    """The percentile interval of `draws` (NaN draws ignored)."""
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return Interval(float(estimate), float(low), float(high), resamples, seed, level)


def ratio_interval(
    numerators: FloatArray,
    denominators: FloatArray,
    resamples: int,
    rng: np.random.Generator,
    seed: int | None,
    level: float = 0.95,
) -> Interval:
    """Cluster-bootstrap interval of sum(num) / sum(den)."""
    estimate = float(numerators.sum() / denominators.sum())
    draws = resample_ratios(numerators, denominators, resamples, rng)[:, 0]
    return percentile_interval(estimate, draws, resamples, seed, level)
