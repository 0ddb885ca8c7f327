"""The rerank stage, and a user-named sentence-transformers `CrossEncoder` as its scorer.

`RerankedRetriever` takes a first stage's top `pool` passages per query (the candidates, kept
in `candidates` for stage metrics: candidate recall before, nDCG after), scores each
(query, passage) pair with a reranker and keeps the best k, ties by passage id. A reranker can
only reorder what reaches it: a passage the first stage missed stays missed.

`CrossEncoderReranker` loads a checkpoint from a local folder or the Hugging Face cache
(nothing is downloaded), records checkpoint, revision, a weights fingerprint and max_length,
scores raw logits (no sigmoid, so confident pairs do not tie at 1.0), and counts the pairs
whose tokens exceed max_length: the tail of those passages was never seen by the scorer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from twinbench.jsonl import InputError
from twinbench.rag.records import Passage
from twinbench.rag.retrievers.base import Hits, Reranker, Retriever, passage_text, rank_hits

BATCH_SIZE = 32


class RerankedRetriever:
    """A first stage's top `pool` candidates, reordered by a reranker."""

    def __init__(
        self,
        first: Retriever,
        reranker: Reranker,
        passages: Sequence[Passage],
        *,
        pool: int,
    ) -> None:
        self.first = first
        self.reranker = reranker
        self.pool = pool
        self.name = f"{first.name}+rerank"
        self._by_id = {p.passage_id: p for p in passages}
        #: the first stage's ranking that reached the reranker, per query
        self.candidates: Hits = {}

    def params(self) -> dict[str, Any]:
        """The first stage, the pool size and the reranker (with its truncation count)."""
        return {
            "first_stage": {"name": self.first.name, **self.first.params()},
            "pool": self.pool,
            "reranker": {
                "name": self.reranker.name,
                **self.reranker.params(),
                "pairs": self.reranker.pairs,
                "pairs_truncated": self.reranker.truncated,
            },
        }

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        """Rerank each query's candidates and keep the best k."""
        pool = self.first.search(queries, self.pool)
        self.candidates.update(pool)
        hits: Hits = {}
        for qid, text in queries.items():
            ids = [pid for pid, _ in pool[qid]]
            scores = self.reranker.score(text, [self._by_id[pid] for pid in ids]) if ids else []
            hits[qid] = rank_hits(list(zip(ids, scores, strict=True)), k)
        return hits


def weights_fingerprint(folder: Path) -> str | None:
    """sha256 over a local checkpoint's weight files (name and bytes), or None if none."""
    files = sorted(p for p in folder.iterdir() if p.suffix in {".safetensors", ".bin", ".pt"})
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder named by the user, scored on raw logits."""

    name = "cross-encoder"

    def __init__(
        self,
        checkpoint: str,
        *,
        revision: str | None = None,
        max_length: int | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        try:
            from sentence_transformers import CrossEncoder
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise InputError("cross-encoder needs: pip install 'twinbench[embed]'") from None
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        try:
            self.model = CrossEncoder(
                checkpoint,
                revision=revision,
                max_length=max_length,
                device="cpu",
                local_files_only=True,
            )
        except (OSError, ValueError) as exc:
            raise InputError(
                f"--reranker cross-encoder:{checkpoint}: cannot load it offline "
                f"(a local folder or a model in the Hugging Face cache): {exc}"
            ) from None
        self.checkpoint = checkpoint
        self.revision = revision or getattr(self.model.config, "_commit_hash", None)
        local = Path(checkpoint)
        self.fingerprint = weights_fingerprint(local) if local.is_dir() else None
        limit = (  # sentence-transformers 6 calls it max_seq_length, older ones max_length
            getattr(self.model, "max_seq_length", None)
            or getattr(self.model, "max_length", None)
            or getattr(self.model.tokenizer, "model_max_length", None)
        )
        if not isinstance(limit, int) or limit <= 0 or limit > 1_000_000:
            raise InputError(f"--reranker cross-encoder:{checkpoint}: no max_length; give one")
        self.max_length = limit
        self.batch_size = batch_size
        self.pairs = 0
        self.truncated = 0

    def params(self) -> dict[str, Any]:
        """Checkpoint, revision, weights fingerprint, input limit and score type."""
        return {
            "checkpoint": self.checkpoint,
            "revision": self.revision,
            "weights_sha256": self.fingerprint,
            "max_length": self.max_length,
            "score": "raw logit (no activation)",
            "sentence-transformers": version("sentence-transformers"),
        }

    def count_truncated(self, query: str, texts: Sequence[str]) -> int:
        """How many (query, text) pairs are longer than max_length tokens."""
        encoded = self.model.tokenizer(
            [query] * len(texts), list(texts), truncation=False, verbose=False
        )
        return sum(len(ids) > self.max_length for ids in encoded["input_ids"])

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """Raw cross-encoder logits of (query, passage text) pairs."""
        import torch

        texts = [passage_text(p) for p in passages]
        self.pairs += len(texts)
        self.truncated += self.count_truncated(query, texts)
        scores = self.model.predict(
            [(query, text) for text in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            activation_fn=torch.nn.Identity(),
        )
        return [float(s) for s in scores]
