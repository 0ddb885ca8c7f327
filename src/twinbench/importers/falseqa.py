"""FalseQA (thunlp/FalseQA `test.csv`: question, answer, label) into false-premise pairs.

The official files list all N false-premise questions (label 1) first and then, in the same
order, their N revised true-premise questions (label 0): row i pairs with row i + N. A
false-premise answer is a rebuttal, in `test.csv` a stringified Python list of rebuttals
(read with `ast.literal_eval`); a true-premise answer is a plain answer. An interleaved file
(rows alternating 1, 0, 1, 0, each false-premise row followed by its revision) is read too;
any other order is rejected rather than guessed at (a shuffled sample has no pairing).

One pair per false-premise row whose revision has a usable answer: the item asks the
false-premise question, the twin the true-premise one, both over the same options and state.
The options are the true-premise answer as a `statement` and two other pairs' statements;
the state is the first rebuttal followed by all three statements in a seeded order (see
`import_falseqa` for why). A pair with a blank question or rebuttal, or whose answer is no
statement ("Three.", "In 1921.", "Yes, they are."), is skipped; a row with a missing field
or a label other than 0 or 1 is refused, naming its CSV row (the header is row 1).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from twinbench.generators.base import Pair, item_seed, join, make_pair, permute_options
from twinbench.importers._common import csv_rows, hf_rows, hf_where, pick_distractors, required
from twinbench.jsonl import InputError
from twinbench.normalize import normalize_option
from twinbench.records import ChoiceQuestion, GeneratorRef, ReasonCode

GENERATOR = GeneratorRef(name="falseqa_import", version="3.0.0")
DISTRACTORS = 2
COLUMNS = ("question", "answer", "label")
POLAR = {"yes", "no", "yeah", "nope"}
MIN_STATEMENT_WORDS = 4


def _rows(path: Path | str) -> list[dict[str, Any]]:
    """The rows of the file or `hf:` dataset, each with a question, an answer and a label."""
    rows = hf_rows(path, "test")
    if rows is None:
        found = [(f"{path}:{n}", row) for n, row in csv_rows(path, COLUMNS, "FalseQA")]
    else:
        found = [(hf_where(path, row), row) for row in rows]
    for where, row in found:
        for column in ("question", "answer"):
            required(row, column, str, where)
        if _label(row) not in ("0", "1"):
            raise InputError(f"{where}: label must be 0 or 1, got {row.get('label')!r}")
    return [row for _, row in found]


def _label(row: dict[str, Any]) -> str:
    label = row.get("label")
    return str(label).strip() if isinstance(label, str | int) else ""


def _pairs_of_rows(rows: list[dict[str, Any]], path: Path | str) -> list[tuple[int, int]]:
    """(false-premise row, true-premise row) indices: the official or the interleaved layout."""
    labels = [_label(r) for r in rows]
    half = len(rows) // 2
    if len(rows) % 2 == 0 and labels == ["1"] * half + ["0"] * half:
        return [(i, i + half) for i in range(half)]
    if len(rows) % 2 == 0 and labels == ["1", "0"] * half:
        return [(i, i + 1) for i in range(0, len(rows), 2)]
    raise InputError(
        f"{path}: expected the FalseQA layout: N false-premise rows (label 1) then their N "
        "true-premise revisions (label 0) in the same order (or rows alternating 1, 0)"
    )


def rebuttals(answer: str) -> list[str]:
    """The rebuttals in a false-premise answer: a stringified list (test.csv) or one text."""
    text = answer.strip()
    if text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list) and all(isinstance(p, str) for p in parsed):
            return [" ".join(p.split()) for p in parsed if p.strip()]
    return [" ".join(text.split())] if text else []


def statement(answer: str) -> str | None:
    """A true-premise answer as a statement that stands without its question: a leading
    yes/no word dropped ("Yes, penguins swim." -> "Penguins swim."), then at least
    MIN_STATEMENT_WORDS words; None for a short answer ("Three.", "In 1921.", "Yes, they are.")."""
    text = " ".join(answer.split())
    first, _, rest = text.partition(" ")
    if normalize_option(first) in POLAR:
        text = rest[:1].upper() + rest[1:]
    return text if len(normalize_option(text).split()) >= MIN_STATEMENT_WORDS else None


def import_falseqa(path: Path | str, seed: int) -> list[Pair]:
    """One pair per false-premise question: it (the item) and its true-premise revision."""
    rows = _rows(path)
    matched = _pairs_of_rows(rows, path)
    # The options are statements only, and all of them are sentences of the state. In 2.0.0
    # a distractor was any other answer, so it could be of another kind than the gold
    # ("Three." or "In 1921." beside "Most spiders have eight eyes."), and the gold was the
    # state's last sentence, word for word: an option's form, or its place in the state,
    # found the gold without reading the question. Here gold and distractors come from one
    # population (answers that are statements) and every option is in the state, in an order
    # of its own, so only matching the question to the statement that answers it finds the
    # gold. A short answer cannot take part: alone in a state ("Three.") it says nothing, and
    # only other short answers would be of its kind. A leading yes/no is dropped: the rest is
    # the statement, and a "No, ..." option would answer any yes/no question.
    answers = [statement(str(rows[t]["answer"])) for _, t in matched]
    pool = [a for a in answers if a]
    pairs = []
    for n, (f, t) in enumerate(matched):
        false_row, true_row = rows[f], rows[t]
        said = rebuttals(str(false_row["answer"]))
        answer = answers[n]
        asked = [" ".join(str(row["question"]).split()) for row in (false_row, true_row)]
        if not said or not answer or not all(asked):
            continue
        key = f"{n:05d}"
        pair_seed = item_seed(seed, GENERATOR.name, key)
        distractors = pick_distractors(pool, [answer], DISTRACTORS, pair_seed)
        if not distractors:
            continue
        (options,) = permute_options([answer, *distractors], pair_seed)
        (facts,) = permute_options(options, item_seed(pair_seed, GENERATOR.name, "state"))
        state = join([said[0], *facts])
        pairs.append(
            make_pair(
                GENERATOR,
                ReasonCode.CONTRADICTORY_OPTIONS,
                key,
                pair_seed,
                item={
                    "state": state,
                    "question": ChoiceQuestion(instructions=asked[0], options=options),
                },
                twin={
                    "state": state,
                    "question": ChoiceQuestion(instructions=asked[1], options=options),
                },
                answer=answer,
                provenance={
                    "source_id": key,
                    "source_rows": [f, t],  # 0-based data rows (file line = row + 2)
                    "rebuttal": said[0],
                    "rebuttals": said,
                    "true_answer": " ".join(str(true_row["answer"]).split()),
                    "edit": "FalseQA revised true-premise question",
                },
            )
        )
    return pairs
