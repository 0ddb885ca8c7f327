"""exact_duplicate: the twin's duplicated option echoes the state exactly as much as the answer."""

from __future__ import annotations

import pytest

from twinbench.audit.shortcuts import duplicate_echo
from twinbench.builder import generate_all
from twinbench.corpus import Scenario, load_corpus
from twinbench.generators import Pair
from twinbench.generators.base import Pool
from twinbench.generators.exact_duplicate import ExactDuplicate, echo, echo_twins
from twinbench.records import ChoiceQuestion

SENTENCES = ["Room 2A has the projector.", "The Lisbon office uses room 4B for calls."]
STATE = " ".join(SENTENCES)


def _scenario(state: list[str], options: list[str], answer: str) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "sch-900",
            "domain": "scheduling",
            "topic": "rooms",
            "state": state,
            "question": {"type": "choice", "instructions": "Which room?", "options": options},
            "answer": answer,
            "support": 0,
            "aliases": ["projector"],
            "extra_option": "room 3D",
            "neutral": "The building has a lift.",
        }
    )


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return generate_all(load_corpus(), 0, None, generators=["exact_duplicate"]).pairs[
        "exact_duplicate"
    ]


def test_echo_is_the_best_sentence_word_share_and_whether_the_state_names_it() -> None:
    # "room 2A": both content words in sentence 1 and named; "room 7C": "room" only (1 of 2)
    assert echo(STATE, "room 2A") == (1.0, True)
    assert echo(STATE, "room 7C") == (0.5, False)
    assert echo(STATE, "the boardroom") == (0.0, False)


def test_echo_twins_are_the_wrong_options_echoed_like_the_answer() -> None:
    options = ["room 2A", "room 4B", "room 7C", "the boardroom"]
    # the answer and room 4B are both named in full: room 4B is the only one a twin may copy
    assert echo_twins(_scenario(SENTENCES, options, "room 4B")) == [0]
    # the state names the answer and no other option: no twin can copy a wrong option
    # echoed as much, so the scenario is not used
    alone = _scenario(["Room 2A has the projector.", "It seats ten."], options, "room 2A")
    assert echo_twins(alone) == []
    assert ExactDuplicate(Pool(load_corpus(), {})).accepts(alone)


def test_the_duplicated_options_echo_the_state_alike_on_both_sides(pairs: list[Pair]) -> None:
    # 1.2.0 at seed 0: the item's colliding pair echoed the state more than the rest in 12 of
    # 71 pairs, the twin's in 1 (rule duplicate_echo: 0.64 between pairs, 0.58 within);
    # now the rule's two values are equal on item and twin in every pair
    assert 55 <= len(pairs) <= 71
    for pair in pairs:
        assert (duplicate_echo(pair.item) == duplicate_echo(pair.twin)).all()
        prov = pair.item.provenance
        assert echo(pair.twin.state, prov["twin_duplicate_of"]) == echo(
            pair.twin.state, prov["duplicate_of"]
        )


def test_validity_rejects_a_twin_duplicate_the_state_echoes_less(pairs: list[Pair]) -> None:
    pair = pairs[0]
    gen = ExactDuplicate(Pool(load_corpus(), {}))
    assert gen.validity(pair) == []
    question = pair.twin.question
    assert isinstance(question, ChoiceQuestion)
    prov = pair.item.provenance
    # a twin state that names the copied option (and not the answer) is caught
    louder = pair.twin.model_copy(
        update={"state": pair.twin.state + f" The ticket names {prov['twin_duplicate_of']}."}
    )
    assert gen.validity(Pair(pair.item, louder)) == [
        "the state echoes the twin's duplicated option unlike the answer"
    ]
