"""How an item is shown to a text model: state, question, lettered options, abstain options.

The abstain options are listed after the answer options, one per reason code, so a model can
abstain and say why in the same single-letter decision. An item's own explicit abstain option
(the paired protocol's "I abstain from answering") is lettered right after the answers; choosing
it, in this or any other format, is an abstention with `EXPLICIT_ABSTAIN_REASON`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

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
#: what the abstain letters mean, said once in the system prompt
ABSTAIN_LETTERS_NOTE = "Options X, Y and Z are always available: " + " ".join(
    f"{ABSTAIN_LETTERS[code]}. {text}" for code, text in ABSTAIN_TEXT.items()
)
SYSTEM_PROMPT = (
    "You make typed decisions about a text. Pick exactly one lettered option and answer with "
    "its letter only. " + ABSTAIN_LETTERS_NOTE
)
#: the code choosing an item's explicit abstain option records: it has no reason of its own,
#: and the protocol that shows it (answer removal) is the one `contradictory_options` names
EXPLICIT_ABSTAIN_REASON = ReasonCode.CONTRADICTORY_OPTIONS
#: the name of the explicit abstain option in `probabilities` (abstain letters: `abstain:CODE`)
EXPLICIT_ABSTAIN_KEY = "abstain:option"


@dataclass(frozen=True)
class Choice:
    """One lettered line: the answer it stands for, or the reason code of an abstention."""

    letter: str
    text: str
    answer: str | float | bool | None = None
    reason: ReasonCode | None = None
    #: the item's own explicit abstain option (not one of the X/Y/Z letters)
    explicit: bool = False

    @property
    def key(self) -> str:
        """Its name in `probabilities`: the answer text, `abstain:CODE` or `abstain:option`."""
        if self.explicit:
            return EXPLICIT_ABSTAIN_KEY
        return self.text if self.reason is None else f"abstain:{self.reason.value}"


def explicit_abstain(question: Question) -> str | None:
    """The item's explicit abstain option (a choice question's `abstain_option`), if any."""
    if isinstance(question, ChoiceQuestion) and question.abstain_option:
        return question.abstain_option
    return None


def fits_letters(question: Question) -> bool:
    """Whether the answers and the explicit abstain option fit in the letters before X, Y, Z."""
    shown = len(answer_choices(question)) + (1 if explicit_abstain(question) else 0)
    return shown <= MAX_ANSWER_OPTIONS


def too_many_letters(question: Question) -> str:
    """The error of a request whose choices do not fit the letters (`fits_letters`)."""
    if explicit_abstain(question):
        return f"more than {MAX_ANSWER_OPTIONS - 1} options besides the abstain option"
    return f"more than {MAX_ANSWER_OPTIONS} options"


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


def criteria_choices(question: Question) -> list[Choice]:
    """The answer choices, then the item's explicit abstain option: what a list of answer
    strings carries (the `json` format's answers, Laya's, Jev's and typed-decisions' criteria)."""
    choices = answer_choices(question)
    option = explicit_abstain(question)
    if option is not None and option not in {c.text for c in choices}:
        choices.append(Choice("", option, reason=EXPLICIT_ABSTAIN_REASON, explicit=True))
    return choices


def lettered(question: Question) -> list[Choice]:
    """Answer choices lettered A, B, C, ..., then the abstain choices X, Y, Z."""
    choices = answer_choices(question)
    option = explicit_abstain(question)
    if option is not None:
        letter = LETTERS[len(choices)] if len(choices) < len(LETTERS) else ""
        choices.append(Choice(letter, option, reason=EXPLICIT_ABSTAIN_REASON, explicit=True))
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


def choice_fields(question: Question, choice: Choice) -> dict[str, Any]:
    """The Response fields of picking `choice`: an abstention with its code, or its answer
    (P(yes) 1.0 or 0.0 for a yes/no question)."""
    if choice.reason is not None:
        return {"abstain": True, "reason": choice.reason}
    answer = choice.answer
    if isinstance(question, NoulQuestion):
        answer = 1.0 if answer else 0.0
    return {"abstain": False, "answer": answer}
