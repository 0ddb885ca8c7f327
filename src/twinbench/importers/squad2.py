"""SQuAD 2.0 (official JSON, e.g. dev-v2.0.json) into underspecified_state pairs.

Per paragraph, each unanswerable question is paired with an answerable question of the same
paragraph: both become choice items over the paragraph whose options are spans of it (the
answerable question's gold span plus other questions' answers and plausible answers). The
unanswerable question must be abstained on; the answerable twin has its gold span as answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.importers._common import hf_rows, pick_distractors
from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

GENERATOR = GeneratorRef(name="squad2_import", version="1.0.0")


def _paragraphs(path: Path | str) -> list[dict[str, Any]]:
    rows = hf_rows(path, "validation")
    if rows is not None:  # Hugging Face rows: one question per row; regroup by context
        grouped: dict[str, dict[str, Any]] = {}
        for row in rows:
            qas = grouped.setdefault(row["context"], {"context": row["context"], "qas": []})["qas"]
            texts = row["answers"]["text"]
            qas.append(
                {
                    "id": row["id"],
                    "question": row["question"],
                    "is_impossible": not texts,
                    "answers": [{"text": t} for t in texts],
                }
            )
        return list(grouped.values())
    try:
        data = json.loads(Path(path).read_text("utf-8"))
        return [p for article in data["data"] for p in article["paragraphs"]]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a SQuAD 2.0 JSON file ({exc})") from None


def import_squad2(path: Path | str, seed: int) -> list[Pair]:
    """Pair each unanswerable SQuAD 2.0 question with an answerable one of its paragraph."""
    pairs: list[Pair] = []
    for paragraph in _paragraphs(path):
        context = paragraph["context"]
        answerable = [q for q in paragraph["qas"] if not q.get("is_impossible") and q["answers"]]
        impossible = [q for q in paragraph["qas"] if q.get("is_impossible")]
        spans = [
            a["text"]
            for q in paragraph["qas"]
            for a in q.get("answers", []) + q.get("plausible_answers", [])
        ]
        for unanswerable_q, twin_q in zip(impossible, answerable, strict=False):
            gold = twin_q["answers"][0]["text"]
            key = unanswerable_q["id"]
            pair_seed = item_seed(seed, GENERATOR.name, key)
            distractors = pick_distractors(spans, {gold}, 3, pair_seed)
            if not distractors:
                continue
            (options,) = permute_options([gold, *distractors], pair_seed)
            pairs.append(
                make_pair(
                    GENERATOR,
                    ReasonCode.UNDERSPECIFIED_STATE,
                    key,
                    pair_seed,
                    item={
                        "state": context,
                        "question": ChoiceQuestion(
                            instructions=unanswerable_q["question"], options=options
                        ),
                    },
                    twin={
                        "state": context,
                        "question": ChoiceQuestion(
                            instructions=twin_q["question"], options=options
                        ),
                    },
                    answer=gold,
                    provenance={
                        "source_id": key,
                        "twin_source_id": twin_q["id"],
                        "edit": "SQuAD 2.0 unanswerable question over the same paragraph",
                    },
                )
            )
    return pairs
