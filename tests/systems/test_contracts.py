"""Adapters are strict: a reply outside the contract is `invalid`, never ok, never an abstention.

Each case is a reply a server really sent (scripted local servers on 127.0.0.1 speaking the
OpenAI chat-completions and the systemone wire formats); the adapters must not coerce it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from twinbench.jsonl import dumps_line, record_dict
from twinbench.records import ChoiceQuestion, NoulQuestion, Response, ScoreQuestion
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request

from .servers import chat_reply, serve

TEAMS = ChoiceQuestion(instructions="Which team?", options=["billing", "None", "sales"])
URGENCY = ScoreQuestion(instructions="Urgency?", legend={"low": 1, "high": 3})
REFUND = NoulQuestion(instructions="Refund?")

#: model outputs outside the decision schema {abstain, reason, answer}: all must be invalid
OFF_SCHEMA = {
    "abstention with an answer": {
        "abstain": True,
        "reason": "underspecified_state",
        "answer": "billing",
    },
    "null answer beside an option 'None'": {"abstain": False, "reason": None, "answer": None},
    "unknown reason code": {"abstain": True, "reason": "bored", "answer": None},
    "abstention without a reason": {"abstain": True, "reason": None, "answer": None},
    "extra key": {"abstain": False, "reason": None, "answer": "billing", "why": "x"},
    "missing reason key": {"abstain": False, "answer": "billing"},
    "abstain as a string": {"abstain": "false", "reason": None, "answer": "billing"},
    "abstain as 0": {"abstain": 0, "reason": None, "answer": "billing"},
    "answer with a reason": {
        "abstain": False,
        "reason": "underspecified_state",
        "answer": "billing",
    },
    "answer not an option": {"abstain": False, "reason": None, "answer": "legal"},
    "answer in another case": {"abstain": False, "reason": None, "answer": "Billing"},
    "answer as a list": {"abstain": False, "reason": None, "answer": ["billing"]},
    "not an object": ["billing"],
}


def _openai(replies: dict[str, Any], question: Any = TEAMS) -> dict[str, Response]:
    """Send one request per reply (state = its key) to a server that answers with it."""

    def handle(path: str, body: Any) -> tuple[int, Any]:
        state = body["messages"][1]["content"].split("\n")[0].removeprefix("Text: ")
        return 200, replies[state]

    requests = [Request(item_id=k, state=k, question=question) for k in replies]
    with serve(handle) as (url, _):
        out = make_system("openai", SystemOptions(base_url=url, retries=0)).respond(requests)
    return {r.item_id: r for r in out}


def test_openai_output_outside_the_schema_is_invalid() -> None:
    replies = {k: chat_reply(json.dumps(v)) for k, v in OFF_SCHEMA.items()}
    replies["valid answer 'None'"] = chat_reply(
        json.dumps({"abstain": False, "reason": None, "answer": "None"})
    )
    replies["valid abstention"] = chat_reply(
        json.dumps({"abstain": True, "reason": "contradictory_options", "answer": None})
    )
    out = _openai(replies)
    for name in OFF_SCHEMA:
        assert (out[name].status, out[name].abstain, out[name].answer) == (
            "invalid",
            None,
            None,
        ), name
        assert out[name].raw == json.dumps(OFF_SCHEMA[name])  # what the model said is kept
    assert (out["valid answer 'None'"].status, out["valid answer 'None'"].answer) == ("ok", "None")
    valid = out["valid abstention"]
    assert (valid.status, valid.abstain, valid.reason) == ("ok", True, "contradictory_options")


def test_openai_envelope_outside_chat_completions_is_invalid() -> None:
    good = json.dumps({"abstain": False, "reason": None, "answer": "billing"})
    reply = chat_reply(good)
    replies: dict[str, Any] = {
        "content null": chat_reply(None),
        "content a number": chat_reply(3),
        "no choices": {"id": "c1", "object": "chat.completion"},
        "choices empty": {**reply, "choices": []},
        "a list body": [reply],
        "usage a string": {**reply, "usage": "15 tokens"},
    }
    out = _openai(replies)
    for name, res in out.items():
        assert (res.status, res.abstain) == ("invalid", None), name


def test_openai_score_and_noul_answers_are_labels_only() -> None:
    score = _openai(
        {
            "label": chat_reply('{"abstain": false, "reason": null, "answer": "high"}'),
            "value": chat_reply('{"abstain": false, "reason": null, "answer": 3}'),
        },
        URGENCY,
    )
    assert (score["label"].status, score["label"].answer) == ("ok", 3)
    assert score["value"].status == "invalid"
    noul = _openai(
        {
            "yes": chat_reply('{"abstain": false, "reason": null, "answer": "yes"}'),
            "true": chat_reply('{"abstain": false, "reason": null, "answer": true}'),
        },
        REFUND,
    )
    assert (noul["yes"].status, noul["yes"].answer) == ("ok", 1.0)
    assert noul["true"].status == "invalid"


def _systemone(spec: str, answers: dict[str, Any], question: Any = TEAMS) -> dict[str, Response]:
    """Send one request per answer (state = its key) to a server replying with that answer;
    `results` (a batch) gets one result per state, in order."""

    def handle(path: str, body: Any) -> tuple[int, Any]:
        if path.endswith("/batch"):
            return 200, {"results": [{"answers": {"q": answers[s]}} for s in body["states"]]}
        return 200, {"answers": {"q": answers[body["state"]]}}

    requests = [Request(item_id=k, state=k, question=question) for k in answers]
    with serve(handle) as (url, _):
        system = make_system(spec, SystemOptions(base_url=url, retries=0))
        out = system.respond(requests)
    return {r.item_id: r for r in out}


JEV_BAD = {
    "choice_index 1.9": {"choice_index": 1.9, "confidence": 0.9},
    "choice_index true": {"choice_index": True, "confidence": 0.9},
    "choice_index '1'": {"choice_index": "1", "confidence": 0.9},
    "choice_index -1": {"choice_index": -1, "confidence": 0.9},
    "choice_index 3 of 3": {"choice_index": 3, "confidence": 0.9},
    "no choice_index": {"confidence": 0.9},
    "confidence '0.9'": {"choice_index": 1, "confidence": "0.9"},
    "confidence 1.5": {"choice_index": 1, "confidence": 1.5},
    "confidence true": {"choice_index": 1, "confidence": True},
    "no confidence": {"choice_index": 1},
    "answer a list": [1, 0.9],
}


def test_jev_takes_only_a_real_in_range_int_and_a_real_confidence() -> None:
    out = _systemone("jev", {**JEV_BAD, "valid": {"choice_index": 1, "confidence": 0.9}})
    for name in JEV_BAD:
        assert (out[name].status, out[name].abstain, out[name].answer) == (
            "invalid",
            None,
            None,
        ), name
    assert (out["valid"].status, out["valid"].answer, out["valid"].confidence) == (
        "ok",
        "None",
        0.9,
    )


def test_jev_noul_must_be_a_probability() -> None:
    out = _systemone(
        "jev",
        {
            "string": {"noul": "0.8", "confidence": 0.8},
            "bool": {"noul": True, "confidence": 1.0},
            "above 1": {"noul": 1.2, "confidence": 0.8},
            "valid": {"noul": 0.8, "confidence": 0.8},
        },
        REFUND,
    )
    assert {k: r.status for k, r in out.items()} == {
        "string": "invalid",
        "bool": "invalid",
        "above 1": "invalid",
        "valid": "ok",
    }
    assert out["valid"].answer == 0.8


LAYA_BAD = {
    "low_confidence 'true'": {
        "choice": "billing",
        "answer_confidence": 0.3,
        "low_confidence": "true",
    },
    "low_confidence 1": {"choice": "billing", "answer_confidence": 0.3, "low_confidence": 1},
    "low_confidence missing": {"choice": "billing", "answer_confidence": 0.3},
    "choice not a string": {"choice": 0, "answer_confidence": 0.9, "low_confidence": False},
    "choice not an option": {"choice": "legal", "answer_confidence": 0.9, "low_confidence": False},
    "answer_confidence '0.9'": {
        "choice": "billing",
        "answer_confidence": "0.9",
        "low_confidence": False,
    },
    "probabilities of strings": {
        "choice": "billing",
        "answer_confidence": 0.9,
        "low_confidence": False,
        "probabilities": {"billing": "0.9"},
    },
}


def test_laya_low_confidence_must_be_a_real_bool() -> None:
    # one state per call and a shared question: laya sends them as one /batch, and a bad
    # result spoils only its own request
    out = _systemone(
        "laya:0.5",
        {
            **LAYA_BAD,
            "abstains": {"choice": "billing", "answer_confidence": 0.3, "low_confidence": True},
            "answers": {"choice": "sales", "answer_confidence": 0.9, "low_confidence": False},
        },
    )
    for name in LAYA_BAD:
        assert (out[name].status, out[name].abstain) == ("invalid", None), name
    assert (out["abstains"].status, out["abstains"].abstain) == ("ok", True)
    assert (out["answers"].status, out["answers"].answer) == ("ok", "sales")


def test_laya_score_probabilities_must_cover_the_legend() -> None:
    out = _systemone(
        "laya",
        {
            "valid": {"probabilities": {"0": 0.2, "1": 0.8}, "answer_confidence": 0.8},
            "missing level": {"probabilities": {"0": 0.2}, "answer_confidence": 0.8},
            "extra level": {"probabilities": {"0": 0.2, "1": 0.7, "2": 0.1}},
            "string value": {"probabilities": {"0": "0.2", "1": 0.8}},
            "not a dict": {"probabilities": [0.2, 0.8]},
        },
        URGENCY,
    )
    assert {k: r.status for k, r in out.items()} == {
        "valid": "ok",
        "missing level": "invalid",
        "extra level": "invalid",
        "string value": "invalid",
        "not a dict": "invalid",
    }
    assert out["valid"].answer == 3
    assert out["valid"].probabilities == {"low": 0.2, "high": 0.8}


@pytest.mark.parametrize(
    "body",
    [
        {"results": "none"},
        {"results": [{"answers": []}]},
        {"results": [None, None]},
        {"answers": {"q": None}},
        [],
        "ok",
    ],
)
def test_systemone_envelopes_outside_the_contract_never_raise(body: Any) -> None:
    requests = [Request(item_id=s, state=s, question=TEAMS) for s in ("a", "b")]
    with serve(lambda path, _: (200, body)) as (url, _):
        out = make_system("laya", SystemOptions(base_url=url, retries=0)).respond(requests)
    assert [(r.item_id, r.status, r.abstain) for r in out] == [
        ("a", "invalid", None),
        ("b", "invalid", None),
    ]


def test_numbers_json_does_not_have_are_invalid_and_rows_stay_writable() -> None:
    # NaN is not JSON; an integer past 64 bits is no index (and no record writer takes it)
    bodies = {
        "nan": b'{"answers": {"q": {"choice_index": 1, "confidence": NaN}}}',
        "huge index": b'{"answers": {"q": {"choice_index": 100000000000000000000000, '
        b'"confidence": 0.5}}}',
        "huge usage": b'{"usage": {"n": 100000000000000000000000}, '
        b'"answers": {"q": {"choice_index": 1, "confidence": 0.5}}}',
    }

    def handle(path: str, body: Any) -> tuple[int, Any]:
        return 200, bodies[body["state"]]

    requests = [Request(item_id=k, state=k, question=TEAMS) for k in bodies]
    with serve(handle) as (url, _):
        out = make_system("jev", SystemOptions(base_url=url, retries=0)).respond(requests)
    assert [(r.status, r.abstain) for r in out] == [
        ("invalid", None),
        ("invalid", None),
        ("ok", False),
    ]
    assert out[0].error == "reply is not JSON"
    assert "not an integer" in (out[1].error or "")
    assert out[2].usage == {"n": 1e23}
    for res in out:
        dumps_line(record_dict(res))  # the runner can write every row


def test_typed_decisions_server_replies_are_read_strictly() -> None:
    answers = {
        "valid": {"type": "choice", "choice": "sales", "confidence": 0.7, "probabilities": {}},
        "confidence a string": {"choice": "sales", "confidence": "0.7", "probabilities": {}},
        "choice not an option": {"choice": "legal", "confidence": 0.7, "probabilities": {}},
        "no probabilities": {"choice": "sales", "confidence": 0.7},
    }

    def handle(path: str, body: Any) -> tuple[int, Any]:
        assert path == "/v1/ask"
        return 200, {"answers": {"q": answers[body["state"]]}, "usage": {"input_tokens": 3}}

    requests = [Request(item_id=k, state=k, question=TEAMS) for k in answers]
    with serve(handle) as (url, _):
        system = make_system("typed-decisions", SystemOptions(base_url=url, retries=0))
        out = {r.item_id: r for r in system.respond(requests)}
    assert (out["valid"].status, out["valid"].answer, out["valid"].confidence) == (
        "ok",
        "sales",
        0.7,
    )
    for name in ("confidence a string", "choice not an option", "no probabilities"):
        assert (out[name].status, out[name].abstain) == ("invalid", None), name
