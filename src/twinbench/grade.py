"""The exact, public grading rule, vectorised over a stream of responses.

For a response with status ``ok``:

* unanswerable item: ``correct_abstain`` iff it abstains with the family's reason code,
  ``wrong_reason`` if it abstains with another (or no) code, ``false_commit`` if it answers;
* answerable item: ``correct_answer`` iff it answers and the answer matches (choice: equal after
  :func:`~twinbench.normalize.normalize_option`; score: equal to the legend value; noul:
  ``P(yes) >= 0.5`` equals the expected boolean), ``wrong_answer`` otherwise, ``false_abstain``
  if it abstains.

Declared languages: an item whose language is outside the system's declared set must be
abstained on with ``out_of_language`` (a right label still scores wrong); an ``out_of_language``
item whose language is declared is graded as answerable against ``answer_if_supported``.
Responses with status ``invalid``, ``rejected`` or ``error`` keep that status as their outcome
and are never counted as abstentions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np
import numpy.typing as npt

from twinbench.jsonl import InputError, iter_json_lines
from twinbench.normalize import normalize_option
from twinbench.records import FAMILIES, ChoiceQuestion, Item, NoulQuestion, Outcome, ReasonCode

OUTCOMES: tuple[str, ...] = get_args(Outcome)  # the order fixes the integer codes below
(CORRECT_ABSTAIN, WRONG_REASON, FALSE_COMMIT, CORRECT_ANSWER, WRONG_ANSWER, FALSE_ABSTAIN) = range(
    6
)
_FAMILY_INDEX = {family: i for i, family in enumerate(FAMILIES)}
_KIND_CHOICE, _KIND_SCORE, _KIND_NOUL = range(3)

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ExpectedTable:
    """Per-item expectations after the declared-language rule, indexed by item position."""

    ids: list[str]
    index: dict[str, int]
    family: IntArray
    answerable: BoolArray
    pair: IntArray
    kind: list[int]
    answer: list[Any]
    languages: tuple[str, ...]


def expected_table(items: Sequence[Item], languages: Iterable[str] = ("en",)) -> ExpectedTable:
    """Compile items into the lookup the grader uses, applying the declared-language rule."""
    declared = tuple(sorted(set(languages)))
    pairs: dict[str, int] = {}
    family: list[int] = []
    answerable: list[bool] = []
    pair: list[int] = []
    kind: list[int] = []
    answer: list[Any] = []
    for item in items:
        fam, ok, expected_answer = item.family.value, item.answerable, item.expected.answer
        if item.language not in declared:
            fam, ok, expected_answer = ReasonCode.OUT_OF_LANGUAGE.value, False, None
        elif item.family == ReasonCode.OUT_OF_LANGUAGE and not item.answerable:
            ok, expected_answer = True, item.answer_if_supported
        question = item.question
        if isinstance(question, ChoiceQuestion):
            kind.append(_KIND_CHOICE)
            answer.append(normalize_option(str(expected_answer)) if ok else None)
        elif isinstance(question, NoulQuestion):
            kind.append(_KIND_NOUL)
            answer.append(expected_answer)
        else:
            kind.append(_KIND_SCORE)
            answer.append(None if expected_answer is None else float(expected_answer))
        family.append(_FAMILY_INDEX[fam])
        answerable.append(ok)
        pair.append(pairs.setdefault(item.pair_id, len(pairs)))
    ids = [item.id for item in items]
    return ExpectedTable(
        ids=ids,
        index={item_id: i for i, item_id in enumerate(ids)},
        family=np.array(family, dtype=np.int64),
        answerable=np.array(answerable, dtype=bool),
        pair=np.array(pair, dtype=np.int64),
        kind=kind,
        answer=answer,
        languages=declared,
    )


@dataclass(frozen=True)
class GradedTable:
    """Graded responses as columns; ``family``/``answerable``/``pair`` are the item's."""

    item: IntArray
    family: IntArray
    answerable: BoolArray
    pair: IntArray
    trial: IntArray
    permutation: IntArray
    outcome: IntArray
    reason: IntArray
    confidence: FloatArray
    systems: tuple[str, ...]

    @property
    def valid(self) -> BoolArray:
        """Rows whose response status was ok."""
        valid: BoolArray = self.outcome < 6
        return valid

    @property
    def correct(self) -> BoolArray:
        """Rows graded correct (a correct abstention or a correct answer)."""
        return np.isin(self.outcome, (CORRECT_ABSTAIN, CORRECT_ANSWER))

    @property
    def abstain(self) -> BoolArray:
        """Valid rows that abstained (with any code)."""
        return np.isin(self.outcome, (CORRECT_ABSTAIN, WRONG_REASON, FALSE_ABSTAIN))

    def __len__(self) -> int:
        return int(self.outcome.shape[0])


def _answer_matches(kind: int, expected: Any, answer: Any) -> bool:
    if answer is None or expected is None:
        return False
    if kind == _KIND_CHOICE:
        return isinstance(answer, str) and normalize_option(answer) == expected
    if not isinstance(answer, int | float):
        return False
    if kind == _KIND_SCORE:
        return not isinstance(answer, bool) and float(answer) == expected
    return (float(answer) >= 0.5) == bool(expected)


def grade_rows(
    rows: Iterable[tuple[str, int, dict[str, Any]]], table: ExpectedTable
) -> GradedTable:
    """Grade parsed response objects; `rows` yields (source, line, object) for error messages."""
    reason_index = {family: i for i, family in enumerate(FAMILIES)}
    status_outcome = {"invalid": 6, "rejected": 7, "error": 8}
    item_col: list[int] = []
    outcome_col: list[int] = []
    reason_col: list[int] = []
    conf_col: list[float] = []
    trial_col: list[int] = []
    perm_col: list[int] = []
    systems: dict[str, None] = {}
    index, answerable, family = table.index, table.answerable, table.family
    for source, lineno, obj in rows:
        item_id = obj.get("item_id")
        i = index.get(item_id) if isinstance(item_id, str) else None
        if i is None:
            raise InputError(f"{source}:{lineno}: response for unknown item {item_id!r}")
        status = obj.get("status")
        trial, permutation = obj.get("trial", 0), obj.get("permutation", 0)
        if not (isinstance(trial, int) and isinstance(permutation, int)):
            raise InputError(f"{source}:{lineno}: trial and permutation must be integers")
        trial_col.append(trial)
        perm_col.append(permutation)
        systems.setdefault(str(obj.get("system", "?")))
        reason = obj.get("reason")
        code = reason_index.get(reason, -1) if reason is not None else -1
        confidence = obj.get("confidence")
        conf_col.append(float(confidence) if isinstance(confidence, int | float) else np.nan)
        item_col.append(i)
        reason_col.append(code)
        if status != "ok":
            if status not in status_outcome:
                raise InputError(f"{source}:{lineno}: unknown status {status!r}")
            outcome_col.append(status_outcome[status])
            continue
        abstain = obj.get("abstain")
        if not isinstance(abstain, bool):
            raise InputError(f"{source}:{lineno}: an ok response needs abstain true or false")
        if answerable[i]:
            if abstain:
                outcome_col.append(FALSE_ABSTAIN)
            elif _answer_matches(table.kind[i], table.answer[i], obj.get("answer")):
                outcome_col.append(CORRECT_ANSWER)
            else:
                outcome_col.append(WRONG_ANSWER)
        elif not abstain:
            outcome_col.append(FALSE_COMMIT)
        else:
            outcome_col.append(CORRECT_ABSTAIN if code == family[i] else WRONG_REASON)
    items = np.array(item_col, dtype=np.int64)
    return GradedTable(
        item=items,
        family=table.family[items],
        answerable=table.answerable[items],
        pair=table.pair[items],
        trial=np.array(trial_col, dtype=np.int64),
        permutation=np.array(perm_col, dtype=np.int64),
        outcome=np.array(outcome_col, dtype=np.int64),
        reason=np.array(reason_col, dtype=np.int64),
        confidence=np.array(conf_col, dtype=np.float64),
        systems=tuple(systems),
    )


def grade_file(responses_path: Path, table: ExpectedTable) -> GradedTable:
    """Stream a responses.jsonl file through the grader."""
    source = str(responses_path)
    return grade_rows(
        ((source, lineno, obj) for lineno, obj in iter_json_lines(responses_path)), table
    )
