"""The shortcut system: each fixed rule on a hand-made item, and its place in the registry."""

from __future__ import annotations

from twinbench.records import ChoiceQuestion, NoulQuestion, ReasonCode, ScoreQuestion
from twinbench.systems import available, make_system
from twinbench.systems.base import Request

TEAMS = ["billing", "sales", "technical support"]


def _ask(state: str, question: ChoiceQuestion | ScoreQuestion | NoulQuestion) -> tuple:
    (resp,) = make_system("shortcut").respond([Request("x", state, question)])
    assert resp.status == "ok"
    return (resp.reason, None) if resp.abstain else (None, resp.answer)


def test_answers_the_option_a_state_sentence_names() -> None:
    q = ChoiceQuestion(instructions="Which team should handle this ticket?", options=TEAMS)
    state = "The ticket reports a double charge. The billing team owns invoices."
    assert _ask(state, q) == (None, "billing")


def test_abstains_underspecified_when_the_state_shares_few_question_words() -> None:
    # question words: team, handle, ticket; the state has none of them (0 < 0.25)
    q = ChoiceQuestion(instructions="Which team should handle this ticket?", options=TEAMS)
    assert _ask("A customer wrote from Porto on Monday.", q) == (
        ReasonCode.UNDERSPECIFIED_STATE,
        None,
    )


def test_abstains_contradictory_on_colliding_options_and_on_negated_question_words() -> None:
    q = ChoiceQuestion(
        instructions="Which team should handle this ticket?", options=[*TEAMS, "Billing."]
    )
    assert _ask("The billing team owns this ticket.", q)[0] == ReasonCode.CONTRADICTORY_OPTIONS
    # phone, callback only in the negated sentence; agent only in the other: 2 of 3 >= 0.5
    q = ChoiceQuestion(
        instructions="Which agent handled the phone callback?", options=["Tomas", "Keiko"]
    )
    state = "No phone callback took place. Agent Tomas sent the email reply."
    assert _ask(state, q)[0] == ReasonCode.CONTRADICTORY_OPTIONS


def test_score_takes_the_named_label_and_non_english_abstains() -> None:
    q = ScoreQuestion(instructions="How urgent is this ticket?", legend={"low": 1, "high": 3})
    assert _ask("The lead marked the urgent ticket as high.", q) == (None, 3)
    assert _ask("The lead looked at the urgent ticket twice.", q) == (
        ReasonCode.UNDERSPECIFIED_STATE,
        None,
    )
    spanish = "El cliente escribió desde Oporto el lunes por la mañana sobre la factura."
    assert _ask(spanish, q)[0] == ReasonCode.OUT_OF_LANGUAGE


def test_noul_reads_the_closest_sentence_negation() -> None:
    q = NoulQuestion(instructions="Was the refund approved by the billing team?")
    assert _ask("The billing team approved the refund on Monday.", q) == (None, 1.0)
    # approved only in the negated sentence (1 of 4 words < 0.5), which shares the most words
    state = "The billing team reviewed the refund. The billing team has not approved the refund."
    assert _ask(state, q) == (None, 0.0)


def test_listed_among_the_systems() -> None:
    assert "shortcut" in available()
