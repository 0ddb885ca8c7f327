"""The published normalisation, key values, and when a text states a statement.

**Normalisation** (`normalise`): NFKC, case folding, thousands separators dropped ("1,022" is
1022), "percent" written "%", number words zero to twenty written as digits, ordinals
("14th") as numbers, and a day next to a month name ("14 March", "March 14", "14th of March")
written "14 march"; then punctuation other than a number's own (0.5, 10:00, 0x3, 20%) is
removed and whitespace collapsed.

**Key values** (`key_values`): the numbers, dates, times, percentages and identifiers that carry
digits ("L1", "B12", "0xA7F") of a normalised text. They are matched exactly: 18 September is
not 19 September, 0.01 is not 0.001.

**A statement is stated by a text** (`states`) when every key value of the statement is among
the text's, at least half of the statement's content words (stop words removed, a trailing
plural "s" dropped), and at least two of them (all of them when it has fewer), are among the
text's, and both or neither are negated ("not", "no",
"never", "cannot", "n't", "without", "none", "nor"). Required facts are checked against the
answer's claims (one claim, or two adjacent ones read together); forbidden claims against
each claim, and a claim that states a required fact does not
also count as making a forbidden claim ("32, not 64" is not a claim that 64 is required).
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

STATED_SHARE = 0.5

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_ALT = "|".join([*(m[:3] + "(?:" + m[3:] + ")?" for m in _MONTHS), "sept"])
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "as",
        "which",
        "who",
        "what",
        "when",
        "where",
        "how",
        "do",
        "does",
        "did",
        "can",
        "may",
        "must",
        "should",
        "will",
        "would",
        "has",
        "have",
        "had",
        "there",
        "their",
        "they",
        "them",
        "you",
        "your",
        "i",
        "we",
        "our",
        "so",
        "if",
        "then",
        "than",
        "into",
        "per",
        "each",
        "any",
        "all",
        "also",
        "such",
        "about",
        "over",
        "under",
        "up",
        "out",
        "only",
    ]
)
#: words that frame a claim rather than carry it ("the answer is: 18 September")
_NEGATION = frozenset(["not", "no", "never", "cannot", "without", "none", "nor"])


def _month(name: str) -> str:
    name = name.lower()
    return next(m for m in _MONTHS if name.startswith(name[:3]) and m.startswith(name[:3]))


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """`text` under the published normalisation (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\s*(?:per ?cent|percent)\b", "%", text)
    text = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", text)
    text = re.sub(
        r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", lambda m: _NUMBER_WORDS[m.group(1)], text
    )
    day_month = re.compile(r"\b(\d{1,2})(?: of)? (" + _MONTH_ALT + r")\b")
    month_day = re.compile(r"\b(" + _MONTH_ALT + r") (\d{1,2})\b(?!:)")
    text = day_month.sub(lambda m: f"{int(m.group(1))}_{_month(m.group(2))}", text)
    text = month_day.sub(lambda m: f"{int(m.group(2))}_{_month(m.group(1))}", text)
    text = text.replace("n't", " not")
    kept = []
    for i, ch in enumerate(text):
        if ch == "_" or not unicodedata.category(ch).startswith("P"):
            kept.append(ch)
            continue
        before = text[i - 1] if i else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        inside = ch in ".:" and before.isdigit() and after.isdigit()
        kept.append(ch if inside or (ch == "%" and before.isdigit()) else " ")
    return re.sub(r"\s+", " ", "".join(kept)).strip().replace("_", " ")


def _tokens(normal: str) -> list[str]:
    # a date stays one token: "14 march"
    return re.findall(r"\d{1,2} (?:" + "|".join(_MONTHS) + r")\b|\S+", normal)


@lru_cache(maxsize=65536)
def key_values(text: str) -> frozenset[str]:
    """The exact-match values of `text`: numbers, dates, times, %, identifiers with digits."""
    return frozenset(t for t in _tokens(normalise(text)) if any(c.isdigit() for c in t))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry content (stop words, negations and values removed)."""
    return frozenset(
        _stem(t)
        for t in _tokens(normalise(text))
        if t not in _STOP
        and t not in _NEGATION
        and any(c.isalpha() for c in t)
        and not any(c.isdigit() for c in t)
    )


@lru_cache(maxsize=65536)
def negated(text: str) -> bool:
    """Whether `text` holds a negation word (after normalisation: "n't" is "not")."""
    return any(t in _NEGATION for t in normalise(text).split())


def coverage(statement: str, text: str, ignore: frozenset[str] = frozenset()) -> float:
    """The share of `statement`'s content words (less `ignore`) that `text` holds (1.0 when it
    has none)."""
    words = content_words(statement) - ignore
    return len(words & content_words(text)) / len(words) if words else 1.0


def states(statement: str, text: str, share: float = STATED_SHARE) -> bool:
    """Whether `text` states `statement` under the published rule (module docstring)."""
    words = content_words(statement)
    needed = min(len(words), max(2, math.ceil(share * len(words))))
    return (
        key_values(statement) <= key_values(text)
        and len(words & content_words(text)) >= needed
        and negated(statement) == negated(text)
    )
