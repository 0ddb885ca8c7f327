"""`twinbench rag import scifact`: SciFact's semantics, on scifact-mini and on tiny folders.

SUPPORT/CONTRADICT rationales are evidence (grade 3) quoting the rationale sentences; NEI
claims are unanswerable with their cited docs as the documents checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import read_rows, shared_data, write_rows
from twinbench.cli import app
from twinbench.jsonl import InputError
from twinbench.rag.corpus import load_corpus
from twinbench.rag.scifact import import_scifact
from twinbench.rag.trec import read_qrels
from twinbench.rag.validate import check_cases


def _claims(folder: Path) -> dict[str, dict[str, Any]]:
    return {str(row["id"]): row for row in read_rows(folder / "claims.jsonl")}


def test_scifact_mini_abstracts(tmp_path: Path) -> None:
    mini = shared_data("scifact-mini")
    imported = import_scifact(mini, tmp_path)
    assert (imported.passages, imported.cases, imported.answerable) == (400, 120, 80)
    assert check_cases(tmp_path / "cases.jsonl", tmp_path).problems == []
    corpus = load_corpus(tmp_path)
    # abstract text is BEIR's (sentences joined by one space), so ids and texts match beir/
    beir = {row["_id"]: row["text"] for row in read_rows(mini / "beir" / "corpus.jsonl")}
    assert {pid: p.text for pid, p in corpus.passages.items()} == beir
    # qrels: one row per claim and evidence doc, the same pairs as beir/qrels/test.tsv
    ours = read_qrels(tmp_path / "qrels.txt")
    rows = (mini / "beir" / "qrels" / "test.tsv").read_text("utf-8").splitlines()[1:]
    theirs: dict[str, set[str]] = {}
    for row in rows:
        qid, doc_id, _ = row.split("\t")
        theirs.setdefault(qid, set()).add(doc_id)
    assert {q: set(g) for q, g in ours.items()} == theirs
    assert {grade for g in ours.values() for grade in g.values()} == {3}
    claims = _claims(mini)
    corpus_rows = {str(r["doc_id"]): r for r in read_rows(mini / "corpus.jsonl")}
    for case in read_rows(tmp_path / "cases.jsonl"):
        claim = claims[case["case_id"]]
        assert case["question"] == claim["claim"]
        cited = {str(d) for d in claim["cited_doc_ids"]}
        if not claim["evidence"]:  # NEI: unanswerable, the cited docs were checked
            assert case["answerable"] is False and case["evidence"] == []
            assert set(case["checked_documents"]) == cited
            assert case["forbidden_claims"][0].startswith("The evidence supports")
            continue
        label = {r["label"] for rs in claim["evidence"].values() for r in rs}.pop()
        verb = "supports" if label == "SUPPORT" else "contradicts"
        assert case["required_facts"] == [f"The evidence {verb} the claim: {claim['claim']}"]
        assert {e["passage_id"] for e in case["evidence"]} == set(claim["evidence"])
        for evidence in case["evidence"]:
            sentences = corpus_rows[evidence["passage_id"]]["abstract"]
            picked = sorted(
                {i for r in claim["evidence"][evidence["passage_id"]] for i in r["sentences"]}
            )
            assert evidence["grade"] == 3
            assert evidence["quote"].startswith(sentences[picked[0]].strip())
            assert evidence["quote"].endswith(sentences[picked[-1]].strip())


def test_scifact_mini_sentences(tmp_path: Path) -> None:
    mini = shared_data("scifact-mini")
    result = CliRunner().invoke(
        app, ["rag", "import", "scifact", str(mini), "--out", str(tmp_path), "--unit", "sentence"]
    )
    assert result.exit_code == 0, result.output
    assert check_cases(tmp_path / "cases.jsonl", tmp_path).problems == []
    corpus = load_corpus(tmp_path)
    assert corpus.version.startswith("scifact-mini-sentences-")
    claims = _claims(mini)
    rows = {str(r["doc_id"]): r["abstract"] for r in read_rows(mini / "corpus.jsonl")}
    for case in read_rows(tmp_path / "cases.jsonl"):
        expected = {
            f"{doc}#s{i}"
            for doc, rationales in claims[case["case_id"]]["evidence"].items()
            for r in rationales
            for i in r["sentences"]
        }
        assert {e["passage_id"] for e in case["evidence"]} == expected
        for evidence in case["evidence"]:
            doc, _, n = evidence["passage_id"].partition("#s")
            passage = corpus.passages[evidence["passage_id"]]
            assert evidence["quote"] == passage.text == rows[doc][int(n)].strip()
            assert passage.doc_id == doc and passage.location == {"sentence": int(n)}


def tiny_scifact(root: Path, claims: list[dict[str, Any]]) -> Path:
    folder = root / "tiny-scifact"
    folder.mkdir()
    write_rows(
        folder / "corpus.jsonl",
        [
            {"doc_id": 11, "title": "A", "abstract": ["First.", "Second.", "Third."]},
            {"doc_id": 12, "title": "B", "abstract": ["Only one."]},
        ],
    )
    write_rows(folder / "claims.jsonl", claims)
    return folder


def test_both_labels_make_an_adversarial_case_and_gaps_stay_verbatim(tmp_path: Path) -> None:
    evidence = {
        "11": [{"sentences": [0, 2], "label": "SUPPORT"}],
        "12": [{"sentences": [0], "label": "CONTRADICT"}],
    }
    folder = tiny_scifact(
        tmp_path, [{"id": 5, "claim": "X.", "evidence": evidence, "cited_doc_ids": [11, 12]}]
    )
    import_scifact(folder, tmp_path / "out")
    (case,) = read_rows(tmp_path / "out" / "cases.jsonl")
    assert (case["adversarial"], case["adversarial_kind"]) == (True, "contradictory_passages")
    # one judgment per abstract: its span from the first to the last rationale sentence
    assert case["evidence"] == [
        {"passage_id": "11", "grade": 3, "quote": "First. Second. Third."},
        {"passage_id": "12", "grade": 3, "quote": "Only one."},
    ]
    assert check_cases(tmp_path / "out" / "cases.jsonl", tmp_path / "out").problems == []


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (
            {
                "id": 1,
                "claim": "X.",
                "evidence": {"99": [{"sentences": [0], "label": "SUPPORT"}]},
                "cited_doc_ids": [11],
            },
            "claims.jsonl:2: evidence doc '99' is not in the corpus",
        ),
        (
            {
                "id": 1,
                "claim": "X.",
                "evidence": {"11": [{"sentences": [3], "label": "SUPPORT"}]},
                "cited_doc_ids": [11],
            },
            "claims.jsonl:2: rationale sentences [3] of doc '11' are not indices into its 3 "
            "sentences",
        ),
        (
            {
                "id": 1,
                "claim": "X.",
                "evidence": {"11": [{"sentences": [0], "label": "REFUTE"}]},
                "cited_doc_ids": [11],
            },
            "claims.jsonl:2: rationale label 'REFUTE'",
        ),
        (
            {"id": 1, "claim": "X.", "evidence": {}, "cited_doc_ids": [77]},
            "claims.jsonl:2: cited doc '77' is not in the corpus",
        ),
        (
            {"id": 0, "claim": "Again.", "evidence": {}, "cited_doc_ids": [11]},
            "claims.jsonl:2: duplicate claim id '0'",
        ),
    ],
)
def test_bad_claims_name_file_and_line(
    claim: dict[str, Any], expected: str, tmp_path: Path
) -> None:
    good = {"id": 0, "claim": "Fine.", "evidence": {}, "cited_doc_ids": [11]}
    folder = tiny_scifact(tmp_path, [good, claim])
    with pytest.raises(InputError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        import_scifact(folder, tmp_path / "out")


def test_missing_claims_file(tmp_path: Path, runner: CliRunner) -> None:
    folder = tiny_scifact(tmp_path, [])
    (folder / "claims.jsonl").unlink()
    result = runner.invoke(
        app, ["rag", "import", "scifact", str(folder), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "claims_dev.jsonl: no such file" in result.output
