"""FalseQA (official CSV: question, answer, label) into false-premise pairs.

The official files list each false-premise question (label 1, answer = its rebuttal) next to
its revised true-premise question (label 0, answer = a normal answer). Adjacent rows (1 then
0) form a pair; other rows are skipped. The state is the rebuttal followed by the true-premise
answer; both questions are choice questions over {true-premise answer, another pair's answer}.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.importers._common import hf_rows, pick_distractors
from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

GENERATOR = GeneratorRef(name="falseqa_import", version="1.0.0")


def _rows(path: Path | str) -> list[dict[str, Any]]:
    rows = hf_rows(path, "test")
    if rows is not None:
        return rows
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            if not {"question", "answer", "label"} <= set(reader.fieldnames or ()):
                raise InputError(f"{path}:1: expected FalseQA columns question, answer, label")
            return list(reader)
    except (OSError, csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def import_falseqa(path: Path | str, seed: int) -> list[Pair]:
    """Pair each false-premise question with the true-premise question that follows it."""
    rows = _rows(path)
    adjacent = [
        (a, b)
        for a, b in itertools.pairwise(rows)
        if str(a["label"]).strip() == "1" and str(b["label"]).strip() == "0"
    ]
    answers = [b["answer"].strip() for _, b in adjacent]
    pairs = []
    for n, (false_row, true_row) in enumerate(adjacent):
        key = f"{n:05d}"
        pair_seed = item_seed(seed, GENERATOR.name, key)
        answer = true_row["answer"].strip()
        distractors = pick_distractors(answers, {answer}, 1, pair_seed)
        if not distractors:
            continue
        (options,) = permute_options([answer, *distractors], pair_seed)
        state = f"{false_row['answer'].strip()} {answer}"
        pairs.append(
            make_pair(
                GENERATOR,
                ReasonCode.CONTRADICTORY_OPTIONS,
                key,
                pair_seed,
                item={
                    "state": state,
                    "question": ChoiceQuestion(
                        instructions=false_row["question"].strip(), options=options
                    ),
                },
                twin={
                    "state": state,
                    "question": ChoiceQuestion(
                        instructions=true_row["question"].strip(), options=options
                    ),
                },
                answer=answer,
                provenance={
                    "source_id": key,
                    "rebuttal": false_row["answer"].strip(),
                    "edit": "FalseQA revised true-premise question",
                },
            )
        )
    return pairs
