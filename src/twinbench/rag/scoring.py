"""`twinbench rag score`: the exact checks, citation metrics and claim labels of answers that
the user's own assistant gave, read from a minimal JSONL file.

One row per answer (`OwnAnswer`); `case_id`, `answer` and `cited_ids` are required:

    {"case_id": "a2-weight", "answer": "Assignment 2 counts for 20% [syllabus:p4].",
     "cited_ids": ["syllabus:p4"]}

* `case_id`: a case of the cases file (at most one row per case).
* `answer`: the text as the assistant gave it. It may carry citation markers, `[ID]` or `[n]`;
  `[n]` is the n-th id of `passages`. An answer that opens with `INSUFFICIENT EVIDENCE` is an
  abstention, and so is any answer with `"abstained": true`.
* `cited_ids`: the passage ids the answer cites, each a passage of the corpus (may be empty).
  When the text has no citation marker at all, every claim cites every one of them; when it has
  markers, the markers decide (under `--scope`, as in `rag ablate`) and `cited_ids` only
  numbers them unless `passages` is given.
* `passages` (optional): the passage ids the assistant was shown, in prompt order; default
  `cited_ids`. The exact checks ask whether the case's evidence is among them, the rules and a
  judge label claims against them, and a citation of a passage outside them is
  `citation_not_found`.
* `abstained` (optional): true marks an abstention whatever the text says.

Each row becomes a `twinbench.rag.answer/1` record (variant `own`) by the path `rag ablate`
uses for a generation (`read_generation`), gets its `checks` (`factcheck.checks_record`) and
its claim labels from the rules or a judge (`label_answers`, shared with `rag ablate`), and is
scored by `answer_metrics`. Bad rows raise InputError naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from twinbench.jsonl import InputError, describe_validation_error, iter_json_lines, sha256_file
from twinbench.rag.answer_metrics import answer_metrics, claim_counts, outcome, useful
from twinbench.rag.answering import read_generation
from twinbench.rag.answers import Answer, AnswerStatus, CitationScope, Judgement, revised
from twinbench.rag.claims import CLAIM_RULE, markers
from twinbench.rag.corpus import Corpus
from twinbench.rag.factcheck import RULES_LABELLER, checks_record, failure_labels, label_by_rules
from twinbench.rag.generation import Generation, Generator, StageProgress
from twinbench.rag.records import Case, Passage, Text

SCORE_SCHEMA: Final = "twinbench.rag.score/1"
VARIANT: Final = "own"


class OwnAnswer(BaseModel):
    """One answer of the user's own assistant, as `rag score` reads it."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    case_id: Text = Field(description="A case of the cases file (one row per case)")
    answer: StrictStr = Field(
        description="The answer as given; citation markers [ID] or [n] (the n-th of passages) "
        "may trail its sentences"
    )
    cited_ids: list[Text] = Field(
        description="Passage ids of the corpus the answer cites; every claim cites them all "
        "when the text has no citation marker"
    )
    passages: list[Text] | None = Field(
        None,
        description="Passage ids the assistant was shown, in prompt order (default: cited_ids)",
    )
    abstained: StrictBool | None = Field(
        None,
        description="true marks an abstention (default: the text opens with INSUFFICIENT EVIDENCE)",
    )


def _known(where: str, field: str, ids: Sequence[str], corpus: Corpus) -> None:
    seen: set[str] = set()
    for n, pid in enumerate(ids):
        if pid not in corpus.passages:
            raise InputError(
                f"{where}: {field}.{n}: {pid!r} is not a passage of corpus {corpus.version}"
            )
        if pid in seen:
            raise InputError(f"{where}: {field}.{n}: {pid!r} is listed twice")
        seen.add(pid)


def to_answer(row: OwnAnswer, case: Case, scope: CitationScope) -> Answer:
    """The unlabelled answer record of one row, with its exact checks."""
    shown = list(row.passages if row.passages is not None else row.cited_ids)
    if row.abstained:
        answer = Answer(
            case_id=case.case_id,
            variant=VARIANT,
            status=AnswerStatus.OK,
            answer=row.answer,
            abstained=True,
            passages=shown,
            citation_scope=scope,
            claim_rule=CLAIM_RULE,
        )
    else:
        answer = read_generation(case, VARIANT, 0, Generation("ok", row.answer), shown, scope, None)
        if answer.claims and not markers(row.answer) and row.cited_ids:
            every = {"cited_ids": list(row.cited_ids)}
            claims = [c.model_copy(update=every) for c in answer.claims]
            missing = [pid for pid in row.cited_ids if pid not in shown]
            answer = revised(answer, claims=claims, citation_not_found=missing)
    if answer.status != AnswerStatus.OK:
        return answer
    return revised(answer, checks=checks_record(answer, case))


def read_own_answers(
    path: Path, cases: Mapping[str, Case], corpus: Corpus, scope: CitationScope, cases_file: Path
) -> list[tuple[int, Answer]]:
    """(line, unlabelled answer with its checks) for every row of `path`, in file order."""
    out: list[tuple[int, Answer]] = []
    first: dict[str, int] = {}
    for line, data in iter_json_lines(path):
        where = f"{path}:{line}"
        try:
            row = OwnAnswer.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"{where}: {describe_validation_error(exc)}") from None
        case = cases.get(row.case_id)
        if case is None:
            raise InputError(f"{where}: case_id {row.case_id!r} is not a case of {cases_file}")
        if row.case_id in first:
            raise InputError(
                f"{where}: case_id {row.case_id!r} is answered twice (first on line "
                f"{first[row.case_id]})"
            )
        first[row.case_id] = line
        _known(where, "cited_ids", row.cited_ids, corpus)
        if row.passages is not None:
            _known(where, "passages", row.passages, corpus)
        out.append((line, to_answer(row, case, scope)))
    return out


def label_answers(
    answers: Sequence[Answer],
    cases: Mapping[str, Case],
    passages: Mapping[str, Passage],
    judge: Generator | None,
    progress: StageProgress | None = None,
) -> tuple[list[Answer], list[Judgement] | None]:
    """The answers with their claims labelled by the rules (no judge) or by `judge`, and the
    judge's judgements (None for the rules)."""
    if judge is not None:
        from twinbench.rag.judge import judge_answers

        return judge_answers(answers, cases, passages, judge, progress)
    out = []
    for n, answer in enumerate(answers):
        out.append(label_by_rules(answer, cases[answer.case_id], passages))
        if progress is not None:
            progress("labelling claims (rules)", n + 1, len(answers))
    return out, None


def answer_row(line: int, answer: Answer, case: Case) -> dict[str, Any]:
    """One answer's line of the score: outcome, exact checks, citations, failure labels."""
    counts = claim_counts(answer)
    return {
        "line": line,
        "case_id": answer.case_id,
        "answerable": case.answerable,
        "adversarial_kind": case.adversarial_kind.value if case.adversarial_kind else None,
        "status": answer.status.value,
        "outcome": outcome(answer),
        "useful": useful(answer, case),
        "claims": int(counts["claims"]),
        "supported": int(counts["supported"]),
        "contradicted": int(counts["contradicted"]),
        "insufficient": int(counts["insufficient"]),
        "relevance": answer.relevance,
        "checks": answer.checks,
        "citations": {
            "links": int(counts["links"]),
            "supporting_links": int(counts["supporting_links"]),
            "covered_claims": int(counts["covered"]),
            "not_found": list(answer.citation_not_found),
        },
        "failure_labels": [label.value for label in failure_labels(answer, case)],
    }


@dataclass(frozen=True)
class Scored:
    """The labelled answers, the judge's judgements (None for the rules) and the document."""

    answers: list[Answer]
    judgements: list[Judgement] | None
    document: dict[str, Any]


def score_answers(
    path: Path,
    cases_file: Path,
    corpus_path: Path,
    *,
    judge: Generator | None = None,
    scope: CitationScope = CitationScope.SENTENCE,
    progress: StageProgress | None = None,
    seed: int = 0,
) -> Scored:
    """Read, check, label and score the answers file `path` against the cases and corpus."""
    from twinbench.rag.validate import check_cases

    check = check_cases(cases_file, corpus_path)
    if check.problems:
        more = len(check.problems) - 1
        raise InputError(check.problems[0] + (f" (and {more} more problems)" if more else ""))
    cases = {c.case_id: c for _, c in check.cases}
    rows = read_own_answers(path, cases, check.corpus, scope, cases_file)
    lines = [line for line, _ in rows]
    labelled, judgements = label_answers(
        [a for _, a in rows], cases, check.corpus.passages, judge, progress
    )
    document = {
        "schema": SCORE_SCHEMA,
        "answers_file": {"name": path.name, "sha256": sha256_file(path)},
        "cases_file": {"name": cases_file.name, "sha256": sha256_file(cases_file)},
        "corpus": {"version": check.corpus.version, "passages": len(check.corpus)},
        "cases": {"total": len(cases), "answered": len(rows), "unanswered": len(cases) - len(rows)},
        "labelled_by": RULES_LABELLER if judge is None else f"judge:{judge.name}@{judge.version}",
        "citation_scope": scope.value,
        "claim_rule": CLAIM_RULE,
        "answers": [
            answer_row(line, a, cases[a.case_id]) for line, a in zip(lines, labelled, strict=True)
        ],
        "summary": answer_metrics(labelled, cases, seed),
    }
    return Scored(labelled, judgements, document)
