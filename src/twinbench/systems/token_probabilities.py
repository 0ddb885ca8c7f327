"""Probabilities of one JSON value from a reply's token log-probabilities, or why there are none.

A server returns, per generated token, that token's log-probability and its top-k candidates.
For a JSON value (`"billing"`, `true`, `null`) at a known place in the reply:

* the chosen value's probability is the product of its tokens' probabilities up to the token
  after which no other allowed value fits what was written (the value is *settled*; the
  schema forces the rest), plus each returned candidate, at those positions, that only it can
  continue;
* another value's probability is the probability of the path up to where it diverges times
  the candidate that diverges to it alone;
* a candidate that several allowed values could continue is not followed (the reply does not
  say how it splits). When the chosen value is among them its probability is unknown and
  `NoConfidence` says so; other values among them are left out of the probabilities, as are
  values no returned candidate reaches (the top-k cut them off).

Nothing is renormalised: mass the server put on tokens outside the allowed values, or left out
of its top-k, stays unassigned, so the listed probabilities may sum to less than 1 and are never
raised by what the reply did not say. Text is compared as UTF-8 bytes (the `bytes` of each
token where the server sends them), so a token that splits a character still lines up.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

WHITESPACE = b" \t\n\r"


class NoConfidence(ValueError):
    """Why a reply's log-probabilities give no confidence (recorded on the response)."""


@dataclass(frozen=True)
class Token:
    """One generated token: its byte span in the reply, log-probability and top candidates."""

    start: int
    end: int
    logprob: float
    top: tuple[tuple[bytes, float], ...]


def json_bytes(value: Any) -> bytes:
    """A value as the reply writes it: compact JSON, non-ASCII characters unescaped, UTF-8."""
    return json.dumps(value, ensure_ascii=False).encode()


def _text(entry: dict[str, Any]) -> bytes | None:
    """A token's bytes: its `bytes` list where given, else its `token` string."""
    raw = entry.get("bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    token = entry.get("token")
    return token.encode() if isinstance(token, str) else None


def _logprob(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if value <= 0 else None


def read_tokens(content: bytes, entries: Any) -> list[Token]:
    """The reply's tokens with their byte spans; NoConfidence unless they spell `content`."""
    if not isinstance(entries, list) or not entries:
        raise NoConfidence("the reply carries no token log-probabilities")
    out, at = [], 0
    for n, entry in enumerate(entries):
        text = _text(entry) if isinstance(entry, dict) else None
        logprob = _logprob(entry.get("logprob")) if isinstance(entry, dict) else None
        if text is None or logprob is None:
            raise NoConfidence(f"token {n} has no text or no log-probability (a number <= 0)")
        top = []
        for candidate in entry.get("top_logprobs") or []:
            if isinstance(candidate, dict):
                cand_text, cand_lp = _text(candidate), _logprob(candidate.get("logprob"))
                if cand_text is not None and cand_lp is not None:
                    top.append((cand_text, cand_lp))
        out.append(Token(at, at + len(text), logprob, tuple(top)))
        at += len(text)
    if b"".join(content[t.start : t.end] for t in out) != content or at != len(content):
        raise NoConfidence("the tokens do not spell the reply's content")
    return out


def value_start(content: bytes, key: str) -> int:
    """Where the value of top-level `key` begins in the reply (NoConfidence if it is absent)."""
    found = re.search(rb'[{,]\s*"' + re.escape(key.encode()) + rb'"\s*:\s*', content)
    if found is None:
        raise NoConfidence(f"the reply has no {key!r} key the tokens can be matched to")
    return found.end()


def _fits(value: bytes, written: bytes) -> bool:
    """Whether `written` (bytes from the value's start) can be the start of `value`, or is
    `value` followed by what comes after it."""
    return value.startswith(written) or written.startswith(value)


def _past(candidate: bytes, lead: bytes) -> bytes | None:
    """A first-token candidate's bytes past the structure `lead` that precedes the value
    (whitespace ignored); None when it writes other structure."""
    core, text = lead.strip(WHITESPACE), candidate.lstrip(WHITESPACE)
    if not text.startswith(core):
        return None
    return text[len(core) :].lstrip(WHITESPACE)


def shared_prefix(values: list[bytes]) -> bytes:
    """The bytes every value begins with (`"` when all are strings)."""
    first, last = min(values), max(values)  # what they share, the first and last share
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def value_probabilities(
    content: bytes, tokens: list[Token], start: int, values: list[bytes], chosen: bytes
) -> tuple[float, dict[bytes, float]]:
    """(P(chosen), {value: P} for every value the returned candidates settle, chosen included)
    for the JSON value that begins at byte `start`, one of `values` (JSON texts)."""
    if not content.startswith(chosen, start):
        raise NoConfidence(f"the reply writes {chosen.decode(errors='replace')} differently")
    first = next((i for i, t in enumerate(tokens) if t.start <= start < t.end), None)
    if first is None:
        raise NoConfidence("no token covers the value")
    shared = shared_prefix(values)
    alive, log_path = set(values), 0.0
    known: dict[bytes, float] = {}
    unsplit: set[bytes] = set()
    for token in tokens[first:]:
        done = content[start : max(token.start, start)]  # the value's bytes before this token
        if shared.startswith(content[start : token.end]):
            continue  # it writes only bytes every value shares: structure, not the decision
        own = content[token.start : token.end]
        for candidate, logprob in token.top:
            rest = (
                candidate
                if token.start >= start
                else _past(candidate, content[token.start : start])
            )
            if candidate == own or rest is None or shared.startswith(done + rest):
                continue
            fits = [v for v in alive if _fits(v, done + rest)]
            if len(fits) == 1:
                known[fits[0]] = known.get(fits[0], 0.0) + math.exp(log_path + logprob)
            elif fits:
                unsplit.update(fits)
        log_path += token.logprob
        alive = {v for v in alive if _fits(v, content[start : token.end])}
        if alive == {chosen}:
            known[chosen] = known.get(chosen, 0.0) + math.exp(log_path)
            break
    else:
        raise NoConfidence("the tokens end before the value is settled")
    if chosen in unsplit:
        others = len(unsplit) - 1
        raise NoConfidence(
            f"a returned candidate token leads to {chosen.decode(errors='replace')} and "
            f"{others} other allowed value(s); the reply does not say how it splits"
        )
    return known[chosen], {v: p for v, p in known.items() if v not in unsplit}
