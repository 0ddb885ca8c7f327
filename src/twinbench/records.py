"""Versioned record models: items, responses, manifests and graded rows."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

ITEM_SCHEMA: Final = "twinbench.item/1"
RESPONSE_SCHEMA: Final = "twinbench.response/1"
MANIFEST_SCHEMA: Final = "twinbench.manifest/1"
GRADED_SCHEMA: Final = "twinbench.graded/1"


class ReasonCode(StrEnum):
    """The closed set of abstention reason codes; each is also a family name."""

    UNDERSPECIFIED_STATE = "underspecified_state"
    CONTRADICTORY_OPTIONS = "contradictory_options"
    OUT_OF_LANGUAGE = "out_of_language"


FAMILIES: tuple[str, ...] = tuple(code.value for code in ReasonCode)

Answer = str | bool | int | float
# text a reader must see: not empty, not only whitespace
Text = Annotated[str, Field(min_length=1, pattern=r"\S")]
# in a response, no coercion: `true` is not 1, "1" is not 1, 1.9 is not an option index
StrictAnswer = StrictStr | StrictBool | StrictInt | StrictFloat
Probability = Annotated[float, Field(strict=True, ge=0.0, le=1.0)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChoiceQuestion(_Record):
    """Pick one option; the answer is the option text.

    `abstain_option` is the text of an explicit abstain option shown after the options (the
    paired protocol's "I abstain from answering"); choosing it is an abstention, not an answer.
    """

    type: Literal["choice"] = "choice"
    instructions: Text
    options: list[Text] = Field(min_length=2, max_length=255)
    abstain_option: str | None = None


class ScoreQuestion(_Record):
    """Pick a rubric value; the answer is the legend value (a number)."""

    type: Literal["score"] = "score"
    instructions: Text
    legend: dict[Text, StrictInt | StrictFloat] = Field(min_length=2)


class NoulQuestion(_Record):
    """A yes/no question; the expected answer is a boolean, a response gives P(yes)."""

    type: Literal["noul"] = "noul"
    instructions: Text


Question = Annotated[ChoiceQuestion | ScoreQuestion | NoulQuestion, Field(discriminator="type")]


class Expected(_Record):
    """What a correct response does: abstain with a reason code, or give an answer."""

    abstain: StrictBool
    reason: ReasonCode | None = None
    answer: StrictAnswer | None = None

    @model_validator(mode="after")
    def _abstain_xor_answer(self) -> Expected:
        if self.abstain and (self.reason is None or self.answer is not None):
            raise ValueError("an expected abstention needs a reason and no answer")
        if not self.abstain and (self.answer is None or self.reason is not None):
            raise ValueError("an expected answer needs an answer and no reason")
        return self


class GeneratorRef(_Record):
    """The generator (name and version) that built an item."""

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)


class Item(_Record):
    """One benchmark item: an unanswerable item or its answerable twin."""

    schema_: Literal["twinbench.item/1"] = Field(ITEM_SCHEMA, alias="schema")
    id: str = Field(min_length=1)
    pair_id: str = Field(min_length=1)
    answerable: StrictBool
    family: ReasonCode
    generator: GeneratorRef
    seed: StrictInt
    split: Literal["public", "holdout"] = "public"
    language: str = Field("en", min_length=2)
    state: Text
    adversarial: StrictBool = False
    question: Question
    expected: Expected
    twin_id: str | None = Field(None, min_length=1)
    answer_if_supported: StrictAnswer | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class Response(_Record):
    """One system response to one item, trial and option permutation.

    Types are strict (no `true` for 1, no "1" for 1), numbers finite, and the status decides
    the rest: an ok response abstains with no answer or answers with no reason; any other
    status is never an abstention. On an ok response `error` notes what is missing (why an
    endpoint's confidence is absent).
    """

    schema_: Literal["twinbench.response/1"] = Field(RESPONSE_SCHEMA, alias="schema")
    item_id: StrictStr = Field(min_length=1)
    system: StrictStr = Field(min_length=1)
    trial: StrictInt = Field(0, ge=0)
    permutation: StrictInt = Field(0, ge=0)
    status: Literal["ok", "invalid", "rejected", "error"]
    abstain: StrictBool | None = None
    reason: ReasonCode | None = None
    answer: StrictAnswer | None = None
    confidence: Probability | None = None
    probabilities: dict[str, Probability] | None = None
    raw: Any = None
    error: StrictStr | None = None
    latency_ms: float | None = Field(None, ge=0.0, strict=True)
    usage: dict[str, Any] | None = None

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

    @model_validator(mode="after")
    def _status_consistent(self) -> Response:
        if self.status == "ok":
            if self.abstain is None:
                raise ValueError("an ok response needs abstain true or false")
            if self.abstain and self.answer is not None:
                raise ValueError("an abstention carries no answer")
            if not self.abstain and self.answer is None:
                raise ValueError("an ok response that does not abstain needs an answer")
            if not self.abstain and self.reason is not None:
                raise ValueError("a response that answers carries no reason code")
        elif self.abstain:
            raise ValueError(f"a {self.status} response is never an abstention")
        return self


_RESPONSE_KEYS = frozenset(
    {
        "schema",
        "item_id",
        "system",
        "trial",
        "permutation",
        "status",
        "abstain",
        "reason",
        "answer",
        "confidence",
        "raw",
        "error",
        "latency_ms",
        "usage",
    }
)
_STATUSES = frozenset({"ok", "invalid", "rejected", "error"})
_CODES = frozenset(FAMILIES)


def _finite_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))


def plainly_valid_response(obj: dict[str, Any]) -> bool:
    """True only if `obj` is certainly a valid Response; False means "ask the model".

    Hand-written because validating a row with pydantic costs 5-13 us and grading a million
    rows has a 20 s budget; this checks the common row shape in about 1 us. It never accepts
    what `Response.model_validate` refuses (tests/test_fuzz.py checks that on generated rows);
    anything unusual (probabilities, an unknown key, a bad value) goes to the model, which
    accepts it or says why not.
    """
    if not _RESPONSE_KEYS.issuperset(obj):
        return False
    get = obj.get
    item_id, system, status = get("item_id"), get("system"), get("status")
    if type(item_id) is not str or not item_id or type(system) is not str or not system:
        return False
    if type(status) is not str or status not in _STATUSES:
        return False
    if get("schema", RESPONSE_SCHEMA) != RESPONSE_SCHEMA:
        return False
    for key in ("trial", "permutation"):
        value = get(key, 0)
        if type(value) is not int or value < 0:
            return False
    abstain, reason, answer = get("abstain"), get("reason"), get("answer")
    if abstain is not None and type(abstain) is not bool:
        return False
    if reason is not None and (type(reason) is not str or reason not in _CODES):
        return False
    if answer is not None and not (
        type(answer) is str or type(answer) is bool or _finite_number(answer)
    ):
        return False
    confidence, latency = get("confidence"), get("latency_ms")
    if confidence is not None and not (_finite_number(confidence) and 0 <= confidence <= 1):
        return False
    if latency is not None and not (_finite_number(latency) and latency >= 0):
        return False
    error, usage = get("error"), get("usage")
    if (error is not None and type(error) is not str) or (
        usage is not None and type(usage) is not dict
    ):
        return False
    if status == "ok":
        if abstain is None:
            return False
        return answer is None if abstain else (answer is not None and reason is None)
    return not abstain


class Manifest(BaseModel):
    """What a benchmark directory holds: generators, seeds, counts, ratio and file hashes."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    schema_: Literal["twinbench.manifest/1"] = Field(MANIFEST_SCHEMA, alias="schema")
    twinbench_version: str
    seed: int
    generators: list[dict[str, Any]]
    ratio: dict[str, int]
    counts: dict[str, Any]
    files: dict[str, str]


OutcomeName = Literal[
    "correct_abstain",
    "wrong_reason",
    "false_commit",
    "correct_answer",
    "wrong_answer",
    "false_abstain",
    "invalid",
    "rejected",
    "error",
]


class GradedRow(_Record):
    """A response after grading, joined with what its item expected."""

    schema_: Literal["twinbench.graded/1"] = Field(GRADED_SCHEMA, alias="schema")
    item_id: str
    pair_id: str
    family: ReasonCode
    answerable: bool
    system: str
    trial: int
    permutation: int
    status: Literal["ok", "invalid", "rejected", "error"]
    outcome: OutcomeName
    correct: bool | None
    abstain: bool | None
    reason: ReasonCode | None
    confidence: float | None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


SCHEMAS: dict[str, type[BaseModel]] = {
    "item": Item,
    "response": Response,
    "manifest": Manifest,
    "graded": GradedRow,
}
