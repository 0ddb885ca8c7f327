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
release has none); an empty context is shown as "(none)". The release is all or nothing (each
response names its item), so a row with a missing or mistyped field, a blank question or
gold answer, fewer than two distinct options or no abstain option is refused, naming its
line (responses.csv: its CSV row, the header being row 1). Files of the release folder that
are not read (excluded-items.json, prompt.json, results/, ...) are ignored.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from twinbench.generators.scripts import script_share
from twinbench.importers._common import csv_rows, distinct_options, required, type_name
from twinbench.jsonl import InputError, describe_validation_error, iter_json_lines
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
CONDITIONS = ("answer_present", "answer_absent")
RESPONSE_COLUMNS = (
    "item_id", "model", "condition", "trial", "raw_response_text", "valid", "invalid_cause",
    "chosen_kind", "chosen_letter",
)  # fmt: skip
INVALID_STATUS = {
    "model_format_violation": "invalid",
    "provider_safeguard_refusal": "rejected",
    "infrastructure_no_provider_answer": "error",
}


def _jsonl(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(`FILE:LINE`, row) of a JSON Lines file of the release."""
    if not path.is_file():
        raise InputError(f"{path}: no such file (expected the ArcticAbstain v1 folder)")
    return [(f"{path}:{n}", row) for n, row in iter_json_lines(path)]


def _text(row: dict[str, Any], key: str, where: str) -> str:
    """`row[key]`, a string that is not blank."""
    value: str = required(row, key, str, where)
    if not value.strip():
        raise InputError(f"{where}: {key!r} is blank")
    return value


def _condition(value: str, where: str) -> bool:
    """Whether a `condition` names the answer-present condition."""
    if value not in CONDITIONS:
        raise InputError(f"{where}: condition must be {' or '.join(CONDITIONS)}, got {value!r}")
    return value == CONDITIONS[0]


def language_of(text: str) -> str:
    """`ru` when more than half of the letters of `text` are Cyrillic, else `en`."""
    return "ru" if script_share(text, "CYRILLIC") > CYRILLIC_MAJORITY else "en"


def _questions(folder: Path) -> dict[str, dict[str, Any]]:
    """item_id -> row of items.jsonl, each field the importer reads checked."""
    questions = {}
    for where, row in _jsonl(folder / "items.jsonl"):
        _text(row, "question", where)
        _text(row, "gold_answer", where)
        if row.get("question_context") is not None:
            required(row, "question_context", str, where)
        if row.get("paper") is not None:
            required(row, "paper", dict, where)
        questions[_text(row, "item_id", where)] = row
    return questions


def _options(row: dict[str, Any], where: str) -> tuple[list[str], str]:
    """The distinct content options and the abstain option of a conditions row."""
    options = required(row, "options", list, where)
    for n, option in enumerate(options):
        at = f"{where}: options[{n}]"
        if not isinstance(option, dict):
            raise InputError(f"{at}: expected an object, got {type_name(option)}")
        required(option, "kind", str, at)
        required(option, "text", str, at)
    content = distinct_options(o["text"] for o in options if o["kind"] != "abstain")
    if len(content) < 2:
        raise InputError(f"{where}: fewer than 2 distinct non-blank options")
    abstain = [o["text"] for o in options if o["kind"] == "abstain"]
    if len(abstain) != 1 or not abstain[0].strip():
        raise InputError(f"{where}: expected one non-blank option of kind 'abstain'")
    return content, abstain[0]


def import_items(folder: Path) -> list[Item]:
    """Two items per question: `ID:present` (answerable) and `ID:absent` (unanswerable)."""
    questions = _questions(folder)
    items: list[Item] = []
    for where, row in _jsonl(folder / "conditions.jsonl"):
        item_id = required(row, "item_id", str, where)
        if item_id not in questions:
            raise InputError(f"{where}: item_id {item_id!r} is not in items.jsonl")
        question = questions[item_id]
        present = _condition(required(row, "condition", str, where), where)
        content, abstain = _options(row, where)
        ids = {True: f"{item_id}:present", False: f"{item_id}:absent"}
        context = question.get("question_context") or ""
        try:
            items.append(
                Item(
                    id=ids[present],
                    pair_id=item_id,
                    answerable=present,
                    family=FAMILY,
                    generator=GENERATOR,
                    seed=0,
                    language=language_of(f"{question['question']} {context}"),
                    state=context if context.strip() else "(none)",
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
                        "source_id": item_id,
                        "condition": row["condition"],
                        "doi": (question.get("paper") or {}).get("doi"),
                        "dropped_distractor": row.get("dropped_distractor"),
                        "language_script": question.get("language_script"),
                    },
                )
            )
        except ValidationError as exc:
            raise InputError(f"{where}: {describe_validation_error(exc)}") from None
    return items


def import_responses(folder: Path) -> dict[str, list[Response]]:
    """Responses per model from responses.csv, in file order."""
    path = folder / "responses.csv"
    if not path.is_file():
        raise InputError(f"{path}: no such file (expected the ArcticAbstain v1 folder)")
    runs: dict[str, list[Response]] = defaultdict(list)
    for number, row in csv_rows(path, RESPONSE_COLUMNS, "ArcticAbstain responses"):
        where = f"{path}:{number}"
        try:
            runs[row["model"]].append(_response(row, where))
        except ValidationError as exc:
            raise InputError(f"{where}: {describe_validation_error(exc)}") from None
    return dict(runs)


def _response(row: dict[str, str], where: str) -> Response:
    """The Response of one row of responses.csv."""
    condition = "present" if _condition(row["condition"], where) else "absent"
    trial = row["trial"].strip()
    if not trial.isdecimal() or int(trial) < 1:
        raise InputError(f"{where}: trial must be a whole number from 1, got {row['trial']!r}")
    common: dict[str, Any] = {
        "item_id": f"{row['item_id']}:{condition}",
        "system": row["model"],
        "trial": int(trial) - 1,
        "permutation": 0,
        "raw": row["raw_response_text"] or None,
    }
    if row["valid"] not in ("True", "False"):
        raise InputError(f"{where}: valid must be True or False, got {row['valid']!r}")
    if row["valid"] == "False":
        cause = row["invalid_cause"]
        return Response(status=INVALID_STATUS.get(cause, "invalid"), error=cause, **common)
    if row["chosen_kind"] == "abstain":
        return Response(status="ok", abstain=True, reason=FAMILY, **common)
    column = f"option_{row['chosen_letter']}"
    if column not in row:
        raise InputError(f"{where}: chosen_letter {row['chosen_letter']!r} names no option column")
    return Response(status="ok", abstain=False, answer=row[column], **common)
