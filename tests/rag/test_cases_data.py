"""The embedded course-notes corpus and cases: they validate, hold the seed's worked examples,
and have the size and mix the docs promise."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_rows
from twinbench.cli import app
from twinbench.rag.corpus import COURSE_CASES, COURSE_NOTES, Corpus, load_corpus
from twinbench.rag.records import AdversarialKind, Case
from twinbench.rag.validate import check_cases, kind_counts, load_cases

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rag_corpus_check.py"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(COURSE_NOTES)


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {case.case_id: case for case in load_cases(COURSE_CASES, COURSE_NOTES)}


def _grades(case: Case) -> dict[str, int]:
    return {e.passage_id: e.grade for e in case.evidence}


def test_validate_with_no_arguments_checks_the_shipped_data(runner: CliRunner) -> None:
    result = runner.invoke(app, ["rag", "validate"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        "ok: 103 cases (72 answerable, 31 unanswerable; 24 adversarial)"
    )
    assert result.stdout.rstrip().endswith(
        "against corpus course-notes-v1 (92 passages in 8 documents)"
    )


def test_the_corpus_is_sealed_and_large_enough(corpus: Corpus) -> None:
    assert corpus.version == "course-notes-v1"
    assert corpus.manifest is not None and corpus.manifest.passages == len(corpus) == 92
    assert len(corpus) >= 80
    topics = Counter(p.topic for p in corpus.passages.values())
    assert None not in topics and len(topics) == 11
    assert min(topics.values()) >= 5
    assert len(corpus.documents) == 8
    for pid, passage in corpus.passages.items():
        # a stable source location: DOC:pPAGE, or DOC:SEMESTER-wWEEK for announcements
        assert pid.startswith(f"{passage.doc_id}:")
        assert passage.title and passage.location


def test_the_cases_have_the_promised_mix(cases: dict[str, Case]) -> None:
    counts = kind_counts(list(cases.values()))
    assert len(cases) >= 60
    assert (counts["answerable"], counts["unanswerable"]) == (72, 31)
    assert {kind.value: counts[kind.value] for kind in AdversarialKind} == {
        "false_premise": 7,
        "near_match": 8,
        "contradictory_passages": 4,
        "certainty_pressure": 5,
    }
    # the adversarial flag is not a third answerability state: both occur for near matches,
    # false premises and pressure for certainty
    for kind in ("false_premise", "near_match", "certainty_pressure"):
        assert {c.answerable for c in cases.values() if c.adversarial_kind == kind} == {True, False}
    for case in cases.values():
        assert case.checked_documents, case.case_id
        if not case.answerable:
            assert case.evidence == [], case.case_id


def test_the_seed_lab_note(corpus: Corpus, cases: dict[str, Case]) -> None:
    text = corpus.passages["lab-note:p1"].text
    assert "The lab uses batch size 32." in text
    assert "The submission deadline is 18 September." in text
    assert "No optimizer learning rate is specified." in text
    missing = cases["missing-rate"]
    assert (missing.answerable, missing.adversarial, missing.evidence) == (False, False, [])
    assert "lab-note" in missing.checked_documents
    assert "The learning rate is 0.001." in missing.forbidden_claims
    premise = cases["batch-premise"]
    assert (premise.answerable, premise.adversarial_kind) == (True, AdversarialKind.FALSE_PREMISE)
    assert _grades(premise) == {"lab-note:p1": 3}
    assert premise.forbidden_claims == ["Lab 1 requires batch size 64."]
    assert cases["lab1-deadline"].answerable
    assert _grades(cases["lab1-deadline"])["lab-note:p1"] == 3


def test_the_seed_deadlock_judgments(corpus: Corpus, cases: dict[str, Case]) -> None:
    # the seed's worked ranking: the definition graded 3, the example graded 1
    assert _grades(cases["deadlock-definition"]) == {"os-notes:p13": 3, "os-notes:p14": 1}
    assert _grades(cases["deadlock-example"]) == {"os-notes:p14": 3, "os-notes:p13": 1}
    assert corpus.passages["os-notes:p13"].text.startswith("A deadlock is a state in which")


def test_the_seed_bcnf_and_assignment_2(corpus: Corpus, cases: dict[str, Case]) -> None:
    assert _grades(cases["bcnf-rule"])["db-notes:p7"] == 3
    assert "X is a superkey" in corpus.passages["db-notes:p7"].text
    due = cases["a2-due-late"]
    assert due.question == "When is Assignment 2 due, and are late submissions allowed?"
    assert _grades(due)["syllabus:p3"] == 3
    assert "Late submissions receive no penalty." in due.forbidden_claims
    assert "Assignment 2 is due on 14 March." in corpus.passages["syllabus:p3"].text
    assert "within 48 hours with a penalty" in corpus.passages["syllabus:p3"].text
    assert _grades(cases["a2-weight"]) == {"syllabus:p4": 3}
    assert (
        "Assignment 2 contributes 20% of the course grade." in corpus.passages["syllabus:p4"].text
    )
    assert cases["exam-date"].answerable is False  # the seed's missing examination date


def test_the_check_script_passes_on_the_shipped_data() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "validation: 0 problems" in done.stdout
    assert "questions copying >= 8 consecutive words: 0" in done.stdout
    assert done.stdout.rstrip().endswith("ok: 0 failed checks")


def test_the_check_script_flags_a_copied_question(tmp_path: Path) -> None:
    rows = [
        case.model_dump(mode="json", by_alias=True, exclude_none=True)
        for case in load_cases(COURSE_CASES, COURSE_NOTES)[:3]
    ]
    rows[1]["question"] = (
        "Why is it that a very short quantum improves response time but wastes more CPU time?"
    )
    rows[2] |= {"answerable": False, "evidence": [], "checked_documents": []}
    cases = write_rows(tmp_path / "cases.jsonl", rows)
    assert check_cases(cases, COURSE_NOTES).problems == []
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--cases", str(cases)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert f"  {rows[1]['case_id']}: 12 consecutive words of os-notes:p5" in done.stdout
    assert f"  {rows[2]['case_id']}: unanswerable but names no checked_documents" in done.stdout
    assert done.stdout.rstrip().endswith("FAILED: 2 failed checks")
