"""`twinbench rag import beir`: a hand-written BEIR folder round-trips; bad input is FILE:LINE."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import read_rows, write_rows
from twinbench.cli import app
from twinbench.rag.beir import BEIR_FACT, import_beir
from twinbench.rag.corpus import load_corpus
from twinbench.rag.trec import read_qrels
from twinbench.rag.validate import check_cases

CORPUS = [
    {"_id": "d1", "title": "Deadlock", "text": "A deadlock needs four conditions.", "metadata": {}},
    {"_id": "d2", "title": "BCNF", "text": "Every determinant is a candidate key."},
    {"_id": 3, "title": "Exam only", "text": ""},  # an integer id; no text: the title is kept
]
QUERIES = [
    {"_id": "q1", "text": "What does a deadlock need?"},
    {"_id": "q2", "text": "When is the exam?"},
    {"_id": "q3", "text": "Not judged in this split"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\t3\t0\n"


def beir_folder(root: Path) -> Path:
    folder = root / "tiny-beir"
    (folder / "qrels").mkdir(parents=True)
    write_rows(folder / "corpus.jsonl", CORPUS)
    write_rows(folder / "queries.jsonl", QUERIES)
    (folder / "qrels" / "test.tsv").write_text(QRELS, "utf-8")
    return folder


def test_round_trip(tmp_path: Path) -> None:
    folder, out = beir_folder(tmp_path), tmp_path / "out"
    imported = import_beir(folder, out)
    assert (imported.passages, imported.cases, imported.answerable, imported.qrels) == (3, 2, 1, 3)
    corpus = load_corpus(out)  # the manifest's sha256 and count agree with passages.jsonl
    assert list(corpus.passages) == ["d1", "d2", "3"]  # the BEIR ids, in file order
    assert corpus.passages["3"].text == "Exam only"
    assert corpus.passages["d1"].title == "Deadlock"
    assert corpus.version == imported.version and corpus.version.startswith("tiny-beir-")
    assert corpus.manifest is not None and corpus.manifest.source["split"] == "test"
    # the qrels are the TSV's, grades kept (0 = judged not relevant)
    assert read_qrels(out / "qrels.txt") == {"q1": {"d1": 2, "d2": 0}, "q2": {"3": 0}}
    cases = {row["case_id"]: row for row in read_rows(out / "cases.jsonl")}
    assert list(cases) == ["q1", "q2"]  # q3 has no judgment in the split
    assert cases["q1"]["answerable"] is True
    assert cases["q1"]["evidence"] == [
        {"passage_id": "d1", "grade": 2, "quote": "A deadlock needs four conditions."}
    ]
    assert cases["q1"]["checked_documents"] == ["d1", "d2"]
    assert cases["q1"]["required_facts"] == [BEIR_FACT]
    assert cases["q2"]["answerable"] is False and cases["q2"]["evidence"] == []
    assert check_cases(out / "cases.jsonl", out).problems == []


def test_cli_writes_the_folder(tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["rag", "import", "beir", str(beir_folder(tmp_path)), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "3 passages, 2 cases (1 answerable), 3 judgments" in result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "cases.jsonl",
        "corpus.json",
        "passages.jsonl",
        "qrels.txt",
    ]
    assert json.loads((out / "corpus.json").read_text())["passages"] == 3


def _rewrite(name: str, text: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_text(text, "utf-8")


BAD: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing queries": (lambda f: (f / "queries.jsonl").unlink(), "queries.jsonl: no such file"),
    "missing split": (lambda f: (f / "qrels" / "test.tsv").unlink(), "splits here: none"),
    "bad JSON": (
        _rewrite("corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": \n'),
        "corpus.jsonl:2: invalid JSON",
    ),
    "duplicate doc id": (
        _rewrite("corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n'),
        "corpus.jsonl:2: duplicate _id 'd1' (first on line 1)",
    ),
    "id with a space": (
        _rewrite("corpus.jsonl", '{"_id": "d 1", "text": "x"}\n'),
        "corpus.jsonl:1: _id 'd 1' is empty or has whitespace",
    ),
    "no title and no text": (
        _rewrite("corpus.jsonl", '{"_id": "d1", "title": "", "text": " "}\n'),
        "corpus.jsonl:1: document 'd1' has no title and no text",
    ),
    "unknown corpus-id": (
        _rewrite("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tzz\t1\n"),
        "test.tsv:3: corpus-id 'zz' is not in corpus.jsonl",
    ),
    "unknown query-id": (
        _rewrite("qrels/test.tsv", "q9\td1\t1\n"),
        "test.tsv:1: query-id 'q9' is not in queries.jsonl",
    ),
    "score not an integer": (
        _rewrite("qrels/test.tsv", "q1\td1\thigh\n"),
        "test.tsv:1: score 'high' is not an integer",
    ),
    "judged twice": (
        _rewrite("qrels/test.tsv", "q1\td1\t1\nq1\td1\t2\n"),
        "test.tsv:2: 'd1' judged twice for query 'q1'",
    ),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_is_one_line_with_file_and_line(
    name: str, tmp_path: Path, runner: CliRunner
) -> None:
    folder = beir_folder(tmp_path)
    mutate, expected = BAD[name]
    mutate(folder)
    result = runner.invoke(
        app, ["rag", "import", "beir", str(folder), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert expected in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o" / "corpus.json").exists()
