"""`twinbench rag import beir|scifact` and `twinbench rag retrieve`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from twinbench.cli.common import console, errors, user_errors
from twinbench.cli.rag import rag_app

if TYPE_CHECKING:
    from twinbench.rag.beir import Imported

import_app = typer.Typer(
    help="Import a public retrieval set as a corpus folder (passages, cases, qrels).",
    no_args_is_help=True,
)
rag_app.add_typer(import_app, name="import")

OUT_HELP = "Folder to write passages.jsonl, corpus.json, cases.jsonl and qrels.txt into"
VERSION_HELP = "corpus_version to stamp (default: the folder name and the corpus file's sha256)"


def _report(imported: Imported) -> None:
    console.print(
        f"wrote {imported.out}: {imported.passages} passages, {imported.cases} cases "
        f"({imported.answerable} answerable), {imported.qrels} judgments; corpus "
        f"{imported.version}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@import_app.command("beir")
@user_errors
def import_beir_command(
    folder: Annotated[
        Path, typer.Argument(help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help=OUT_HELP)],
    split: Annotated[str, typer.Option(help="qrels/SPLIT.tsv to import")] = "test",
    version: Annotated[str | None, typer.Option("--version", help=VERSION_HELP)] = None,
) -> None:
    """Import a BEIR folder: one passage per document, one case per judged query."""
    from twinbench.rag.beir import import_beir

    _report(import_beir(folder, out, split=split, version=version))


@import_app.command("scifact")
@user_errors
def import_scifact_command(
    folder: Annotated[Path, typer.Argument(help="SciFact folder: corpus.jsonl and claims")],
    out: Annotated[Path, typer.Option("--out", "-o", help=OUT_HELP)],
    claims: Annotated[
        Path | None,
        typer.Option(help="Claims file (default: claims.jsonl, else claims_dev.jsonl)"),
    ] = None,
    unit: Annotated[
        str, typer.Option(help="abstract (passage id = doc id) or sentence (DOC#sN)")
    ] = "abstract",
    version: Annotated[str | None, typer.Option("--version", help=VERSION_HELP)] = None,
) -> None:
    """Import SciFact: rationales as graded, quoted evidence; NEI claims unanswerable.

    An NEI claim's cited documents become the documents its reviewer checked.
    """
    from twinbench.jsonl import InputError
    from twinbench.rag.scifact import import_scifact

    if unit not in ("abstract", "sentence"):
        raise InputError(f"--unit {unit!r}: choose abstract or sentence")
    chosen: Literal["abstract", "sentence"] = "abstract" if unit == "abstract" else "sentence"
    _report(import_scifact(folder, out, claims=claims, unit=chosen, version=version))


@rag_app.command("retrieve")
@user_errors
def retrieve_command(
    folder: Annotated[Path, typer.Argument(help="Corpus folder with cases.jsonl")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="TREC run to write (record: same stem .json)")
    ],
    retriever: Annotated[str, typer.Option(help="bm25, dense, hybrid or hybrid+rerank")] = "bm25",
    k: Annotated[int, typer.Option("--k", help="Passages kept per query")] = 40,
    candidates: Annotated[
        int, typer.Option(help="Depth of each hybrid branch (the reranker sees their union)")
    ] = 20,
    reranker: Annotated[
        str, typer.Option(help="minilm, smollm2 or cross-encoder:CHECKPOINT (hybrid+rerank)")
    ] = "minilm",
    reranker_revision: Annotated[
        str | None, typer.Option(help="Checkpoint revision of a cross-encoder")
    ] = None,
    reranker_max_length: Annotated[
        int | None, typer.Option(help="Input limit (tokens) of a cross-encoder")
    ] = None,
    cache: Annotated[
        Path | None, typer.Option(help="Embedding cache folder (default: user cache)")
    ] = None,
) -> None:
    """Retrieve for every case of a corpus folder; write a TREC run and its run record."""
    from rich.progress import Progress

    from twinbench.rag.retrievers import RetrieverOptions
    from twinbench.rag.retrievers.run import output_paths, retrieve_folder, write_retrieval

    output_paths(out)  # refuse a bad --out before any work
    options = RetrieverOptions(
        candidates=candidates,
        reranker=reranker,
        reranker_revision=reranker_revision,
        reranker_max_length=reranker_max_length,
        cache=cache,
    )
    with Progress(console=errors, transient=True) as progress:
        task = progress.add_task(f"{retriever}: reading and indexing", total=None)

        def step(done: int, total: int) -> None:
            progress.update(
                task, completed=done, total=total, description=f"{retriever}: searching"
            )

        retrieval = retrieve_folder(folder, retriever, k=k, options=options, on_query=step)
    record = write_retrieval(out, retrieval)
    seconds, latency = record.seconds, record.latency_ms
    console.print(
        f"wrote {out} ({record.queries['count']} queries, k {k}) and "
        f"{out.with_name(out.stem + '.json').name}"
        + (f" and {record.candidates_file}" if record.candidates_file else "")
        + f"; index {seconds['index']:.2f} s, search {seconds['search']:.2f} s, "
        f"{latency['mean']} ms/query mean, p95 {latency['p95']} ms",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
