import numpy as np
import pytest

from twinbench.metrics.calibration import ECE_EDGES, brier_score, expected_calibration_error

T, F = True, False


def test_bins_are_the_stated_ones() -> None:
    assert ECE_EDGES == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def test_ece_by_hand() -> None:
    # bin [0.3, 0.4): conf 0.3 wrong           -> 1 * |0 - 0.3|   = 0.3
    # bin [0.9, 1.0]: conf 0.9 right, 1.0 right -> 2 * |1 - 0.95| = 0.1
    # ECE = (0.3 + 0.1) / 3
    conf = np.array([0.3, 0.9, 1.0])
    correct = np.array([F, T, T])
    assert expected_calibration_error(conf, correct) == pytest.approx(0.4 / 3)


def test_brier_by_hand() -> None:
    # (0.3 - 0)^2 + (0.9 - 1)^2 + (1.0 - 1)^2 = 0.09 + 0.01 + 0 -> / 3
    conf = np.array([0.3, 0.9, 1.0])
    assert brier_score(conf, np.array([F, T, T])) == pytest.approx(0.1 / 3)
    assert brier_score(np.array([]), np.array([], bool)) is None
