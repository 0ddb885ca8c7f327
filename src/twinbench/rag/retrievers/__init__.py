"""Retrievers behind one protocol (`base.Retriever`), built by name.

`bm25` (bm25s), `dense` (the shipped all-MiniLM-L6-v2, exact cosine, cached passage
embeddings), `hybrid` (reciprocal rank fusion of the two) and `hybrid+rerank` (the fused
candidates reordered by a reranker: `minilm`, `smollm2`, or `cross-encoder:CHECKPOINT`).
Optional dependencies are imported only by the retriever that needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from twinbench.jsonl import InputError
from twinbench.rag.records import Passage
from twinbench.rag.retrievers.base import Hits, Reranker, Retriever

RERANKERS = ("minilm", "smollm2", "cross-encoder:CHECKPOINT")


@dataclass(frozen=True)
class RetrieverOptions:
    """Settings that the named retrievers share.

    `candidates`: how deep each hybrid branch goes (a plain hybrid goes at least k deep;
    hybrid+rerank reranks the fused union of the branches' top `candidates`, at most
    2 × candidates passages). `cache`: the embedding cache folder (default: dense.default_cache).
    """

    candidates: int = 20
    reranker: str = "minilm"
    reranker_revision: str | None = None
    reranker_max_length: int | None = None
    rrf_offset: int = 60
    cache: Path | None = None


def _bm25(passages: Sequence[Passage], options: RetrieverOptions) -> Retriever:
    from twinbench.rag.retrievers.bm25 import BM25Retriever

    return BM25Retriever(passages)


def _dense(passages: Sequence[Passage], options: RetrieverOptions) -> Retriever:
    from twinbench.rag.retrievers.dense import DenseRetriever

    return DenseRetriever(passages, cache=options.cache)


def _hybrid_of(
    passages: Sequence[Passage], options: RetrieverOptions, *, grow_to_k: bool
) -> tuple[Retriever, Retriever]:
    from twinbench.rag.retrievers.bm25 import BM25Retriever
    from twinbench.rag.retrievers.dense import DenseRetriever
    from twinbench.rag.retrievers.hybrid import HybridRetriever

    dense = DenseRetriever(passages, cache=options.cache)
    fused = HybridRetriever(
        [BM25Retriever(passages), dense],
        depth=options.candidates,
        grow_to_k=grow_to_k,
        offset=options.rrf_offset,
    )
    return fused, dense


def _hybrid(passages: Sequence[Passage], options: RetrieverOptions) -> Retriever:
    return _hybrid_of(passages, options, grow_to_k=True)[0]


def build_reranker(
    spec: str, options: RetrieverOptions, dense: Callable[[], Retriever]
) -> Reranker:
    """The reranker named `spec`: minilm, smollm2 or cross-encoder:CHECKPOINT."""
    if spec == "minilm":
        from twinbench.rag.retrievers.dense import DenseRetriever
        from twinbench.rag.retrievers.embedded import MiniLMReranker

        model = dense()
        assert isinstance(model, DenseRetriever)
        return MiniLMReranker(model)
    if spec == "smollm2":
        from twinbench.rag.retrievers.embedded import SmolLM2Reranker

        return SmolLM2Reranker()
    if spec.startswith("cross-encoder:") and spec.removeprefix("cross-encoder:"):
        from twinbench.rag.retrievers.rerank import CrossEncoderReranker

        return CrossEncoderReranker(
            spec.removeprefix("cross-encoder:"),
            revision=options.reranker_revision,
            max_length=options.reranker_max_length,
        )
    raise InputError(reranker_problem(spec) or f"--reranker {spec!r}: unknown")


def reranker_problem(spec: str) -> str | None:
    """Why `spec` names no reranker (None when it names one)."""
    if spec in ("minilm", "smollm2") or (
        spec.startswith("cross-encoder:") and spec.removeprefix("cross-encoder:")
    ):
        return None
    return f"--reranker {spec!r}: choose one of {', '.join(RERANKERS)}"


def _hybrid_rerank(passages: Sequence[Passage], options: RetrieverOptions) -> Retriever:
    from twinbench.rag.retrievers.rerank import RerankedRetriever

    fused, dense = _hybrid_of(passages, options, grow_to_k=False)
    reranker = build_reranker(options.reranker, options, lambda: dense)
    return RerankedRetriever(fused, reranker, passages, pool=2 * options.candidates)


#: name → factory(passages, options)
RETRIEVERS: dict[str, Callable[[Sequence[Passage], RetrieverOptions], Retriever]] = {
    "bm25": _bm25,
    "dense": _dense,
    "hybrid": _hybrid,
    "hybrid+rerank": _hybrid_rerank,
}


def build_retriever(
    name: str, passages: Sequence[Passage], options: RetrieverOptions | None = None
) -> Retriever:
    """The retriever `name` indexed over `passages`."""
    options = options or RetrieverOptions()
    if name not in RETRIEVERS:
        raise InputError(f"--retriever {name!r}: choose one of {', '.join(RETRIEVERS)}")
    if options.candidates < 1:
        raise InputError(f"--candidates {options.candidates}: must be at least 1")
    problem = reranker_problem(options.reranker) if name == "hybrid+rerank" else None
    if problem:
        raise InputError(problem)  # before any passage is encoded
    return RETRIEVERS[name](passages, options)


__all__ = [
    "RERANKERS",
    "RETRIEVERS",
    "Hits",
    "Reranker",
    "Retriever",
    "RetrieverOptions",
    "build_reranker",
    "build_retriever",
    "reranker_problem",
]
