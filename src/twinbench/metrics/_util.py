"""Small shared helpers for metric kernels."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


def ratio(numerator: int | np.integer, denominator: int | np.integer) -> float | None:
    """Return numerator / denominator, or None when the denominator is zero."""
    return float(numerator) / float(denominator) if denominator else None
