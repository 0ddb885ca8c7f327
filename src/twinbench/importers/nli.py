"""MultiNLI (an official file, or nyu-mll/multi_nli via `hf:`) into contradiction pairs.

The official files come in two layouts, both read here (and by `xnli`): JSON Lines
(`multinli_1.0_dev_matched.jsonl`, XNLI's `xnli.test.jsonl`) and tab-separated with a header
row (`multinli_1.0_dev_matched.txt`, GLUE's `MNLI/dev_matched.tsv`, `xnli.test.tsv`), whose
columns are found by name, so each layout's column order and extra columns do not matter.
`is_json_lines` tells them apart.

Per premise with an entailment, a neutral and a contradiction hypothesis, the item asks
"Which statement is true according to the text?" over {contradiction, neutral} (the one
candidate answer is denied by the state and the other is unsupported); the twin swaps the
contradiction for the entailment, which the state entails. A premise that is blank, or whose
hypotheses are blank or equal after the published normalisation, is skipped (`unusable`).
A row with a gold label but no premise id, premise or hypothesis string is refused, naming
its line (the TSV row number, the header being row 1).

Hypotheses are grouped by premise id: `promptID` (official files and the hub both carry it),
else `pairID` without its label letter ("31193n" -> "31193"), else (XNLI on the hub, which has
only premise, hypothesis and label) the position of the first row with the same premise in
the same language. The first hypothesis of each label is used.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, make_pair, permute_options
from twinbench.importers._common import (
    csv_rows,
    distinct_options,
    hf_rows,
    hf_where,
    required,
)
from twinbench.jsonl import InputError, iter_json_lines
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

MNLI = GeneratorRef(name="mnli_import", version="1.1.0")
INSTRUCTIONS = "Which statement is true according to the text?"
LABELS = ("entailment", "neutral", "contradiction")

Triple = dict[str, str]


def hub_rows(rows: list[dict[str, Any]], spec: Path | str = "hf") -> list[dict[str, Any]]:
    """Hub-shaped rows (premise, hypothesis, integer label) in the official files' field names
    (sentence1, sentence2, gold_label, promptID, language); all_languages rows are expanded."""
    out: list[dict[str, Any]] = []
    first: dict[tuple[str, str], int] = {}
    for row in rows:
        where = hf_where(spec, row)
        for language, premise, hypothesis in _languages(row, where):
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
                    "_where": where,
                }
            )
    return out


def _languages(row: dict[str, Any], where: str) -> list[tuple[str, str, str]]:
    """(language, premise, hypothesis) of one hub row; several for XNLI's all_languages."""
    premise, hypothesis = row.get("premise"), row.get("hypothesis")
    if isinstance(premise, dict) and isinstance(hypothesis, dict):
        languages = required(hypothesis, "language", list, f"{where}: hypothesis")
        texts = required(hypothesis, "translation", list, f"{where}: hypothesis")
        if len(languages) != len(texts):
            raise InputError(
                f"{where}: hypothesis has {len(languages)} languages, {len(texts)} translations"
            )
        translated = dict(zip(languages, texts, strict=True))
        return [
            (lang, text, translated[lang]) for lang, text in premise.items() if lang in translated
        ]
    language = str(row.get("language") or row.get("_config") or "en")
    premise = required(row, "premise", str, where)
    return [(language, premise, required(row, "hypothesis", str, where))]


def _group(row: dict[str, Any]) -> str | None:
    """The premise id of a row: promptID, or pairID without its label letter."""
    if row.get("promptID") not in (None, ""):
        return str(row["promptID"])
    pair = str(row.get("pairID") or "")
    return pair[:-1] if len(pair) > 1 and pair[-1] in "enc" else None


def triples(rows: list[dict[str, Any]]) -> dict[tuple[str, str], Triple]:
    """(premise id, language) -> {"premise", "entailment", "neutral", "contradiction"}.

    A row is checked where it has a gold label ("-": none, skipped); a row without a premise
    id, premise or hypothesis string is an InputError naming it (`_where`, from `read_rows`).
    """
    found: dict[tuple[str, str], Triple] = {}
    for row in rows:
        where = str(row.get("_where", "row"))
        label = required(row, "gold_label", str, where)
        if label not in LABELS:
            continue
        group = _group(row)
        if group is None:
            raise InputError(f"{where}: missing key 'promptID' (or 'pairID')")
        premise = required(row, "sentence1", str, where)
        hypothesis = required(row, "sentence2", str, where)
        slot = found.setdefault((group, str(row.get("language") or "en")), {})
        slot.setdefault("premise", premise)
        slot.setdefault(label, hypothesis)
    return {k: v for k, v in found.items() if all(label in v for label in LABELS)}


#: the columns a tab-separated MultiNLI file must have in its header (others may be there)
MNLI_COLUMNS = ("gold_label", "sentence1", "sentence2", "promptID")
JSON_SUFFIXES = (".jsonl", ".json")


def is_json_lines(path: Path | str) -> bool:
    """Whether an official file is JSON Lines rather than tab-separated: its name ends in
    .jsonl or .json, or its first non-blank line opens a JSON object (a header never does)."""
    if Path(path).suffix.lower() in JSON_SUFFIXES:
        return True
    try:
        with Path(path).open("rb") as handle:
            for line in handle:
                text = line.removeprefix(codecs.BOM_UTF8).strip()
                if text:
                    return text.startswith(b"{")
    except OSError:
        return False  # the TSV reader names the problem
    return False


def read_rows(
    path: Path | str, split: str, columns: tuple[str, ...] = MNLI_COLUMNS, what: str = "MultiNLI"
) -> list[dict[str, Any]]:
    """Rows of an official file (JSON Lines, or tab-separated with `columns` in its header) or
    of an `hf:` dataset; each names where it came from in `_where` (`FILE:LINE`)."""
    loaded = hf_rows(path, split)
    if loaded is not None:
        return hub_rows(loaded, path)
    if is_json_lines(path):
        rows: Iterable[tuple[int, dict[str, Any]]] = iter_json_lines(Path(path))
    else:  # no quoting: the official files leave quotes in sentences as they are
        rows = csv_rows(path, columns, what, delimiter="\t", quoting=csv.QUOTE_NONE)
    return [{**row, "_where": f"{path}:{n}"} for n, row in rows]


def collide(triple: Triple) -> bool:
    """Whether any two hypotheses of a triple are equal after the published normalisation."""
    hypotheses = [triple[label] for label in LABELS]
    return len(distinct_options(hypotheses)) < len(hypotheses)


def unusable(triple: Triple) -> bool:
    """Whether a triple would make a bad item: a blank premise, or hypotheses that are blank
    or equal after the published normalisation."""
    return not triple["premise"].strip() or collide(triple)


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
    for (prompt, _), triple in triples(read_rows(path, "validation_matched")).items():
        if unusable(triple):
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
