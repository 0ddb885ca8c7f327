"""RAG answer records: what an assistant said, which passages it saw, and its labelled claims.

`twinbench.rag.answer/1` is one answer of one variant to one case (one trial when generation
is sampled). Its status says whether the path produced an answer at all: `ok`, `invalid`
(output outside the contract, e.g. empty), `error` or `timeout` — a generator, verifier or judge
failure is never an abstention and never "insufficient evidence". Claims carry their labels
once a human, a rule set or a judge has given them (`labelled_by` says which).

`twinbench.rag.judgement/1` is a judge's review of one answer: the prompt it saw, its raw reply,
and its validated labels — or the status of a reply that could not be used.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, model_validator
from pydantic_core import PydanticCustomError

from twinbench.rag.records import Text

ANSWER_SCHEMA: Final = "twinbench.rag.answer/1"
JUDGEMENT_SCHEMA: Final = "twinbench.rag.judgement/1"


class SupportLabel(StrEnum):
    """Whether the supplied passages support a claim ("not found" is not "false")."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    INSUFFICIENT = "insufficient"


class Severity(StrEnum):
    """How much harm an unsupported claim can do (kept apart from the faithfulness rate)."""

    MINOR = "minor"
    MAJOR = "major"
    CRITICAL = "critical"


class CitationScope(StrEnum):
    """Which claims a citation covers, declared per run before any labelling."""

    #: a citation covers the sentence it trails (or opens the next sentence with)
    SENTENCE = "sentence"
    #: every citation in the answer covers every claim of the answer
    ANSWER = "answer"


class AnswerStatus(StrEnum):
    """Whether the whole path (retrieval, generation, checking) produced an answer."""

    OK = "ok"
    INVALID = "invalid"
    ERROR = "error"
    TIMEOUT = "timeout"


class FailureLabel(StrEnum):
    """Per-case failure labels (several can hold at once)."""

    MISSING_EVIDENCE = "missing_evidence"
    UNSUPPORTED_CLAIM = "unsupported_claim"
    WRONG_CITATION = "wrong_citation"
    FALSE_ABSTENTION = "false_abstention"
    CORRECT_ABSTENTION = "correct_abstention"


class _Record(BaseModel):
    # every number finite: a nan or inf score, grade or time is an input error
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class Claim(_Record):
    """One factual claim of an answer, its citations and (once labelled) its support."""

    text: Text
    #: passage ids the claim cites under the run's scope; an id that is not among the prompt's
    #: passages stays here as written and is also listed in the answer's citation_not_found
    cited_ids: list[str] = Field(default_factory=list)
    support_label: SupportLabel | None = None
    evidence_ids: list[str] = Field(default_factory=list)
    evidence_quote: str | None = None
    severity: Severity | None = None

    @model_validator(mode="after")
    def _label(self) -> Claim:
        if self.support_label is None and (self.evidence_ids or self.severity is not None):
            raise PydanticCustomError(
                "unlabelled_claim", "evidence_ids or severity given for a claim without a label"
            )
        label = self.support_label
        if label is not None and label != SupportLabel.SUPPORTED and self.severity is None:
            raise PydanticCustomError(
                "severity_missing",
                "a {label} claim needs a severity (minor, major, critical)",
                {"label": label.value},
            )
        return self


class Answer(_Record):
    """One answer of one variant to one case."""

    schema_: Literal["twinbench.rag.answer/1"] = Field(ANSWER_SCHEMA, alias="schema")
    case_id: Text
    variant: Text
    #: which repeat of a sampled generation (0 when generation is greedy)
    trial: StrictInt = Field(0, ge=0)
    status: AnswerStatus
    error: str | None = None
    answer: str | None = None
    abstained: StrictBool = False
    #: the passage ids that reached the prompt, in prompt order ([1] is the first)
    passages: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    citation_scope: CitationScope = CitationScope.SENTENCE
    #: cited ids that are not among the prompt's passages (counted, never skipped)
    citation_not_found: list[str] = Field(default_factory=list)
    #: 0 off-topic, 1 partial, 2 every requested part (None until labelled)
    relevance: Literal[0, 1, 2] | None = None
    #: the whole path: retrieval, context assembly, generation, verification, retries
    elapsed_ms: float | None = Field(None, ge=0, allow_inf_nan=False)
    #: time per stage, e.g. {"retrieval": 3.1, "generation": 1520.4, "verification": 410.0}
    stage_ms: dict[str, float] = Field(default_factory=dict)
    #: calls and tokens spent, retries and verifier passes included
    request_cost: dict[str, Any] = Field(default_factory=dict)
    #: the exact checks (twinbench.rag.factcheck): required facts stated, forbidden claims
    #: made, whether the case's evidence reached the prompt, an abstention's two verdicts
    checks: dict[str, Any] = Field(default_factory=dict)
    #: who gave the claim labels: a human id, "rules:NAME/VERSION", or "judge:MODEL@VERSION"
    labelled_by: str | None = None
    #: how the answer was split into claims (recorded with every answer)
    claim_rule: str | None = None
    generator: str | None = None
    raw: Any = None

    @model_validator(mode="after")
    def _consistent(self) -> Answer:
        if self.status != AnswerStatus.OK:
            if self.abstained or self.claims:
                raise PydanticCustomError(
                    "failed_answer",
                    "a {status} answer has no claims and is not an abstention",
                    {"status": self.status.value},
                )
            if not self.error:
                raise PydanticCustomError(
                    "failure_without_error",
                    "a {status} answer says why in error",
                    {"status": self.status.value},
                )
        elif self.answer is None:
            raise PydanticCustomError("no_answer", "an ok answer has its text in answer")
        if self.abstained and self.claims:
            raise PydanticCustomError("abstention_claims", "an abstention makes no claims")
        labelled = [c.support_label is not None for c in self.claims]
        if any(labelled) and not all(labelled):
            raise PydanticCustomError("partly_labelled", "some claims are labelled, others not")
        if any(labelled) and not self.labelled_by:
            raise PydanticCustomError("labelled_by_missing", "labelled claims need labelled_by")
        return self

    @property
    def key(self) -> tuple[str, str, int]:
        """(case_id, variant, trial): one answer per key in a file."""
        return (self.case_id, self.variant, self.trial)

    @property
    def labelled(self) -> bool:
        """Whether every claim has a support label (an abstention counts as labelled)."""
        return all(c.support_label is not None for c in self.claims)


class JudgeStatus(StrEnum):
    """Whether a judge's reply could be used; anything but ok is an evaluation failure."""

    OK = "ok"
    INVALID = "judge_invalid"
    TIMEOUT = "judge_timeout"
    ERROR = "judge_error"


class JudgeProblem(StrEnum):
    """Why a judge's reply is judge_invalid (each its own status in counts and tests)."""

    NOT_JSON = "not_json"
    OFF_SCHEMA = "off_schema"
    CLAIM_BOUNDARIES = "claim_boundaries"
    UNKNOWN_ID = "unknown_id"
    QUOTE_NOT_IN_PASSAGE = "quote_not_in_passage"


class ClaimLabel(_Record):
    """A judge's (or annotator's) label for the claim numbered `claim` (from 1)."""

    claim: StrictInt = Field(ge=1)
    support_label: SupportLabel
    evidence_ids: list[str] = Field(default_factory=list)
    evidence_quote: str | None = None
    severity: Severity | None = None


class Judgement(_Record):
    """One judge's review of one answer, with the raw exchange saved."""

    schema_: Literal["twinbench.rag.judgement/1"] = Field(JUDGEMENT_SCHEMA, alias="schema")
    case_id: Text
    variant: Text
    trial: StrictInt = Field(0, ge=0)
    judge: Text
    status: JudgeStatus
    problem: JudgeProblem | None = None
    error: str | None = None
    prompt: list[dict[str, str]]
    raw: str | None = None
    labels: list[ClaimLabel] = Field(default_factory=list)
    relevance: Literal[0, 1, 2] | None = None
    elapsed_ms: float | None = Field(None, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _consistent(self) -> Judgement:
        if (self.status == JudgeStatus.INVALID) != (self.problem is not None):
            raise PydanticCustomError(
                "judge_problem", "a problem is named exactly when the status is judge_invalid"
            )
        if self.status != JudgeStatus.OK and self.labels:
            raise PydanticCustomError("failed_labels", "a failed judgement carries no labels")
        return self


ANSWER_SCHEMAS: dict[str, type[BaseModel]] = {"rag-answer": Answer, "rag-judgement": Judgement}


def revised(record: Answer, **update: Any) -> Answer:
    """`record` with fields replaced, validated again (pydantic's model_copy does not)."""
    data = record.model_dump(by_alias=True)
    for name, value in update.items():
        if isinstance(value, list):
            value = [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
        data[name] = value
    return Answer.model_validate(data)
