"""typed-decisions through its real package: the Decider in process and its HTTP server."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from twinbench.records import ChoiceQuestion, NoulQuestion, ReasonCode, ScoreQuestion
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request
from twinbench.systems.local_model import CACHE_NAME, cache_dir, load_smollm2
from twinbench.systems.typed_decisions import read_answer, wire_question

from .servers import free_port, server_process

REQUESTS = [
    Request(
        item_id="c",
        state="The March invoice charged the annual plan twice.",
        question=ChoiceQuestion(
            instructions="Which team should handle this ticket?",
            options=["billing", "technical support", "sales"],
        ),
    ),
    Request(
        item_id="s",
        state="Every customer is locked out of checkout with no workaround.",
        question=ScoreQuestion(
            instructions="How severe is this incident?", legend={"low": 1, "medium": 2, "high": 3}
        ),
    ),
    Request(
        item_id="n",
        state="The tablets may be taken with or without food.",
        question=NoulQuestion(instructions="May the tablets be taken with food?"),
    ),
]


def _check(out: list) -> None:
    assert [r.status for r in out] == ["ok", "ok", "ok"]
    assert out[0].answer in ("billing", "technical support", "sales")
    assert out[1].answer in (1, 2, 3)
    assert 0.0 <= out[2].answer <= 1.0
    assert all(r.abstain is False and 0.0 <= r.confidence <= 1.0 for r in out)


def test_in_process_decider() -> None:
    system = make_system("typed-decisions")
    out = system.respond(REQUESTS)
    _check(out)
    assert not system.card.abstains  # no abstain output: it is evaluated through a gate
    gated = make_system("gate:typed-decisions@0.99").respond(REQUESTS)
    assert all(r.abstain for r in gated if r.status == "ok")


@pytest.fixture(scope="module")
def td_server() -> Iterator[str]:
    load_smollm2()  # makes sure the converted weights are in the cache
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [
        sys.executable,
        "-m",
        "typed_decisions.server",
        "--model",
        str(cache_dir() / CACHE_NAME),
        "--device",
        "cpu",
        "--port",
        str(port),
    ]
    with server_process(args, f"{url}/v1/stats", seconds=240):
        yield url


def test_http_server(td_server: str) -> None:
    system = make_system("typed-decisions", SystemOptions(base_url=td_server, timeout_s=120))
    _check(system.respond(REQUESTS))


def test_choosing_the_explicit_abstain_option_is_an_abstention() -> None:
    """typed-decisions' answer shape (`choice`, `confidence`, `probabilities` keyed by
    criterion) for a paired item whose last criterion is its abstain option."""
    request = Request(
        item_id="p",
        state="The lamp costs $45.",
        question=ChoiceQuestion(
            instructions="What does it cost?",
            options=["$10", "$20", "$30"],
            abstain_option="I abstain from answering",
        ),
    )
    assert wire_question(request)["criteria"] == ["$10", "$20", "$30", "I abstain from answering"]
    wire = {"$10": 0.1, "$20": 0.1, "$30": 0.1, "I abstain from answering": 0.7}
    answer = {"choice": "I abstain from answering", "confidence": 0.7, "probabilities": wire}
    decision, confidence, probabilities = read_answer(request, answer)
    assert decision == {"abstain": True, "reason": ReasonCode.CONTRADICTORY_OPTIONS}
    assert confidence == 0.7
    assert probabilities == {"$10": 0.1, "$20": 0.1, "$30": 0.1, "abstain:option": 0.7}
