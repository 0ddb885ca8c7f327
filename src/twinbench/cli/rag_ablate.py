"""`twinbench rag ablate` and `twinbench rag judge`: answers, labels, ablation tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from twinbench.cli.common import JsonFlag, console, errors, print_json, stage_bar, user_errors
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
    human_labels: Annotated[
        Path | None,
        typer.Option(
            help="A `rag package` folder with annotators' labels/*.jsonl: the labeller's "
            "agreement with them (raw, Cohen's kappa) is reported before any figure"
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run RAG variants over the same frozen cases, corpus, generator and budget; print and
    write per-variant counts (supported / unsupported / abstained / error), the useful-answer
    rate, mean and p95 latency of the whole path, and per pair of variants the case
    transitions and a paired sign-flip test.

    Labels come from the published lexical rules unless --judge names a judge; a judge's
    malformed reply leaves its answer unlabelled (counted), never a zero.
    """
    from twinbench.jsonl import InputError
    from twinbench.rag.ablation import run_ablation
    from twinbench.rag.ablation_report import agreement_line, terminal_cells, terminal_pairs
    from twinbench.rag.answering import Budget
    from twinbench.rag.answers import CitationScope
    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.generation import make_generator

    try:
        citation = CitationScope(scope)
    except ValueError:
        raise InputError(f"--scope {scope!r}: expected sentence or answer") from None
    options = _options(base_url, api_key_env, timeout)
    with stage_bar() as progress:
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
            human_labels=human_labels,
            on_step=lambda line: errors.print(line, markup=False, highlight=False),
            progress=progress,
        )
    if as_json:
        print_json(document)
        return
    console.print(agreement_line(document), markup=False, highlight=False)
    _print_table(*terminal_cells(document), title="twinbench rag ablate")
    _print_table(*terminal_pairs(document), title="paired per case (sign-flip test)")
    errors.print(
        f"labels: {document['labelled_by']}; intervals and transitions in ablation.md",
        markup=False,
        highlight=False,
    )
    console.print(f"wrote ablation.md, ablation.json, ablation.html and answers-*.jsonl into {out}")


@rag_app.command("judge")
@user_errors
def judge_command(
    answers: Annotated[Path, typer.Argument(help="answers-*.jsonl written by rag ablate")],
    judge: Annotated[str, typer.Option(help=GENERATOR_HELP)],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for judgements.jsonl and answers.jsonl")
    ],
    folder: Annotated[
        Path | None,
        typer.Option("--corpus", help="The corpus folder with cases.jsonl (default: embedded)"),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL for openai:MODEL")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Deadline per judge call, s")] = 60.0,
) -> None:
    """Label the claims of an answers file with a model judge; save every prompt and raw
    reply (judgements.jsonl) and the answers as the judge labelled them (answers.jsonl).

    A reply that is not JSON, leaves the schema, changes the claim boundaries, cites an
    unknown passage or quotes text its passage does not hold is judge_invalid with its
    problem; a timeout is judge_timeout. Such answers stay unlabelled. Compare the judge with
    human labels (`twinbench rag agreement DIR LABELS --judgements FILE`) before trusting it.
    """
    from collections import Counter

    from twinbench.jsonl import dumps_line, record_dict
    from twinbench.outputs import write_set
    from twinbench.rag.answering import answer_lines, read_answers
    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.generation import make_generator
    from twinbench.rag.judge import judge_answers
    from twinbench.rag.validate import check_cases

    root = folder or COURSE_NOTES
    check = check_cases(root / "cases.jsonl", root)
    if check.problems:
        errors.print(check.problems[0], markup=False, highlight=False)
        raise typer.Exit(2)
    cases = {c.case_id: c for _, c in check.cases}
    rows = read_answers(answers)
    missing = next((a.case_id for a in rows if a.case_id not in cases), None)
    if missing is not None:
        errors.print(f"error: {answers}: case {missing!r} is not in {root}/cases.jsonl")
        raise typer.Exit(2)
    labelled, reviews = judge_answers(
        rows,
        cases,
        check.corpus.passages,
        make_generator(judge, _options(base_url, api_key_env, timeout)),
    )
    lines = b"".join(dumps_line(record_dict(r)) for r in reviews).decode("utf-8")
    write_set(out, {"judgements.jsonl": lines, "answers.jsonl": answer_lines(labelled)})
    counts = Counter(r.problem.value if r.problem else r.status.value for r in reviews)
    shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to judge"
    console.print(
        f"judged {len(reviews)} answers: {shown}; wrote judgements.jsonl, answers.jsonl into {out}"
    )
