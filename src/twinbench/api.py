"""The public Python API: every step of the job as a typed function; the CLI is a layer on it.

    import twinbench
    bench = twinbench.build("bench", per_generator=4)
    record = twinbench.run(MySystem(), "bench", "runs/mine")
    metrics = twinbench.grade("bench", "runs/mine")
    print(metrics.family("out_of_language").recall)

`build` writes a benchmark folder, `run` sends it to a system (a spec such as "smollm2" or any
object with a `card` and a `respond` method), `grade` grades one run, `report` every run of a
folder, `compare` two or more runs, and `evaluate` does the whole job (docs/api.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from twinbench import arguments as arg
from twinbench.arguments import ItemsArg, LanguagesArg, PathArg, ResponsesArg, SystemArg
from twinbench.builder import BuildResult
from twinbench.builder import build as _build
from twinbench.comparison import compare as _compare
from twinbench.documents import Comparison, Metrics, Report
from twinbench.evaluation import EVAL_PAIRS_PER_FAMILY, Evaluation
from twinbench.evaluation import evaluate as _evaluate
from twinbench.graded import ExpectedCache, GradedRun, grade_run
from twinbench.jsonl import InputError
from twinbench.metrics.cost import load_cost_table
from twinbench.reporter import benchmark_for, build_report, grade_folders, write_report
from twinbench.runner import RunPlan
from twinbench.runner import run as _run
from twinbench.runrecord import RunRecord, load_run
from twinbench.systems import SystemOptions, make_system


def build(
    out: PathArg,
    *,
    seed: int = 0,
    per_generator: int | None = None,
    generators: Sequence[str] | None = None,
    holdout: Sequence[str] = (),
) -> BuildResult:
    """Build a benchmark from the embedded corpus into `out` (items.jsonl, holdout/,
    manifest.json), with fixed, equal family shares; the same arguments give the same bytes."""
    folder = arg.path(out, "build: out")
    return _build(
        folder, seed=seed, per_generator=per_generator, generators=generators, holdout=holdout
    )


def run(
    system: SystemArg,
    benchmark: ItemsArg,
    out: PathArg,
    *,
    trials: int = 1,
    permutations: int = 1,
    limit: int | None = None,
    batch_size: int = 16,
    seed: int = 0,
    options: SystemOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunRecord:
    """Send a benchmark's public items to `system` and append its responses to
    `out/responses.jsonl` (resumable: the same call continues a stopped run).

    `system` is a spec (see `twinbench systems`) or a System: any object with a `card`
    (SystemCard) and `respond(requests) -> list[Response]`. `benchmark` is a benchmark folder,
    an items.jsonl file or the items themselves (run.json then names no benchmark).
    """
    chosen = arg.system(system, "run: system")
    folder = arg.path(out, "run: out")
    items = arg.items(benchmark, "run: benchmark", limit)
    if isinstance(chosen, str):
        chosen = make_system(chosen, options or SystemOptions(seed=seed))
    plan = RunPlan(items, trials=trials, permutations=permutations, batch_size=batch_size)
    source = Path(benchmark) if arg.is_path(benchmark) else None
    return _run(chosen, plan, folder, seed=seed, progress=progress, benchmark=source)


def grade(
    benchmark: ItemsArg,
    responses: ResponsesArg,
    *,
    languages: LanguagesArg = None,
    costs: PathArg | None = None,
) -> Metrics:
    """Every metric of one run: `responses` is a run folder, a responses.jsonl file or the
    responses themselves; `benchmark` a benchmark folder, an items.jsonl file or the items.

    The declared languages are `languages` if given, else the run's system card, else `en`.
    """
    table = None if costs is None else arg.existing(costs, "grade: costs", arg.COSTS)
    graded = _graded(benchmark, responses, languages, "grade")
    return graded.metrics(load_cost_table(table))


def graded_run(
    items: ItemsArg, responses: ResponsesArg, *, languages: LanguagesArg = None
) -> GradedRun:
    """One run graded row by row (for graded rows or custom metrics); the arguments are
    those of `grade`."""
    return _graded(items, responses, languages, "graded_run", "items")


def _graded(
    items: ItemsArg,
    responses: ResponsesArg,
    languages: LanguagesArg,
    caller: str,
    items_name: str = "benchmark",
) -> GradedRun:
    chosen = arg.items(items, f"{caller}: {items_name}")
    run_arg = arg.responses(responses, f"{caller}: responses")
    return grade_run(chosen, run_arg, arg.languages(languages, f"{caller}: languages"))


def report(
    folder: PathArg, *, languages: LanguagesArg = None, seed: int = 7, write: bool = True
) -> Report:
    """Grade every run of `folder` (benchmark/ and runs/*/) once and compute the report;
    with `write`, also write metrics.json, report.md and report.html into it."""
    where = arg.existing(folder, "report: folder", arg.FOLDER)
    declared = arg.languages(languages, "report: languages")
    bench = benchmark_for([where])
    built = build_report(grade_folders([where], bench, declared), seed, bench)
    if write:
        write_report(where, built)
    return built


def compare(
    runs: Sequence[PathArg],
    *,
    benchmark: ItemsArg | None = None,
    languages: LanguagesArg = None,
    seed: int = 7,
    baseline: str | None = None,
) -> Comparison:
    """Paired per-family differences between two or more runs of one benchmark (the one the
    first run's run.json names unless `benchmark` is given), in the order the runs are given;
    with `baseline` (a system name), every other run against it."""
    given = arg.runs(runs, "compare: runs")
    if len(given) < 2:
        raise InputError("compare needs at least two run folders")
    folders = [p if p.is_dir() else p.parent for p in given]
    bench = benchmark if benchmark is not None else _benchmark_of(folders[0])
    cache = ExpectedCache(arg.items(bench, "compare: benchmark"))
    override = arg.languages(languages, "compare: languages")
    tables = {}
    for run_path, folder in zip(given, folders, strict=True):
        record = load_run(folder)
        name = record.system.name if record is not None else folder.name
        if name in tables:
            name = f"{name} ({folder})"
        tables[name] = grade_run(cache, run_path, override).table
    return Comparison.model_validate(_compare(tables, seed=seed, baseline=baseline))


def _benchmark_of(run_folder: Path) -> Path:
    record = load_run(run_folder)
    if record is None or not record.benchmark:
        raise InputError(f"{run_folder / 'run.json'}: names no benchmark; pass --benchmark DIR")
    return Path(record.benchmark)


def evaluate(
    out: PathArg = "twinbench-out",
    system: SystemArg = "smollm2",
    *,
    seed: int = 0,
    per_family: int = EVAL_PAIRS_PER_FAMILY,
    languages: LanguagesArg = None,
) -> Evaluation:
    """The main job: build the default benchmark, run `system` and the shortcut reference,
    grade each run once, and write every run's metrics and the report into `out`."""
    folder = arg.path(out, "evaluate: out")
    chosen = arg.system(system, "evaluate: system")
    declared = arg.languages(languages, "evaluate: languages")
    return _evaluate(folder, chosen, seed=seed, per_family=per_family, languages=declared)
