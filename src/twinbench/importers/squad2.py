"""SQuAD 2.0 (official JSON, e.g. dev-v2.0.json) into underspecified_state pairs.

Each unanswerable question (`is_impossible`) is paired with an answerable question about the
same paragraph, never across paragraphs. In file order, each unanswerable question takes the
paragraph's not-yet-used answerable question whose gold answer has the type of the
unanswerable question's first plausible answer (see `spans.span_type`), then the one sharing
most content words with it, then the earlier one; an unanswerable question left without a
partner is dropped, as are blank questions and paragraphs with a blank context. Both
questions are choice items over the paragraph and share options:

1. the twin's gold answer (its first answer);
2. the unanswerable question's own SQuAD 2.0 `plausible_answers` (the first that names
   something other than the twin's answers);
3. distractors of the gold answer's type, up to four options in all, drawn with the pair's
   seed from tier to tier: answers and plausible answers of the paragraph's questions, then
   dates, numbers and names found in the paragraph itself, then answers and plausible
   answers anywhere in the same article (each tier reduced to the shortest of overlapping
   spans first: "1888" rather than "in 1888").

A candidate is never one of the twin's answers or overlapping with one (`spans.overlaps`:
"in 1888" for "1888"), never overlapping an option already chosen, and never a phrase of
either question; so no two options are equal after the published normalisation. The paragraph
does not answer the unanswerable question, so every option is unsupported for the item.
Rows loaded with `hf:` (rajpurkar/squad_v2) carry no plausible answers; step 2 is skipped.
A file that is not UTF-8 JSON is refused naming the line; one missing a field the importer
reads, or with a field of the wrong type, naming the record (`data[0].paragraphs[1]`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.importers._common import (
    distinct_options,
    hf_rows,
    hf_where,
    required,
    type_name,
)
from twinbench.importers.spans import by_type, overlaps, passage_spans, span_type
from twinbench.jsonl import InputError, read_text
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

GENERATOR = GeneratorRef(name="squad2_import", version="2.0.0")
OPTIONS = 4
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "and",
        "or",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "did",
        "does",
        "do",
        "what",
        "when",
        "who",
        "whom",
        "whose",
        "which",
        "where",
        "how",
        "why",
        "that",
        "this",
        "it",
        "its",
        "as",
    ]
)


def _articles(path: Path | str) -> list[dict[str, Any]]:
    rows = hf_rows(path, "validation")
    if rows is not None:  # one question per row: regroup by title, then by context
        articles: dict[str, dict[str, dict[str, Any]]] = {}
        for row in rows:
            where = hf_where(path, row)
            context = required(row, "context", str, where)
            paragraphs = articles.setdefault(str(row.get("title", "")), {})
            paragraph = paragraphs.setdefault(context, {"context": context, "qas": []})
            texts = required(required(row, "answers", dict, where), "text", list, where)
            paragraph["qas"].append(
                {
                    "id": required(row, "id", str, where),
                    "question": required(row, "question", str, where),
                    "answers": [{"text": t} for t in texts],
                    "is_impossible": not texts,
                }
            )
        return [{"title": t, "paragraphs": list(p.values())} for t, p in articles.items()]
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    try:
        return _official(data)
    except InputError as exc:
        raise InputError(f"{path}: not a SQuAD 2.0 JSON file ({exc})") from None


def _official(data: Any) -> list[dict[str, Any]]:
    """The articles of an official file, every field the importer reads checked for its type;
    problems name the record by its path (`data[0].paragraphs[1].qas[2]`)."""
    if not isinstance(data, dict):
        raise InputError(f"expected an object with a 'data' list, got {type_name(data)}")
    articles: list[Any] = required(data, "data", list, "top level")
    for a, article in enumerate(articles):
        where = f"data[{a}]"
        paragraphs = required(_object(article, where), "paragraphs", list, where)
        for p, paragraph in enumerate(paragraphs):
            where = f"data[{a}].paragraphs[{p}]"
            required(_object(paragraph, where), "context", str, where)
            for q, qa in enumerate(required(paragraph, "qas", list, where)):
                _check_qa(_object(qa, f"{where}.qas[{q}]"), f"{where}.qas[{q}]")
    return articles


def _check_qa(qa: dict[str, Any], where: str) -> None:
    required(qa, "id", str, where)
    required(qa, "question", str, where)
    if "is_impossible" in qa:
        required(qa, "is_impossible", bool, where)
    for key in ("answers", "plausible_answers"):
        if key in qa:
            for n, answer in enumerate(required(qa, key, list, where)):
                required(_object(answer, f"{where}.{key}[{n}]"), "text", str, f"{where}.{key}[{n}]")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected an object, got {type_name(value)}")
    return value


def _texts(qa: dict[str, Any], key: str) -> list[str]:
    return [str(a["text"]).strip() for a in qa.get(key) or [] if str(a["text"]).strip()]


def _answerable(qa: dict[str, Any]) -> bool:
    return not qa.get("is_impossible") and bool(_texts(qa, "answers"))


def _content_words(question: str) -> set[str]:
    return set(normalize_option(question).split()) - _STOPWORDS


def _partner(unanswerable: dict[str, Any], free: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The answerable question to pair with (type match, shared words, file order)."""
    plausible = _texts(unanswerable, "plausible_answers")
    wanted = span_type(plausible[0]) if plausible else None
    words = _content_words(unanswerable["question"])

    def score(n_qa: tuple[int, dict[str, Any]]) -> tuple[bool, int, int]:
        n, qa = n_qa
        same = wanted is not None and span_type(_texts(qa, "answers")[0]) == wanted
        return (same, len(words & _content_words(qa["question"])), -n)

    return max(enumerate(free), key=score)[1] if free else None


def _qa_spans(paragraphs: list[dict[str, Any]]) -> list[str]:
    return [
        t
        for p in paragraphs
        for qa in p["qas"]
        for t in _texts(qa, "answers") + _texts(qa, "plausible_answers")
    ]


def _options(
    twin: dict[str, Any],
    unanswerable: dict[str, Any],
    tiers: list[dict[str, list[str]]],
    seed: int,
) -> list[str]:
    """Gold, the plausible answer, then same-type distractors tier by tier (module docstring)."""
    gold, *variants = _texts(twin, "answers")
    taken = [gold, *variants]
    options = [gold]
    for plausible in _texts(unanswerable, "plausible_answers"):
        if not any(overlaps(plausible, t) for t in taken):
            options.append(plausible)
            taken.append(plausible)
            break
    questions = " ".join(normalize_option(q["question"]) for q in (twin, unanswerable))
    kind = span_type(gold)
    rng = np.random.default_rng(seed)
    for tier in tiers:
        candidates = tier.get(kind, [])
        for i in rng.permutation(len(candidates)):
            if len(options) >= OPTIONS:
                break
            candidate = candidates[i]
            named = rf"(?<!\w){re.escape(normalize_option(candidate))}(?!\w)"
            if not any(overlaps(candidate, t) for t in taken) and not re.search(named, questions):
                options.append(candidate)
                taken.append(candidate)
    return distinct_options(options)


def import_squad2(path: Path | str, seed: int) -> list[Pair]:
    """Pair each unanswerable SQuAD 2.0 question with an answerable one of its paragraph."""
    pairs: list[Pair] = []
    for article in _articles(path):
        in_article = by_type(_qa_spans(article["paragraphs"]))
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            if not context.strip():
                continue
            asked = [q for q in paragraph["qas"] if q["question"].strip()]
            free = [q for q in asked if _answerable(q)]
            tiers = [by_type(_qa_spans([paragraph])), by_type(passage_spans(context)), in_article]
            for unanswerable_q in (q for q in asked if q.get("is_impossible")):
                twin_q = _partner(unanswerable_q, free)
                if twin_q is None:
                    break
                key = str(unanswerable_q["id"])
                pair_seed = item_seed(seed, GENERATOR.name, key)
                options = _options(twin_q, unanswerable_q, tiers, pair_seed)
                if len(options) < 2:
                    continue
                free.remove(twin_q)
                gold = options[0]
                (options,) = permute_options(options, pair_seed)
                pairs.append(
                    make_pair(
                        GENERATOR,
                        ReasonCode.UNDERSPECIFIED_STATE,
                        key,
                        pair_seed,
                        item={
                            "state": context,
                            "question": ChoiceQuestion(
                                instructions=unanswerable_q["question"].strip(), options=options
                            ),
                        },
                        twin={
                            "state": context,
                            "question": ChoiceQuestion(
                                instructions=twin_q["question"].strip(), options=options
                            ),
                        },
                        answer=gold,
                        provenance={
                            "source_id": key,
                            "twin_source_id": twin_q["id"],
                            "title": article.get("title"),
                            "plausible_answers": _texts(unanswerable_q, "plausible_answers"),
                            "edit": "SQuAD 2.0 unanswerable question over the same paragraph",
                        },
                    )
                )
    return pairs
