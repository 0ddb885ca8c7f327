"""`shortcut`: a system that never reads for meaning, only the relational shortcut rules.

It shows what a cheater gets on a benchmark: if its ideal-pair rate is high, the benchmark's
items can be told from their twins without understanding them. The rules are fixed (no
training) and checked in order; the first that fires decides:

1. fewer than `ENGLISH_SHARE` of the state's words are English stop words or negations → abstain
   `out_of_language`;
2. two options collide after the published normalisation → abstain `contradictory_options`;
3. the question's words occur only in negated sentences → abstain `contradictory_options`;
4. under `OVERLAP` of the question's content words occur in the state → abstain
   `underspecified_state`;
5. choice: sentence-like options (`STATEMENT_WORDS`+ content words) whose best copy of a state
   sentence is below `COPY` → abstain `contradictory_options`; short options none of which is
   named in or overlaps the state → abstain `underspecified_state`; otherwise the option with
   the highest sentence overlap (first on ties);
   score: the legend label named in the state, else abstain `underspecified_state`;
   noul: P(yes) 0 if the sentence sharing most words with the question is negated, else 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from twinbench.audit.shortcuts import (
    NEGATIONS,
    STOPWORDS,
    Shown,
    content_words,
    distinct_labels,
    duplicate,
    label_mention,
    names,
    negation,
    option_scores,
    question_overlap,
    sentences,
    words,
)
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, NoulQuestion, ReasonCode, Response
from twinbench.systems.base import Request, SystemCard, SystemOptions, response

ENGLISH_SHARE = 0.15
OVERLAP = 0.25
STATEMENT_WORDS = 3
COPY = 0.75


def decide(item: Shown) -> tuple[ReasonCode | None, str | float | None]:
    """(abstain code, None) or (None, answer) by the fixed rules of the module docstring."""
    tokens = words(item.state)
    if (
        tokens
        and sum(t in STOPWORDS or t in NEGATIONS for t in tokens) / len(tokens) < ENGLISH_SHARE
    ):
        return ReasonCode.OUT_OF_LANGUAGE, None
    if duplicate(item)[0]:
        return ReasonCode.CONTRADICTORY_OPTIONS, None
    if negation(item)[0] >= 0.5:
        return ReasonCode.CONTRADICTORY_OPTIONS, None
    if question_overlap(item)[0] < OVERLAP:
        return ReasonCode.UNDERSPECIFIED_STATE, None
    question = item.question
    labels = distinct_labels(item)
    if isinstance(question, ChoiceQuestion):
        scores = option_scores(item)
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        statements = all(len(content_words(o)) >= STATEMENT_WORDS for o in labels)
        if statements and scores[best] < COPY:
            return ReasonCode.CONTRADICTORY_OPTIONS, None
        if not statements and scores[best] == 0 and not label_mention(item)[1]:
            return ReasonCode.UNDERSPECIFIED_STATE, None
        return None, labels[best]
    if isinstance(question, NoulQuestion):
        asked = content_words(question.instructions)
        closest = max(sentences(item.state), key=lambda s: len(content_words(s) & asked))
        return None, 0.0 if any(w in {"no", "not", "never"} for w in words(closest)) else 1.0
    state = normalize_option(item.state)
    for label, value in question.legend.items():
        if names(state, label):
            return None, value
    return ReasonCode.UNDERSPECIFIED_STATE, None


class Shortcut:
    """The shortcut rules as a system (see the module docstring)."""

    card = SystemCard(
        name="shortcut",
        version="1",
        languages=("en",),
        notes="untrained word-overlap, negation, duplicate and language rules; reads no meaning",
    )

    def respond(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            code, answer = decide(req)
            fields = {"reason": code} if code is not None else {"answer": answer}
            out.append(
                response(req, self.card.name, abstain=code is not None, latency_ms=0.0, **fields)
            )
        return out


def factory(arg: str | None, options: SystemOptions) -> Shortcut:
    """Factory for `shortcut` (no argument)."""
    return Shortcut()
