"""`twinbench rag eval`: validate the cases, run the four retrievers, score them side by side.

Qrels come from the cases' evidence (grade 1 helpful, 3 sufficient); an unanswerable case has
no relevant passage, so it is counted apart (`no_relevant`), never averaged in. Every retriever
sees the same questions over the same corpus; each run is written as a TREC file with its run
record, and the table as rag-eval.md / rag-eval.json / rag-eval.html (one output set).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from twinbench import html
from twinbench.jsonl import InputError, dumps_json
from twinbench.outputs import write_set
from twinbench.rag.corpus import COURSE_NOTES
from twinbench.rag.metrics import GAIN, evaluate, parse_metrics, stage_metrics, with_judged
from twinbench.rag.retrievers import RetrieverOptions
from twinbench.rag.retrievers.run import retrieve_folder, write_retrieval
from twinbench.rag.validate import check_cases

RETRIEVERS: Final = ("bm25", "dense", "hybrid", "hybrid+rerank")
METRICS: Final = "recall@5,mrr@10,ndcg@10"
EVAL_SCHEMA: Final = "twinbench.rag.eval/1"


@dataclass(frozen=True)
class RetrieverRow:
    """One retriever's line of the table."""

    retriever: str
    metrics: dict[str, float | None]
    queries: dict[str, int]
    latency_ms: dict[str, Any]
    run_file: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (latency without the per-query values)."""
        latency = {k: v for k, v in self.latency_ms.items() if k != "per_query"}
        return {
            "retriever": self.retriever,
            "metrics": self.metrics,
            "queries": self.queries,
            "latency_ms": latency,
            "run_file": self.run_file,
        }


def rag_eval(
    folder: Path = COURSE_NOTES,
    out: Path = Path("twinbench-rag"),
    *,
    retrievers: Sequence[str] = RETRIEVERS,
    metrics: str = METRICS,
    k: int = 40,
    cache: Path | None = None,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Validate `folder`'s cases, run each retriever, score it, write the table into `out`."""
    say = on_step or (lambda _: None)
    check = check_cases(folder / "cases.jsonl", folder)
    if check.problems:
        raise InputError(f"{check.problems[0]} (and {len(check.problems) - 1} more problems)")
    say(f"validated {check.summary()}")
    cases = [case for _, case in check.cases]
    qrels = {case.case_id: {e.passage_id: e.grade for e in case.evidence} for case in cases}
    chosen = with_judged(parse_metrics(metrics))
    options = RetrieverOptions(cache=cache)
    rows: list[RetrieverRow] = []
    stages: dict[str, Any] = {}
    for name in retrievers:
        say(f"retrieving with {name}")
        retrieval = retrieve_folder(folder, name, k=k, options=options)
        run_file = out / f"{name.replace('+', '-')}.txt"
        record = write_retrieval(run_file, retrieval)
        scored = evaluate(qrels, retrieval.hits, chosen)
        rows.append(
            RetrieverRow(name, scored.means(), scored.counts(), record.latency_ms, run_file.name)
        )
        if retrieval.candidates is not None:
            report = stage_metrics(
                qrels, {"pool": retrieval.candidates, "reranked": retrieval.hits}
            )
            stages[name] = report.as_dict()
    document = {
        "schema": EVAL_SCHEMA,
        "corpus": {"version": check.corpus.version, "passages": len(check.corpus)},
        "cases": {
            "total": len(cases),
            "answerable": sum(c.answerable for c in cases),
            "adversarial": sum(c.adversarial for c in cases),
        },
        "gain": GAIN,
        "k": k,
        "metric_labels": [m.label for m in chosen],
        "retrievers": [row.as_dict() for row in rows],
        "stages": stages,
    }
    write_set(
        out,
        {
            "rag-eval.json": dumps_json(document),
            "rag-eval.md": eval_markdown(document),
            "rag-eval.html": eval_html(document),
        },
    )
    return document


def cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    labels = list(document["metric_labels"])
    header = ["retriever", *labels, "evaluated", "no relevant", "mean ms", "p95 ms"]
    rows = []
    for row in document["retrievers"]:
        values = [
            f"{v:.3f}" if isinstance(v := row["metrics"][label], float) else "-" for label in labels
        ]
        latency = row["latency_ms"]
        rows.append(
            [
                row["retriever"],
                *values,
                str(row["queries"]["evaluated"]),
                str(row["queries"]["no_relevant"]),
                f"{latency['mean']:.1f}" if latency.get("mean") is not None else "-",
                f"{latency['p95']:.1f}" if latency.get("p95") is not None else "-",
            ]
        )
    return header, rows


def _intro(document: dict[str, Any]) -> str:
    cases, corpus = document["cases"], document["corpus"]
    return (
        f"{cases['total']} cases ({cases['answerable']} answerable, {cases['adversarial']} "
        f"adversarial) over corpus {corpus['version']} ({corpus['passages']} passages); "
        f"top {document['k']} per query; nDCG gain {document['gain']}, IDCG from all judged "
        "passages; unanswerable cases have no relevant passage and are counted apart."
    )


def eval_markdown(document: dict[str, Any]) -> str:
    """The side-by-side table as Markdown."""
    header, rows = cells(document)
    lines = ["# twinbench rag eval", "", _intro(document), ""]
    lines += ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def eval_html(document: dict[str, Any]) -> str:
    """The side-by-side table as one self-contained HTML page (the report's section)."""
    header, rows = cells(document)
    return html.page(
        "twinbench rag eval",
        [("Retrievers side by side", html.table(header, rows))],
        note=_intro(document),
    )
