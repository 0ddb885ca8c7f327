"""`twinbench compare`: paired per-family differences between systems on one benchmark.

For every pair of systems (A, B) the headline comes first: the ideal-pair rate and the pair
score over all families, then per family; then, per family, abstention recall on the family's
unanswerable items and twin accuracy on its twins. Each row is the difference A − B with a
cluster-bootstrap interval (clusters of pairs resampled, both systems together), a two-sided
sign-flip test on the per-cluster differences, and Holm's correction across every comparison
printed.
"""

from __future__ import annotations

from html import escape
from itertools import combinations
from typing import Any

import numpy as np

from twinbench.grader import GradedTable, Outcome
from twinbench.jsonl import InputError
from twinbench.metrics.pairs import outcome_tallies as tallies
from twinbench.metrics.pairs import pair_tallies
from twinbench.records import FAMILIES
from twinbench.render import fmt_p
from twinbench.report_tables import BROKEN_SHARE
from twinbench.stats.bootstrap import percentile_interval, resample_ratios
from twinbench.stats.signflip import holm, sign_flip_test

METRICS = {
    "recall": (False, Outcome.CORRECT_ABSTAIN),
    "twin_accuracy": (True, Outcome.CORRECT_ANSWER),
}
#: the pair metrics, compared first (docs/grading.md, "The headline: the pair")
PAIR_METRICS = ("ideal_pair_rate", "pair_score")
ALL_FAMILIES = "all"


def _tallies(
    g: GradedTable, family: int | None, metric: str, pairs: int
) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) per cluster of `metric` over one family (None: all)."""
    if metric in PAIR_METRICS:
        ideal, score, graded = pair_tallies(g, family, pairs)
        return (ideal if metric == "ideal_pair_rate" else score), graded
    assert family is not None
    answerable, outcome = METRICS[metric]
    return tallies(g, family, answerable, outcome, pairs)


def _cells() -> list[tuple[str, int | None, str]]:
    """(family name, family index or None, metric) in printed order: the pair first."""
    cells: list[tuple[str, int | None, str]] = [(ALL_FAMILIES, None, m) for m in PAIR_METRICS]
    cells += [(family, f, m) for f, family in enumerate(FAMILIES) for m in PAIR_METRICS]
    cells += [(family, f, m) for f, family in enumerate(FAMILIES) for m in METRICS]
    return cells


def compare(
    tables: dict[str, GradedTable],
    seed: int = 7,
    resamples: int = 10_000,
    draws: int = 20_000,
    baseline: str | None = None,
) -> dict[str, Any]:
    """Every (A, B, family, metric) comparison with interval, p and Holm-adjusted p.

    A system with no valid response (every row error, invalid or rejected) is refused
    (InputError naming it and its statuses): a difference with nothing is not a result."""
    warnings = [w for name, g in tables.items() if (w := _broken(name, g))]
    empty = [name for name, g in tables.items() if not g.valid.any()]
    if empty:
        shown = "; ".join(f"{name}: {_statuses(tables[name])}" for name in sorted(empty))
        raise InputError(f"nothing to compare: no valid response from {shown}")
    # clusters of pairs (grader.cluster_key) are the resampling and sign-flip unit
    pairs = max(int(g.cluster.max(initial=-1)) + 1 for g in tables.values())
    rows: list[dict[str, Any]] = []
    for a, b in _pairs(list(tables), baseline):
        for family, f, metric in _cells():
            hits_a, n_a = _tallies(tables[a], f, metric, pairs)
            hits_b, n_b = _tallies(tables[b], f, metric, pairs)
            both = (n_a > 0) & (n_b > 0)
            if not both.any():
                continue
            num = np.vstack([hits_a[both], hits_b[both]])
            den = np.vstack([n_a[both], n_b[both]])
            rng = np.random.default_rng(seed)
            boot = resample_ratios(num, den, resamples, rng)
            est_a, est_b = num[0].sum() / den[0].sum(), num[1].sum() / den[1].sum()
            interval = percentile_interval(est_a - est_b, boot[:, 0] - boot[:, 1], resamples, seed)
            diffs = num[0] / den[0] - num[1] / den[1]
            test = sign_flip_test(diffs, draws, np.random.default_rng(seed), seed)
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "family": family,
                    "metric": metric,
                    "value_a": est_a,
                    "value_b": est_b,
                    "pairs": int(both.sum()),
                    "difference": interval.as_dict(),
                    "test": test.as_dict(),
                }
            )
    for row, adjusted in zip(rows, holm([r["test"]["p_value"] for r in rows]), strict=True):
        row["test"]["holm_p"] = adjusted
    return {
        "schema": "twinbench.compare/1",
        "systems": list(tables),
        "baseline": baseline,
        "warnings": warnings,
        "comparisons": rows,
        "settings": {
            "bootstrap_resamples": resamples,
            "sign_flip_draws": draws,
            "seed": seed,
            "cluster": "pair",
            "correction": f"Holm across {len(rows)} comparisons",
        },
    }


def _pairs(names: list[str], baseline: str | None) -> list[tuple[str, str]]:
    """(A, B) in the order the systems were given; with `baseline`, every other system
    against it (A − baseline)."""
    if baseline is None:
        return list(combinations(names, 2))
    if baseline not in names:
        raise InputError(f"--baseline {baseline!r}: not one of the runs ({', '.join(names)})")
    return [(name, baseline) for name in names if name != baseline]


def _broken(name: str, g: GradedTable) -> str | None:
    """A line for a run whose figures are not results: more than BROKEN_SHARE of its rows
    invalid or error (report.html's banner rule), else None."""
    failed = int(np.isin(g.outcome, (Outcome.INVALID, Outcome.ERROR)).sum())
    if failed <= BROKEN_SHARE * len(g):
        return None
    return (
        f"{name}: {failed} of {len(g)} rows failed ({_statuses(g)}); its differences are "
        "not results"
    )


def _statuses(g: GradedTable) -> str:
    names = {int(o): Outcome(int(o)).name.lower() for o in np.unique(g.outcome)}
    counts = {names[int(o)]: int((g.outcome == o).sum()) for o in np.unique(g.outcome)}
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no rows"


def compare_markdown(result: dict[str, Any]) -> str:
    """The comparison table as Markdown."""
    s = result["settings"]
    lines = [
        "# twinbench compare",
        "",
        f"Differences A − B; 95% percentile intervals from {s['bootstrap_resamples']} "
        f"cluster-bootstrap resamples of pairs (seed {s['seed']}); two-sided sign-flip "
        f"tests ({s['sign_flip_draws']} draws); {s['correction']}.",
        "",
        *(f"**Warning: {w}**\n" for w in result.get("warnings", [])),
        "| A | B | family | metric | A | B | A − B [95% CI] | p | Holm p |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["comparisons"]:
        d = r["difference"]
        lines.append(
            f"| {r['a']} | {r['b']} | {r['family']} | {r['metric']} | "
            f"{r['value_a']:.3f} | {r['value_b']:.3f} | {d['estimate']:+.3f} "
            f"[{d['low']:+.3f}, {d['high']:+.3f}] | {fmt_p(r['test']['p_value'])} | "
            f"{fmt_p(r['test']['holm_p'])} |"
        )
    return "\n".join(lines) + "\n"


def compare_html(result: dict[str, Any]) -> str:
    """The comparison as a self-contained HTML page with a forest plot of the differences."""
    from twinbench import html, plots

    rows = [
        [
            r["a"],
            r["b"],
            r["family"],
            r["metric"],
            f"{r['value_a']:.3f}",
            f"{r['value_b']:.3f}",
            f"{r['difference']['estimate']:+.3f}",
            f"[{r['difference']['low']:+.3f}, {r['difference']['high']:+.3f}]",
            fmt_p(r["test"]["p_value"]),
            fmt_p(r["test"]["holm_p"]),
        ]
        for r in result["comparisons"]
    ]
    s = result["settings"]
    return html.page(
        "twinbench compare",
        [
            (
                "Differences",
                html.table(
                    ["A", "B", "family", "metric", "A", "B", "A − B", "95% CI", "p", "Holm p"], rows
                ),
            ),
            (
                "Forest plot",
                html.figure(
                    plots.forest(result["comparisons"]),
                    "A − B with 95% cluster-bootstrap intervals",
                ),
            ),
        ],
        top="".join(
            f'<div class="banner" role="alert"><strong>{escape(w)}</strong></div>'
            for w in result.get("warnings", [])
        ),
        note=f"{s['bootstrap_resamples']} bootstrap resamples of pairs, seed {s['seed']}; "
        f"sign-flip tests with {s['sign_flip_draws']} draws; {s['correction']}.",
    )
