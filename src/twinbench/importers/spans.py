"""Answer-span types and same-type candidate spans, for distractors drawn from a passage.

The type rule (first match wins), applied to a span's words:

- ``date``: a month name, a century ("10th century"), a decade ("1990s") or a year (a
  whole number from 1000 to 2099 standing alone);
- ``number``: any other span with a digit or a number word ("forty", "two", "million");
- ``name``: every word but lower-case connectors ("of", "the", "de", ...) is capitalised;
- ``other``: everything else.

`passage_spans` finds dates, numbers (also ordinals and decades: "10th", "1990s"),
centuries ("10th and 11th centuries") and capitalised names in a passage. A capitalised word
that starts a sentence counts only as part of a longer name or when the same word is also
capitalised inside a sentence ("In", "The", "Passenger" at a sentence start are not names).
`overlaps` is the rule for two spans naming the same thing: after the published
normalisation, the words of one are all among the words of the other ("1888" / "in 1888",
"Normans" / "normans.", "Anders Orrin" / "the surveyor Anders Orrin").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from twinbench.normalize import normalize_option

MONTHS = frozenset(
    [
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
)
NUMBER_WORDS = frozenset(
    [
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
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "dozen",
        "half",
    ]
)
CONNECTORS = frozenset(
    [
        "of",
        "the",
        "and",
        "de",
        "la",
        "le",
        "du",
        "des",
        "del",
        "da",
        "di",
        "von",
        "van",
        "der",
        "den",
        "y",
        "&",
        "for",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_DECADE = re.compile(r"^\d{2,4}s$")
_ORDINAL = re.compile(r"^\d+(st|nd|rd|th)$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:st|nd|rd|th|s)?(?!\w)")
_CENTURY = re.compile(
    r"\d+(?:st|nd|rd|th)(?:\s+(?:and|or|to)\s+\d+(?:st|nd|rd|th))?\s+centur(?:y|ies)"
)
_SENTENCE_END = re.compile(r"[.!?]\s+$")


@lru_cache(maxsize=65536)
def span_type(text: str) -> str:
    """`date`, `number`, `name` or `other` (the rule in the module docstring)."""
    words = _WORD.findall(text)
    lower = [w.lower() for w in words]
    if any(w in MONTHS for w in lower) or any(_YEAR.match(w) or _DECADE.match(w) for w in lower):
        return "date"
    if any(_ORDINAL.match(w) for w in lower) and any(w in ("century", "centuries") for w in lower):
        return "date"
    if any(ch.isdigit() for ch in text) or any(w in NUMBER_WORDS for w in lower):
        return "number"
    content = [w for w in words if w.lower() not in CONNECTORS]
    if content and all(w[0].isupper() for w in content):
        return "name"
    return "other"


def overlaps(a: str, b: str) -> bool:
    """Whether the normalised words of `a` are all in `b`'s or those of `b` all in `a`'s."""
    wa, wb = set(normalize_option(a).split()), set(normalize_option(b).split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def passage_spans(text: str) -> list[str]:
    """Dates, numbers, number words and capitalised names in `text`, in reading order."""
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _NUMBER.finditer(text)]
    found += [(m.start(), m.group()) for m in _CENTURY.finditer(text)]
    words = list(_WORD.finditer(text))
    found += [(m.start(), m.group()) for m in words if m.group().lower() in NUMBER_WORDS]
    found += [(m.start(), m.group()) for m in words if m.group().lower() in MONTHS]
    inside = {m.group() for m in words if m.group()[0].isupper() and not _starts(text, m.start())}
    run: list[re.Match[str]] = []
    for m in [*words, None]:
        if m is not None and run and not text[run[-1].end() : m.start()].isspace():
            found += _name(text, run, inside)
            run = []
        if m is not None and (m.group()[0].isupper() or (run and m.group() in CONNECTORS)):
            run.append(m)
        else:
            found += _name(text, run, inside)
            run = []
    return [span for _, span in sorted(found)]


def _starts(text: str, at: int) -> bool:
    """Whether position `at` begins a sentence."""
    return at == 0 or _SENTENCE_END.search(text[:at]) is not None


def _name(text: str, run: list[re.Match[str]], inside: set[str]) -> list[tuple[int, str]]:
    """The name in a run of capitalised words (connectors trimmed), if it counts as one."""
    while run and run[-1].group() in CONNECTORS:
        run = run[:-1]
    while run and run[0].group().lower() in CONNECTORS:
        run = run[1:]
    if len(run) == 1 and _starts(text, run[0].start()) and run[0].group() not in inside:
        return []  # one sentence-initial capital proves nothing on its own
    if not run:
        return []
    span = text[run[0].start() : run[-1].end()]
    return [(run[0].start(), span)] if span_type(span) == "name" else []


def shortest_first(spans: Iterable[str]) -> list[str]:
    """`spans` with each group of overlapping spans reduced to its shortest member."""
    kept: list[str] = []
    index: dict[str, list[frozenset[str]]] = {}  # word -> word sets of kept spans with it
    for span in sorted(set(spans), key=lambda s: (len(s), s)):
        words = frozenset(normalize_option(span).split())
        near = {k for w in words for k in index.get(w, [])}
        if words and not any(k <= words or words <= k for k in near):
            kept.append(span)
            for w in words:
                index.setdefault(w, []).append(words)
    return kept


def by_type(spans: Iterable[str]) -> dict[str, list[str]]:
    """`spans` grouped by `span_type`, each group reduced by `shortest_first`."""
    groups: dict[str, list[str]] = {}
    for span in spans:
        groups.setdefault(span_type(span), []).append(span)
    return {kind: shortest_first(group) for kind, group in groups.items()}
