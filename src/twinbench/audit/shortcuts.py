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


#: every relational rule, by probe name (the audit's table columns, in order)
RULES: dict[str, Callable[[Shown], np.ndarray]] = {
    "label_mention": label_mention,
    "question_overlap": question_overlap,
    "negation": negation,
    "option_overlap": option_overlap,
    "duplicate": duplicate,
    "sentences": sentence_count,
}
