"""How an item is shown to a text model: state, question, lettered options, abstain options.

The abstain options are listed after the answer options, one per reason code, so a model can
abstain and say why in the same single-letter decision.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from twinbench.records import ChoiceQuestion, NoulQuestion, Question, ReasonCode

ABSTAIN_TEXT: dict[ReasonCode, str] = {
    ReasonCode.UNDERSPECIFIED_STATE: (
        "Cannot answer: the text does not give the information needed."
    ),
    ReasonCode.CONTRADICTORY_OPTIONS: (
        "Cannot answer: the options or the question conflict with the text."
    ),
    ReasonCode.OUT_OF_LANGUAGE: "Cannot answer: the text is in a language I do not support.",
}
LETTERS = string.ascii_uppercase
MAX_ANSWER_OPTIONS = len(LETTERS) - len(ABSTAIN_TEXT)
SYSTEM_PROMPT = (
    "You make typed decisions about a text. Pick exactly one lettered option. If no option can "
    "be chosen from the text, pick the option that says why you cannot answer."
)


@dataclass(frozen=True)
class Choice:
    """One lettered line: the answer it stands for, or the reason code of an abstention."""

    letter: str
    text: str
    answer: str | float | bool | None = None
    reason: ReasonCode | None = None


def answer_choices(question: Question) -> list[Choice]:
    """The non-abstain choices: options (choice), legend labels (score), yes/no (noul)."""
    if isinstance(question, ChoiceQuestion):
        pairs: list[tuple[str, str | float | bool]] = [(o, o) for o in question.options]
    elif isinstance(question, NoulQuestion):
        pairs = [("yes", True), ("no", False)]
    else:
        pairs = [(label, value) for label, value in question.legend.items()]
    return [Choice(LETTERS[i], text, answer=value) for i, (text, value) in enumerate(pairs)]


def lettered(question: Question) -> list[Choice]:
    """Answer choices, then one abstain choice per reason code, lettered A, B, C, ..."""
    choices = answer_choices(question)
    start = len(choices)
    choices += [
        Choice(LETTERS[start + i], text, reason=code)
        for i, (code, text) in enumerate(ABSTAIN_TEXT.items())
    ]
    return choices


def user_message(state: str, question: Question, choices: list[Choice]) -> str:
    """The user turn: the text, the question and the lettered options."""
    lines = [f"Text: {state}", "", f"Question: {question.instructions}", "", "Options:"]
    lines += [f"{c.letter}. {c.text}" for c in choices]
    lines += ["", "Answer with the letter of one option."]
    return "\n".join(lines)
