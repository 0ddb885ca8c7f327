"""`twinbench rag ablate` and `twinbench rag judge`: answers, labels, ablation tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from twinbench.cli.common import console, errors, user_errors
from twinbench.cli.rag import rag_app

GENERATOR_HELP = (
    "smollm2 (embedded, offline) or openai:MODEL (an OpenAI-compatible server at --base-url)"
)


def _options(base_url: str | None, api_key_env: str | None, timeout: float) -> Any:
    from twinbench.systems.base import SystemOptions

    return SystemOptions(base_url=base_url, api_key_env=api_key_env, timeout_s=timeout)


def _print_table(header: list[str], rows: list[list[str]], title: str) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for n, column in enumerate(header):
        table.add_column(column, justify="left" if n == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console.print(table)


@rag_app.command("ablate")
@user_errors
def ablate_command(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder for answers-*.jsonl and ablation.md/json/html"),
    ] = Path("twinbench-ablate"),
    folder: Annotated[
        Path | None,
        typer.Option(
            "--corpus", help="A corpus folder with cases.jsonl (default: the embedded course notes)"
        ),
    ] = None,
    variants: Annotated[
        str,
        typer.Option(
            help="Comma-separated variants: lexical, dense, fused, fused+rerank, "
            "instruction-only, verifier"
        ),
    ] = "lexical,dense,fused,fused+rerank,instruction-only,verifier",
    generator: Annotated[str, typer.Option(help=GENERATOR_HELP)] = "smollm2",
    judge: Annotated[
        str | None,
        typer.Option(
            help="Label claims with this judge (forms as --generator; default: the lexical rules)"
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL for openai:MODEL")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=0.1, help="Deadline per server call, seconds")
    ] = 60.0,
    sample: Annotated[
        int,
        typer.Option(min=0, help="Cases drawn evenly across slices with --seed (0: all cases)"),
    ] = 24,
    repeats: Annotated[
        int, typer.Option(min=1, help="Paired trials per case (needs --temperature above 0)")
    ] = 1,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature (0: greedy)")
    ] = 0.0,
    passages: Annotated[int, typer.Option(min=1, help="Passages per prompt, at most")] = 3,
    budget_words: Annotated[int, typer.Option(min=1, help="Context budget in words")] = 220,
    max_tokens: Annotated[int, typer.Option(min=1, help="New tokens per answer")] = 48,
    scope: Annotated[
        str,
        typer.Option(help="Citation scope: sentence (a citation covers its sentence) or answer"),
    ] = "sentence",
    seed: Annotated[int, typer.Option(help="Seed for the sample, sampling and the tests")] = 0,
    cache: Annotated[
        Path | None, typer.Option(help="Embedding cache folder (default: the user cache)")
    ] = None,
) -> None:
    """Run RAG variants over the same frozen cases, corpus, generator and budget; print and
    write per-variant counts (supported / unsupported / abstained / error), the useful-answer
    rate, mean and p95 latency of the whole path, and per pair of variants the case
    transitions and a paired sign-flip test.

    Labels come from the published lexical rules unless --judge names a judge; a judge's
    malformed reply leaves its answer unlabelled (counted), never a zero.
    """
    from twinbench.jsonl import InputError
    from twinbench.rag.ablation import run_ablation, terminal_cells, terminal_pairs
    from twinbench.rag.answering import Budget
    from twinbench.rag.answers import CitationScope
    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.generation import make_generator

    try:
        citation = CitationScope(scope)
    except ValueError:
        raise InputError(f"--scope {scope!r}: expected sentence or answer") from None
    options = _options(base_url, api_key_env, timeout)
    document = run_ablation(
        folder or COURSE_NOTES,
        out,
        variants=[v.strip() for v in variants.split(",") if v.strip()],
        generator=make_generator(generator, options),
        judge=make_generator(judge, options) if judge else None,
        budget=Budget(passages, budget_words, max_tokens, temperature, citation),
        sample=sample,
        repeats=repeats,
        seed=seed,
        cache=cache,
        on_step=lambda line: errors.print(line, markup=False, highlight=False),
    )
    _print_table(*terminal_cells(document), title="twinbench rag ablate")
    _print_table(*terminal_pairs(document), title="paired per case (sign-flip test)")
    errors.print(
        f"labels: {document['labelled_by']}; intervals and transitions in ablation.md",
        markup=False,
        highlight=False,
    )
    console.print(f"wrote ablation.md, ablation.json, ablation.html and answers-*.jsonl into {out}")
