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
    open, close, initial, final, other). The steps run in this order: NFKC, casefold, remove
    punctuation, collapse runs of whitespace to one space, strip both ends.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if not unicodedata.category(ch).startswith("P"))
    return _WHITESPACE.sub(" ", kept).strip()
