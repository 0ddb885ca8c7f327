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
SHORT_ABSTAIN_TEXT: dict[ReasonCode, str] = {
    ReasonCode.UNDERSPECIFIED_STATE: "cannot answer: information missing",
    ReasonCode.CONTRADICTORY_OPTIONS: "cannot answer: options or question conflict with the text",
    ReasonCode.OUT_OF_LANGUAGE: "cannot answer: unsupported language",
}
LETTERS = string.ascii_uppercase
#: abstain options always carry the last letters, so they can be explained once, up front
ABSTAIN_LETTERS: dict[ReasonCode, str] = dict(zip(ABSTAIN_TEXT, "XYZ", strict=True))
MAX_ANSWER_OPTIONS = len(LETTERS) - len(ABSTAIN_TEXT)
SYSTEM_PROMPT = (
    "You make typed decisions about a text. Pick exactly one lettered option and answer with "
    "its letter only. Options X, Y and Z are always available: "
    + " ".join(f"{ABSTAIN_LETTERS[code]}. {text}" for code, text in ABSTAIN_TEXT.items())
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
    # letters run out after Z; adapters that letter options reject such requests first
    return [
        Choice(LETTERS[i] if i < len(LETTERS) else "", text, answer=value)
        for i, (text, value) in enumerate(pairs)
    ]


def lettered(question: Question) -> list[Choice]:
    """Answer choices lettered A, B, C, ..., then the abstain choices X, Y, Z."""
    choices = answer_choices(question)
    if isinstance(question, ChoiceQuestion) and question.abstain_option:
        # the item's own explicit abstain option (paired protocol): no reason of its own, so
        # it stands for the code the protocol uses, contradictory_options
        choices.append(
            Choice(
                LETTERS[len(choices)],
                question.abstain_option,
                reason=ReasonCode.CONTRADICTORY_OPTIONS,
            )
        )
    choices += [
        Choice(ABSTAIN_LETTERS[code], SHORT_ABSTAIN_TEXT[code], reason=code)
        for code in ABSTAIN_TEXT
    ]
    return choices


def user_message(state: str, question: Question, choices: list[Choice]) -> str:
    """The user turn: the text, the question and the lettered options."""
    lines = [f"Text: {state}", f"Question: {question.instructions}", "Options:"]
    lines += [f"{c.letter}. {c.text}" for c in choices]
    return "\n".join(lines)
