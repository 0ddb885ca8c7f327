"""Cluster bootstrap, sign-flip test and Holm correction against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from twinbench.metrics.paired import paired_metrics
from twinbench.stats.bootstrap import ratio_interval, resample_ratios
from twinbench.stats.signflip import holm, sign_flip_test


@pytest.mark.parametrize("jitter", [0.0, 1e-9])  # profile kernel, then the general kernel
def test_two_cluster_bootstrap_distribution(jitter: float) -> None:
    # clusters (num, den) = (0, 1) and (1, 1): a resample of 2 takes {0,0}, {0,1}/{1,0}, {1,1},
    # so the ratio is 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4.
    num = np.array([0.0, 1.0 + jitter])
    draws = resample_ratios(num, np.ones(2), 40_000, np.random.default_rng(3))[:, 0]
    values, counts = np.unique(np.round(draws, 6), return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0]
    assert counts / counts.sum() == pytest.approx([0.25, 0.5, 0.25], abs=0.01)


def test_ratio_interval_states_its_method() -> None:
    interval = ratio_interval(
        np.array([1.0, 2, 3, 4]), np.array([4.0, 4, 4, 4]), 2_000, np.random.default_rng(0), seed=0
    )
    assert interval.estimate == 10 / 16
    assert interval.low < interval.estimate < interval.high
    assert interval.as_dict()["method"] == "cluster bootstrap, percentile"
    assert (interval.resamples, interval.seed) == (2_000, 0)


def test_sign_flip_by_hand() -> None:
    # d = (1, 1, 1): of the 8 sign patterns only +++ and --- reach |mean| = 1, so p = 2/8.
    result = sign_flip_test(np.ones(3), 40_000, np.random.default_rng(5), seed=5)
    assert result.p_value == pytest.approx(0.25, abs=0.01)
    assert (result.positive, result.negative, result.zero, result.mean) == (3, 0, 0, 1.0)
    tied = sign_flip_test(np.array([0.5, -0.5, 0.0]), 1_000, np.random.default_rng(5))
    assert tied.p_value == 1.0 and tied.zero == 1


def test_holm_by_hand() -> None:
    # sorted p: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.9, 0.8]) == [1.0, 1.0]


def test_paired_metrics_by_hand() -> None:
    # one trial of ArcticAbstain's Gemini 3.8 Flash (results/trial-metrics.csv, trial 1)
    n = {"N0": 12, "N1": 111, "N2": 61, "N3": 11, "N4": 170, "N5": 23}
    m = paired_metrics(n)
    assert m["acc"] == pytest.approx(134 / 376)  # (N1 + N5) / V
    assert m["precision_abs"] == pytest.approx(23 / 34)  # N5 / (N3 + N5)
    assert m["recall_abs"] == pytest.approx(23 / 254)  # N5 / (N5 + N2 + N4)
    assert m["recall_abs_narrow"] == pytest.approx(23 / 193)  # N5 / (N4 + N5)
    assert m["abstention_rate"] == pytest.approx(34 / 376)
    assert m["r_acc"] == pytest.approx(111 / 342)  # N1 / (N1 + N2 + N4)
    assert m["ssr"] == pytest.approx(145 / 376)  # (N1 + N3 + N5) / V
    assert round(m["f1_abs"], 6) == 0.159722
