"""The metric declarations are the ones computed, and docs/grading.md shows them."""

from __future__ import annotations

from pathlib import Path

from twinbench.documents import FamilyMetrics, OverallMetrics
from twinbench.metrics import registry
from twinbench.metrics.summary import MACRO_KEYS
from twinbench.render import FAMILY_HEADERS, HEADLINE

DOC = Path(__file__).resolve().parents[2] / "docs" / "grading.md"


def test_every_declared_metric_is_a_computed_field() -> None:
    assert {m.key for m in registry.FAMILY} <= set(FamilyMetrics.model_fields)
    assert {m.key for m in registry.OVERALL} <= set(OverallMetrics.model_fields)
    # the pair leads (issue 22): the ideal-pair rate and the pair score come first everywhere
    assert MACRO_KEYS == (
        "ideal_pair_rate",
        "pair_score",
        "recall",
        "precision",
        "twin_accuracy",
        "accuracy",
    )
    assert FAMILY_HEADERS[:4] == ["items", "twins", "ideal pairs", "pair score"]
    assert [m.key for m in HEADLINE] == [
        "ideal_pair_rate",
        "pair_score",
        "abstention_precision",
        "abstention_recall",
        "twin_accuracy",
        "coverage",
        "selective_risk",
        "cost_weighted_score",
    ]
    assert [m.key for m in registry.OVERALL if m.higher_is_better is False] == ["selective_risk"]


def test_the_grading_page_shows_the_current_declarations() -> None:
    text = DOC.read_text("utf-8")
    begin, end = "<!-- metrics-table:begin -->\n", "\n<!-- metrics-table:end -->"
    shown = text[text.index(begin) + len(begin) : text.index(end)]
    assert shown == registry.markdown_table()
