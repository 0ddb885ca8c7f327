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

from twinbench.grader import GradedTable
from twinbench.metrics.paired import (
    counts,
    outcome_classes,
    paired_metrics,
    per_cluster_rates,
    trial_medians,
)
from twinbench.metrics.pairs import pair_counts
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
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """Everything the paired protocol reports for one system's graded responses, and the
    per-pair shifts with the mask of pairs valid in both conditions (for the pooled test).

    `conditions` and `shift_test` are None when no pair has a valid response in both
    conditions (e.g. every response of one side failed): nothing can be estimated."""
    classes = outcome_classes(g)
    n = counts(classes)
    rates = per_cluster_rates(g, classes)
    answered_present = rates["present_valid"] - rates["present_abstain"]
    clusters = len(rates["present_valid"])
    right_present = pair_counts(g.cluster, g.answerable & (classes == 1), clusters)
    num = np.vstack([rates["present_abstain"], rates["absent_abstain"], right_present])
    den = np.vstack([rates["present_valid"], rates["absent_valid"], answered_present])
    shift, both = _per_pair_shift(rates)
    block: dict[str, Any] = {
        "outcome_counts": n,
        "pooled": paired_metrics(n),
        "trials": trial_medians(g, classes),
        "conditions": None,
        "shift_test": None,
    }
    if not both.any() or den[2].sum() == 0:
        return block, shift, both
    draws_matrix = resample_ratios(num, den, resamples, np.random.default_rng(seed))
    present = num[0].sum() / den[0].sum()
    absent = num[1].sum() / den[1].sum()
    test = sign_flip_test(shift[both], draws, np.random.default_rng(seed), seed)
    return (
        block
        | {
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
        },
        shift,
        both,
    )


def analyse(
    tables: dict[str, GradedTable],
    seed: int = 7,
    resamples: int = BOOTSTRAP_RESAMPLES,
    draws: int = SIGN_FLIP_DRAWS,
) -> dict[str, Any]:
    """Per-system analyses, Holm-adjusted p-values across systems, and the pooled test."""
    analysed = {name: analyse_system(g, seed, resamples, draws) for name, g in tables.items()}
    systems = {name: block for name, (block, _, _) in analysed.items()}
    tested = [block for block in systems.values() if block["shift_test"] is not None]
    adjusted = holm([block["shift_test"]["p_value"] for block in tested])
    for block, p in zip(tested, adjusted, strict=True):
        block["shift_test"]["holm_p"] = p
        block["shift_test"]["correction"] = f"Holm across {len(tested)} systems"
    width = max(shift.size for _, shift, _ in analysed.values())
    shifts = np.vstack(
        [np.pad(shift, (0, width - shift.size)) for _, shift, _ in analysed.values()]
    )
    masks = np.vstack([np.pad(both, (0, width - both.size)) for _, _, both in analysed.values()])
    answered = masks.sum(axis=0)
    mean_shift = np.where(answered > 0, (shifts * masks).sum(axis=0) / np.maximum(answered, 1), 0)
    pooled = (
        sign_flip_test(mean_shift[answered > 0], draws, np.random.default_rng(seed), seed)
        if (answered > 0).any()
        else None
    )
    estimates = [b["conditions"]["shift"]["estimate"] for b in tested]
    return {
        "systems": systems,
        "pooled_shift_test": None if pooled is None else pooled.as_dict(),
        "mean_of_system_shifts": float(np.mean(estimates)) if estimates else None,
        "settings": {
            "bootstrap_resamples": resamples,
            "sign_flip_draws": draws,
            "seed": seed,
            "cluster": "pair (question)",
            "interval": "percentile, 95%",
        },
    }
