"""Abstention precision and recall, per family and code-agnostic, and twin accuracy."""

from __future__ import annotations

from twinbench.metrics._util import BoolArray, ratio


def abstention_recall(correct_abstain: BoolArray, unanswerable: BoolArray) -> float | None:
    """recall = #(unanswerable rows abstained on correctly) / #(unanswerable rows).

    For family f pass the rows of f's unanswerable items with "correct" meaning "abstained
    with code f"; for the code-agnostic recall pass "abstained with any code".
    """
    return ratio((correct_abstain & unanswerable).sum(), unanswerable.sum())


def abstention_precision(correct_abstain: BoolArray, claimed: BoolArray) -> float | None:
    """precision = #(correct abstentions) / #(rows whose abstention claims this code).

    For family f, `claimed` marks every valid row (item or twin, any family) abstaining with
    code f; for the code-agnostic precision it marks every abstention.
    """
    return ratio((correct_abstain & claimed).sum(), claimed.sum())


def twin_accuracy(correct_answer: BoolArray, answerable: BoolArray) -> float | None:
    """twin accuracy = #(answerable rows answered correctly) / #(answerable rows)."""
    return ratio((correct_answer & answerable).sum(), answerable.sum())
