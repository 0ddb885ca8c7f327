"""The report's examples: per family, a few pairs for each kind of error a system made.

An example is a pair: the unanswerable item beside its answerable twin (state, question,
options, what grading expected), what the system answered on each (the same trial and option
order where the run has it) and its raw reply, if the response kept one. Examples are chosen
deterministically: the pairs whose row has that outcome, in the order of the sha256 of their
pair id (a fixed order that mixes generators), the first `PER_KIND` of them, each at its
lowest (trial, permutation). Raw replies are cut at `RAW_LIMIT` characters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from twinbench.graded import GradedRun
from twinbench.grader import GradedTable, Outcome
from twinbench.records import FAMILIES, ChoiceQuestion, Item, NoulQuestion, ScoreQuestion

PER_KIND = 3
RAW_LIMIT = 2_000
#: the outcomes the gallery shows (every outcome but the two right ones), in page order, and
#: what each means
ERRORS: dict[Outcome, str] = {
    Outcome.FALSE_COMMIT: "answered an item it should have abstained on",
    Outcome.WRONG_REASON: "abstained on an item with another code (or none)",
    Outcome.FALSE_ABSTAIN: "abstained on a twin that has an answer",
    Outcome.WRONG_ANSWER: "answered a twin wrongly",
    Outcome.INVALID: "the reply could not be read as a response",
    Outcome.REJECTED: "the provider refused the request",
    Outcome.ERROR: "no reply: the call failed",
}
_BOM = b"\xef\xbb\xbf"


def _order(pair_id: str) -> str:
    return hashlib.sha256(pair_id.encode("utf-8")).hexdigest()


def _rows_at(path: Path, wanted: set[int]) -> dict[int, dict[str, Any]]:
    """The response objects at the given positions of a responses file (positions count
    non-blank lines from 0: row n of a GradedTable graded from that file)."""
    found: dict[int, dict[str, Any]] = {}
    position = 0
    with path.open("rb") as handle:
        for lineno, line in enumerate(handle, start=1):
            if lineno == 1 and line.startswith(_BOM):
                line = line[len(_BOM) :]
            if not line.strip():
                continue
            if position in wanted:
                found[position] = orjson.loads(line)
                if len(found) == len(wanted):
                    break
            position += 1
    return found


def _expected(item: Item, g: GradedTable, rows: np.ndarray) -> str:
    """What grading expected of `item` for this run (its declared languages applied)."""
    if rows.size:
        answerable, family = bool(g.answerable[rows[0]]), FAMILIES[int(g.family[rows[0]])]
    else:
        answerable, family = item.answerable, item.family.value
    if not answerable:
        return f"abstain ({family})"
    answer = item.expected.answer if item.answerable else item.answer_if_supported
    if isinstance(item.question, NoulQuestion):
        answer = "yes" if answer else "no"
    return f"answer: {answer}"


def _question(item: Item) -> dict[str, Any]:
    q = item.question
    if isinstance(q, ChoiceQuestion):
        options = list(q.options) + ([q.abstain_option] if q.abstain_option else [])
    elif isinstance(q, ScoreQuestion):
        options = [f"{label} = {value}" for label, value in q.legend.items()]
    else:
        options = ["yes / no (the answer is P(yes))"]
    return {"type": q.type, "instructions": q.instructions, "options": options}


def _raw(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else orjson.dumps(value).decode("utf-8")
    if len(text) > RAW_LIMIT:
        return text[:RAW_LIMIT] + f"… ({len(text) - RAW_LIMIT} more characters)"
    return text


def _response(row: int, g: GradedTable, obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "trial": int(g.trial[row]),
        "permutation": int(g.permutation[row]),
        "outcome": Outcome(int(g.outcome[row])).label,
        "status": obj.get("status"),
        "abstain": obj.get("abstain"),
        "reason": obj.get("reason"),
        "answer": obj.get("answer"),
        "confidence": obj.get("confidence"),
        "error": obj.get("error"),
        "raw": _raw(obj.get("raw")),
    }


class _Pairs:
    """Item positions of each pair, and table rows of each item, of one graded run."""

    def __init__(self, items: Sequence[Item], g: GradedTable) -> None:
        self.items = items
        self.g = g
        self.members: dict[str, list[int]] = {}
        for i, item in enumerate(items):
            self.members.setdefault(item.pair_id, []).append(i)
        order = np.lexsort((g.permutation, g.trial, g.item))  # an item's rows, lowest first
        sorted_items = g.item[order]
        starts = np.searchsorted(sorted_items, np.arange(len(items) + 1))
        self.rows_of = [order[starts[i] : starts[i + 1]] for i in range(len(items))]

    def partner(self, i: int) -> int | None:
        others = [j for j in self.members[self.items[i].pair_id] if j != i]
        return others[0] if others else None

    def matching_row(self, i: int, trial: int, permutation: int) -> int | None:
        """The row of item `i` at (trial, permutation), else its lowest row (None: no row)."""
        rows = self.rows_of[i]
        same = rows[(self.g.trial[rows] == trial) & (self.g.permutation[rows] == permutation)]
        chosen = same if same.size else rows
        return int(chosen[0]) if chosen.size else None


def _chosen(g: GradedTable, rank: np.ndarray, rows: np.ndarray, per_kind: int) -> list[int]:
    """The lowest (trial, permutation) row of each of the first `per_kind` pairs among `rows`,
    pairs in the order of `rank` (each item's pair's place in sha256 order)."""
    key = rank[g.item[rows]]
    ordered = rows[np.lexsort((g.permutation[rows], g.trial[rows], key))]
    _, first = np.unique(rank[g.item[ordered]], return_index=True)  # sorted by rank
    return [int(r) for r in ordered[first[:per_kind]]]


def _shown(items: Sequence[Item], pairs: _Pairs, row: int, obj: dict[str, Any]) -> dict[str, Any]:
    """One side of an example: the item at table row `row` and the response there."""
    g = pairs.g
    i = int(g.item[row])
    item = items[i]
    return {
        "id": item.id,
        "language": item.language,
        "state": item.state,
        "question": _question(item),
        "expected": _expected(item, g, pairs.rows_of[i]),
        "response": _response(row, g, obj),
    }


def error_examples(run: GradedRun, per_kind: int = PER_KIND) -> dict[str, Any]:
    """Per family and error outcome (ERRORS): `count` rows and up to `per_kind` `examples`
    (empty when the run's responses file is not at hand)."""
    g, items = run.table, run.items
    if run.source is None or not len(g):
        return {}
    pairs = _Pairs(items, g)
    ids = sorted({item.pair_id for item in items}, key=_order)
    place = {pair_id: n for n, pair_id in enumerate(ids)}
    rank = np.array([place[item.pair_id] for item in items], dtype=np.int64)
    out: dict[str, Any] = {}
    plans: list[tuple[str, str, int, int | None]] = []  # family, outcome, row, partner's row
    for f, family in enumerate(FAMILIES):
        for outcome in ERRORS:
            found = np.flatnonzero((g.family == f) & (g.outcome == outcome))
            if not found.size:
                continue
            out.setdefault(family, {})[outcome.label] = {"count": int(found.size), "examples": []}
            for row in _chosen(g, rank, found, per_kind):
                partner = pairs.partner(int(g.item[row]))
                other = None
                if partner is not None:
                    other = pairs.matching_row(partner, int(g.trial[row]), int(g.permutation[row]))
                plans.append((family, outcome.label, row, other))
    wanted = {r for _, _, row, other in plans for r in (row, other) if r is not None}
    objects = _rows_at(run.source, wanted)
    for family, label, row, other in plans:
        error_item = items[int(g.item[row])]
        side, other_side = ("twin", "item") if error_item.answerable else ("item", "twin")
        example = {
            "pair_id": error_item.pair_id,
            "error_on": side,
            side: _shown(items, pairs, row, objects[row]),
            other_side: None if other is None else _shown(items, pairs, other, objects[other]),
        }
        out[family][label]["examples"].append(example)
    return out
