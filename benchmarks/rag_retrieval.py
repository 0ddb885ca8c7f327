"""Index and retrieve on SciFact: seconds per stage, and nDCG@10 / Recall@100 per retriever.

Usage: python benchmarks/rag_retrieval.py [--data ../shared/data/scifact] [--cache DIR]
       [--smollm2-queries N] [--out DIR]

Imports SciFact's BEIR test split (5,183 abstracts, 300 claims, BEIR's qrels) and SciFact's
own evidence contract (the dev claims: rationale docs relevant, NEI claims unanswerable), then
times, each on its own:

* bm25: index (tokenize, stem, build) and the 300 queries one at a time (target <= 5 s);
* dense: the passages encoded into an empty embedding cache (first), then built again from
  that cache (cached), and the 300 queries;
* hybrid (RRF of both, branches 100 deep) and hybrid+rerank (the union of both top 20s,
  reranked by the minilm fallback), queries one at a time;
* with --smollm2-queries N: the smollm2 reranker on the first N queries' pools (pairs/s).

Each run is written as a TREC file, read back and scored with `twinbench.rag.metrics`
(gain 2^g − 1; SciFact's grades are all 1 or all 3, so this equals binary nDCG) and, when
ranx is installed, with ranx as a cross-check. --cache keeps the embeddings between runs
(default: a fresh temporary folder, so the first encode is really measured).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from twinbench.rag.beir import import_beir
from twinbench.rag.corpus import load_corpus
from twinbench.rag.metrics import evaluate, parse_metrics, stage_metrics
from twinbench.rag.retrievers import RetrieverOptions, build_reranker
from twinbench.rag.retrievers.base import Hits, Retriever
from twinbench.rag.retrievers.bm25 import BM25Retriever
from twinbench.rag.retrievers.dense import DenseRetriever
from twinbench.rag.retrievers.hybrid import HybridRetriever
from twinbench.rag.retrievers.rerank import RerankedRetriever
from twinbench.rag.retrievers.run import SCORE_FORMAT, search_each
from twinbench.rag.scifact import import_scifact
from twinbench.rag.trec import Qrels, read_qrels, read_run, write_run
from twinbench.rag.validate import load_cases

METRICS = "ndcg@10,recall@100"


def timed(label: str, func: Any) -> Any:
    """Run func(), print and return its result, with seconds."""
    began = time.perf_counter()
    result = func()
    seconds = time.perf_counter() - began
    print(f"  {label:<44} {seconds:8.2f} s", flush=True)
    return result, seconds


def ranx_scores(qrels: Qrels, hits: Hits) -> dict[str, float] | None:
    """nDCG@10 and Recall@100 by ranx (None when it is not installed)."""
    try:
        import ranx  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    # ranks as scores, so ranx keeps twinbench's order (ties by passage id) exactly
    judged = {q: g for q, g in qrels.items() if any(v > 0 for v in g.values())}
    run = {
        q: {p: float(len(h) - i) for i, (p, _) in enumerate(h)}
        for q, h in hits.items()
        if h and q in judged
    }
    scores = ranx.evaluate(
        ranx.Qrels(judged),
        ranx.Run(run),
        ["ndcg_burges@10", "recall@100"],
        make_comparable=True,
    )
    return {"ndcg@10": float(scores["ndcg_burges@10"]), "recall@100": float(scores["recall@100"])}


def score(name: str, hits: Hits, qrels_sets: dict[str, Qrels], out: Path) -> None:
    """Write the run, read it back, print the metrics on each qrels set."""
    path = out / f"{name}.txt"
    write_run(path, hits, f"twinbench-{name}", SCORE_FORMAT)
    back = read_run(path)
    for label, qrels in qrels_sets.items():
        evaluation = evaluate(qrels, back, parse_metrics(METRICS))
        exact = {m: v for m, v in evaluation.means().items() if v is not None}
        means = {m: round(v, 4) for m, v in exact.items()}
        checked = ranx_scores(qrels, back)
        agree = (
            ""
            if checked is None
            else "  ranx agrees"
            if all(abs(checked[m] - exact[m]) < 1e-9 for m in checked)
            else f"  ranx DIFFERS {checked}"
        )
        print(f"    {label:<26} {means} ({evaluation.counts()['evaluated']} queries){agree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smollm2-queries", type=int, default=0)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    work = Path(tempfile.mkdtemp(prefix="twb-rag-bench-"))
    out = args.out or work / "runs"
    cache = args.cache or work / "embeddings"
    beir_dir, contract_dir = work / "scifact-beir", work / "scifact-contract"
    print("import")
    timed("BEIR test split -> corpus folder", lambda: import_beir(args.data / "beir", beir_dir))
    timed("SciFact dev claims -> corpus folder", lambda: import_scifact(args.data, contract_dir))
    corpus = load_corpus(beir_dir)
    passages = list(corpus.passages.values())
    queries = {c.case_id: c.question for c in load_cases(beir_dir / "cases.jsonl", beir_dir)}
    qrels_sets = {
        "BEIR qrels (cited docs)": read_qrels(beir_dir / "qrels.txt"),
        "evidence qrels (rationales)": read_qrels(contract_dir / "qrels.txt"),
    }
    print(f"  {len(passages)} passages, {len(queries)} queries")

    def run(label: str, retriever: Retriever, k: int) -> tuple[Hits, float]:
        (hits, latency), seconds = timed(
            f"{label}: {len(queries)} queries", lambda: search_each(retriever, queries, k)
        )
        ms = sorted(latency.values())
        print(
            f"    per query: mean {sum(ms) / len(ms):.1f} ms, p95 {ms[int(0.95 * len(ms))]:.1f} ms"
        )
        return hits, seconds

    print("bm25")
    bm25, bm25_index = timed("index", lambda: BM25Retriever(passages))
    bm25_hits, bm25_search = run("search", bm25, 100)
    total = bm25_index + bm25_search
    print(f"    index + search {total:.2f} s (target <= 5 s: {'met' if total <= 5 else 'missed'})")
    print(f"    params {bm25.params()}")
    score("bm25", bm25_hits, qrels_sets, out)

    print("dense")
    timed("model load", lambda: DenseRetriever([passages[0]], cache=work / "warmup"))
    label = "index, first (encode, empty cache)"
    if cache.is_dir() and any(cache.glob("*.npy")):
        label = "index (the --cache folder was warm already)"
    first, _ = timed(label, lambda: DenseRetriever(passages, cache=cache))
    print(
        f"    cache hit: {first.cache_hit}, encode {first.encode_seconds:.1f} s, "
        f"{len(first.truncated_ids)} passages over {first.max_seq_length} word pieces"
    )
    dense, _ = timed("index, cached", lambda: DenseRetriever(passages, cache=cache))
    print(f"    cache hit: {dense.cache_hit} ({dense.cache_path.name})")
    dense_hits, _ = run("search", dense, 100)
    score("dense", dense_hits, qrels_sets, out)

    print("hybrid (RRF, offset 60, branches 100 deep)")
    hybrid = HybridRetriever([bm25, dense], depth=100)
    score("hybrid", run("search", hybrid, 100)[0], qrels_sets, out)

    options = RetrieverOptions(candidates=20)
    print("hybrid+rerank (union of top 20 + top 20, minilm reranker)")
    pool = HybridRetriever([bm25, dense], depth=20, grow_to_k=False)
    reranked = RerankedRetriever(
        pool, build_reranker("minilm", options, lambda: dense), passages, pool=40
    )
    rerank_hits, _ = run("search", reranked, 40)
    score("hybrid+rerank", rerank_hits, qrels_sets, out)
    for label, qrels in qrels_sets.items():
        stages = stage_metrics(qrels, {"candidates": reranked.candidates, "reranked": rerank_hits})
        print(
            f"    stages, {label}: "
            + ", ".join(
                f"{name} { ({m: round(v, 4) for m, v in ev.means().items() if v is not None}) }"
                for name, ev in stages.stages.items()
            )
        )
    print(f"    reranker: {reranked.params()['reranker']}")

    if args.smollm2_queries:
        sample = dict(list(queries.items())[: args.smollm2_queries])
        smol = build_reranker("smollm2", options, lambda: dense)
        stage = RerankedRetriever(pool, smol, passages, pool=40)
        (hits, _), seconds = timed(
            f"smollm2 rerank: {len(sample)} queries", lambda: search_each(stage, sample, 40)
        )
        print(
            f"    {smol.pairs} pairs, {smol.pairs / seconds:.2f} pairs/s, "
            f"{smol.truncated} truncated"
        )
        base = {q: reranked.candidates[q] for q in sample}
        for label, qrels in qrels_sets.items():
            sub = {q: qrels[q] for q in sample if q in qrels}
            print(
                f"    {label}: "
                + ", ".join(
                    f"{name} ndcg@10 {evaluate(sub, ranked, parse_metrics('ndcg@10')).means()}"
                    for name, ranked in (("hybrid pool", base), ("smollm2", hits))
                )
            )
    print(f"runs in {out}")


if __name__ == "__main__":
    main()
