"""Phrases an edit must not introduce into an item's state."""

from __future__ import annotations

from twinbench.corpus import Scenario
from twinbench.generators.base import revealing_phrases
from twinbench.records import ChoiceQuestion, ScoreQuestion


def blocked_phrases(scenario: Scenario) -> list[str]:
    """The answer and aliases, plus every option (choice) or legend label (score)."""
    phrases = revealing_phrases(scenario)
    if isinstance(scenario.question, ChoiceQuestion):
        phrases += scenario.question.options
    elif isinstance(scenario.question, ScoreQuestion):
        phrases += list(scenario.question.legend)
    return phrases
