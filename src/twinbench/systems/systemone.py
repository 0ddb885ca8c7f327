"""The `/v1/systemone` wire protocol: Laya (`laya`) and the Jev contract (`jev`).

Request: `{"state", "questions": {"q": {type, instructions, criteria}}}` (choice criteria = the
options, score criteria = the legend labels in order, noul none). Laya answers `choice`,
`probabilities`, `answer_confidence` and, with `min_confidence`, `low_confidence`; requests
sharing a question go to `POST /v1/systemone/batch` (up to 64 states). Jev answers
`choice_index` and `confidence` and rejects more than 255 options with HTTP 400.

Neither has reason codes. Laya's `low_confidence` flag is recorded as an abstention with
`underspecified_state` (the card says so); Jev never abstains, so evaluate it through a gate.
Both products are closed or not installable here: the tests run them against local servers
that speak these documented wire formats.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, NoulQuestion, ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, response
from twinbench.systems.http import post_groups, require_url
from twinbench.systems.prompt import answer_choices

BATCH_LIMIT = 64


def wire_question(request: Request) -> dict[str, Any]:
    """The question in the systemone wire shape."""
    question = request.question
    wire: dict[str, Any] = {"type": question.type, "instructions": question.instructions}
    if not isinstance(question, NoulQuestion):
        wire["criteria"] = [c.text for c in answer_choices(question)]
    return wire


def read_answer(request: Request, answer: dict[str, Any], jev: bool) -> tuple[Any, float | None]:
    """(typed answer, confidence) from one wire answer; raises on anything off-contract."""
    question = request.question
    choices = answer_choices(question)
    if isinstance(question, NoulQuestion):
        p_yes = float(answer["noul"])
        if not 0.0 <= p_yes <= 1.0:
            raise ValueError(f"noul {p_yes} outside [0, 1]")
        confidence = answer.get("confidence", max(p_yes, 1 - p_yes))
        return p_yes, float(confidence)
    if isinstance(question, ChoiceQuestion):
        if jev:
            index = int(answer["choice_index"])
            if not 0 <= index < len(choices):
                raise IndexError(f"choice_index {index} out of range")
            value: Any = choices[index].text
        else:
            value = answer["choice"]
            if value not in question.options:
                raise ValueError(f"choice {value!r} is not an option")
    else:
        probabilities = answer["probabilities"]
        best = max(range(len(choices)), key=lambda i: float(probabilities[str(i)]))
        value = choices[best].answer
    key = "confidence" if jev else "answer_confidence"
    confidence = answer.get(key, answer.get("confidence"))
    return value, None if confidence is None else float(confidence)


class SystemOneSystem:
    """One adapter for both contracts; `jev=True` reads choice_index and never abstains."""

    def __init__(self, options: SystemOptions, jev: bool, min_confidence: float | None) -> None:
        self.options, self.jev, self.min_confidence = options, jev, min_confidence
        self.base = require_url(options, "jev" if jev else "laya")
        name = "jev" if jev else "laya" + ("" if min_confidence is None else f"@{min_confidence:g}")
        gate_note = (
            f"low_confidence below {min_confidence:g} recorded as abstention "
            "with underspecified_state (Laya has no reason codes)"
            if min_confidence is not None
            else "no abstain output: evaluate via a gate"
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

    def _url(self, group: list[Request]) -> str:
        return f"{self.base}/v1/systemone" + ("/batch" if len(group) > 1 else "")

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
        results = data["results"] if len(group) > 1 else [data]
        if len(results) != len(group):
            raise ValueError(f"{len(results)} results for {len(group)} states")
        out = []
        for req, result in zip(group, results, strict=True):
            answer = result["answers"]["q"]
            value, confidence = read_answer(req, answer, self.jev)
            common = {
                "confidence": confidence,
                "raw": answer,
                "latency_ms": round(latency_ms, 3),
                "usage": result.get("usage"),
                "probabilities": _probabilities(req, answer),
            }
            if not self.jev and answer.get("low_confidence") is True:
                out.append(
                    response(
                        req,
                        self.card.name,
                        abstain=True,
                        reason=ReasonCode.UNDERSPECIFIED_STATE,
                        **common,
                    )
                )
            else:
                out.append(response(req, self.card.name, abstain=False, answer=value, **common))
        return out

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        groups = self._groups(requests)
        answered = post_groups(
            groups, self._url, self._body, self._parse, self.options, self.card.name
        )
        by_id = {(r.item_id, r.trial, r.permutation): r for group in answered for r in group}
        return [by_id[(r.item_id, r.trial, r.permutation)] for r in requests]


def _probabilities(request: Request, answer: dict[str, Any]) -> dict[str, float] | None:
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, dict):
        return None
    if isinstance(request.question, ChoiceQuestion):
        return {str(k): float(v) for k, v in probabilities.items()}
    labels = [c.text for c in answer_choices(request.question)]
    return {labels[int(k)]: float(v) for k, v in probabilities.items() if int(k) < len(labels)}


def laya(arg: str | None, options: SystemOptions) -> SystemOneSystem:
    """Factory for `laya[:MIN_CONFIDENCE]`."""
    threshold = None
    if arg:
        try:
            threshold = float(arg)
        except ValueError:
            raise InputError(f"--system: laya:{arg} needs a number in [0, 1]") from None
    return SystemOneSystem(options, jev=False, min_confidence=threshold)


def jev(arg: str | None, options: SystemOptions) -> SystemOneSystem:
    """Factory for `jev`."""
    return SystemOneSystem(options, jev=True, min_confidence=None)
