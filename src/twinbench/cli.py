"""The `twinbench` command line."""

from __future__ import annotations

import functools
import json
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
console = Console()
errors = Console(stderr=True)
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
) -> None:
    """Build a benchmark from the embedded corpus: items.jsonl, manifest.json, holdout/."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from twinbench.build import build as run_build
    from twinbench.build import parse_ratio
    from twinbench.errata import load_errata

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
    kind: Annotated[str, typer.Argument(help="squad2, mnli, xnli or falseqa")],
    path: Annotated[str, typer.Argument(help="The official file, or hf:NAME[:CONFIG]")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for items.jsonl + manifest")],
    seed: Annotated[int, typer.Option(help="Seed for distractors and option order")] = 0,
) -> None:
    """Import a public dataset from its official file format into item pairs."""
    from twinbench.build import write_benchmark
    from twinbench.importers import IMPORTERS

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


def main() -> None:
    """Entry point for `python -m twinbench`."""
    app()
