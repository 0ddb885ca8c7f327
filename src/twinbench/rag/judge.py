"""Model judges: reviewers given the rubric, whose every reply is validated before it counts.

A judge is any generator (`smollm2`, `openai:MODEL`). It sees the question, the numbered
passages that reached the answer's prompt (with their ids), the answer, its claims exactly as
split (numbered from 1, with their citations) and the rubric, and must reply with one JSON
object:

    {"claims": [{"claim": 1, "support_label": "supported" | "contradicted" | "insufficient",
                 "evidence_ids": ["<passage id>", ...], "evidence_quote": "<verbatim span>",
                 "severity": null | "minor" | "major" | "critical"}, ...],
     "relevance": 0 | 1 | 2}

Validation, in this order, each failure its own `problem` under status `judge_invalid`:
`not_json` (the reply, or its one ```json fenced block, does not parse), `off_schema` (keys,
types, labels, a missing severity on an unsupported claim, a supported or contradicted claim
without evidence or quote), `claim_boundaries` (claim numbers other than exactly 1..n in
order: the judge may not split or merge claims), `unknown_id` (an evidence id that is not one
of the prompt's passages), `quote_not_in_passage` (a quote that is not a span of any of the
claim's evidence passages, whitespace collapsed, case folded: a judge can fabricate evidence
too). A generator timeout is `judge_timeout`, any other failed call `judge_error`. None of
these is ever a label: the answer stays unlabelled and is counted so.

The prompt and the raw reply are saved in each Judgement. A matching quote is necessary, not
sufficient: it does not prove the passage supports the claim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from twinbench.rag.answers import (
    Answer,
    AnswerStatus,
    ClaimLabel,
    Judgement,
    JudgeProblem,
    JudgeStatus,
    Severity,
    SupportLabel,
    revised,
)
from twinbench.rag.generation import Generation, Generator, Prompt, StageProgress, tracker
from twinbench.rag.records import Case, Passage
from twinbench.rag.validate import collapse
from twinbench.systems.wire import loads

RUBRIC: Final = (
    "You review an answer against the passages it was given. For each numbered claim decide: "
    "supported (a passage states it), contradicted (a passage states the opposite) or "
    "insufficient (the passages do not settle it; not found is not false). Judge only against "
    "the passages, not what you know. For supported and contradicted claims give the ids of the "
    "passages and a short quotation copied exactly from one of them. For contradicted and "
    "insufficient claims give a severity: minor, major (misleads) or critical (could cost the "
    "student marks). Do not split or merge claims. Relevance: 0 off-topic, 1 covers part of "
    "what was asked, 2 covers every requested part (relevance is not correctness). Reply with "
    'one JSON object: {"claims": [{"claim": 1, "support_label": ..., "evidence_ids": [...], '
    '"evidence_quote": ..., "severity": ...}], "relevance": ...}'
)
JUDGE_MAX_TOKENS: Final = 400
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.DOTALL)


class Invalid(Exception):
    """A judge reply outside the contract, with its problem code."""

    def __init__(self, problem: JudgeProblem, detail: str) -> None:
        super().__init__(detail)
        self.problem = problem


def judge_prompt(answer: Answer, case: Case, passages: Mapping[str, Passage]) -> Prompt:
    """The rubric, the question, the numbered passages, the answer and its claims."""
    shown = "\n".join(
        f"[{n}] id={pid}: {passages[pid].text}" for n, pid in enumerate(answer.passages, 1)
    )
    claims = "\n".join(
        f"{n}. {c.text}" + (f" (cites: {', '.join(c.cited_ids)})" if c.cited_ids else "")
        for n, c in enumerate(answer.claims, 1)
    )
    user = (
        f"Question: {case.question}\n\nPassages:\n{shown}\n\nAnswer: {answer.answer}\n\n"
        f"Claims:\n{claims}\n\nReply with the JSON object only."
    )
    return Prompt(
        [{"role": "system", "content": RUBRIC}, {"role": "user", "content": user}],
        max_tokens=JUDGE_MAX_TOKENS,
    )


def _loads(raw: str) -> Any:
    text = raw.strip()
    fenced = _FENCE.match(text)
    try:
        return loads(fenced.group(1) if fenced else text)
    except (TypeError, ValueError):
        raise Invalid(JudgeProblem.NOT_JSON, "reply is not JSON") from None


def _label(entry: Any, n: int) -> ClaimLabel:
    where = f"claims[{n}]"
    keys = {"claim", "support_label", "evidence_ids", "evidence_quote", "severity"}
    if not isinstance(entry, dict) or not {"claim", "support_label"} <= set(entry) <= keys:
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where} is not a claim label object")
    claim, label = entry["claim"], entry["support_label"]
    ids, quote, severity = (
        entry.get("evidence_ids", []),
        entry.get("evidence_quote"),
        entry.get("severity"),
    )
    if type(claim) is not int:
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}.claim is not an integer")
    if label not in {s.value for s in SupportLabel}:
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}.support_label {label!r} is not a label")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}.evidence_ids is not a list of ids")
    if quote is not None and not isinstance(quote, str):
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}.evidence_quote is not text")
    if severity is not None and severity not in {s.value for s in Severity}:
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}.severity {severity!r} is not a severity")
    if label != SupportLabel.SUPPORTED and severity is None:
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"{where}: a {label} claim needs a severity")
    if label != SupportLabel.INSUFFICIENT and (not ids or not quote):
        raise Invalid(
            JudgeProblem.OFF_SCHEMA, f"{where}: a {label} claim needs evidence and a quote"
        )
    return ClaimLabel(
        claim=claim,
        support_label=label,
        evidence_ids=ids,
        evidence_quote=quote,
        severity=severity if label != SupportLabel.SUPPORTED else None,
    )


def read_reply(
    raw: str, answer: Answer, passages: Mapping[str, Passage]
) -> tuple[list[ClaimLabel], int]:
    """The validated labels and relevance of a judge reply; raises Invalid."""
    data = _loads(raw)
    if not isinstance(data, dict) or set(data) != {"claims", "relevance"}:
        raise Invalid(JudgeProblem.OFF_SCHEMA, "reply is not an object with claims and relevance")
    relevance = data["relevance"]
    if type(relevance) is not int or relevance not in (0, 1, 2):
        raise Invalid(JudgeProblem.OFF_SCHEMA, f"relevance {relevance!r} is not 0, 1 or 2")
    if not isinstance(data["claims"], list):
        raise Invalid(JudgeProblem.OFF_SCHEMA, "claims is not a list")
    labels = [_label(entry, n) for n, entry in enumerate(data["claims"])]
    numbers = [label.claim for label in labels]
    if numbers != list(range(1, len(answer.claims) + 1)):
        raise Invalid(
            JudgeProblem.CLAIM_BOUNDARIES,
            f"claims numbered {numbers}, not 1..{len(answer.claims)} as given",
        )
    for label in labels:
        unknown = [pid for pid in label.evidence_ids if pid not in answer.passages]
        if unknown:
            raise Invalid(
                JudgeProblem.UNKNOWN_ID,
                f"claim {label.claim} cites {unknown[0]!r}, not one of the prompt's passages",
            )
        if label.evidence_quote is not None and label.evidence_ids:
            quote = collapse(label.evidence_quote).casefold()
            if not any(
                quote in collapse(passages[pid].text).casefold() for pid in label.evidence_ids
            ):
                raise Invalid(
                    JudgeProblem.QUOTE_NOT_IN_PASSAGE,
                    f"claim {label.claim}: the quote is not a span of "
                    f"{', '.join(label.evidence_ids)}",
                )
    return labels, relevance


def judgement(
    answer: Answer, prompt: Prompt, got: Generation, judge: str, passages: Mapping[str, Passage]
) -> Judgement:
    """The Judgement of one judge call (validated)."""
    common: dict[str, Any] = {
        "case_id": answer.case_id,
        "variant": answer.variant,
        "trial": answer.trial,
        "judge": judge,
        "prompt": prompt.messages,
        "raw": got.text,
        "elapsed_ms": round(got.elapsed_ms, 3),
    }
    if got.status == "timeout":
        return Judgement(status=JudgeStatus.TIMEOUT, error=got.error, **common)
    if got.status == "error":
        return Judgement(status=JudgeStatus.ERROR, error=got.error, **common)
    if got.status != "ok" or got.text is None:
        return Judgement(
            status=JudgeStatus.INVALID, problem=JudgeProblem.OFF_SCHEMA, error=got.error, **common
        )
    try:
        labels, relevance = read_reply(got.text, answer, passages)
    except Invalid as exc:
        return Judgement(status=JudgeStatus.INVALID, problem=exc.problem, error=str(exc), **common)
    return Judgement(status=JudgeStatus.OK, labels=labels, relevance=relevance, **common)


def apply_judgement(answer: Answer, review: Judgement) -> Answer:
    """`answer` labelled by an ok judgement (claims keep their text and citations)."""
    if review.status != JudgeStatus.OK:
        return answer
    claims = [
        claim.model_copy(
            update={
                "support_label": label.support_label,
                "evidence_ids": label.evidence_ids,
                "evidence_quote": label.evidence_quote,
                "severity": label.severity,
            }
        )
        for claim, label in zip(answer.claims, review.labels, strict=True)
    ]
    return revised(
        answer, claims=claims, relevance=review.relevance, labelled_by=f"judge:{review.judge}"
    )


def unlabel(answer: Answer) -> Answer:
    """`answer` with its claims' labels removed (text and citations kept)."""
    blank: dict[str, Any] = {
        "support_label": None,
        "evidence_ids": [],
        "evidence_quote": None,
        "severity": None,
    }
    claims = [c.model_copy(update=blank) for c in answer.claims]
    return revised(answer, claims=claims, relevance=None, labelled_by=None)


def judge_answers(
    answers: Sequence[Answer],
    cases: Mapping[str, Case],
    passages: Mapping[str, Passage],
    generator: Generator,
    progress: StageProgress | None = None,
) -> tuple[list[Answer], list[Judgement]]:
    """Judge every answer that makes claims: (answers, labelled where the judge's reply was
    valid, unlabelled otherwise; one Judgement per judged answer). `progress(stage, done,
    total)` follows the judge's calls."""
    judge = f"{generator.name}@{generator.version}"
    todo = [
        i
        for i, a in enumerate(answers)
        if a.status == AnswerStatus.OK and not a.abstained and a.claims
    ]
    unlabelled = {i: unlabel(answers[i]) for i in todo}
    prompts = [judge_prompt(unlabelled[i], cases[answers[i].case_id], passages) for i in todo]
    replies = generator.generate(prompts, tracker("judging", len(prompts), progress))
    out = list(answers)
    reviews = []
    for i, prompt, got in zip(todo, prompts, replies, strict=True):
        review = judgement(unlabelled[i], prompt, got, judge, passages)
        reviews.append(review)
        out[i] = apply_judgement(unlabelled[i], review)
    return out, reviews
