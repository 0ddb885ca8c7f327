"""The embedded seed corpus: hand-written scenarios the generators edit (see docs/corpus.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from twinbench.jsonl import load_models
from twinbench.records import Answer, Question


class _CorpusRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Sentences = Annotated[list[str], Field(min_length=2, max_length=8)]


class Scenario(_CorpusRecord):
    """An answerable scenario whose answer rests on one supporting sentence."""

    id: str
    domain: str
    topic: str
    state: Sentences
    question: Question
    answer: Answer
    support: int = Field(ge=0)
    aliases: list[str] = Field(min_length=1)
    extra_option: str | None = None
    #: a sentence written to take the support sentence's place: same subject and shape, 90-110%
    #: of its length, saying nothing that bears on the question (what `redaction` swaps in)
    neutral: str | None = None


class Reading(_CorpusRecord):
    """One reading of an ambiguous reference and the option it supports."""

    referent: str
    option: str


class AmbiguityCase(_CorpusRecord):
    """A state with two plausible referents, and the one-sentence edit that fixes one."""

    id: str
    domain: str
    ambiguous_state: Sentences
    twin_state: Sentences
    question: Question
    answer: Answer
    readings: list[Reading] = Field(min_length=2, max_length=2)
    edit: str


class ContradictedOption(_CorpusRecord):
    """An option and the index of the state sentence that denies it."""

    option: str
    denied_by: int = Field(ge=0)


class OpenQuestion(_CorpusRecord):
    """A choice question whose options are supplied by the generator."""

    type: Literal["choice"] = "choice"
    instructions: str


class ContradictionCase(_CorpusRecord):
    """A state, one option it entails and three options it explicitly denies."""

    id: str
    domain: str
    state: Sentences
    question: OpenQuestion
    true_option: str
    contradicted_options: list[ContradictedOption] = Field(min_length=2)


class FalsePremiseCase(_CorpusRecord):
    """A question presupposing what the state denies, and its revised true-premise question."""

    id: str
    domain: str
    state: Sentences
    premise_question: Question
    true_question: Question
    answer: Answer
    premise: str
    denied_by: int = Field(ge=0)


class Translation(_CorpusRecord):
    """A faithful translation of a Scenario into another language."""

    scenario_id: str
    language: str
    state: Sentences
    question: Question
    answer: Answer


@dataclass(frozen=True)
class Corpus:
    """Every record of the seed corpus, in file order."""

    scenarios: list[Scenario]
    ambiguity: list[AmbiguityCase]
    contradiction: list[ContradictionCase]
    false_premise: list[FalsePremiseCase]
    translations: list[Translation]
    by_id: dict[str, Scenario] = field(default_factory=dict)


def corpus_dir() -> Path:
    """The folder of the embedded corpus files."""
    return Path(str(resources.files("twinbench") / "corpus" / "data"))


def load_corpus(folder: Path | None = None) -> Corpus:
    """Load and validate every corpus file (errors name the file and line)."""
    root = folder or corpus_dir()

    def records(pattern: str, model: type[BaseModel]) -> list[BaseModel]:
        rows: list[BaseModel] = []
        for path in sorted(root.glob(pattern)):
            rows.extend(record for _, record in load_models(path, model))
        return rows

    scenarios = [r for r in records("scenarios_*.jsonl", Scenario) if isinstance(r, Scenario)]
    return Corpus(
        scenarios=scenarios,
        ambiguity=[
            r for r in records("ambiguity.jsonl", AmbiguityCase) if isinstance(r, AmbiguityCase)
        ],
        contradiction=[
            r
            for r in records("contradiction.jsonl", ContradictionCase)
            if isinstance(r, ContradictionCase)
        ],
        false_premise=[
            r
            for r in records("false_premise.jsonl", FalsePremiseCase)
            if isinstance(r, FalsePremiseCase)
        ],
        translations=[
            r for r in records("translations_*.jsonl", Translation) if isinstance(r, Translation)
        ],
        by_id={s.id: s for s in scenarios},
    )
