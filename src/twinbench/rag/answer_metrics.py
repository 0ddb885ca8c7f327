"""Claim-level metrics of labelled answers, with counts beside rates and case-bootstrap intervals.

Per answer (an `ok` answer that is not an abstention and whose claims are labelled):

* claim-level faithfulness = supported claims / claims; the reported figure is the mean over
  answers that make claims (each answer weighs the same, whatever its length);
* contradicted rate and insufficient rate = those claims / all claims (pooled), with severity;
* citation precision = cited links (claim, id) whose id is among the claim's supporting
  evidence_ids and whose claim is supported / all cited links (an id that resolved to no
  prompt passage is a link that supports nothing);
* citation coverage = supported claims with at least one supporting citation / claims;
* relevance 0 / 1 / 2 (its mean and its counts).

Per case outcome (`outcome`): `error` (a failed path: the status says why), `unlabelled` (the
labeller failed: a judge_invalid or judge_timeout answer), `abstained`, `supported` (every claim
supported) or `unsupported`. `useful` = an answerable case answered with every claim supported
and relevance 2. Intervals resample cases (all trials of a case travel together).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from twinbench.rag.answers import Answer, AnswerStatus, FailureLabel, Severity, SupportLabel
from twinbench.rag.factcheck import failure_labels
from twinbench.rag.records import Case
from twinbench.stats.bootstrap import ratio_interval

OUTCOMES: Final = ("supported", "unsupported", "abstained", "error", "unlabelled")
RESAMPLES: Final = 2000


def outcome(answer: Answer) -> str:
    """supported / unsupported / abstained / error / unlabelled (see the module docstring)."""
    if answer.status != AnswerStatus.OK:
        return "error"
    if answer.abstained:
        return "abstained"
    if not answer.labelled:
        return "unlabelled"
    if all(c.support_label == SupportLabel.SUPPORTED for c in answer.claims):
        return "supported"
    return "unsupported"


def useful(answer: Answer, case: Case) -> bool:
    """A supported answer to an answerable case that covers every requested part."""
    return case.answerable and outcome(answer) == "supported" and answer.relevance == 2


def claim_counts(answer: Answer) -> dict[str, float]:
    """The per-answer tallies the pooled metrics add up (zero for no labelled claims)."""
    scored = outcome(answer) in ("supported", "unsupported")
    claims = answer.claims if scored else []
    supported = [c for c in claims if c.support_label == SupportLabel.SUPPORTED]
    links = [(c, pid) for c in claims for pid in c.cited_ids]
    good_links = [
        1 for c, pid in links if c.support_label == SupportLabel.SUPPORTED and pid in c.evidence_ids
    ]
    covered = [c for c in supported if set(c.cited_ids) & set(c.evidence_ids)]
    return {
        "claims": len(claims),
        "supported": len(supported),
        "contradicted": sum(c.support_label == SupportLabel.CONTRADICTED for c in claims),
        "insufficient": sum(c.support_label == SupportLabel.INSUFFICIENT for c in claims),
        "faithfulness": len(supported) / len(claims) if claims else 0.0,
        "with_claims": 1.0 if claims else 0.0,
        "links": len(links),
        "supporting_links": len(good_links),
        "covered": len(covered),
        "relevance": float(answer.relevance or 0) if scored and answer.relevance is not None else 0,
        "relevance_rated": 1.0 if scored and answer.relevance is not None else 0.0,
    }


#: metric -> (numerator tally, denominator tally): pooled over the answers of the resampled cases
RATIOS: Final = {
    "faithfulness": ("faithfulness", "with_claims"),
    "contradicted_rate": ("contradicted", "claims"),
    "insufficient_rate": ("insufficient", "claims"),
    "citation_precision": ("supporting_links", "links"),
    "citation_coverage": ("covered", "claims"),
    "relevance_mean": ("relevance", "relevance_rated"),
}


def _slice(case: Case) -> str:
    if case.adversarial_kind is not None:
        return f"adversarial:{case.adversarial_kind.value}"
    return "answerable" if case.answerable else "unanswerable"


def answer_metrics(
    answers: Sequence[Answer], cases: Mapping[str, Case], seed: int = 0
) -> dict[str, Any]:
    """Every claim-level metric, outcome count and failure-label count of `answers`."""
    by_case: dict[str, list[Answer]] = {}
    for answer in answers:
        by_case.setdefault(answer.case_id, []).append(answer)
    order = sorted(by_case)
    tallies = {cid: [claim_counts(a) for a in by_case[cid]] for cid in order}
    names = sorted({name for rows in tallies.values() for row in rows for name in row})
    sums = {n: np.array([sum(r[n] for r in tallies[cid]) for cid in order]) for n in names}
    rng = np.random.default_rng(seed)
    metrics: dict[str, Any] = {}
    for metric, (top, bottom) in RATIOS.items():
        num, den = sums.get(top, np.zeros(0)), sums.get(bottom, np.zeros(0))
        if not len(den) or den.sum() == 0:
            metrics[metric] = {"estimate": None, "numerator": 0, "denominator": 0}
            continue
        interval = ratio_interval(num, den, RESAMPLES, rng, seed)
        metrics[metric] = {
            **interval.as_dict(),
            "numerator": round(float(num.sum()), 6),
            "denominator": int(den.sum()),
        }
    outcomes = Counter(outcome(a) for a in answers)
    answerable = [a for a in answers if cases[a.case_id].answerable]
    helpful = np.array([sum(useful(a, cases[cid]) for a in by_case[cid]) for cid in order])
    asked = np.array([len(by_case[cid]) if cases[cid].answerable else 0 for cid in order])
    if asked.sum():
        interval = ratio_interval(helpful.astype(float), asked.astype(float), RESAMPLES, rng, seed)
        metrics["useful_rate"] = {
            **interval.as_dict(),
            "numerator": int(helpful.sum()),
            "denominator": int(asked.sum()),
        }
    else:
        metrics["useful_rate"] = {"estimate": None, "numerator": 0, "denominator": 0}
    severity: Counter[str] = Counter()
    for a in answers:
        if outcome(a) in ("supported", "unsupported"):
            severity.update(c.severity.value for c in a.claims if c.severity is not None)
    labels: dict[str, Counter[str]] = {}
    for a in answers:
        case = cases[a.case_id]
        found = failure_labels(a, case)
        block = labels.setdefault(_slice(case), Counter())
        block["answers"] += 1
        block.update(label.value for label in found)
        if a.status != AnswerStatus.OK:
            block[a.status.value] += 1
        if a.citation_not_found:
            block["citation_not_found"] += len(a.citation_not_found)
    stated = [s for a in answers for s in a.checks.get("required_facts_stated", [])]
    forbidden = sum(len(a.checks.get("forbidden_claims_made", [])) for a in answers)
    return {
        "answers": len(answers),
        "cases": len(order),
        "exact_checks": {
            "required_facts_stated": sum(stated),
            "required_facts_checked": len(stated),
            "forbidden_claims_made": forbidden,
            "answers_checked": sum(bool(a.checks) for a in answers),
        },
        "answerable_answers": len(answerable),
        "outcomes": {name: outcomes.get(name, 0) for name in OUTCOMES},
        "useful": int(helpful.sum()),
        "metrics": metrics,
        "severity": {s.value: severity.get(s.value, 0) for s in Severity},
        "relevance_counts": {
            str(r): sum(
                a.relevance == r for a in answers if outcome(a) in ("supported", "unsupported")
            )
            for r in (0, 1, 2)
        },
        "citation_not_found": sum(len(a.citation_not_found) for a in answers),
        "failure_labels": {
            name: {k: block[k] for k in sorted(block)} for name, block in sorted(labels.items())
        },
        "failure_label_names": [label.value for label in FailureLabel],
        "resamples": RESAMPLES,
        "seed": seed,
    }
