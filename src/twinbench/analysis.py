"""Paired analysis across systems: condition rates with intervals, shifts, sign-flip tests.

For each system (run), with the pair (question) as the cluster and trials pooled:
present abstention = N3 / valid present responses, absent abstention = N5 / valid absent
responses, shift = absent - present; percentile intervals from one cluster bootstrap (a drawn
pair brings both conditions and all trials); a two-sided sign-flip test on the per-pair shift;
Holm's correction across the systems; and one pooled test whose per-pair value is the mean
shift over the systems that answered that pair in both conditions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twinbench.grade import GradedTable
from twinbench.metrics.paired import (
    counts,
    outcome_classes,
    paired_metrics,
    per_cluster_rates,
    trial_medians,
)
from twinbench.stats.bootstrap import percentile_interval, resample_ratios
from twinbench.stats.signflip import holm, sign_flip_test

BOOTSTRAP_RESAMPLES = 10_000
SIGN_FLIP_DRAWS = 20_000


def _per_pair_shift(rates: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(shift per pair, mask of pairs with valid responses in both conditions)."""
    both = (rates["present_valid"] > 0) & (rates["absent_valid"] > 0)
    shift = np.zeros_like(rates["present_valid"])
    shift[both] = (
        rates["absent_abstain"][both] / rates["absent_valid"][both]
        - rates["present_abstain"][both] / rates["present_valid"][both]
    )
    return shift, both


def analyse_system(
    g: GradedTable, seed: int, resamples: int = BOOTSTRAP_RESAMPLES, draws: int = SIGN_FLIP_DRAWS
) -> dict[str, Any]:
    """Everything the paired protocol reports for one system's graded responses."""
    classes = outcome_classes(g)
    n = counts(classes)
    rates = per_cluster_rates(g, classes)
    answered_present = rates["present_valid"] - rates["present_abstain"]
    right_present = np.bincount(
        g.pair[g.answerable & (classes == 1)], minlength=len(rates["present_valid"])
    ).astype(np.float64)
    num = np.vstack([rates["present_abstain"], rates["absent_abstain"], right_present])
    den = np.vstack([rates["present_valid"], rates["absent_valid"], answered_present])
    draws_matrix = resample_ratios(num, den, resamples, np.random.default_rng(seed))
    present = num[0].sum() / den[0].sum()
    absent = num[1].sum() / den[1].sum()
    shift, both = _per_pair_shift(rates)
    test = sign_flip_test(shift[both], draws, np.random.default_rng(seed), seed)
    return {
        "outcome_counts": n,
        "pooled": paired_metrics(n),
        "trials": trial_medians(g, classes),
        "conditions": {
            "questions": int((rates["present_valid"] + rates["absent_valid"] > 0).sum()),
            "present_valid_responses": int(den[0].sum()),
            "absent_valid_responses": int(den[1].sum()),
            "present_abstention": percentile_interval(
                present, draws_matrix[:, 0], resamples, seed
            ).as_dict(),
            "absent_abstention": percentile_interval(
                absent, draws_matrix[:, 1], resamples, seed
            ).as_dict(),
            "shift": percentile_interval(
                absent - present, draws_matrix[:, 1] - draws_matrix[:, 0], resamples, seed
            ).as_dict(),
            "present_accuracy_when_answering": percentile_interval(
                num[2].sum() / den[2].sum(), draws_matrix[:, 2], resamples, seed
            ).as_dict(),
        },
        "shift_test": test.as_dict(),
        "_per_pair": (shift, both),
    }


def analyse(
    tables: dict[str, GradedTable],
    seed: int = 7,
    resamples: int = BOOTSTRAP_RESAMPLES,
    draws: int = SIGN_FLIP_DRAWS,
) -> dict[str, Any]:
    """Per-system analyses, Holm-adjusted p-values across systems, and the pooled test."""
    systems = {name: analyse_system(g, seed, resamples, draws) for name, g in tables.items()}
    adjusted = holm([s["shift_test"]["p_value"] for s in systems.values()])
    for block, p in zip(systems.values(), adjusted, strict=True):
        block["shift_test"]["holm_p"] = p
        block["shift_test"]["correction"] = f"Holm across {len(systems)} systems"
    shifts = np.vstack([s["_per_pair"][0] for s in systems.values()])
    masks = np.vstack([s["_per_pair"][1] for s in systems.values()])
    for block in systems.values():
        del block["_per_pair"]
    answered = masks.sum(axis=0)
    mean_shift = np.where(answered > 0, (shifts * masks).sum(axis=0) / np.maximum(answered, 1), 0)
    pooled = sign_flip_test(mean_shift[answered > 0], draws, np.random.default_rng(seed), seed)
    return {
        "systems": systems,
        "pooled_shift_test": pooled.as_dict(),
        "mean_of_system_shifts": float(
            np.mean([s["conditions"]["shift"]["estimate"] for s in systems.values()])
        ),
        "settings": {
            "bootstrap_resamples": resamples,
            "sign_flip_draws": draws,
            "seed": seed,
            "cluster": "pair (question)",
            "interval": "percentile, 95%",
        },
    }
