import numpy as np
import pytest

from twinbench.metrics.selective import (
    aurc,
    best_threshold,
    coverage,
    risk_coverage_curve,
    selective_risk,
)

T, F = True, False


def test_coverage_and_risk() -> None:
    answered = np.array([T, T, T, F])
    wrong = np.array([F, T, F, T])
    assert coverage(answered) == 0.75
    assert selective_risk(answered, wrong) == 1 / 3


def test_risk_coverage_curve_and_aurc_by_hand() -> None:
    # 5 rows: one explicit abstention; answered confidences 0.9 right, 0.8 wrong, 0.8 right,
    # 0.6 wrong. Thresholds 0.9, 0.8, 0.6 give coverage 1/5, 3/5, 4/5 and risk 0, 1/3, 2/4.
    answered = np.array([T, T, T, T, F])
    wrong = np.array([F, T, F, T, F])
    conf = np.array([0.9, 0.8, 0.8, 0.6, 0.3])
    curve = risk_coverage_curve(answered, wrong, conf)
    assert [p["threshold"] for p in curve] == [0.9, 0.8, 0.6]
    assert [p["coverage"] for p in curve] == pytest.approx([0.2, 0.6, 0.8])
    assert [p["risk"] for p in curve] == pytest.approx([0.0, 1 / 3, 0.5])
    # AURC = (0 * 0.2 + 1/3 * 0.4 + 0.5 * 0.2) / 0.8 = 0.291666...
    assert aurc(curve) == pytest.approx((0.4 / 3 + 0.1) / 0.8)


def test_best_threshold_by_hand() -> None:
    # answered: 0.9 right twin, 0.8 wrong twin, 0.6 and 0.4 unanswerable (false commits);
    # abstained: one unanswerable (right), one twin (wrong). Exact without threshold 2/6;
    # abstaining below 0.6 -> 3/6; below 0.8 -> 4/6; below 0.9 -> 4/6; always -> 3/6.
    answered = np.array([T, T, T, T, F, F])
    correct_answer = np.array([T, F, F, F, F, F])
    unanswerable = np.array([F, F, T, T, T, F])
    conf = np.array([0.9, 0.8, 0.6, 0.4, 0.5, 0.5])
    best = best_threshold(answered, correct_answer, unanswerable, conf)
    assert best["exact_without_threshold"] == pytest.approx(2 / 6)
    assert best["best_exact"] == pytest.approx(4 / 6)
    assert best["threshold"] == 0.8
    assert best["abstain_always"] is False
