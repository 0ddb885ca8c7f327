"""Exact checks a script can decide (failure labels, checks per answer) and rule labels.

The normalisation, key values and the `states` rule are in `twinbench.rag.statements`.

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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from twinbench.rag.statements import (
    STATED_SHARE,
    content_words,
    coverage,
    key_values,
    negated,
    normalise,
    states,
)

__all__ = [
    "RULES_LABELLER",
    "Checks",
    "checks_record",
    "content_words",
    "coverage",
    "evidence_ids",
    "exact_checks",
    "failure_labels",
    "key_values",
    "label_by_rules",
    "negated",
    "normalise",
    "rule_relevance",
    "states",
]

RULES_LABELLER = "rules:lexical/1"
SUPPORTED_SHARE = 0.8

_FILLER = frozenset(["answer", "passage", "note", "according", "question", "state", "say"])


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
    """The case's failure labels for one answer (empty for a failed path). An answer whose
    claims are unlabelled (a judge failed) gets only what needs no label: missing evidence,
    and a wrong citation when a citation was not found."""
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
    if not answer.labelled:
        return labels + ([FailureLabel.WRONG_CITATION] if answer.citation_not_found else [])
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
