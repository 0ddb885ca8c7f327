"""report.html: the report as one self-contained page (inline CSS and SVG, no scripts).

From the top: a banner for each run whose figures are not results (report_tables.broken_runs),
each system's card and run facts, the benchmark's provenance, the tables (every figure that has
an interval shows it), the figures, per system and family a gallery of the errors it made
(gallery.py), and a legend of every abbreviation. The page is a function of the report document
alone, so the same metrics.json gives the same bytes.
"""

from __future__ import annotations

from html import escape
from typing import Any

from twinbench import __version__, html, plots
from twinbench import report_tables as tables
from twinbench.gallery import ERRORS
from twinbench.metrics import registry
from twinbench.provenance import shown_fields
from twinbench.records import FAMILIES
from twinbench.render import HEADLINE, MACRO_NOTE, MACRO_ROW

_OUTCOME_CLASSES = (
    ("N0", "invalid, rejected or error: outside every denominator of the paired metrics"),
    ("N1", "answer present (twin), answered right"),
    ("N2", "answer present, answered wrong"),
    ("N3", "answer present, abstained (false abstention)"),
    ("N4", "answer absent (item), answered (false commitment)"),
    ("N5", "answer absent, abstained (any code)"),
)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def _banners(report: dict[str, Any]) -> str:
    out = []
    for broken in tables.broken_runs(report):
        share = broken["failed"] / broken["responses"] if broken["responses"] else 1.0
        text = (
            f"{broken['name']}: these figures are not results. {tables.status_text(broken)} "
            f"({100 * share:.0f}% invalid or error). Fix the run (see its responses' error "
            "field) before reading its rows below."
        )
        out.append(f'<div class="banner" role="alert"><strong>{escape(text)}</strong></div>')
    return "".join(out)


def _card(name: str, report: dict[str, Any]) -> str:
    summary = report["systems"][name]
    card, facts = summary.get("system_card"), report.get("runs", {}).get(name)
    pairs: list[tuple[str, object]] = []
    if card:
        pairs += [(field, _value(value)) for field, value in shown_fields(card)]
    else:
        pairs.append(("system card", "none (the run has no run.json)"))
    pairs.append(("graded languages", _value(report["languages"][name])))
    counts = summary["counts"]
    statuses = ", ".join(f"{counts.get(k, 0)} {k}" for k in tables.STATUSES)
    pairs.append(("responses", f"{counts['responses']} ({statuses})"))
    if facts:
        plan = (
            f"{facts['status']}, seed {facts['seed']}, {facts['trials']} trial(s) x "
            f"{facts['permutations']} option order(s)"
        )
        pairs.append(("run", plan + (f", shard {facts['shard']}" if facts["shard"] else "")))
        if facts["source"]:
            pairs.append(("imported from", facts["source"]))
        bench = report.get("benchmark") or {}
        if facts["items_sha256"] and bench.get("items_sha256"):
            same = facts["items_sha256"] == bench["items_sha256"]
            pairs.append(("items", "the benchmark's" if same else "NOT the benchmark's items"))
        if facts["versions"]:
            pairs.append(("packages", _value(facts["versions"])))
    return f'<div class="card"><h3>{escape(name)}</h3>{html.definitions(pairs)}</div>'


def _cards(report: dict[str, Any]) -> str:
    return '<div class="cards">' + "".join(_card(n, report) for n in report["systems"]) + "</div>"


def _benchmark(report: dict[str, Any]) -> str:
    bench = report.get("benchmark")
    if not bench:
        return html.paragraph("Not recorded: the report was built without its benchmark folder.")
    generators = "; ".join(
        f"{g['name']}@{g['version']} ({g['family']}, {_plural(g['pairs'], 'pair')}, {g['split']})"
        for g in bench["generators"]
    )
    pairs: list[tuple[str, object]] = [
        ("manifest.json sha256", bench["manifest_sha256"]),
        ("items", f"{bench['items']} (items.jsonl sha256 {bench['items_sha256']})"),
        ("seed", bench["seed"]),
        ("generators", generators or "none recorded"),
        ("built by", f"twinbench {bench['twinbench_version']}"),
    ]
    if bench.get("source"):
        pairs.append(("imported from", _value(bench["source"])))
    pairs.append(("report made by", f"twinbench {__version__}"))
    return html.definitions(pairs)


def _legend(report: dict[str, Any]) -> str:
    settings = report["paired"]["settings"]
    pairs: list[tuple[str, object]] = [
        (
            "U_f, T_f",
            "items (unanswerable) and twins (answerable) of family f with a valid "
            "response; A(c): valid responses abstaining with code c",
        ),
        *((f"{m.label}", m.formula) for m in registry.FAMILY),
        *((f"{m.label}", m.formula) for m in HEADLINE),
        (MACRO_ROW, MACRO_NOTE),
        (
            "[low, high], 95% CI",
            "95% percentile interval, cluster bootstrap over pairs made "
            f"from one source; family and pooled tables 2,000 resamples, paired analysis "
            f"{settings['bootstrap_resamples']}; seed {settings['seed']}",
        ),
        ("-", "undefined: the figure's denominator is 0 (nothing to count), not a zero"),
        ("undefined (chart)", "an empty dashed bar: no value, not a zero"),
        ("present, absent", "the answer is present (the twin) or absent (the item)"),
        ("abst.", "abstention rate"),
        ("pp", "percentage points"),
        (
            "sign-flip p",
            f"two-sided sign-flip test over clusters, {settings['sign_flip_draws']} draws",
        ),
        ("Holm p", "the sign-flip p after Holm's correction across systems"),
        *_OUTCOME_CLASSES,
        *((o.label.replace("_", " "), text) for o, text in ERRORS.items()),
    ]
    return html.definitions(pairs)


def _answer(response: dict[str, Any], kind: str) -> str:
    """What the system did: its answer (P(yes) of a yes/no question), abstention or status."""
    if response["status"] != "ok":
        return f"{response['status']}" + (f": {response['error']}" if response["error"] else "")
    if response["abstain"]:
        return f"abstained ({response['reason'] or 'no code'})"
    answer = response["answer"]
    if kind == "noul":
        return f"answered: P(yes) = {answer} ({'yes' if answer >= 0.5 else 'no'})"
    return f"answered: {answer}"


def _side(role: str, shown: dict[str, Any] | None, wrong: bool) -> str:
    title = "item (answer absent)" if role == "item" else "twin (answer present)"
    if shown is None:
        return f'<div class="side"><h5>{title}</h5><p>no response in this run</p></div>'
    q, r = shown["question"], shown["response"]
    options = "".join(f"<li>{escape(o)}</li>" for o in q["options"])
    facts: list[tuple[str, object]] = [
        ("id", f"{shown['id']} ({shown['language']})"),
        ("expected", shown["expected"]),
        ("system", _answer(r, q["type"])),
        ("outcome", r["outcome"].replace("_", " ")),
        ("trial, order", f"{r['trial']}, {r['permutation']}"),
    ]
    if r["confidence"] is not None:
        facts.append(("confidence", f"{r['confidence']:.3f}"))
    raw = f"<pre>{escape(r['raw'])}</pre>" if r["raw"] is not None else ""
    css = "side wrong" if wrong else "side"
    mark = " (the error)" if wrong else ""
    return (
        f'<div class="{css}"><h5>{title}{mark}</h5><p>{escape(shown["state"])}</p>'
        f"<p><strong>{escape(q['instructions'])}</strong></p><ol>{options}</ol>"
        f"{html.definitions(facts)}{('<div>raw reply:</div>' + raw) if raw else ''}</div>"
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _kind(outcome: str, block: dict[str, Any]) -> str:
    meaning = next(text for o, text in ERRORS.items() if o.label == outcome)
    head = (
        f"{outcome.replace('_', ' ')} ({meaning}): {_plural(block['count'], 'row')}, "
        f"{len(block['examples'])} shown"
    )
    pairs = "".join(
        '<div class="pair">'
        + _side("item", e["item"], e["error_on"] == "item")
        + _side("twin", e["twin"], e["error_on"] == "twin")
        + "</div>"
        for e in block["examples"]
    )
    return f"<h4>{escape(head)}</h4>{pairs}"


def _gallery(report: dict[str, Any]) -> str:
    parts = []
    for name in report["systems"]:
        examples = report.get("examples", {}).get(name, {})
        parts.append(f"<h3>{escape(name)}</h3>")
        if not examples:
            parts.append(html.paragraph("No errors (or no responses file to show them from)."))
            continue
        for family in FAMILIES:
            kinds = examples.get(family)
            if not kinds:
                parts.append(html.paragraph(f"{family}: no errors."))
                continue
            summary = ", ".join(f"{o.replace('_', ' ')} {b['count']}" for o, b in kinds.items())
            body = "".join(_kind(o, b) for o, b in kinds.items())
            parts.append(
                f"<details><summary>{escape(family)}: {escape(summary)}</summary>{body}</details>"
            )
    return "".join(parts)


def report_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page with its figures drawn inline."""
    summaries, paired = report["systems"], report["paired"]
    intervals = report["family_intervals"]
    settings = paired["settings"]
    return html.page(
        "twinbench report",
        [
            ("Systems", _cards(report)),
            ("Benchmark", _benchmark(report)),
            (
                "Per family, macro mean first",
                html.table(tables.PER_FAMILY_HEADER, tables.per_family_rows(report), left=2),
            ),
            ("Pooled over all items", html.table(tables.POOLED_HEADER, tables.pooled_rows(report))),
            (
                "Per-family abstention",
                html.figure(
                    plots.family_bars(intervals, "recall", "Abstention recall"),
                    "Recall per family with 95% cluster-bootstrap intervals",
                )
                + html.figure(
                    plots.family_bars(intervals, "precision", "Abstention precision"),
                    "Precision per family with 95% cluster-bootstrap intervals",
                ),
            ),
            (
                "Twin accuracy against recall",
                html.figure(plots.twin_vs_recall(summaries), "One point per system"),
            ),
            (
                "Risk-coverage",
                html.figure(
                    plots.risk_coverage(summaries), "Answering only above a confidence threshold"
                ),
            ),
            (
                "Permutation sensitivity",
                html.figure(
                    plots.permutation_flips(summaries),
                    "Share of items whose abstain decision flips",
                ),
            ),
            (
                "Paired present / absent shift",
                html.table(tables.SHIFT_HEADER, tables.shift_rows(paired))
                + html.figure(plots.paired_shift(paired), "Abstention with 95% intervals"),
            ),
            (
                "Outcome classes of the paired protocol",
                html.table(tables.OUTCOME_HEADER, tables.outcome_rows(paired)),
            ),
            (
                "Calibration",
                html.figure(plots.calibration(summaries), "10 equal-width confidence bins"),
            ),
            ("Examples of errors", _gallery(report)),
            ("Legend", '<div id="legend">' + _legend(report) + "</div>"),
        ],
        note=f"Intervals: {settings['interval']} cluster bootstrap over pairs, seed "
        f"{settings['seed']}; sign-flip tests with {settings['sign_flip_draws']} draws; Holm "
        "across systems. Every abbreviation is in the legend at the end; - is undefined.",
        top=_banners(report),
    )
