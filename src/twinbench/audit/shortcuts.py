"""Relational shortcut rules: cheap features that read no meaning, only words and positions.

A careful re-read found rules that tell items from twins although length, n-gram and
perplexity probes do not: "no option is named in the state", "the question's words occur only
in negated sentences", "one option copies a state sentence", "two options collide". Each rule
here is a small feature vector computed from what a model is shown; the similarity audit scores
each as a probe (cross-validated AUC), and the `shortcut` system combines them into decisions,
so a report shows what a reader without understanding would get.

Words are the `\\w+` runs of the published normalisation (twinbench.normalize) with a short
English stop list removed; sentences are split after `.`, `!`, `?` (and their CJK forms).
Written by hand: no library offers these particular relational features.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import Protocol

import numpy as np

from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, Question, ScoreQuestion


class Shown(Protocol):
    """What the rules read: the state and the question (an Item or a system Request)."""

    @property
    def state(self) -> str: ...

    @property
    def question(self) -> Question: ...


_STOP_TEXT = """
a an the of to in on at for by with from and or but as is are was were be been being it
its this that these those there their they them he she his her we our you your i my me
which what who whom whose when where why how does do did has have had will would should
can could may might must shall than then so if about into over under after before during
per each any all some more most other such only also just very one
"""
#: English function words: never counted as content words
STOPWORDS = frozenset(_STOP_TEXT.split())
#: words that make a sentence a denial (the negation-locality rule looks for them)
_NEGATION_TEXT = "no not never none nor neither without cannot nobody nothing nowhere"
NEGATIONS = frozenset(_NEGATION_TEXT.split())
#: sentence ends: Latin, Devanagari (danda), Khmer (khan), Arabic question mark, CJK
_SENTENCE = re.compile(r"(?<=[.!?؟।॥។])\s+|(?<=[。！？])")
_WORD = re.compile(r"\w+")


def sentences(text: str) -> list[str]:
    """The state's sentences (split after sentence-final punctuation)."""
    return [s for s in _SENTENCE.split(text.strip()) if s]


def words(text: str) -> list[str]:
    """All word tokens of `text` after the published normalisation."""
    return _WORD.findall(normalize_option(text))


def content_words(text: str) -> set[str]:
    """Word tokens without stop words and negations (what a overlap rule compares)."""
    return {w for w in words(text) if w not in STOPWORDS and w not in NEGATIONS}


def choice_labels(item: Shown) -> list[str]:
    """The labels a state could name: options (choice) or legend labels (score); none for noul."""
    question = item.question
    if isinstance(question, ChoiceQuestion):
        return list(question.options)
    if isinstance(question, ScoreQuestion):
        return list(question.legend)
    return []


def names(text: str, label: str) -> bool:
    """Whether normalised `text` contains `label` as whole words (after normalisation)."""
    needle = normalize_option(label)
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None


def distinct_labels(item: Shown) -> list[str]:
    """The labels with the published normalisation's duplicates removed (first kept)."""
    seen: dict[str, str] = {}
    for label in choice_labels(item):
        seen.setdefault(normalize_option(label), label)
    return list(seen.values())


def label_mention(item: Shown) -> np.ndarray:
    """[distinct labels named in the state, whether any is]: twins that name the answer's label."""
    state = normalize_option(item.state)
    named = sum(names(state, label) for label in distinct_labels(item))
    return np.array([named, float(named > 0)])


def question_overlap(item: Shown) -> np.ndarray:
    """[share of the question's content words found in the state, their count]."""
    asked = content_words(item.question.instructions)
    found = len(asked & content_words(item.state))
    return np.array([found / max(1, len(asked)), found])


def _negated(sentence: str) -> bool:
    tokens = words(sentence)
    return any(t in NEGATIONS for t in tokens) or "n't" in sentence.lower()


def negation(item: Shown) -> np.ndarray:
    """[share of the question's words found only in negated sentences, first denial's position
    as a share of the state (1 when none), negated sentences]."""
    parts = sentences(item.state)
    negated = [_negated(s) for s in parts]
    asked = content_words(item.question.instructions)
    where: dict[str, set[bool]] = {}
    for sentence, neg in zip(parts, negated, strict=True):
        for word in content_words(sentence) & asked:
            where.setdefault(word, set()).add(neg)
    only_negated = sum(places == {True} for places in where.values())
    first = next((i for i, neg in enumerate(negated) if neg), len(parts))
    return np.array(
        [only_negated / max(1, len(where)), first / max(1, len(parts)), float(sum(negated))]
    )


def option_scores(item: Shown) -> list[float]:
    """Per distinct answer choice: the largest share of its content words in one state sentence."""
    parts = [content_words(s) for s in sentences(item.state)] or [set()]
    scores = []
    for label in distinct_labels(item):
        own = content_words(label)
        scores.append(max(len(own & p) / len(own) for p in parts) if own else 0.0)
    return scores


def option_overlap(item: Shown) -> np.ndarray:
    """[best option's sentence overlap, mean overlap, margin of the best over the second]."""
    scores = sorted(option_scores(item), reverse=True) or [0.0]
    second = scores[1] if len(scores) > 1 else 0.0
    return np.array([scores[0], float(np.mean(scores)), scores[0] - second])


def duplicate(item: Shown) -> np.ndarray:
    """[whether two answer choices collide after the published normalisation]."""
    labels = [normalize_option(label) for label in choice_labels(item)]
    return np.array([float(len(set(labels)) != len(labels))])


def sentence_count(item: Shown) -> np.ndarray:
    """[sentences in the state, sentences in the question]."""
    return np.array([len(sentences(item.state)), len(sentences(item.question.instructions))])


def _char_grams(text: str, n: int = 4) -> set[str]:
    flat = " ".join(words(text))
    return {flat[i : i + n] for i in range(max(0, len(flat) - n + 1))}


def state_echo(item: Shown) -> np.ndarray:
    """[best character-4-gram Jaccard of the question with one state sentence, best
    SequenceMatcher ratio]: a question that copies the state's wording (issue 22: true-premise
    twins did, in 67 of 77 pairs)."""
    asked = item.question.instructions
    grams = _char_grams(asked)
    best_jaccard, best_ratio = 0.0, 0.0
    for sentence in sentences(item.state):
        other = _char_grams(sentence)
        if grams or other:
            best_jaccard = max(best_jaccard, len(grams & other) / len(grams | other))
        best_ratio = max(best_ratio, SequenceMatcher(None, asked.lower(), sentence.lower()).ratio())
    return np.array([best_jaccard, best_ratio])


def _word_ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def repeated_phrase(item: Shown) -> np.ndarray:
    """[word bigrams of the question and its choices also in the state, trigrams, longest run
    of words shared with the state]: a question that repeats a phrase the state already used
    ("the 9:50 train") against one that names a category ("the morning train")."""
    state = words(item.state)
    shown = words(" ".join([item.question.instructions, *choice_labels(item)]))
    counts = [float(len(_word_ngrams(shown, n) & _word_ngrams(state, n))) for n in (2, 3)]
    longest = 0
    for n in range(1, 9):
        if not _word_ngrams(shown, n) & _word_ngrams(state, n):
            break
        longest = n
    return np.array([*counts, float(longest)])


_NUMBER = re.compile(r"\d+(?:[.:,]\d+)*")


def option_numbers(item: Shown) -> np.ndarray:
    """[choices with a number, of them the share whose numbers all occur in the state, choices
    with a number the state lacks]: a correct option that copies the state's number against
    denied ones that change it."""
    stated = set(_NUMBER.findall(item.state))
    numbered = [set(_NUMBER.findall(label)) for label in choice_labels(item)]
    numbered = [found for found in numbered if found]
    inside = sum(found <= stated for found in numbered)
    return np.array(
        [float(len(numbered)), inside / max(1, len(numbered)), float(len(numbered) - inside)]
    )


def duplicate_echo(item: Shown) -> np.ndarray:
    """[state overlap of the colliding choices minus that of the others, of the colliding ones]
    (0 without a collision): a duplicated option that echoes the state more than the rest."""
    labels = choice_labels(item)
    keys = [normalize_option(label) for label in labels]
    colliding = {k for k in keys if keys.count(k) > 1}
    if not colliding:
        return np.array([0.0, 0.0])
    parts = [content_words(s) for s in sentences(item.state)] or [set()]

    def overlap(label: str) -> float:
        own = content_words(label)
        return max(len(own & p) / len(own) for p in parts) if own else 0.0

    dup = [overlap(lab) for lab, k in zip(labels, keys, strict=True) if k in colliding]
    rest = [overlap(lab) for lab, k in zip(labels, keys, strict=True) if k not in colliding]
    return np.array([float(np.mean(dup)) - float(np.mean(rest or [0.0])), float(np.mean(dup))])


#: every relational rule, by probe name (the audit's table columns, in order)
RULES: dict[str, Callable[[Shown], np.ndarray]] = {
    "label_mention": label_mention,
    "question_overlap": question_overlap,
    "negation": negation,
    "option_overlap": option_overlap,
    "duplicate": duplicate,
    "sentences": sentence_count,
    "state_echo": state_echo,
    "repeated_phrase": repeated_phrase,
    "option_numbers": option_numbers,
    "duplicate_echo": duplicate_echo,
}
