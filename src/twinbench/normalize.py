"""The published option normalisation used by validation and grading."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WHITESPACE = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def normalize_option(text: str) -> str:
    """Return `text` after NFKC, case folding, punctuation stripping and whitespace collapsing.

    Punctuation is every character whose Unicode category starts with ``P`` (connector, dash,
    open, close, initial, final, other), except where it carries a number's meaning: one
    standing between two digits ("1.9 s" is not "19 s") and a dash used as a minus sign, at
    the start or after a space and before a digit ("-0.5 °C" is not "0.5 °C"). The steps
    run in this order: NFKC, casefold, remove punctuation, collapse runs of whitespace to one
    space, strip both ends.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(
        ch
        for i, ch in enumerate(folded)
        if not unicodedata.category(ch).startswith("P") or _numeric(folded, i)
    )
    return _WHITESPACE.sub(" ", kept).strip()


def _numeric(text: str, i: int) -> bool:
    """Whether the punctuation at `i` is part of a number (decimal mark or minus sign)."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + 1] if i + 1 < len(text) else ""
    if before.isdigit() and after.isdigit():
        return True
    return unicodedata.category(text[i]) == "Pd" and after.isdigit() and before.isspace()
