"""MultiNLI (official JSONL) and XNLI (official TSV) into contradiction and translation pairs.

MultiNLI: per premise (promptID) with an entailment, a neutral and a contradiction hypothesis,
the item asks "Which statement is true according to the text?" over {contradiction, neutral}
(the one candidate answer is denied by the state and the other is unsupported); the twin
swaps the contradiction for the entailment, which the state entails.

XNLI: the same construction for each premise in English (the twin) and, for every other
language, an out_of_language item with its translated answer as `answer_if_supported`.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.generators.scripts import script_problem
from twinbench.importers._common import hf_rows
from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

MNLI = GeneratorRef(name="mnli_import", version="1.0.0")
XNLI = GeneratorRef(name="xnli_import", version="1.0.0")
INSTRUCTIONS = "Which statement is true according to the text?"
LABELS = ("entailment", "neutral", "contradiction")


def _triples(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, str]]:
    """(promptID, language) -> {"premise", "entailment", "neutral", "contradiction"}."""
    triples: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for row in rows:
        if row.get("gold_label") in LABELS:
            slot = triples[(str(row["promptID"]), row.get("language", "en"))]
            slot["premise"] = row["sentence1"]
            slot[row["gold_label"]] = row["sentence2"]
    return {k: v for k, v in triples.items() if all(label in v for label in LABELS)}


def _read(path: Path | str, tsv: bool) -> list[dict[str, Any]]:
    rows = hf_rows(path, "validation_matched" if not tsv else "test")
    if rows is not None:
        return [
            {
                **r,
                "gold_label": LABELS[r["label"]],
                "sentence1": r["premise"],
                "sentence2": r["hypothesis"],
                "promptID": r.get("idx", i),
            }
            for i, r in enumerate(rows)
            if r.get("label") in (0, 1, 2)
        ]
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            if tsv:
                return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def _questions(triple: dict[str, str], seed: int) -> tuple[ChoiceQuestion, ChoiceQuestion]:
    item_opts, twin_opts = permute_options(
        [triple["contradiction"], triple["neutral"]],
        seed,
        [triple["entailment"], triple["neutral"]],
    )
    return (
        ChoiceQuestion(instructions=INSTRUCTIONS, options=item_opts),
        ChoiceQuestion(instructions=INSTRUCTIONS, options=twin_opts),
    )


def import_mnli(path: Path | str, seed: int) -> list[Pair]:
    """Contradiction pairs from MultiNLI premises that carry all three labels."""
    pairs = []
    for (prompt, _), triple in sorted(_triples(_read(path, tsv=False)).items()):
        pair_seed = item_seed(seed, MNLI.name, prompt)
        item_q, twin_q = _questions(triple, pair_seed)
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


def import_xnli(path: Path | str, seed: int) -> list[Pair]:
    """Out-of-language pairs: each non-English XNLI premise against its English twin."""
    triples = _triples(_read(path, tsv=True))
    pairs = []
    for (prompt, language), triple in sorted(triples.items()):
        english = triples.get((prompt, "en"))
        if language == "en" or english is None or script_problem(triple["premise"], language):
            continue
        key = f"{prompt}.{language}"
        pair_seed = item_seed(seed, XNLI.name, prompt)  # same option order in every language
        _, translated_q = _questions(triple, pair_seed)
        _, english_q = _questions(english, pair_seed)
        pairs.append(
            make_pair(
                XNLI,
                ReasonCode.OUT_OF_LANGUAGE,
                key,
                pair_seed,
                item={
                    "state": triple["premise"],
                    "question": translated_q,
                    "language": language,
                    "answer_if_supported": triple["entailment"],
                },
                twin={"state": english["premise"], "question": english_q},
                answer=english["entailment"],
                provenance={
                    "source_id": prompt,
                    "language": language,
                    "edit": f"XNLI translation into {language}",
                },
            )
        )
    return pairs
