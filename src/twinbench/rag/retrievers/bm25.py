"""`bm25`: lexical BM25 with bm25s (Lucene scoring), stemming and stopwords recorded.

Text is lower-cased and split with bm25s's pattern (`\\b\\w\\w+\\b`), English stopwords are
dropped and the Snowball English stemmer (PyStemmer) applied, to passages and queries alike.
Every passage with a positive score is ranked exactly (no approximate top-k): ties go to the
lower passage id, k is clamped to the passages that matched, and a passage scoring 0 (no query
term in it) is dropped, so a query with no known term gets no hits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import version
from typing import Any

from twinbench.jsonl import InputError
from twinbench.rag.records import Passage
from twinbench.rag.retrievers.base import Hits, passage_text, tie_keys, top_k

TOKEN_PATTERN = r"(?u)\b\w\w+\b"


class BM25Retriever:
    """Exact BM25 ranking of a corpus; parameters default to Lucene's (k1 1.2, b 0.75)."""

    name = "bm25"

    def __init__(
        self,
        passages: Sequence[Passage],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> None:
        bm25s = _bm25s()
        self.k1, self.b = k1, b
        self.stopwords = stopwords
        self.stemmer_name = stemmer
        self._stemmer = _stemmer(stemmer)
        self._ids = [p.passage_id for p in passages]
        self._keys = tie_keys(self._ids)
        self._index = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._index.index(self._tokenize([passage_text(p) for p in passages]), show_progress=False)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        tokens: list[list[str]] = _bm25s().tokenize(
            texts,
            lower=True,
            token_pattern=TOKEN_PATTERN,
            stopwords=self.stopwords or [],
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        return tokens

    def params(self) -> dict[str, Any]:
        """Scoring and tokenizer settings, with the library versions that implement them."""
        return {
            "scoring": "bm25s lucene",
            "k1": self.k1,
            "b": self.b,
            "tokenizer": {
                "lower": True,
                "pattern": TOKEN_PATTERN,
                "stopwords": f"bm25s {self.stopwords}" if self.stopwords else None,
                "stemmer": f"snowball {self.stemmer_name}" if self.stemmer_name else None,
            },
            "bm25s": version("bm25s"),
            "PyStemmer": version("PyStemmer") if self.stemmer_name else None,
            "passages": len(self._ids),
        }

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        """Passages with a positive BM25 score, best first, ties by id, at most k."""
        hits: Hits = {}
        for qid, text in queries.items():
            token_ids = self._index.get_tokens_ids(self._tokenize([text])[0])
            if not token_ids:
                hits[qid] = []
                continue
            scores = self._index.get_scores_from_ids(token_ids)
            hits[qid] = top_k(scores, self._ids, self._keys, k, positive_only=True)
        return hits


def _bm25s() -> Any:
    try:
        import bm25s  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise InputError("bm25 needs bm25s (a twinbench dependency): pip install bm25s") from None
    return bm25s


def _stemmer(name: str | None) -> Any:
    if name is None:
        return None
    try:
        import Stemmer  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise InputError(
            "bm25 stemming needs PyStemmer (a dependency): pip install PyStemmer"
        ) from None
    try:
        return Stemmer.Stemmer(name)
    except KeyError:
        raise InputError(f"bm25: unknown stemmer language {name!r}") from None
