"""Confidences from token log-probabilities, on a loopback server with scripted log-probabilities.

Each case gives the tokens a server returns and the probabilities they imply, worked out by
hand in the comments: shared first tokens, ties, top-k cut-offs, a candidate that leaves the
split open, and a character split across tokens.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from twinbench.records import ChoiceQuestion, Response
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request

from .servers import logprob_reply, serve

ln = math.log
Tokens = list[tuple[str | bytes, float, list[tuple[str | bytes, float]]]]


def _ask(request: Request, content: str, tokens: Tokens, answer_format: str) -> Response:
    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, logprob_reply(content, tokens)

    with serve(handle) as (url, _):
        options = SystemOptions(
            base_url=url,
            logprobs=True,
            answer_format=answer_format,  # type: ignore[arg-type]
        )
        (res,) = make_system("openai", options).respond([request])
    return res


PRICE = Request(
    item_id="p",
    state="The lamp costs $45.",
    question=ChoiceQuestion(
        instructions="What does the lamp cost?", options=["under $20", "under $50", "$50 or more"]
    ),
)


def _price_tokens(first: list[tuple[str, float]]) -> Tokens:
    return [
        ('{"abstain": ', 0.0, []),
        ("false", 0.0, [("false", 0.0)]),
        (', "reason": ', 0.0, []),
        ("null", 0.0, []),
        (', "answer": ', 0.0, []),
        ('"under', ln(0.4), first),
        (" $", 0.0, [(" $", 0.0)]),
        ("5", ln(0.9), [("5", ln(0.9)), ("2", ln(0.1))]),
        ('0"}', 0.0, []),
    ]


def test_answers_sharing_a_first_token_follow_it_until_they_diverge() -> None:
    """The issue's case: first tokens '"under' 0.4 and '"$' 0.6, then "5" 0.9 against "2" 0.1.
    under $50 = 1 x 1 x 0.4 x 0.9 = 0.36 (the reader that dropped the shared token gave it 0.0
    and $50 or more 1.0); under $20 = 0.4 x 0.1 = 0.04; $50 or more = 0.6."""
    content = '{"abstain": false, "reason": null, "answer": "under $50"}'
    tokens = _price_tokens([('"under', ln(0.4)), ('"$', ln(0.6))])
    res = _ask(PRICE, content, tokens, "json")
    assert (res.status, res.answer, res.error) == ("ok", "under $50", None)
    assert res.confidence == pytest.approx(0.36)
    assert res.probabilities == pytest.approx(
        {"under $50": 0.36, "under $20": 0.04, "$50 or more": 0.6}
    )


def test_a_candidate_shared_by_the_chosen_answer_and_another_leaves_no_confidence() -> None:
    """'"und' (0.05) begins both under $20 and under $50, and the reply does not show how it
    splits: the chosen answer's probability is not in the reply, so there is none (and why)."""
    content = '{"abstain": false, "reason": null, "answer": "under $50"}'
    tokens = _price_tokens([('"under', ln(0.4)), ('"$', ln(0.55)), ('"und', ln(0.05))])
    res = _ask(PRICE, content, tokens, "json")
    assert (res.status, res.answer, res.confidence, res.probabilities) == (
        "ok",
        "under $50",
        None,
        None,
    )
    assert res.error == (
        'no confidence: a returned candidate token leads to "under $50" and 1 other allowed '
        "value(s); the reply does not say how it splits"
    )


TICKET = Request(
    item_id="t",
    state="The March invoice charged the annual plan twice.",
    question=ChoiceQuestion(
        instructions="Which team should handle this ticket?",
        options=["billing", "technical support", "sales"],
        abstain_option="I abstain from answering",
    ),
)


def _letter(letter: str, logprob: float, top: list[tuple[str, float]]) -> Tokens:
    return [('{"letter": "', 0.0, [('{"letter": "', 0.0)]), (letter, logprob, top), ('"}', 0.0, [])]


def test_letters_tie_and_a_top_k_cut_off() -> None:
    """Letters A billing, B technical support, C sales, D the item's abstain option, X/Y/Z.
    The reply picks B; A ties it at 0.4; D 0.1; X 0.05. C, Y and Z are not in the top-k: they
    are left out (not 0.0), and the listed probabilities sum to 0.95, not 1."""
    top = [("A", ln(0.4)), ("B", ln(0.4)), ("D", ln(0.1)), ("X", ln(0.05))]
    res = _ask(TICKET, '{"letter": "B"}', _letter("B", ln(0.4), top), "letters")
    assert (res.status, res.abstain, res.answer) == ("ok", False, "technical support")
    assert res.confidence == pytest.approx(0.4)
    assert res.probabilities == pytest.approx(
        {
            "billing": 0.4,
            "technical support": 0.4,
            "abstain:option": 0.1,
            "abstain:underspecified_state": 0.05,
        }
    )


def test_the_explicit_abstain_letter_is_an_abstention_with_its_own_probability() -> None:
    """D (0.7) is the item's "I abstain from answering": an abstention with
    contradictory_options, confidence 0.7; billing 0.2; nothing else returned."""
    res = _ask(
        TICKET,
        '{"letter": "D"}',
        _letter("D", ln(0.7), [("D", ln(0.7)), ("A", ln(0.2))]),
        "letters",
    )
    assert (res.status, res.abstain, res.reason) == ("ok", True, "contradictory_options")
    assert res.confidence == pytest.approx(0.7)
    assert res.probabilities == pytest.approx({"abstain:option": 0.7, "billing": 0.2})


def test_json_abstention_tie_and_whitespace_variants() -> None:
    """abstain: " true" 0.3 and "true" 0.2 are one value (0.5), tied with false 0.5; reason:
    '"under' 0.7, '"contr' 0.2, "null" 0.1. underspecified_state = 0.5 x 0.7 = 0.35 (settled
    there: the null answer after it is forced), contradictory_options = 0.5 x 0.2 = 0.1,
    out_of_language not returned."""
    content = '{"abstain": true, "reason": "underspecified_state", "answer": null}'
    tokens: Tokens = [
        ('{"abstain":', 0.0, []),
        (" true", ln(0.3), [(" true", ln(0.3)), (" false", ln(0.5)), ("true", ln(0.2))]),
        (', "reason": ', 0.0, []),
        ('"under', ln(0.7), [('"under', ln(0.7)), ('"contr', ln(0.2)), ("null", ln(0.1))]),
        ('specified_state", "answer": null}', ln(0.5), []),
    ]
    res = _ask(TICKET, content, tokens, "json")
    assert (res.status, res.abstain, res.reason) == ("ok", True, "underspecified_state")
    assert res.confidence == pytest.approx(0.35)
    assert res.probabilities == pytest.approx(
        {"abstain:underspecified_state": 0.35, "abstain:contradictory_options": 0.1}
    )


def test_json_answer_with_the_explicit_abstain_option() -> None:
    """The json format lists the abstain option as an answer: false 0.9 x null 1 x '"I' 0.5 =
    0.45 for it (an abstention with contradictory_options), '"b' 0.3 -> billing 0.27."""
    content = '{"abstain": false, "reason": null, "answer": "I abstain from answering"}'
    tokens: Tokens = [
        ('{"abstain": ', 0.0, []),
        ("false", ln(0.9), [("false", ln(0.9)), ("true", ln(0.1))]),
        (', "reason": null, "answer": ', 0.0, []),
        ('"I', ln(0.5), [('"I', ln(0.5)), ('"b', ln(0.3))]),
        (' abstain from answering"}', 0.0, []),
    ]
    res = _ask(TICKET, content, tokens, "json")
    assert (res.status, res.abstain, res.reason) == ("ok", True, "contradictory_options")
    assert res.confidence == pytest.approx(0.45)
    assert res.probabilities == pytest.approx({"abstain:option": 0.45, "billing": 0.27})


def test_a_character_split_across_tokens_lines_up_by_bytes() -> None:
    """ "café" against "caffè": é is split over two tokens (llama.cpp sends their bytes). The
    value settles at the first byte of é (0.8 against 0.2 for "f"): café 0.8, caffè 0.2."""
    request = Request(
        item_id="c",
        state="Un café, s'il vous plaît.",
        question=ChoiceQuestion(instructions="Which drink?", options=["café", "caffè"]),
    )
    content = '{"abstain": false, "reason": null, "answer": "café"}'
    tokens: Tokens = [
        ('{"abstain": false, "reason": null, "answer": "caf', 0.0, []),
        (b"\xc3", ln(0.8), [(b"\xc3", ln(0.8)), ("f", ln(0.2))]),
        (b"\xa9", 0.0, []),
        ('"}', 0.0, []),
    ]
    res = _ask(request, content, tokens, "json")
    assert (res.status, res.answer) == ("ok", "café")
    assert res.confidence == pytest.approx(0.8)
    assert res.probabilities == pytest.approx({"café": 0.8, "caffè": 0.2})
