"""`twinbench rag …`: evidence contracts, retrieval and its metrics, answers, labels, ablations.

Each area registers its commands on `rag_app` from its own module (rag_cases, rag_metrics,
rag_retrieval, rag_ablate, rag_annotation, rag_score), imported at the end of this one.
"""

from __future__ import annotations

import typer

from twinbench.cli.common import app

rag_app = typer.Typer(
    help="RAG evidence evaluation: validate cases, retrieve, score rankings, answer with "
    "citations, score your own assistant's answers, label claims (rules, judges, people) "
    "and ablate.",
    no_args_is_help=True,
)
app.add_typer(rag_app, name="rag")

from twinbench.cli import (  # noqa: E402, F401
    rag_ablate,
    rag_annotation,
    rag_cases,
    rag_metrics,
    rag_retrieval,
    rag_score,
)
