"""Exact checks a script can decide, the published normalisation they use, and rule labels.

**Normalisation** (`normalise`): NFKC, case folding, thousands separators dropped ("1,022" is
1022), "percent" written "%", number words zero to twenty written as digits, ordinals
("14th") as numbers, and a day next to a month name ("14 March", "March 14", "14th of March")
written "14 march"; then punctuation other than a number's own (0.5, 10:00, 0x3, 20%) is
removed and whitespace collapsed.

**Key values** (`key_values`): the numbers, dates, times, percentages and identifiers that carry
digits ("L1", "B12", "0xA7F") of a normalised text. They are matched exactly: 18 September is
not 19 September, 0.01 is not 0.001.

**A statement is stated by a text** (`states`) when every key value of the statement is among
the text's, at least half of the statement's content words (stop words removed, a trailing
plural "s" dropped), and at least two of them (all of them when it has fewer), are among the
text's, and both or neither are negated ("not", "no",
"never", "cannot", "n't", "without", "none", "nor"). Required facts are checked against the
answer's claims (one claim, or two adjacent ones read together); forbidden claims against
each claim, and a claim that states a required fact does not
also count as making a forbidden claim ("32, not 64" is not a claim that 64 is required).

**Rule labels** (`label_by_rules`, `labelled_by = "rules:lexical/1"`) are a lexical proxy, not
a semantic judgement: a claim that makes a forbidden claim is contradicted (when the case's
evidence reached the prompt); one that states a required fact whose evidence reached the
prompt, or whose key values and at least 80% of whose content words (less framing words such
as "answer", "note", "passage") one prompt passage holds,
is supported — unless it also brings a key value no prompt passage holds, or has no content
word beyond the framing words ("The answer is no."; a bare value such as "The answer is: 18
September" is supported only when the case's own evidence passage in the prompt holds it);
anything else is insufficient. Severity: critical for a contradiction on a key
value, major for any other contradiction or for an unsupported claim that brings key values no
prompt passage holds (an invented date), minor otherwise. Relevance: 2 when the answer touches
every required fact's content words (at least half of them), 1 when it touches some, 0 none.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
    Claim,
    FailureLabel,
    Severity,
    SupportLabel,
    revised,
)
from twinbench.rag.records import Case, Passage

RULES_LABELLER = "rules:lexical/1"
STATED_SHARE = 0.5
SUPPORTED_SHARE = 0.8

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_ALT = "|".join([*(m[:3] + "(?:" + m[3:] + ")?" for m in _MONTHS), "sept"])
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "as",
        "which",
        "who",
        "what",
        "when",
        "where",
        "how",
        "do",
        "does",
        "did",
        "can",
        "may",
        "must",
        "should",
        "will",
        "would",
        "has",
        "have",
        "had",
        "there",
        "their",
        "they",
        "them",
        "you",
        "your",
        "i",
        "we",
        "our",
        "so",
        "if",
        "then",
        "than",
        "into",
        "per",
        "each",
        "any",
        "all",
        "also",
        "such",
        "about",
        "over",
        "under",
        "up",
        "out",
        "only",
    ]
)
#: words that frame a claim rather than carry it ("the answer is: 18 September")
_FILLER = frozenset(["answer", "passage", "note", "according", "question", "state", "say"])
_NEGATION = frozenset(["not", "no", "never", "cannot", "without", "none", "nor"])
_TOKEN = re.compile(r"0x[0-9a-f]+|\d+(?:[.:]\d+)*%?|[^\W\d_]+(?:\d+\w*)?|\d+\w+", re.UNICODE)


def _month(name: str) -> str:
    name = name.lower()
    return next(m for m in _MONTHS if name.startswith(name[:3]) and m.startswith(name[:3]))


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """`text` under the published normalisation (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\s*(?:per ?cent|percent)\b", "%", text)
    text = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", text)
    text = re.sub(
        r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", lambda m: _NUMBER_WORDS[m.group(1)], text
    )
    day_month = re.compile(r"\b(\d{1,2})(?: of)? (" + _MONTH_ALT + r")\b")
    month_day = re.compile(r"\b(" + _MONTH_ALT + r") (\d{1,2})\b(?!:)")
    text = day_month.sub(lambda m: f"{int(m.group(1))}_{_month(m.group(2))}", text)
    text = month_day.sub(lambda m: f"{int(m.group(2))}_{_month(m.group(1))}", text)
    text = text.replace("n't", " not")
    kept = []
    for i, ch in enumerate(text):
        if ch == "_" or not unicodedata.category(ch).startswith("P"):
            kept.append(ch)
            continue
        before = text[i - 1] if i else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        inside = ch in ".:" and before.isdigit() and after.isdigit()
        kept.append(ch if inside or (ch == "%" and before.isdigit()) else " ")
    return re.sub(r"\s+", " ", "".join(kept)).strip().replace("_", " ")


def _tokens(normal: str) -> list[str]:
    # a date stays one token: "14 march"
    return re.findall(r"\d{1,2} (?:" + "|".join(_MONTHS) + r")\b|\S+", normal)


@lru_cache(maxsize=65536)
def key_values(text: str) -> frozenset[str]:
    """The exact-match values of `text`: numbers, dates, times, %, identifiers with digits."""
    return frozenset(t for t in _tokens(normalise(text)) if any(c.isdigit() for c in t))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry content (stop words, negations and values removed)."""
    return frozenset(
        _stem(t)
        for t in _tokens(normalise(text))
        if t not in _STOP
        and t not in _NEGATION
        and any(c.isalpha() for c in t)
        and not any(c.isdigit() for c in t)
    )


@lru_cache(maxsize=65536)
def negated(text: str) -> bool:
    """Whether `text` holds a negation word (after normalisation: "n't" is "not")."""
    return any(t in _NEGATION for t in normalise(text).split())


def coverage(statement: str, text: str, ignore: frozenset[str] = frozenset()) -> float:
    """The share of `statement`'s content words (less `ignore`) that `text` holds (1.0 when it
    has none)."""
    words = content_words(statement) - ignore
    return len(words & content_words(text)) / len(words) if words else 1.0


def states(statement: str, text: str, share: float = STATED_SHARE) -> bool:
    """Whether `text` states `statement` under the published rule (module docstring)."""
    words = content_words(statement)
    needed = min(len(words), max(2, math.ceil(share * len(words))))
    return (
        key_values(statement) <= key_values(text)
        and len(words & content_words(text)) >= needed
        and negated(statement) == negated(text)
    )


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


@dataclass(frozen=True)
class Checks:
    """What a script decides about one answer before any judge."""

    facts_stated: list[bool]
    #: (forbidden claim index, claim index) for each claim that makes a forbidden claim
    forbidden_made: list[tuple[int, int]]
    citation_not_found: list[str]
    evidence_reached: bool
    #: when the answer abstained: was it right for the context it was given, and for the case?
    abstention: dict[str, bool] = field(default_factory=dict)


def checks_record(answer: Answer, case: Case) -> dict[str, Any]:
    """The exact checks of `answer` as stored in its `checks` field."""
    found = exact_checks(answer, case)
    return {
        "evidence_reached": found.evidence_reached,
        "required_facts_stated": found.facts_stated,
        "forbidden_claims_made": [{"forbidden": f, "claim": c} for f, c in found.forbidden_made],
        **({"abstention": found.abstention} if found.abstention else {}),
    }


def evidence_ids(case: Case) -> list[str]:
    """The case's supporting passages (grade above 0)."""
    return [e.passage_id for e in case.evidence if e.grade > 0]


def exact_checks(answer: Answer, case: Case) -> Checks:
    """Required facts, forbidden claims, unresolved citations, and the abstention verdicts."""
    reached = any(pid in answer.passages for pid in evidence_ids(case))
    texts = [c.text for c in answer.claims]
    spans = texts + [f"{a} {b}" for a, b in itertools.pairwise(texts)]
    facts = [any(states(fact, span) for span in spans) for fact in case.required_facts]
    made = []
    for c, claim in enumerate(answer.claims):
        if any(states(fact, claim.text) for fact in case.required_facts):
            continue
        for f, forbidden in enumerate(case.forbidden_claims):
            if states(forbidden, claim.text):
                made.append((f, c))
    verdict: dict[str, bool] = {}
    if answer.status == AnswerStatus.OK and answer.abstained:
        verdict = {"right_for_context": not reached, "right_for_case": not case.answerable}
    return Checks(facts, made, list(answer.citation_not_found), reached, verdict)


def failure_labels(answer: Answer, case: Case) -> list[FailureLabel]:
    """The case's failure labels for one labelled answer (empty for a failed path)."""
    if answer.status != AnswerStatus.OK:
        return []
    reached = any(pid in answer.passages for pid in evidence_ids(case))
    labels: list[FailureLabel] = []
    if case.answerable and not reached:
        labels.append(FailureLabel.MISSING_EVIDENCE)
    if answer.abstained:
        if not case.answerable:
            labels.append(FailureLabel.CORRECT_ABSTENTION)
        elif reached:
            labels.append(FailureLabel.FALSE_ABSTENTION)
        return labels
    if any(c.support_label != SupportLabel.SUPPORTED for c in answer.claims):
        labels.append(FailureLabel.UNSUPPORTED_CLAIM)
    wrong = bool(answer.citation_not_found) or any(
        pid not in c.evidence_ids or c.support_label != SupportLabel.SUPPORTED
        for c in answer.claims
        for pid in c.cited_ids
    )
    if wrong:
        labels.append(FailureLabel.WRONG_CITATION)
    return labels


def _best_sentence(claim: str, passage: Passage) -> str:
    return max(_sentences(passage.text), key=lambda s: coverage(claim, s))


def _rule_label(claim: Claim, case: Case, shown: Sequence[Passage]) -> Claim:
    ids = [p.passage_id for p in shown]
    quotes = {e.passage_id: e.quote for e in case.evidence if e.grade > 0 and e.passage_id in ids}
    text = claim.text
    states_fact = any(states(fact, text) for fact in case.required_facts)
    forbidden = [] if states_fact else [f for f in case.forbidden_claims if states(f, text)]
    if forbidden:
        if quotes:
            critical = any(key_values(f) for f in forbidden)
            return claim.model_copy(
                update={
                    "support_label": SupportLabel.CONTRADICTED,
                    "evidence_ids": list(quotes),
                    "evidence_quote": next(iter(quotes.values())),
                    "severity": Severity.CRITICAL if critical else Severity.MAJOR,
                }
            )
        return claim.model_copy(
            update={"support_label": SupportLabel.INSUFFICIENT, "severity": Severity.MAJOR}
        )
    known = frozenset().union(*(key_values(p.text) for p in shown)) if shown else frozenset()
    invented = bool(key_values(text) - known)
    if states_fact and quotes and not invented:
        return claim.model_copy(
            update={
                "support_label": SupportLabel.SUPPORTED,
                "evidence_ids": list(quotes),
                "evidence_quote": next(iter(quotes.values())),
            }
        )
    words = content_words(text) - _FILLER
    if not words and key_values(text) and quotes:
        # a bare value ("The answer is: 18 September"): supported only by the case's evidence
        holding = [
            p for p in shown if p.passage_id in quotes and key_values(text) <= key_values(p.text)
        ]
        if holding:
            return claim.model_copy(
                update={
                    "support_label": SupportLabel.SUPPORTED,
                    "evidence_ids": [p.passage_id for p in holding],
                    "evidence_quote": quotes[holding[0].passage_id],
                }
            )
    holding = [
        p
        for p in shown
        if words
        and key_values(text) <= key_values(p.text)
        and coverage(text, p.text, _FILLER) >= SUPPORTED_SHARE
    ]
    if holding:
        return claim.model_copy(
            update={
                "support_label": SupportLabel.SUPPORTED,
                "evidence_ids": [p.passage_id for p in holding],
                "evidence_quote": _best_sentence(text, holding[0]),
            }
        )
    return claim.model_copy(
        update={
            "support_label": SupportLabel.INSUFFICIENT,
            "severity": Severity.MAJOR if invented else Severity.MINOR,
        }
    )


def rule_relevance(answer: Answer, case: Case) -> int | None:
    """2 / 1 / 0 by how many required facts the answer touches; None for no answer."""
    if answer.status != AnswerStatus.OK or answer.abstained:
        return None
    text = " ".join(c.text for c in answer.claims)
    touched = sum(coverage(fact, text) >= STATED_SHARE for fact in case.required_facts)
    return 2 if touched == len(case.required_facts) else 1 if touched else 0


def label_by_rules(answer: Answer, case: Case, passages: Mapping[str, Passage]) -> Answer:
    """`answer` with every claim labelled by the lexical rules and a rule relevance."""
    if answer.status != AnswerStatus.OK:
        return answer
    shown = [passages[pid] for pid in answer.passages if pid in passages]
    claims = [_rule_label(c, case, shown) for c in answer.claims]
    return revised(
        answer, claims=claims, relevance=rule_relevance(answer, case), labelled_by=RULES_LABELLER
    )
