"""Laya and Jev adapters against local servers speaking their documented wire formats."""

from __future__ import annotations

import pytest

from twinbench.records import ChoiceQuestion, NoulQuestion, ScoreQuestion
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request

from .servers import serve, systemone_handler

BILLING = Request(
    item_id="a",
    state="Send it to billing please.",
    question=ChoiceQuestion(instructions="Team?", options=["sales", "billing", "support"]),
)
VAGUE = Request(
    item_id="b",
    state="Something happened.",
    question=ChoiceQuestion(instructions="Team?", options=["sales", "billing", "support"]),
)
URGENCY = Request(
    item_id="c",
    state="This is high priority.",
    question=ScoreQuestion(instructions="Urgency?", legend={"low": 1, "medium": 2, "high": 3}),
)
YES = Request(item_id="d", state="Yes, refund it.", question=NoulQuestion(instructions="Refund?"))


def test_laya_batches_shared_questions_and_flags_low_confidence() -> None:
    with serve(systemone_handler(jev=False)) as (url, log):
        system = make_system("laya:0.5", SystemOptions(base_url=url))
        out = system.respond([BILLING, VAGUE, URGENCY, YES])
    assert [r.status for r in out] == ["ok"] * 4
    assert (out[0].abstain, out[0].answer, out[0].confidence) == (False, "billing", 0.9)
    # below min_confidence: Laya's low_confidence becomes an underspecified_state abstention
    assert (out[1].abstain, out[1].reason) == (True, "underspecified_state")
    assert out[2].answer == 3  # probabilities keyed by level index -> legend value of "high"
    assert out[3].answer == 0.8
    paths = sorted(path for path, _ in log)
    assert paths == ["/v1/systemone", "/v1/systemone", "/v1/systemone/batch"]
    batch = next(body for path, body in log if path.endswith("/batch"))
    assert batch["states"] == [BILLING.state, VAGUE.state]
    assert batch["min_confidence"] == 0.5
    assert system.card.abstains and "underspecified_state" in system.card.notes


def test_jev_reads_choice_index_and_rejects_256_options() -> None:
    # items never carry 256 options (the schema caps them at 255); a cardinality stress
    # request is built past validation to check that Jev's 400 is a rejection
    options = [f"option {i}" for i in range(256)]
    many = Request(
        item_id="m",
        state="x",
        question=ChoiceQuestion.model_construct(instructions="Pick", options=options),
    )
    with serve(systemone_handler(jev=True)) as (url, _):
        out = make_system("jev", SystemOptions(base_url=url)).respond([BILLING, many])
    assert (out[0].status, out[0].answer, out[0].confidence) == ("ok", "billing", 0.9)
    assert out[1].status == "rejected"
    assert out[1].abstain is None and "HTTP 400" in (out[1].error or "")


def test_gate_turns_low_confidence_jev_answers_into_abstentions() -> None:
    with serve(systemone_handler(jev=True)) as (url, _):
        system = make_system("gate:jev@0.5:contradictory_options", SystemOptions(base_url=url))
        out = system.respond([BILLING, VAGUE])
    assert (out[0].abstain, out[0].answer) == (False, "billing")
    assert (out[1].abstain, out[1].reason) == (True, "contradictory_options")
    assert out[1].raw["gated_answer"] == "sales"
    assert "gate" in system.card.name and "no abstain output" in system.card.notes


PAIRED = Request(
    item_id="e",
    state="The reply was: I abstain from answering.",
    question=ChoiceQuestion(
        instructions="Team?",
        options=["sales", "billing", "support"],
        abstain_option="I abstain from answering",
    ),
)


def test_choosing_the_explicit_abstain_option_is_an_abstention() -> None:
    """The local servers pick the criterion the state names: here the abstain option, sent as
    the last criterion (Laya's `choice`, Jev's `choice_index` 3)."""
    for spec in ("laya", "laya:0.5", "jev"):
        with serve(systemone_handler(jev=spec == "jev")) as (url, log):
            (res,) = make_system(spec, SystemOptions(base_url=url)).respond([PAIRED])
        criteria = log[0][1]["questions"]["q"]["criteria"]
        assert criteria == ["sales", "billing", "support", "I abstain from answering"]
        assert (res.status, res.abstain, res.reason, res.confidence) == (
            "ok",
            True,
            "contradictory_options",
            0.9,
        ), spec
        if spec != "jev":
            assert res.probabilities == pytest.approx(
                {"sales": 0.1 / 3, "billing": 0.1 / 3, "support": 0.1 / 3, "abstain:option": 0.9}
            )
