"""The `letters` answer format: the lettered prompt `smollm2` and inspect show, replied as
`{"letter": "B"}` under a JSON Schema that allows only the listed letters.

The user message is `prompt.user_message` over `prompt.lettered` (answers A, B, …, the item's
explicit abstain option next, then X, Y, Z, one per reason code); the system prompt is
`smollm2`'s with the reply form changed from a bare letter to that object. Picking an abstain
letter is an abstention with its code; picking the explicit abstain option one with
`EXPLICIT_ABSTAIN_REASON`.

Every letter is one character, so the token that begins the letter settles the decision: no
two answers share a first token. The confidence is the chosen letter's probability, and
`probabilities` holds every letter the server's top candidates show, by `Choice.key`.
"""

from __future__ import annotations

from typing import Any

from twinbench.systems.base import Request
from twinbench.systems.prompt import ABSTAIN_LETTERS_NOTE, Choice, lettered, user_message
from twinbench.systems.token_probabilities import (
    json_bytes,
    read_tokens,
    value_probabilities,
    value_start,
)
from twinbench.systems.wire import OffContract, mapping

LETTER_PROMPT = (
    "You make typed decisions about a text. Pick exactly one lettered option and reply with "
    'one JSON object, {"letter": "<its letter>"}. ' + ABSTAIN_LETTERS_NOTE
)


def letter_schema(request: Request, object_root: bool = True) -> dict[str, Any]:
    """The JSON Schema of a reply: an object whose `letter` is one of the listed letters
    (the same object for OpenAI's strict form and llama.cpp's)."""
    return {
        "type": "object",
        "properties": {"letter": {"enum": [c.letter for c in lettered(request.question)]}},
        "required": ["letter"],
        "additionalProperties": False,
    }


def letter_messages(request: Request) -> list[dict[str, str]]:
    """System and user messages for one request (the user turn is `smollm2`'s)."""
    choices = lettered(request.question)
    user = user_message(request.state, request.question, choices)
    return [{"role": "system", "content": LETTER_PROMPT}, {"role": "user", "content": user}]


def read_letter(request: Request, data: Any) -> Choice:
    """The choice a reply names; raises OffContract unless it is exactly `{"letter": L}` with
    L one of the listed letters."""
    data = mapping(data, "output")
    if set(data) != {"letter"}:
        raise OffContract(f"output keys are {sorted(data)}, not ['letter']")
    by_letter = {c.letter: c for c in lettered(request.question)}
    choice = by_letter.get(data["letter"]) if isinstance(data["letter"], str) else None
    if choice is None:
        raise OffContract(f"letter {data['letter']!r} is not listed ({''.join(by_letter)})")
    return choice


def letter_confidence(
    request: Request, content: str, entries: Any, choice: Choice
) -> tuple[float, dict[str, float]]:
    """(confidence, probabilities) of the chosen letter from its tokens; NoConfidence says
    why there are none."""
    raw = content.encode()
    tokens = read_tokens(raw, entries)
    by_value = {json_bytes(c.letter): c for c in lettered(request.question)}
    p, known = value_probabilities(
        raw, tokens, value_start(raw, "letter"), list(by_value), json_bytes(choice.letter)
    )
    named: dict[str, float] = {}
    for value, mass in known.items():
        key = by_value[value].key
        named[key] = named.get(key, 0.0) + mass
    return p, {k: round(v, 6) for k, v in named.items()}
