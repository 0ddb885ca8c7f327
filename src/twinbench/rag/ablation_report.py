"""The ablation document as tables: Markdown, a self-contained HTML page with the
latency–quality plot, and the narrow terminal tables `twinbench rag ablate` prints."""

from __future__ import annotations

from typing import Any

from twinbench import html
from twinbench.rag.ablation import CLASSES


def _fmt(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _rate(block: dict[str, Any]) -> str:
    if block.get("estimate") is None:
        return "-"
    return f"{block['estimate']:.2f} [{block['low']:.2f}, {block['high']:.2f}]"


def table_cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-variant table: counts beside rates."""
    header = [
        "variant",
        "supported",
        "unsupported",
        "abstained",
        "error",
        "unlabelled",
        "useful",
        "useful rate [95% CI]",
        "faithfulness",
        "cite prec.",
        "facts stated",
        "forbidden made",
        "mean ms",
        "p95 ms",
    ]
    rows = []
    for row in document["variants"]:
        m = row["metrics"]["metrics"]
        exact = row["metrics"]["exact_checks"]
        rows.append(
            [
                row["variant"],
                str(row["supported"]),
                str(row["unsupported"]),
                str(row["abstained"]),
                str(row["error"]),
                str(row["unlabelled"]),
                f"{row['useful']}/{row['answerable_answers']}",
                _rate(row["useful_rate"]),
                _fmt(m["faithfulness"].get("estimate"), 2),
                _fmt(m["citation_precision"].get("estimate"), 2),
                f"{exact['required_facts_stated']}/{exact['required_facts_checked']}",
                str(exact["forbidden_claims_made"]),
                _fmt(row["latency_ms"]["mean"], 0),
                _fmt(row["latency_ms"]["p95"], 0),
            ]
        )
    return header, rows


def terminal_cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-variant table narrowed to 80 columns (intervals are in the md/json/html)."""
    header = ["variant", "sup", "unsup", "abst", "err", "unlab", "useful", "rate", "mean ms"]
    rows = []
    for row in document["variants"]:
        rate = row["useful_rate"].get("estimate")
        rows.append(
            [
                row["variant"],
                *(str(row[k]) for k in ("supported", "unsupported", "abstained", "error")),
                str(row["unlabelled"]),
                f"{row['useful']}/{row['answerable_answers']}",
                _fmt(rate, 2),
                _fmt(row["latency_ms"]["mean"], 0),
            ]
        )
    return header, rows


def terminal_pairs(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One line per pair for the terminal: Δ useful and Δ unsupported with their p-values."""
    header = ["a → b", "Δ useful", "p", "Δ unsup", "p"]
    rows = []
    for pair in document["pairs"]:
        cells = [f"{pair['a']} → {pair['b']}"]
        for label in ("useful", "unsupported"):
            test = pair["tests"].get(label)
            cells += (
                ["-", "-"]
                if test is None
                else [f"{test['sign_flip']['mean']:+.3f}", f"{test['sign_flip']['p_value']:.3f}"]
            )
        rows.append(cells)
    return header, rows


def pair_cells(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One line per pair: named transitions and the paired tests."""
    header = ["a → b", "cases", "changes", "Δ useful [95% CI]", "p", "Δ unsupported [95% CI]", "p"]
    rows = []
    for pair in document["pairs"]:
        cells = [f"{pair['a']} → {pair['b']}", str(pair["cases"])]
        cells.append(", ".join(f"{k} {v}" for k, v in pair["named"].items()) or "none")
        for label in ("useful", "unsupported"):
            test = pair["tests"].get(label)
            if test is None:
                cells += ["-", "-"]
                continue
            i = test["interval"]
            cells.append(f"{i['estimate']:+.3f} [{i['low']:+.3f}, {i['high']:+.3f}]")
            cells.append(f"{test['sign_flip']['p_value']:.3f}")
        rows.append(cells)
    return header, rows


def _intro(document: dict[str, Any]) -> str:
    c, b = document["cases"], document["budget"]
    return (
        f"{c['total']} cases ({c['answerable']} answerable, {c['unanswerable']} unanswerable, "
        f"{c['adversarial']} adversarial) over corpus {document['corpus']['version']}; generator "
        f"{document['generator']}; top {b['passages']} passages within {b['budget_words']} words, "
        f"{b['max_tokens']} new tokens, temperature {b['temperature']}, {document['repeats']} "
        f"trial(s); labels by {document['labelled_by']}; citation scope {b['scope']}. Useful = a "
        "supported answer of relevance 2 to an answerable case; unsupported counts all cases; "
        "latency is the whole path per case."
    )


def agreement_line(document: dict[str, Any]) -> str:
    """What is known of the labeller's agreement with people, said before any figure."""
    found = document.get("human_agreement")
    who = document["labelled_by"]
    if not found:
        return (
            f"Labeller–human agreement: not measured. The labels come from {who}; label a blind "
            "package (`twinbench rag package`, `rag label`) and pass it as --human-labels "
            "before trusting them."
        )
    parts = []
    for annotator, report in found.items():
        claims = report["claims"]
        raw = "-" if claims["agreement"] is None else f"{claims['agreement']:.2f}"
        kappa = "-" if claims["kappa"] is None else f"{claims['kappa']:.2f}"
        parts.append(
            f"{annotator}: {claims['matched']} claims, raw agreement {raw}, Cohen's kappa {kappa}"
        )
    return f"Labeller–human agreement ({who}): " + "; ".join(parts) + "."


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def ablation_markdown(document: dict[str, Any]) -> str:
    """The tables as Markdown."""
    lines = ["# twinbench rag ablate", "", agreement_line(document), "", _intro(document)]
    lines += ["", "## Variants", ""]
    lines += _md_table(*table_cells(document))
    lines += ["", "## Paired comparisons (per case, sign-flip test)", ""]
    lines += _md_table(*pair_cells(document))
    for pair in document["pairs"]:
        lines += ["", f"### {pair['a']} → {pair['b']}: transitions", ""]
        lines += [f"- {k}: {v}" for k, v in pair["transitions"].items()]
    return "\n".join(lines) + "\n"


def ablation_html(document: dict[str, Any]) -> str:
    """The tables and the latency–quality plot as one self-contained page."""
    from twinbench.plots import latency_quality

    sections = [
        ("Variants", html.table(*table_cells(document))),
        (
            "Latency and quality",
            html.figure(
                latency_quality(document["variants"]),
                "mean elapsed ms of the whole path against useful and unsupported rates",
            ),
        ),
        ("Paired comparisons", html.table(*pair_cells(document))),
    ]
    for pair in document["pairs"]:
        matrix = [[x, *(str(pair["matrix"][x][y]) for y in CLASSES)] for x in CLASSES]
        sections.append(
            (
                f"{pair['a']} → {pair['b']}",
                html.table([f"{pair['a']} \\ {pair['b']}", *CLASSES], matrix),
            )
        )
    note = agreement_line(document) + " " + _intro(document)
    return html.page("twinbench rag ablate", sections, note=note)
