"""reference_ambiguity: neither side of the edit is the one that repeats the state's wording.

Issue 22's mechanism: in 1.1.0 the twin's edited sentence reused a phrase the rest of the state
already had ("the 9:50 train") and the item's a category phrase found nowhere else ("the
morning train"). The check below reads the one sentence item and twin differ in: the word
n-grams (2 to 6 words) of one side's sentence that the other side's lacks, and which of them
occur in another state sentence (or, in the `with_question` reading, in the question or an
option). Worked numbers over the 80 records, all words, state only:

* 1.1.0: only the twin's edit repeats in 51 pairs, only the item's in 3 (both 5, neither 21),
  share of pairs where the item repeats more, ties one half, 0.20; the repeated run is longer
  on the twin's side in 54 pairs, on the item's in 4, and 3 words or more in 33 twins, 1 item
  (whole "the hiring meeting" against one bigram);
* 1.2.0: 27 against 29 (both 1, neither 23), share 0.51; runs of 3 or more words, twin 10,
  item 9; the longest run is longer on the item's side in 30 pairs, on the twin's in 27.
"""

from __future__ import annotations

import pytest

from twinbench.audit.shortcuts import STOPWORDS, words
from twinbench.builder import generate_all
from twinbench.corpus import AmbiguityCase, load_corpus
from twinbench.generators import generator_classes
from twinbench.partition import partition
from twinbench.records import ChoiceQuestion

SIZES = range(2, 7)
#: (content words only, with the question and options as context)
READINGS = [(False, False), (False, True), (True, False), (True, True)]


def _tokens(text: str, content_only: bool) -> list[str]:
    found = words(text)
    return [w for w in found if w not in STOPWORDS] if content_only else found


def _grams(tokens: list[str]) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for n in SIZES for i in range(len(tokens) - n + 1)}


def _changed(case: AmbiguityCase) -> list[int]:
    """The indices of the sentences item and twin differ in."""
    pairs = zip(case.ambiguous_state, case.twin_state, strict=True)
    return [i for i, (a, b) in enumerate(pairs) if a != b]


def edit_repeats(
    case: AmbiguityCase, *, content_only: bool = False, with_question: bool = False
) -> tuple[int, int]:
    """Longest run of words (0: none) that the item's / the twin's edited sentence alone has
    and that the rest of the state (and, `with_question`, the question or an option) repeats."""
    (edited,) = _changed(case)
    context = [s for i, s in enumerate(case.ambiguous_state) if i != edited]
    if with_question:
        assert isinstance(case.question, ChoiceQuestion)
        context += [case.question.instructions, *case.question.options]
    seen = set().union(*(_grams(_tokens(s, content_only)) for s in context))
    item = _grams(_tokens(case.ambiguous_state[edited], content_only))
    twin = _grams(_tokens(case.twin_state[edited], content_only))
    return (
        max((len(g) for g in (item - twin) & seen), default=0),
        max((len(g) for g in (twin - item) & seen), default=0),
    )


def _case(item_edit: str, twin_edit: str) -> AmbiguityCase:
    shared = [
        "Rosa holds tickets for two morning trains on Saturday.",
        "The 7:15 train goes to Bristol.",
        "The 9:50 train goes to Cardiff.",
    ]
    return AmbiguityCase.model_validate(
        {
            "id": "amb-test",
            "domain": "travel",
            "ambiguous_state": [*shared, f"A notice says {item_edit} leaves from platform 3."],
            "twin_state": [*shared, f"A notice says {twin_edit} leaves from platform 3."],
            "question": {
                "type": "choice",
                "instructions": "Where is the train with the platform change going?",
                "options": ["Bristol", "Cardiff", "Exeter"],
            },
            "answer": "Cardiff",
            "readings": [
                {"referent": "the 7:15 train", "option": "Bristol"},
                {"referent": "the 9:50 train", "option": "Cardiff"},
            ],
            "edit": "test",
        }
    )


def test_edit_repeats_reads_the_issue_example() -> None:
    # 1.1.0's amb-025: "the 9:50 train" repeats four words ("the 9 50 train"), "the morning
    # train" none ("morning trains" is another word)
    assert edit_repeats(_case("the morning train", "the 9:50 train")) == (0, 4)
    assert edit_repeats(_case("the morning train", "the 9:50 train"), content_only=True) == (0, 3)
    # 1.2.0's way round: the item repeats the shared category, the twin names its train anew
    case = _case("a morning train", "the later train")
    case.ambiguous_state[0] = "Rosa holds tickets for two trains, and each is a morning train."
    case.twin_state[0] = case.ambiguous_state[0]
    assert edit_repeats(case) == (3, 0)


@pytest.fixture(scope="module")
def cases() -> list[AmbiguityCase]:
    return list(load_corpus().ambiguity)


@pytest.mark.parametrize(("content_only", "with_question"), READINGS)
def test_neither_side_repeats_the_state_more_often(
    cases: list[AmbiguityCase], content_only: bool, with_question: bool
) -> None:
    runs = [edit_repeats(c, content_only=content_only, with_question=with_question) for c in cases]
    item_only = sum(i > 0 and t == 0 for i, t in runs)
    twin_only = sum(t > 0 and i == 0 for i, t in runs)
    # 1.1.0, all words, state only: 3 against 51 (share 0.06); 1.2.0: 29 against 27 (0.52)
    assert 0.4 <= item_only / (item_only + twin_only) <= 0.6, (item_only, twin_only)
    # a system that sees both members and picks the one whose edit repeats less: 1.1.0 0.80
    share = sum((i > 0) > (t > 0) or 0.5 * ((i > 0) == (t > 0)) for i, t in runs) / len(runs)
    assert 0.4 <= share <= 0.6, share


@pytest.mark.parametrize(("content_only", "with_question"), READINGS)
def test_the_repeated_run_is_as_long_on_either_side(
    cases: list[AmbiguityCase], content_only: bool, with_question: bool
) -> None:
    runs = [edit_repeats(c, content_only=content_only, with_question=with_question) for c in cases]
    longer = sum(i > t for i, t in runs)
    shorter = sum(i < t for i, t in runs)
    # all words, state only: 1.1.0 the item's run longer in 4 pairs, the twin's in 54; 1.2.0 30, 27
    assert 0.4 <= longer / (longer + shorter) <= 0.6, (longer, shorter)
    # whole phrases of 3 or more words, all words, state only: 1.1.0 twin 33, item 1; 1.2.0 10, 9
    long_item = sum(i >= 3 for i, _ in runs)
    long_twin = sum(t >= 3 for _, t in runs)
    assert abs(long_item - long_twin) <= 4, (long_item, long_twin)


def test_every_pair_is_valid_and_differs_in_its_last_sentence(cases: list[AmbiguityCase]) -> None:
    assert len(cases) == 80
    for case in cases:
        assert _changed(case) == [len(case.ambiguous_state) - 1], case.id
        assert isinstance(case.question, ChoiceQuestion)
        options = {r.option for r in case.readings}
        assert len(options) == 2 and options <= set(case.question.options), case.id
        assert case.answer in options, case.id
    corpus = load_corpus()
    (cls,) = generator_classes(["reference_ambiguity"], "test")
    generator = cls(partition(corpus, 0, [cls])["reference_ambiguity"])
    pairs = generate_all(corpus, 0, None).pairs["reference_ambiguity"]
    assert len(pairs) == 80
    assert all(generator.validity(pair) == [] for pair in pairs)
