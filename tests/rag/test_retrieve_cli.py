"""`twinbench rag retrieve`: a TREC run plus its run record, from an imported corpus folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_rows
from twinbench.cli import app
from twinbench.rag.beir import import_beir
from twinbench.rag.trec import read_run

CORPUS = [
    {
        "_id": "bcnf",
        "title": "BCNF",
        "text": "A relation is in BCNF when every determinant is a key.",
    },
    {"_id": "exam", "title": "Exam", "text": "The exam is on 18 September."},
    {"_id": "lab", "title": "Lab", "text": "The lab uses batch size 32."},
]
QUERIES = [
    {"_id": "q1", "text": "Exam date in September?"},
    {"_id": "q2", "text": "BCNF determinant"},
]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TWINBENCH_CACHE", str(tmp_path / "cache"))  # never the user's cache
    source = tmp_path / "notes"
    (source / "qrels").mkdir(parents=True)
    write_rows(source / "corpus.jsonl", CORPUS)
    write_rows(source / "queries.jsonl", QUERIES)
    (source / "qrels" / "test.tsv").write_text("q1\texam\t1\nq2\tbcnf\t1\n", "utf-8")
    import_beir(source, tmp_path / "corpus")
    return tmp_path / "corpus"


def test_bm25_run_and_record(folder: Path, tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "runs" / "bm25.txt"
    result = runner.invoke(
        app, ["rag", "retrieve", str(folder), "--retriever", "bm25", "--k", "5", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert [pid for pid, _ in run["q1"]] == ["exam"]  # zero-score passages dropped
    assert [pid for pid, _ in run["q2"]] == ["bcnf"]
    assert out.read_text().splitlines()[0].endswith(" twinbench-bm25")
    record = json.loads((tmp_path / "runs" / "bm25.json").read_text())
    assert record["schema"] == "twinbench.rag.retrieval/1"
    assert (record["retriever"], record["k"], record["run_file"]) == ("bm25", 5, "bm25.txt")
    assert record["parameters"]["tokenizer"]["stemmer"] == "snowball english"
    assert record["corpus"]["passages"] == 3 and record["corpus"]["version"].startswith("notes-")
    assert len(record["corpus"]["sha256"]) == 64
    assert {"python", "twinbench", "bm25s"} <= set(record["versions"])
    assert set(record["latency_ms"]["per_query"]) == {"q1", "q2"}
    assert record["seconds"]["index"] >= 0 and record["queries"]["count"] == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--retriever", "tfidf"], "--retriever 'tfidf': choose one of bm25, dense, hybrid"),
        (["--k", "0"], "--k 0: must be at least 1"),
        (["--candidates", "0"], "--candidates 0: must be at least 1"),
        (["--retriever", "hybrid+rerank", "--reranker", "bert"], "--reranker 'bert'"),
    ],
)
def test_bad_options_exit_2(
    args: list[str], expected: str, folder: Path, tmp_path: Path, runner: CliRunner
) -> None:
    out = tmp_path / "run.txt"
    result = runner.invoke(app, ["rag", "retrieve", str(folder), "--out", str(out), *args])
    assert result.exit_code == 2 and expected in result.output, result.output
    assert not out.exists()


def test_out_json_and_missing_corpus(folder: Path, tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(app, ["rag", "retrieve", str(folder), "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "its record gets .json" in result.output
    result = runner.invoke(
        app, ["rag", "retrieve", str(tmp_path / "none"), "--out", str(tmp_path / "r.txt")]
    )
    assert result.exit_code == 2 and "none: no such file" in result.output.replace("\n", "")
