"""`twinbench rag validate`: evidence contracts checked against their corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from twinbench.cli.common import MAX_PROBLEMS, console, errors, user_errors
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
