"""BM25 on a four-passage corpus whose scores a reader can check with pencil and paper.

bm25s's Lucene scoring: score(q, d) = Σ_t idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl)),
idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)); k1 = 1.2, b = 0.75 (Lucene's defaults).
Tokens after lower-casing, English stopwords and Snowball stemming ("cats" → "cat"):
p1 [cat, cat, chase], p2 [dog, chase, cat], p3 [weather, sunni], p0 = p2; N = 4, avgdl = 2.75.
"cats": df 3, idf = ln(1 + 1.5 / 3.5) = 0.356675; |d| = 3 → norm = 0.25 + 0.75 · 3 / 2.75.
"""

from __future__ import annotations

from math import log

import pytest

from twinbench.rag.records import Passage
from twinbench.rag.retrievers import build_retriever
from twinbench.rag.retrievers.base import Retriever
from twinbench.rag.retrievers.bm25 import BM25Retriever

IDF_CAT = log(1 + 1.5 / 3.5)
NORM_3 = 0.25 + 0.75 * 3 / 2.75


def passage(pid: str, text: str) -> Passage:
    return Passage(passage_id=pid, doc_id=pid, text=text, corpus_version="tiny-1")


CORPUS = [
    passage("p1", "Cats cats chase"),
    passage("p2", "dogs chase cats"),
    passage("p3", "weather sunny"),
    passage("p0", "dogs chase cats"),
]


@pytest.fixture(scope="module")
def bm25() -> BM25Retriever:
    return BM25Retriever(CORPUS)


def test_hand_checked_scores_and_ties_by_id(bm25: BM25Retriever) -> None:
    hits = bm25.search({"q": "cats"}, k=10)["q"]
    # p1 has "cat" twice; p0 and p2 are the same text, so they tie and p0 (lower id) goes first;
    # p3 has no query term: a zero score is dropped, so only 3 of the 4 passages come back
    assert [pid for pid, _ in hits] == ["p1", "p0", "p2"]
    assert hits[0][1] == pytest.approx(IDF_CAT * 2 / (2 + 1.2 * NORM_3), rel=1e-6)  # 0.21736
    assert hits[1][1] == pytest.approx(IDF_CAT * 1 / (1 + 1.2 * NORM_3), rel=1e-6)  # 0.15631
    assert hits[1][1] == hits[2][1]


def test_k_is_clamped_and_cuts_after_ties(bm25: BM25Retriever) -> None:
    assert [pid for pid, _ in bm25.search({"q": "cats"}, k=2)["q"]] == ["p1", "p0"]
    assert len(bm25.search({"q": "cats"}, k=1000)["q"]) == 3  # k beyond the corpus: no padding
    assert bm25.search({"q": "cats"}, k=0)["q"] == []


def test_no_known_term_means_no_hits(bm25: BM25Retriever) -> None:
    out = bm25.search({"stop": "the of and", "unknown": "zebra", "w": "sunny WEATHER"}, k=5)
    assert out["stop"] == [] and out["unknown"] == []  # stopwords only / not in the vocabulary
    assert [pid for pid, _ in out["w"]] == ["p3"]


def test_params_record_tokenizer_and_versions(bm25: BM25Retriever) -> None:
    params = bm25.params()
    assert (params["k1"], params["b"], params["passages"]) == (1.2, 0.75, 4)
    assert params["tokenizer"]["stemmer"] == "snowball english"
    assert params["tokenizer"]["stopwords"] == "bm25s en"
    assert params["bm25s"] and params["PyStemmer"]


def test_without_stemming_cats_is_not_cat() -> None:
    plain = BM25Retriever(CORPUS, stemmer=None, stopwords=None)
    assert plain.search({"q": "cat"}, k=5)["q"] == []
    assert plain.params()["tokenizer"]["stemmer"] is None


def test_registry_builds_it_behind_the_protocol() -> None:
    retriever = build_retriever("bm25", CORPUS)
    assert isinstance(retriever, Retriever) and retriever.name == "bm25"
