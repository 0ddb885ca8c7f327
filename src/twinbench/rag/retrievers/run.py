"""Run a retriever over a corpus folder's cases: a TREC run plus a run record beside it.

`retrieve_folder` builds the retriever (timed as the index stage) and searches one query at a
time, so each query's latency is its own whole path: every branch, fusion and reranking.
Scores are written with 17 significant digits, so the run read back ranks exactly as it was
ranked in memory (score descending, ties by passage id). `write_retrieval` writes RUN (TREC),
RUN's stem + `.json` (the RetrievalRecord) and, for a reranked run, RUN's stem +
`.candidates` + suffix: the first-stage pool that reached the reranker, for stage metrics.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from twinbench.jsonl import InputError, sha256_file, write_json
from twinbench.outputs import output_set
from twinbench.rag.corpus import PASSAGES, Corpus, load_corpus
from twinbench.rag.retrievers import RetrieverOptions, build_retriever
from twinbench.rag.retrievers.base import Hits, Retriever
from twinbench.rag.trec import write_run
from twinbench.rag.validate import load_cases

RETRIEVAL_SCHEMA: Final = "twinbench.rag.retrieval/1"
#: scores are written with 17 significant digits, so a run reads back exactly as ranked
SCORE_FORMAT: Final = ".17g"
#: called after each query with (queries done, queries in all)
Progress = Callable[[int, int], None]
PACKAGES = ("twinbench", "bm25s", "PyStemmer", "sentence-transformers", "torch", "transformers")


class RetrievalRecord(BaseModel):
    """The run record written beside a TREC run: what produced it, on what, how fast."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal["twinbench.rag.retrieval/1"] = Field(RETRIEVAL_SCHEMA, alias="schema")
    retriever: str
    k: int
    tag: str
    parameters: dict[str, Any]
    versions: dict[str, str]
    corpus: dict[str, Any]
    queries: dict[str, Any]
    run_file: str
    candidates_file: str | None = None
    seconds: dict[str, float]
    latency_ms: dict[str, Any]
    created: str


@dataclass
class Retrieval:
    """A finished retrieval: the ranked hits, the reranker's pool (if any), the record."""

    hits: Hits
    candidates: Hits | None
    record: RetrievalRecord


def versions() -> dict[str, str]:
    """Python and the installed versions of the packages a retrieval may use."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def _trec_ids(corpus: Corpus, queries: Mapping[str, str]) -> None:
    """Refuse ids that a whitespace-separated TREC line cannot hold."""
    for kind, ids in (("passage_id", corpus.passages), ("case_id", queries)):
        spaced = next((i for i in ids if any(ch.isspace() for ch in i)), None)
        if spaced is not None:
            raise InputError(f"{kind} {spaced!r} has whitespace; a TREC run cannot hold it")


def latency_summary(per_query: Mapping[str, float]) -> dict[str, Any]:
    """Mean, median, p95 and max of per-query milliseconds, and the values themselves."""
    values = np.asarray(list(per_query.values()), dtype=np.float64)
    if values.size == 0:
        return {"mean": None, "p50": None, "p95": None, "max": None, "per_query": {}}
    return {
        "mean": round(float(values.mean()), 3),
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
        "max": round(float(values.max()), 3),
        "per_query": {qid: round(ms, 3) for qid, ms in per_query.items()},
    }


def search_each(
    retriever: Retriever,
    queries: Mapping[str, str],
    k: int,
    on_query: Progress | None = None,
) -> tuple[Hits, dict[str, float]]:
    """Search one query at a time; return the hits and each query's milliseconds."""
    hits: Hits = {}
    latency: dict[str, float] = {}
    for done, (qid, text) in enumerate(queries.items(), start=1):
        began = time.perf_counter()
        hits.update(retriever.search({qid: text}, k))
        latency[qid] = (time.perf_counter() - began) * 1000
        if on_query is not None:
            on_query(done, len(queries))
    return hits, latency


def retrieve_corpus(
    corpus: Corpus,
    queries: Mapping[str, str],
    name: str,
    *,
    k: int = 40,
    options: RetrieverOptions | None = None,
    on_query: Progress | None = None,
    queries_file: str = "cases.jsonl",
) -> Retrieval:
    """Index `corpus` with retriever `name`, search every query, and describe the run."""
    if k < 1:
        raise InputError(f"--k {k}: must be at least 1")
    options = options or RetrieverOptions()
    _trec_ids(corpus, queries)
    passages = list(corpus.passages.values())
    began = time.perf_counter()
    retriever = build_retriever(name, passages, options)
    indexed = time.perf_counter()
    hits, latency = search_each(retriever, queries, k, on_query)
    searched = time.perf_counter()
    candidates = getattr(retriever, "candidates", None)
    listed = corpus.manifest.files.get(PASSAGES) if corpus.manifest else None
    record = RetrievalRecord(
        retriever=name,
        k=k,
        tag=f"twinbench-{name}",
        parameters={"candidates": options.candidates, **retriever.params()},
        versions=versions(),
        corpus={
            "version": corpus.version,
            "passages": len(passages),
            "sha256": listed or sha256_file(corpus.path),
            "folder": corpus.path.resolve().parent.name,
        },
        queries={"file": queries_file, "count": len(queries)},
        run_file="",
        seconds={"index": round(indexed - began, 3), "search": round(searched - indexed, 3)},
        latency_ms=latency_summary(latency),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return Retrieval(hits, candidates, record)


def retrieve_folder(
    folder: Path,
    name: str,
    *,
    k: int = 40,
    options: RetrieverOptions | None = None,
    on_query: Progress | None = None,
) -> Retrieval:
    """Read a corpus folder (corpus.json, passages.jsonl, cases.jsonl) and retrieve for it."""
    corpus = load_corpus(folder)
    cases = load_cases(folder / "cases.jsonl", folder)
    queries = {case.case_id: case.question for case in cases}
    return retrieve_corpus(corpus, queries, name, k=k, options=options, on_query=on_query)


def output_paths(out: Path) -> tuple[Path, Path, Path]:
    """(run, record, candidates) paths for a run written to `out`."""
    if out.suffix == ".json":
        raise InputError(f"--out {out}: the run is a TREC text file; its record gets .json")
    return (
        out,
        out.with_name(out.stem + ".json"),
        out.with_name(out.stem + ".candidates" + (out.suffix or ".txt")),
    )


def write_retrieval(out: Path, retrieval: Retrieval) -> RetrievalRecord:
    """Write the run, its candidates (if reranked) and the record; return the record."""
    run_path, record_path, pool_path = output_paths(out)
    tag = retrieval.record.tag
    # one output set: a refusal or a kill leaves the old run and record, or the new ones
    with output_set(run_path.parent) as stage:
        write_run(stage(run_path.name), retrieval.hits, tag, SCORE_FORMAT)
        extra: dict[str, Any] = {"run_file": run_path.name}
        if retrieval.candidates is not None:
            candidates = retrieval.candidates
            write_run(stage(pool_path.name), candidates, f"{tag}-candidates", SCORE_FORMAT)
            extra["candidates_file"] = pool_path.name
        record = retrieval.record.model_copy(update=extra)
        write_json(stage(record_path.name), record.model_dump(mode="json", by_alias=True))
    return record
