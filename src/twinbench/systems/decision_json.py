"""The `json` answer format: one object `{abstain, reason, answer}` under a JSON Schema.

The answers are the options (legend labels, yes/no) and, where the item has one, its explicit
abstain option, listed last; answering with that option is an abstention with
`EXPLICIT_ABSTAIN_REASON`, as choosing its letter is. Output outside the schema is `invalid`:
exactly the keys abstain (a boolean), reason and answer; an abstention has a known reason code
and a null answer; an answer has a null reason and is one of the listed answers, exactly as
listed.

Confidence (with the tokens' log-probabilities, `token_probabilities`): the probability of the
decision, read along the keys in the schema's order. An answer: P(abstain = false) ×
P(reason = null) × P(answer); an abstention: P(abstain = true) × P(reason = its code), settled
once the code is (the schema forces a null answer). `probabilities` lists the side the reply
took: each answer the candidates settle (the explicit abstain option as `abstain:option`), or
each reason code as `abstain:CODE`.
"""

from __future__ import annotations

from typing import Any

from twinbench.records import ReasonCode
from twinbench.systems.base import Request
from twinbench.systems.prompt import ABSTAIN_TEXT, Choice, criteria_choices
from twinbench.systems.token_probabilities import (
    NoConfidence,
    json_bytes,
    read_tokens,
    value_probabilities,
    value_start,
)
from twinbench.systems.wire import OffContract, flag, mapping

REASON_CODES = {code.value for code in ReasonCode}
DECISION_KEYS = ("abstain", "reason", "answer")

INSTRUCTIONS = (
    "You make typed decisions about a text. Reply with one JSON object: "
    '{"abstain": false, "reason": null, "answer": <one of the answers>} when the text supports '
    'one answer, or {"abstain": true, "reason": <code>, "answer": null} when it does not. '
    "Reason codes: " + "; ".join(f"{code.value} = {text}" for code, text in ABSTAIN_TEXT.items())
)


def answer_labels(request: Request) -> list[str]:
    """The strings the model may answer with: options, legend labels or yes/no, then the
    item's explicit abstain option (where it has one)."""
    return [c.text for c in criteria_choices(request.question)]


def decision_schema(request: Request, object_root: bool = True) -> dict[str, Any]:
    """The JSON Schema of a decision: an answer, or an abstention with a reason code.

    OpenAI's strict structured outputs need an object at the root, so that form allows null
    in each field; what it cannot forbid (a null answer without an abstention, an abstention
    with an answer) parses as `invalid`. The grammar-constrained llama.cpp form can say
    exactly "answer xor abstain" with anyOf.
    """
    if object_root:
        return {
            "type": "object",
            "properties": {
                "abstain": {"type": "boolean"},
                "reason": {"enum": [*(c.value for c in ReasonCode), None]},
                "answer": {"enum": [*answer_labels(request), None]},
            },
            "required": list(DECISION_KEYS),
            "additionalProperties": False,
        }

    def shape(abstain: bool, reason: Any, answer: Any) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"abstain": {"const": abstain}, "reason": reason, "answer": answer},
            "required": list(DECISION_KEYS),
            "additionalProperties": False,
        }

    return {
        "anyOf": [
            shape(False, {"type": "null"}, {"enum": answer_labels(request)}),
            shape(True, {"enum": [c.value for c in ReasonCode]}, {"type": "null"}),
        ]
    }


def messages(request: Request) -> list[dict[str, str]]:
    """System and user messages for one request."""
    answers = "\n".join(f"- {label}" for label in answer_labels(request))
    user = (
        f"Text: {request.state}\n\nQuestion: {request.question.instructions}\n\n"
        f"Answers:\n{answers}\n\nReply with the JSON object only."
    )
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": user}]


def _choices(request: Request) -> dict[str, Choice]:
    """Each allowed answer string and the choice it stands for."""
    return {c.text: c for c in criteria_choices(request.question)}


def read_decision(request: Request, data: Any) -> tuple[bool, str | None, Choice | None]:
    """(abstain flag, reason code, chosen answer) of a reply; raises OffContract for anything
    the object-root schema does not allow."""
    data = mapping(data, "output")
    if set(data) != set(DECISION_KEYS):
        raise OffContract(f"output keys are {sorted(data)}, not {sorted(DECISION_KEYS)}")
    abstain, reason, answer = flag(data["abstain"], "abstain"), data["reason"], data["answer"]
    if abstain:
        if answer is not None:
            raise OffContract("an abstention carries no answer")
        if not isinstance(reason, str) or reason not in REASON_CODES:
            raise OffContract(f"abstention with reason {reason!r}, not a known reason code")
        return True, reason, None
    if reason is not None:
        raise OffContract("an answer carries no reason")
    choice = _choices(request).get(answer) if isinstance(answer, str) else None
    if choice is None:
        raise OffContract(f"answer {answer!r} is not one of the allowed answers")
    return False, None, choice


def decision_confidence(
    request: Request, content: str, entries: Any, reason: str | None, choice: Choice | None
) -> tuple[float, dict[str, float]]:
    """(confidence, probabilities) of a parsed decision from its tokens; NoConfidence says
    why there are none."""
    raw = content.encode()
    tokens = read_tokens(raw, entries)
    starts = [value_start(raw, key) for key in DECISION_KEYS]
    if starts != sorted(starts):
        raise NoConfidence(
            "the reply's keys are not in the schema's order (abstain, reason, answer)"
        )
    at_flag, at_reason, at_answer = starts
    abstained = choice is None
    p_flag, _ = value_probabilities(
        raw, tokens, at_flag, [b"true", b"false"], b"true" if abstained else b"false"
    )
    codes = {json_bytes(c.value): f"abstain:{c.value}" for c in ReasonCode}
    p_reason, reasons = value_probabilities(
        raw, tokens, at_reason, [b"null", *codes], json_bytes(reason)
    )
    if choice is None:
        named = {codes[v]: p_flag * p for v, p in reasons.items() if v in codes}
        return p_flag * p_reason, {k: round(p, 6) for k, p in named.items()}
    by_value = {json_bytes(text): c for text, c in _choices(request).items()}
    p_answer, answers = value_probabilities(
        raw, tokens, at_answer, [b"null", *by_value], json_bytes(choice.text)
    )
    named = {by_value[v].key: p_flag * p_reason * p for v, p in answers.items() if v in by_value}
    return p_flag * p_reason * p_answer, {k: round(p, 6) for k, p in named.items()}
