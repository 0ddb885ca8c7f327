"""`twinbench rag score`: the user's own assistant's answers, checked, labelled and scored."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import console, stage_bar, user_errors
from twinbench.cli.rag import rag_app
from twinbench.cli.rag_ablate import GENERATOR_HELP, _options, _print_table

#: the per-answer table's header in 80 columns (score.md spells it out)
SHORT_HEADER = ("case", "outcome", "facts", "forb.", "evid.", "cites", "failure labels")


def _print_answers(rows: list[list[str]]) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title="per answer", box=box.SIMPLE_HEAD, pad_edge=False, padding=0)
    for n, column in enumerate(SHORT_HEADER):
        left = n in (0, 1, len(SHORT_HEADER) - 1)
        table.add_column(column, justify="left" if left else "right", no_wrap=True)
    for row in rows:  # one failure label a line: the table fits 80 columns
        table.add_row(*row[:-1], row[-1].replace(", ", "\n"))
    console.print(table)


ANSWERS_HELP = (
    'JSONL, one answer per line: {"case_id": ..., "answer": ..., "cited_ids": [...]} '
    '(optional "passages", "abstained"; see docs/rag.md)'
)


@rag_app.command("score")
@user_errors
def score_command(
    answers: Annotated[Path, typer.Argument(help=ANSWERS_HELP)],
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases", help="The cases the answers answer (default: cases.jsonl of --corpus)"
        ),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="A corpus folder or a passages.jsonl (default: the embedded course notes)",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Folder for score.md, score.json and answers.jsonl"),
    ] = Path("twinbench-rag-score"),
    judge: Annotated[
        str | None,
        typer.Option(
            help="Label claims with this judge (" + GENERATOR_HELP + "; default: the lexical rules)"
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Server URL for openai:MODEL")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (never echoed)")
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="Deadline per judge call, s")] = 60.0,
    scope: Annotated[
        str,
        typer.Option(help="What an inline citation covers: sentence (its sentence) or answer"),
    ] = "sentence",
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON only")] = False,
) -> None:
    """Check, label and score answers your own assistant gave to the cases: per answer the
    required facts stated, the forbidden claims made, whether the evidence was among its
    passages, its citations and claim labels; over all answers the claim-level metrics with
    their counts and 95% intervals.

    Claims are labelled by the published lexical rules unless --judge names a judge. Writes
    score.md, score.json, answers.jsonl (the answers as twinbench.rag.answer/1 records) and,
    with a judge, judgements.jsonl into --out as one set; bad input writes nothing.
    """
    from twinbench.jsonl import InputError, dumps_json
    from twinbench.outputs import write_set
    from twinbench.rag.answers import CitationScope
    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.generation import make_generator
    from twinbench.rag.score_report import answer_cells, metric_cells, score_files, summary_line
    from twinbench.rag.scoring import score_answers

    try:
        citation = CitationScope(scope)
    except ValueError:
        raise InputError(f"--scope {scope!r}: expected sentence or answer") from None
    root = corpus or COURSE_NOTES
    cases_file = cases or (root if root.is_dir() else root.parent) / "cases.jsonl"
    chosen = make_generator(judge, _options(base_url, api_key_env, timeout)) if judge else None
    with stage_bar() as progress:
        scored = score_answers(
            answers, cases_file, root, judge=chosen, scope=citation, progress=progress
        )
    files = score_files(scored)
    write_set(out, files)
    document = scored.document
    if as_json:
        sys.stdout.write(dumps_json(document))
        return
    console.print(summary_line(document), markup=False, highlight=False, soft_wrap=True)
    _print_table(*metric_cells(document), title=f"labels: {document['labelled_by']}")
    _print_answers(answer_cells(document)[1])
    console.print(
        "facts: required facts stated / checked; forb.: forbidden claims made; evid.: the "
        "case's evidence among the answer's passages; cites: supporting / cited links",
        markup=False,
        highlight=False,
    )
    written = ", ".join(sorted(files))
    console.print(f"wrote {written} into {out}", markup=False, highlight=False, soft_wrap=True)
