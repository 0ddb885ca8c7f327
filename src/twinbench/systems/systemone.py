"""The `/v1/systemone` wire protocol: Laya (`laya`) and the Jev contract (`jev`).

Request: `{"state", "questions": {"q": {type, instructions, criteria}}}` (choice criteria = the
options, then the item's explicit abstain option where it has one; score criteria = the legend
labels in order, noul none). Laya answers `choice`,
`probabilities`, `answer_confidence` and, with `min_confidence`, `low_confidence`; requests
sharing a question go to `POST /v1/systemone/batch` (up to 64 states). Jev answers
`choice_index` and `confidence` and rejects more than 255 options with HTTP 400.

Both are read strictly: `choice_index` is a JSON integer in range (not 1.9, not true),
confidences and probabilities are JSON numbers in [0, 1], `low_confidence` a JSON boolean (on
every choice and score answer when `min_confidence` was sent), score probabilities cover every
level; anything else is `invalid`, for its own request only (a bad result in a batch spoils
nothing else).

Neither has reason codes. Choosing the explicit abstain option (Laya's `choice`, Jev's
`choice_index` of the last criterion) is an abstention with `contradictory_options`, the rule
of `prompt.lettered`; its probability is keyed `abstain:option`. Laya's `low_confidence` flag
on an answer is recorded as an abstention with `underspecified_state` (the card says so); Jev
abstains only through that option, so evaluate it through a gate.
Both products are closed or not installable here: the tests run them against local servers
that speak these documented wire formats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, NoulQuestion, ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, failure, response
from twinbench.systems.http import HttpClient, per_request
from twinbench.systems.prompt import (
    EXPLICIT_ABSTAIN_REASON,
    answer_choices,
    choice_fields,
    criteria_choices,
)
from twinbench.systems.wire import OffContract, flag, index, mapping, real

BATCH_LIMIT = 64


def wire_question(request: Request) -> dict[str, Any]:
    """The question in the systemone wire shape (a choice's explicit abstain option is its
    last criterion)."""
    question = request.question
    wire: dict[str, Any] = {"type": question.type, "instructions": question.instructions}
    if not isinstance(question, NoulQuestion):
        wire["criteria"] = [c.text for c in criteria_choices(question)]
    return wire


def read_answer(
    request: Request, answer: Any, jev: bool
) -> tuple[dict[str, Any], float | None, dict[str, float] | None]:
    """(decision fields, confidence, probabilities) from one wire answer; raises OffContract
    on anything off-contract (a float or bool choice_index, a string probability, ...).
    Choosing the explicit abstain option is an abstention (`prompt.choice_fields`)."""
    answer = mapping(answer, "answer")
    question = request.question
    choices = criteria_choices(question)
    key = "confidence" if jev else "answer_confidence"
    if not jev and key not in answer:
        key = "confidence"
    confidence = None if answer.get(key) is None else real(answer[key], key)
    probabilities = _probabilities(request, answer.get("probabilities"))
    if isinstance(question, NoulQuestion):
        p_yes = real(answer.get("noul"), "noul")
        confidence = max(p_yes, 1 - p_yes) if confidence is None else confidence
        return {"abstain": False, "answer": p_yes}, confidence, probabilities
    if isinstance(question, ChoiceQuestion):
        if jev:
            if confidence is None:
                raise OffContract("no confidence")
            found = [choices[index(answer.get("choice_index"), "choice_index", len(choices))]]
        else:
            found = [c for c in choices if c.text == answer.get("choice")]
            if not found:
                raise OffContract(f"choice {answer.get('choice')!r} is not an option")
        return choice_fields(question, found[0]), confidence, probabilities
    if probabilities is None:
        raise OffContract("a score answer needs probabilities")
    best = max(range(len(choices)), key=lambda i: probabilities[choices[i].text])
    return choice_fields(question, choices[best]), confidence, probabilities


def _probabilities(request: Request, wire: Any) -> dict[str, float] | None:
    """Probabilities keyed by option (choice, by text; the explicit abstain option as
    `abstain:option`) or legend label (score, by level index on the wire: every level,
    nothing else)."""
    if wire is None:
        return None
    wire = mapping(wire, "probabilities")
    if isinstance(request.question, ChoiceQuestion):
        keys = {c.text: c.key for c in criteria_choices(request.question)}
        unknown = set(wire) - set(keys)
        if unknown:
            raise OffContract(f"probabilities for {sorted(unknown)[:3]}, not options")
        return {keys[k]: real(v, f"probability of {k!r}") for k, v in wire.items()}
    labels = [c.text for c in answer_choices(request.question)]
    if set(wire) != {str(i) for i in range(len(labels))}:
        raise OffContract(f"probabilities keyed {sorted(wire)}, not 0..{len(labels) - 1}")
    return {label: real(wire[str(i)], f"probability {i}") for i, label in enumerate(labels)}


class SystemOneSystem:
    """One adapter for both contracts; `jev=True` reads choice_index and never abstains."""

    def __init__(self, options: SystemOptions, jev: bool, min_confidence: float | None) -> None:
        self.options, self.jev, self.min_confidence = options, jev, min_confidence
        self.http = HttpClient(options, "jev" if jev else "laya")
        name = "jev" if jev else "laya" + ("" if min_confidence is None else f"@{min_confidence:g}")
        gate_note = (
            f"low_confidence below {min_confidence:g} recorded as abstention "
            "with underspecified_state (Laya has no reason codes)"
            if min_confidence is not None
            else "no abstain output: evaluate via a gate"
        ) + (
            f"; an item's explicit abstain option is sent as the last criterion, and "
            f"choosing it is an abstention with {EXPLICIT_ABSTAIN_REASON.value}"
        )
        self.card = SystemCard(
            name=name,
            version=options.model or "server",
            languages=("en",),
            max_options=255 if jev else 100,
            confidences=True,
            abstains=min_confidence is not None,
            notes=gate_note,
        )

    def _groups(self, requests: Sequence[Request]) -> list[list[Request]]:
        if self.jev:
            return [[r] for r in requests]
        by_question: dict[str, list[Request]] = {}
        for req in requests:
            key = json.dumps(wire_question(req), sort_keys=True)
            by_question.setdefault(key, []).append(req)
        return [
            group[i : i + BATCH_LIMIT]
            for group in by_question.values()
            for i in range(0, len(group), BATCH_LIMIT)
        ]

    def _path(self, group: list[Request]) -> str:
        return "/v1/systemone" + ("/batch" if len(group) > 1 else "")

    def _body(self, group: list[Request]) -> dict[str, Any]:
        body: dict[str, Any] = {"questions": {"q": wire_question(group[0])}}
        if len(group) > 1:
            body["states"] = [r.state for r in group]
        else:
            body["state"] = group[0].state
        if self.options.model:
            body["model"] = self.options.model
        if self.min_confidence is not None:
            body["min_confidence"] = self.min_confidence
        return body

    def _parse(self, group: list[Request], data: Any, latency_ms: float) -> list[Response]:
        data = mapping(data, "reply")
        results = data.get("results") if len(group) > 1 else [data]
        if not isinstance(results, list) or len(results) != len(group):
            raise OffContract(f"results is not a list of {len(group)} results")
        return [
            self._one(req, result, latency_ms) for req, result in zip(group, results, strict=True)
        ]

    def _one(self, request: Request, result: Any, latency_ms: float) -> Response:
        """One result: a decision, or `invalid` for this request alone."""
        try:
            result = mapping(result, "result")
            answer = mapping(mapping(result.get("answers"), "answers").get("q"), "answer")
            decision, confidence, probabilities = read_answer(request, answer, self.jev)
            low = answer.get("low_confidence")
            # with min_confidence, Laya flags every choice and score answer (a noul answer is
            # its own P(yes)); wherever the flag is present it is a JSON boolean
            expected = self.min_confidence is not None and not isinstance(
                request.question, NoulQuestion
            )
            if expected or low is not None:
                low = flag(low, "low_confidence")
            usage = result.get("usage")
            if usage is not None:
                usage = mapping(usage, "usage")
        except OffContract as exc:
            return failure(
                request, self.card.name, "invalid", f"reply outside the contract: {exc}", result
            )
        common = {
            "confidence": confidence,
            "raw": answer,
            "latency_ms": round(latency_ms, 3),
            "usage": usage,
            "probabilities": probabilities,
        }
        if low and self.min_confidence is not None and not decision["abstain"]:
            reason = ReasonCode.UNDERSPECIFIED_STATE
            return response(request, self.card.name, abstain=True, reason=reason, **common)
        return response(request, self.card.name, **decision, **common)

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        groups = self._groups(requests)
        answered = self.http.post_groups(
            groups, self._path, self._body, self._parse, self.card.name
        )
        by_id = {(r.item_id, r.trial, r.permutation): r for group in answered for r in group}
        return [by_id[(r.item_id, r.trial, r.permutation)] for r in requests]

    def submit(self, requests: Sequence[Request]) -> list[Future[Response]]:
        """Start every request's call now (streaming runs); one Future per request."""
        groups = self._groups(requests)
        futures = self.http.submit_groups(
            groups, self._path, self._body, self._parse, self.card.name
        )
        keyed = per_request(groups, futures)
        return [keyed[(r.item_id, r.trial, r.permutation)] for r in requests]

    def close(self) -> None:
        """Close the streaming connection pool."""
        self.http.close()


def laya(arg: str | None, options: SystemOptions) -> SystemOneSystem:
    """Factory for `laya[:MIN_CONFIDENCE]` (a threshold in [0, 1])."""
    threshold = None
    if arg:
        try:
            threshold = float(arg)
        except ValueError:
            threshold = math.nan
        if not 0.0 <= threshold <= 1.0:
            raise InputError(f"--system: laya:{arg} needs a MIN_CONFIDENCE in [0, 1]")
    return SystemOneSystem(options, jev=False, min_confidence=threshold)


def jev(arg: str | None, options: SystemOptions) -> SystemOneSystem:
    """Factory for `jev` (no argument)."""
    if arg:
        raise InputError(f"--system: jev takes no argument (got jev:{arg})")
    return SystemOneSystem(options, jev=True, min_confidence=None)
