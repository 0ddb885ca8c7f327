"""`twinbench rag validate`: each problem is one exact `FILE:LINE: problem` line and exit 2."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import write_rows
from twinbench.cli import app
from twinbench.jsonl import sha256_file
from twinbench.rag.corpus import write_corpus
from twinbench.rag.records import Passage

Rows = list[dict[str, Any]]
VERSION = "course-notes-v1"
LAB = (
    "The lab uses batch size 32. The submission deadline is 18 September. No optimizer "
    "learning rate is specified."
)
DEADLOCK = (
    "A deadlock is a state in which every process in a set is waiting for an event that only "
    "another process in the same set can cause."
)
#: the seed's two cases plus the deadlock definition, over a two-passage corpus
GOOD: Rows = [
    {
        "case_id": "batch-premise",
        "question": "Why does the lab require batch size 64?",
        "answerable": True,
        "adversarial": True,
        "adversarial_kind": "false_premise",
        "required_facts": ["The lab uses batch size 32."],
        "forbidden_claims": ["The lab requires batch size 64."],
        "evidence": [{"passage_id": "lab-note:p1", "grade": 3, "quote": "batch size 32."}],
        "checked_documents": ["lab-note"],
        "corpus_version": VERSION,
    },
    {
        "case_id": "missing-rate",
        "question": "What learning rate does the lab use?",
        "answerable": False,
        "required_facts": ["The note does not specify a learning rate."],
        "forbidden_claims": ["The learning rate is 0.001."],
        "checked_documents": ["lab-note"],
        "corpus_version": VERSION,
    },
    {
        "case_id": "deadlock-definition",
        "question": "What is a deadlock?",
        "answerable": True,
        "required_facts": ["Each process waits for an event only another one can cause."],
        "evidence": [
            # line breaks and doubled spaces inside a quote still match after collapsing
            {
                "passage_id": "os-notes:p13",
                "grade": 3,
                "quote": "every process in a set\n is  waiting",
            }
        ],
        "corpus_version": VERSION,
    },
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus folder: two passages and their corpus.json."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    passages = [
        Passage(passage_id="lab-note:p1", doc_id="lab-note", text=LAB, corpus_version=VERSION),
        Passage(
            passage_id="os-notes:p13", doc_id="os-notes", text=DEADLOCK, corpus_version=VERSION
        ),
    ]
    write_corpus(folder, passages, version=VERSION, cutting="one passage per page")
    return folder


def _validate(runner: CliRunner, cases: Path, corpus: Path) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["rag", "validate", str(cases), "--corpus", str(corpus)])
    return result.exit_code, result.stderr.strip().splitlines()


def _set(line: int, path: str, value: Any) -> Callable[[Rows], Rows]:
    def mutate(rows: Rows) -> Rows:
        target: Any = rows[line - 1]
        *parents, leaf = path.split(".")
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[leaf] = value
        return rows

    return mutate


def _drop(line: int, key: str) -> Callable[[Rows], Rows]:
    def mutate(rows: Rows) -> Rows:
        del rows[line - 1][key]
        return rows

    return mutate


BAD: dict[str, tuple[Callable[[Rows], Rows], str]] = {
    "duplicate case_id": (
        lambda rows: [*rows, copy.deepcopy(rows[0])],
        "4: duplicate case_id 'batch-premise' (first on line 1)",
    ),
    "answerable without evidence": (
        _set(3, "evidence", []),
        "3: answerable but no evidence with a grade above 0 supports it",
    ),
    "answerable with only grade-0 evidence": (
        _set(3, "evidence.0.grade", 0),
        "3: answerable but no evidence with a grade above 0 supports it",
    ),
    "empty required_facts": (
        _set(2, "required_facts", []),
        "2: required_facts: empty (every case states its expected behaviour, also an "
        "unanswerable one)",
    ),
    "missing required_facts": (_drop(2, "required_facts"), "2: required_facts: Field required"),
    "passage not in the corpus": (
        _set(1, "evidence.0.passage_id", "lab-note:p9"),
        "1: evidence.0: passage_id 'lab-note:p9' is not in the corpus",
    ),
    "quote not a span": (
        _set(1, "evidence.0.quote", "The lab uses batch size 64."),
        "1: evidence.0: quote 'The lab uses batch size 64.' is not a span of passage "
        "'lab-note:p1' (after whitespace collapsing)",
    ),
    "negative grade": (
        _set(3, "evidence.0.grade", -1),
        "3: evidence.0.grade: grade -1 is negative (grades are integers from 0)",
    ),
    "fractional grade": (
        _set(3, "evidence.0.grade", 1.5),
        "3: evidence.0.grade: grade 1.5 is not an integer (0, 1 helpful, 3 sufficient)",
    ),
    "grade as a string": (
        _set(1, "evidence.0.grade", "3"),
        "1: evidence.0.grade: grade '3' is not an integer (0, 1 helpful, 3 sufficient)",
    ),
    "wrong corpus_version": (
        _set(2, "corpus_version", "course-notes-v0"),
        "2: corpus_version 'course-notes-v0' is not the corpus's ('course-notes-v1')",
    ),
    "passage judged twice": (
        lambda rows: _set(1, "evidence", rows[0]["evidence"] * 2)(rows),
        "1: evidence.1: passage_id 'lab-note:p1' is judged twice (first in evidence.0)",
    ),
    "unknown checked document": (
        _set(2, "checked_documents", ["lab-note", "lab-notes"]),
        "2: checked_documents.1: 'lab-notes' is not a document of the corpus",
    ),
    "unanswerable with sufficient evidence": (
        _set(2, "evidence", [{"passage_id": "lab-note:p1", "grade": 3, "quote": "batch size 32."}]),
        "2: unanswerable but passage lab-note:p1 is graded 3 (directly sufficient evidence "
        "answers it); grade it 1 or 2, or make the case answerable",
    ),
    "adversarial without a kind": (
        _set(1, "adversarial_kind", None),
        "1: adversarial and adversarial_kind go together (a kind iff adversarial is true)",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_problem_is_one_exact_line(
    name: str, tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    mutate, problem = BAD[name]
    cases = write_rows(tmp_path / "cases.jsonl", mutate(copy.deepcopy(GOOD)))
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    assert lines == [f"{cases}:{problem}"]


def test_clean_cases_give_a_summary_and_exit_0(
    tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    result = runner.invoke(app, ["rag", "validate", str(cases), "--corpus", str(corpus)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == (
        f"ok: 3 cases (2 answerable, 1 unanswerable; 1 adversarial) in {cases} against corpus "
        f"{VERSION} (2 passages in 2 documents)"
    )


def test_a_bare_passages_file_is_a_corpus(tmp_path: Path, corpus: Path, runner: CliRunner) -> None:
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    code, lines = _validate(runner, cases, corpus / "passages.jsonl")
    assert (code, lines) == (0, [])


def test_every_problem_is_listed_in_file_order(
    tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    rows = copy.deepcopy(GOOD)
    rows[0]["evidence"][0]["quote"] = "batch size 23"
    rows[1]["corpus_version"] = "v0"
    rows[2]["evidence"][0]["grade"] = -2
    cases = write_rows(tmp_path / "cases.jsonl", rows)
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    assert lines == [
        f"{cases}:1: evidence.0: quote 'batch size 23' is not a span of passage 'lab-note:p1' "
        "(after whitespace collapsing)",
        f"{cases}:2: corpus_version 'v0' is not the corpus's ('course-notes-v1')",
        f"{cases}:3: evidence.0.grade: grade -2 is negative (grades are integers from 0)",
    ]


def test_problems_beyond_the_cap_are_counted(
    tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    cases = write_rows(tmp_path / "cases.jsonl", [GOOD[1]] * 26)
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    assert len(lines) == 21
    assert lines[0] == f"{cases}:2: duplicate case_id 'missing-rate' (first on line 1)"
    assert lines[-1] == "... 5 more (25 problems in all)"


def test_duplicate_passage_ids_in_the_corpus(
    tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    rows = [json.loads(line) for line in (corpus / "passages.jsonl").read_text().splitlines()]
    passages = write_rows(tmp_path / "passages.jsonl", [rows[0], rows[1], {**rows[0], "text": "x"}])
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    code, lines = _validate(runner, cases, passages)
    assert code == 2
    assert lines == [f"{passages}:3: duplicate passage_id 'lab-note:p1' (first on line 1)"]


def test_a_changed_passages_file_fails_its_sha256(
    tmp_path: Path, corpus: Path, runner: CliRunner
) -> None:
    manifest = corpus / "corpus.json"
    recorded = json.loads(manifest.read_text())["files"]["passages.jsonl"]
    passages = corpus / "passages.jsonl"
    passages.write_text(passages.read_text().replace("18 September", "19 September"))
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    # corpus.json is indented with sorted keys: "passages.jsonl" sits on line 4, under "files"
    assert lines == [
        f"{manifest}:4: sha256 of passages.jsonl is {sha256_file(passages)}, corpus.json "
        f"records {recorded} (the file changed after corpus.json was written)"
    ]


def test_a_folder_without_corpus_json(tmp_path: Path, corpus: Path, runner: CliRunner) -> None:
    (corpus / "corpus.json").unlink()
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    assert lines == [
        f"error: {corpus}: no corpus.json (a corpus folder holds passages.jsonl and corpus.json; "
        "give the passages.jsonl itself to read it without a manifest)"
    ]


def test_a_missing_cases_file(tmp_path: Path, corpus: Path, runner: CliRunner) -> None:
    code, lines = _validate(runner, tmp_path / "nope.jsonl", corpus)
    assert (code, lines) == (2, [f"error: {tmp_path / 'nope.jsonl'}: no such file"])


def test_bad_json_names_its_line(tmp_path: Path, corpus: Path, runner: CliRunner) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(GOOD[0]) + "\n" + '{"case_id": "x",\n')
    code, lines = _validate(runner, cases, corpus)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith(f"error: {cases}:2: invalid JSON")


def test_a_missing_corpus_is_one_line(tmp_path: Path, runner: CliRunner) -> None:
    cases = write_rows(tmp_path / "cases.jsonl", GOOD)
    code, lines = _validate(runner, cases, tmp_path / "nope")
    assert (code, lines) == (2, [f"{tmp_path / 'nope'}: no such file"])
