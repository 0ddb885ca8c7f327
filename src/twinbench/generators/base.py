"""The generator protocol, the corpus pools generators declare, and helpers the recipes share."""

from __future__ import annotations

import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from twinbench.corpus import (
    AmbiguityCase,
    ContradictionCase,
    Corpus,
    FalsePremiseCase,
    Scenario,
    Translation,
)
from twinbench.normalize import normalize_option
from twinbench.records import (
    Answer,
    ChoiceQuestion,
    Expected,
    GeneratorRef,
    Item,
    Question,
    ReasonCode,
    ScoreQuestion,
)

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


class CorpusPool(StrEnum):
    """A pool of corpus records that generators read; the build deals each pool out so that no
    record feeds two generators."""

    #: the base scenarios that have no translation (translated ones are translation's twins)
    SCENARIOS = "scenarios"
    AMBIGUITY = "ambiguity"
    CONTRADICTION = "contradiction"
    FALSE_PREMISE = "false_premise"
    #: the translations (their English originals, outside SCENARIOS, are the twins)
    TRANSLATIONS = "translations"

    def records(self, corpus: Corpus) -> Sequence[BaseModel]:
        """The pool's records, in corpus order."""
        if self is CorpusPool.SCENARIOS:
            translated = {t.scenario_id for t in corpus.translations}
            return [s for s in corpus.scenarios if s.id not in translated]
        pools: dict[CorpusPool, Sequence[BaseModel]] = {
            CorpusPool.AMBIGUITY: corpus.ambiguity,
            CorpusPool.CONTRADICTION: corpus.contradiction,
            CorpusPool.FALSE_PREMISE: corpus.false_premise,
            CorpusPool.TRANSLATIONS: corpus.translations,
        }
        return pools[self]

    @property
    def files(self) -> str:
        """The glob of the corpus files the pool is read from."""
        return "scenarios_*.jsonl" if self is CorpusPool.SCENARIOS else f"{self.value}.jsonl"


@dataclass(frozen=True)
class Reads:
    """A pool a generator reads, and how much of it.

    `share`: the fraction of the pool's records the generator takes first (of those it
    `accepts`); None: an even split, per domain, of what the fixed shares leave, with the other
    readers without a share (all of the pool when it is the only reader).
    """

    pool: CorpusPool
    share: float | None = None


@dataclass(frozen=True)
class Pair:
    """An unanswerable item and its answerable twin."""

    item: Item
    twin: Item


@dataclass(frozen=True)
class Pool:
    """The corpus and this generator's share of each pool it reads (`partition` deals them)."""

    corpus: Corpus
    shares: Mapping[CorpusPool, Sequence[BaseModel]] = field(default_factory=dict)

    def records(self, pool: CorpusPool, kind: type[R]) -> list[R]:
        """This generator's records of `pool`; a pool it did not declare is an error."""
        if pool not in self.shares:
            raise LookupError(f"the {pool.value} pool was not dealt to this generator")
        return [record for record in self.shares[pool] if isinstance(record, kind)]

    @property
    def scenarios(self) -> list[Scenario]:
        """Its share of the base scenarios."""
        return self.records(CorpusPool.SCENARIOS, Scenario)

    @property
    def ambiguity(self) -> list[AmbiguityCase]:
        """Its share of the reference-ambiguity cases."""
        return self.records(CorpusPool.AMBIGUITY, AmbiguityCase)

    @property
    def contradiction(self) -> list[ContradictionCase]:
        """Its share of the state-contradiction cases."""
        return self.records(CorpusPool.CONTRADICTION, ContradictionCase)

    @property
    def false_premise(self) -> list[FalsePremiseCase]:
        """Its share of the false-premise cases."""
        return self.records(CorpusPool.FALSE_PREMISE, FalsePremiseCase)

    @property
    def translations(self) -> list[Translation]:
        """Its share of the translations."""
        return self.records(CorpusPool.TRANSLATIONS, Translation)


class Generator(ABC, Generic[S]):
    """One construction recipe for one family."""

    name: ClassVar[str]
    version: ClassVar[str]
    family: ClassVar[ReasonCode]
    #: the corpus pools it reads and its share of each (`partition` deals them out)
    inputs: ClassVar[tuple[Reads, ...]]
    #: whether the build shuffles the sources (False keeps a stratified order from sources())
    shuffle_sources: ClassVar[bool] = True
    #: why this generator is left out of the default build (None: it is in it)
    retired: ClassVar[str | None] = None

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    @classmethod
    def accepts(cls, source: S) -> bool:
        """Whether a record of a pool it reads is one it can edit (the partition deals it only
        those); every record by default."""
        return True

    @abstractmethod
    def sources(self) -> Sequence[S]:
        """The corpus records this generator can edit, in a stable order."""

    def source_key(self, source: S) -> str:
        """A stable key naming a source (used in ids and seeds): the record's `id`."""
        key = getattr(source, "id", None)
        if not isinstance(key, str):
            kind = type(source).__name__
            raise TypeError(f"{self.name}: a {kind} has no string `id`; override source_key")
        return key

    @abstractmethod
    def generate(self, source: S, seed: int) -> Pair:
        """Build the pair for `source`; all randomness comes from default_rng(seed)."""

    @abstractmethod
    def validity(self, pair: Pair) -> list[str]:
        """What is wrong with a generated pair (empty when it is valid)."""

    # helpers for subclasses -------------------------------------------------------------

    def pair(
        self,
        key: str,
        seed: int,
        *,
        item: dict[str, Any],
        twin: dict[str, Any],
        answer: Answer,
        provenance: dict[str, Any],
    ) -> Pair:
        """Make the two Item records; `item`/`twin` give state, question (and language)."""
        ref = GeneratorRef(name=self.name, version=self.version)
        return make_pair(
            ref, self.family, key, seed, item=item, twin=twin, answer=answer, provenance=provenance
        )


def make_pair(
    generator: GeneratorRef,
    family: ReasonCode,
    key: str,
    seed: int,
    *,
    item: dict[str, Any],
    twin: dict[str, Any],
    answer: Answer,
    provenance: dict[str, Any],
) -> Pair:
    """Build an unanswerable item `NAME:KEY:u` and its twin `NAME:KEY:t` (pair `NAME:KEY`)."""
    ids = f"{generator.name}:{key}"
    common = {"pair_id": ids, "family": family, "seed": seed, "generator": generator}
    unanswerable = Item(
        id=f"{ids}:u",
        answerable=False,
        twin_id=f"{ids}:t",
        expected=Expected(abstain=True, reason=family),
        provenance=provenance,
        **common,
        **item,
    )
    answerable = Item(
        id=f"{ids}:t",
        answerable=True,
        twin_id=f"{ids}:u",
        expected=Expected(abstain=False, answer=answer),
        provenance={"source_id": provenance.get("source_id")},
        **common,
        **twin,
    )
    return Pair(unanswerable, answerable)


def item_seed(seed: int, generator: str, key: str) -> int:
    """A 31-bit seed for one pair, derived from the build seed, generator and source key."""
    sequence = np.random.SeedSequence(
        [seed, zlib.crc32(generator.encode()), zlib.crc32(key.encode())]
    )
    return int(sequence.generate_state(1)[0] & 0x7FFFFFFF)


def permute_options(options: Sequence[T], seed: int, *others: Sequence[T]) -> tuple[list[T], ...]:
    """Shuffle `options` (and each of `others`, index-aligned) with one seeded permutation."""
    order = np.random.default_rng(seed).permutation(len(options))
    return tuple([list(seq)[i] for i in order] for seq in (options, *others))


def with_options(question: Question, options: list[str]) -> ChoiceQuestion:
    """A choice question like `question` with new options."""
    return ChoiceQuestion(instructions=question.instructions, options=options)


def ordered_question(scenario: Scenario, seed: int) -> ChoiceQuestion | None:
    """The scenario's choice question with its options in the seeded order (None otherwise)."""
    if not isinstance(scenario.question, ChoiceQuestion):
        return None
    (options,) = permute_options(scenario.question.options, seed)
    return with_options(scenario.question, options)


def join(sentences: Sequence[str], language: str = "en") -> str:
    """Join state sentences into the item's state text (no spaces for Chinese)."""
    return ("" if language == "zh" else " ").join(sentences)


def mentions(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words after the published normalisation."""
    needle = normalize_option(phrase)
    if not needle:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", normalize_option(text)) is not None


def revealing_phrases(scenario: Scenario) -> list[str]:
    """The answer string (choice questions) and the aliases: what must not survive an edit."""
    phrases = list(scenario.aliases)
    if isinstance(scenario.question, ChoiceQuestion) and isinstance(scenario.answer, str):
        phrases.append(scenario.answer)
    return phrases


def blocked_phrases(scenario: Scenario) -> list[str]:
    """What an edit must not bring into a state: the revealing phrases, plus every option
    (choice) or legend label (score)."""
    phrases = revealing_phrases(scenario)
    if isinstance(scenario.question, ChoiceQuestion):
        phrases += scenario.question.options
    elif isinstance(scenario.question, ScoreQuestion):
        phrases += list(scenario.question.legend)
    return phrases


def undenied(options: Sequence[str], provenance: dict[str, Any]) -> list[str]:
    """Options without a valid denying sentence in `provenance` (`denied_by`, `sentences`)."""
    return [
        o for o in options if not 0 <= provenance["denied_by"].get(o, -1) < provenance["sentences"]
    ]
