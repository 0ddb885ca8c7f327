"""Split an answer into claims and attach its citations under a declared scope.

The rule (`CLAIM_RULE`, recorded with every answer): a claim is a sentence. A sentence ends at
`.`, `!` or `?` followed by whitespace or the end of the text, or at a line break; a full stop
after a common abbreviation (e.g., i.e., Dr, etc.), inside a number (0.5, 3.2) or after a list
number at a line's start ("1. ...") does not end one; that bullet marker or list number is
dropped. Citation markers are square
brackets holding passage ids or prompt numbers, separated by commas or semicolons: `[2]`,
`[notes-17]`, `[1, 3]`, `[1][2]`. A marker that opens a sentence belongs to the sentence before
it ("... 14 March. [1] Late ..."). Markers are removed from the claim text; a sentence left
without a word of two letters, or one that ends with "?", is not a claim.

Citation scope (`CitationScope`): `sentence` gives each claim the markers of its own sentence;
`answer` gives every claim every marker in the answer.

A number `n` resolves to the prompt's n-th passage; anything else resolves when it is one of the
prompt's passage ids. Whatever does not resolve stays in `cited_ids` as written and is reported
in `citation_not_found`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from twinbench.rag.answers import CitationScope, Claim

CLAIM_RULE = "sentence/1"

_MARKER = re.compile(r"\[([^\[\]\n]{1,80})\]")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "dr", "mr", "mrs", "ms", "prof", "vs", "cf", "no", "fig")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_WORD = re.compile(r"[^\W\d_]{2}")


@dataclass(frozen=True)
class Split:
    """An answer's claims and the citations that did not resolve."""

    claims: list[Claim]
    citation_not_found: list[str]


def _sentence_ends(text: str) -> list[int]:
    """Offsets just past each sentence end (the last one is len(text))."""
    ends = []
    for i, ch in enumerate(text):
        if ch == "\n":
            ends.append(i + 1)
            continue
        if ch not in ".!?":
            continue
        after = text[i + 1 : i + 2]
        if after and not after.isspace():
            continue  # 0.5, a.b, "x.)"
        line_start = text.rfind("\n", 0, i) + 1
        if ch == "." and text[line_start:i].strip().isdigit():
            continue  # a list number: "1. Assignment 2 is due ..."
        if ch == ".":
            start = i
            while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "."):
                start -= 1
            if text[start:i].lower() in _ABBREVIATIONS:
                continue
        ends.append(i + 1)
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return ends


def sentences(text: str) -> list[str]:
    """The answer's sentences under CLAIM_RULE, markers kept, bullets dropped, stripped."""
    out, start = [], 0
    for end in _sentence_ends(text):
        piece = _BULLET.sub("", text[start:end]).strip()
        if piece:
            out.append(piece)
        start = end
    # a sentence that is only markers, or opens with markers, hands them to the one before
    merged: list[str] = []
    for piece in out:
        lead = re.match(r"^(?:\[[^\[\]\n]{1,80}\]\s*)+", piece)
        if lead and merged:
            merged[-1] = f"{merged[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :].strip()
        if piece:
            merged.append(piece)
    return merged


def markers(text: str) -> list[str]:
    """The citation tokens in `text`, in order, each once (`[1, 3]` gives "1", "3")."""
    seen: list[str] = []
    for group in _MARKER.findall(text):
        for token in re.split(r"[,;]", group):
            token = token.strip()
            if token and token not in seen:
                seen.append(token)
    return seen


def resolve(token: str, passages: Sequence[str]) -> str | None:
    """The passage id a citation token names (a prompt number or an id), else None."""
    if token.isdigit():
        n = int(token)
        return passages[n - 1] if 1 <= n <= len(passages) else None
    return token if token in passages else None


def split_claims(
    answer: str, passages: Sequence[str], scope: CitationScope = CitationScope.SENTENCE
) -> Split:
    """The claims of `answer` with citations resolved against the prompt's `passages`."""
    pieces = sentences(answer)
    everywhere = markers(answer)
    claims: list[Claim] = []
    missing: list[str] = []
    for piece in pieces:
        text = re.sub(r"\s+", " ", _MARKER.sub("", piece)).strip()
        text = re.sub(r"\s+([.,;:!?])", r"\1", text)
        if not _WORD.search(text) or text.endswith("?"):
            continue  # no words, or a question (an echo of the question is not a claim)
        tokens = markers(piece) if scope == CitationScope.SENTENCE else everywhere
        cited: list[str] = []
        for token in tokens:
            found = resolve(token, passages)
            name = found if found is not None else token
            if found is None and name not in missing:
                missing.append(name)
            if name not in cited:
                cited.append(name)
        claims.append(Claim(text=text, cited_ids=cited))
    if scope == CitationScope.ANSWER:
        missing = [t for t in everywhere if resolve(t, passages) is None]
    return Split(claims, missing)
