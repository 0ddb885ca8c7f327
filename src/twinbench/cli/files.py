"""Commands on files: schema, validate, grade."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import (
    LANGUAGES_HELP,
    MAX_PROBLEMS,
    JsonFlag,
    app,
    console,
    errors,
    parse_languages,
    print_json,
    user_errors,
)
from twinbench.jsonl import dumps_json, load_models
from twinbench.outputs import write_set
from twinbench.records import SCHEMAS, Item

DOCUMENTS = (
    "run",
    "metrics",
    "report",
    "compare",
    "rag-passage",
    "rag-case",
    "rag-corpus",
    "rag-retrieval",
)


@app.command()
def schema(
    record: Annotated[str, typer.Argument(help="One of: " + ", ".join((*SCHEMAS, *DOCUMENTS)))],
) -> None:
    """Print the JSON Schema of a record (item, response, manifest, graded), a document
    (run, metrics, report, compare) or a RAG record (rag-passage, rag-case, rag-corpus,
    rag-retrieval, rag-answer, rag-judgement, rag-own-answer: a row `rag score` reads)."""
    from pydantic import BaseModel

    from twinbench.documents import Comparison, Metrics, Report
    from twinbench.rag.answers import ANSWER_SCHEMAS
    from twinbench.rag.records import RAG_SCHEMAS
    from twinbench.runrecord import RunRecord

    documents: dict[str, type[BaseModel]] = {
        "run": RunRecord,
        "metrics": Metrics,
        "report": Report,
        "compare": Comparison,
    }
    from twinbench.rag.retrievers.run import RetrievalRecord
    from twinbench.rag.scoring import OwnAnswer

    rag: dict[str, type[BaseModel]] = {
        "rag-retrieval": RetrievalRecord,
        "rag-own-answer": OwnAnswer,
    }
    known = SCHEMAS | documents | RAG_SCHEMAS | ANSWER_SCHEMAS | rag
    if record not in known:
        errors.print(f"error: unknown record {record!r}; choose one of {', '.join(known)}")
        raise typer.Exit(2)
    console.print_json(json.dumps(known[record].model_json_schema(by_alias=True)))


@app.command()
@user_errors
def validate(
    items: Annotated[Path, typer.Argument(help="items.jsonl to check")],
    responses: Annotated[
        Path | None, typer.Option("--responses", "-r", help="responses.jsonl to check as well")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check an item file (and responses) beyond the schema: ids, twins, options, answers.

    Exit 0 when there is no problem, 2 when there is one (each printed as FILE:LINE: problem).
    """
    from twinbench.validate import validate_files

    problems = validate_files(items, responses)
    if as_json:
        files = [str(items)] + ([str(responses)] if responses else [])
        print_json({"files": files, "ok": not problems, "problems": problems})
        if problems:
            raise typer.Exit(2)
        return
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
    languages: Annotated[str | None, typer.Option(help=LANGUAGES_HELP)] = None,
    costs: Annotated[
        Path | None, typer.Option(help="Cost table (TOML or JSON); default: the published one")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write metrics.json, metrics.md and graded.jsonl into this folder"
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the metrics JSON on stdout, nothing else")
    ] = False,
) -> None:
    """Grade responses exactly against a benchmark and print per-family abstention metrics.

    With --out, writes metrics.json, metrics.md and graded.jsonl (one graded row per
    response: its outcome, whether it is correct, the item's family after the language rule).
    """
    from twinbench.graded import grade_run
    from twinbench.jsonl import dumps_line
    from twinbench.metrics.cost import load_cost_table
    from twinbench.render import metrics_markdown, metrics_table

    records = [item for _, item in load_models(items, Item)]
    graded = grade_run(records, responses, parse_languages(languages) if languages else None)
    summary = graded.metrics(load_cost_table(costs)).to_json()
    if out is not None:
        rows = b"".join(
            dumps_line(row.model_dump(mode="json", by_alias=True)) for row in graded.rows()
        )
        write_set(
            out,
            {
                "metrics.json": dumps_json(summary),
                "metrics.md": metrics_markdown(summary),
                "graded.jsonl": rows.decode("utf-8"),
            },
        )
    if as_json:
        sys.stdout.write(dumps_json(summary))
        return
    console.print(metrics_table(summary))
    if out is not None:
        console.print(f"wrote metrics.json, metrics.md and graded.jsonl into {out}")
