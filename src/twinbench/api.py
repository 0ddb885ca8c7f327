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

from twinbench.builder import BuildResult
from twinbench.builder import build as _build
from twinbench.comparison import compare as _compare
from twinbench.documents import Comparison, Metrics, Report
from twinbench.evaluation import EVAL_PAIRS_PER_FAMILY, Evaluation
from twinbench.evaluation import evaluate as _evaluate
from twinbench.graded import ExpectedCache, GradedRun, grade_run
from twinbench.jsonl import InputError, load_models
from twinbench.metrics.cost import load_cost_table
from twinbench.records import Item
from twinbench.reporter import build_report, report_runs, write_report
from twinbench.runner import RunPlan, load_benchmark
from twinbench.runner import run as _run
from twinbench.runrecord import RunRecord, load_run
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import System

PathLike = str | Path


def build(
    out: PathLike,
    *,
    seed: int = 0,
    per_generator: int | None = None,
    generators: Sequence[str] | None = None,
    holdout: Sequence[str] = (),
) -> BuildResult:
    """Build a benchmark from the embedded corpus into `out` (items.jsonl, holdout/,
    manifest.json), with fixed, equal family shares; the same arguments give the same bytes."""
    return _build(
        Path(out), seed=seed, per_generator=per_generator, generators=generators, holdout=holdout
    )


def _items(benchmark: PathLike | Sequence[Item]) -> list[Item]:
    if isinstance(benchmark, str | Path):
        return load_benchmark(Path(benchmark))
    return list(benchmark)


def run(
    system: System | str,
    benchmark: PathLike,
    out: PathLike,
    *,
    trials: int = 1,
    permutations: int = 1,
    limit: int | None = None,
    batch_size: int = 16,
    seed: int = 0,
    options: SystemOptions | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunRecord:
    """Send a benchmark folder's public items to `system` and append its responses to
    `out/responses.jsonl` (resumable: the same call continues a stopped run).

    `system` is a spec (see `twinbench systems`) or a System: any object with a `card`
    (SystemCard) and `respond(requests) -> list[Response]`.
    """
    items = load_benchmark(Path(benchmark), limit)
    chosen = (
        make_system(system, options or SystemOptions(seed=seed))
        if isinstance(system, str)
        else system
    )
    plan = RunPlan(items, trials=trials, permutations=permutations, batch_size=batch_size)
    return _run(chosen, plan, Path(out), seed=seed, progress=progress, benchmark=Path(benchmark))


def grade(
    benchmark: PathLike | Sequence[Item],
    responses: PathLike,
    *,
    languages: Sequence[str] | None = None,
    costs: PathLike | None = None,
) -> Metrics:
    """Every metric of one run: `responses` is a run folder or a responses.jsonl file;
    `benchmark` a benchmark folder, an items.jsonl file or the items themselves.

    The declared languages are `languages` if given, else the run's system card, else `en`.
    """
    if isinstance(benchmark, str | Path) and Path(benchmark).is_file():
        items = [item for _, item in load_models(Path(benchmark), Item)]
    else:
        items = _items(benchmark)
    graded = graded_run(items, responses, languages=languages)
    return graded.metrics(load_cost_table(None if costs is None else Path(costs)))


def graded_run(
    items: Sequence[Item], responses: PathLike, *, languages: Sequence[str] | None = None
) -> GradedRun:
    """One run graded row by row (for graded rows or custom metrics)."""
    return grade_run(items, Path(responses), tuple(languages) if languages else None)


def report(
    folder: PathLike, *, languages: Sequence[str] | None = None, seed: int = 7, write: bool = True
) -> Report:
    """Grade every run of `folder` (benchmark/ and runs/*/) once and compute the report;
    with `write`, also write metrics.json, report.md and report.html into it."""
    built = build_report(report_runs(Path(folder), tuple(languages) if languages else None), seed)
    if write:
        write_report(Path(folder), built)
    return built


def compare(
    runs: Sequence[PathLike],
    *,
    benchmark: PathLike | None = None,
    languages: Sequence[str] | None = None,
    seed: int = 7,
) -> Comparison:
    """Paired per-family differences between two or more runs of one benchmark (the one the
    first run's run.json names unless `benchmark` is given)."""
    folders = [Path(r) for r in runs]
    if len(folders) < 2:
        raise InputError("compare needs at least two run folders")
    bench = Path(benchmark) if benchmark is not None else _benchmark_of(folders[0])
    cache = ExpectedCache(load_benchmark(bench))
    override = tuple(languages) if languages else None
    tables = {}
    for folder in folders:
        record = load_run(folder)
        name = record.system.name if record is not None else folder.name
        if name in tables:
            name = f"{name} ({folder})"
        tables[name] = grade_run(cache, folder, override).table
    return Comparison.model_validate(_compare(tables, seed=seed))


def _benchmark_of(run_folder: Path) -> Path:
    record = load_run(run_folder)
    if record is None or not record.benchmark:
        raise InputError(f"{run_folder / 'run.json'}: names no benchmark; pass --benchmark DIR")
    return Path(record.benchmark)


def evaluate(
    out: PathLike = "twinbench-out",
    system: System | str = "smollm2",
    *,
    seed: int = 0,
    per_family: int = EVAL_PAIRS_PER_FAMILY,
    languages: Sequence[str] | None = None,
) -> Evaluation:
    """The main job: build the default benchmark, run `system` and the shortcut reference,
    grade each run once, and write every run's metrics and the report into `out`."""
    return _evaluate(Path(out), system, seed=seed, per_family=per_family, languages=languages)
