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
from enum import IntEnum
from pathlib import Path
from typing import Any, get_args

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from twinbench.jsonl import InputError, describe_validation_error, iter_json_lines
from twinbench.normalize import normalize_option
from twinbench.records import (
    FAMILIES,
    ChoiceQuestion,
    Item,
    NoulQuestion,
    OutcomeName,
    ReasonCode,
    Response,
    plainly_valid_response,
)


class Outcome(IntEnum):
    """A graded row's outcome; the integer is its code in GradedTable.outcome.

    The first six are outcomes of valid (`ok`) responses; the last three keep the response's
    status and are never counted as abstentions.
    """

    CORRECT_ABSTAIN = 0
    WRONG_REASON = 1
    FALSE_COMMIT = 2
    CORRECT_ANSWER = 3
    WRONG_ANSWER = 4
    FALSE_ABSTAIN = 5
    INVALID = 6
    REJECTED = 7
    ERROR = 8

    @property
    def label(self) -> OutcomeName:
        """The outcome's name in graded.jsonl and metrics (`correct_abstain`, …)."""
        return OUTCOME_NAMES[self.value]


OUTCOME_NAMES: tuple[OutcomeName, ...] = get_args(OutcomeName)
if tuple(o.name.lower() for o in Outcome) != OUTCOME_NAMES:  # pragma: no cover
    raise ImportError("grade.Outcome and records.OutcomeName are out of step")
#: the first outcome code that is not a valid response's
FIRST_FAILURE = Outcome.INVALID
_STATUS_OUTCOME = {
    "invalid": int(Outcome.INVALID),
    "rejected": int(Outcome.REJECTED),
    "error": int(Outcome.ERROR),
}
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
    #: the resampling unit of every interval and paired test: pairs that share a source
    #: (translation: the same English scenario in three languages) form one cluster
    cluster: IntArray
    kind: list[int]
    answer: list[Any]
    languages: tuple[str, ...]


def cluster_key(item: Item) -> tuple[str, str]:
    """The cluster an item's pair belongs to: its generator and the source record the pair was
    made from (`provenance.source_id`), else the pair itself.

    Pairs made from one source are not independent: the translation generator turns one English
    scenario into pairs in three languages whose twins are the same English text, and the NLI
    importers make several pairs of one premise. Resampling pairs would count each copy as new
    evidence and give intervals that are too narrow, so intervals and paired tests resample
    clusters. The ideal-pair rate still matches an item with its own twin (`pair`)."""
    source = item.provenance.get("source_id")
    return item.generator.name, str(source) if source is not None else f"pair:{item.pair_id}"


def expected_table(items: Sequence[Item], languages: Iterable[str] = ("en",)) -> ExpectedTable:
    """Compile items into the lookup the grader uses, applying the declared-language rule."""
    declared = tuple(sorted(set(languages)))
    pairs: dict[str, int] = {}
    clusters: dict[tuple[str, str], int] = {}
    cluster: list[int] = []
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
        cluster.append(clusters.setdefault(cluster_key(item), len(clusters)))
    ids = [item.id for item in items]
    return ExpectedTable(
        ids=ids,
        index={item_id: i for i, item_id in enumerate(ids)},
        family=np.array(family, dtype=np.int64),
        answerable=np.array(answerable, dtype=bool),
        pair=np.array(pair, dtype=np.int64),
        cluster=np.array(cluster, dtype=np.int64),
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
    cluster: IntArray
    trial: IntArray
    permutation: IntArray
    outcome: IntArray
    reason: IntArray
    confidence: FloatArray
    systems: tuple[str, ...]

    @property
    def valid(self) -> BoolArray:
        """Rows whose response status was ok."""
        valid: BoolArray = self.outcome < FIRST_FAILURE
        return valid

    @property
    def correct(self) -> BoolArray:
        """Rows graded correct (a correct abstention or a correct answer)."""
        return np.isin(self.outcome, (Outcome.CORRECT_ABSTAIN, Outcome.CORRECT_ANSWER))

    @property
    def abstain(self) -> BoolArray:
        """Valid rows that abstained (with any code)."""
        return np.isin(
            self.outcome, (Outcome.CORRECT_ABSTAIN, Outcome.WRONG_REASON, Outcome.FALSE_ABSTAIN)
        )

    def __len__(self) -> int:
        return int(self.outcome.shape[0])


def _answer_matches(kind: int, expected: Any, answer: Any) -> bool:
    if answer is None or expected is None:
        return False
    if kind == _KIND_CHOICE:
        return bool(normalize_option(answer) == expected)
    if kind == _KIND_SCORE:
        return bool(float(answer) == expected)
    return (float(answer) >= 0.5) == bool(expected)


def _answer_problem(kind: int, answer: Any) -> str | None:
    """Why `answer` cannot answer a question of `kind` (None if it can)."""
    if answer is None:
        return None
    number = isinstance(answer, int | float) and not isinstance(answer, bool)
    if kind == _KIND_CHOICE and not isinstance(answer, str):
        return f"a choice answer is the option text, got {answer!r}"
    if kind == _KIND_SCORE and not number:
        return f"a score answer is the legend value (a number), got {answer!r}"
    if kind == _KIND_NOUL and not (number and 0.0 <= answer <= 1.0):
        return f"a yes/no answer is P(yes), a number in [0, 1], got {answer!r}"
    return None


def check_response(source: str, lineno: int, obj: dict[str, Any]) -> Response:
    """`obj` as a Response, or InputError naming `source:lineno` and the first problem."""
    try:
        return Response.model_validate(obj)
    except ValidationError as exc:
        raise InputError(f"{source}:{lineno}: {describe_validation_error(exc)}") from None


def _fields(source: str, lineno: int, obj: dict[str, Any]) -> dict[str, Any]:
    """The row's fields after the response rule: the dict itself on the fast path, else the
    validated model's fields (an InputError when the model refuses it)."""
    if plainly_valid_response(obj):
        return obj
    return check_response(source, lineno, obj).model_dump(exclude_none=True)


class ResponseRule:
    """The one response rule of `validate`, `grade`, `report` and `compare`.

    A row must be a valid Response (strict types, finite ranges, status and abstain
    consistent, known codes) for a known item, with an answer of its question's kind (P(yes)
    in [0, 1] for yes/no); one (item, trial, permutation) key once; one system per file.
    """

    def __init__(self, table: ExpectedTable) -> None:
        self.table = table
        self.seen: dict[tuple[int, int, int], int] = {}
        self.system: str | None = None

    def check(self, source: str, lineno: int, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """(the row's fields, its item's index), or InputError with `source:lineno: problem`."""
        r = _fields(source, lineno, obj)
        item_id, system = r["item_id"], r["system"]
        i = self.table.index.get(item_id)
        if i is None:
            raise InputError(f"{source}:{lineno}: response for unknown item {item_id!r}")
        if self.system is None:
            self.system = system
        elif system != self.system:
            raise InputError(
                f"{source}:{lineno}: response of system {system!r} in a file of "
                f"{self.system!r} (one responses file holds one system's run)"
            )
        trial, permutation = r.get("trial", 0), r.get("permutation", 0)
        first = self.seen.setdefault((i, trial, permutation), lineno)
        if first != lineno:
            raise InputError(
                f"{source}:{lineno}: second response for item {item_id!r}, trial {trial}, "
                f"permutation {permutation} (first on line {first})"
            )
        problem = _answer_problem(self.table.kind[i], r.get("answer"))
        if problem:
            raise InputError(f"{source}:{lineno}: {problem}")
        return r, i


def grade_rows(
    rows: Iterable[tuple[str, int, dict[str, Any]]], table: ExpectedTable
) -> GradedTable:
    """Grade response objects; `rows` yields (source, line, object) for error messages.

    Every row passes :class:`ResponseRule` first (an InputError otherwise), so a printed
    number never rests on a row outside the contract.
    """
    reason_index = {family: i for i, family in enumerate(FAMILIES)}
    rule = ResponseRule(table)
    item_col: list[int] = []
    outcome_col: list[int] = []
    reason_col: list[int] = []
    conf_col: list[float] = []
    trial_col: list[int] = []
    perm_col: list[int] = []
    answerable, family, kinds = table.answerable, table.family, table.kind
    # plain ints in the loop: a million rows of enum members would cost seconds
    ca, wr, fc, cn, wa, fa = (int(o) for o in tuple(Outcome)[: int(FIRST_FAILURE)])
    for source, lineno, obj in rows:
        r, i = rule.check(source, lineno, obj)
        get = r.get
        trial_col.append(get("trial", 0))
        perm_col.append(get("permutation", 0))
        reason, confidence, status, abstain = (
            get("reason"),
            get("confidence"),
            r["status"],
            get("abstain"),
        )
        code = reason_index[reason] if reason is not None else -1
        conf_col.append(np.nan if confidence is None else confidence)
        item_col.append(i)
        reason_col.append(code)
        if status != "ok":
            outcome_col.append(_STATUS_OUTCOME[status])
        elif answerable[i]:
            if abstain:
                outcome_col.append(fa)
            elif _answer_matches(kinds[i], table.answer[i], get("answer")):
                outcome_col.append(cn)
            else:
                outcome_col.append(wa)
        elif not abstain:
            outcome_col.append(fc)
        else:
            outcome_col.append(ca if code == family[i] else wr)
    items = np.array(item_col, dtype=np.int64)
    return GradedTable(
        item=items,
        family=table.family[items],
        answerable=table.answerable[items],
        pair=table.pair[items],
        cluster=table.cluster[items],
        trial=np.array(trial_col, dtype=np.int64),
        permutation=np.array(perm_col, dtype=np.int64),
        outcome=np.array(outcome_col, dtype=np.int64),
        reason=np.array(reason_col, dtype=np.int64),
        confidence=np.array(conf_col, dtype=np.float64),
        systems=() if rule.system is None else (rule.system,),
    )


def grade_file(responses_path: Path, table: ExpectedTable) -> GradedTable:
    """Stream a responses.jsonl file through the grader."""
    source = str(responses_path)
    return grade_rows(
        ((source, lineno, obj) for lineno, obj in iter_json_lines(responses_path)), table
    )
