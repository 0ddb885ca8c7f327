"""The main job as a library call: build the default benchmark, run a system, grade, report.

`twinbench eval` is a thin layer over :func:`evaluate` (it adds progress bars and prints).
Each run is graded once: the report and the run's own metrics.json come from the same graded
table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from twinbench.builder import BuildResult, balance_families
from twinbench.builder import build as build_benchmark
from twinbench.documents import Metrics, Report
from twinbench.fitted import fitted_fields
from twinbench.jsonl import InputError, dumps_json
from twinbench.outputs import write_set
from twinbench.records import Item
from twinbench.render import metrics_markdown
from twinbench.reporter import build_report, report_runs, write_report
from twinbench.runner import RunPlan
from twinbench.runner import run as run_plan
from twinbench.runrecord import RunRecord
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import System

#: pairs per family `eval` sends by default: a 2-core CPU run of smollm2 stays under 15 minutes
EVAL_PAIRS_PER_FAMILY = 120
#: the reference system run beside every other: rules that read no meaning
SHORTCUT = "shortcut"
#: and the reference that reads only the form: what abstaining on everything gets
ABSTAIN_BY_FORM = "abstain-by-form"
REFERENCES = (SHORTCUT, ABSTAIN_BY_FORM)

RunSystem = Callable[[System, RunPlan, Path, int, Path], RunRecord]


@dataclass(frozen=True)
class Evaluation:
    """What `evaluate` wrote and computed."""

    folder: Path
    #: the first system's run folder (`metrics` are its figures)
    run_folder: Path
    items_built: int
    items_sent: int
    metrics: Metrics
    report: Report
    #: every system's run folder, in the order the systems were given
    run_folders: tuple[Path, ...] = ()


def eval_slice(built: BuildResult, per_family: int) -> list[Item]:
    """`per_family` pairs of every family, spread over its generators (all items when 0)."""
    if not per_family:
        return list(built.public)
    return [
        item
        for pairs in balance_families(built.pairs, per_family).values()
        for pair in pairs
        for item in (pair.item, pair.twin)
    ]


def run_folder_name(system: System) -> str:
    """The folder under runs/ for a system: its card name with path-unsafe characters as _."""
    return re.sub(r"[^\w.@=+-]+", "_", system.card.name)


def _plain_run(system: System, plan: RunPlan, out: Path, seed: int, bench: Path) -> RunRecord:
    return run_plan(system, plan, out, seed=seed, benchmark=bench)


def evaluate(
    out: Path,
    system: str | System | Sequence[str | System] = "smollm2",
    *,
    seed: int = 0,
    per_family: int = EVAL_PAIRS_PER_FAMILY,
    languages: Sequence[str] | None = None,
    on_step: Callable[[str], None] | None = None,
    run_system: RunSystem | None = None,
    options: SystemOptions | None = None,
) -> Evaluation:
    """Build the default benchmark into `out/benchmark`, run `system` (a spec, a System, or a
    sequence of them) and the two references on `per_family` pairs per family into
    `out/runs/`, grade every run once, and write each run's metrics and the report
    (metrics.json, report.md, report.html) into `out`. Rerunning with the same arguments
    resumes an interrupted run.

    `options` carries what `run` takes for HTTP systems (base URL, model, key variable,
    timeout, concurrency, log-probabilities); the seed, the benchmark's languages and the
    form rule are filled in here. `on_step` receives one line per stage; `run_system`
    replaces the plain runner (the CLI passes one that draws a progress bar).
    """
    say = on_step or (lambda _: None)
    runner = run_system or _plain_run
    declared = tuple(languages) if languages else None
    given = [system] if isinstance(system, str) or not isinstance(system, Sequence) else system
    if not given:
        raise ValueError("evaluate needs at least one system")
    bench = out / "benchmark"
    say(f"1/4 building the benchmark into {bench} (seed {seed})")
    built = build_benchmark(bench, seed=seed)
    items = eval_slice(built, per_family)
    say(
        f"    {len(built.public)} items built; {len(items)} sent to each system "
        f"({per_family or 'all'} pairs per family)"
    )
    fitted = (options or SystemOptions()).model_copy(
        update={
            "seed": seed,
            **fitted_fields(items),
        }
    )
    chosen = [make_system(s, fitted) if isinstance(s, str) else s for s in given]
    names = [c.card.name for c in chosen]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"--system: {', '.join(repeated)} given twice (one run folder each)")
    folders = []
    for step, made in enumerate(chosen, start=1):
        where = f" ({step} of {len(chosen)})" if len(chosen) > 1 else ""
        say(f"2/4 running {made.card.name}{where} (first use of a local model loads it)")
        folders.append(out / "runs" / run_folder_name(made))
        runner(made, RunPlan(items), folders[-1], seed, bench)
    for reference in REFERENCES:
        if reference not in names:
            made = make_system(reference, fitted)
            runner(made, RunPlan(items), out / "runs" / reference, seed, bench)
    say(f"3/4 grading every run in {out / 'runs'}")
    graded = report_runs(out, declared)
    metrics = {}
    for folder in folders:
        metrics[folder] = graded[folder.name].metrics()
        summary = metrics[folder].to_json()
        write_set(
            folder, {"metrics.json": dumps_json(summary), "metrics.md": metrics_markdown(summary)}
        )
    say(f"4/4 writing the report into {out}: metrics.json, report.md, report.html")
    report = build_report(graded, benchmark=bench)
    write_report(out, report)
    return Evaluation(
        folder=out,
        run_folder=folders[0],
        items_built=len(built.public),
        items_sent=len(items),
        metrics=metrics[folders[0]],
        report=report,
        run_folders=tuple(folders),
    )
