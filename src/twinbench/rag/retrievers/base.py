"""The retriever and reranker protocols, and the one ranking rule they share.

A retriever is built over a corpus (a sequence of Passages) and answers
`search({query_id: text}, k)` with, per query, at most k `(passage_id, score)` pairs ordered
by score descending, ties by passage id ascending (the TREC rule of `twinbench.rag.trec`).
A reranker scores one query against a list of passages; the rerank stage in `rerank.py`
turns any reranker into a retriever over a first stage's candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from twinbench.rag.records import Passage

#: per query, (passage_id, score) in ranked order
Hits = dict[str, list[tuple[str, float]]]


@runtime_checkable
class Retriever(Protocol):
    """Ranks a fixed corpus for each query."""

    name: str

    def params(self) -> dict[str, Any]:
        """Everything that changes the ranking (recorded in the run record)."""
        ...

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        """The top k passages per query, score descending, ties by passage id."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant."""

    name: str
    #: pairs scored so far, and how many of them the model's input limit truncated
    pairs: int
    truncated: int

    def params(self) -> dict[str, Any]:
        """Checkpoint, revision, input limit and anything else that changes scores."""
        ...

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """One relevance score per passage, in the order given."""
        ...


def passage_text(passage: Passage) -> str:
    """The text a retriever sees: the title (when there is one) and the passage text."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def tie_keys(ids: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each id's position in ascending id order (a numeric tie-break key)."""
    keys = np.empty(len(ids), dtype=np.int64)
    keys[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    return keys


def top_k(
    scores: npt.NDArray[np.floating[Any]],
    ids: Sequence[str],
    keys: npt.NDArray[np.int64],
    k: int,
    *,
    positive_only: bool = False,
) -> list[tuple[str, float]]:
    """The k best (id, score) by score descending, ties by id; k is clamped to what exists.

    With `positive_only`, passages scoring 0 or less are dropped (a BM25 zero means no query
    term matched: it is not a ranking, only an enumeration of the corpus).
    """
    candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(ids))
    if k <= 0 or candidates.size == 0:
        return []
    chosen = candidates[np.lexsort((keys[candidates], -scores[candidates]))[:k]]
    return [(ids[i], float(scores[i])) for i in chosen]


def rank_hits(scored: Sequence[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """Sort (id, score) by score descending, ties by id, and keep the first k."""
    return sorted(scored, key=lambda hit: (-hit[1], hit[0]))[: max(k, 0)]
