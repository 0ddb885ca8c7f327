"""The `twinbench` command line."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console

from twinbench.jsonl import InputError, atomic_write, dumps_json, load_models, write_json
from twinbench.records import SCHEMAS, Item

app = typer.Typer(
    help="Build, run and grade benchmarks of unanswerable items with answerable twins.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(emoji=False)
errors = Console(stderr=True, emoji=False)
P = ParamSpec("P")
R = TypeVar("R")
MAX_PROBLEMS = 20


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn InputError into one line on stderr and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            errors.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def parse_languages(text: str) -> tuple[str, ...]:
    """Parse a comma-separated language list such as `en,es`."""
    languages = tuple(part.strip() for part in text.split(",") if part.strip())
    if not languages:
        raise InputError(f"--languages: expected a comma-separated list, got {text!r}")
    return languages


@app.command()
def schema(
    record: Annotated[str, typer.Argument(help="One of: " + ", ".join(SCHEMAS))],
) -> None:
    """Print the JSON Schema of a record type (item, response, manifest, graded)."""
    if record not in SCHEMAS:
        errors.print(f"error: unknown record {record!r}; choose one of {', '.join(SCHEMAS)}")
        raise typer.Exit(2)
    console.print_json(json.dumps(SCHEMAS[record].model_json_schema(by_alias=True)))


@app.command()
@user_errors
def validate(
    items: Annotated[Path, typer.Argument(help="items.jsonl to check")],
    responses: Annotated[
        Path | None, typer.Option("--responses", "-r", help="responses.jsonl to check as well")
    ] = None,
) -> None:
    """Check an item file (and responses) beyond the schema: ids, twins, options, answers."""
    from twinbench.validate import validate_files

    problems = validate_files(items, responses)
    if not problems:
        console.print(f"[green]ok[/green]: {items}" + (f" and {responses}" if responses else ""))
        return
    for line in problems[:MAX_PROBLEMS]:
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    if len(problems) > MAX_PROBLEMS:
        errors.print(f"... {len(problems) - MAX_PROBLEMS} more ({len(problems)} problems in all)")
    raise typer.Exit(2)


@app.command()
@user_errors
def grade(
    items: Annotated[Path, typer.Option("--items", "-i", help="items.jsonl of the benchmark")],
    responses: Annotated[Path, typer.Option("--responses", "-r", help="responses.jsonl")],
    languages: Annotated[
        str, typer.Option(help="Languages the system declares it supports, e.g. en,es")
    ] = "en",
    costs: Annotated[
        Path | None, typer.Option(help="Cost table (TOML or JSON); default: the published one")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write metrics.json and metrics.md into this folder")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the metrics JSON on stdout, nothing else")
    ] = False,
) -> None:
    """Grade responses exactly against a benchmark and print per-family abstention metrics."""
    from twinbench.grade import expected_table, grade_file
    from twinbench.metrics.cost import load_cost_table
    from twinbench.metrics.summary import summarize
    from twinbench.render import metrics_markdown, metrics_table

    declared = parse_languages(languages)
    table = load_cost_table(costs)
    records = [item for _, item in load_models(items, Item)]
    expected = expected_table(records, declared)
    graded = grade_file(responses, expected)
    summary = summarize(graded, table, expected.languages)
    if out is not None:
        write_json(out / "metrics.json", summary)
        with atomic_write(out / "metrics.md") as handle:
            handle.write(metrics_markdown(summary))
    if as_json:
        sys.stdout.write(dumps_json(summary))
        return
    console.print(metrics_table(summary))
    if out is not None:
        console.print(f"wrote {out / 'metrics.json'} and {out / 'metrics.md'}")


@app.command()
@user_errors
def build(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the benchmark into")],
    seed: Annotated[
        int, typer.Option(help="Build seed: fixes partition, choices, option order")
    ] = 0,
    per_generator: Annotated[
        int | None,
        typer.Option(min=1, help="At most this many pairs per generator (default: all sources)"),
    ] = None,
    ratio: Annotated[
        str,
        typer.Option(
            help="Answerable:unanswerable ratio A:U with A >= U; extra twins stay unpaired"
        ),
    ] = "1:1",
    holdout: Annotated[
        str,
        typer.Option(help="Comma-separated generators whose outputs go only to holdout/"),
    ] = "",
    errata: Annotated[
        Path | None,
        typer.Option(help="Errata JSON (twinbench.errata/1): listed items' pairs are dropped"),
    ] = None,
    paired: Annotated[
        bool,
        typer.Option(help="Build the paired answer-present/absent benchmark (answer_removal)"),
    ] = False,
) -> None:
    """Build a benchmark from the embedded corpus: items.jsonl, manifest.json, holdout/."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from twinbench.build import build as run_build
    from twinbench.build import parse_ratio
    from twinbench.errata import load_errata

    if paired:
        from twinbench.build import build_paired

        _print_build_summary(
            build_paired(out, seed=seed, per_generator=per_generator).manifest, out
        )
        return
    parsed_ratio = parse_ratio(ratio)
    loaded_errata = load_errata(errata) if errata is not None else None
    held = tuple(name.strip() for name in holdout.split(",") if name.strip())
    with Progress(
        TextColumn("{task.description:<22}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=errors,
        transient=True,
    ) as bar:
        tasks: dict[str, object] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done)  # type: ignore[arg-type]

        result = run_build(
            out,
            seed=seed,
            per_generator=per_generator,
            ratio=parsed_ratio,
            holdout=held,
            errata=loaded_errata,
            progress=progress,
        )
    _print_build_summary(result.manifest, out)


@app.command("import")
@user_errors
def import_source(
    kind: Annotated[str, typer.Argument(help="squad2, mnli, xnli, falseqa or arcticqa")],
    path: Annotated[
        str, typer.Argument(help="The official file (arcticqa: the release folder), or hf:NAME")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for items.jsonl + manifest")],
    seed: Annotated[int, typer.Option(help="Seed for distractors and option order")] = 0,
) -> None:
    """Import a public dataset from its official file format into item pairs."""
    from twinbench.build import write_benchmark
    from twinbench.importers import IMPORTERS

    if kind == "arcticqa":
        _import_arcticqa(Path(path), out)
        return
    if kind not in IMPORTERS:
        raise InputError(f"unknown source {kind!r}; choose one of {', '.join(IMPORTERS)}")
    if not path.startswith("hf:") and not Path(path).is_file():
        raise InputError(f"{path}: no such file")
    pairs = IMPORTERS[kind](path, seed)
    if not pairs:
        raise InputError(f"{path}: no pairs could be made from this file")
    items = [item for pair in pairs for item in (pair.item, pair.twin)]
    ref = pairs[0].item.generator
    manifest = write_benchmark(
        out,
        items,
        [],
        {
            "seed": seed,
            "source": {"kind": kind, "path": Path(path).name},
            "generators": [
                {
                    "name": ref.name,
                    "version": ref.version,
                    "family": pairs[0].item.family.value,
                    "split": "public",
                    "pairs": len(pairs),
                }
            ],
            "ratio": {"answerable": 1, "unanswerable": 1},
        },
    )
    console.print(
        f"imported {len(pairs)} pairs from {path} into {out / 'items.jsonl'} "
        f"({manifest['files']['items.jsonl'][:12]}…)"
    )


def _import_arcticqa(folder: Path, out: Path) -> None:
    """ArcticAbstain v1: items into out/benchmark, one run per model into out/runs/MODEL."""
    from twinbench.build import write_benchmark
    from twinbench.importers.arcticqa import GENERATOR, import_items, import_responses
    from twinbench.jsonl import write_jsonl

    items = import_items(folder)
    runs = import_responses(folder)
    write_benchmark(
        out / "benchmark",
        items,
        [],
        {
            "seed": 0,
            "source": {"kind": "arcticqa", "path": folder.name},
            "generators": [
                {
                    "name": GENERATOR.name,
                    "version": GENERATOR.version,
                    "family": "contradictory_options",
                    "split": "public",
                    "pairs": len(items) // 2,
                }
            ],
            "ratio": {"answerable": 1, "unanswerable": 1},
        },
    )
    for model, responses in runs.items():
        write_jsonl(out / "runs" / model / "responses.jsonl", responses)
        write_json(
            out / "runs" / model / "run.json",
            {
                "schema": "twinbench.run/1",
                "system": {"name": model, "languages": sorted({i.language for i in items})},
                "status": "imported",
                "responses": len(responses),
                "source": "ArcticAbstain v1 responses.csv",
            },
        )
    console.print(
        f"imported {len(items) // 2} pairs and {len(runs)} runs "
        f"({sum(map(len, runs.values()))} responses) into {out}"
    )


@app.command()
@user_errors
def report(
    folder: Annotated[Path, typer.Argument(help="Folder with benchmark/ and runs/*/")],
    languages: Annotated[
        str | None, typer.Option(help="Declared languages (default: every item language)")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the sign-flip tests")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics JSON only")] = False,
) -> None:
    """Grade every run of a folder; write metrics.json and report.md (paired analysis)."""
    from twinbench.report import build_report, report_markdown, write_report

    declared = parse_languages(languages) if languages else None
    built = build_report(folder, declared, seed)
    write_report(folder, built)
    if as_json:
        sys.stdout.write(dumps_json(built))
        return
    from rich.markdown import Markdown

    console.print(Markdown(report_markdown(built)))
    console.print(f"wrote {folder / 'metrics.json'} and {folder / 'report.md'}")


def _print_build_summary(manifest: dict[str, Any], out: Path) -> None:
    from rich.table import Table

    table = Table(title=f"benchmark {out} (seed {manifest['seed']})")
    for column in ("generator", "family", "split", "pairs", "dropped", "item/twin length"):
        table.add_column(column, justify="right" if column in ("pairs",) else "left")
    for g in manifest["generators"]:
        dropped = ", ".join(f"{k} {v}" for k, v in g["dropped"].items() if v) or "-"
        table.add_row(
            g["name"],
            g["family"],
            g["split"],
            str(g["pairs"]),
            dropped,
            f"{g['length_ratio_item_to_twin']}",
        )
    console.print(table)
    ratio = manifest["ratio"]
    console.print(
        f"answerable:unanswerable = {ratio['answerable']}:{ratio['unanswerable']}; "
        f"wrote {out / 'items.jsonl'}, {out / 'holdout' / 'items.jsonl'}, "
        f"{out / 'manifest.json'}"
    )


def _progress_bar() -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("[progress.data.speed]{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=errors,
    )


def _run_system(
    system: Any, plan: Any, out: Path, seed: int, benchmark: Path | None = None
) -> dict[str, Any]:
    from twinbench.run import run as run_plan

    total = sum(1 for _ in plan.tasks())
    with _progress_bar() as bar:
        task = bar.add_task(f"{system.card.name}", total=total, rate="")
        started = [0.0, 0]

        def progress(sent: int, pending: int) -> None:
            import time

            if not started[0]:
                started[0] = time.perf_counter()
                started[1] = total - pending
            elapsed = time.perf_counter() - started[0]
            rate = f"{sent / elapsed:.2f} items/s" if elapsed > 0 else ""
            bar.update(task, completed=started[1] + sent, rate=rate)

        try:
            return run_plan(system, plan, out, seed=seed, progress=progress, benchmark=benchmark)
        except KeyboardInterrupt:
            bar.stop()
            errors.print(
                f"interrupted: {out / 'responses.jsonl'} is intact; run the same "
                "command again to resume"
            )
            raise typer.Exit(130) from None


def _system_options(**fields: Any) -> Any:
    from twinbench.systems import SystemOptions

    return SystemOptions(**{k: v for k, v in fields.items() if v is not None})


@app.command()
@user_errors
def run(
    benchmark: Annotated[Path, typer.Option("--benchmark", "-b", help="Benchmark folder")],
    system: Annotated[
        str, typer.Option("--system", "-s", help="System spec; see `twinbench systems`")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run folder (responses.jsonl, run.json)")
    ],
    trials: Annotated[int, typer.Option(min=1, help="Repeat every item this many times")] = 1,
    permutations: Annotated[
        int, typer.Option(min=1, help="Option orders per item (order 0 is the stored one)")
    ] = 1,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N items")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Parallel requests (HTTP systems)")] = 4,
    batch_size: Annotated[int, typer.Option(min=1, help="Items per system call")] = 16,
    seed: Annotated[
        int, typer.Option(help="Seed for seeded systems (e.g. always-answer:random)")
    ] = 0,
    base_url: Annotated[str | None, typer.Option(help="Server URL for HTTP systems")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for HTTP systems")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Per-request timeout, seconds")] = 30.0,
) -> None:
    """Run a system on a benchmark; resumable (the same command continues a stopped run)."""
    from twinbench.run import RunPlan, load_benchmark
    from twinbench.systems import make_system

    items = load_benchmark(benchmark, limit)
    options = _system_options(
        base_url=base_url,
        model=model,
        api_key_env=api_key_env,
        timeout_s=timeout,
        concurrency=concurrency,
        seed=seed,
        benchmark_languages=tuple(sorted({i.language for i in items})),
    )
    chosen = make_system(system, options)
    plan = RunPlan(items, trials=trials, permutations=permutations, batch_size=batch_size)
    meta = _run_system(chosen, plan, out, seed, benchmark)
    counts = ", ".join(f"{k} {v}" for k, v in meta["counts"].items())
    console.print(
        f"{chosen.card.name}: {meta['responses']} responses ({counts}) in {out / 'responses.jsonl'}"
    )


EVAL_PAIRS_PER_GENERATOR = 60


def eval_slice(built: Any, per_generator: int) -> list[Any]:
    """The first `per_generator` pairs of every generator (all items when 0), in build order."""
    if not per_generator:
        return list(built.public)
    return [
        item
        for pairs in built.pairs.values()
        for pair in pairs[:per_generator]
        for item in (pair.item, pair.twin)
    ]


@app.command("eval")
@user_errors
def evaluate(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for everything it writes")
    ] = Path("twinbench-out"),
    system: Annotated[str, typer.Option("--system", "-s", help="System spec")] = "smollm2",
    seed: Annotated[int, typer.Option(help="Build seed")] = 0,
    per_generator: Annotated[
        int,
        typer.Option(
            min=0,
            help="Pairs per generator sent to the system (0 = every item of the default build; "
            "the default 60 keeps a 2-core CPU run of smollm2 under 15 minutes)",
        ),
    ] = EVAL_PAIRS_PER_GENERATOR,
    languages: Annotated[
        str | None,
        typer.Option(help="Declared languages (default: what the system's card declares)"),
    ] = None,
) -> None:
    """The main job: build the default benchmark, run the system, grade, write the report.

    The benchmark folder holds the full default build; the system answers the first
    --per-generator pairs of each generator (all of them with --per-generator 0). Run again
    with the same options to resume an interrupted run.
    """
    from twinbench.build import build as run_build
    from twinbench.grade import expected_table, grade_file
    from twinbench.metrics.cost import load_cost_table
    from twinbench.metrics.summary import summarize
    from twinbench.render import metrics_markdown, metrics_table
    from twinbench.run import RunPlan
    from twinbench.systems import make_system

    declared = parse_languages(languages) if languages else None
    bench = out / "benchmark"
    console.print(f"[bold]1/4[/bold] building the benchmark into {bench} (seed {seed})")
    built = run_build(bench, seed=seed)
    items = eval_slice(built, per_generator)
    console.print(
        f"     {len(built.public)} items built; {len(items)} sent to the system "
        f"({per_generator or 'all'} pairs per generator)"
    )
    options = _system_options(
        seed=seed, benchmark_languages=tuple(sorted({i.language for i in items}))
    )
    console.print(f"[bold]2/4[/bold] running {system} (first use of a local model loads it)")
    chosen = make_system(system, options)
    run_dir = out / "runs" / re.sub(r"[^\w.@=+-]+", "_", chosen.card.name)
    _run_system(chosen, RunPlan(items), run_dir, seed, bench)
    console.print(f"[bold]3/4[/bold] grading {run_dir / 'responses.jsonl'}")
    expected = expected_table(items, declared or chosen.card.languages)
    summary = summarize(
        grade_file(run_dir / "responses.jsonl", expected), load_cost_table(), expected.languages
    )
    summary["system_card"] = chosen.card.model_dump(mode="json")
    write_json(run_dir / "metrics.json", summary)
    with atomic_write(run_dir / "metrics.md") as handle:
        handle.write(metrics_markdown(summary))
    console.print(
        f"[bold]4/4[/bold] writing the report: {out / 'metrics.json'}, "
        f"{out / 'report.md'}, {out / 'report.html'}"
    )
    from twinbench.report import build_report, write_report

    write_report(out, build_report(out, declared))
    console.print(metrics_table(summary))


@app.command()
@user_errors
def compare(
    runs: Annotated[list[Path], typer.Argument(help="Two or more run folders (responses.jsonl)")],
    benchmark: Annotated[
        Path | None, typer.Option(help="Benchmark folder (default: the one run.json names)")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for compare.json/.md/.html")] = Path(
        "twinbench-compare"
    ),
    languages: Annotated[str, typer.Option(help="Declared languages")] = "en",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the tests")] = 7,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Paired per-family differences between runs: intervals, sign-flip p, Holm."""
    from twinbench.compare import compare as compare_runs
    from twinbench.compare import compare_html, compare_markdown
    from twinbench.grade import expected_table, grade_file
    from twinbench.run import load_benchmark

    if len(runs) < 2:
        raise InputError("compare needs at least two run folders")
    bench = benchmark or _benchmark_of(runs[0])
    items = load_benchmark(bench)
    table = expected_table(items, parse_languages(languages))
    tables = {}
    for folder in runs:
        name = _run_name(folder)
        if name in tables:
            name = f"{name} ({folder})"
        tables[name] = grade_file(folder / "responses.jsonl", table)
    result = compare_runs(tables, seed=seed)
    write_json(out / "compare.json", result)
    with atomic_write(out / "compare.md") as handle:
        handle.write(compare_markdown(result))
    with atomic_write(out / "compare.html") as handle:
        handle.write(compare_html(result))
    if as_json:
        sys.stdout.write(dumps_json(result))
        return
    from rich.table import Table

    from twinbench.render import fmt_p

    grid = Table(title="paired differences A − B (95% cluster-bootstrap CI; Holm-adjusted p)")
    for column in ("A − B", "family", "metric", "A", "B", "A − B [95% CI]", "p", "Holm p"):
        grid.add_column(
            column, justify="left" if column in ("A − B", "family", "metric") else "right"
        )
    for r in result["comparisons"]:
        d = r["difference"]
        grid.add_row(
            f"{r['a']} − {r['b']}",
            r["family"],
            r["metric"],
            f"{r['value_a']:.3f}",
            f"{r['value_b']:.3f}",
            f"{d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]",
            fmt_p(r["test"]["p_value"]),
            fmt_p(r["test"]["holm_p"]),
        )
    console.print(grid)
    console.print(f"wrote {out / 'compare.json'}, {out / 'compare.md'}, {out / 'compare.html'}")


def _benchmark_of(run_folder: Path) -> Path:
    meta = run_folder / "run.json"
    try:
        named = json.loads(meta.read_text("utf-8")).get("benchmark")
    except (OSError, ValueError):
        named = None
    if not named:
        raise InputError(f"{meta}: names no benchmark; pass --benchmark DIR")
    return Path(named)


def _run_name(run_folder: Path) -> str:
    try:
        meta = json.loads((run_folder / "run.json").read_text("utf-8"))
        return str(meta["system"]["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return run_folder.name


@app.command()
def systems() -> None:
    """List the available systems and their spec syntax."""
    from rich.markup import escape
    from rich.table import Table

    from twinbench.systems import available

    table = Table(title="systems (twinbench run --system SPEC)")
    table.add_column("spec", no_wrap=True)
    table.add_column("what it is")
    for name, description in available().items():
        table.add_row(escape(name), escape(description))
    console.print(table)


audit_app = typer.Typer(help="Audit a benchmark: leakage probes.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")


@audit_app.command("similarity")
@user_errors
def audit_similarity_command(
    benchmark: Annotated[Path, typer.Argument(help="Benchmark folder or items.jsonl")],
    bound: Annotated[float, typer.Option(help="Largest acceptable probe AUC")] = 0.65,
    seed: Annotated[int, typer.Option(help="Seed of the folds' bootstrap")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Can a probe tell items from twins? Cross-validated AUC per generator and feature set."""
    from rich.table import Table

    from twinbench.audit.similarity import audit_similarity
    from twinbench.run import load_benchmark

    result = audit_similarity(load_benchmark(benchmark), bound=bound, seed=seed)
    if as_json:
        sys.stdout.write(dumps_json(result))
        return
    grid = Table(title=f"similarity audit (bound: AUC <= {bound:g}; 95% pair-bootstrap CI)")
    for column in (
        "generator",
        "pairs",
        "length AUC",
        "n-gram AUC",
        "length ratio (median)",
        "verdict",
    ):
        grid.add_column(column, justify="left" if column in ("generator", "verdict") else "right")
    for name, g in result["generators"].items():
        auc = {p: f"{a['auc']:.3f} [{a['low']:.2f}, {a['high']:.2f}]" for p, a in g["auc"].items()}
        verdict = (
            "exempt (language)"
            if g["exempt"]
            else ("ok" if g["passes"] else "OVER: " + ", ".join(g["over_bound"]))
        )
        grid.add_row(
            name,
            str(g["pairs"]),
            auc["length"],
            auc["ngrams"],
            f"{g['length_ratio']['50']:.3f}",
            verdict,
        )
    console.print(grid)


def main() -> None:
    """Entry point for `python -m twinbench`."""
    app()
