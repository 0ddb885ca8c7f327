"""false_premise 1.2.0: the twin's question does not echo the state more than the item's, and
the questions are score and yes/no, not choice (issue 22).

Worked numbers (seed 0, 80 pairs; "closer" = the larger character-4-gram Jaccard of the
question with its best state sentence, the first feature of the audit's state_echo rule):

* 1.1.0: the twin was closer in 70 pairs, the item in 9 (1 tie), so "the member that copies
  the state's wording is the answerable one" read 70 / 80 = 88 % of pairs right.
* 1.2.0: the twin is closer in 40, the item in 36, 4 ties (50 % and 45 %); by the rule's
  second feature (SequenceMatcher ratio) 36 and 42 (45 % and 52 %).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from twinbench.audit.shortcuts import Shown, state_echo
from twinbench.corpus import Corpus, load_corpus
from twinbench.generators import Generator, Pair, generator_classes
from twinbench.generators.base import item_seed
from twinbench.partition import partition
from twinbench.records import ChoiceQuestion, NoulQuestion, ScoreQuestion

#: the most pairs (share) in which one member of a pair may be the closer to the state
CLOSER_AT_MOST = 0.55


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def generator(corpus: Corpus) -> Generator[Any]:
    classes = generator_classes(["false_premise"], "test")
    return classes[0](partition(corpus, 0, classes)["false_premise"])


@pytest.fixture(scope="module")
def pairs(generator: Generator[Any]) -> list[Pair]:
    return [
        generator.generate(s, item_seed(0, "false_premise", generator.source_key(s)))
        for s in generator.sources()
    ]


def closer_shares(members: Sequence[tuple[Shown, Shown]], feature: int) -> tuple[float, float]:
    """Shares of (item, twin) pairs whose twin (first) or item (second) scores higher on
    state_echo[feature]: how often each member's question is the closer to its state."""
    twin = item = 0
    for unanswerable, answerable in members:
        a, b = state_echo(unanswerable)[feature], state_echo(answerable)[feature]
        twin += b > a
        item += a > b
    return twin / len(members), item / len(members)


def test_the_version_is_1_2_0_and_every_pair_is_valid(
    generator: Generator[Any], pairs: list[Pair]
) -> None:
    assert generator.version == "1.2.0"
    assert len(pairs) == 80
    assert all(generator.validity(p) == [] for p in pairs)


@pytest.mark.parametrize("feature", [0, 1], ids=["char4_jaccard", "sequence_ratio"])
def test_neither_question_copies_the_state_more_often(pairs: list[Pair], feature: int) -> None:
    # issue 22: the 1.1.0 twin was closer to its best state sentence in 70 of 80 pairs
    twin, item = closer_shares([(p.item, p.twin) for p in pairs], feature)
    assert twin <= CLOSER_AT_MOST, twin
    assert item <= CLOSER_AT_MOST, item  # and the mechanism is not turned around


@dataclass(frozen=True)
class _Shown:
    question: NoulQuestion
    state: str = "The Pro plan exports CSV files. The Basic plan only prints."


def test_closer_shares_counts_each_side() -> None:
    def shown(text: str) -> _Shown:
        return _Shown(NoulQuestion(instructions=text))

    echo = (shown("Does the Max plan export PDF?"), shown("Does the Pro plan export CSV files?"))
    same = (shown("Does the Pro plan print?"), shown("Does the Pro plan print?"))
    assert closer_shares([echo], 0) == (1.0, 0.0)  # the twin copies sentence 1
    assert closer_shares([echo[::-1], same], 0) == (0.0, 0.5)  # ties count for neither


def test_question_types_no_choice_and_balanced_yes_no(pairs: list[Pair]) -> None:
    kinds = [p.item.question.type for p in pairs]
    assert kinds.count("score") >= 36 and kinds.count("noul") >= 44
    assert "choice" not in kinds  # the family's other generators are choice only
    answers = [p.twin.expected.answer for p in pairs if p.twin.question.type == "noul"]
    assert all(isinstance(a, bool) for a in answers)
    assert 0.4 <= sum(answers) / len(answers) <= 0.6
    for pair in pairs:
        assert pair.item.question.type == pair.twin.question.type
        if isinstance(pair.twin.question, ScoreQuestion):
            assert pair.twin.expected.answer in pair.twin.question.legend.values()


def test_a_yes_no_item_asks_a_property_not_whether_it_happened(pairs: list[Pair]) -> None:
    # "Did X happen?" over a state that denies X leaves "no" simply true: not a false premise
    existence = re.compile(r"^(is|are|was|were) there\b|\b(happen|take place|took place)\?$", re.I)
    for pair in pairs:
        if isinstance(pair.item.question, NoulQuestion):
            assert not existence.search(pair.item.question.instructions), pair.item.id


def test_the_denying_sentence_is_in_the_state(corpus: Corpus) -> None:
    for case in corpus.false_premise:
        assert 0 <= case.denied_by < len(case.state), case.id
        assert case.premise_question.instructions != case.true_question.instructions


def test_validity_rejects_a_different_legend_or_type(
    generator: Generator[Any], pairs: list[Pair]
) -> None:
    score = next(p for p in pairs if isinstance(p.item.question, ScoreQuestion))
    question = score.item.question
    assert isinstance(question, ScoreQuestion)
    relabelled = question.model_copy(update={"legend": dict(reversed(question.legend.items()))})
    broken = Pair(score.item.model_copy(update={"question": relabelled}), score.twin)
    assert "the questions must show the same legend" in generator.validity(broken)
    yes_no = NoulQuestion(instructions=question.instructions + " Really?")
    retyped = Pair(score.item.model_copy(update={"question": yes_no}), score.twin)
    assert "the questions must share a type and differ in wording" in generator.validity(retyped)


def test_score_and_yes_no_questions_are_shown_as_written(
    generator: Generator[Any], corpus: Corpus
) -> None:
    # only choice options are shuffled; a legend keeps its rubric order at every seed
    case = next(c for c in corpus.false_premise if isinstance(c.premise_question, ScoreQuestion))
    for seed in (0, 1, 2):
        pair = generator.generate(case, seed)
        assert pair.item.question == case.premise_question
        assert pair.twin.question == case.true_question
        assert not isinstance(pair.item.question, ChoiceQuestion)
