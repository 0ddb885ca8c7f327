"""Report figures as inline SVG strings (matplotlib, Agg backend; nothing fetched to view).

Every figure has a title and both axis labels, each an SVG group with an id ending in
`-title`, `-xlabel` and `-ylabel` (set by `_labels`), and its text kept as SVG text, so a
reader can select it and a test can find it. A figure that cannot be computed (a denominator
of 0) is drawn as an empty dashed bar marked "undefined", never as a zero.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from twinbench.records import FAMILIES

UNDEFINED = "undefined"


def _svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figure(width: float = 7.0, height: float = 3.6) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "twinbench"  # deterministic element ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (selectable, searchable)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height))


def _labels(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
    """Title and axis labels, each in an SVG group whose id is the title's slug + `-title`,
    `-xlabel` or `-ylabel` (unique on a page whose figures have distinct titles)."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.title.set_gid(f"{slug}-title")
    ax.xaxis.label.set_gid(f"{slug}-xlabel")
    ax.yaxis.label.set_gid(f"{slug}-ylabel")


def _undefined_bars(ax: Any, xs: Sequence[float], width: float, colour: str) -> None:
    """Empty dashed full-height bars marked "undefined" where a figure has no value."""
    if not xs:
        return
    ax.bar(xs, [1.0] * len(xs), width, fill=False, linestyle="--", edgecolor=colour)
    for x in xs:
        ax.text(x, 0.5, UNDEFINED, rotation=90, ha="center", va="center", fontsize=7)


def _outside_legend(ax: Any) -> None:
    """The legend right of the axes, where it covers no bar."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _family_ticks(ax: Any, width: float) -> None:
    ax.set_xticks([f + 0.4 - width / 2 for f in range(len(FAMILIES))], FAMILIES)


def family_bars(intervals: dict[str, dict[str, Any]], metric: str, title: str) -> str:
    """Grouped bars per family and system with bootstrap intervals; `title` names the metric
    (the y axis)."""
    fig, ax = _figure()
    systems = list(intervals)
    width = 0.8 / max(1, len(systems))
    colours = [f"C{i}" for i in range(len(systems))]  # one colour per system, bars or none
    for s, name in enumerate(systems):
        xs, ys, lows, highs, missing = [], [], [], [], []
        for f, family in enumerate(FAMILIES):
            block = intervals[name].get(family, {}).get(metric)
            if block is None:
                missing.append(f + s * width)
                continue
            xs.append(f + s * width)
            ys.append(block["estimate"])
            lows.append(block["estimate"] - block["low"])
            highs.append(block["high"] - block["estimate"])
        bars = ax.bar(xs, ys, width, yerr=[lows, highs], capsize=3, label=name, color=colours[s])
        ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)  # a zero reads as 0.00
        _undefined_bars(ax, missing, width, colours[s])
    _family_ticks(ax, width)
    ax.set_ylim(0, 1.12)
    _labels(ax, title, "family", f"{title.lower()} (95% interval)")
    _outside_legend(ax)
    return _svg(fig)


def twin_vs_recall(summaries: dict[str, dict[str, Any]]) -> str:
    """Twin accuracy against abstention recall, one point per system."""
    fig, ax = _figure(5, 4)
    for name, s in summaries.items():
        x, y = s["overall"]["abstention_recall"], s["overall"]["twin_accuracy"]
        if x is not None and y is not None:
            ax.scatter([x], [y], s=40)
            ax.annotate(name, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    _labels(
        ax,
        "Discrimination: abstain on items, answer twins",
        "abstention recall (any code)",
        "twin accuracy",
    )
    return _svg(fig)


def _confidence_series(summaries: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    """Per system, its `confidence[key]` block, for the systems that give confidences."""
    return {
        n: s["confidence"][key]
        for n, s in summaries.items()
        if s.get("confidence") and s["confidence"].get(key)
    }


def risk_coverage(summaries: dict[str, dict[str, Any]]) -> str | None:
    """Risk-coverage curves of the systems that give confidences."""
    curves = _confidence_series(summaries, "risk_coverage")
    if not curves:
        return None
    fig, ax = _figure(5, 4)
    for name, curve in curves.items():
        ax.step(
            [p["coverage"] for p in curve], [p["risk"] for p in curve], where="post", label=name
        )
    _labels(ax, "Risk-coverage", "coverage", "selective risk")
    ax.legend(fontsize=7)
    return _svg(fig)


def calibration(summaries: dict[str, dict[str, Any]]) -> str | None:
    """Reliability diagram (10 equal-width bins) of the systems that give confidences."""
    bins = _confidence_series(summaries, "reliability")
    if not bins:
        return None
    fig, ax = _figure(5, 4)
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    for name, rows in bins.items():
        ax.plot(
            [r["confidence"] for r in rows], [r["accuracy"] for r in rows], marker="o", label=name
        )
    _labels(ax, "Calibration", "mean confidence", "accuracy")
    ax.legend(fontsize=7)
    return _svg(fig)


def permutation_flips(summaries: dict[str, dict[str, Any]]) -> str | None:
    """Abstain-decision flip rate across option orders, per family and system."""
    data = {n: s["permutation"] for n, s in summaries.items() if s.get("permutation")}
    if not data:
        return None
    fig, ax = _figure()
    width = 0.8 / len(data)
    for s, (name, block) in enumerate(data.items()):
        colour = f"C{s}"
        xs = [f + s * width for f in range(len(FAMILIES))]
        rates = [block[f]["flip_rate"] for f in FAMILIES]
        shown = [(x, r) for x, r in zip(xs, rates, strict=True) if r is not None]
        bars = ax.bar([x for x, _ in shown], [r for _, r in shown], width, label=name, color=colour)
        ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)
        missing = [x for x, r in zip(xs, rates, strict=True) if r is None]
        _undefined_bars(ax, missing, width, colour)
    _family_ticks(ax, width)
    ax.set_ylim(0, 1.05)
    _labels(ax, "Permutation sensitivity of the abstain decision", "family", "flip rate")
    _outside_legend(ax)
    return _svg(fig)


def paired_shift(paired: dict[str, Any]) -> str:
    """Present vs absent abstention per system (dumbbells), with bootstrap intervals."""
    shown = {name: b for name, b in paired["systems"].items() if b["conditions"] is not None}
    fig, ax = _figure(7, 0.5 + 0.45 * max(1, len(shown)))
    for row, block in enumerate(shown.values()):
        c = block["conditions"]
        present, absent = c["present_abstention"], c["absent_abstention"]
        ax.plot([present["estimate"], absent["estimate"]], [row, row], color="grey")
        for point, colour in ((present, "tab:blue"), (absent, "tab:orange")):
            ax.errorbar(
                [point["estimate"]],
                [row],
                xerr=[[point["estimate"] - point["low"]], [point["high"] - point["estimate"]]],
                fmt="o",
                color=colour,
                capsize=2,
            )
    ax.set_yticks(range(len(shown)), list(shown))
    ax.set_xlim(-0.02, 1.02)
    _labels(
        ax,
        "Paired present / absent shift",
        "abstention rate (blue: answer present, orange: answer absent; 95% intervals)",
        "system",
    )
    return _svg(fig)


def forest(comparisons: list[dict[str, Any]]) -> str | None:
    """Differences A − B with intervals, one row per comparison."""
    if not comparisons:
        return None
    fig, ax = _figure(7, 0.6 + 0.3 * len(comparisons))
    for row, r in enumerate(comparisons):
        d = r["difference"]
        ax.errorbar(
            [d["estimate"]],
            [row],
            xerr=[[d["estimate"] - d["low"]], [d["high"] - d["estimate"]]],
            fmt="o",
            capsize=2,
        )
    ax.axvline(0, color="grey", linewidth=1)
    ax.set_yticks(
        range(len(comparisons)),
        [f"{r['a']} − {r['b']}: {r['family']} {r['metric']}" for r in comparisons],
        fontsize=7,
    )
    ax.invert_yaxis()
    _labels(ax, "Paired differences A − B", "difference (95% interval)", "comparison")
    return _svg(fig)


def latency_quality(rows: list[dict[str, Any]]) -> str | None:
    """Mean whole-path latency against useful rate (dots) and unsupported rate (crosses)."""
    shown = [r for r in rows if r["latency_ms"]["mean"] is not None and r["answers"]]
    if not shown:
        return None
    fig, ax = _figure(6, 4)
    for r in shown:
        x = r["latency_ms"]["mean"]
        good = r["useful"] / r["answerable_answers"] if r["answerable_answers"] else 0.0
        bad = r["unsupported"] / r["answers"]
        ax.plot([x, x], [good, bad], color="lightgrey", linewidth=1, zorder=1)
        ax.scatter([x], [good], marker="o", color="tab:blue", zorder=2)
        ax.scatter([x], [bad], marker="x", color="tab:red", zorder=2)
        ax.annotate(r["variant"], (x, good), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_ylim(-0.02, 1.02)
    _labels(
        ax,
        "Latency against quality per variant",
        "mean elapsed ms per case (whole path)",
        "rate (o useful of answerable, x unsupported of all)",
    )
    return _svg(fig)
