"""The `rag score` document as a person reads it (a table per answer, the pooled metrics with
their counts) and the output set it is written as."""

from __future__ import annotations

from typing import Any

from twinbench.jsonl import dumps_json, dumps_line, record_dict
from twinbench.rag.answering import answer_lines
from twinbench.rag.scoring import Scored

#: the pooled metrics, in the order shown: (key in summary.metrics, label)
SHOWN = (
    ("faithfulness", "claim faithfulness"),
    ("contradicted_rate", "contradicted rate"),
    ("insufficient_rate", "insufficient rate"),
    ("citation_precision", "citation precision"),
    ("citation_coverage", "citation coverage"),
    ("relevance_mean", "relevance mean"),
    ("useful_rate", "useful rate"),
)


def _checks(row: dict[str, Any]) -> tuple[str, str, str]:
    checks = row["checks"]
    if not checks:
        return "-", "-", "-"
    stated = checks["required_facts_stated"]
    reached = "yes" if checks["evidence_reached"] else "no"
    return f"{sum(stated)}/{len(stated)}", str(len(checks["forbidden_claims_made"])), reached


def answer_cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One line per answer: outcome, exact checks, citations, failure labels."""
    header = ["case", "outcome", "facts", "forbidden", "evidence", "cites ok", "labels"]
    rows = []
    for row in document["answers"]:
        cites = row["citations"]
        rows.append(
            [
                row["case_id"],
                "useful" if row["useful"] else row["outcome"],
                *_checks(row),
                f"{cites['supporting_links']}/{cites['links']}",
                ", ".join(row["failure_labels"]) or "-",
            ]
        )
    return header, rows


def _value(block: dict[str, Any]) -> str:
    if block.get("estimate") is None:
        return "-"
    return f"{block['estimate']:.2f} [{block['low']:.2f}, {block['high']:.2f}]"


def metric_cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The pooled metrics: estimate with its 95% case-bootstrap interval, numerator and
    denominator."""
    metrics = document["summary"]["metrics"]
    rows = []
    for key, label in SHOWN:
        block = metrics[key]
        rows.append([label, _value(block), f"{block['numerator']:g}/{block['denominator']}"])
    return ["metric", "value [95% CI]", "sum/n"], rows


def summary_line(document: dict[str, Any]) -> str:
    """One line: answers, outcomes and the exact checks' totals."""
    s, cases = document["summary"], document["cases"]
    exact, seen = s["exact_checks"], s["outcomes"]
    shown = ", ".join(f"{k} {v}" for k, v in seen.items())
    return (
        f"{s['answers']} answers to {cases['answered']} of {cases['total']} cases: {shown}; "
        f"useful {s['useful']}/{s['answerable_answers']}; required facts stated "
        f"{exact['required_facts_stated']}/{exact['required_facts_checked']}; forbidden claims "
        f"made {exact['forbidden_claims_made']}; citations not found {s['citation_not_found']}"
    )


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def score_markdown(document: dict[str, Any]) -> str:
    """The score as Markdown: the summary, the metrics and one line per answer."""
    corpus = document["corpus"]
    lines = [
        "# twinbench rag score",
        "",
        f"{document['answers_file']['name']} against {document['cases_file']['name']} over "
        f"corpus {corpus['version']} ({corpus['passages']} passages); claims labelled by "
        f"{document['labelled_by']}, citation scope {document['citation_scope']}.",
        "",
        summary_line(document) + ".",
        "",
        "## Metrics",
        "",
        *_table(*metric_cells(document)),
        "",
        "Intervals: 95% case bootstrap "
        f"({document['summary']['resamples']} resamples, seed {document['summary']['seed']}).",
        "",
        "## Answers",
        "",
        *_table(*answer_cells(document)),
        "",
        "facts: required facts stated / checked; forbidden: forbidden claims made; evidence: "
        "whether a passage of the case's evidence was among the answer's passages; cites ok: "
        "supporting links / cited links.",
    ]
    return "\n".join(lines) + "\n"


def score_files(scored: Scored) -> dict[str, str]:
    """The output set: answers.jsonl, judgements.jsonl (a judge only), score.json, score.md."""
    files = {"answers.jsonl": answer_lines(scored.answers)}
    if scored.judgements is not None:
        lines = b"".join(dumps_line(record_dict(j)) for j in scored.judgements)
        files["judgements.jsonl"] = lines.decode("utf-8")
    files["score.json"] = dumps_json(scored.document)
    files["score.md"] = score_markdown(scored.document)
    return files
