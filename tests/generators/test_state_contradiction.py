"""state_contradiction: the entailed option looks like the denied ones (numbers, words, phrases)."""

from __future__ import annotations

import re

import pytest

from twinbench.audit.shortcuts import (
    content_words,
    names,
    option_numbers,
    option_scores,
    sentences,
    words,
)
from twinbench.builder import generate_all
from twinbench.corpus import ContradictionCase, load_corpus
from twinbench.generators import Pair
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion

NUMBER = re.compile(r"\d+(?:[.:,]\d+)*")


def number_class(option: str, state: str) -> str:
    """'none' (no digits), 'stated' (all its numbers occur in the state) or 'new'."""
    found = set(NUMBER.findall(option))
    if not found:
        return "none"
    return "stated" if found <= set(NUMBER.findall(state)) else "new"


def phrases(option: str, state: str) -> int:
    """Word bigrams and trigrams of `option` that also occur in `state`."""
    mine, theirs = words(option), words(state)
    return sum(
        len(
            {tuple(mine[i : i + n]) for i in range(len(mine) - n + 1)}
            & {tuple(theirs[i : i + n]) for i in range(len(theirs) - n + 1)}
        )
        for n in (2, 3)
    )


def share(option: str, state: str) -> float:
    """The largest share of the option's content words in one state sentence."""
    own = content_words(option)
    return max(len(own & content_words(s)) / len(own) for s in sentences(state))


@pytest.fixture(scope="module")
def cases() -> list[ContradictionCase]:
    return load_corpus().contradiction


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    corpus = load_corpus()
    return generate_all(corpus, 0, None, generators=["state_contradiction"]).pairs[
        "state_contradiction"
    ]


def test_number_class_worked_examples() -> None:
    state = "Maria asked for a refund of 49 euros. It was approved on 3 March."
    assert number_class("The refund was approved on 3 March", state) == "stated"
    # a denied option may keep the state's number and change another attribute
    assert number_class("The requested refund was 49 dollars", state) == "stated"
    assert number_class("The requested refund was 94 euros", state) == "new"
    assert number_class("Billing signed off on the refund", state) == "none"


def test_the_four_options_of_every_record_share_one_number_class(
    cases: list[ContradictionCase],
) -> None:
    # 1.1.0: 21 of 80 entailed options had only stated numbers against 7 of 240 denied ones,
    # and 1 entailed option a new number against 70 denied ones (option_numbers 0.64-0.72)
    classes = {"none": 0, "stated": 0, "new": 0}
    for case in cases:
        state = " ".join(case.state)
        found = {number_class(case.true_option, state)}
        found |= {number_class(c.option, state) for c in case.contradicted_options}
        assert len(found) == 1, case.id
        classes[found.pop()] += 1
    # every class is used, so neither "has a number" nor "its number is stated" tells
    assert classes == {"none": 22, "stated": 39, "new": 19}


def test_option_numbers_reads_the_same_on_item_and_twin(pairs: list[Pair]) -> None:
    assert len(pairs) == 80
    for pair in pairs:
        assert (option_numbers(pair.item) == option_numbers(pair.twin)).all()


def test_the_entailed_option_echoes_the_state_like_the_denied_ones(
    cases: list[ContradictionCase],
) -> None:
    # worked numbers (this file): the entailed option's best-sentence word share is above
    # every denied option's in 13 records and below the best one's in 50; it shares more
    # state bigrams and trigrams than the denied options' mean in 35 records, fewer in 36
    above = below = more = fewer = 0
    for case in cases:
        state = " ".join(case.state)
        denied = [c.option for c in case.contradicted_options]
        best = max(share(o, state) for o in denied)
        above += share(case.true_option, state) > best
        below += share(case.true_option, state) < best
        mean = sum(phrases(o, state) for o in denied) / len(denied)
        more += phrases(case.true_option, state) > mean
        fewer += phrases(case.true_option, state) < mean
    assert above <= 0.25 * len(cases) and below >= 0.5 * len(cases)
    assert abs(more - fewer) <= 0.15 * len(cases)


def test_no_option_is_a_state_phrase_word_for_word(pairs: list[Pair]) -> None:
    # 1.2.0 drafts copied two entailed options verbatim ("The March payroll covered 342
    # employees"), which label_mention reads as "the state names an option"
    for pair in pairs:
        state = normalize_option(pair.twin.state)
        question = pair.twin.question
        assert isinstance(question, ChoiceQuestion)
        assert not any(names(state, label) for label in question.options)
        assert len(option_scores(pair.twin)) == len(question.options) == 3


def test_modal_and_negated_wording_is_not_left_to_denied_options(
    cases: list[ContradictionCase],
) -> None:
    # 1.1.0: "be" in 1 of 80 entailed options against 20 of 240 denied, "may" 1 against 15,
    # "no" 0 against 8, "can" 0 against 7; now each rate is within 0.025 of the other
    marks = ("be", "may", "can", "is", "no", "not", "will", "only")
    for mark in marks:
        true = sum(mark in words(c.true_option) for c in cases) / len(cases)
        denied = [o.option for c in cases for o in c.contradicted_options]
        rate = sum(mark in words(o) for o in denied) / len(denied)
        assert abs(true - rate) <= 0.025, mark
