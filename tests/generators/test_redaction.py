"""redaction 1.4.0: within a pair the neutral sentence reads like the support sentence it replaces.

A reader who sees both members of a pair could tell 1.3.0's item from its twin by the swapped
sentence alone: the support had the number, the longer words and the question's words, the
neutral had the commas. These tests state each of those mechanisms as a direct count over every
scenario with a neutral sentence (216), with the 1.3.0 figure beside the bound.
"""

from __future__ import annotations

import re

import pytest

from twinbench.audit.shortcuts import content_words
from twinbench.corpus import Scenario, load_corpus
from twinbench.generators.base import join

NUMBER = re.compile(r"\d+(?:[.:,]\d+)*")


def mean_word_length(sentence: str) -> float:
    """Characters per whitespace token (punctuation included, as the length probe counts)."""
    return len(sentence) / len(sentence.split())


def numbers(sentence: str) -> int:
    """Digit runs, with their decimal, time and thousands separators ("5.5", "01:00", "18,000")."""
    return len(NUMBER.findall(sentence))


def marks(sentence: str) -> int:
    """Characters that are neither letters, digits nor spaces."""
    return sum(not ch.isalnum() and not ch.isspace() for ch in sentence)


def lost_question_word(scenario: Scenario) -> bool:
    """Whether the item's state lacks a content word of the question that the twin's state has."""
    assert scenario.neutral is not None
    asked = content_words(scenario.question.instructions)
    sentences = list(scenario.state)
    twin = content_words(join(sentences))
    sentences[scenario.support] = scenario.neutral
    return bool(asked & twin - content_words(join(sentences)))


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return [s for s in load_corpus().scenarios if s.neutral is not None]


def _pairs(scenarios: list[Scenario]) -> list[tuple[str, str]]:
    """(support, neutral) per scenario."""
    return [(s.state[s.support], s.neutral) for s in scenarios if s.neutral is not None]


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def test_profile_by_hand() -> None:
    support = "The label says to take one tablet every 12 hours."
    neutral = "The label says to take one 10 mg tablet with water."
    assert mean_word_length(support) == 49 / 10
    assert mean_word_length(neutral) == 51 / 11
    assert numbers(support) == numbers(neutral) == 1
    assert numbers("The payment of 18,000 euros is above the 10,000 euro limit.") == 2
    assert numbers("The rate includes a full breakfast until ten.") == 0
    assert marks(support) == marks(neutral) == 1
    assert marks("The contractor quoted $2,750 to fit it.") == 3


def test_every_scenario_has_its_neutral(scenarios: list[Scenario]) -> None:
    assert len(scenarios) == 216


def test_neutral_words_are_not_plainer(scenarios: list[Scenario]) -> None:
    """1.3.0: the neutral had the shorter words in 68% of pairs (147 of 216), the longer in 32%;
    1.4.0: 54% (117) and 44% (95)."""
    shorter = [mean_word_length(n) < mean_word_length(s) for s, n in _pairs(scenarios)]
    longer = [mean_word_length(n) > mean_word_length(s) for s, n in _pairs(scenarios)]
    assert _share(shorter) <= 0.60
    assert _share(longer) <= 0.60


def test_the_number_is_not_the_support_sentences_alone(scenarios: list[Scenario]) -> None:
    """1.3.0: the support had more numbers than its neutral in 21% of pairs (45 of 216), the
    neutral more in 8% (17); 1.4.0: 7% (16) and 4% (9)."""
    pairs = _pairs(scenarios)
    assert _share([numbers(s) > numbers(n) for s, n in pairs]) <= 0.10
    assert _share([numbers(n) > numbers(s) for s, n in pairs]) <= 0.10


def test_the_item_keeps_the_questions_words(scenarios: list[Scenario]) -> None:
    """1.3.0: the item's state lacked a question word the twin's had in 36 of 216 pairs (17%);
    1.4.0: 15 (7%)."""
    assert _share([lost_question_word(s) for s in scenarios]) <= 0.10


def test_punctuation_matches(scenarios: list[Scenario]) -> None:
    """1.3.0: the support had more punctuation marks in 21% of pairs, the neutral in 29%, and the
    comma counts differed in 22% (the neutral had more in 17%); 1.4.0: 6%, 8% and 5%."""
    pairs = _pairs(scenarios)
    assert _share([marks(s) > marks(n) for s, n in pairs]) <= 0.12
    assert _share([marks(n) > marks(s) for s, n in pairs]) <= 0.12
    assert _share([n.count(",") != s.count(",") for s, n in pairs]) <= 0.08
