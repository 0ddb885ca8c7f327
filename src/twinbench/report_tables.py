"""The cells of the report's tables, shared by report.md and report.html.

A cell with an interval is a `(value, "[low, high]")` tuple: report.md writes it on one line,
report.html puts the interval under the value. `-` is an undefined figure (its denominator is
0), never a zero.
"""

from __future__ import annotations

from typing import Any

from twinbench.metrics import registry
from twinbench.records import FAMILIES
from twinbench.render import HEADLINE, MACRO_ROW, fmt, fmt_p

Cell = str | tuple[str, str]
#: a run is broken, not a result, when more of its rows than this share failed (invalid or
#: error: a reply that could not be read, or none), or when none of its rows is valid
BROKEN_SHARE = 0.05
FAILURES = ("invalid", "error")
STATUSES = ("valid", "invalid", "rejected", "error")
PER_FAMILY_HEADER = ["system", "family", *(m.label for m in registry.FAMILY)]
POOLED_HEADER = ["system", *(m.label for m in HEADLINE)]
SHIFT_HEADER = [
    "system",
    "present abst. [95% CI]",
    "absent abst. [95% CI]",
    "shift [95% CI] (pp)",
    "sign-flip p",
    "Holm p",
]
OUTCOME_HEADER = ["system", "N0", "N1", "N2", "N3", "N4", "N5"]


def interval_text(block: dict[str, Any] | None, scale: float = 1.0, digits: int = 3) -> str:
    """`[low, high]` of an interval block ('' when there is none)."""
    if not block:
        return ""
    return f"[{scale * block['low']:.{digits}f}, {scale * block['high']:.{digits}f}]"


def with_interval(value: Any, block: dict[str, Any] | None) -> Cell:
    """A figure and its 95% interval, or the figure alone when it has none."""
    text = fmt(value)
    return (text, interval_text(block)) if block and value is not None else text


def flat(cell: Cell) -> str:
    """A cell on one line: `value [low, high]`."""
    return cell if isinstance(cell, str) else f"{cell[0]} {cell[1]}"


def per_family_rows(report: dict[str, Any]) -> list[list[Cell]]:
    """Per system: its macro mean over families, then each family with its intervals."""
    rows: list[list[Cell]] = []
    for name, summary in report["systems"].items():
        macro, intervals = summary["macro"], report["family_intervals"].get(name, {})
        rows.append([name, MACRO_ROW, *(fmt(macro.get(m.key, "")) for m in registry.FAMILY)])
        for family in FAMILIES:
            block, own = summary["families"][family], intervals.get(family, {})
            cells = [with_interval(block[m.key], own.get(m.key)) for m in registry.FAMILY]
            rows.append([name, family, *cells])
    return rows


def pooled_rows(report: dict[str, Any]) -> list[list[Cell]]:
    """Per system: the headline figures pooled over every item, with their intervals."""
    rows: list[list[Cell]] = []
    for name, summary in report["systems"].items():
        intervals = report.get("overall_intervals", {}).get(name, {})
        cells = [with_interval(summary["overall"][m.key], intervals.get(m.key)) for m in HEADLINE]
        rows.append([name, *cells])
    return rows


def _pct(block: dict[str, Any]) -> Cell:
    return (f"{100 * block['estimate']:.1f}%", interval_text(block, 100, 1))


def shift_rows(paired: dict[str, Any]) -> list[list[Cell]]:
    """Per system: present and absent abstention, the shift (pp), its p and Holm p."""
    rows: list[list[Cell]] = []
    for name, b in paired["systems"].items():
        c, t = b["conditions"], b["shift_test"]
        if c is None or t is None:
            rows.append([name, "-", "-", "no pair valid in both conditions", "-", "-"])
            continue
        shift = c["shift"]
        rows.append(
            [
                name,
                _pct(c["present_abstention"]),
                _pct(c["absent_abstention"]),
                (f"{100 * shift['estimate']:+.2f}", interval_text(shift, 100, 1)),
                fmt_p(t["p_value"]),
                fmt_p(t["holm_p"]),
            ]
        )
    return rows


def outcome_rows(paired: dict[str, Any]) -> list[list[Cell]]:
    """Per system: the paired protocol's outcome classes N0..N5."""
    return [
        [name, *(str(b["outcome_counts"][f"N{i}"]) for i in range(6))]
        for name, b in paired["systems"].items()
    ]


def broken_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs whose figures are not results: `name` (the run, and its system's name where it
    differs), `responses`, `failed` and the count of each status (`STATUSES`), for every run
    over BROKEN_SHARE failed or with no valid row."""
    out = []
    for name, summary in report["systems"].items():
        counts = summary["counts"]
        responses = counts["responses"]
        failed = sum(counts.get(k, 0) for k in FAILURES)
        if responses == 0 or counts["valid"] == 0 or failed > BROKEN_SHARE * responses:
            statuses = {k: counts.get(k, 0) for k in STATUSES}
            system = ", ".join(s for s in summary["systems"] if s != name)
            shown = f"{name} ({system})" if system else name  # the run folder and its system
            out.append({"name": shown, "responses": responses, "failed": failed, **statuses})
    return out


def status_text(broken: dict[str, Any]) -> str:
    """`12 responses: 0 valid, 12 invalid, 0 rejected, 0 error`."""
    parts = ", ".join(f"{broken[k]} {k}" for k in STATUSES)
    return f"{broken['responses']} responses: {parts}"
