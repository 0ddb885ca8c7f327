"""MultiNLI (official JSONL, or nyu-mll/multi_nli via `hf:`) into contradiction pairs.

Per premise with an entailment, a neutral and a contradiction hypothesis, the item asks
"Which statement is true according to the text?" over {contradiction, neutral} (the one
candidate answer is denied by the state and the other is unsupported); the twin swaps the
contradiction for the entailment, which the state entails. A premise whose hypotheses are
equal after the published normalisation is skipped (its options would collide).

Hypotheses are grouped by premise id: `promptID` (official files and the hub both carry it),
else `pairID` without its label letter ("31193n" -> "31193"), else (XNLI on the hub, which has
only premise, hypothesis and label) the position of the first row with the same premise in
the same language. The first hypothesis of each label is used.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.importers._common import distinct_options, hf_rows
from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

MNLI = GeneratorRef(name="mnli_import", version="1.1.0")
INSTRUCTIONS = "Which statement is true according to the text?"
LABELS = ("entailment", "neutral", "contradiction")

Triple = dict[str, str]


def hub_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hub-shaped rows (premise, hypothesis, integer label) in the official files' field names
    (sentence1, sentence2, gold_label, promptID, language); all_languages rows are expanded."""
    out: list[dict[str, Any]] = []
    first: dict[tuple[str, str], int] = {}
    for row in rows:
        for language, premise, hypothesis in _languages(row):
            label = row.get("label")
            label = LABELS.index(label) if label in LABELS else label  # a label name, as text
            if label not in (0, 1, 2):  # -1: no gold label
                continue
            position = int(row.get("_row", len(out)))
            group = _group(row) or f"row{first.setdefault((language, premise), position)}"
            out.append(
                {
                    "gold_label": LABELS[label],
                    "sentence1": premise,
                    "sentence2": hypothesis,
                    "promptID": group,
                    "language": language,
                }
            )
    return out


def _languages(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(language, premise, hypothesis) of one hub row; several for XNLI's all_languages."""
    premise, hypothesis = row.get("premise"), row.get("hypothesis")
    if isinstance(premise, dict) and isinstance(hypothesis, dict):
        translated = dict(zip(hypothesis["language"], hypothesis["translation"], strict=True))
        return [
            (lang, text, translated[lang]) for lang, text in premise.items() if lang in translated
        ]
    language = row.get("language") or row.get("_config") or "en"
    return [(str(language), str(premise), str(hypothesis))]


def _group(row: dict[str, Any]) -> str | None:
    """The premise id of a row: promptID, or pairID without its label letter."""
    if row.get("promptID") not in (None, ""):
        return str(row["promptID"])
    pair = str(row.get("pairID") or "")
    return pair[:-1] if len(pair) > 1 and pair[-1] in "enc" else None


def triples(rows: list[dict[str, Any]]) -> dict[tuple[str, str], Triple]:
    """(premise id, language) -> {"premise", "entailment", "neutral", "contradiction"}."""
    found: dict[tuple[str, str], Triple] = {}
    for row in rows:
        group = _group(row)
        if row.get("gold_label") in LABELS and group is not None:
            slot = found.setdefault((group, str(row.get("language") or "en")), {})
            slot.setdefault("premise", row["sentence1"])
            slot.setdefault(row["gold_label"], row["sentence2"])
    return {k: v for k, v in found.items() if all(label in v for label in LABELS)}


def read_rows(path: Path | str, split: str, tsv: bool) -> list[dict[str, Any]]:
    """Rows of an official file (JSONL, or XNLI's TSV), or of an `hf:` dataset."""
    loaded = hf_rows(path, split)
    if loaded is not None:
        return hub_rows(loaded)
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            if tsv:
                return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError, csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def collide(triple: Triple) -> bool:
    """Whether any two hypotheses of a triple are equal after the published normalisation."""
    hypotheses = [triple[label] for label in LABELS]
    return len(distinct_options(hypotheses)) < len(hypotheses)


def questions(
    triple: Triple, seed: int, instructions: str = INSTRUCTIONS
) -> tuple[ChoiceQuestion, ChoiceQuestion]:
    """The item's {contradiction, neutral} and the twin's {entailment, neutral} questions."""
    item_opts, twin_opts = permute_options(
        [triple["contradiction"], triple["neutral"]],
        seed,
        [triple["entailment"], triple["neutral"]],
    )
    return (
        ChoiceQuestion(instructions=instructions, options=item_opts),
        ChoiceQuestion(instructions=instructions, options=twin_opts),
    )


def import_mnli(path: Path | str, seed: int) -> list[Pair]:
    """Contradiction pairs from MultiNLI premises that carry all three labels."""
    pairs = []
    for (prompt, _), triple in triples(read_rows(path, "validation_matched", tsv=False)).items():
        if collide(triple):
            continue
        pair_seed = item_seed(seed, MNLI.name, prompt)
        item_q, twin_q = questions(triple, pair_seed)
        pairs.append(
            make_pair(
                MNLI,
                ReasonCode.CONTRADICTORY_OPTIONS,
                prompt,
                pair_seed,
                item={"state": triple["premise"], "question": item_q},
                twin={"state": triple["premise"], "question": twin_q},
                answer=triple["entailment"],
                provenance={
                    "source_id": prompt,
                    "denied_option": triple["contradiction"],
                    "unsupported_option": triple["neutral"],
                    "edit": "swapped the entailed hypothesis for the contradicted one",
                },
            )
        )
    return pairs
