"""ArcticAbstain v1 (CC BY 4.0) into twinbench items and one run per model.

Each question becomes a pair: the answer-present condition is the answerable twin (gold
answer among the options), the answer-absent condition the unanswerable item (family
`contradictory_options`: every shown option is a validated distractor, so the option set
defeats a correct answer; see docs/paired.md). Both show "I abstain from answering" as an
explicit `abstain_option`. Responses come from `responses.csv`: one system per model, trials
numbered from 0; a chosen abstain option is an abstention with the family's code (the protocol
has one abstain option, no reasons); invalid rows (N0) keep their cause as `error`:
`model_format_violation` -> invalid, `provider_safeguard_refusal` -> rejected,
`infrastructure_no_provider_answer` -> error.

The language tag comes from the text, not from the release's `language_script` field (which
marks `aqa-597db15f0e10886f1aa2`, English with one Cyrillic "О" in "δ 18 О", as mixed): an
item is `ru` when more than half of the letters of its question and context are Cyrillic,
else `en` (the release has only these two languages). The release tag is kept in provenance.
Options equal to an earlier option after the published normalisation are dropped (the v1
release has none). Files of the release folder that are not read (excluded-items.json,
prompt.json, results/, ...) are ignored.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from twinbench.generators.scripts import script_share
from twinbench.importers._common import distinct_options
from twinbench.jsonl import InputError
from twinbench.records import (
    ChoiceQuestion,
    Expected,
    GeneratorRef,
    Item,
    ReasonCode,
    Response,
)

GENERATOR = GeneratorRef(name="arcticqa_import", version="1.1.0")
FAMILY = ReasonCode.CONTRADICTORY_OPTIONS
#: the least share of Cyrillic letters (of all letters) for the tag `ru`, exclusive
CYRILLIC_MAJORITY = 0.5
INVALID_STATUS = {
    "model_format_violation": "invalid",
    "provider_safeguard_refusal": "rejected",
    "infrastructure_no_provider_answer": "error",
}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError(f"{path}: no such file (expected the ArcticAbstain v1 folder)")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def language_of(text: str) -> str:
    """`ru` when more than half of the letters of `text` are Cyrillic, else `en`."""
    return "ru" if script_share(text, "CYRILLIC") > CYRILLIC_MAJORITY else "en"


def import_items(folder: Path) -> list[Item]:
    """Two items per question: `ID:present` (answerable) and `ID:absent` (unanswerable)."""
    questions = {row["item_id"]: row for row in _jsonl(folder / "items.jsonl")}
    items: list[Item] = []
    for row in _jsonl(folder / "conditions.jsonl"):
        question = questions[row["item_id"]]
        present = row["condition"] == "answer_present"
        content = distinct_options(o["text"] for o in row["options"] if o["kind"] != "abstain")
        abstain = next(o["text"] for o in row["options"] if o["kind"] == "abstain")
        ids = {True: f"{row['item_id']}:present", False: f"{row['item_id']}:absent"}
        items.append(
            Item(
                id=ids[present],
                pair_id=row["item_id"],
                answerable=present,
                family=FAMILY,
                generator=GENERATOR,
                seed=0,
                language=language_of(f"{question['question']} {question['question_context']}"),
                state=question["question_context"] or "(none)",
                question=ChoiceQuestion(
                    instructions=question["question"], options=content, abstain_option=abstain
                ),
                expected=(
                    Expected(abstain=False, answer=question["gold_answer"])
                    if present
                    else Expected(abstain=True, reason=FAMILY)
                ),
                twin_id=ids[not present],
                provenance={
                    "source_id": row["item_id"],
                    "condition": row["condition"],
                    "doi": question.get("paper", {}).get("doi"),
                    "dropped_distractor": row.get("dropped_distractor"),
                    "language_script": question.get("language_script"),
                },
            )
        )
    return items


def import_responses(folder: Path) -> dict[str, list[Response]]:
    """Responses per model from responses.csv, in file order."""
    path = folder / "responses.csv"
    if not path.is_file():
        raise InputError(f"{path}: no such file (expected the ArcticAbstain v1 folder)")
    runs: dict[str, list[Response]] = defaultdict(list)
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            condition = "present" if row["condition"] == "answer_present" else "absent"
            common: dict[str, Any] = {
                "item_id": f"{row['item_id']}:{condition}",
                "system": row["model"],
                "trial": int(row["trial"]) - 1,
                "permutation": 0,
                "raw": row["raw_response_text"] or None,
            }
            if row["valid"] != "True":
                cause = row["invalid_cause"]
                runs[row["model"]].append(
                    Response(status=INVALID_STATUS.get(cause, "invalid"), error=cause, **common)
                )
            elif row["chosen_kind"] == "abstain":
                runs[row["model"]].append(
                    Response(status="ok", abstain=True, reason=FAMILY, **common)
                )
            else:
                text = row[f"option_{row['chosen_letter']}"]
                runs[row["model"]].append(
                    Response(status="ok", abstain=False, answer=text, **common)
                )
    return dict(runs)
