"""Human-readable views of a metrics summary: a rich table and Markdown."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table

from twinbench.metrics import registry
from twinbench.records import FAMILIES

# every label comes from the metric declarations (twinbench.metrics.registry)
_FAMILY_COLUMNS = tuple((m.key, m.label) for m in registry.FAMILY)
#: the terminal table's columns: all but those too wide for 80 columns
_TERMINAL_COLUMNS = tuple((m.key, m.label) for m in registry.FAMILY if m.terminal)
MACRO_ROW = "macro mean"
MACRO_NOTE = "macro mean: every family weighs the same"
FAMILY_HEADERS = [label for _, label in _FAMILY_COLUMNS]
_OVERALL_ROWS = tuple((m.key, m.label) for m in registry.OVERALL)
HEADLINE = tuple(m for m in registry.OVERALL if m.headline)


def fmt(value: Any) -> str:
    """Format a metric value: 3 decimals for floats, '-' for missing."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def fmt_p(p: float) -> str:
    """A p-value: five decimals, or scientific notation below 0.001."""
    return f"{p:.5f}" if p >= 1e-3 else f"{p:.1e}"


def _overall_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    overall = summary["overall"]
    pairs = overall["ideal_pairs"]
    counted = {"ideal_pair_rate": f" ({pairs['ideal']}/{pairs['pairs']})"}
    rows = [(label, fmt(overall[key]) + counted.get(key, "")) for key, label in _OVERALL_ROWS]
    conf = summary.get("confidence")
    if conf:
        rows += [
            ("ECE (10 equal-width bins)", fmt(conf["ece"])),
            ("Brier", fmt(conf["brier"])),
            ("AURC", fmt(conf["aurc"])),
        ]
        best = conf.get("best_threshold")
        if best:
            rows.append(
                ("best exact / threshold", f"{fmt(best['best_exact'])} / {fmt(best['threshold'])}")
            )
    counts = summary["counts"]
    rows.append(
        (
            "responses (valid / invalid / rejected / error)",
            f"{counts['responses']} ({counts['valid']} / {counts['invalid']} / "
            f"{counts['rejected']} / {counts['error']})",
        )
    )
    return rows


def family_rows(
    summary: dict[str, Any], columns: tuple[tuple[str, str], ...] = _FAMILY_COLUMNS
) -> list[list[str]]:
    """The macro mean first, then one row per family: the cells of `columns`."""
    macro = summary["macro"]
    rows = [[MACRO_ROW, *(fmt(macro.get(key, "")) for key, _ in columns)]]
    for name in FAMILIES:
        block = summary["families"][name]
        rows.append([name, *(fmt(block[key]) for key, _ in columns)])
    return rows


def metrics_table(summary: dict[str, Any]) -> Group:
    """Two rich tables: the macro mean and per-family metrics, then pooled figures."""
    systems = ", ".join(summary["systems"]) or "-"
    families = Table(
        title=f"twinbench — {systems} (languages: {', '.join(summary['languages'])})",
        caption=MACRO_NOTE,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=0,
    )
    # nothing wraps or truncates: the table fits an 80-column terminal as it is
    families.add_column("family", no_wrap=True)
    for _, label in _TERMINAL_COLUMNS:
        # a header wraps at its space, so it is no wider than its widest word
        families.add_column(label.replace(" ", "\n"), justify="right", no_wrap=True)
    for n, row in enumerate(family_rows(summary, _TERMINAL_COLUMNS)):
        families.add_row(*row, style="bold" if n == 0 else None, end_section=n == 0)
    overall = Table(title="pooled over all items (families weighted by size)", show_header=False)
    overall.add_column("metric")
    overall.add_column("value", justify="right")
    for label, value in _overall_rows(summary):
        overall.add_row(label, value)
    return Group(families, overall)


def metrics_markdown(summary: dict[str, Any]) -> str:
    """The same two tables as Markdown."""
    lines = [
        f"# twinbench metrics — {', '.join(summary['systems'])}",
        "",
        f"Declared languages: {', '.join(summary['languages'])}.",
        "",
        f"Per family; {MACRO_NOTE}.",
        "",
        "| family | " + " | ".join(label for _, label in _FAMILY_COLUMNS) + " |",
        "|---|" + "---:|" * len(_FAMILY_COLUMNS),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in family_rows(summary)]
    lines += ["", "Pooled over all items (families weighted by size):", ""]
    lines += ["| metric | value |", "|---|---:|"]
    lines += [f"| {label} | {value} |" for label, value in _overall_rows(summary)]
    return "\n".join(lines) + "\n"
