"""Fusion and reranking: RRF by hand, and a CrossEncoder the test builds itself (no download)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from twinbench.rag.records import Passage
from twinbench.rag.retrievers import RetrieverOptions, build_reranker
from twinbench.rag.retrievers.base import Hits, Reranker
from twinbench.rag.retrievers.bm25 import BM25Retriever
from twinbench.rag.retrievers.hybrid import HybridRetriever
from twinbench.rag.retrievers.rerank import CrossEncoderReranker, RerankedRetriever

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "a",
    "of",
    "is",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "bcnf",
    "key",
    "exam",
    "date",
]


class FixedRanking:
    """A precomputed ranking (a saved run) behind the Retriever protocol."""

    def __init__(self, name: str, ids: list[str]) -> None:
        self.name, self.ids = name, ids

    def params(self) -> dict[str, Any]:
        return {"ids": self.ids}

    def search(self, queries: Mapping[str, str], k: int) -> Hits:
        return {q: [(pid, 1.0 / n) for n, pid in enumerate(self.ids[:k], 1)] for q in queries}


def test_hybrid_fuses_the_seed_example_by_hand() -> None:
    dense = FixedRanking("dense", ["overview", "normalization", "bcnf"])
    lexical = FixedRanking("bm25", ["bcnf", "exam", "normalization"])
    hits = HybridRetriever([dense, lexical], depth=3).search({"q": "BCNF rule"}, k=10)["q"]
    expected = [
        ("bcnf", 1 / 63 + 1 / 61),  # 0.032266: third in dense, first in lexical
        ("normalization", 1 / 62 + 1 / 63),  # 0.032002
        ("overview", 1 / 61),
        ("exam", 1 / 62),
    ]
    assert [pid for pid, _ in hits] == [pid for pid, _ in expected]
    assert [s for _, s in hits] == pytest.approx([s for _, s in expected], abs=1e-15)


def test_hybrid_depth_grows_to_k_unless_it_is_a_fixed_pool() -> None:
    long = FixedRanking("a", [f"p{i}" for i in range(10)])
    assert len(HybridRetriever([long], depth=2).search({"q": "x"}, k=5)["q"]) == 5
    pool = HybridRetriever([long], depth=2, grow_to_k=False)
    assert [p for p, _ in pool.search({"q": "x"}, k=5)["q"]] == ["p0", "p1"]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised one-layer BERT cross-encoder with an 18-word vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n", "utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def passage(pid: str, text: str) -> Passage:
    return Passage(passage_id=pid, doc_id=pid, text=text, corpus_version="tiny-1")


CORPUS = [
    passage("short", "the cat sat on the mat"),  # [CLS] the cat [SEP] + 6 + [SEP] = 10 tokens
    passage("long", " ".join(["the dog sat on a mat"] * 3)),  # 4 + 18 + 1 = 23 tokens
    passage("key", "bcnf key"),
]


def test_cross_encoder_counts_truncated_pairs(tiny_cross_encoder: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), max_length=16)
    assert isinstance(reranker, Reranker)
    scores = reranker.score("the cat", CORPUS)
    assert len(scores) == 3 and len(set(scores)) > 1  # raw logits, not a saturated sigmoid
    assert (reranker.pairs, reranker.truncated) == (3, 1)  # only "long" exceeds 16 tokens
    params = reranker.params()
    assert params["checkpoint"] == str(tiny_cross_encoder)
    assert params["max_length"] == 16 and params["revision"] is None
    assert len(params["weights_sha256"]) == 64


def test_rerank_stage_reorders_only_the_pool(tiny_cross_encoder: Path) -> None:
    first = BM25Retriever(CORPUS)
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), max_length=16)
    stage = RerankedRetriever(first, reranker, CORPUS, pool=2)
    hits = stage.search({"q": "the cat sat"}, k=10)["q"]
    pool = [pid for pid, _ in stage.candidates["q"]]
    assert pool == ["short", "long"]  # "key" shares no term: never reaches the reranker
    expected = dict(zip(pool, reranker.score("the cat sat", [CORPUS[0], CORPUS[1]]), strict=True))
    assert hits == sorted(expected.items(), key=lambda hit: (-hit[1], hit[0]))
    params = stage.params()
    assert params["pool"] == 2 and params["reranker"]["name"] == "cross-encoder"
    assert params["reranker"]["pairs"] == 4 and params["reranker"]["pairs_truncated"] == 2


def test_a_missing_checkpoint_is_a_user_error(tmp_path: Path) -> None:
    from twinbench.jsonl import InputError

    with pytest.raises(InputError, match="cannot load it offline"):
        CrossEncoderReranker(str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="choose one of"):
        build_reranker("bert", RetrieverOptions(), lambda: FixedRanking("x", []))


def test_cli_hybrid_rerank_writes_candidates_and_records_the_reranker(
    tiny_cross_encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from typer.testing import CliRunner

    from conftest import write_rows
    from twinbench.cli import app
    from twinbench.rag.beir import import_beir
    from twinbench.rag.trec import read_run

    monkeypatch.setenv("TWINBENCH_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "beir"
    (source / "qrels").mkdir(parents=True)
    write_rows(source / "corpus.jsonl", [{"_id": p.passage_id, "text": p.text} for p in CORPUS])
    write_rows(source / "queries.jsonl", [{"_id": "q", "text": "the cat sat"}])
    (source / "qrels" / "test.tsv").write_text("q\tshort\t1\n", "utf-8")
    import_beir(source, tmp_path / "corpus")
    out = tmp_path / "run.txt"
    args = ["rag", "retrieve", str(tmp_path / "corpus"), "--retriever", "hybrid+rerank"]
    args += ["--candidates", "1", "--k", "5", "--out", str(out), "--reranker-max-length", "16"]
    result = CliRunner().invoke(app, [*args, "--reranker", f"cross-encoder:{tiny_cross_encoder}"])
    assert result.exit_code == 0, result.output
    pool = read_run(tmp_path / "run.candidates.txt")["q"]
    assert 1 <= len(pool) <= 2  # the union of each branch's top 1
    assert {p for p, _ in read_run(out)["q"]} == {p for p, _ in pool}
    record = json.loads((tmp_path / "run.json").read_text())
    reranker = record["parameters"]["reranker"]
    assert reranker["name"] == "cross-encoder" and reranker["max_length"] == 16
    assert reranker["pairs"] == len(pool)
    assert record["candidates_file"] == "run.candidates.txt"
    branches = record["parameters"]["first_stage"]["branches"]
    assert set(branches) == {"bm25", "dense"}
    assert branches["dense"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
