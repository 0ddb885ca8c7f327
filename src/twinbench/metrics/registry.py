"""Every reported metric declared once: its key, label, formula, direction and level.

The terminal table, metrics.md, report.md, report.html and docs/grading.md's table iterate over
these declarations, so a metric's name and label live here and nowhere else. Formulas use
docs/grading.md's notation (U_f: unanswerable items of family f with a valid response, T_f: its
twins, A(c): valid responses abstaining with code c).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["family", "overall"]


@dataclass(frozen=True)
class Metric:
    """One reported figure."""

    key: str
    label: str
    formula: str
    level: Level
    higher_is_better: bool | None = True  # None: a count, no direction
    headline: bool = False  # shown in the report's headline table
    terminal: bool = True  # a column of the terminal's family table (which fits 80 columns)

    @property
    def is_count(self) -> bool:
        """A count (items, pairs) rather than a rate."""
        return self.higher_is_better is None


FAMILY: tuple[Metric, ...] = (
    Metric("unanswerable", "items", "|U_f|", "family", None),
    Metric("twins", "twins", "|T_f|", "family", None),
    # the headline first: a pair is ideal only when the system tells its item from its twin
    Metric(
        "ideal_pair_rate",
        "ideal pairs",
        "#(pairs of f: item abstained right and twin answered right) / #pairs",
        "family",
    ),
    Metric(
        "pair_score",
        "pair score",
        "mean over pairs of f of (item value + twin value) / 2; item: right code +1, other "
        "code 0, answered -1; twin: right +1, wrong -1, abstained -1",
        "family",
    ),
    Metric("recall", "recall", "#(U_f abstained with code f) / |U_f|", "family"),
    Metric("precision", "precision", "#(U_f abstained with code f) / |A(f)|", "family"),
    Metric("twin_accuracy", "twin acc", "#(T_f answered right) / |T_f|", "family"),
    Metric(
        "accuracy",
        "accuracy",
        "#(U_f and T_f graded correct) / (|U_f| + |T_f|)",
        "family",
        terminal=False,  # in metrics.md, the report and the JSON
    ),
    Metric(
        "wrong_reason",
        "wrong code",
        "#(U_f abstained with another code or none)",
        "family",
        None,
    ),
)

OVERALL: tuple[Metric, ...] = (
    Metric(
        "ideal_pair_rate",
        "ideal pair rate (the headline)",
        "#(pairs: item abstained right and twin answered right) / #pairs",
        "overall",
        headline=True,
    ),
    Metric(
        "pair_score",
        "pair score",
        "mean over pairs of (item value + twin value) / 2 (as per family)",
        "overall",
        headline=True,
    ),
    Metric(
        "abstention_precision",
        "abstention precision (any code)",
        "#(U abstained, any code) / #(abstained)",
        "overall",
        headline=True,
    ),
    Metric(
        "abstention_recall",
        "abstention recall (any code)",
        "#(U abstained, any code) / |U|",
        "overall",
        headline=True,
    ),
    Metric(
        "twin_accuracy",
        "twin accuracy",
        "#(T answered right) / |T|",
        "overall",
        headline=True,
    ),
    Metric("accuracy", "accuracy (valid responses)", "#correct / #valid", "overall"),
    Metric(
        "accuracy_failures_as_wrong",
        "accuracy (invalid/rejected/error as wrong)",
        "#correct / #responses",
        "overall",
    ),
    Metric("coverage", "coverage", "#answered / #valid", "overall", headline=True),
    Metric(
        "selective_risk",
        "selective risk",
        "#(answered wrong) / #answered",
        "overall",
        higher_is_better=False,
        headline=True,
    ),
    Metric(
        "cost_weighted_score",
        "cost-weighted score",
        "mean over valid responses of costs[family][correct | abstain | wrong]",
        "overall",
        headline=True,
    ),
)

#: family rates whose unweighted mean over families is the `macro` block of the metrics
MACRO: tuple[str, ...] = tuple(m.key for m in FAMILY if not m.is_count)


def markdown_table() -> str:
    """The declarations as a Markdown table (docs/grading.md)."""
    lines = ["| level | key | label | formula | better |", "|---|---|---|---|---|"]
    for m in (*FAMILY, *OVERALL):
        better = {True: "higher", False: "lower", None: "(count)"}[m.higher_is_better]
        formula = m.formula.replace("|", "\\|")  # a literal bar inside a Markdown cell
        lines.append(f"| {m.level} | `{m.key}` | {m.label} | {formula} | {better} |")
    return "\n".join(lines)
