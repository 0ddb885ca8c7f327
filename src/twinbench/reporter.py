"""`twinbench report`: grade every run of a folder and write the paired-protocol report.

A report folder holds `benchmark/items.jsonl` and `runs/*/responses.jsonl` (what `twinbench
eval` and `twinbench import arcticqa` write). The report grades each run, computes the
per-family metrics of each system and the paired analysis across systems (condition rates
with cluster-bootstrap intervals, shifts, sign-flip tests, Holm), and writes `metrics.json`
and `report.md`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from twinbench import html, plots
from twinbench.analysis import analyse
from twinbench.documents import Report
from twinbench.graded import ExpectedCache, GradedRun, grade_run
from twinbench.grader import GradedTable, Outcome
from twinbench.jsonl import InputError, dumps_json
from twinbench.metrics.cost import load_cost_table
from twinbench.metrics.pairs import outcome_tallies as tallies
from twinbench.metrics.pairs import pair_counts
from twinbench.outputs import write_set
from twinbench.records import FAMILIES
from twinbench.render import FAMILY_HEADERS, HEADLINE, family_rows, fmt, fmt_p
from twinbench.runner import load_benchmark
from twinbench.runrecord import load_run
from twinbench.stats.bootstrap import ratio_interval


def report_runs(folder: Path, languages: tuple[str, ...] | None = None) -> dict[str, GradedRun]:
    """Every run of a report folder (`benchmark/` and `runs/*/`), graded through `grade_run`
    and named by its folder.

    Each run is graded against the languages its system declares (run.json), unless
    `languages` overrides them for every run.
    """
    return grade_folders([folder], None, languages)


def _run_folders(path: Path) -> list[Path]:
    """The run folders `path` names: itself (a run), or its runs/*/ (a report folder)."""
    if (path / "responses.jsonl").is_file():
        return [path]
    found = sorted(p.parent for p in (path / "runs").glob("*/responses.jsonl"))
    if not found:
        raise InputError(
            f"{path}: neither a run folder (responses.jsonl) nor a folder with runs/*/"
        )
    return found


def benchmark_for(paths: Sequence[Path], given: Path | None = None) -> Path:
    """The benchmark of `paths`: `given`; else a report folder's benchmark/ (or the folder
    itself when it holds manifest.json); else the one every run's run.json names."""
    if given is not None:
        if not (given / "manifest.json").is_file():
            raise InputError(f"{given}: no manifest.json (not a benchmark folder)")
        return given
    for path in paths:
        for candidate in (path / "benchmark", path):
            if (candidate / "manifest.json").is_file():
                return candidate
    named = set()
    for path in paths:
        for run in _run_folders(path):
            record = load_run(run)
            if record is None or not record.benchmark:
                raise InputError(f"{run / 'run.json'}: names no benchmark; pass --benchmark DIR")
            named.add(record.benchmark)
    if len(named) > 1:
        raise InputError(f"the runs name {len(named)} benchmarks; pass --benchmark DIR")
    bench = Path(named.pop())
    if not (bench / "manifest.json").is_file():
        raise InputError(f"{bench}: the benchmark run.json names has no manifest.json")
    return bench


def grade_folders(
    paths: Sequence[Path], benchmark: Path | None, languages: tuple[str, ...] | None = None
) -> dict[str, GradedRun]:
    """Every run `paths` name (run folders, or report folders with runs/*/), graded once
    against `benchmark` (None: `benchmark_for`), named by folder (a repeated name gets its
    parent's name in front)."""
    bench = benchmark_for(paths, benchmark)
    cache = ExpectedCache(load_benchmark(bench))
    out: dict[str, GradedRun] = {}
    for path in paths:
        for run in _run_folders(path):
            name = run.name if run.name not in out else f"{run.parent.name}/{run.name}"
            out[name] = grade_run(cache, run, languages)
    return out


def family_intervals(g: GradedTable, seed: int, resamples: int = 2_000) -> dict[str, Any]:
    """Per family: recall, precision and twin accuracy with cluster-bootstrap intervals."""
    pairs = int(g.cluster.max(initial=-1)) + 1  # the resampling unit (grader.cluster_key)
    out: dict[str, Any] = {}
    for f, family in enumerate(FAMILIES):
        recall_hits, recall_n = tallies(g, f, False, Outcome.CORRECT_ABSTAIN, pairs)
        twin_hits, twin_n = tallies(g, f, True, Outcome.CORRECT_ANSWER, pairs)
        claimed = pair_counts(g.cluster, g.valid & g.abstain & (g.reason == f), pairs)
        block: dict[str, Any] = {}
        for name, num, den in (
            ("recall", recall_hits, recall_n),
            ("precision", recall_hits, claimed),
            ("twin_accuracy", twin_hits, twin_n),
        ):
            if den.sum() > 0:
                rng = np.random.default_rng(seed)
                block[name] = ratio_interval(num, den, resamples, rng, seed).as_dict()
        out[family] = block
    return out


def build_report(runs: dict[str, GradedRun], seed: int = 7) -> Report:
    """Every number of the report for already graded runs (each graded once, by the caller)."""
    costs = load_cost_table()
    tables = {name: graded.table for name, graded in runs.items()}
    return Report(
        languages={name: list(graded.languages) for name, graded in runs.items()},
        systems={name: graded.metrics(costs) for name, graded in runs.items()},
        family_intervals={name: family_intervals(g, seed) for name, g in tables.items()},
        paired=analyse(tables, seed=seed),
    )


def _languages(report: dict[str, Any]) -> str:
    """Each system's declared languages, e.g. `smollm2: en; router: en, es`."""
    return "; ".join(f"{name}: {', '.join(langs)}" for name, langs in report["languages"].items())


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def per_family_rows(report: dict[str, Any]) -> list[list[str]]:
    """Per system: its macro mean over families, then each family (the report's first table)."""
    return [[name, *row] for name, s in report["systems"].items() for row in family_rows(s)]


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: per-family table, condition/shift table, paired metrics."""
    paired = report["paired"]
    settings = paired["settings"]
    lines = [
        "# twinbench report",
        "",
        f"Systems: {len(paired['systems'])}. Declared languages: "
        f"{_languages(report)}. Intervals: {settings['interval']} "
        f"cluster bootstrap over pairs, {settings['bootstrap_resamples']} resamples, seed "
        f"{settings['seed']}. Tests: two-sided sign-flip, {settings['sign_flip_draws']} "
        f"draws, seed {settings['seed']}, Holm across systems.",
        "",
        "## Per family, macro mean first",
        "",
        "The macro mean weighs every family the same; `shortcut` (if present) is the score of "
        "untrained rules that read no meaning.",
        "",
        "| system | family | " + " | ".join(FAMILY_HEADERS) + " |",
        "| --- | --- |" + " ---: |" * len(FAMILY_HEADERS),
        *("| " + " | ".join(row) + " |" for row in per_family_rows(report)),
        "",
        "## Condition-specific abstention and the paired shift",
        "",
        "Rates pool the trials. Shift = absent minus present, in percentage points.",
        "",
        "| System | Present abst. | Absent abst. | Shift [95% CI] (pp) | Sign-flip p | Holm p |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, block in paired["systems"].items():
        c, t = block["conditions"], block["shift_test"]
        if c is None or t is None:
            lines.append(f"| {name} | — | — | no pair valid in both conditions | — | — |")
            continue
        shift = c["shift"]
        lines.append(
            f"| {name} | {_pct(c['present_abstention']['estimate'])} | "
            f"{_pct(c['absent_abstention']['estimate'])} | {100 * shift['estimate']:+.2f} "
            f"[{100 * shift['low']:.1f}, {100 * shift['high']:.1f}] | {fmt_p(t['p_value'])} | "
            f"{fmt_p(t['holm_p'])} |"
        )
    pooled = paired["pooled_shift_test"]
    if pooled is not None and paired["mean_of_system_shifts"] is not None:
        lines += [
            "",
            f"Mean per-pair shift over the systems: {100 * pooled['mean']:+.2f} pp "
            f"(one sign-flip test with the pair as the unit, p = {pooled['p_value']:.1e}; "
            f"{pooled['positive']} pairs up, {pooled['negative']} down, {pooled['zero']} "
            f"unchanged). Mean of the pooled system shifts: "
            f"{100 * paired['mean_of_system_shifts']:+.2f} pp.",
        ]
    lines += [
        "",
        "## Paired metrics",
        "",
        "Pooled over trials, and the median of the per-trial values.",
        "",
        "| System | ACC | Abst. rate | F1_abs | R-Acc | ACC (median) | Abst. rate (median) "
        "| F1_abs (median) | R-Acc (median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = ("acc", "abstention_rate", "f1_abs", "r_acc")
    for name, block in paired["systems"].items():
        pooled_m, median = block["pooled"], block["trials"]["median"]
        cells = [fmt(pooled_m[k]) for k in keys] + [fmt(median[k]) for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Outcome counts",
        "",
        "| System | N0 | N1 | N2 | N3 | N4 | N5 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, block in paired["systems"].items():
        n = block["outcome_counts"]
        lines.append(f"| {name} | " + " | ".join(str(n[f"N{i}"]) for i in range(6)) + " |")
    return "\n".join(lines) + "\n"


def report_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page with its figures drawn inline."""
    summaries, paired = report["systems"], report["paired"]
    overall = [
        [name, *(fmt(s["overall"][m.key]) for m in HEADLINE)] for name, s in summaries.items()
    ]
    shifts = [
        [
            name,
            _pct(b["conditions"]["present_abstention"]["estimate"]),
            _pct(b["conditions"]["absent_abstention"]["estimate"]),
            f"{100 * b['conditions']['shift']['estimate']:+.2f}",
            fmt_p(b["shift_test"]["p_value"]),
            fmt_p(b["shift_test"]["holm_p"]),
        ]
        if b["conditions"] is not None and b["shift_test"] is not None
        else [name, "—", "—", "—", "—", "—"]
        for name, b in paired["systems"].items()
    ]
    settings = paired["settings"]
    return html.page(
        "twinbench report",
        [
            (
                "Per family, macro mean first",
                html.table(["system", "family", *FAMILY_HEADERS], per_family_rows(report)),
            ),
            (
                "Pooled over all items",
                html.table(["system", *(m.label for m in HEADLINE)], overall),
            ),
            (
                "Per-family abstention",
                html.figure(
                    plots.family_bars(report["family_intervals"], "recall", "Abstention recall"),
                    "Recall per family with 95% cluster-bootstrap intervals",
                )
                + html.figure(
                    plots.family_bars(
                        report["family_intervals"], "precision", "Abstention precision"
                    ),
                    "Precision per family with 95% cluster-bootstrap intervals",
                ),
            ),
            (
                "Twin accuracy against recall",
                html.figure(plots.twin_vs_recall(summaries), "One point per system"),
            ),
            (
                "Risk-coverage",
                html.figure(
                    plots.risk_coverage(summaries), "Answering only above a confidence threshold"
                ),
            ),
            (
                "Permutation sensitivity",
                html.figure(
                    plots.permutation_flips(summaries),
                    "Share of items whose abstain decision flips",
                ),
            ),
            (
                "Paired present / absent shift",
                html.table(
                    [
                        "system",
                        "present abst.",
                        "absent abst.",
                        "shift (pp)",
                        "sign-flip p",
                        "Holm p",
                    ],
                    shifts,
                )
                + html.figure(plots.paired_shift(paired), "Abstention with 95% intervals"),
            ),
            (
                "Calibration",
                html.figure(plots.calibration(summaries), "10 equal-width confidence bins"),
            ),
        ],
        note=f"Declared languages: {_languages(report)}. Intervals: "
        f"{settings['interval']} cluster bootstrap over pairs, "
        f"{settings['bootstrap_resamples']} resamples, seed {settings['seed']}; sign-flip "
        f"tests with {settings['sign_flip_draws']} draws; Holm across systems.",
    )


def write_report(folder: Path, report: Report) -> None:
    """metrics.json, report.md and report.html into `folder`, as one set."""
    document = report.to_json()
    write_set(
        folder,
        {
            "metrics.json": dumps_json(document),
            "report.md": report_markdown(document),
            "report.html": report_html(document),
        },
    )
