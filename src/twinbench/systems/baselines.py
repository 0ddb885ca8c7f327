"""Built-in baselines: always abstain, always answer (first option or seeded random)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from twinbench.jsonl import InputError
from twinbench.records import ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, response
from twinbench.systems.prompt import answer_choices


class AlwaysAbstain:
    """Abstains on every item, with the item family's code (`family`) or one fixed code."""

    def __init__(self, code: str | None = None) -> None:
        if code not in (None, "family", *ReasonCode):
            raise InputError(
                f"always-abstain: unknown code {code!r}; use family or one of "
                f"{', '.join(ReasonCode)}"
            )
        self.code = None if code in (None, "family") else ReasonCode(code)
        label = self.code.value if self.code else "family"
        self.card = SystemCard(
            name=f"always-abstain:{label}",
            version="1",
            languages=("en",),
            notes=f"abstains with code: {label}",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            code = self.code or req.family or ReasonCode.UNDERSPECIFIED_STATE
            out.append(response(req, self.card.name, abstain=True, reason=code, latency_ms=0.0))
        return out


class AlwaysAnswer:
    """Answers every item: the first option (`first`) or a seeded random one (`random`)."""

    def __init__(self, mode: str | None, seed: int) -> None:
        if mode not in (None, "first", "random"):
            raise InputError(f"always-answer: unknown mode {mode!r}; use first or random")
        self.mode = mode or "first"
        self.seed = seed
        self.card = SystemCard(
            name=f"always-answer:{self.mode}",
            version="1",
            abstains=False,
            notes=f"answers the {self.mode} option",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            choices = answer_choices(req.question)
            index = 0
            if self.mode == "random":
                key = zlib.crc32(req.item_id.encode())
                rng = np.random.default_rng([self.seed, key, req.trial, req.permutation])
                index = int(rng.integers(len(choices)))
            answer = choices[index].answer
            value = (1.0 if answer else 0.0) if isinstance(answer, bool) else answer
            out.append(response(req, self.card.name, abstain=False, answer=value, latency_ms=0.0))
        return out


def always_abstain(arg: str | None, options: SystemOptions) -> AlwaysAbstain:
    """Factory for `always-abstain[:CODE|family]`."""
    return AlwaysAbstain(arg)


def always_answer(arg: str | None, options: SystemOptions) -> AlwaysAnswer:
    """Factory for `always-answer[:first|random]`."""
    return AlwaysAnswer(arg, options.seed)
