"""Built-in baselines: always abstain, always answer (first option or seeded random), and
abstain-by-form, the reference for what reading no meaning gets on the headline."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from twinbench.fitted import latin_script
from twinbench.jsonl import InputError
from twinbench.records import ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, response
from twinbench.systems.prompt import answer_choices


class AlwaysAbstain:
    """Abstains on every item with one fixed code (default `underspecified_state`).

    It cannot use "the item's family": a system never sees the label it is graded on.
    """

    def __init__(self, code: str | None = None) -> None:
        if code == "family":
            raise InputError(
                "always-abstain:family is gone: systems never see an item's family; "
                f"use always-abstain:CODE with one of {', '.join(ReasonCode)}"
            )
        if code not in (None, *ReasonCode):
            raise InputError(
                f"always-abstain: unknown code {code!r}; use one of {', '.join(ReasonCode)}"
            )
        self.code = ReasonCode(code or ReasonCode.UNDERSPECIFIED_STATE)
        self.card = SystemCard(
            name=f"always-abstain:{self.code.value}",
            version="2",
            languages=("en",),
            notes=f"abstains with code: {self.code.value}",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        return [
            response(req, self.card.name, abstain=True, reason=self.code, latency_ms=0.0)
            for req in requests
        ]


def shown_key(request: Request) -> int:
    """A 64-bit digest of what a request shows (state, question, trial, permutation).

    Randomness keyed by it is the same in every run: `Request.item_id` is a per-run token.
    """
    shown = (request.state, request.question.model_dump_json(), request.trial, request.permutation)
    digest = hashlib.blake2b("\0".join(map(str, shown)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class AlwaysAnswer:
    """Answers every item: the first option (`first`) or a seeded random one (`random`).

    `random` draws from the seed and what the request shows (`shown_key`), never its id.
    """

    def __init__(self, mode: str | None, seed: int) -> None:
        if mode not in (None, "first", "random"):
            raise InputError(f"always-answer: unknown mode {mode!r}; use first or random")
        self.mode = mode or "first"
        self.seed = seed
        self.card = SystemCard(
            name=f"always-answer:{self.mode}",
            version="2",
            abstains=False,
            notes=f"answers the {self.mode} option",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            choices = answer_choices(req.question)
            index = 0
            if self.mode == "random":
                rng = np.random.default_rng([self.seed, shown_key(req)])
                index = int(rng.integers(len(choices)))
            answer = choices[index].answer
            value = (1.0 if answer else 0.0) if isinstance(answer, bool) else answer
            out.append(response(req, self.card.name, abstain=False, answer=value, latency_ms=0.0))
        return out


class AbstainByForm:
    """Abstains on every item; the code is `out_of_language` for a state in another script
    than Latin, else the code `form_codes` fitted for the question type. It never reads the
    state's words or the question's, so it tells no item from its twin: ideal pairs 0 by
    construction, and what it scores on recall or a cost score is what the form gives away."""

    def __init__(self, codes: dict[str, str]) -> None:
        self.codes = {kind: ReasonCode(code) for kind, code in codes.items()}
        shown = ", ".join(f"{kind}->{code.value}" for kind, code in self.codes.items())
        self.card = SystemCard(
            name="abstain-by-form",
            version="1",
            languages=("en",),
            notes=f"abstains always; non-Latin script -> out_of_language, else {shown or '-'}",
        )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            code = (
                self.codes.get(req.question.type, ReasonCode.UNDERSPECIFIED_STATE)
                if latin_script(req.state)
                else ReasonCode.OUT_OF_LANGUAGE
            )
            out.append(response(req, self.card.name, abstain=True, reason=code, latency_ms=0.0))
        return out


def abstain_by_form(arg: str | None, options: SystemOptions) -> AbstainByForm:
    """Factory for `abstain-by-form` (its rule comes from `options.form_codes`)."""
    if arg:
        raise InputError("abstain-by-form takes no argument")
    return AbstainByForm(options.form_codes)


def always_abstain(arg: str | None, options: SystemOptions) -> AlwaysAbstain:
    """Factory for `always-abstain[:CODE]`."""
    return AlwaysAbstain(arg)


def always_answer(arg: str | None, options: SystemOptions) -> AlwaysAnswer:
    """Factory for `always-answer[:first|random]`."""
    return AlwaysAnswer(arg, options.seed)
