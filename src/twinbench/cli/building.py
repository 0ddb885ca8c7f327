"""Commands that make benchmarks: build, import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from twinbench.cli.common import (
    JsonFlag,
    app,
    console,
    errors,
    print_json,
    user_errors,
)
from twinbench.jsonl import InputError

if TYPE_CHECKING:
    from rich.progress import TaskID

    from twinbench.build_record import BuildRecord


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
    strict: Annotated[
        bool,
        typer.Option(help="Refuse generator versions whose similarity-audit AUC is over 0.65"),
    ] = False,
    release: Annotated[
        bool,
        typer.Option(
            help="Release build: hold out one generator per family "
            "(reference_ambiguity, false_premise) unless --holdout names others"
        ),
    ] = False,
    errata: Annotated[
        Path | None,
        typer.Option(help="Errata JSON (twinbench.errata/1): listed items' pairs are dropped"),
    ] = None,
    paired: Annotated[
        bool,
        typer.Option(help="Build the paired answer-present/absent benchmark (answer_removal)"),
    ] = False,
    generators: Annotated[
        str,
        typer.Option(
            help="Comma-separated generators to run (default: the default build, which leaves "
            "out retired ones such as rematch, and plugins; docs/corpus.md says why)"
        ),
    ] = "",
    from_manifest: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Rebuild, byte for byte, the benchmark a manifest.json describes (every "
            "option comes from it; refused if the installed twinbench or corpus differ)",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Build a benchmark from the embedded corpus: items.jsonl, manifest.json, holdout/."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from twinbench.build_record import BuildOptions
    from twinbench.builder import RELEASE_HOLDOUT, build_benchmark, parse_ratio, rebuild
    from twinbench.errata import load_errata

    def names(text: str) -> tuple[str, ...]:
        return tuple(name.strip() for name in text.split(",") if name.strip())

    flags = {
        "--seed": seed != 0,
        "--per-generator": per_generator is not None,
        "--ratio": ratio != "1:1",
        "--holdout": bool(holdout),
        "--strict": strict,
        "--release": release,
        "--errata": errata is not None,
        "--paired": paired,
        "--generators": bool(generators),
    }
    options = None
    if from_manifest is not None:
        if any(flags.values()):
            given = ", ".join(flag for flag, set_ in flags.items() if set_)
            raise InputError(f"--from: the manifest fixes every build option; drop {given}")
    else:
        options = BuildOptions(
            seed=seed,
            per_generator=per_generator,
            ratio=parse_ratio(ratio),
            holdout=names(holdout) or (RELEASE_HOLDOUT if release else ()),
            errata=load_errata(errata) if errata is not None else None,
            strict_bound=0.65 if strict else None,
            generators=names(generators) or None,
            paired=paired,
        )
    with Progress(
        TextColumn("{task.description:<22}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=errors,
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done)

        if options is None:
            assert from_manifest is not None
            result = rebuild(from_manifest, out, progress)
        else:
            result = build_benchmark(out, options, progress)
    if as_json:
        print_json(result.manifest)
        return
    _print_build_summary(result.record, out, from_manifest)


@app.command("import")
@user_errors
def import_source(
    kind: Annotated[
        str,
        typer.Argument(
            help="squad2, mnli, xnli, falseqa, arcticqa (datasets); inspect, lm-eval (runs of "
            "those tools); or hf:DIR (a benchmark written by `twinbench export hf`)"
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for items.jsonl + manifest (runs: the run folder)"
        ),
    ],
    path: Annotated[
        str | None,
        typer.Argument(
            help="The official file (arcticqa: the release folder), or hf:NAME[:CONFIG[:SPLIT]] "
            "(a hub dataset or a local datasets folder); inspect: the eval log; lm-eval: the "
            "samples_*.jsonl file"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for distractors and option order")] = 0,
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark",
            "-b",
            help="inspect, lm-eval: the benchmark the run answered (default: the one it names)",
        ),
    ] = None,
) -> None:
    """Import a public dataset, a twinbench benchmark from Parquet, or another tool's run."""
    from twinbench.importing import import_arcticqa, import_dataset

    if kind.startswith("hf:") and path is None:
        from twinbench.integrations.hf import import_hf

        console.print(import_hf(Path(kind[3:]), out).summary(), soft_wrap=True)
        return
    if path is None:
        raise InputError(f"import {kind}: give the file to import")
    if kind in ("inspect", "lm-eval"):
        if kind == "inspect":
            from twinbench.integrations.inspect import import_inspect

            record = import_inspect(Path(path), out, benchmark)
        else:
            from twinbench.integrations.lm_eval import import_lm_eval

            record = import_lm_eval(Path(path), out, benchmark)
        counts = ", ".join(f"{k} {v}" for k, v in (record.counts or {}).items())
        console.print(
            f"imported {record.responses} responses ({counts}) of {record.system.name} into "
            f"{out / 'responses.jsonl'}; grade with twinbench report",
            soft_wrap=True,
        )
        return
    if kind == "arcticqa":
        done = import_arcticqa(Path(path), out)
        console.print(
            f"imported {done.pairs} pairs and {done.runs} runs ({done.responses} responses) "
            f"into {out}"
        )
        return
    done = import_dataset(kind, path, out, seed)
    console.print(
        f"imported {done.pairs} pairs from {path} into {out / 'items.jsonl'} "
        f"({done.items_sha256[:12]}…)"
    )


def _print_build_summary(record: BuildRecord, out: Path, source: Path | None) -> None:
    from rich.table import Table

    table = Table(title=f"benchmark {out} (seed {record.seed})")
    for column in ("generator", "family", "split", "pairs", "dropped", "item/twin length"):
        table.add_column(column, justify="right" if column in ("pairs",) else "left")
    for g in record.generators:
        dropped = ", ".join(f"{k} {v}" for k, v in g.dropped.items() if v) or "-"
        table.add_row(
            g.name, g.family, g.split, str(g.pairs), dropped, f"{g.length_ratio_item_to_twin}"
        )
    console.print(table)
    ratio = record.ratio
    console.print(
        f"answerable:unanswerable = {ratio.answerable}:{ratio.unanswerable}; "
        f"wrote {out / 'items.jsonl'}, {out / 'holdout' / 'items.jsonl'}, "
        f"{out / 'manifest.json'}"
    )
    if source is not None:
        console.print(f"every file has the sha256 that {source} records")
