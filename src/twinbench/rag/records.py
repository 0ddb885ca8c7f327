"""RAG records: a passage, a case (the evidence contract) and a corpus manifest.

A corpus is `passages.jsonl` (one Passage per line) plus `corpus.json` (a CorpusManifest:
version, sha256 of every file, how passages were cut). A case says what a correct assistant
does with a question over that corpus: which facts it must state, which claims it must not
make, and which passages (with a graded judgment and a verbatim quote) support the answer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    model_validator,
)
from pydantic_core import PydanticCustomError

PASSAGE_SCHEMA: Final = "twinbench.rag.passage/1"
CASE_SCHEMA: Final = "twinbench.rag.case/1"
CORPUS_SCHEMA: Final = "twinbench.rag.corpus/1"

Text = Annotated[str, Field(min_length=1, pattern=r"\S")]


def _grade(value: object) -> object:
    # before the schema's own check, so the message says what a grade is
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError(
            "grade_type",
            "grade {value} is not an integer (0, 1 helpful, 3 sufficient)",
            {"value": repr(value)},
        )
    if value < 0:
        raise PydanticCustomError(
            "grade_negative",
            "grade {value} is negative (grades are integers from 0)",
            {"value": value},
        )
    return value


def _facts(value: object) -> object:
    if isinstance(value, list) and not value:
        raise PydanticCustomError(
            "no_required_facts",
            "empty (every case states its expected behaviour, also an unanswerable one)",
        )
    return value


#: the grade of directly sufficient evidence: an unanswerable case has none
SUFFICIENT = 3
#: a judgment grade: 1 helpful, 2 (between), 3 directly sufficient; 0 judged not relevant
Grade = Annotated[StrictInt, Field(ge=0), BeforeValidator(_grade)]


class _Record(BaseModel):
    # every number finite: a nan or inf score, grade or time is an input error
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class Passage(_Record):
    """One retrievable unit, named by a stable source location (never a chunk counter)."""

    schema_: Literal["twinbench.rag.passage/1"] = Field(PASSAGE_SCHEMA, alias="schema")
    passage_id: Text
    doc_id: Text
    title: str = ""
    text: Text
    #: source-location keys, e.g. {"page": 12, "section": "3.2", "sentence": 4}
    location: dict[str, Any] = Field(default_factory=dict)
    corpus_version: Text
    #: what the passage is about, for counts per topic (e.g. "deadlock", "logistics")
    topic: str | None = None


class AdversarialKind(StrEnum):
    """How an adversarial case tries to mislead."""

    FALSE_PREMISE = "false_premise"
    NEAR_MATCH = "near_match"
    CONTRADICTORY_PASSAGES = "contradictory_passages"
    CERTAINTY_PRESSURE = "certainty_pressure"


class Evidence(_Record):
    """A judged passage for a case: grade 1 helpful, 3 directly sufficient; a verbatim quote."""

    passage_id: Text
    grade: Grade
    quote: Text


class Case(_Record):
    """The evidence contract of one question."""

    schema_: Literal["twinbench.rag.case/1"] = Field(CASE_SCHEMA, alias="schema")
    case_id: Text
    question: Text
    answerable: StrictBool
    adversarial: StrictBool = False
    adversarial_kind: AdversarialKind | None = None
    #: the expected behaviour, also for unanswerable cases (what the abstention must say)
    required_facts: Annotated[list[Text], Field(min_length=1), BeforeValidator(_facts)]
    forbidden_claims: list[Text] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    #: what the reviewer read; an empty evidence list records no known support, not absence
    checked_documents: list[Text] = Field(default_factory=list)
    corpus_version: Text
    #: what the question is about, for counts per topic (the topic of its passages)
    topic: str | None = None

    @model_validator(mode="after")
    def _contract(self) -> Case:
        if self.answerable and not any(e.grade > 0 for e in self.evidence):
            raise PydanticCustomError(
                "answerable_without_evidence",
                "answerable but no evidence with a grade above 0 supports it",
            )
        sufficient = [e.passage_id for e in self.evidence if e.grade >= SUFFICIENT]
        if not self.answerable and sufficient:
            raise PydanticCustomError(
                "unanswerable_with_sufficient_evidence",
                "unanswerable but passage {passage} is graded {grade} (directly sufficient "
                "evidence answers it); grade it 1 or 2, or make the case answerable",
                {"passage": sufficient[0], "grade": SUFFICIENT},
            )
        if self.adversarial != (self.adversarial_kind is not None):
            raise PydanticCustomError(
                "adversarial_kind",
                "adversarial and adversarial_kind go together (a kind iff adversarial is true)",
            )
        return self


class CorpusManifest(_Record):
    """corpus.json: the corpus version, each file's sha256 and how passages were cut."""

    schema_: Literal["twinbench.rag.corpus/1"] = Field(CORPUS_SCHEMA, alias="schema")
    version: Text
    files: dict[str, str]
    passages: int = Field(ge=0)
    cutting: str
    source: dict[str, Any] = Field(default_factory=dict)


RAG_SCHEMAS: dict[str, type[BaseModel]] = {
    "rag-passage": Passage,
    "rag-case": Case,
    "rag-corpus": CorpusManifest,
}
