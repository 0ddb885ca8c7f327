"""The deterministic Unicode script check used to label out-of-language items.

A label never comes from a language detector: it is the generator's language tag, confirmed
by the share of letters in the script that language is written in.
"""

from __future__ import annotations

import unicodedata

#: the script each supported language tag is written in (the Unicode name prefix of its letters)
LANGUAGE_SCRIPTS: dict[str, str] = {
    "en": "LATIN",
    "es": "LATIN",
    "fr": "LATIN",
    "sw": "LATIN",
    "de": "LATIN",
    "ru": "CYRILLIC",
    "ar": "ARABIC",
    "ur": "ARABIC",
    "hi": "DEVANAGARI",
    "zh": "CJK",
    "km": "KHMER",
}
#: how each script is named for people (Unicode calls Han ideographs "CJK")
SCRIPT_NAMES: dict[str, str] = {"CJK": "Han"}
#: the least share of letters that must be in the tagged language's script
MIN_SCRIPT_SHARE = 0.6


def script_name(script: str) -> str:
    """A script's human name: "Latin", "Cyrillic", "Han", ..."""
    return SCRIPT_NAMES.get(script, script.title())


def script_of(char: str) -> str:
    """The script of one letter, as the first word of its Unicode name (CJK for Han)."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


def script_share(text: str, script: str) -> float:
    """The share of letters (categories L* and M*) in `text` that belong to `script`."""
    letters = [c for c in text if unicodedata.category(c)[0] in "LM"]
    if not letters:
        return 0.0
    return sum(script_of(c) == script for c in letters) / len(letters)


def script_problem(text: str, language: str) -> str | None:
    """Why `text` cannot carry the tag `language` (None when the script check passes)."""
    script = LANGUAGE_SCRIPTS.get(language)
    if script is None:
        return f"no script known for language {language!r}"
    share = script_share(text, script)
    if share < MIN_SCRIPT_SHARE:
        return f"only {share:.0%} of letters are {script_name(script)} for language {language!r}"
    return None
