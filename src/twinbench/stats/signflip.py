"""Paired sign-flip permutation test, and Holm's step-down correction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
CHUNK = 1000
TIE = 1e-12  # differences this close to 0 (floating-point noise of a mean) count as zero


@dataclass(frozen=True)
class SignFlipResult:
    """A two-sided sign-flip test on paired per-cluster differences."""

    mean: float
    p_value: float
    positive: int
    negative: int
    zero: int
    clusters: int
    draws: int
    seed: int | None
    method: str = (
        "two-sided sign-flip permutation test, p = (1 + #|flipped mean| >= |mean|) / (draws + 1)"
    )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def sign_flip_test(
    differences: FloatArray, draws: int, rng: np.random.Generator, seed: int | None = None
) -> SignFlipResult:
    """Test mean(d) = 0 by flipping each cluster's difference's sign at random.

    Under the null each paired difference is symmetric around 0. The p-value counts the
    draws whose |mean of sign-flipped differences| reaches the observed |mean| (with a small
    tolerance for floating-point ties), plus one, over draws plus one.
    """
    d = np.asarray(differences, dtype=np.float64)
    observed = abs(d.mean())
    hits = 0
    for start in range(0, draws, CHUNK):
        size = min(CHUNK, draws - start)
        signs = rng.integers(0, 2, size=(size, d.size)) * 2 - 1
        flipped = np.abs(signs @ d) / d.size
        hits += int((flipped >= observed - TIE).sum())
    return SignFlipResult(
        mean=float(d.mean()),
        p_value=(1 + hits) / (draws + 1),
        positive=int((d > TIE).sum()),
        negative=int((d < -TIE).sum()),
        zero=int((np.abs(d) <= TIE).sum()),
        clusters=int(d.size),
        draws=draws,
        seed=seed,
    )


def holm(p_values: list[float]) -> list[float]:
    """Holm step-down adjusted p-values: max over j <= i of (m - j) * p_(j), capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
