"""Checks on evidence contracts (cases.jsonl) against their corpus, beyond the record schema.

Per case: the schema (with the contract: required_facts, graded evidence for an answerable
case, integer grades from 0), a repeated case_id, a corpus_version that is not the corpus's,
an evidence passage_id not in the corpus or judged twice, a quote that is not a span of its
passage after whitespace collapsing, and a checked document that is not in the corpus. The
corpus's own problems (schema, repeated passage ids, corpus.json sha256) come first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from twinbench.jsonl import InputError, iter_json_lines
from twinbench.rag.corpus import Corpus, load_corpus
from twinbench.rag.records import Case

_SPACE = re.compile(r"\s+")


def collapse(text: str) -> str:
    """`text` with each run of whitespace turned into one space, stripped."""
    return _SPACE.sub(" ", text).strip()


def is_span(quote: str, text: str) -> bool:
    """Whether `quote` occurs verbatim in `text` once whitespace is collapsed in both."""
    return collapse(quote) in collapse(text)


def _short(text: str, limit: int = 60) -> str:
    text = collapse(text)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def schema_problems(exc: ValidationError) -> list[str]:
    """Every error of a failed validation as `field.path: message` (no path: the message)."""
    lines = []
    for error in exc.errors():
        loc = ".".join(str(part) for part in error["loc"])
        lines.append(f"{loc}: {error['msg']}" if loc else str(error["msg"]))
    return lines


def case_problems(case: Case, corpus: Corpus) -> list[str]:
    """What is wrong with one schema-valid case against `corpus` (empty when it is sound)."""
    problems = []
    if case.corpus_version != corpus.version:
        problems.append(
            f"corpus_version {case.corpus_version!r} is not the corpus's ({corpus.version!r})"
        )
    judged: dict[str, int] = {}
    for n, evidence in enumerate(case.evidence):
        where = f"evidence.{n}"
        passage = corpus.passages.get(evidence.passage_id)
        if passage is None:
            problems.append(f"{where}: passage_id {evidence.passage_id!r} is not in the corpus")
            continue
        if evidence.passage_id in judged:
            problems.append(
                f"{where}: passage_id {evidence.passage_id!r} is judged twice "
                f"(first in evidence.{judged[evidence.passage_id]})"
            )
        judged.setdefault(evidence.passage_id, n)
        if not is_span(evidence.quote, passage.text):
            problems.append(
                f"{where}: quote {_short(evidence.quote)} is not a span of passage "
                f"{evidence.passage_id!r} (after whitespace collapsing)"
            )
    documents = corpus.documents
    for n, doc_id in enumerate(case.checked_documents):
        if doc_id not in documents:
            problems.append(f"checked_documents.{n}: {doc_id!r} is not a document of the corpus")
    return problems


@dataclass(frozen=True)
class CaseCheck:
    """The outcome of validating a cases file against a corpus."""

    path: Path
    corpus: Corpus
    cases: list[tuple[int, Case]]
    problems: list[str]

    def summary(self) -> str:
        """One line: how many cases of each kind, against which corpus."""
        cases = [case for _, case in self.cases]
        answerable = sum(case.answerable for case in cases)
        adversarial = sum(case.adversarial for case in cases)
        return (
            f"{len(cases)} cases ({answerable} answerable, {len(cases) - answerable} "
            f"unanswerable; {adversarial} adversarial) in {self.path} against corpus "
            f"{self.corpus.version} ({len(self.corpus)} passages in "
            f"{len(self.corpus.documents)} documents)"
        )


def check_cases(cases_path: Path, corpus_path: Path) -> CaseCheck:
    """Validate every case of `cases_path` against the corpus at `corpus_path`.

    Problems are `FILE:LINE: problem` lines, all of them (the corpus's first); a file that
    cannot be read as JSON Lines at all raises InputError.
    """
    problems: list[str] = []
    corpus = load_corpus(corpus_path, problems)
    cases: list[tuple[int, Case]] = []
    if not corpus.passages:  # nothing to check the cases against: the corpus's problems only
        return CaseCheck(cases_path, corpus, cases, problems)
    first_line: dict[str, int] = {}
    for lineno, obj in iter_json_lines(cases_path):
        where = f"{cases_path}:{lineno}"
        case_id = obj.get("case_id")
        if isinstance(case_id, str):
            first = first_line.setdefault(case_id, lineno)
            if first != lineno:
                problems.append(f"{where}: duplicate case_id {case_id!r} (first on line {first})")
        try:
            case = Case.model_validate(obj)
        except ValidationError as exc:
            problems.extend(f"{where}: {line}" for line in schema_problems(exc))
            continue
        problems.extend(f"{where}: {line}" for line in case_problems(case, corpus))
        cases.append((lineno, case))
    return CaseCheck(cases_path, corpus, cases, problems)


def load_cases(cases_path: Path, corpus_path: Path) -> list[Case]:
    """The cases of `cases_path`, validated against the corpus; the first problem raises
    InputError (with a count of the rest)."""
    checked = check_cases(cases_path, corpus_path)
    if checked.problems:
        more = len(checked.problems) - 1
        raise InputError(checked.problems[0] + (f" (and {more} more)" if more else ""))
    return [case for _, case in checked.cases]


def kind_counts(cases: list[Case]) -> Counter[str]:
    """Cases per kind: answerable, unanswerable, and each adversarial kind."""
    counts: Counter[str] = Counter()
    for case in cases:
        counts["answerable" if case.answerable else "unanswerable"] += 1
        if case.adversarial_kind is not None:
            counts[case.adversarial_kind.value] += 1
    return counts
