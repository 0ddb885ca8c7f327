"""`twinbench report`: grade every run of a folder and write the paired-protocol report.

A report folder holds `benchmark/items.jsonl` and `runs/*/responses.jsonl` (what `twinbench
eval` and `twinbench import arcticqa` write). The report grades each run, computes the
per-family metrics of each system and the paired analysis across systems (condition rates
with cluster-bootstrap intervals, shifts, sign-flip tests, Holm), and writes `metrics.json`
`report.md` and `report.html` (report_page.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twinbench import report_tables as tables
from twinbench.analysis import analyse
from twinbench.documents import Report
from twinbench.gallery import error_examples
from twinbench.graded import ExpectedCache, GradedRun, grade_run
from twinbench.intervals import family_intervals, overall_intervals
from twinbench.jsonl import InputError, dumps_json
from twinbench.metrics.cost import load_cost_table
from twinbench.outputs import write_set
from twinbench.provenance import benchmark_provenance, run_facts
from twinbench.render import fmt
from twinbench.report_page import report_html
from twinbench.runner import load_benchmark
from twinbench.runrecord import load_run


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


def build_report(
    runs: dict[str, GradedRun], seed: int = 7, benchmark: Path | None = None
) -> Report:
    """Every number of the report for already graded runs (each graded once, by the caller),
    with the provenance of the `benchmark` folder they were graded against, if given."""
    costs = load_cost_table()
    graded_tables = {name: graded.table for name, graded in runs.items()}
    items = len(next(iter(runs.values())).items) if runs else 0
    return Report(
        languages={name: list(graded.languages) for name, graded in runs.items()},
        systems={name: graded.metrics(costs) for name, graded in runs.items()},
        family_intervals={name: family_intervals(g, seed) for name, g in graded_tables.items()},
        paired=analyse(graded_tables, seed=seed),
        overall_intervals={name: overall_intervals(g, seed) for name, g in graded_tables.items()},
        benchmark=None if benchmark is None else benchmark_provenance(benchmark, items),
        runs={name: run_facts(graded.record) for name, graded in runs.items()},
        examples={name: error_examples(graded) for name, graded in runs.items()},
    )


def languages_text(report: dict[str, Any]) -> str:
    """Each system's declared languages, e.g. `smollm2: en; router: en, es`."""
    return "; ".join(f"{name}: {', '.join(langs)}" for name, langs in report["languages"].items())


def _md_table(header: list[str], rows: list[list[tables.Cell]], left: int = 1) -> list[str]:
    """A Markdown table; the first `left` columns are left-aligned, the rest right-aligned."""
    align = ["---"] * left + ["---:"] * (len(header) - left)
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(tables.flat(c) for c in row) + " |" for row in rows),
    ]


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: per-family table, condition/shift table, paired metrics."""
    paired = report["paired"]
    settings = paired["settings"]
    lines = ["# twinbench report", ""]
    for broken in tables.broken_runs(report):
        lines += [
            f"> **{broken['name']}: not results.** {tables.status_text(broken)}; its figures "
            "rest on the few valid rows, if any.",
            "",
        ]
    lines += [
        f"Systems: {len(paired['systems'])}. Declared languages: "
        f"{languages_text(report)}. Intervals: {settings['interval']} "
        f"cluster bootstrap over pairs, {settings['bootstrap_resamples']} resamples, seed "
        f"{settings['seed']}. Tests: two-sided sign-flip, {settings['sign_flip_draws']} "
        f"draws, seed {settings['seed']}, Holm across systems.",
        "",
        "## Per family, macro mean first",
        "",
        "The macro mean weighs every family the same; `shortcut` (if present) is the score of "
        "untrained rules that read no meaning. Brackets: 95% cluster-bootstrap intervals "
        "(2,000 resamples); `-`: undefined (nothing to count).",
        "",
        *_md_table(tables.PER_FAMILY_HEADER, tables.per_family_rows(report), left=2),
        "",
        "## Condition-specific abstention and the paired shift",
        "",
        "Rates pool the trials. Shift = absent minus present, in percentage points.",
        "",
        *_md_table(tables.SHIFT_HEADER, tables.shift_rows(paired)),
    ]
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
        "N0 invalid, rejected or error (outside every denominator); N1 answer present, right "
        "answer; N2 present, wrong answer; N3 present, abstained; N4 answer absent, answered; "
        "N5 absent, abstained.",
        "",
        *_md_table(tables.OUTCOME_HEADER, tables.outcome_rows(paired)),
    ]
    return "\n".join(lines) + "\n"


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
