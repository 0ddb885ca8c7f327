"""`twinbench rag eval`: the embedded cases validated, four retrievers scored side by side."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from twinbench.cli import app
from twinbench.rag.corpus import COURSE_NOTES
from twinbench.rag.evaluation import rag_eval
from twinbench.rag.metrics import evaluate, parse_metrics
from twinbench.rag.trec import read_run
from twinbench.rag.validate import load_cases


def test_rag_eval_prints_and_writes_the_side_by_side_table(tmp_path: Path) -> None:
    out = tmp_path / "rag"
    result = CliRunner().invoke(app, ["rag", "eval", "--out", str(out), "--cache", str(tmp_path)])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "rag-eval.json").read_text())
    names = [row["retriever"] for row in document["retrievers"]]
    assert names == ["bm25", "dense", "hybrid", "hybrid+rerank"]
    for row in document["retrievers"]:
        # 103 cases: 72 answerable are scored, the 31 unanswerable counted apart
        assert row["queries"]["evaluated"] == 72 and row["queries"]["no_relevant"] == 31
        assert 0.5 < row["metrics"]["ndcg@10"] <= 1.0
    assert "hybrid+rerank" in document["stages"]
    markdown = (out / "rag-eval.md").read_text()
    assert "| bm25 |" in markdown and "2^g-1" in markdown
    assert "<table" in (out / "rag-eval.html").read_text()
    assert "hybrid+rerank" in result.output and "ndcg@10" in result.output


def test_the_table_agrees_with_rag_metrics_on_its_own_run(tmp_path: Path) -> None:
    document = rag_eval(COURSE_NOTES, tmp_path, retrievers=("bm25",))
    cases = load_cases(COURSE_NOTES / "cases.jsonl", COURSE_NOTES)
    qrels = {c.case_id: {e.passage_id: e.grade for e in c.evidence} for c in cases}
    again = evaluate(qrels, read_run(tmp_path / "bm25.txt"), parse_metrics("recall@5,ndcg@10"))
    shown = document["retrievers"][0]["metrics"]
    assert shown["recall@5"] == again.means()["recall@5"]
    assert shown["ndcg@10"] == again.means()["ndcg@10"]


def test_bad_cases_stop_rag_eval_with_a_located_error(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("passages.jsonl", "corpus.json"):
        (folder / name).write_bytes((COURSE_NOTES / name).read_bytes())
    lines = (COURSE_NOTES / "cases.jsonl").read_text().splitlines()
    (folder / "cases.jsonl").write_text("\n".join([lines[0], lines[0], *lines[1:]]) + "\n")
    result = CliRunner().invoke(
        app, ["rag", "eval", "--corpus", str(folder), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert f"{folder / 'cases.jsonl'}:2: duplicate case_id" in result.output
    assert not (tmp_path / "o").exists()
